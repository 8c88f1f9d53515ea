"""Positional encodings and attention with mean pooling: positional spread of additive PEs, its closed forms
and bounds, RoPE/ALiBi displacement diagnostics, and spread-regularised training
(``jaxlab.attention.pe``, ``jaxlab.attention.attention``, ``jaxlab.attention.train``). Import the submodules."""
