"""Every area's flagship kernel on the default JAX backend (CPU or GPU), in one script (issue 26 item 4).

One representative jitted kernel per area of ``jaxlab verify`` (``jaxlab.core.verification.discover_areas``; the
public entry point its ``bench/<area>.py`` times), float32 always and bfloat16 where it is meaningful (matmul-heavy
kernels: the Gaussian Gram matrix, pe_spread attention, MM-DiT sampling, the FlowAgent flow-matching MLP, the
TinyDecoder decode loop); every float32-only case says in its row why bfloat16 is skipped, and a bfloat16 row
reports the operand dtypes of its matmuls (``matmul_dtypes``: a model that promotes to float32 is flagged).
Host-bound flagships (Python schedulers and matchers) get a row that says so, and the jitted kernel of the same
area is timed instead. Inputs are drawn with numpy on the host (setting a case up compiles nothing of ours).

Timings: :func:`jaxlab.core.bench.time_fn` (the first call is the compile, reported as ``compile_s`` = first -
median; then the median of a few calls, every output blocked on). Throughput is GFLOP/s (counted analytically,
stated per case) or items/s (the item named per case). ``vs CPU`` = CPU time / this time, from the CPU reference
``bench/results/accelerator_cpu.json``: at the same size it is ``cpu_median / this_median``; where the reference
was recorded at a smaller size (the GPU size does not fit a 2-core CPU) it is the ratio of the throughputs,
marked ``~`` ("items/s-normalised"); ``n/a`` without a record at a comparable size.

Lowering check (``--check-lowering``, also part of ``--tiny``): jaxlab's custom primitives are lowered, without the
hardware, for the platforms ``cpu``, ``cuda``, ``rocm`` and ``tpu`` with
``jax.jit(f).trace(*args).lower(lowering_platforms=(platform,))``: the MM-DiT token matmul (a bilinear
``Primitive`` with its own transpose and batching rules), the DSN BPTT pair (``custom_jvp`` of the neuron scan,
whose tangent primitive transposes to the hand-written reverse scan), ``sort_floats`` (``custom_jvp``) and the
surrogate Heaviside (``custom_jvp``), through forward, gradient, jvp and ``vmap``. The public entry points that
carry them are lowered too; where they hold jaxlab's run-time input checks (``equinox.error_if``, a host
callback) lowering for another platform needs that platform's backend, so such a row reads ``callback`` instead
of ``ok`` (run with ``EQX_ON_ERROR=off`` to lower them without the checks). ``FAIL`` is a real lowering defect.

Modes::

    python bench/accelerator.py                   # default (GPU-sized) cases on the default backend
    python bench/accelerator.py --tiny            # tiny sizes + the lowering check (< 60 s on a 2-core CPU)
    python bench/accelerator.py --record-cpu      # CPU reference -> bench/results/accelerator_cpu.json
    python bench/accelerator.py --check-lowering  # the lowering check only
    python bench/accelerator.py --only core,snn   # some areas (or area/case names)

``--tiny`` is a smoke test: it compiles with ``JAX_DISABLE_MOST_OPTIMIZATIONS=1`` (compiles 3-4x faster; its
timings mean nothing). ``--record-cpu`` uses each case's ``cpu`` size where the default (GPU) size does not fit a
2-core CPU in about 6 minutes for the whole script (so does any run on the CPU backend, e.g. ``jaxlab bench``;
``--sizes default`` forces the GPU sizes); a GPU run then compares throughputs with it.

Output: ``jax.devices()`` and the jax version first; one JSON line per case (and per lowering target); a table;
the results as JSON in ``--out`` (default ``bench/results/accelerator_<backend>.json``; ``_tiny`` is appended for
``--tiny``, and ``_run`` when a run that is not ``--record-cpu`` would overwrite the CPU reference). A case that
fails prints an error row and the script goes on; the exit status is 1 if any case failed or any primitive
failed to lower. Needs only jaxlab's runtime dependencies (jax, equinox, optax, numpy, ...): no peers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import platform as _platform
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

HERE = pathlib.Path(__file__).resolve().parent
CPU_REFERENCE = HERE / "results" / "accelerator_cpu.json"
PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
SIZE_MODES = ("tiny", "default", "cpu")
CALLBACK_PRIMITIVES = ("pure_callback", "io_callback", "debug_callback")


def _parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line (before jax is imported, so that ``--record-cpu`` can pin the CPU platform)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--tiny", action="store_true", help="tiny sizes (seconds) and the lowering check")
    p.add_argument("--record-cpu", action="store_true",
                   help=f"run the default sizes on CPU and write the CPU reference {CPU_REFERENCE.name}")
    p.add_argument("--check-lowering", action="store_true", help="only lower the custom primitives per platform")
    p.add_argument("--no-lowering", action="store_true", help="skip the lowering check in --tiny")
    p.add_argument("--out", type=pathlib.Path, default=None, help="JSON results path")
    p.add_argument("--only", default="", help="comma-separated areas (core, msip, ...) or area/case names")
    p.add_argument("--sizes", choices=SIZE_MODES, default=None,
                   help="force a size set (default: tiny with --tiny, cpu on the CPU backend, else default)")
    p.add_argument("--repeats", type=int, default=None, help="timed calls per case (default 5; tiny 1)")
    args = p.parse_args(argv)
    if args.tiny and args.record_cpu:
        p.error("--tiny and --record-cpu exclude each other")
    return args


ARGS = _parse_args() if __name__ == "__main__" else None
if ARGS is not None and ARGS.record_cpu:
    os.environ["JAX_PLATFORMS"] = "cpu"  # the reference is a CPU figure, whatever accelerator is present
if ARGS is not None and ARGS.tiny:
    # --tiny is a smoke test: compile with XLA's optimisations off (3-4x faster compiles; its timings are not
    # comparable with a default run). JAX_DISABLE_MOST_OPTIMIZATIONS=0 keeps them on.
    os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxlab.core.bench import calibration_gflops, time_fn  # noqa: E402

F32, BF16 = jnp.float32, jnp.bfloat16
DTYPE_NAMES = {F32: "float32", BF16: "bfloat16"}


class Prepared(NamedTuple):
    """A case ready to time: ``fn(*args)``, the work of one call (FLOPs or items), its unit and a size label."""

    fn: Callable[..., Any]
    args: tuple
    work: float
    unit: str  # "GFLOP/s" (work in FLOPs) or "<items>/s" (work in items)
    size: str


@dataclass(frozen=True)
class Case:
    """One flagship kernel: its area, name, builder ``build(size_params, dtype) -> Prepared`` and sizes.

    ``sizes`` has ``tiny`` and ``default`` entries and, where the default (GPU) size does not fit a 2-core CPU, a
    ``cpu`` entry used for the CPU reference (its throughput is then compared, not its time). ``bf16`` is True
    when a bfloat16 row is run, else ``bf16_skip`` says why not. ``host_bound`` marks a row that is not timed.
    """

    area: str
    name: str
    build: Callable[[dict, Any], Prepared] | None
    sizes: dict[str, dict] = field(default_factory=dict)
    bf16: bool = False
    bf16_skip: str = ""
    flops: str = ""  # what the GFLOP/s counts
    note: str = ""
    host_bound: str = ""  # reason the area's flagship is not timed here (no build)
    dtype_label: str = ""  # for kernels that are not floating point


def _key(i: int):
    """PRNG key ``i`` (threefry)."""
    return jax.random.key(i)


def _host_map(tree: Any, fn: Callable[[np.ndarray], np.ndarray]) -> Any:
    """Apply a numpy function to the floating arrays of a pytree (on the host: no XLA compilation per leaf)."""
    return jax.tree.map(lambda a: jnp.asarray(fn(np.asarray(a))) if eqx.is_inexact_array(a) else a, tree)


def _cast(tree: Any, dtype) -> Any:
    """Cast the floating arrays of a pytree (model, batch) to ``dtype``; other leaves unchanged."""
    return _host_map(tree, lambda a: a.astype(dtype))


def _rng(seed: int) -> np.random.Generator:
    """A numpy generator: inputs are drawn on the host, so that setting a case up compiles nothing."""
    return np.random.default_rng(seed)


def _normal(seed: int, shape: tuple, dt, scale: float = 1.0):
    """``scale * N(0, 1)`` array of ``shape`` and dtype ``dt`` (drawn on the host)."""
    return jnp.asarray((scale * _rng(seed).standard_normal(shape)).astype(dt))


def _uniform(seed: int, shape: tuple, dt, lo: float = 0.0, hi: float = 1.0):
    """``U[lo, hi)`` array of ``shape`` and dtype ``dt`` (drawn on the host)."""
    return jnp.asarray(_rng(seed).uniform(lo, hi, shape).astype(dt))


def _init_model(ctor: Callable[[], Any], s: dict, seed: int = 0) -> Any:
    """``ctor()``, the library's constructor; with ``s["host_init"]`` (the tiny sizes) only its shapes and static
    fields (``eqx.filter_eval_shape``: nothing runs), the float weights drawn on the host, ``U(-a, a)`` with
    ``a = 1/sqrt(last axis)``. Eager initialisation compiles one random kernel per weight shape (about 10 s of the
    tiny run's minute on 2 cores, whose timings mean nothing anyway). At real sizes the library's own values are
    used: host-drawn ones made the TinyDecoder 3x slower on CPU (its norm gains shrank activations to subnormals)."""
    if not s.get("host_init"):
        return ctor()
    rng = _rng(seed)

    def fill(a):
        """A host-drawn array for an abstract leaf (zeros for non-float leaves)."""
        if not isinstance(a, jax.ShapeDtypeStruct):
            return a
        if not jnp.issubdtype(a.dtype, jnp.inexact):
            return jnp.zeros(a.shape, a.dtype)
        bound = 1.0 / math.sqrt(a.shape[-1] if a.shape else 1)
        return jnp.asarray(rng.uniform(-bound, bound, a.shape).astype(a.dtype))

    return jax.tree.map(fill, eqx.filter_eval_shape(ctor))


def _randint(seed: int, shape: tuple, lo: int, hi: int):
    """int32 array of ``shape`` uniform on ``[lo, hi)`` (drawn on the host)."""
    return jnp.asarray(_rng(seed).integers(lo, hi, shape).astype(np.int32))


# ----------------------------------------------------------------------------------------------- the cases


def build_gram(s: dict, dt) -> Prepared:
    """kernels: the Gaussian Gram matrix ``gram(X, X)`` of n points in d dimensions (one matmul + fused exp)."""
    from jaxlab.kernels import gram

    n, d = s["n"], s["d"]
    X = _normal(0, (n, d), dt)
    fn = jax.jit(lambda A: gram(A, lengthscale=2.0))
    return Prepared(fn, (X,), 2.0 * n * n * d, "GFLOP/s", f"n={n},d={d}")


def build_msip(s: dict, dt) -> Prepared:
    """sampling/msip: one MSIP step (Fredholm estimator) on Neal's funnel: Gram, Cholesky of K + jitter I, solves."""
    from functools import partial

    from jaxlab.sampling import msip as M
    from jaxlab.sampling.msip import benchmarks as B

    n, d = s["n"], s["d"]
    target = B.funnel(d)
    est = M.fredholm_estimator(target.log_density, gamma=0.9)
    Y0 = _normal(0, (n, d), dt)
    state = M.msip_init(Y0, est, lengthscale=M.default_lengthscale(n, d), key=_key(1))
    step = jax.jit(partial(M.msip_step, estimator=est, step_size=0.1))
    flops = 2 * n * n * d + n**3 / 3 + 4 * n * n * (d + 1)
    return Prepared(step, (_key(2), state), flops, "GFLOP/s", f"N={n},d={d}")


def build_ald(s: dict, dt) -> Prepared:
    """sampling/langevin: annealed Langevin (ALD), Linhart's composite score on the d = 2, n = 10 Gaussian toy."""
    from jaxlab.sampling import annealed_langevin as al
    from jaxlab.sampling.langevin.models import gaussian_toy, gaussian_toy_scores

    P, levels = s["particles"], s["levels"]
    toy = jax.tree.map(lambda a: jnp.asarray(a, dt), gaussian_toy(_key(0), 10))
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    score = al.make_composite_score("linhart", prior_fn, post_fn, toy.xs, prior_cov=toy.cov_prior,
                                    post_covs=toy.post_cov)
    ts, hs, ks = al.ald_default_schedule(levels, 5, 0.5)
    ts, hs = ts.astype(dt), hs.astype(dt)
    x0 = _normal(1, (P, 2), dt)
    fn = jax.jit(lambda key, x0: al.annealed_langevin(key, x0, score, ts, hs, ks))
    return Prepared(fn, (_key(2), x0), P * levels * 5, "chain-steps/s", f"P={P},levels={levels}x5")


def build_lm(s: dict, dt) -> Prepared:
    """scaling: vmapped Levenberg-Marquardt ``lm_solve`` of the Chinchilla law on synthetic 12-run designs."""
    from jaxlab.scaling import fit as F
    from jaxlab.scaling.designs import cycled_design
    from jaxlab.scaling.laws import BESIROGLU_2024, ChinchillaParams, chinchilla_log_loss, covariates

    n = s["designs"]
    N = np.logspace(8, np.log10(3e9), 12)
    Nd, Dd = cycled_design(N, jnp.array([5.0, 20.0, 80.0]))
    X = covariates(Nd.astype(dt), Dd.astype(dt))
    clean = chinchilla_log_loss(jax.tree.map(lambda a: a.astype(dt), BESIROGLU_2024), X)
    Y = jnp.asarray((np.asarray(clean) + 0.005 * _rng(1).standard_normal((n, 12))).astype(dt))
    start = ChinchillaParams(*(jnp.asarray(v, dt) for v in (6.0, 7.0, 0.5, 0.3, 0.3)))
    fn = jax.jit(lambda Y: jax.vmap(lambda y: F.lm_solve("chinchilla", start, X, y, max_steps=100, tol=1e-7))(Y).value)
    return Prepared(fn, (Y,), n, "fits/s", f"designs={n},12 runs,<=100 LM steps")


def build_qnn(s: dict, dt) -> Prepared:
    """quantum: value and gradient of the QNN's MSE over a batch of inputs (statevector, re-uploading ansatz)."""
    from jaxlab.quantum import QNNConfig, init_qnn_params, qnn_apply

    n, L, B = s["qubits"], s["layers"], s["batch"]
    cfg = QNNConfig(n, L)
    params = init_qnn_params(_key(0), cfg, dtype=dt)
    xs_np = np.linspace(0.0, 2 * np.pi, B).astype(dt)
    xs, ys = jnp.asarray(xs_np), jnp.asarray(0.3 * np.cos(3 * xs_np))
    loss = lambda p, xs, ys: jnp.mean((jax.vmap(lambda x: qnn_apply(p, x, cfg))(xs) - ys) ** 2)  # noqa: E731
    fn = jax.jit(jax.value_and_grad(loss))
    return Prepared(fn, (params, xs, ys), B, "circuits/s", f"{n} qubits,L={L},batch={B}")


def build_vaw(s: dict, dt) -> Prepared:
    """online: Vovk-Azoury-Warmuth forecaster, ``vmap`` over sequences (float32: a solve per step)."""
    from jaxlab.online import vaw

    B, T, d = s["seqs"], s["T"], s["d"]
    rng = _rng(0)
    a = rng.standard_normal((B, T, d)) / math.sqrt(d)
    y = a @ rng.standard_normal(d) + 0.1 * rng.standard_normal((B, T))
    a, y = jnp.asarray(a.astype(dt)), jnp.asarray(y.astype(dt))
    fn = jax.jit(jax.vmap(lambda a, y: vaw.run(a, y, 1.0)[1].y_hat))
    return Prepared(fn, (a, y), B * T, "steps/s", f"seqs={B},T={T},d={d}")


def build_msim_sgd(s: dict, dt) -> Prepared:
    """multiscale: online spherical SGD of the two-layer tanh single-index model, ``vmap`` over seeds."""
    from jaxlab.multiscale import MSIMConfig, lr_schedule, run_online_sgd, sample_features

    d, seeds, steps = s["d"], s["seeds"], s["steps"]
    cfg = MSIMConfig(d, 2, ("tanh", "tanh"))
    ws = sample_features(_key(2), d, 2).astype(dt)
    sched = lr_schedule(d, 0.3, int(10 * d * math.log(d) ** 2), 0.2)
    fn = jax.jit(jax.vmap(lambda k: run_online_sgd(k, ws, cfg, steps, sched, steps // 4)[1]))
    keys = jax.random.split(_key(3), seeds)
    return Prepared(fn, (keys,), seeds * steps, "SGD-steps/s", f"d={d},seeds={seeds},steps={steps}")


def build_denoise(s: dict, dt) -> Prepared:
    """optim: one DiSK-denoised Adam training step of an MLP (every gradient query the denoiser asks for)."""
    import optax

    from jaxlab.optim import disk, find_state

    width, batch = s["width"], s["batch"]
    model = _init_model(lambda: eqx.nn.MLP(784, 10, width, 1, key=_key(0)), s)
    params, static = eqx.partition(_cast(model, dt), eqx.is_array)
    x, y = _normal(1, (batch, 784), dt), _randint(2, (batch,), 0, 10)

    def loss(p, x, y):
        """Mean cross-entropy of the MLP on the batch."""
        logits = jax.vmap(eqx.combine(p, static))(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    den = disk()
    tx = optax.chain(den, optax.adam(1e-3))

    @jax.jit
    def step(state, params, x, y):
        """One step: the denoiser's gradient queries, its combination, the chained Adam update."""
        ds = find_state(state)
        g = tuple(jax.grad(loss)(q, x, y) for q in den.query_points(ds, params))
        updates, state = tx.update(den.combine(ds, g), state, params)
        return optax.apply_updates(params, updates), state

    n_params = sum(a.size for a in jax.tree.leaves(params))
    return Prepared(step, (tx.init(params), params, x, y), batch, "samples/s",
                    f"MLP 784-{width}-10 ({n_params / 1e6:.2f}M),batch={batch}")


def build_cwr(s: dict, dt) -> Prepared:
    """losses: value and gradient of the CwR 2-d surrogate (``cwr2d``, c = 0.2) over a batch."""
    from jaxlab.losses import cwr

    B, K = s["batch"], s["K"]
    sur = cwr.surrogate("cwr2d", K, 0.2)
    u, y = _normal(0, (B, sur.dim), dt), _randint(1, (B,), 0, K)
    fn = jax.jit(jax.value_and_grad(lambda u, y: jnp.mean(sur.loss(u, y))))
    return Prepared(fn, (u, y), B, "samples/s", f"batch={B},K={K}")


def build_attention(s: dict, dt) -> Prepared:
    """attention: pe_spread multi-head attention with mean pooling, forward + backward (weights and input)."""
    from jaxlab.attention.pe_spread.attention import MeanPoolAttention, attention_mean_pool
    from jaxlab.attention.pe_spread.pe import sinusoidal_pe

    B, n, d, H = s["batch"], s["n"], s["d"], s["heads"]
    model = _cast(_init_model(lambda: MeanPoolAttention(d, d, num_heads=H, key=_key(0)), s), dt)
    x = _normal(1, (B, n, d), dt)
    pe = _cast(sinusoidal_pe(n, d), dt)
    fn = jax.jit(jax.grad(lambda m, x: jnp.sum((attention_mean_pool(m, x, pe) @ m.wo) ** 2), argnums=(0, 1)))
    fwd = B * (2 * n * d * 3 * d + 4 * n * n * d)
    return Prepared(fn, (model, x), 3 * fwd, "GFLOP/s", f"B={B},n={n},d={d},H={H}")


def build_frontier(s: dict, dt) -> Prepared:
    """alignment: exact reward-KL frontier (tilted policies, KL, reverse KL, gain), ``vmap`` over prompts."""
    from jaxlab.alignment import frontier

    P, V, B = s["prompts"], s["outputs"], s["betas"]
    logits = 2.0 * _rng(0).standard_normal((P, V))
    log_pi0 = jnp.asarray((logits - np.log(np.exp(logits).sum(1, keepdims=True))).astype(dt))
    r, betas = _normal(1, (P, V), dt), jnp.asarray(np.logspace(-1, 1, B).astype(dt))
    fn = jax.jit(jax.vmap(frontier, in_axes=(0, 0, None)))
    return Prepared(fn, (log_pi0, r, betas), P * V * B, "tilt-elements/s", f"P={P},V={V},betas={B}")


def _mmdit(s: dict, dt):
    """A random (non-zero) TinyMMDiT of the case's size, cast to ``dt``, and a random batch for it."""
    from jaxlab.generative import rectified_flow as rf

    side, patch, B = s["side"], s["patch"], s["batch"]
    model = _init_model(lambda: rf.TinyMMDiT(_key(0), side=side, patch=patch, width=s["width"], heads=s["heads"],
                                             depth=s["depth"], zero_init=False), s)
    model = _host_map(model, lambda a: (0.5 * a).astype(dt))  # halved, as bench/_generative_flow.py: O(1) steps
    imgs, ref = _uniform(1, (B, side, side, 3), dt, -1.0, 1.0), _uniform(2, (B, side, side, 3), dt, -1.0, 1.0)
    tok = _randint(3, (B, model.text_len), 1, model.vocab)
    label = f"{side}x{side} patch {patch} ({(side // patch) ** 2} img tok),w={s['width']},depth={s['depth']},B={B}"
    return model, imgs, tok, ref, label


def build_mmdit_train(s: dict, dt) -> Prepared:
    """generative/semantic_flow: one rectified-flow training step of the MM-DiT (clip + AdamW, ``rf_train_step``)."""
    from jaxlab.core.train import train_init
    from jaxlab.generative import rectified_flow as rf

    model, imgs, tok, ref, label = _mmdit(s, dt)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    opt = rf.rf_optimizer(1e-3)
    step = jax.jit(rf.rf_train_step(opt, static, lambda m, k, b: rf.rf_loss(m, k, b[0], (b[1], b[2]))))
    return Prepared(step, (_key(4), train_init(params, opt), (imgs, tok, ref)), s["batch"], "samples/s", label)


def build_mmdit_sample(s: dict, dt) -> Prepared:
    """generative/semantic_flow: Euler sampling of the MM-DiT (``euler_sample``, ``vmap`` over the batch)."""
    from jaxlab.generative import rectified_flow as rf

    model, _, tok, ref, label = _mmdit(s, dt)
    steps = s["steps"]
    sigmas = rf.make_sigmas(steps, dtype=dt)
    x0 = _normal(5, ref.shape, dt)
    fn = eqx.filter_jit(lambda m, x, c: jax.vmap(lambda x, c: rf.euler_sample(m, x, sigmas, c))(x, c))
    return Prepared(fn, (model, x0, (tok, ref)), s["batch"] * steps, "NFE/s", f"{label},{steps} Euler steps")


def build_flow_agent(s: dict, dt) -> Prepared:
    """generative/flow_agent: ``cfm_fit`` of FlowAgent's trajectory velocity MLP (one ``lax.scan`` of CFM steps)."""
    from jaxlab.generative.flow_agent import TrajectoryVelocity, cfm_fit

    K, D, B, steps, width = 8, 16, s["batch"], s["steps"], s["width"]
    model = _cast(_init_model(lambda: TrajectoryVelocity(K, D, width=width, key=_key(0)), s), dt)
    pool = 4 * B
    x1, cond = _normal(1, (pool, K, D), dt), _normal(2, (pool, 3 * D), dt)

    def run(key, m, x1, cond):
        """``cfm_fit`` for the case's number of steps; returns the losses."""
        def sample(k):
            """A minibatch: fresh noise x0, targets and conditions drawn from the pool."""
            ki, k0 = jax.random.split(k)
            idx = jax.random.randint(ki, (B,), 0, pool)
            return jax.random.normal(k0, (B, K, D), dt), x1[idx], cond[idx]

        return cfm_fit(key, m, sample, num_steps=steps)[1].loss

    return Prepared(eqx.filter_jit(run), (_key(3), model, x1, cond), B * steps, "train-samples/s",
                    f"MLP 192-{width}-{width}-128,batch={B},steps={steps}")


def build_forecast(s: dict, dt) -> Prepared:
    """generative/forecasting: evolutionary-forecasting roll-out (L = 720, RevIN MLP), ``vmap`` over histories."""
    from jaxlab.forecasting import MLPForecaster, ef_forecast

    B, T, H, C, L = s["histories"], 336, 96, 7, 720
    model = _init_model(lambda: MLPForecaster(T, H, key=_key(0)), s)
    x = jnp.asarray((0.1 * np.cumsum(_rng(1).standard_normal((B, T, C)), axis=1)).astype(dt))
    fn = eqx.filter_jit(lambda m, x: jax.vmap(lambda h: ef_forecast(m, h, L))(x))
    return Prepared(fn, (model, x), B, "histories/s", f"B={B},T={T},C={C},L={L}")


def build_raycast(s: dict, dt) -> Prepared:
    """generative/active_scene: panoramic ray casting (depth + opacity) from many candidate viewpoints."""
    from jaxlab.generative.active_scene import make_room_scene, pano_directions, raycast_depth

    n_cand, h, w, S = s["candidates"], s["h"], s["w"], s["samples"]
    scene = make_room_scene(_key(0), G=32, n_boxes=6)
    field_ = jnp.asarray((0.9 * np.asarray(scene.occ) + 0.05).astype(dt))
    free = np.argwhere(~np.asarray(scene.occ)[:, :, 16]) + 0.5
    pick = free[np.linspace(0, len(free) - 1, n_cand).astype(int)]
    origins = jnp.asarray(np.concatenate([pick, np.full((n_cand, 1), 16.5)], axis=1), dt)
    dirs = pano_directions(h, w, dt)
    fn = jax.jit(jax.vmap(lambda f, o, d: raycast_depth(f, o, d, step=0.5, n_samples=S), in_axes=(None, 0, None)))
    return Prepared(fn, (field_, origins, dirs), n_cand * h * w, "rays/s",
                    f"{n_cand} panoramas {h}x{w},grid 32^3,S={S}")


def build_decode(s: dict, dt) -> Prepared:
    """serving/token_router: greedy decoding with the TinyDecoder's KV-cached ``decode_step`` in a ``lax.scan``."""
    from jaxlab.serving.token_router.tiny_lm import TinyDecoder, decode_step, init_cache

    B, steps, layers, d = s["batch"], s["steps"], s["layers"], s["d"]
    # built in float32 and cast on the host: the bf16 row reuses the float32 row's compiled initialisation
    model = _cast(_init_model(lambda: TinyDecoder(_key(0), num_layers=layers, d_model=d, num_heads=max(1, d // 64),
                                                  vocab=256, max_len=steps), s), dt)
    cache = init_cache(model, B, steps)
    tok0 = _randint(1, (B,), 0, 256)

    @eqx.filter_jit
    def run(model, cache, tok):
        """Greedy decoding of ``steps`` tokens from ``tok``; returns the last tokens."""
        def body(carry, i):
            """One decode step of every row, then the argmax token."""
            cache, tok = carry
            logits, _, cache = decode_step(model, cache, tok[:, None], jnp.full((B,), i, jnp.int32))
            return (cache, jnp.argmax(logits, -1).astype(jnp.int32)), None

        return jax.lax.scan(body, (cache, tok), jnp.arange(steps))[0][1]

    return Prepared(run, (model, cache, tok0), B * steps, "tokens/s", f"layers={layers},d={d},B={B},steps={steps}")


def build_rodinsert(s: dict, dt) -> Prepared:
    """agents/tree_of_skill: RodInsert2D environments stepped with ``jit(vmap(rodinsert_step))`` in a ``lax.scan``."""
    from jaxlab.agents import rodinsert as ri

    n, steps = s["envs"], s["steps"]
    params = ri.RodInsertParams(max_steps=10_000)
    _, s0 = jax.vmap(lambda k: ri.rodinsert_reset(k, params))(jax.random.split(_key(0), n))
    s0 = _cast(s0, dt)
    acts = _rng(1).uniform(-1.0, 1.0, (steps, n, 3))
    acts[..., 2] = np.abs(acts[..., 2])  # grippers close: grasps and carries happen
    acts = jnp.asarray(acts.astype(dt))
    step = jax.vmap(lambda st, a: ri.rodinsert_step(_key(0), st, a, params)[1])
    fn = jax.jit(lambda st, acts: jax.lax.scan(lambda c, a: (step(c, a), None), st, acts)[0])
    return Prepared(fn, (s0, acts), n * steps, "env-steps/s", f"envs={n},steps={steps}")


def build_toposcope(s: dict, dt) -> Prepared:
    """agents/toposcope: the dense rule counts (``rule_counts``) of padded schematics, ``vmap`` over designs."""
    from jaxlab.agents import toposcope as ts

    n = s["designs"]
    base = [ts.encode(ts.random_schematic(i, 12), 128, 16) for i in range(min(n, 64))]
    reps = -(-n // len(base))
    batch = jax.tree.map(lambda *xs: jnp.asarray(np.tile(np.stack(xs), (reps,) + (1,) * xs[0].ndim)[:n]), *base)
    return Prepared(jax.jit(jax.vmap(ts.rule_counts)), (batch,), n, "designs/s", f"designs={n},128 pins,16 nets")


def build_snn(s: dict, dt) -> Prepared:
    """snn: loss and gradients of a 784-256-10 spiking network of DSN neurons (``dsn_scan``, hand-written BPTT)."""
    import optax

    from jaxlab.snn import DSNParams, dsn_scan

    T, B, n_in, n_hid, n_out = s["T"], s["batch"], 784, 256, 10
    P = DSNParams(v_dormant=-0.05)
    x = jnp.asarray((_rng(0).random((T, B, n_in)) < 0.2).astype(dt))
    y = _randint(1, (B,), 0, n_out)
    params = (_normal(2, (n_in, n_hid), dt, 2.0 / math.sqrt(n_in)), jnp.asarray(np.full((n_hid,), 0.1, dt)),
              _normal(3, (n_hid, n_out), dt, 4.0 / math.sqrt(n_hid)), jnp.asarray(np.zeros((n_out,), dt)))

    def loss(params, x, y):
        """Cross-entropy of the spike-count read-out of the two DSN layers."""
        w1, b1, w2, b2 = params
        s1 = dsn_scan(P, x @ w1 + b1)[0]
        s2 = dsn_scan(P, s1 @ w2 + b2)[0]
        return optax.softmax_cross_entropy_with_integer_labels(s2.mean(0), y).mean()

    return Prepared(jax.jit(jax.value_and_grad(loss)), (params, x, y), B, "samples/s",
                    f"784-256-10,T={T},batch={B}")


def build_facts(s: dict, dt) -> Prepared:
    """eval/facts: the FACTS suite score with its joint percentile bootstrap (``facts_score_ci``)."""
    from jaxlab.eval.facts import SUBBENCHMARKS, facts_score_ci

    n, n_boot = s["items"], s["n_boot"]
    rng = _rng(0)
    items = {b: tuple(jnp.asarray((rng.random(n) < 0.6).astype(dt)) for _ in range(2)) for b in SUBBENCHMARKS}
    fn = jax.jit(lambda key, items: facts_score_ci(key, items, n_boot=n_boot))
    return Prepared(fn, (_key(1), items), n_boot, "resamples/s", f"items/split={n},splits=8,n_boot={n_boot}")


EXACT = "float32 only: "
CASES: tuple[Case, ...] = (
    Case("core", "gram", build_gram, {"tiny": {"n": 256, "d": 16}, "default": {"n": 8192, "d": 64}},
         bf16=True, flops="2 n^2 d (the matmul)"),
    Case("msip", "msip_step", build_msip, {"tiny": {"n": 128, "d": 10}, "default": {"n": 4096, "d": 10},
                                               "cpu": {"n": 2048, "d": 10}},
         bf16_skip=EXACT + "Cholesky of the Gram matrix (XLA has no bf16 Cholesky; 8-bit mantissa too coarse)",
         flops="Gram 2N^2d + Cholesky N^3/3 + solves 4N^2(d+1)"),
    Case("langevin", "ald_linhart", build_ald, {"tiny": {"particles": 256, "levels": 20},
                                                "default": {"particles": 100_000, "levels": 400},
                                                "cpu": {"particles": 2_000, "levels": 400}},
         bf16_skip=EXACT + "Langevin increments h*score (h ~ 1e-3) vanish against |x| ~ 1 at bf16 resolution"),
    Case("scaling", "lm_solve_vmap", build_lm, {"tiny": {"designs": 64}, "default": {"designs": 16_384},
                                                "cpu": {"designs": 2048}},
         bf16_skip=EXACT + "Levenberg-Marquardt normal equations and the tol=1e-7 stopping rule"),
    Case("quantum", "qnn_value_grad", build_qnn, {"tiny": {"qubits": 4, "layers": 1, "batch": 8},
                                                  "default": {"qubits": 12, "layers": 4, "batch": 512},
                                                  "cpu": {"qubits": 12, "layers": 4, "batch": 32}},
         bf16_skip="complex64 statevector: there is no bfloat16 complex type"),
    Case("online", "vaw_vmap", build_vaw, {"tiny": {"seqs": 8, "T": 64, "d": 8},
                                           "default": {"seqs": 1024, "T": 1024, "d": 32},
                                           "cpu": {"seqs": 64, "T": 1024, "d": 32}},
         bf16_skip=EXACT + "a d x d solve per step on an accumulating Gram matrix"),
    Case("multiscale", "spherical_sgd_vmap", build_msim_sgd, {"tiny": {"d": 16, "seeds": 4, "steps": 64},
                                                              "default": {"d": 64, "seeds": 1024, "steps": 4096},
                                                              "cpu": {"d": 64, "seeds": 8, "steps": 4096}},
         bf16_skip=EXACT + "learning rates ~0.3/(d log d) and re-normalisation to the sphere lose the update in bf16"),
    Case("denoise", "disk_adam_step", build_denoise, {"tiny": {"width": 64, "batch": 32, "host_init": True},
                                                    "default": {"width": 4096, "batch": 4096},
                                                    "cpu": {"width": 1280, "batch": 512}},
         bf16_skip=EXACT + "the denoiser's running gradient estimate is an optimiser state (kept in float32)"),
    Case("cwr", "cwr2d_value_grad", build_cwr, {"tiny": {"batch": 4096, "K": 64},
                                                   "default": {"batch": 4_194_304, "K": 4096},
                                                   "cpu": {"batch": 1_048_576, "K": 4096}},
         bf16_skip=EXACT + "the reject margin c = 0.2 and the class threshold are compared on the scores"),
    Case("pe_spread", "attention_fwd_bwd", build_attention,
         {"tiny": {"batch": 2, "n": 64, "d": 32, "heads": 4, "host_init": True},
          "default": {"batch": 64, "n": 2048, "d": 128, "heads": 4},
          "cpu": {"batch": 2, "n": 2048, "d": 128, "heads": 4}},
         bf16=True, flops="3 x forward; forward = B (6 n d^2 + 4 n^2 d)"),
    Case("alignment", "exact_frontier_vmap", build_frontier,
         {"tiny": {"prompts": 4, "outputs": 1000, "betas": 4},
          "default": {"prompts": 1000, "outputs": 50_000, "betas": 64},
          "cpu": {"prompts": 32, "outputs": 50_000, "betas": 16}},
         bf16_skip=EXACT + "log-sum-exp normalisation and KL of tilted distributions over 50,000 outputs"),
    Case("semantic_flow", "mmdit_train_step", build_mmdit_train,
         {"tiny": {"side": 8, "patch": 4, "width": 32, "heads": 2, "depth": 1, "batch": 4, "host_init": True},
          "default": {"side": 32, "patch": 2, "width": 256, "heads": 8, "depth": 4, "batch": 64},
          "cpu": {"side": 32, "patch": 2, "width": 256, "heads": 8, "depth": 4, "batch": 4}},
         bf16_skip=EXACT + "AdamW on bf16 weights is not a training recipe (the bf16 row is the sampler)"),
    Case("semantic_flow", "mmdit_sample", build_mmdit_sample,
         {"tiny": {"side": 8, "patch": 4, "width": 32, "heads": 2, "depth": 1, "batch": 4, "steps": 2,
                   "host_init": True},
          "default": {"side": 32, "patch": 2, "width": 256, "heads": 8, "depth": 4, "batch": 64, "steps": 20},
          "cpu": {"side": 32, "patch": 2, "width": 256, "heads": 8, "depth": 4, "batch": 2, "steps": 4}},
         bf16=True),
    Case("flow_agent", "cfm_fit", build_flow_agent,
         {"tiny": {"width": 64, "batch": 16, "steps": 4, "host_init": True},
          "default": {"width": 1024, "batch": 4096, "steps": 50},
          "cpu": {"width": 1024, "batch": 256, "steps": 20}},
         bf16=True, note="bf16 = the whole step in bf16 (weights, AdamW), throughput only"),
    Case("forecasting", "ef_rollout", build_forecast,
         {"tiny": {"histories": 8, "host_init": True}, "default": {"histories": 16_384}, "cpu": {"histories": 1024}},
         bf16_skip=EXACT + "RevIN statistics over 336 steps and the 8 chained evolutions compound bf16 rounding"),
    Case("active_scene", "raycast", build_raycast,
         {"tiny": {"candidates": 2, "h": 8, "w": 16, "samples": 32},
          "default": {"candidates": 256, "h": 64, "w": 128, "samples": 128},
          "cpu": {"candidates": 16, "h": 64, "w": 128, "samples": 128}},
         bf16_skip=EXACT + "voxel indices from positions up to 32 (bf16 steps of 0.25 there), transmittance products"),
    Case("token_router", "engine", None, host_bound=(
        "the TokenRouter engine's scheduler is a Python loop over requests (host-bound); its jitted kernel, the "
        "TinyDecoder decode step, is timed in token_router/tiny_decoder_decode")),
    Case("token_router", "tiny_decoder_decode", build_decode,
         {"tiny": {"batch": 4, "steps": 8, "layers": 1, "d": 64, "host_init": True},
          "default": {"batch": 256, "steps": 128, "layers": 6, "d": 512},
          "cpu": {"batch": 8, "steps": 64, "layers": 6, "d": 512}},
         bf16=True),
    Case("tree_of_skill", "bt_tick", None, host_bound=(
        "behaviour-tree ticking is Python over symbolic states (host-bound); the jitted RodInsert2D step is timed")),
    Case("tree_of_skill", "rodinsert_step", build_rodinsert,
         {"tiny": {"envs": 16, "steps": 8}, "default": {"envs": 65_536, "steps": 100},
          "cpu": {"envs": 4096, "steps": 100}},
         bf16_skip=EXACT + "contact and insertion tolerances (tol = 0.05 on positions ~1.4) in bf16 steps of 0.0078"),
    Case("toposcope", "verify", None, host_bound=(
        "TopoScope's verify is a Python pattern matcher (host-bound); the dense jitted rule counts are timed")),
    Case("toposcope", "rule_counts", build_toposcope,
         {"tiny": {"designs": 16}, "default": {"designs": 16_384}, "cpu": {"designs": 2048}},
         dtype_label="int32/bool", note="integer/boolean kernel (no floating point)"),
    Case("snn", "dsn_network_fwd_bwd", build_snn, {"tiny": {"T": 4, "batch": 4}, "default": {"T": 25, "batch": 4096},
                                                   "cpu": {"T": 25, "batch": 256}},
         bf16_skip=EXACT + "spikes are exact threshold comparisons of membrane potentials (V_th, V_D)"),
    Case("facts", "judge_table", None, host_bound=(
        "FACTS verdict tables and judges are plain Python (host-bound); the jitted bootstrap is timed")),
    Case("facts", "score_ci", build_facts, {"tiny": {"items": 100, "n_boot": 50},
                                                 "default": {"items": 5000, "n_boot": 10_000},
                                                 "cpu": {"items": 5000, "n_boot": 500}},
         bf16_skip=EXACT + "means of 0/1 scores over thousands of items need more than bf16's 8-bit mantissa"),
)


# ------------------------------------------------------------------------------------------------ timing


def _size_mode(args: argparse.Namespace, backend: str) -> str:
    """The sizes used: ``tiny``; ``cpu`` (the CPU reference's, also any run on the CPU backend, so that it takes
    minutes, not hours); ``default`` (GPU-sized) otherwise. ``--sizes`` overrides."""
    if args.sizes:
        return args.sizes
    return "tiny" if args.tiny else ("cpu" if args.record_cpu or backend == "cpu" else "default")


def _selected(case: Case, only: str) -> bool:
    """Whether ``--only`` (comma-separated areas or area/name) selects ``case``."""
    if not only:
        return True
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    return case.area in wanted or f"{case.area}/{case.name}" in wanted


def _finite(tree: Any) -> bool:
    """Whether every floating leaf of an output is finite (a sanity check on what was timed; on the host, so that
    it compiles nothing)."""
    leaves = [a for a in jax.tree.leaves(tree) if hasattr(a, "dtype") and jnp.issubdtype(a.dtype, jnp.inexact)]
    return all(bool(np.isfinite(np.asarray(a, np.complex64 if jnp.iscomplexobj(a) else np.float32)).all())
               for a in leaves)


def _out_dtypes(tree: Any) -> list[str]:
    """The distinct floating dtypes of an output."""
    return sorted({str(a.dtype) for a in jax.tree.leaves(tree)
                   if hasattr(a, "dtype") and jnp.issubdtype(a.dtype, jnp.floating)})


def _dot_dtypes(fn: Callable, args: tuple) -> dict[str, int]:
    """How many matmuls (``dot_general``, in every sub-jaxpr) the traced program has per operand dtype pair, e.g.
    ``{"bfloat16 x bfloat16": 12, "float32 x float32": 3}``: what precision a bf16 case's matmuls really run in."""
    counts: dict[str, int] = {}

    def walk(jaxpr):
        """Count the dot_generals of a jaxpr and of the jaxprs in its equations' parameters."""
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "dot_general":
                k = " x ".join(str(v.aval.dtype) for v in eqn.invars)
                counts[k] = counts.get(k, 0) + 1
            for p in eqn.params.values():
                for sub in p if isinstance(p, (list, tuple)) else (p,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(eqx.filter_make_jaxpr(fn)(*args)[0].jaxpr)
    return counts


def _throughput(work: float, unit: str, seconds: float) -> float:
    """Work per second in the unit's scale (GFLOP/s or items/s)."""
    return work / seconds / (1e9 if unit == "GFLOP/s" else 1.0)


def run_case(case: Case, dtype, mode: str, repeats: int, backend: str) -> dict:
    """Build and time one case at one dtype; a failure becomes an error row (never raises)."""
    size_params = case.sizes.get(mode) or case.sizes["default"]
    row: dict[str, Any] = {
        "kind": "case", "area": case.area, "case": case.name,
        "dtype": case.dtype_label or DTYPE_NAMES[dtype], "backend": backend,
        "size_mode": mode if mode in case.sizes else "default", "size_params": size_params,
    }
    notes = [case.note] if case.note else []
    if dtype == F32 and not case.bf16 and case.bf16_skip:
        notes.append("bf16 skipped: " + case.bf16_skip)
    t0 = time.perf_counter()
    try:
        prep = case.build(size_params, dtype)
        row["build_s"] = time.perf_counter() - t0
        last: list = []

        def call(*a):
            """``prep.fn``, keeping its latest output for the checks below (no extra call)."""
            last[:] = [prep.fn(*a)]
            return last[0]

        t = time_fn(call, *prep.args, repeats=repeats, min_time=0.0 if mode == "tiny" else 0.2)
        out = last[0]
        median = t["median_s"]
        row.update(status="ok", size=prep.size, unit=prep.unit, work=prep.work, median_s=median, min_s=t["min_s"],
                   compile_s=max(t["first_s"] - median, 0.0), first_s=t["first_s"],
                   throughput=_throughput(prep.work, prep.unit, median), finite=_finite(out),
                   out_dtypes=_out_dtypes(out))
        if case.flops:
            notes.append("GFLOP/s counts " + case.flops)
        if not row["finite"]:
            notes.append("output has non-finite entries")
        if dtype == BF16:
            row["matmul_dtypes"] = dots = _dot_dtypes(prep.fn, prep.args)
            n_bf16 = sum(v for k, v in dots.items() if k == "bfloat16 x bfloat16")
            if n_bf16 < sum(dots.values()):
                notes.append(f"WARNING: only {n_bf16} of {sum(dots.values())} matmuls run in bf16: {dots}")
            if row["out_dtypes"] and "bfloat16" not in row["out_dtypes"]:
                notes.append(f"output dtype {row['out_dtypes']}")
    except Exception as exc:  # one failing case must not stop the others
        row.update(status="error", error=f"{type(exc).__name__}: {exc}".strip()[:2000],
                   traceback=traceback.format_exc(limit=6)[-4000:])
    row["note"] = "; ".join(notes)
    row["wall_s"] = time.perf_counter() - t0
    return row


def host_bound_row(case: Case, backend: str) -> dict:
    """The row of a flagship that is host-bound and therefore not timed here."""
    return {"kind": "case", "area": case.area, "case": case.name, "dtype": "-", "backend": backend,
            "status": "host-bound", "note": case.host_bound}


# ------------------------------------------------------------------------------------------------ reference


def load_reference(path: pathlib.Path = CPU_REFERENCE) -> dict[str, dict]:
    """The CPU reference rows keyed ``area/case/dtype`` (empty if the file is missing or unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {f"{r['area']}/{r['case']}/{r['dtype']}": r for r in data.get("cases", [])
            if r.get("status") == "ok" and r.get("kind") == "case"}


def attach_ratio(row: dict, ref: dict[str, dict], mode: str) -> None:
    """Set ``ratio`` (CPU time / this time) and ``ratio_kind`` on an ok row from the CPU reference.

    Same size parameters: ``cpu_median / this_median`` (``same-size``). The reference recorded at its reduced CPU
    size and this run at the default size: the throughput ratio (``items/s-normalised``). Otherwise ``n/a``.
    """
    row["ratio"], row["ratio_kind"] = None, "n/a"
    r = ref.get(f"{row['area']}/{row['case']}/{row['dtype']}")
    if row.get("status") != "ok" or r is None:
        return
    if r.get("size_params") == row.get("size_params"):
        row["ratio"], row["ratio_kind"] = r["median_s"] / row["median_s"], "same-size"
    elif mode == "default" and r.get("size_mode") == "cpu" and r.get("unit") == row.get("unit"):
        row["ratio"], row["ratio_kind"] = row["throughput"] / r["throughput"], "items/s-normalised"
    row["cpu_reference"] = {k: r.get(k) for k in ("size", "median_s", "throughput", "unit")}


# ------------------------------------------------------------------------------------------------ lowering


def lowering_targets() -> list[tuple[str, str, Callable, tuple]]:
    """``(name, path, fn, abstract_args)`` for every custom primitive: ``primitive`` rows call it directly,
    ``public`` rows through the public entry point that uses it."""
    from jaxlab.core.sorting import sort_floats
    from jaxlab.generative import rectified_flow as rf
    from jaxlab.generative.semantic_flow.mmdit import _token_matmul
    from jaxlab.snn import DSNParams, dsn_scan, heaviside_sg
    from jaxlab.snn.scan import _neuron_scan

    S = jax.ShapeDtypeStruct
    x, w, ws = S((6, 16, 32), F32), S((24, 32), F32), S((6, 24, 32), F32)
    mm_loss = lambda x, w: jnp.sum(_token_matmul(x, w) ** 2)  # noqa: E731
    cfg = (2.0, 1.0, 0.0, 4.0, False)  # tau, v_th, v_reset, alpha, detach_reset
    seq, st, vd = S((5, 4, 7), F32), S((4, 7), F32), S((), F32)
    dsn_loss = lambda vd, xs, v0, d0: sum(jnp.sum(o) for o in _neuron_scan(True, cfg, vd, xs, v0, d0))  # noqa: E731
    p = DSNParams(v_dormant=-0.05)
    pub_dsn = lambda xs: jnp.sum(dsn_scan(p, xs)[0] ** 2)  # noqa: E731

    # an abstract model (shapes only: nothing is initialised or compiled eagerly)
    model = eqx.filter_eval_shape(lambda: rf.TinyMMDiT(_key(0), side=8, patch=4, width=16, heads=2, depth=1))
    params, static = eqx.partition(model, lambda a: isinstance(a, S) and jnp.issubdtype(a.dtype, jnp.inexact))
    img, tok = S((2, 8, 8, 3), F32), S((2, model.text_len), jnp.int32)
    mmdit_grad = jax.grad(lambda p, k, x, t, r: rf.rf_loss(eqx.combine(p, static), k, x, (t, r)))
    key = S((), jax.random.key(0).dtype)
    srt = S((8, 33), F32)
    return [
        ("mmdit token matmul: forward", "primitive", _token_matmul, (x, w)),
        ("mmdit token matmul: grad (transpose rules)", "primitive", jax.grad(mm_loss, argnums=(0, 1)), (x, w)),
        ("mmdit token matmul: jvp", "primitive", lambda x, w, tx, tw: jax.jvp(_token_matmul, (x, w), (tx, tw)),
         (x, w, x, w)),
        ("mmdit token matmul: vmap(grad), batched weights", "primitive",
         jax.vmap(jax.grad(mm_loss, argnums=(0, 1))), (x, ws)),
        ("mmdit rf_loss grad (TinyMMDiT)", "public", mmdit_grad, (params, key, img, tok, img)),
        ("dsn neuron scan: forward", "primitive", lambda *a: _neuron_scan(True, cfg, *a), (vd, seq, st, st)),
        ("dsn neuron scan: grad (BPTT cotangent prim)", "primitive", jax.grad(dsn_loss, argnums=(0, 1, 2, 3)),
         (vd, seq, st, st)),
        ("dsn neuron scan: jvp (tangent prim)", "primitive",
         lambda a, b, c, d, tb: jax.jvp(lambda xs: _neuron_scan(True, cfg, a, xs, c, d), (b,), (tb,)),
         (vd, seq, st, st, seq)),
        ("dsn neuron scan: vmap(grad)", "primitive",
         jax.vmap(jax.grad(dsn_loss, argnums=1), in_axes=(None, 0, None, None)), (vd, S((3, 5, 4, 7), F32), st, st)),
        ("dsn_scan value_and_grad (public)", "public", jax.value_and_grad(pub_dsn), (seq,)),
        ("heaviside_sg grad", "public", jax.grad(lambda v: jnp.sum(heaviside_sg(v, 4.0))), (seq,)),
        ("sort_floats: forward", "public", lambda a: sort_floats(a, 1), (srt,)),
        ("sort_floats: jvp", "public", lambda a, t: jax.jvp(lambda v: sort_floats(v, 1), (a,), (t,)), (srt, srt)),
        ("sort_floats: vmap", "public", jax.vmap(lambda a: sort_floats(a, 0)), (srt,)),
    ]


def check_lowering(platforms: tuple[str, ...] = PLATFORMS) -> list[dict]:
    """Lower every target of :func:`lowering_targets` for every platform; one row per (target, platform).

    ``status``: ``ok``; ``callback`` (lowering failed and the program holds a host callback, which needs the
    target backend to lower: a limitation of cross-platform lowering, not of the primitive); ``FAIL`` otherwise.
    """
    rows = []
    try:
        targets = lowering_targets()
    except Exception as exc:
        return [{"kind": "lowering", "target": "(building the targets)", "path": "-", "platform": "-",
                 "status": "FAIL", "error": f"{type(exc).__name__}: {exc}"[:2000]}]
    for name, path, fn, args in targets:
        try:  # traced once, lowered per platform
            traced, error = jax.jit(fn).trace(*args), None
            callback = any(p in str(traced.jaxpr) for p in CALLBACK_PRIMITIVES)
        except Exception as exc:
            traced, error, callback = None, f"tracing: {type(exc).__name__}: {exc}"[:1000], False
        for plat in platforms:
            row = {"kind": "lowering", "target": name, "path": path, "platform": plat, "has_callback": callback}
            try:
                if traced is None:
                    raise RuntimeError(error)
                text = traced.lower(lowering_platforms=(plat,)).as_text()
                row.update(status="ok", hlo_chars=len(text))
            except Exception as exc:
                row.update(status="callback" if callback else "FAIL", error=f"{type(exc).__name__}: {exc}"[:1000])
            rows.append(row)
    return rows


def print_lowering(rows: list[dict]) -> None:
    """The lowering results as a target x platform matrix, then the distinct errors."""
    plats = [p for p in PLATFORMS if any(r["platform"] == p for r in rows)]
    names = list(dict.fromkeys((r["target"], r["path"]) for r in rows))
    width = max([len(n) for n, _ in names] + [20])
    print(f"\nLowering check (jax.jit(f).trace(*args).lower(lowering_platforms=(p,))), jax {jax.__version__}:")
    print(f"  {'target':<{width}}  {'path':<9}  " + "  ".join(f"{p:<8}" for p in plats))
    for n, path in names:
        cells = {r["platform"]: r["status"] for r in rows if r["target"] == n}
        print(f"  {n:<{width}}  {path:<9}  " + "  ".join(f"{cells.get(p, '-'):<8}" for p in plats))
    errors = dict.fromkeys(f"{r['status']}: {r.get('error', '')[:300]}" for r in rows if r["status"] != "ok")
    for e in errors:
        print(f"  ! {e}")
    if any(r["status"] == "callback" for r in rows):
        print("  callback = the program carries jaxlab's run-time input checks (equinox.error_if -> pure_callback);\n"
              "  a host callback lowers only for the backend present (it does on a real GPU/TPU). "
              "EQX_ON_ERROR=off lowers it everywhere.")


# ------------------------------------------------------------------------------------------------ output


def _fmt(x: float | None, spec: str = ".3g") -> str:
    """A number for the table, or ``-``."""
    return "-" if x is None else format(x, spec)


def print_table(rows: list[dict]) -> None:
    """The results table: case, backend, dtype, compile s, median ms, throughput, ratio to CPU, status."""
    head = ("case", "backend", "dtype", "compile s", "median ms", "throughput", "unit", "vs CPU", "status")
    lines = []
    for r in rows:
        ratio = "n/a"
        if r.get("ratio") is not None:
            ratio = ("~" if r["ratio_kind"] == "items/s-normalised" else "") + f"{r['ratio']:.3g}x"
        lines.append((f"{r['area']}/{r['case']}", r["backend"], r["dtype"], _fmt(r.get("compile_s"), ".2f"),
                      _fmt(None if r.get("median_s") is None else 1e3 * r["median_s"]),
                      _fmt(r.get("throughput"), ".4g"), r.get("unit", "-"), ratio if r["status"] == "ok" else "-",
                      r["status"]))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print("\n" + fmt.format(*head))
    print("  ".join("-" * w for w in widths))
    for line in lines:
        print(fmt.format(*line))
    print("\nvs CPU = CPU median / this median at the same size; ~ = throughput ratio against the CPU reference "
          "recorded at a smaller size (items/s-normalised); n/a = no comparable record.")
    notes = [(f"{r['area']}/{r['case']} [{r['dtype']}]", r.get("note") or "", r.get("size", ""), r.get("error", ""))
             for r in rows]
    print("\nSizes and notes:")
    for name, note, size, err in notes:
        text = "; ".join(t for t in (size, note, err and f"ERROR {err}") if t)
        print(f"  {name}: {text}")


def default_out(args: argparse.Namespace, backend: str) -> pathlib.Path:
    """The default ``--out``: ``bench/results/accelerator_<backend>[_tiny|_run].json`` (never clobbers the CPU
    reference unless ``--record-cpu``)."""
    if args.record_cpu:
        return CPU_REFERENCE
    stem = f"accelerator_{backend}" + ("_tiny" if args.tiny else "")
    path = HERE / "results" / f"{stem}.json"
    return HERE / "results" / f"{stem}_run.json" if path == CPU_REFERENCE else path


def main(args: argparse.Namespace) -> int:
    """Run the selected cases (and the lowering check), print and write the results; return the exit status."""
    t_start = time.perf_counter()
    print(f"jax {jax.__version__}; jax.devices() = {jax.devices()}", flush=True)
    backend = jax.default_backend()
    mode = _size_mode(args, backend)
    if args.record_cpu and backend != "cpu":
        print(f"--record-cpu needs the CPU backend, got {backend}", file=sys.stderr)
        return 2
    import equinox
    import jaxlib
    import optax

    meta = {"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", None),
            "equinox": equinox.__version__, "optax": optax.__version__, "numpy": np.__version__,
            "python": _platform.python_version(), "backend": backend, "devices": [str(d) for d in jax.devices()],
            "device_kind": jax.devices()[0].device_kind, "size_mode": mode, "argv": sys.argv[1:],
            "cpu_count": os.cpu_count(), "x64": bool(jax.config.read("jax_enable_x64")),
            "xla_optimizations": not jax.config.read("jax_disable_most_optimizations"),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "loadavg_1_5_15": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "calibration_gflops_numpy": calibration_gflops(512 if mode == "tiny" else 1024)}
    print(json.dumps({"kind": "meta", **meta}), flush=True)

    lowering: list[dict] = []
    if args.check_lowering or (args.tiny and not args.no_lowering):
        lowering = check_lowering()
        for r in lowering:
            print(json.dumps(r), flush=True)
        print_lowering(lowering)

    rows: list[dict] = []
    if not args.check_lowering:
        ref = {} if args.record_cpu else load_reference()
        repeats = args.repeats or (1 if mode == "tiny" else 5)
        for case in CASES:
            if not _selected(case, args.only):
                continue
            if case.build is None:
                rows.append(host_bound_row(case, backend))
                print(json.dumps(rows[-1]), flush=True)
                continue
            for dtype in (F32, BF16) if case.bf16 else (F32,):
                row = run_case(case, dtype, mode, repeats, backend)
                attach_ratio(row, ref, mode)
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "traceback"}), flush=True)
                if row["status"] == "error":
                    print(row["traceback"], file=sys.stderr, flush=True)
        print_table(rows)

    failed = [r for r in rows if r["status"] == "error"] + [r for r in lowering if r["status"] == "FAIL"]
    meta["wall_s"] = time.perf_counter() - t_start
    out = args.out or default_out(args, backend)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "cases": rows, "lowering": lowering}, indent=1, default=str) + "\n")
    print(f"\n{len(rows)} case rows, {len(failed)} failures; wrote {out}; {meta['wall_s']:.1f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
