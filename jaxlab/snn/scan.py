r"""The DSN and LIF neurons over a whole sequence in one ``lax.scan``, with a hand-written BPTT.

The recursion is that of :mod:`jaxlab.snn.neuron` (paper: "The Dormant Spiking Neuron: A State-Driven
Mechanism for Efficient Spiking Neural Networks", reference implementation github.com/Ruichen0424/DSN; arXiv
id not located), run for ``t = 1..T`` with time first. Its derivatives (surrogate slopes for both
Heavisides) are given by a custom JVP whose transpose is one reverse scan (below); the result equals JAX's
own differentiation of the step-by-step scan.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, is_concrete
from jaxlab.snn.neuron import DSNParams, DSNState, _dsn_step, _lif_step, check_params, dsn_init
from jaxlab.snn.papers import DSN

__all__ = ["deep_inhibition_fraction", "dormant_fraction", "dsn_scan", "lif_scan"]


def _scan_autodiff(step, params: DSNParams, x_seq: Array, state: DSNState):
    """The scan differentiated by JAX through every step (reference for the hand-written BPTT below)."""

    def body(carry, x_t):
        new, s = step(params, carry, x_t)
        return new, (s, new.d, new.v)

    _, (spikes, d_seq, v_seq) = jax.lax.scan(body, state, x_seq)
    return spikes, d_seq, v_seq


def _sg_slope(x: Array, alpha: float) -> Array:
    sig = jax.nn.sigmoid(alpha * x)
    return alpha * sig * (1 - sig)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def _neuron_scan(gated: bool, cfg: tuple, v_dormant: Array, x_seq: Array, v0: Array, d0: Array):
    # cfg = (tau, v_th, v_reset, alpha, detach_reset) as Python scalars; v_dormant may be traced. The same
    # equations as _dsn_step/_lif_step, without the surrogate machinery (the rule below gives the derivatives).
    tau, v_th, v_reset = cfg[0], cfg[1], cfg[2]
    beta = 1.0 - 1.0 / tau

    def body(carry, x_t):
        v, d = carry
        if gated:
            d = jnp.where(v - v_dormant >= 0, d, jnp.zeros_like(d))
        h = beta * v + x_t
        fire = (h - v_th >= 0).astype(h.dtype)
        s = d * fire if gated else fire
        v = h * (1 - s) + v_reset * s
        return (v, d), (s, d, v)

    _, out = jax.lax.scan(body, (v0, d0), x_seq)
    return out


# Derivatives of the neuron scan. The tangent recursion (forward mode), linear in the tangents::
#
#     d'_t = g_t d'_{t-1} + d_{t-1} a_t (v'_{t-1} - V_D'),   h'_t = beta v'_{t-1} + x'_t,
#     s'_t = f_t d'_t + d_t b_t h'_t,                        v'_t = (1 - s_t) h'_t + k_t s'_t,
#
# with g_t = Theta(v_{t-1} - V_D), a_t its surrogate slope, f_t = Theta(h_t - V_th), b_t its slope and
# k_t = V_reset - h_t (absent with detach_reset). It is a primitive (`_tangent_p`) whose transpose
# (`_cotangent_p`) is the hand-written BPTT: one reverse scan that recomputes each step's coefficients from the
# stored trajectory (input, v, d, s) while that step is in cache. Letting JAX transpose the tangent scan instead
# needs the coefficients as five T-long arrays, computed in full passes before the reverse scan (25 % slower on
# a 784-256 layer, T = 25, batch 128). Both primitives are evaluated, differentiated (any order) and batched
# through their plain-JAX implementations, so jit, vmap, grad, jvp and their compositions all work.


def _step_coefficients(gated: bool, cfg: tuple, v_dormant, x_t, v_prev, d_prev, d_t, s_t):
    """``(1 - s_t, f_t, d_t b_t, g_t, d_{t-1} a_t, k_t)`` of one step (``None`` where absent)."""
    tau, v_th, v_reset, alpha, detach = cfg
    beta = 1.0 - 1.0 / tau
    h = beta * v_prev + x_t
    b = _sg_slope(h - v_th, alpha)
    k = None if detach else v_reset - h
    if not gated:
        return 1 - s_t, None, b, None, None, k
    f = (h - v_th >= 0).astype(h.dtype)  # the forward's Theta, bit for bit
    g = (v_prev - v_dormant >= 0).astype(h.dtype)
    return 1 - s_t, f, b * d_t, g, d_prev * _sg_slope(v_prev - v_dormant, alpha), k


def _coefficients_at(t, gated, cfg, residuals):
    """Step ``t``'s coefficients, read from the stored trajectory inside a scan (no shifted copies)."""
    v_dormant, x_seq, v0, d0, s, d_seq, v_seq = residuals
    prev = lambda seq, first: jnp.where(  # noqa: E731  seq[t - 1], or the initial state at t = 0
        t == 0, first, jax.lax.dynamic_index_in_dim(seq, jnp.maximum(t - 1, 0), keepdims=False))
    return _step_coefficients(gated, cfg, v_dormant, x_seq[t], prev(v_seq, v0), prev(d_seq, d0), d_seq[t], s[t])


