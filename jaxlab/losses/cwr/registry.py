"""A registry of the CwR surrogates by name: each bound to (K, c) as a loss and a link on d-dimensional scores.

Names and score dimensions d for K classes: ``ce`` (K), ``ova`` (K), ``cs`` (K), ``bep`` (ceil(log2 K)),
``ref2d`` (2), ``cwr2d`` (2), ``hinge2`` (1, K = 2 only). :func:`surrogate` checks that the cost c lies in
the range where the surrogate is calibrated (see :mod:`jaxlab.losses.cwr.losses` for the formulas).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax

from jaxlab.core.citations import cites
from jaxlab.losses.cwr._checks import _CWR2D_WHY, _check_cost, _check_half, _check_K
from jaxlab.losses.cwr.losses import (
    _check_code,
    _ref2d_check,
    bep_code,
    bep_link,
    bep_loss,
    ce_chow_link,
    ce_chow_loss,
    cs_link,
    cs_loss,
    cwr2d_link,
    cwr2d_loss,
    generalized_hinge_link,
    generalized_hinge_loss,
    ova_hinge_loss,
    ova_link,
    ref2d_link,
    ref2d_loss,
)
from jaxlab.losses.cwr.papers import CWR2026, RAMASWAMY

__all__ = ["SURROGATES", "Surrogate", "surrogate", "surrogate_dim"]


class Surrogate(NamedTuple):
    """A surrogate bound to (K, c): ``loss(u, y)`` and ``link(u)`` on scores of dimension ``dim``.

    Attributes:
      name: the registry name, one of :data:`SURROGATES`.
      K: number of classes.
      c: rejection cost (a Python float).
      dim: score dimension d.
      loss: ``loss(u, y)``: scores ``(..., dim)`` and integer labels -> losses of the batch shape.
      link: ``link(u)``: scores ``(..., dim)`` -> int32 decisions in 0..K-1 or REJECT (-1).
    """

    name: str
    K: int
    c: float
    dim: int
    loss: Callable[[Any, Any], jax.Array]
    link: Callable[[Any], jax.Array]


SURROGATES = ("ce", "ova", "cs", "bep", "ref2d", "cwr2d", "hinge2")


def surrogate_dim(name: str, K: int) -> int:
    """Score dimension d of a named surrogate for K classes.

    ``ce``, ``ova``, ``cs``: K; ``bep``: ceil(log2 K); ``ref2d``, ``cwr2d``: 2; ``hinge2``: 1.

    Args:
      name: one of :data:`SURROGATES`.
      K: number of classes ``>= 2``.

    Returns:
      The dimension d, a Python int.

    Raises:
      TypeError: ``K`` is not an int, or a keyword the surrogate does not take.
      ValueError: ``K < 2`` or an unknown name.
    """
    K = _check_K(K)
    dims = {"ce": K, "ova": K, "cs": K, "bep": max(1, math.ceil(math.log2(K))), "ref2d": 2, "cwr2d": 2,
            "hinge2": 1}
    if name not in dims:
        raise ValueError(f"name must be one of {', '.join(SURROGATES)}, got {name!r}")
    return dims[name]


_KEYWORDS = {  # the keywords each surrogate reads (anything else is a typo)
    "ce": set(), "ova": {"tau"}, "cs": {"tau"}, "hinge2": {"tau"}, "bep": {"code", "tau"},
    "ref2d": {"mu", "tau", "allow_invalid"}, "cwr2d": {"a", "theta"},
}


@cites(RAMASWAMY, CWR2026)
def surrogate(name: str, K: int, c: float, **kw: Any) -> Surrogate:
    """Bind a named surrogate to K classes and cost c, checking that c is in the surrogate's range.

    The formulas are in :mod:`jaxlab.losses.cwr.losses`: ``ova``, ``cs``, ``bep`` from Ramaswamy, Tewari and
    Agarwal (arXiv:1505.04137), ``hinge2`` from Bartlett and Wegkamp (JMLR 2008), ``ce`` with Chow's rule;
    ``ref2d`` is derived for jaxlab and ``cwr2d`` is jaxlab's own construction (the 2026 target paper on
    low-dimensional surrogates is known from its abstract only; its formulas were not available).

    Args:
      name: one of :data:`SURROGATES`.
      K: number of classes (>= 2; ``hinge2`` needs K = 2, ``ref2d`` K >= 3).
      c: rejection cost; ``ce`` accepts (0, 1), ``ova``/``cs``/``bep`` only 1/2, ``ref2d``/``cwr2d``/``hinge2``
        (0, 1/2).
      **kw: ``tau`` (ova/cs/bep/ref2d/hinge2 links), ``code`` (bep), ``mu`` and ``allow_invalid`` (ref2d),
        ``a`` and ``theta`` (cwr2d).

    Returns:
      A :class:`Surrogate` with ``loss(u, y)`` and ``link(u)`` on scores u of shape (..., dim).

    Raises:
      TypeError: ``K`` is not an int.
      ValueError: unknown name, K or c outside the surrogate's range, an invalid ``code`` (bep), or the fan
        condition failing for ``ref2d`` (without ``allow_invalid``). The link parameters (``tau``, ``theta``) and
        ``a``/``mu`` are checked when ``link``/``loss`` is called.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.losses.cwr import surrogate
      >>> s = surrogate("cwr2d", K=50, c=0.2)          # scores u = (m, r)
      >>> u, y = jnp.array([[3.0, 0.0], [7.4, 2.0]]), jnp.array([2, 6])
      >>> loss, decision = s.loss(u, y), s.link(u)     # decision -1 = reject
      >>> decision.tolist()
      [2, -1]
    """
    d = surrogate_dim(name, K)
    unknown = sorted(set(kw) - _KEYWORDS[name])
    if unknown:
        takes = ", ".join(sorted(_KEYWORDS[name])) or "no keywords"
        raise TypeError(f"surrogate {name!r} takes {takes}; got unexpected keyword(s) {', '.join(unknown)}")
    c = float(c)
    if name == "ce":
        c = _check_cost(c, "ce", lo=0.0, hi=1.0, hi_open=True)
        return Surrogate(name, K, c, d, ce_chow_loss, lambda u: ce_chow_link(u, c))
    if name in ("ova", "cs", "bep"):
        c = _check_half(c, name)
    if name == "hinge2":
        if K != 2:
            raise ValueError(f"K must be 2 for the generalized hinge (a 1-d surrogate), got {K}")
        c = _check_cost(c, "generalized hinge", lo=0.0, hi=0.5, hi_open=True)
        tau = kw.get("tau", 0.5)
        return Surrogate(name, K, c, d, lambda u, y: generalized_hinge_loss(u, y, c),
                         lambda u: generalized_hinge_link(u, tau))
    if name == "ova":
        tau = kw.get("tau", 0.0)
        return Surrogate(name, K, c, d, ova_hinge_loss, lambda u: ova_link(u, tau))
    if name == "cs":
        tau = kw.get("tau", 0.5)
        return Surrogate(name, K, c, d, cs_loss, lambda u: cs_link(u, tau))
    if name == "bep":
        code = kw.get("code")
        code = bep_code(K) if code is None else _check_code(code)
        tau = kw.get("tau", 0.5)
        return Surrogate(name, K, c, code.shape[1], lambda u, y: bep_loss(u, y, code),
                         lambda u: bep_link(u, code, tau))
    if name == "ref2d":
        mu, tau, allow = kw.get("mu", 10.0), kw.get("tau", 0.5), kw.get("allow_invalid", False)
        _ref2d_check(K, c, allow)
        return Surrogate(name, K, c, d, lambda u, y: ref2d_loss(u, y, K, c, mu, allow_invalid=allow),
                         lambda u: ref2d_link(u, K, tau))
    a, theta = kw.get("a"), kw.get("theta", 0.25)
    c = _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
    return Surrogate(name, K, c, d, lambda u, y: cwr2d_loss(u, y, c, a), lambda u: cwr2d_link(u, K, theta))

