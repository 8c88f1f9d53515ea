r"""Regret of an online linear forecaster, and the terms of the Vovk-Azoury-Warmuth bound.

Reference: N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games* (2006), section 11.8; used for
USP features by A. Marsden and E. Hazan, *The Power of Second Order Methods for Sequence Preconditioning*,
arXiv:2605.08390 (its regret definitions).

For a stream ``(a_t, y_t)`` and ``A_t = lam I + sum_{s<=t} a_s a_s^T``, ``b_t = sum_{s<=t} a_s y_s^T``:

- best fixed regularised predictor of the first ``t`` rounds (ridge in hindsight)::

      L*_t = min_theta lam ||theta||^2 + sum_{s<=t} ||theta^T a_s - y_s||^2
           = sum_{s<=t} ||y_s||^2 - tr(b_t^T A_t^{-1} b_t);

- ``Regret_t = sum_{s<=t} ||y^_s - y_s||^2 - L*_t`` (definition (i));
- ``Regret*_t = sum_{s<=t} ||y^_s - y_s||^2 - sum_{s<=t} ||y*_s - y_s||^2`` against a given predictor
  ``y*`` (definition (ii), e.g. the USP ground truth of :func:`jaxlab.online.usp.usp_predictor`);
- ``ln det(A_t / lam)``, which bounds the sum of VAW leverages, so that VAW's regret is at most
  ``Y_t^2 ln det(A_t / lam)`` with ``Y_t = max_{s<=t} ||y_s||``.

All prefixes come from one ``lax.scan`` carrying ``A_t`` (a solve and ``slogdet`` per step, O(d^3)).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import jaxlab.online.papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_positive
from jaxlab.online._checks import check_stream

__all__ = ["best_fixed_loss", "log_det_ratio", "regret_vs_best_fixed", "regret_vs_predictor", "vaw_regret_bound"]


def _prefix_ridge(features, targets, lam):
    lam = check_positive(lam, "lam")
    features, targets = check_stream(features, targets)
    y2 = targets[:, None] if targets.ndim == 1 else targets
    return _prefix_scan(features, y2, jnp.asarray(lam, features.dtype))


@jax.jit
def _prefix_scan(features, y2, lam):
    d = features.shape[1]

    def body(carry, xs):
        A, b, yy = carry
        a, y = xs
        A, b, yy = A + jnp.outer(a, a), b + jnp.outer(a, y), yy + y @ y
        best = yy - jnp.sum(b * jnp.linalg.solve(A, b))
        logdet = jnp.linalg.slogdet(A)[1] - d * jnp.log(lam)
        return (A, b, yy), (best, logdet)

    carry0 = (lam * jnp.eye(d, dtype=features.dtype), jnp.zeros((d, y2.shape[1]), features.dtype),
              jnp.zeros((), features.dtype))
    return jax.lax.scan(body, carry0, (features, y2))[1]


@cites("cesabianchi2006prediction")
def best_fixed_loss(features: Float[Array, "T d"], targets: Float[Array, " T"] | Float[Array, "T k"],
                    lam: float) -> Float[Array, " T"]:
    """Loss of the best fixed ridge predictor in hindsight, for every prefix ``t``.

    ``L*_t = min_theta lam ||theta||^2 + sum_{s<=t} ||theta^T a_s - y_s||^2
    = sum_{s<=t} ||y_s||^2 - tr(b_t^T A_t^{-1} b_t)`` (Cesa-Bianchi and Lugosi, *Prediction, Learning, and
    Games*, 2006, section 11.8).

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``, finite.
      lam: regulariser ``lam > 0``.

    Returns:
      ``(T,)`` float array, ``L*_1, ..., L*_T``.

    Raises:
      TypeError: non-float inputs.
      ValueError: mismatched lengths, ``T = 0``, non-finite entries, or ``lam <= 0``.
    """
    return _prefix_ridge(features, targets, lam)[0]


@cites("cesabianchi2006prediction")
def log_det_ratio(features: Float[Array, "T d"], lam: float) -> Float[Array, " T"]:
    """``ln det(A_t / lam)`` for every prefix ``t``, with ``A_t = lam I + sum_{s<=t} a_s a_s^T`` (``slogdet``).

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      lam: regulariser ``lam > 0``.

    Returns:
      ``(T,)`` float array.

    Raises:
      TypeError: non-float ``features``.
      ValueError: ``features`` not 2-D, ``T = 0``, non-finite entries, or ``lam <= 0``.
    """
    features = as_array(features, "features", ndim=2)
    return _prefix_ridge(features, jnp.zeros(features.shape[:1], features.dtype), lam)[1]


def _cumloss(targets, y_hat, name: str):
    y_hat = as_array(y_hat, name, kind="float")
    if y_hat.shape != targets.shape:
        raise ValueError(f"{name} must have the shape of targets {tuple(targets.shape)}, got {tuple(y_hat.shape)}")
    err = (y_hat - targets) ** 2
    return jnp.cumsum(err if err.ndim == 1 else err.sum(axis=1))


@cites("cesabianchi2006prediction", "marsden2026second")
def regret_vs_best_fixed(features: Float[Array, "T d"], targets: Float[Array, " T"] | Float[Array, "T k"],
                         y_hat: Float[Array, " T"] | Float[Array, "T k"], lam: float) -> Float[Array, " T"]:
    """Prefix regrets against the best fixed ridge predictor: ``sum_{s<=t} ||y^_s - y_s||^2 - L*_t``.

    ``L*_t`` is :func:`best_fixed_loss` (definition (i) of the module docstring).

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``, finite.
      y_hat: the forecaster's predictions, the shape of ``targets``.
      lam: regulariser ``lam > 0`` of the comparator.

    Returns:
      ``(T,)`` float array of regrets ``Regret_1, ..., Regret_T``.

    Raises:
      TypeError: non-float inputs.
      ValueError: mismatched shapes or lengths, ``T = 0``, non-finite ``features``/``targets``, or ``lam <= 0``.
    """
    features, targets = check_stream(features, targets)
    return _cumloss(targets, y_hat, "y_hat") - best_fixed_loss(features, targets, lam)


@cites("marsden2026second")
def regret_vs_predictor(targets: Float[Array, " T"] | Float[Array, "T k"],
                        y_hat: Float[Array, " T"] | Float[Array, "T k"],
                        y_star: Float[Array, " T"] | Float[Array, "T k"]) -> Float[Array, " T"]:
    """Prefix regrets against a reference predictor: ``sum_{s<=t} ||y^_s - y_s||^2 - sum_{s<=t} ||y*_s - y_s||^2``.

    Definition (ii) of the module docstring, e.g. with ``y*`` the USP predictor of
    :func:`jaxlab.online.usp.usp_predictor`.

    Args:
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``.
      y_hat: the forecaster's predictions, the shape of ``targets``.
      y_star: the reference predictions, the shape of ``targets``.

    Returns:
      ``(T,)`` float array of regrets.

    Raises:
      TypeError: non-float inputs.
      ValueError: ``targets`` not 1-D or 2-D, or ``y_hat``/``y_star`` not of its shape.
    """
    targets = as_array(targets, "targets", ndim=(1, 2))
    return _cumloss(targets, y_hat, "y_hat") - _cumloss(targets, y_star, "y_star")


@cites("cesabianchi2006prediction")
def vaw_regret_bound(features: Float[Array, "T d"], targets: Float[Array, " T"] | Float[Array, "T k"],
                     lam: float) -> Float[Array, " T"]:
    """VAW regret bound for every prefix: ``Y_t^2 ln det(A_t / lam)`` with ``Y_t = max_{s<=t} ||y_s||``.

    Cesa-Bianchi and Lugosi (2006), Theorem 11.8, as stated in the module docstring of :mod:`jaxlab.online.vaw`.

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``, finite.
      lam: regulariser ``lam > 0``.

    Returns:
      ``(T,)`` float array of bounds.

    Raises:
      TypeError: non-float inputs.
      ValueError: mismatched lengths, ``T = 0``, non-finite entries, or ``lam <= 0``.
    """
    features, targets = check_stream(features, targets)
    mag = jnp.abs(targets) if targets.ndim == 1 else jnp.linalg.norm(targets, axis=1)
    return jax.lax.cummax(mag) ** 2 * _prefix_ridge(features, targets, lam)[1]
