r"""The 0-1-c target of classification with rejection and Chow's rule, its Bayes decision.

K classes, labels y in {0..K-1}, rejection cost c in (0, 1), decision t in {0..K-1} or REJECT = -1.

* Target:  l_c(t, y) = 0 if t = y,  c if t = REJECT,  1 otherwise.
* Conditional risk for p in the simplex: l_c(k; p) = 1 - p_k,  l_c(REJECT; p) = c.
* Chow's rule:  Gamma_c(p) = argmax_k p_k  if max_k p_k >= 1 - c,  else REJECT;  Bayes risk
  min(c, 1 - max_k p_k).

Paper: C. K. Chow, "On optimum recognition error and reject tradeoff", IEEE Trans. Information Theory 16
(1970).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_in_range, check_simplex
from jaxlab.losses.cwr._checks import _check_cost
from jaxlab.losses.cwr.papers import CHOW

__all__ = ["REJECT", "bayes_decision", "bayes_risk", "cwr_target_loss"]

REJECT: int = -1
"""The reject decision."""


@cites(CHOW)
def cwr_target_loss(t: Int[Array, "..."], y: Int[Array, "..."], c: float) -> Float[Array, "..."]:
    """The 0-1-c loss l_c(t, y): 0 if t = y, c if t = REJECT (-1), 1 otherwise (Chow, 1970).

    Args:
      t: int array of decisions in {-1 (REJECT), 0, 1, ...}.
      y: int array of labels in {0, 1, ...}, broadcastable with ``t``.
      c: rejection cost in (0, 1).

    Returns:
      Float array (default float dtype) of the broadcast shape of ``t`` and ``y``.

    Raises:
      TypeError: ``t`` or ``y`` is not an integer array.
      ValueError: ``t < -1``, ``y < 0``, or ``c`` outside (0, 1) (under ``jit``: a run-time error).
    """
    t = as_array(t, "t", kind="int")
    y = as_array(y, "y", kind="int")
    t = check_in_range(t, "t", -1)
    y = check_in_range(y, "y", 0)
    c = _check_cost(c, "0-1-c target", lo=0.0, hi=1.0, hi_open=True)
    c = jnp.asarray(c, dtype=jnp.result_type(float))
    return jnp.where(t == REJECT, c, jnp.where(t == y, 0.0, 1.0).astype(c.dtype))


@cites(CHOW)
def bayes_decision(p: Float[Array, "... K"], c: float) -> Int[Array, "..."]:
    """Chow's rule, the Bayes decision of the 0-1-c loss: argmax_k p_k if max_k p_k >= 1 - c, else REJECT.

    C. K. Chow, *On optimum recognition error and reject tradeoff* (IEEE Trans. Information Theory, 1970). Ties
    go to the lowest index; at max_k p_k = 1 - c (both optimal) the class is returned.

    Args:
      p: ``(..., K)`` float array of class distributions (each row on the simplex).
      c: rejection cost in (0, 1).

    Returns:
      int32 array of shape ``p.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: ``p`` is not a float array.
      ValueError: a row of ``p`` is not a probability vector, or ``c`` outside (0, 1) (under ``jit``: run time).
    """
    p = as_array(p, "p", kind="float", ndim=None)
    p = check_simplex(p, "p")
    c = _check_cost(c, "0-1-c target", lo=0.0, hi=1.0, hi_open=True)
    k = jnp.argmax(p, axis=-1).astype(jnp.int32)
    return jnp.where(jnp.max(p, axis=-1) >= 1 - c, k, REJECT)


@cites(CHOW)
def bayes_risk(p: Float[Array, "... K"], c: float) -> Float[Array, "..."]:
    """Bayes 0-1-c conditional risk min(c, 1 - max_k p_k), the risk of Chow's rule :func:`bayes_decision`.

    Args:
      p: ``(..., K)`` float array of class distributions (each row on the simplex).
      c: rejection cost in (0, 1).

    Returns:
      Float array of shape ``p.shape[:-1]``.

    Raises:
      TypeError: ``p`` is not a float array.
      ValueError: a row of ``p`` is not a probability vector, or ``c`` outside (0, 1) (under ``jit``: run time).
    """
    p = as_array(p, "p", kind="float")
    p = check_simplex(p, "p")
    c = _check_cost(c, "0-1-c target", lo=0.0, hi=1.0, hi_open=True)
    return jnp.minimum(c, 1.0 - jnp.max(p, axis=-1))