def _tangent_impl(*args, gated: bool, cfg: tuple, present: tuple):
    """Tangents ``(s', d', v')`` from ``args = residuals (7) + the nonzero tangents among (V_D', x', v0', d0')``."""
    residuals, given = args[:7], iter(args[7:])
    v_dormant, x_seq, v0, d0 = residuals[:4]
    vd_dot, x_dot, v0_dot, d0_dot = (next(given) if p else jnp.zeros_like(a)
                                     for p, a in zip(present, (v_dormant, x_seq, v0, d0), strict=True))
    beta = 1.0 - 1.0 / cfg[0]

    def body(carry, t):
        v_t, d_t = carry
        keep, f, db, g, da, k = _coefficients_at(t, gated, cfg, residuals)
        h_t = beta * v_t + x_dot[t]
        if gated:
            d_new = g * d_t + da * (v_t - vd_dot)
            sp = f * d_new + db * h_t
        else:
            d_new = d_t
            sp = db * h_t
        v_new = keep * h_t + k * sp if k is not None else keep * h_t
        return (v_new, d_new), (sp, d_new, v_new)

    _, out = jax.lax.scan(body, (v0_dot, d0_dot), jnp.arange(x_seq.shape[0]))
    return list(out)


def _cotangent_impl(*args, gated: bool, cfg: tuple, present: tuple):
    """BPTT: cotangents of the nonzero tangent inputs from ``args = residuals (7) + cotangents of (s, d, v)``."""
    residuals, (s_bar, d_bar, v_bar) = args[:7], args[7:]
    v_dormant, x_seq, v0 = residuals[:3]
    beta = 1.0 - 1.0 / cfg[0]

    def body(carry, t):
        lam_v, lam_d, vd_acc = carry  # cotangents of v'_t and d'_t from the later steps
        keep, f, db, g, da, k = _coefficients_at(t, gated, cfg, residuals)
        lv = v_bar[t] + lam_v
        ld = d_bar[t] + lam_d
        ls = s_bar[t] + k * lv if k is not None else s_bar[t]
        lh = keep * lv + db * ls  # cotangent of h'_t, which is that of x'_t
        if gated:
            ld = ld + f * ls
            return (beta * lh + da * ld, g * ld, vd_acc - da * ld), lh
        return (beta * lh, ld, vd_acc), lh

    zero = jnp.zeros_like(v0)
    (v0_bar, d0_bar, vd_acc), x_bar = jax.lax.scan(body, (zero, zero, zero), jnp.arange(x_seq.shape[0]),
                                                   reverse=True)
    vd_bar = jnp.sum(vd_acc).astype(v_dormant.dtype).reshape(v_dormant.shape)
    return [c for p, c in zip(present, (vd_bar, x_bar, v0_bar, d0_bar), strict=True) if p]


def _tangent_avals(*args, gated, cfg, present):
    return [jax.core.ShapedArray(args[1].shape, args[1].dtype)] * 3


def _cotangent_avals(*args, gated, cfg, present):
    return [jax.core.ShapedArray(a.shape, a.dtype) for p, a in zip(present, args[:4], strict=True) if p]


