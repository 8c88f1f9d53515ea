"""NumPy loop references for the DSN tests and claims: the neuron step by step (spec E.3) and synaptic operations
synapse by synapse (spec E.3, energy model). Slow by design; small inputs only."""

from __future__ import annotations

import numpy as np


def dsn_reference(x_seq, tau=2.0, v_th=1.0, v_reset=0.0, v_dormant=-0.05):
    """Spikes, gates and post-reset potentials of the DSN equations (spec E.3), one neuron at a time."""
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
    """Count every (t, b, i -> j) synapse whose presynaptic neuron spiked and whose target is awake."""
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
    """Count every synapse of a k x k convolution (zero padding) from a spiking input to an awake output."""
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
