"""NumPy loop reference of the recursive denoisers E0-E3, written from their defining recursions
independently of jaxlab.optim.denoise: used by the tests and by bench/optim.py for correctness."""

from __future__ import annotations

import numpy as np


def reference_denoise(method, xs, grad, noise=None, *, mode="oracle", alpha=None, kappa=0.7, gamma=0.5, s=1.5):
    """Return m_t for t = 1..T. ``alpha(t)`` is the 1-based weight (DiSK: constant kappa); ``noise`` has shape
    (T, Q, d) in oracle mode and (T, d) in DP mode."""
    xs = np.asarray(xs, dtype=float)
    out, m, prev = [], None, None
    for t in range(1, len(xs) + 1):
        x = xs[t - 1]
        d = np.zeros_like(x) if t == 1 else x - prev
        a = 1.0 if t == 1 else (kappa if method == "disk" else alpha(t))
        r = (1 - a) / a
        if method == "ema":
            pts, w = [x], [1.0]
        elif method == "igt":
            pts, w = [x + r * d], [1.0]
        elif method == "disk":
            c = 0.0 if t == 1 else (1 - kappa) / (kappa * gamma)
            pts, w = [x + gamma * d, x], [c, 1 - c]
        else:
            g1, g2 = (1 + s * r) / (s - 1), s * r
            aa = -r * (s - 1) ** 2 / (1 + s * r * (2 - s))
            pts, w = [x + g1 * d, x + g2 * d], [aa, 1 - aa]
        grads = [np.asarray(grad(p), dtype=float) for p in pts]
        if noise is not None and mode == "oracle":
            grads = [g + noise[t - 1, i] for i, g in enumerate(grads)]
        q = sum(wi * gi for wi, gi in zip(w, grads, strict=True))
        if noise is not None and mode == "dp":
            q = q + noise[t - 1]
        m = q if t == 1 else (1 - a) * m + a * q
        out.append(m.copy())
        prev = x
    return np.stack(out)