def _primitive(name: str, impl, avals) -> Primitive:
    p = Primitive(name)
    p.multiple_results = True
    compiled = functools.cache(lambda **params: jax.jit(functools.partial(impl, **params)))
    p.def_impl(lambda *args, **params: compiled(**params)(*args))
    p.def_abstract_eval(avals)
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=True))

    def jvp(primals, tangents, **params):
        return jax.jvp(functools.partial(impl, **params), tuple(primals),
                       tuple(ad.instantiate_zeros(t) for t in tangents))

    def batch(args, dims, **params):
        return jax.vmap(functools.partial(impl, **params), in_axes=dims)(*args), [0] * len(avals(*args, **params))

    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = batch
    return p


_tangent_p = _primitive("dsn_tangent", _tangent_impl, _tangent_avals)
_cotangent_p = _primitive("dsn_cotangent", _cotangent_impl, _cotangent_avals)


def _tangent_transpose(cts, *args, **params):
    cts = [ad.instantiate_zeros(c) for c in cts]
    return [None] * 7 + list(_cotangent_p.bind(*args[:7], *cts, **params))


ad.primitive_transposes[_tangent_p] = _tangent_transpose


def _neuron_scan_jvp(gated, cfg, primals, tangents):
    v_dormant, x_seq, v0, d0 = primals
    out = _neuron_scan(gated, cfg, v_dormant, x_seq, v0, d0)
    # only nonzero tangents are operands (the transpose then returns cotangents for exactly those)
    present = tuple(type(t) is not jax.custom_derivatives.SymbolicZero for t in tangents)
    given = [t for p, t in zip(present, tangents, strict=True) if p]
    return out, tuple(_tangent_p.bind(*primals, *out, *given, gated=gated, cfg=cfg, present=present))


_neuron_scan.defjvp(_neuron_scan_jvp, symbolic_zeros=True)


def _scan(gated: bool, params: DSNParams, x_seq: Any, state: DSNState | None):
    params = check_params(params)
    x_seq = as_array(x_seq, "x_seq", finite=True)
    if x_seq.ndim < 1 or x_seq.shape[0] < 1:
        raise ValueError(f"x_seq must have a leading time axis with T >= 1 steps, got shape {tuple(x_seq.shape)}")
    if state is None:
        state = dsn_init(x_seq.shape[1:], params, x_seq.dtype)
    elif tuple(state.v.shape) != tuple(x_seq.shape[1:]) or tuple(state.d.shape) != tuple(x_seq.shape[1:]):
        raise ValueError(
            f"state must have the per-step shape of x_seq {tuple(x_seq.shape[1:])}, got v {tuple(state.v.shape)}, "
            f"d {tuple(state.d.shape)}"
        )
    v0, d0 = state.v.astype(x_seq.dtype), state.d.astype(x_seq.dtype)
    static = (params.tau, params.v_th, params.v_reset, params.alpha, params.detach_reset)
    if is_concrete(static):
        cfg = (*(float(np.asarray(c)) for c in static[:4]), bool(params.detach_reset))
        v_dormant = jnp.asarray(params.v_dormant, x_seq.dtype)
        spikes, d_seq, v_seq = _neuron_scan(gated, cfg, v_dormant, x_seq, v0, d0)
    else:  # traced neuron constants: let JAX differentiate the steps
        spikes, d_seq, v_seq = _scan_autodiff(_dsn_step if gated else _lif_step, params, x_seq, DSNState(v0, d0))
    return spikes, DSNState(v_seq[-1], d_seq[-1]), {"d_seq": d_seq, "v_seq": v_seq}


