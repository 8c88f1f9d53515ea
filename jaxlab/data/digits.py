"""The 8x8 digits dataset (scikit-learn's bundled copy) as static images, and a neuromorphic-style event
version of them (plain NumPy, prepared once outside ``jit``); used by the spiking networks of ``jaxlab.snn``.

Event version (jaxlab's construction, in the spirit of N-MNIST's saccades; not from the DSN paper): the image
``I`` (scaled to [0, 1]) is shown at the shifts ``p_1, ..., p_T`` of a fixed saccade path over a zero
background, ``F_t = shift(I, p_t)``, ``F_0 = 0``; a pixel emits an ON event when its brightness rises by more
than ``theta`` and an OFF event when it falls by more than ``theta``::

    E_t = [1(F_t - F_{t-1} > theta), 1(F_{t-1} - F_t > theta)]   (2 channels, binary)
"""

from __future__ import annotations

import numpy as np

from jaxlab.core.validation import check_in_range, check_int

__all__ = ["SACCADE_PATH", "digits_dataset", "digits_events"]

SACCADE_PATH = ((0, 0), (1, 0), (1, 1), (0, 1))
"""Pixel shifts (down, right) of the saccade cycle used by :func:`digits_events`."""


def digits_dataset(test_fraction: float = 0.25, seed: int = 0):
    """scikit-learn's 1797 8x8 digits, split into train and test sets by a seeded permutation.

    Args:
      test_fraction: the fraction of the images held out, in ``(0, 1)``.
      seed: non-negative int, the seed of the permutation.

    Returns:
      ``(x_train, y_train, x_test, y_test)``: float32 images ``(N, 1, 8, 8)`` scaled to ``[0, 1]`` and int32
      labels ``(N,)`` in ``0..9``.

    Raises:
      ValueError: ``test_fraction`` is outside ``(0, 1)`` or ``seed`` is negative.
    """
    from sklearn.datasets import load_digits

    check_in_range(test_fraction, "test_fraction", 0.0, 1.0, lo_open=True, hi_open=True)
    seed = check_int(seed, "seed", min_value=0)
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int32)
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = round(test_fraction * len(y))
    te, tr = perm[:n_test], perm[n_test:]
    return x[tr], y[tr], x[te], y[te]


def digits_events(images: np.ndarray, num_steps: int, theta: float = 0.25) -> np.ndarray:
    """ON/OFF event frames of images moved along :data:`SACCADE_PATH` (cycled); see the module docstring.

    At step ``t`` the image is shifted by ``SACCADE_PATH[t mod len]``; channel 0 fires where the shifted image
    exceeds the previous frame by more than ``theta`` (ON), channel 1 where it falls by more than ``theta``
    (OFF).

    Args:
      images: ``(N, 1, H, W)`` array in ``[0, 1]``.
      num_steps: the number of time steps ``T >= 1``.
      theta: the event threshold in ``[0, 1)``.

    Returns:
      ``(N, T, 2, H, W)`` float32 array of 0/1 events.

    Raises:
      ValueError: ``images`` is not ``(N, 1, H, W)``, ``num_steps < 1`` or ``theta`` is outside ``[0, 1)``.
    """
    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 4 or images.shape[1] != 1:
        raise ValueError(f"images must have shape (N, 1, H, W), got {images.shape}")
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    check_in_range(theta, "theta", 0.0, 1.0, hi_open=True)
    n, _, h, w = images.shape
    prev = np.zeros((n, h, w), np.float32)
    out = np.zeros((n, num_steps, 2, h, w), np.float32)
    for t in range(num_steps):
        dy, dx = SACCADE_PATH[t % len(SACCADE_PATH)]
        frame = np.zeros((n, h + 1, w + 1), np.float32)
        frame[:, dy : dy + h, dx : dx + w] = images[:, 0]
        frame = frame[:, :h, :w]
        out[:, t, 0] = frame - prev > theta
        out[:, t, 1] = prev - frame > theta
        prev = frame
    return out
