"""Plain NumPy loop references for the DSN claims and tests: the neuron step by step and the synaptic operations
synapse by synapse. Slow by design; small inputs only.

They restate the equations of :mod:`jaxlab.snn.neuron` (the DSN recursion) and :mod:`jaxlab.snn.energy` (the
dormancy-masked SOP counts) one neuron and one synapse at a time, with no vectorisation, so that ``jaxlab
verify snn`` can compare the scan and the closed-form counts against an independent implementation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dsn_reference", "sop_conv_reference", "sop_dense_reference"]


def dsn_reference(x_seq, tau=2.0, v_th=1.0, v_reset=0.0, v_dormant=-0.05):
    """Spikes, gates and post-reset potentials ``(S, D, V)`` of the DSN equations, one neuron at a time.

    ``x_seq``: inputs with time first ``(T, ...)``; the other arguments are the neuron constants of
    :class:`jaxlab.snn.neuron.DSNParams`. Returns three float64 arrays of the shape of ``x_seq``."""
    x_seq = np.asarray(x_seq, dtype=np.float64)
    beta = 1.0 - 1.0 / tau
    t_steps = x_seq.shape[0]
    flat = x_seq.reshape(t_steps, -1)
    s = np.zeros_like(flat)
    d = np.zeros_like(flat)
    v = np.zeros_like(flat)
    for j in range(flat.shape[1]):
        vj, dj = v_reset, 1.0
        for t in range(t_steps):
            dj = dj * (1.0 if vj - v_dormant >= 0 else 0.0)
            h = beta * vj + flat[t, j]
            sj = dj * (1.0 if h - v_th >= 0 else 0.0)
            vj = h * (1 - sj) + v_reset * sj
            s[t, j], d[t, j], v[t, j] = sj, dj, vj
    return s.reshape(x_seq.shape), d.reshape(x_seq.shape), v.reshape(x_seq.shape)


def sop_dense_reference(spikes_in, d_out):
    """Count every (t, b, i -> j) synapse whose presynaptic neuron spiked and whose target is awake.

    ``spikes_in``: ``(T, B, n_in)``, ``d_out``: ``(T, B, n_out)``; returns a Python float."""
    s, d = np.asarray(spikes_in), np.asarray(d_out)
    t_steps, b = s.shape[:2]
    total = 0.0
    for t in range(t_steps):
        for n in range(b):
            for i in range(s.shape[2]):
                for j in range(d.shape[2]):
                    total += s[t, n, i] * d[t, n, j]
    return total


def sop_conv_reference(spikes_in, d_out, k, stride, pad):
    """Count every synapse of a k x k convolution (zero padding) from a spiking input to an awake output.

    ``spikes_in``: ``(T, B, C, H, W)``, ``d_out``: ``(T, B, O, Ho, Wo)``; returns a Python float."""
    s, d = np.asarray(spikes_in), np.asarray(d_out)
    t_steps, b, c, h, w = s.shape
    o, ho, wo = d.shape[2:]
    total = 0.0
    for t in range(t_steps):
        for n in range(b):
            for oc in range(o):
                for y in range(ho):
                    for x in range(wo):
                        if d[t, n, oc, y, x] == 0:
                            continue
                        for ic in range(c):
                            for dy in range(k):
                                for dx in range(k):
                                    iy, ix = y * stride - pad + dy, x * stride - pad + dx
                                    if 0 <= iy < h and 0 <= ix < w:
                                        total += s[t, n, ic, iy, ix]
    return total