@cites(DSN)
def dsn_scan(
    params: DSNParams, x_seq: Float[Array, "T ..."], state: DSNState | None = None
) -> tuple[Float[Array, "T ..."], DSNState, dict[str, Float[Array, "T ..."]]]:
    """Run the DSN over ``x_seq`` (time first) in one ``lax.scan``.

    Works under ``jit``, ``vmap``, ``grad`` and ``jax.checkpoint``. The recursion of :mod:`jaxlab.snn.neuron` for
    ``t = 1..T``: ``D_t = D_{t−1} Θ(V_{t−1} − V_D)``, ``H_t = β V_{t−1} + X_t``, ``S_t = D_t Θ(H_t − V_th)``,
    ``V_t = H_t (1 − S_t) + V_reset S_t``. Its BPTT is hand-written (one reverse scan, surrogate slopes for both
    Heavisides) and equals JAX's differentiation of the step-by-step scan; with traced neuron constants JAX
    differentiates the steps itself.

    Paper: "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural Networks" (2026; authors
    and arXiv id not located); the equations follow the authors' reference implementation (github.com/Ruichen0424/DSN).

    Args:
      params: the neuron constants (:class:`~jaxlab.snn.neuron.DSNParams`).
      x_seq: input currents, shape ``(T, ...)`` with ``T >= 1``, finite.
      state: the state before the first step, of shape ``x_seq.shape[1:]``; ``None`` starts at rest.

    Returns:
      The spikes ``S_{1..T}``, the final state and ``aux = {"d_seq": D_{1..T}, "v_seq": V_{1..T}}`` (the gate
      used at each step and the post-reset potential), the sequences of the shape and dtype of ``x_seq``.

    Raises:
      ValueError: ``x_seq`` has NaN or infinite entries (under ``jit``: a run-time error with the same text; a
        NaN would otherwise silently close the gate), no time axis, or a ``state`` of another shape; bad
        ``params`` (see :func:`~jaxlab.snn.neuron.check_params`).
      TypeError: ``x_seq`` is not floating.

    Example:
      >>> import jax
      >>> from jaxlab.snn import DSNParams, dormant_fraction, dsn_scan
      >>> x_seq = 0.3 + 0.8 * jax.random.normal(jax.random.key(0), (8, 16))   # (T, neurons)
      >>> spikes, state, aux = dsn_scan(DSNParams(v_dormant=-0.05), x_seq)
      >>> spikes.shape, aux["d_seq"].shape
      ((8, 16), (8, 16))
      >>> ratio = dormant_fraction(aux["d_seq"])   # share of (step, neuron) pairs with a closed gate
    """
    return _scan(True, params, x_seq, state)


@cites(DSN)
def lif_scan(
    params: DSNParams, x_seq: Float[Array, "T ..."], state: DSNState | None = None
) -> tuple[Float[Array, "T ..."], DSNState, dict[str, Float[Array, "T ..."]]]:
    """Plain LIF over a sequence (``D = 1``, ``params.v_dormant`` ignored), with the outputs of :func:`dsn_scan`.

    Args:
      params: the neuron constants (:class:`~jaxlab.snn.neuron.DSNParams`).
      x_seq: input currents, shape ``(T, ...)`` with ``T >= 1``, finite.
      state: the state before the first step, of shape ``x_seq.shape[1:]``; ``None`` starts at rest.

    Returns:
      ``(spikes, final_state, aux)`` as :func:`dsn_scan` (``aux["d_seq"]`` is all ones).

    Raises:
      ValueError: as :func:`dsn_scan`.
      TypeError: as :func:`dsn_scan`.
    """
    return _scan(False, params, x_seq, state)


def dormant_fraction(d_seq: Float[Array, "T ..."]) -> Float[Array, ""]:
    """Dormancy ratio ``1 − mean_{t,j} D_{t,j}``: the share of (step, neuron) pairs whose gate is closed.

    Args:
      d_seq: float array of gates ``(T, ...)``, e.g. ``aux["d_seq"]`` of :func:`dsn_scan`.

    Returns:
      0-d float array in ``[0, 1]`` (exactly 0 when every gate is open).

    Raises:
      TypeError: ``d_seq`` not floating.
    """
    d_seq = as_array(d_seq, "d_seq")
    return jnp.mean(1.0 - d_seq)  # exactly 0 when every gate is open


def deep_inhibition_fraction(v_seq: Float[Array, "T ..."], v_dormant: float = -0.05) -> Float[Array, ""]:
    """Fraction of ``(t, j)`` with ``V_{t,j} < V_D``: the "deeply inhibited" neurons of a LIF network.

    These are the neurons a DSN with threshold ``V_D`` would put to sleep.

    Args:
      v_seq: float array of post-reset potentials ``(T, ...)``, e.g. ``aux["v_seq"]`` of :func:`lif_scan`.
      v_dormant: the threshold ``V_D`` (default that of :class:`~jaxlab.snn.neuron.DSNParams`).

    Returns:
      0-d float array in ``[0, 1]``.

    Raises:
      TypeError: ``v_seq`` not floating.
    """
    v_seq = as_array(v_seq, "v_seq")
    return jnp.mean((v_seq < v_dormant).astype(v_seq.dtype))

