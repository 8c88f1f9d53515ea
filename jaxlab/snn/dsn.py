r"""The Dormant Spiking Neuron (DSN) and the plain LIF neuron, with surrogate-gradient BPTT and an energy model.

Paper: "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural Networks" (title from
the authors' repository github.com/Ruichen0424/DSN; paper text and arXiv id not located). The equations and
defaults follow the authors' reference implementation (SpikingJelly ``DLIFNode``) as described in the spec
(``agents_systems.md`` section E.3); the energy accounting is the spec's formalisation (section E.3, "energy
model"), with the 45 nm constants of Horowitz (ISSCC 2014).

Per neuron, steps ``t = 1..T``, input current ``X_t``; ``V_0 = V_reset``, ``D_0 = 1``; Heaviside
``Theta(x) = 1[x >= 0]``::

    D_t = D_{t-1} Theta(V_{t-1} - V_D)          (dormant gate, absorbing within a sample)
    H_t = beta V_{t-1} + X_t,   beta = 1 - 1/tau  (decay_input = False)
    S_t = D_t Theta(H_t - V_th)
    V_t = H_t (1 - S^_t) + V_reset S^_t         (hard reset; S^_t = stop_gradient(S_t) when detach_reset)

A dormant neuron keeps integrating but never spikes or resets again. Plain LIF is ``D = 1``
(``V_D = -inf``). Both Heavisides use the sigmoid surrogate (SpikingJelly ``Sigmoid``): forward ``Theta(x)``,
derivative ``alpha sigma(alpha x)(1 - sigma(alpha x))`` (the derivative of the smoothed step
``sigma(alpha x)``), so ``Theta'(0) = alpha / 4 = 1`` at ``alpha = 4``.

Synaptic operations with dormancy masking, a layer with presynaptic spikes ``s`` and postsynaptic gates ``D``::

    SOP = sum_t sum_{j in post} D_{t,j} sum_{i in pre(j)} s_{t,i}
        = sum_t (sum_i s_{t,i}) (sum_j D_{t,j})                          (dense layer)

for a convolution the incoming count of an output position is a sum-pool of the channel-summed spike map with
the kernel's window, stride and padding. Energy (pJ)::

    E = E_MAC * MACs_first_layer + E_AC * sum_l SOP_l [+ E_AC * neuron updates],  E_MAC = 4.6, E_AC = 0.9.

``MACs_first_layer`` counts all T steps of the real-valued encoding layer. Setting every ``D = 1`` gives the
standard SOP count (firing rate x T x FLOPs) of a network without dormancy.

Neuron parameters (:class:`DSNParams`) are static configuration: close over them or pass them as a static
argument under ``jit``; validation runs when a public function is called with concrete parameters.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_finite, check_int, check_positive, is_concrete
from jaxlab.snn import _papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.snn._papers import DSN, HOROWITZ

__all__ = [
    "E_AC",
    "E_MAC",
    "DSNParams",
    "DSNState",
    "check_params",
    "deep_inhibition_fraction",
    "dormant_fraction",
    "dsn_init",
    "dsn_scan",
    "dsn_step",
    "energy_pj",
    "heaviside_sg",
    "lif_scan",
    "lif_step",
    "sop_conv",
    "sop_dense",
]

E_MAC = 4.6
"""Energy of a 32-bit float multiply-accumulate at 45 nm, pJ (Horowitz 2014)."""
E_AC = 0.9
"""Energy of a 32-bit float accumulate at 45 nm, pJ (Horowitz 2014)."""


class DSNParams(NamedTuple):
    """Neuron constants: membrane time constant ``tau`` (``beta = 1 - 1/tau``), firing threshold ``v_th``,
    reset potential ``v_reset``, dormancy threshold ``v_dormant`` (``V_D``; ``-inf`` gives LIF), surrogate
    sharpness ``alpha``, ``detach_reset`` (no gradient through the reset) and ``allow_nonnegative_dormant``
    (accept ``v_reset <= V_D < v_th``, where neurons at rest would fall dormant)."""

    tau: float = 2.0
    v_th: float = 1.0
    v_reset: float = 0.0
    v_dormant: float = -0.05
    alpha: float = 4.0
    detach_reset: bool = True
    allow_nonnegative_dormant: bool = False

    @property
    def beta(self) -> float:
        """Membrane decay ``1 - 1/tau``."""
        return 1.0 - 1.0 / self.tau


class DSNState(NamedTuple):
    """Membrane potential ``v`` (post-reset) and dormancy gate ``d`` (1 awake, 0 dormant), same shape."""

    v: Array
    d: Array


def check_params(params: DSNParams) -> DSNParams:
    """Validate neuron constants (concrete values only; traced values are skipped) and return them.

    Raises ``ValueError`` for ``tau <= 1`` or non-finite, non-finite ``v_th``/``v_reset``, ``v_th <= v_reset``,
    ``alpha <= 0``, ``v_dormant >= v_th`` or NaN, and ``v_dormant >= v_reset`` unless
    ``allow_nonnegative_dormant``; ``TypeError`` if ``params`` is not a :class:`DSNParams`.
    """
    if not isinstance(params, DSNParams):
        raise TypeError(f"params must be a DSNParams, got {type(params).__name__}")
    if not is_concrete(tuple(params)):
        return params
    tau, v_th, v_reset, v_d, alpha = (float(np.asarray(p)) for p in params[:5])
    if not (math.isfinite(tau) and tau > 1.0):
        raise ValueError(f"tau must be > 1 and finite (beta = 1 - 1/tau must be > 0), got {tau!r}")
    for name, val in (("v_th", v_th), ("v_reset", v_reset)):
        if not math.isfinite(val):
            raise ValueError(f"{name} must be finite, got {val!r}")
    if v_th <= v_reset:
        raise ValueError(f"v_th must be > v_reset = {v_reset!r}, got {v_th!r}")
    check_positive(alpha, "alpha")
    if math.isnan(v_d) or v_d >= v_th:
        raise ValueError(f"v_dormant must be < v_th = {v_th!r} (or -inf for LIF), got {v_d!r}")
    if v_d >= v_reset and not params.allow_nonnegative_dormant:
        raise ValueError(
            f"v_dormant must be < v_reset = {v_reset!r} (a neuron at rest would fall dormant), got {v_d!r}; "
            "pass allow_nonnegative_dormant=True to accept it"
        )
    return params


@jax.custom_jvp
def _heaviside(x: Array, alpha: Array) -> Array:
    x = jnp.asarray(x)
    return (x >= 0).astype(x.dtype)


@_heaviside.defjvp
def _heaviside_jvp(primals, tangents):
    x, alpha = primals
    x_dot, _ = tangents
    sig = jax.nn.sigmoid(alpha * x)
    return _heaviside(x, alpha), alpha * sig * (1 - sig) * x_dot


@cites(DSN)
def heaviside_sg(x: Float[Array, "..."], alpha: float = 4.0) -> Float[Array, "..."]:
    """Heaviside step ``1[x >= 0]`` whose derivative is the sigmoid surrogate ``alpha s (1 - s)``,
    ``s = sigma(alpha x)`` (a ``custom_jvp``, so reverse mode gets the same surrogate). No gradient flows
    into ``alpha``."""
    x = as_array(x, "x")
    check_positive(alpha, "alpha")
    return _heaviside(x, jax.lax.stop_gradient(jnp.asarray(alpha, x.dtype)))


def _float_dtype(dtype: Any) -> jnp.dtype:
    dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"dtype must be a floating dtype, got {dtype}")
    return dtype


@cites(DSN)
def dsn_init(shape: Sequence[int], params: DSNParams | None = None, dtype: Any = None) -> DSNState:
    """Rest state of a sample: ``V_0 = v_reset``, ``D_0 = 1`` (every neuron awake); default constants when
    ``params`` is None."""
    params = check_params(DSNParams() if params is None else params)
    shape = tuple(check_int(s, "shape entry", min_value=0) for s in shape)
    dtype = _float_dtype(dtype)
    return DSNState(jnp.full(shape, params.v_reset, dtype), jnp.ones(shape, dtype))


def _fire_and_reset(p: DSNParams, v: Array, d: Array, x_t: Array) -> tuple[Array, Array]:
    h = p.beta * v + x_t
    s = d * _heaviside(h - p.v_th, jnp.asarray(p.alpha, h.dtype))
    s_hat = jax.lax.stop_gradient(s) if p.detach_reset else s
    return h * (1 - s_hat) + p.v_reset * s_hat, s


def _dsn_step(p: DSNParams, state: DSNState, x_t: Array) -> tuple[DSNState, Array]:
    d = state.d * _heaviside(state.v - p.v_dormant, jnp.asarray(p.alpha, state.v.dtype))
    v, s = _fire_and_reset(p, state.v, d, x_t)
    return DSNState(v, d), s


def _lif_step(p: DSNParams, state: DSNState, x_t: Array) -> tuple[DSNState, Array]:
    v, s = _fire_and_reset(p, state.v, jnp.ones((), state.v.dtype), x_t)
    return DSNState(v, state.d), s


def _check_step_inputs(params: DSNParams, state: DSNState, x_t: Any) -> Array:
    check_params(params)
    x_t = as_array(x_t, "x_t")
    if tuple(state.v.shape) != tuple(x_t.shape) or tuple(state.d.shape) != tuple(x_t.shape):
        raise ValueError(
            f"state must have the shape of x_t {tuple(x_t.shape)}, got v {tuple(state.v.shape)}, "
            f"d {tuple(state.d.shape)}"
        )
    return x_t


@cites(DSN)
def dsn_step(params: DSNParams, state: DSNState, x_t: Float[Array, "..."]) -> tuple[DSNState, Float[Array, "..."]]:
    """One DSN step: gate update from the post-reset ``V_{t-1}``, integrate, fire if awake, hard reset."""
    x_t = _check_step_inputs(params, state, x_t)
    return _dsn_step(params, state, x_t)


@cites(DSN)
def lif_step(params: DSNParams, state: DSNState, x_t: Float[Array, "..."]) -> tuple[DSNState, Float[Array, "..."]]:
    """One plain LIF step (``D = 1``; ``state.d`` is carried unchanged)."""
    x_t = _check_step_inputs(params, state, x_t)
    return _lif_step(params, state, x_t)


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
    check_params(params)
    x_seq = as_array(x_seq, "x_seq")
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
    """Run the DSN over ``x_seq`` (time first) with ``lax.scan``; works under ``jit``, ``vmap``, ``grad`` and
    ``jax.checkpoint``.

    Returns the spikes ``S_{1..T}``, the final state and ``aux = {"d_seq": D_{1..T}, "v_seq": V_{1..T}}``
    (the gate used at each step and the post-reset potential). ``state=None`` starts at rest.
    """
    return _scan(True, params, x_seq, state)


@cites(DSN)
def lif_scan(
    params: DSNParams, x_seq: Float[Array, "T ..."], state: DSNState | None = None
) -> tuple[Float[Array, "T ..."], DSNState, dict[str, Float[Array, "T ..."]]]:
    """Plain LIF (``D = 1``, ``params.v_dormant`` ignored) with the outputs of :func:`dsn_scan`."""
    return _scan(False, params, x_seq, state)


def dormant_fraction(d_seq: Float[Array, "T ..."]) -> Float[Array, ""]:
    """Dormancy ratio ``1 - mean_{t,j} D_{t,j}``."""
    d_seq = as_array(d_seq, "d_seq")
    return jnp.mean(1.0 - d_seq)  # exactly 0 when every gate is open


def deep_inhibition_fraction(v_seq: Float[Array, "T ..."], v_dormant: float = -0.05) -> Float[Array, ""]:
    """Fraction of ``(t, j)`` with ``V_{t,j} < V_D`` (the paper's "deeply inhibited" neurons of a LIF net)."""
    v_seq = as_array(v_seq, "v_seq")
    return jnp.mean((v_seq < v_dormant).astype(v_seq.dtype))


def _check_binary(x: Array, name: str) -> None:
    if is_concrete(x):
        a = np.asarray(x)
        if not np.all((a == 0) | (a == 1)):
            raise ValueError(
                f"{name} must be binary (entries 0 or 1), got values such as {a[(a != 0) & (a != 1)][0]!r}"
            )


def _sop_inputs(spikes_in: Any, d_out: Any, min_ndim: int) -> tuple[Array, Array]:
    spikes_in = as_array(spikes_in, "spikes_in")
    d_out = as_array(d_out, "d_out")
    for name, a in (("spikes_in", spikes_in), ("d_out", d_out)):
        if a.ndim < min_ndim:
            raise ValueError(f"{name} must have at least {min_ndim} dimensions (time first), got {tuple(a.shape)}")
    if spikes_in.shape[0] != d_out.shape[0]:
        raise ValueError(f"spikes_in and d_out must have the same T, got {spikes_in.shape[0]} and {d_out.shape[0]}")
    _check_binary(spikes_in, "spikes_in")
    _check_binary(d_out, "d_out")
    return spikes_in, d_out


@cites(DSN)
def sop_dense(spikes_in: Float[Array, "T *b n_in"], d_out: Float[Array, "T *b n_out"]) -> Float[Array, ""]:
    """Synaptic operations of a dense layer with dormant targets skipped:
    ``sum_{t,b} (sum_i s_{t,b,i}) (sum_j D_{t,b,j})``. Pass ``d_out = ones`` for the count without dormancy."""
    spikes_in, d_out = _sop_inputs(spikes_in, d_out, 2)
    if spikes_in.shape[:-1] != d_out.shape[:-1]:
        raise ValueError(
            f"spikes_in and d_out must agree on the time and batch axes, got {tuple(spikes_in.shape)} and "
            f"{tuple(d_out.shape)}"
        )
    return jnp.sum(jnp.sum(spikes_in, -1) * jnp.sum(d_out, -1))


def _pair(v: Any, name: str, min_value: int) -> tuple[int, int]:
    vals = (v, v) if isinstance(v, (int, np.integer)) else tuple(v)
    if len(vals) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return tuple(check_int(x, name, min_value=min_value) for x in vals)  # type: ignore[return-value]


@cites(DSN)
def sop_conv(
    spikes_in: Float[Array, "T B C H W"],
    d_out: Float[Array, "T B O Ho Wo"],
    kernel: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
) -> Float[Array, ""]:
    """Synaptic operations of a convolution (zero padding, no dilation, no groups) with dormant targets skipped:
    ``sum_{t,b,o,h,w} D_{t,b,o,h,w} * (number of input spikes in the receptive field of (h, w))``.

    The receptive-field count is a sum-pool of the channel-summed spike map with the kernel's window, stride
    and padding; ``d_out`` must have the conv's output spatial shape.
    """
    spikes_in, d_out = _sop_inputs(spikes_in, d_out, 5)
    if spikes_in.ndim != 5 or d_out.ndim != 5:
        raise ValueError(f"spikes_in and d_out must be (T, B, C, H, W), got {spikes_in.shape} and {d_out.shape}")
    (kh, kw), (sh, sw), (ph, pw) = _pair(kernel, "kernel", 1), _pair(stride, "stride", 1), _pair(padding, "padding", 0)
    counts = jax.lax.reduce_window(
        jnp.sum(spikes_in, 2),
        jnp.zeros((), spikes_in.dtype),
        jax.lax.add,
        (1, 1, kh, kw),
        (1, 1, sh, sw),
        ((0, 0), (0, 0), (ph, ph), (pw, pw)),
    )
    if counts.shape[:2] != d_out.shape[:2] or counts.shape[2:] != d_out.shape[3:]:
        raise ValueError(
            f"d_out must have shape (T, B, O, {counts.shape[2]}, {counts.shape[3]}) for this kernel/stride/padding "
            f"and T, B = {tuple(counts.shape[:2])}, got {tuple(d_out.shape)}"
        )
    return jnp.sum(counts * jnp.sum(d_out, 2))


@cites(DSN, HOROWITZ)
def energy_pj(
    first_layer_flops: Any,
    sops: Any,
    neuron_updates: Any = None,
    *,
    e_mac: float = E_MAC,
    e_ac: float = E_AC,
) -> Float[Array, ""]:
    """Energy in pJ: ``e_mac * first_layer_flops + e_ac * sops [+ e_ac * neuron_updates]``.

    ``first_layer_flops`` is the number of multiply-accumulates of the real-valued encoding layer over all T
    steps, ``sops`` the synaptic operations of the spiking layers (:func:`sop_dense`, :func:`sop_conv`),
    ``neuron_updates`` the optional count of awake neuron updates ``sum_{t,j} D_{t,j}``.
    """
    check_positive(e_mac, "e_mac", strict=False)
    check_positive(e_ac, "e_ac", strict=False)
    terms = [("first_layer_flops", first_layer_flops, e_mac), ("sops", sops, e_ac)]
    if neuron_updates is not None:
        terms.append(("neuron_updates", neuron_updates, e_ac))
    total = jnp.zeros(())
    for name, count, e in terms:
        count = as_array(count, name, kind="number")
        check_finite(count, name)
        if is_concrete(count) and np.any(np.asarray(count) < 0):
            raise ValueError(f"{name} must be >= 0, got {float(np.min(np.asarray(count)))!r}")
        total = total + e * count
    return total
