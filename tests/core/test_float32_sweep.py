"""Every public entry point keeps float32: a sweep with x64 on and off (issue 26 item 1).

The entry points are the public callables with an ``Example:`` in their docstring (the packages
``tools/check_docstrings.py`` checks). Each one that takes float array inputs has a :class:`Case` in ``CASES``: the
docstring example's inputs, built for a given float dtype, what to compare, and a float32 tolerance. The others
are listed in ``OUT_OF_SCOPE`` with a one-word reason; ``test_every_entry_point_is_in_the_table`` keeps the two
tables complete.

``test_float32[case]`` runs, for each case:

- x64 on (this process, as the rest of the suite): the float64 run and the float32 run of the same inputs (the
  float32 inputs are the float64 ones rounded). Every floating output of the float64 run is float64 (complex128),
  every one of the float32 run float32 (complex64), and the two agree within the case's ``rtol``/``atol``;
  integer and boolean outputs agree exactly.
- x64 off: the float32 run from one subprocess (``float32_sweep_worker.py``, ``JAX_ENABLE_X64=0``) for the whole
  run: float32 outputs, within the same tolerance of this process's float64 run. A case that draws in the default
  int or float type (batches from ``jax.random.randint``: int32 draws with x64 off, int64 with it on) gives other
  numbers with x64 off: its ``x64_off`` says so, and that half compares dtypes and shapes only.

Inputs are built under x64 (the worker builds them inside ``jax.enable_x64(True)``), in float64, then rounded to the
case's dtype: both processes see the same numbers, whatever PRNG draws a constructor makes.

Tolerances: the default ``rtol=1e-4, atol=1e-6`` fits a map evaluated once and the short loops here (float32
rounding is ~6e-8 relative; the measured errors are below 1e-6 for most cases). A case states why it needs more.
Stochastic entry points draw in their inputs' dtype, and ``jax.random`` draws in float32 and in float64 are
different numbers for the same key: such a case compares a statistic with a Monte Carlo tolerance, or what the
draws do not reach (a noise-free configuration, dtypes and shapes), and says so.

Only the cheapest cases of each area (``QUICK``) run by default; the others are marked ``slow`` (every run of a
case compiles its own programs, up to ~50 s for a training loop on the project's 2-core machine):
``pytest -m "slow or not slow" tests/core/test_float32_sweep.py`` runs the whole sweep. Set
``FLOAT32_SWEEP_ERRORS=file`` to append each case's measured errors to a file.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import os
import pathlib
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab import alignment as al
from jaxlab import core, online, snn
from jaxlab import forecasting as fc
from jaxlab import kernels as kern
from jaxlab import multiscale as ms
from jaxlab import quantum as qm
from jaxlab import scaling as sc
from jaxlab.agents import toposcope as topo
from jaxlab.agents import tree_of_skill as tos
from jaxlab.attention import pe_spread as pe
from jaxlab.core import distributed
from jaxlab.core.quadrature import gauss_hermite
from jaxlab.eval import facts
from jaxlab.generative import active_scene as act
from jaxlab.generative import flow_agent as fa
from jaxlab.generative import semantic_flow as sf
from jaxlab.losses import cwr
from jaxlab.optim import denoise as dn
from jaxlab.sampling import langevin as lg
from jaxlab.sampling import msip as mp
from jaxlab.serving import token_router as tr

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("float32_sweep_worker.py")
F32, F64 = jnp.float32, jnp.float64


# ----------------------------------------------------------------------------------------------------------------
# the table's machinery
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One entry point of the sweep.

    Attributes:
      fn: the public callable.
      inputs: ``dtype -> tuple``: the docstring example's inputs (float arrays in float64, rounded to ``dtype``
        afterwards by :func:`cast`; an element may be the dtype itself, for an ``init(..., dtype=)``).
      call: ``call(fn, *inputs)`` runs the entry point (default ``fn(*inputs)``; an algorithm factory is driven
        through ``init`` and :func:`jaxlab.core.run`).
      pick: ``pick(outputs)``: the pytree compared (default: everything returned).
      rtol, atol: the float32 tolerance against the float64 run.
      why: the reason for a tolerance other than the default, or for a statistic in place of the outputs.
      xfail: a known defect (the case is ``xfail(strict=True)``).
      x64_off: why the x64-off run is compared by dtype and shape only: it draws in the default int or float
        type (int32/float32 with x64 off, int64/float64 with it on: other batches, other numbers).
    """

    fn: Callable
    inputs: Callable[[Any], tuple]
    call: Callable | None = None
    pick: Callable | None = None
    rtol: float = 1e-4
    atol: float = 1e-6
    why: str = ""
    xfail: str | None = None
    x64_off: str = ""

    def run(self, dtype):
        with jax.enable_x64(True):  # the same inputs with x64 on and off: built in float64, then rounded
            args = cast(self.inputs(dtype), dtype)
        out = self.call(self.fn, *args) if self.call is not None else self.fn(*args)
        return self.pick(out) if self.pick is not None else out


def cast(tree, dtype):
    """Every floating (complex) array of a pytree in ``dtype`` (its complex counterpart); other leaves unchanged."""
    ctype = jnp.complex64 if jnp.dtype(dtype) == jnp.float32 else jnp.complex128

    def one(a):
        if isinstance(a, (jax.Array, np.ndarray, np.generic)) and not jax.dtypes.issubdtype(a.dtype,
                                                                                            jax.dtypes.prng_key):
            if jnp.issubdtype(a.dtype, jnp.floating):  # through numpy: no compiled conversion per shape
                return jnp.asarray(np.asarray(a, dtype))
            if jnp.issubdtype(a.dtype, jnp.complexfloating):
                return jnp.asarray(np.asarray(a, ctype))
        return a

    return jax.tree_util.tree_map(one, tree)


def leaves(out) -> list[tuple[str, np.ndarray, bool]]:
    """The numeric leaves of an output: (path, numpy value, whether it carried a dtype: an array, not a Python
    number)."""
    res = []
    for path, a in jax.tree_util.tree_flatten_with_path(out)[0]:
        name = jax.tree_util.keystr(path) or "output"
        if isinstance(a, jax.Array) and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
            continue
        if isinstance(a, (jax.Array, np.ndarray, np.generic)):
            res.append((name, np.asarray(a), True))
        elif isinstance(a, (bool, int, float, complex)):
            res.append((name, np.asarray(a), False))
    return res


def wrong_dtypes(lv, dtype) -> list[str]:
    """The floating leaves of an output that are not in ``dtype`` (or its complex counterpart)."""
    want = {jnp.dtype(dtype), jnp.dtype(jnp.complex64 if jnp.dtype(dtype) == jnp.float32 else jnp.complex128)}
    return [f"{name}: {a.dtype}" for name, a, typed in lv
            if typed and np.issubdtype(a.dtype, np.inexact) and a.dtype not in want]


def compare(lv32, lv64, rtol: float, atol: float) -> tuple[float, float]:
    """Assert that the float32 leaves agree with the float64 ones; return (max abs error, max rel error)."""
    assert [n for n, _, _ in lv32] == [n for n, _, _ in lv64]
    max_abs = max_rel = 0.0
    for (name, a, _), (_, b, _) in zip(lv32, lv64, strict=True):
        assert a.shape == b.shape, (name, a.shape, b.shape)
        if np.issubdtype(b.dtype, np.inexact):
            a = a.astype(b.dtype)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=name)
            if a.size:
                err = np.abs(a - b)
                max_abs = max(max_abs, float(np.max(err)))
                scale = np.maximum(np.abs(b), atol / rtol if rtol else np.max(np.abs(b)))
                max_rel = max(max_rel, float(np.max(err / scale)))
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    return max_abs, max_rel


def compare_shapes(lv32, lv64) -> None:
    """Assert that two outputs have the same leaves and shapes (values not compared)."""
    assert [(n, a.shape) for n, a, _ in lv32] == [(n, a.shape) for n, a, _ in lv64]


def dtypes_only(tree):
    """Empty slices of a pytree's arrays: what they compare is their dtype (for draws that differ by dtype)."""
    return jax.tree_util.tree_map(lambda a: jnp.ravel(a)[:0] if isinstance(a, jax.Array) else a, tree)


_RANDINT_BATCHES = "draws its batches with jax.random.randint in the default int type"


def key(i: int):
    return jax.random.key(i)


def normal(seed: int, shape, scale=1.0, loc=0.0) -> np.ndarray:
    """Gaussian inputs from numpy (no compilation per shape, as jax.random would need)."""
    return loc + scale * np.random.default_rng(seed).standard_normal(shape)


def uniform(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).uniform(size=shape)


def algo(num_steps=None, *, key_seed=1, init=1, xs=False, jit=False, thin=1):
    """``call`` for an Algorithm factory: the first ``init`` inputs after the factory's go to ``init``.

    ``call(fn, *inputs)``: ``fn(*inputs[:-init - xs])`` builds the algorithm, ``inputs[-init - xs: -xs]`` are
    ``init``'s arguments and the last input (``xs=True``) is the data stream of :func:`jaxlab.core.run`.
    """

    def call(fn, *args):
        n_tail = init + int(xs)
        head, tail = args[:len(args) - n_tail], args[len(args) - n_tail:]
        a = fn(*head)
        state = a.init(*tail[:init])
        if num_steps == 1 and not xs:
            step = jax.jit(a.step) if jit else a.step
            return step(key(key_seed), state)
        return core.run(a.step, state, None if xs and key_seed is None else key(key_seed), num_steps,
                        xs=tail[init] if xs else None, thin=thin)

    return call


# ----------------------------------------------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------------------------------------------

OUT_OF_SCOPE: dict[Callable, str] = {
    topo.k_hop_reach: "boolean",  # adjacency matrices
    topo.load_benchmark: "parser",
    topo.rule_counts: "schematic",
    topo.run_agent: "schematic",
    topo.scope: "schematic",
    topo.verify: "schematic",
    core.cite: "string",
    distributed.initialize: "configuration",
    core.set_lapack_threads: "configuration",  # a thread count
    core.usable_cores: "configuration",  # a core count, no input
    core.mean_and_se: "host",  # NumPy statistics of claim results, always in float64
    facts.load_verdicts: "parser",
    facts.leaderboard: "categorical",  # verdict strings
    act.make_room_scene: "key",  # a PRNG key and sizes: no float input to follow
    fa.make_tool_world: "key",
    lg.gaussian_toy: "key",
    lg.ald_default_schedule: "scalars",  # Python scalars only (the schedule is in the default float type)
    qm.fourier_coeffs_of: "callable",  # a function sampled on the library's grid (the default float type)
    qm.encoding_spectrum: "integer",  # integer frequencies and multiplicities of a configuration
    qm.spectrum_from_eigenvalues: "integer",  # integer frequencies of Python eigenvalue lists
}


def _log(p):
    return jnp.log(jnp.asarray(p, F64))


ALIGNMENT = [
    Case(al.best_of_n, lambda dt: (_log(np.full(4, 0.25)), jnp.arange(4.0), 4)),
    Case(al.dataset_frontier, lambda dt: (normal(0, (8, 500)) * jnp.linspace(0.5, 1.5, 8)[:, None],
                                          jnp.array([0.5, 1.0, 2.0]))),
    Case(al.frontier, lambda dt: (_log([0.5, 0.3, 0.2]), jnp.array([0.0, 0.5, 1.0]), jnp.array([0.1, 1.0, 10.0])),
         rtol=1e-3, why="beta = 0.1 tilts by exp(10): the float32 log-partition loses digits"),
    Case(al.frontier_from_samples, lambda dt: (normal(0, (2000,)), jnp.array([1.0, 2.0]))),
    Case(al.max_gain_at_kl, lambda dt: (_log([0.5, 0.3, 0.2]), jnp.array([0.0, 0.5, 1.0]), 0.8047)),
    Case(al.proxy_gaps, lambda dt: (_log([0.1, 0.2, 0.3, 0.25, 0.15]), jnp.linspace(0.0, 1.0, 5),
                                    jnp.array([0.3, -0.1, 0.0, 0.2, -0.2]), 0.5)),
    Case(al.reinforce_kl_algorithm, lambda dt: (_log([0.5, 0.5]), jnp.array([0.0, 1.0]), 0.5),
         call=algo(1, init=0, jit=True, key_seed=0), pick=dtypes_only,
         why="draws a batch from the policy in its dtype (other draws in float32): dtypes and shapes"),
    Case(al.reinforce_kl_run, lambda dt: (key(0), jax.nn.log_softmax(jnp.linspace(-1.0, 1.0, 5)),
                                          jnp.linspace(0.0, 1.0, 5), 0.5),
         call=lambda fn, *a: fn(*a, num_steps=50, batch_size=256),
         pick=lambda o: jax.nn.softmax(o[0].logits), rtol=0, atol=0.03,
         why="REINFORCE draws from the policy in its dtype: compares the learned policy (probabilities) to the "
             "Monte Carlo error of 50 steps x 256 samples"),
]


PE = [
    Case(pe.MeanPoolAttention, lambda dt: (dt, pe.MeanPoolAttention(8, 4, key=key(0)), normal(1, (5, 8)),
                                           pe.sinusoidal_pe(5, 8)),
         call=lambda fn, dt, att, x, E: (dtypes_only(fn(8, 4, key=key(0), dtype=dt)), att(x, pe=E)),
         why="dtype= draws the weights in that dtype (other numbers): the float64 module, rounded, is applied"),
    Case(pe.equivariance_gap, lambda dt: (pe.MeanPoolAttention(8, 4, key=key(0)), normal(1, (4, 5, 8)),
                                          pe.sinusoidal_pe(5, 8)),
         call=lambda fn, att, x, E: fn(pe.attention_mean_pool, att, x, E, key(2), num_perms=4)),
    Case(pe.pe_classifier_algorithm,
         lambda dt: (pe.PEClassifier(key(1), vocab=4, d=8, num_classes=4, pe=pe.learned_pe_init(key(0), 8, 8),
                                     pe_trainable=True),),
         call=lambda fn, model: algo(1, init=0, jit=True, key_seed=2)(
             lambda: fn(model, optax.adam(1e-2), task="majority", lam=0.1, batch_size=4, n_min=4, n_max=8,
                        vocab=4)),
         x64_off="samples its token batch with jax.random.randint in the default int type"),
    Case(pe.sinusoidal_pe, lambda dt: (dt,), call=lambda fn, dt: fn(64, 16, dtype=dt),
         atol=1e-5, why="sin/cos of angles up to 63 rad: float32 rounds the angle to 4e-6"),
    Case(pe.spread, lambda dt: (normal(0, (16, 8)),)),
    Case(pe.train, lambda dt: (pe.PEClassifier(key(0), vocab=4, d=8, num_classes=4),),
         call=lambda fn, model: fn(key(1), model, optax.adam(1e-2), 10, task="majority", batch_size=4, n_min=4,
                                   n_max=8, vocab=4),
         x64_off="samples its token batches with jax.random.randint in the default int type"),
]

CORE = [
    Case(core.make_train_step, lambda dt: (jnp.zeros(2), jnp.eye(2), jnp.ones(2)),
         call=lambda fn, w, x, y: fn(lambda w, x, y: jnp.mean((x @ w - y) ** 2), optax.sgd(0.1))(
             core.train_init(w, optax.sgd(0.1)), x, y)),
    Case(core.run, lambda dt: (jnp.zeros(3),),
         call=lambda fn, x0: fn(lambda k, x: (x + 0.1 * x + 1.0, x), x0, key(0), 20),
         why="a deterministic step (a random walk's draws depend on the dtype)"),
    Case(core.sharded_vmap, lambda dt: (jnp.ones((5, 3)), jnp.asarray(1.0)),
         call=lambda fn, x, c: fn(lambda x, c: jnp.sum(x**2) + c, in_axes=(0, None))(x, c)),
    Case(core.trainer, lambda dt: (jnp.zeros(2), (normal(0, (20, 8, 2)),
                                                 normal(0, (20, 8, 2)) @ jnp.array([1.0, -2.0]))),
         call=lambda fn, w0, batches: core.run(
             (a := fn(lambda w, k, b: jnp.mean((b[0] @ w - b[1]) ** 2), optax.sgd(0.1))).step, a.init(w0),
             key(1), xs=batches)),
    Case(distributed.gather, lambda dt: ({"x": jnp.arange(3.0), "n": 3},)),
]

FACTS = [
    Case(facts.facts_score_ci,
         lambda dt: ({b: (jnp.array([1.0, 0.0, 1.0, 1.0]),) * 2
                      for b in ("multimodal", "parametric", "search", "grounding")},),
         call=lambda fn, items: fn(key(0), items, n_boot=200),
         x64_off="draws its bootstrap indices with jax.random.randint in the default int type"),
    Case(facts.shortform_metrics, lambda dt: (jnp.array([0, 0, 1, 2, 0]), jnp.array([1.0, 1.0, 1.0, 1.0, 0.0]))),
]

FORECASTING = [
    Case(fc.DLinear, lambda dt: (dt, fc.DLinear(48, 24, key=key(0)), normal(0, (48, 3))),
         call=lambda fn, dt, model, x: (dtypes_only(fn(48, 24, key=key(0), dtype=dt)), model(x)),
         why="dtype= draws the weights in that dtype (other numbers): the float64 model, rounded, is applied"),
    Case(fc.ef_forecast, lambda dt: (jnp.ones((16, 1)),), call=lambda fn, x: fn(fc.ar1_oracle(0.9, 4), x, 10)),
    Case(fc.evaluate_horizons, lambda dt: (fc.fit_linear(*fc.make_windows(fc.sinusoid_series(200)[:150], 48, 24)),
                                           fc.sinusoid_series(200)[150 - 48:]),
         call=lambda fn, model, y: fn(model, y, [24, 48], "ef")),
    Case(fc.fit_linear, lambda dt: fc.make_windows(fc.sinusoid_series(200), 48, 24),
         call=lambda fn, X, Y: fn(X, Y, ridge=1e-3)(X[0])),  # the fitted model's forecast of a window
    Case(fc.gradient_conflict, lambda dt: (fc.Linear(48, 24, key=key(0)),
                                           *fc.make_windows(fc.sinusoid_series(120), 48, 24)),
         call=lambda fn, m, X, Y: fn(m, X, Y, 8, batch_size=32)),
    Case(fc.rollout_finetune, lambda dt: (fc.Linear(48, 24, key=key(0)), fc.sinusoid_series(150)),
         call=lambda fn, m, y: fn(key(1), m, y, k_steps=2, num_steps=5, batch_size=8),
         x64_off=_RANDINT_BATCHES),
    Case(fc.train_forecaster, lambda dt: (fc.Linear(48, 24, key=key(0)), fc.sinusoid_series(150)),
         call=lambda fn, m, y: fn(key(1), m, y, num_steps=5, batch_size=8, with_losses=True),
         x64_off=_RANDINT_BATCHES),
]

_ACFG = act.ActiveConfig(pano_h=4, pano_w=8, n_samples=16, cand_stride=2, cand_clearance=1)
# the simulated generator without noise (its depth, colour and hallucination draws are in the scene's dtype)
_ACFG_EXACT = _ACFG._replace(sigma_d=0.0, sigma_c=0.0, q_hall=0.0)


def _scene():
    return act.make_room_scene(key(0), G=8, n_boxes=0)


ACTIVE = [
    Case(act.explore, lambda dt: (_scene(),), call=lambda fn, scene: fn(key(1), scene, 2, "active", _ACFG_EXACT)),
    Case(act.explore_algorithm, lambda dt: (_scene(), jnp.array([4.5, 4.5, 4.5])),
         call=lambda fn, scene, pose: (a := fn(scene, act.candidate_lattice(scene, _ACFG)[0], _ACFG_EXACT,
                                                policy="active"),
                                       jax.jit(a.step)(key(1), a.init(pose)))[1]),
    Case(act.fit_gaussians,
         lambda dt: (act.Gaussians(jnp.array([[6.5, 4.5, 4.5], [2.5, 4.5, 4.5]]), jnp.zeros(2), jnp.full(2, 0.9),
                                   jnp.full((2, 3), 0.5)),
                     jnp.array([[4.5, 4.5, 4.5]]),
                     act.Render(jnp.full((1, 4, 8), 2.0), jnp.full((1, 4, 8, 3), 0.8), jnp.ones((1, 4, 8)))),
         call=lambda fn, g, poses, target: fn(key(0), g, (poses, target), 5, cfg=_ACFG, batch_rays=16),
         x64_off="draws its ray batches with jax.random.randint in the default int type"),
    Case(act.raycast, lambda dt: (jnp.zeros((16, 16, 16)).at[10:].set(1.0), jnp.array([4.5, 8.5, 8.5]),
                                  jnp.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0]])),
         call=lambda fn, f, o, d: fn(f, o, d, step=0.5, n_samples=40)),
]


def _world():
    return fa.make_tool_world(key(0), n_types=4, n_tools=8, dim=4)


def _sample64(k):  # N(0, 1) -> N(3, 1)
    ka, kb = jax.random.split(k)
    return jax.random.normal(ka, (64, 1)), 3 + jax.random.normal(kb, (64, 1)), None


FLOW_AGENT = [
    Case(fa.cfm_fit, lambda dt: (fa.VelocityMLP((1,), width=16, key=key(0)), dt),
         call=lambda fn, m, dt: fn(key(1), m, lambda k: jax.tree_util.tree_map(
             lambda a: a.astype(dt), _sample64(k)), num_steps=5, learning_rate=1e-2),
         pick=dtypes_only, why="the CFM times are drawn in the data's dtype: dtypes and shapes"),
    Case(fa.cfm_loss, lambda dt: (normal(0, (256, 1)), normal(1, (256, 1), loc=3.0)),
         call=lambda fn, x0, x1: fn(lambda x, t, c: fa.gaussian_optimal_velocity(x, t, 3.0, 1.0), key(2), x0, x1),
         rtol=0.05, why="the times t are drawn in the data's dtype: a 256-sample loss, within Monte Carlo error"),
    Case(fa.episode_algorithm, lambda dt: (_world(),),
         call=lambda fn, world: core.run((a := fn(world, fa.OraclePlanner(K=4), p_fail=0.0, max_steps=6, K=4)).step,
                                         a.init(0, 2), key(1), 6)[0]),
    Case(fa.evaluate, lambda dt: (_world(),),
         call=lambda fn, world: fn(key(1), world, fa.OraclePlanner(K=4), 4, 0.0, horizons=(1, 2), K=4,
                                   max_steps=6)),
    Case(fa.ode_algorithm, lambda dt: (jnp.zeros(3),),
         call=lambda fn, x0: core.run((a := fn(lambda x, t, c: 2.0 - x, num_steps=4)).step, a.init(x0), key(0), 4)),
    Case(fa.ode_sample, lambda dt: (jnp.array([-1.0, 0.0, 1.0]),),
         call=lambda fn, x0: fn(lambda x, t, c: fa.gaussian_optimal_velocity(x, t, 3.0, 0.5), x0, num_steps=20,
                                method="midpoint")),
    Case(fa.train_flowagent, lambda dt: (_world(),),
         call=lambda fn, world: fn(key(2), world, num_steps=3, batch_size=8, K=4, width=16,
                                   tasks=fa.training_tasks(key(1), world, 16, K=4, n_max=3), return_losses=True),
         pick=dtypes_only, why="the CFM times and noise are drawn in the world's dtype: dtypes only"),
]


def _mmdit():
    return sf.TinyMMDiT(key(0), side=8, width=8, heads=2, depth=1, zero_init=False)


_TOKENS = jnp.array([1, 12, 2, 3, 9, 13, 0, 0])

SEMANTIC_FLOW = [
    Case(sf.euler_algorithm, lambda dt: (sf.make_sigmas(4), jnp.zeros(2)),
         call=lambda fn, sig, x0: core.run((a := fn(lambda x, s, c: x - 2.0, sig)).step, a.init(x0), key(0), 4)),
    Case(sf.euler_sample, lambda dt: (jnp.array([0.0, 1.0]), sf.make_sigmas(50)),
         call=lambda fn, x, sig: fn(lambda x, s, c: x - 2.0, x, sig)),
    Case(sf.make_probes, lambda dt: (_mmdit(), jnp.zeros((8, 8, 3))),
         call=lambda fn, model, ref: fn(model, _TOKENS, (0, 1), ref)),
    Case(sf.make_sigmas, lambda dt: (dt,), call=lambda fn, dt: fn(4, shift=3.0, dtype=dt)),
    Case(sf.rf_loss, lambda dt: (jnp.full((256, 2), 3.0),),
         call=lambda fn, x: fn(lambda xs, s, c: -jnp.full_like(xs, 3.0), key(0), x),
         rtol=0.1, why="sigma and the noise are drawn in the data's dtype: E eps^2 = 1 over 512 draws"),
    Case(sf.semanticflow_algorithm, lambda dt: (_mmdit(), sf.make_sigmas(4), jnp.zeros((8, 8, 3)),
                                                normal(1, (8, 8, 3))),
         call=lambda fn, model, sig, ref, x0: core.run(
             (a := fn(model, sig, _TOKENS, ref, sf.make_probes(model, _TOKENS, (0, 1), ref),
                      sf.SemanticFlowConfig(blocks=(0,), rho=0.5))).step, a.init(x0), key(2), 4),
         atol=1e-5, why="4 Euler steps of a transformer with 2 guided (gradient) updates: 2e-6 off on O(1) pixels"),
    Case(sf.semanticflow_sample, lambda dt: (_mmdit(), sf.make_sigmas(4), jnp.zeros((8, 8, 3)),
                                             normal(1, (8, 8, 3))),
         call=lambda fn, model, sig, ref, x0: fn(model, x0, sig, _TOKENS, ref,
                                                 sf.make_probes(model, _TOKENS, (0, 1), ref),
                                                 sf.SemanticFlowConfig(blocks=(0,), rho=0.5)),
         atol=1e-5, why="4 Euler steps of a transformer with 2 guided (gradient) updates: 2e-6 off on O(1) pixels"),
]

KERNELS = [
    Case(kern.gram, lambda dt: (normal(0, (5, 2)),), call=lambda fn, X: fn(X, lengthscale=1.0)),
    Case(kern.ksd, lambda dt: (normal(0, (50, 2)),), call=lambda fn, X: fn(X, None, -X, lengthscale=1.0)),
    Case(kern.mmd2, lambda dt: (normal(0, (50, 2)), normal(1, (50, 2), loc=1.0)),
         call=lambda fn, X, Y: fn(X, None, Y, None, lengthscale=1.0)),
    Case(kern.sqdist, lambda dt: (jnp.array([[0.0, 0.0], [3.0, 4.0]]),)),
]


def _threshold_ps(K, n):
    return jnp.asarray(cwr.threshold_distributions(0, K, 0.2, n))


CWR = [
    Case(cwr.calibration_report, lambda dt: (_threshold_ps(4, 4),),
         call=lambda fn, ps: fn("cwr2d", 4, 0.2, ps, num_steps=50, restarts=1),
         pick=lambda rep: (rep.link_errors,), why="a minimiser per distribution: the decisions it links to"),
    Case(cwr.cwr2d_lattice_report, lambda dt: (_threshold_ps(5, 8),),
         call=lambda fn, ps: fn(5, 0.2, ps),
         pick=lambda rep: (rep.link_errors,), why="a lattice argmin per distribution: the decisions it links to"),
    Case(cwr.cwr2d_loss, lambda dt: (jnp.array([[2.0, 0.0], [2.5, 1.0], [0.3, 0.2]]),),
         call=lambda fn, u: fn(u, jnp.array([1, 1, 0]), c=0.2)),
    Case(cwr.fit, lambda dt: (normal(0, (64, 2)), cwr.make_scorer(key(2), 2, 2)),
         call=lambda fn, X, model: fn(key(1), model, X,
                                      (X[:, 0] > 0).astype(jnp.int32) + (X[:, 1] > 1).astype(jnp.int32),
                                      cwr.surrogate("cwr2d", K=3, c=0.2).loss, num_steps=10, batch_size=16),
         x64_off=_RANDINT_BATCHES),
    Case(cwr.minimizer_algorithm, lambda dt: (jnp.zeros(2),),
         call=lambda fn, u0: core.run((a := fn(lambda u: jnp.sum((u - 1.0) ** 2), optax.adam(0.1))).step,
                                      a.init(u0), key(0), 50),
         rtol=1e-3, atol=1e-5, why="50 Adam steps to u = 1: the last steps move by the normalised rounding "
                                   "noise of a vanishing gradient (8e-6 off with x64 off)"),
    Case(cwr.surrogate, lambda dt: (jnp.array([[3.0, 0.0], [7.4, 2.0]]),),
         call=lambda fn, u: (s := fn("cwr2d", K=50, c=0.2), s.loss(u, jnp.array([2, 6])), s.link(u))[1:]),
]

def _ws():  # the teacher's w_1, w_2 (built in the inputs: a module-level array would follow the import's x64 mode)
    return jnp.array([[0.6, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8]])


def _msim(links=("tanh", "linear")):
    return ms.MSIMConfig(4, 2, links)


MULTISCALE = [
    Case(ms.online_sgd_algorithm, lambda dt: (_ws(),),
         call=lambda fn, ws: core.run((a := fn(ws, _msim(), 0.05)).step, a.init(key(1)), key(2), 20),
         pick=dtypes_only, why="online SGD draws fresh samples in the teacher's dtype: dtypes and shapes"),
    Case(ms.run_online_sgd, lambda dt: (_ws(),),
         call=lambda fn, ws: fn(key(1), ws, _msim(), 40, ms.lr_schedule(4, 0.3, 20, 0.2), record_every=20),
         pick=dtypes_only, why="online SGD draws fresh samples in the teacher's dtype: dtypes and shapes"),
    Case(ms.sample_data, lambda dt: (_ws(),), call=lambda fn, ws: fn(key(1), ws, 2000, _msim()),
         pick=lambda o: (jnp.mean(o[1]), jnp.std(o[1])), rtol=0.1, atol=0.05,
         why="the features are drawn in the teacher's dtype: the labels' mean and std over 2000 draws"),
    Case(ms.spherical_sgd_algorithm, lambda dt: (*ms.sample_data(key(1), _ws(), 50, _msim()), ms.sgd_init(key(2), 4)),
         call=lambda fn, X, Y, start: (dtypes_only((a := fn(_msim(), ms.lr_schedule(4, 0.3, 25, 0.2))).init(
             key(2), dtype=X.dtype)), core.run(a.step, start, None, xs=(X, Y))),
         why="init draws the start in the default float type: its dtype is compared, the start is an input"),
    Case(ms.unfolding_estimator, lambda dt: (*ms.sample_data(key(1), _ws(), 500, _msim(("linear", "linear"))), _ws()),
         call=lambda fn, X, y, ws: fn(X, y, 4, 2, links=("linear", "linear")),
         pick=lambda w: w * jnp.sign(w[:, :1]), why="the estimate up to the sign of each row (not identifiable)"),
]


def _lds():
    return online.random_lds(key(0), 6)


def _lds_data(n=60, noise=0.01):
    u = normal(1, (n, 1))
    y, _ = online.simulate(key(2), _lds(), u)
    return y[:, 0] + noise * normal(3, (n,)), u


ONLINE = [
    Case(online.ogd_algorithm, lambda dt: (dt, (normal(0, (50, 3)), normal(0, (50, 3)) @ jnp.array([1.0, -0.5, 0.25]))),
         call=lambda fn, dt, xs: core.run((a := fn(optax.sgd(0.05), radius=10.0)).step, a.init(3, dtype=dt), None,
                                          xs=xs)),
    Case(online.random_lds, lambda dt: (dt,), call=lambda fn, dt: dtypes_only(fn(key(0), 6, eigs="arc", max_arg=0.5,
                                                                                 dtype=dt)),
         why="the system is drawn in the requested dtype (other numbers for float32): dtypes only"),
    Case(online.simulate, lambda dt: (_lds(), normal(1, (100, 1))),
         call=lambda fn, p, u: fn(key(2), p, u),
         rtol=1e-3, why="100 steps of a marginally stable system (eigenvalues 1, 0.999): 7e-5 off"),
    Case(online.spectral_ogd_run, lambda dt: _lds_data(),
         call=lambda fn, y, u: fn(y, u, optax.sgd(1e-2), L=16, k=4), pick=lambda o: o[1],
         why="the Hankel filters are eigenvectors, of arbitrary sign (float32 and float64 eigh flip some): the "
             "predictions and losses, not the weights"),
    Case(online.usp_vaw_algorithm, lambda dt: (jnp.cumsum(normal(0, (64, 1))[:, 0]) * 0.1, normal(0, (64, 1))),
         call=lambda fn, y, u: core.run((a := fn(1.0)).step,
                                        a.init((xs := online.usp_stream(y, u, n=2, mode="precondition"))[0].shape[1],
                                               dtype=xs[0].dtype), None, xs=xs),
         pick=lambda o: (o[1], o[0].b),
         why="method='auto' keeps the inverse in float64 and the Gram in float32: the infos and b"),
    Case(online.usp_vaw_run, lambda dt: _lds_data(),
         call=lambda fn, y, u: fn(y, u, n=4, lam=1.0), pick=lambda o: (o[1], o[0].b),
         why="method='auto' keeps the inverse in float64 and the Gram in float32: the infos and b"),
    Case(online.vaw_algorithm, lambda dt: (dt, (normal(0, (50, 3)), normal(0, (50, 3)) @ jnp.array([1.0, -0.5, 0.25])
                                                + 0.1 * normal(1, (50,)))),
         call=lambda fn, dt, xs: core.run((a := fn(1.0)).step, a.init(3, dtype=dt), None, xs=xs),
         pick=lambda o: (o[1], o[0].b),
         why="method='auto' keeps the inverse in float64 and the Gram in float32: the infos and b"),
]


def _quad(x):
    return 0.5 * jnp.sum(jnp.arange(1.0, 4.0, dtype=x.dtype) * x**2)


DENOISE = [
    Case(dn.denoised_optimizer_algorithm, lambda dt: (jnp.ones(3),),
         call=lambda fn, x0: core.run((a := fn(_quad, dn.disk(), optax.sgd(0.1), lambda k, p: 0.0 * p)).step,
                                      a.init(x0), key(0), 20),
         why="a zero noise_fn: the Gaussian noise is drawn in the parameters' dtype"),
    Case(dn.disk, lambda dt: (jnp.ones(3),),
         call=lambda fn, p: (tx := optax.chain(fn(kappa=0.7, gamma=0.5), optax.sgd(0.1)),
                             tx.update(2 * p, tx.init(p), p))[1]),
    Case(dn.dp_run, lambda dt: (normal(0, (64, 2), loc=1.0), jnp.zeros(2)),
         call=lambda fn, data, p0: fn(key(1), lambda p, x: jnp.sum((p - x) ** 2), p0, data, dn.ema(0.5),
                                      optax.sgd(0.1), l2_clip=1.0, noise_multiplier=0.0, sample_rate=0.25,
                                      num_steps=10, max_batch=32),
         x64_off="draws its Poisson batches from uniforms in the default float type"),
    Case(dn.quadratic_mle, lambda dt: (normal(0, (50, 2)), normal(0, (50, 2)) @ jnp.array([[2.0, 0.5], [0.5, 1.0]])
                                       + jnp.array([1.0, -1.0]) + 0.1 * normal(1, (50, 2))),
         call=lambda fn, xs, gs: fn(xs, gs, symmetric=True)),
    Case(dn.rls_algorithm, lambda dt: (dt, (normal(0, (30, 2)), normal(0, (30, 2)) @ jnp.array([[2.0, 0.5],
                                                                                                [0.5, 1.0]]) + 1.0)),
         call=lambda fn, dt, xs: core.run((a := fn(1e-3)).step, a.init(2, dtype=dt), None, xs=xs),
         rtol=2e-3, atol=1e-4, why="30 rank-one updates of an inverse with ridge 1e-3: early steps are "
                                   "ill-conditioned"),
    Case(dn.run, lambda dt: (jnp.ones(3),),
         call=lambda fn, x0: fn(key(0), _quad, x0, dn.igt(dn.harmonic()), optax.sgd(0.1), lambda k, p: 0.0 * p, 20,
                                thin=10),
         why="a zero noise_fn: the Gaussian noise is drawn in the parameters' dtype"),
    Case(dn.two_point, lambda dt: (jnp.cumsum(jnp.full((20, 2), 0.05), axis=0), 0.1 * normal(0, (20, 2, 2))),
         call=lambda fn, xs, noise: dn.track(jax.grad(lambda x: jnp.sum(x**3) / 3), xs, fn(dn.harmonic()), noise),
         ),
]

_QCFG = qm.QNNConfig(n_qubits=1, n_layers=2)


def _qx():
    return qm.grid(8)


QUANTUM = [
    Case(qm.fit, lambda dt: (qm.init_qnn_params(key(0), _QCFG), _qx()),
         call=lambda fn, p, x: fn(core.train_init(p, optax.sgd(0.1)), x, 0.4 * jnp.cos(x), _QCFG, optax.sgd(0.1),
                                  num_steps=10, record_every=5, freqs=(1,))),  # SGD: see snn.fit
    Case(qm.fit_algorithm, lambda dt: (_qx(), qm.init_qnn_params(key(0), _QCFG)),
         call=lambda fn, x, p: core.run((a := fn(x, 0.4 * jnp.cos(x), _QCFG, optax.sgd(0.1), freqs=(1,))).step,
                                        a.init(p), key(1), 10)),
    Case(qm.linearized_residual, lambda dt: ((J := normal(0, (5, 3))) @ J.T, jnp.ones(5), jnp.array([0.0, 1.0, 10.0])),
         call=lambda fn, G, r0, t: fn(G, r0, 0.1, t),
         rtol=1e-3, atol=1e-5, why="exp(-eta t G) through an eigendecomposition (7e-7 off)"),
    Case(qm.qnn_apply, lambda dt: (qm.init_qnn_params(key(0), qm.QNNConfig(n_qubits=2, n_layers=2, scales="binary")),
                                   jnp.linspace(0.0, 6.0, 5)),
         call=lambda fn, p, x: jax.vmap(fn, (None, 0, None))(p, x, qm.QNNConfig(n_qubits=2, n_layers=2,
                                                                                scales="binary"))),
]


def _ald_sched(L=10, k=2):
    return lg.ald_default_schedule(L=L, k=k)


LANGEVIN = [
    Case(lg.ald_algorithm, lambda dt: (*_ald_sched(), normal(0, (1000, 2))),
         call=lambda fn, ts, hs, ks, th: core.run((a := fn(lambda theta, t: -theta, ts, hs, ks)).step, a.init(th),
                                                  key(1), 10)[0].particles,
         pick=lambda p: (jnp.mean(p, 0), jnp.var(p, 0)), rtol=0, atol=0.15,
         why="the Langevin noise is drawn in the particles' dtype: mean and variance of 1000 particles "
             "(Monte Carlo error ~0.05)"),
    Case(lg.ald_w2_bound, lambda dt: (jnp.full(4, 0.5), jnp.ones(4), jnp.full(4, 2.0), jnp.full(4, 0.01),
                                      jnp.full(4, 50)),
         call=lambda fn, W, m, M, hs, ks: fn(W, m, M, hs, ks, d=2)),
    Case(lg.annealed_langevin, lambda dt: (normal(0, (1000, 2)), *_ald_sched()),
         call=lambda fn, th, ts, hs, ks: fn(key(1), th, lambda theta, t: -theta, ts, hs, ks),
         pick=lambda p: (jnp.mean(p, 0), jnp.var(p, 0)), rtol=0, atol=0.15,
         why="the Langevin noise is drawn in the particles' dtype: mean and variance of 1000 particles "
             "(Monte Carlo error ~0.05)"),
    Case(lg.dsm_loss, lambda dt: (normal(0, (1024, 2)),),
         call=lambda fn, th: fn(lambda theta, x, t: jnp.zeros_like(theta), key(1), th, th, alpha_fn=lg.vp_alpha),
         rtol=0.1, why="times and noise are drawn in the data's dtype: E||eps||^2 = 2 over 2048 draws"),
    Case(lg.make_composite_score, lambda dt: (jnp.ones((3, 2)), jnp.zeros(2)),
         call=lambda fn, xs, th: fn("geffner", lambda theta, t: -theta, lambda theta, x, t: -(theta - x), xs)(th, 0.5)),
    Case(lg.tune, lambda dt: (lambda L: (jnp.full(L, 1.0 / L, dt), jnp.ones(L, dt), jnp.full(L, 3.0, dt), 0.0),),
         call=lambda fn, problem: fn(problem, 2, 0.5, num_levels=8, max_doublings=2)),
    Case(lg.tune_ald, lambda dt: (jnp.full(10, 0.3), jnp.ones(10), jnp.full(10, 3.0)),
         call=lambda fn, W, m, M: fn(W, m, M, 2, 0.0, target=0.5)),
    Case(lg.ula_algorithm, lambda dt: (jnp.zeros((2000, 2)),),
         call=lambda fn, th: (a := fn(lambda theta: -theta, step_size=0.1)).step(key(0), a.init(th))[0].position,
         pick=lambda p: (jnp.mean(p), jnp.var(p)), rtol=0, atol=0.03,
         why="the Langevin noise is drawn in the particles' dtype: one step's mean and variance (0.2) over 4000 "
             "draws"),
    Case(lg.ula_run, lambda dt: (jnp.zeros((500, 1)),),
         call=lambda fn, th: fn(key(0), th, lambda t: -2.0 * t, 0.1, 50)[0].position,
         pick=lambda p: jnp.var(p), rtol=0.1,
         why="the Langevin noise is drawn in the particles' dtype: the stationary variance over 500 chains"),
]


def _gauss_est():
    return mp.gaussian_estimator(jnp.array([1.0, -1.0]), jnp.eye(2))


MSIP = [
    Case(mp.gradient_informed_estimator, lambda dt: (jnp.ones((4, 2)), gauss_hermite(3, 2)),
         call=lambda fn, Y, rule: jax.jit(fn(lambda x: -0.5 * jnp.sum(x**2), quadrature=rule))(key(0), Y, 0.5)),
    # (a Gauss-Hermite rule: the random rules draw their nodes in the particles' dtype)
    Case(mp.mean_shift, lambda dt: (_gauss_est(), jnp.zeros(2)),
         call=lambda fn, est, y0: fn(key(0), y0, est, num_steps=20, lengthscale=1.0)),
    Case(mp.msip, lambda dt: (3.0 * jax.random.normal(key(0), (16, 2)),),  # the docstring's start
         call=lambda fn, Y0: fn(key(1), Y0, mp.fredholm_estimator(mp.benchmarks.gmm().log_density, gamma=0.9),
                                num_steps=3, step_size=0.5, lengthscale=0.5)[0].particles,
         rtol=0, atol=1e-2, why="3 steps through an N x N Gram solve with jitter 1e-7 (two close particles): "
                                "float32 keeps ~3 digits, 3e-3 off"),
    Case(mp.msip_algorithm, lambda dt: (normal(0, (8, 2)),),
         call=lambda fn, Y0: jax.jit((a := fn(mp.gaussian_estimator(jnp.zeros(2, Y0.dtype), jnp.eye(2, dtype=Y0.dtype)),
                                              step_size=0.5)).step)(key(2), a.init(Y0, key(1)))[0],
         atol=1e-5, why="one step through an N x N Gram solve with jitter 1e-7 (1e-6 off)"),
    Case(mp.optimal_weights, lambda dt: ((Y := normal(0, (6, 2))), -0.5 * jnp.sum(Y**2, axis=1) / (1 + 0.8**2)),
         call=lambda fn, Y, lv: fn(Y, lv, lengthscale=0.8),
         atol=1e-5, why="a Gram solve with jitter 1e-7 (4e-7 off)"),
    Case(mp.wfr_vector_field, lambda dt: (normal(0, (5, 2)), jnp.full(5, 0.2)),
         call=lambda fn, Y, w: jax.jit(lambda Y, w: fn(0.0, (Y, w), mp.WFRArgs(
             mp.gaussian_estimator(jnp.zeros(2, Y.dtype), jnp.eye(2, dtype=Y.dtype)), lengthscale=0.7)))(Y, w)),
]


def _chin():
    X = sc.covariates(*sc.factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
    return X, sc.chinchilla_log_loss(sc.HOFFMANN_2022, X)


_HOFF = sc.HOFFMANN_2022  # float64 numpy constants: an input like the others (rounded for the float32 run)


def _theta0():
    return sc.ChinchillaParams(*jnp.array([5.0, 5.0, 0.3, 0.3, 0.3]))


SCALING = [
    Case(sc.asymptotic_covariance, lambda dt: (_HOFF, *_chin(), 0.01 * normal(0, (9,))),
         call=lambda fn, p, X, logL, noise: jnp.sqrt(jnp.diag(fn("chinchilla", p, X, logL + noise))),
         rtol=1e-3, why="an inverse of J^T J with condition ~5e6 (the library warns in float32): 2e-6 off here"),
    Case(sc.bfgs_algorithm, lambda dt: (*_chin(), _theta0()),
         call=lambda fn, X, logL, th: core.run((a := fn("chinchilla", X, logL)).step, a.init(th), key(0),
                                               5)[1].infos.value),
    Case(sc.fit_bfgs, lambda dt: (_theta0(), *_chin()),
         call=lambda fn, th, X, logL: fn("chinchilla", th, X, logL, delta=None).theta),
    Case(sc.is_well_conditioned, lambda dt: sc.factorial_design(jnp.logspace(8, 10, 9), jnp.array([5.0, 20.0, 80.0])),
         call=lambda fn, N, D: fn(N, D, 0.34, 0.36, kappa_max=100.0)),
    Case(sc.lbfgs_algorithm, lambda dt: (*_chin(), _theta0()),
         call=lambda fn, X, logL, th: core.run((a := fn("chinchilla", X, logL)).step, a.init(th), key(0),
                                               5)[1].infos.value),
    Case(sc.lm_algorithm, lambda dt: (*_chin(), _theta0()),
         call=lambda fn, X, logL, th: core.run((a := fn("chinchilla", X, logL, huber_delta=1e-3)).step, a.init(th),
                                               key(0), 10)[0].theta),
    Case(sc.lm_solve, lambda dt: (_theta0(), *_chin()),
         call=lambda fn, th, X, logL: fn("chinchilla", th, X, logL, max_steps=50).theta),
    Case(sc.loss, lambda dt: (_HOFF, jnp.asarray(70e9), jnp.asarray(1.4e12)),
         call=lambda fn, p, N, D: fn("chinchilla", p, N, D)),
    Case(sc.scale_block_condition_number, lambda dt: sc.factorial_design(jnp.logspace(8, 10, 9),
                                                                         jnp.array([5.0, 20.0, 80.0])),
         call=lambda fn, N, D: fn(N, D, 0.34, 0.36)),
]


def _cost():
    return tr.StepCostModel(alpha=jnp.array([2.0, 10.0]), beta=jnp.array([0.05, 0.4]))


def _decoders():
    return [tr.TinyDecoder(k, num_layers=1, d_model=8, num_heads=1, vocab=8, max_len=8, dtype=jnp.float64)
            for k in jax.random.split(key(0))]


TOKEN_ROUTER = [
    Case(tr.TokenRouterEngine, lambda dt: (_decoders(),),
         call=lambda fn, models: fn(models, tr.table_router(np.random.default_rng(0).integers(0, 2, size=(3, 8))),
                                    n_slots=2, batch_threshold=2, token_buckets=(4,)).run(
             [[1, 2], [3, 4], [5, 6]], max_new_tokens=2)[0]),
    Case(tr.confidence_router, lambda dt: (jnp.array([[4.0, 0.0, 0.0], [0.5, 0.4, 0.3]]),),
         call=lambda fn, logits: fn(logits, tau=0.6)),
    Case(tr.derive_delayed_batching, lambda dt: (_cost(),), call=lambda fn, cost: fn(cost, q_large=0.2, n_requests=32)),
    Case(tr.fit_step_cost, lambda dt: (jnp.array([1.0, 2.0, 4.0, 8.0]), jnp.array([2.1, 2.2, 2.4, 2.8]))),
    Case(tr.simulate, lambda dt: (_cost(),),
         call=lambda fn, cost: fn("async_delayed", cost, tr.bernoulli_sim_router(0.2), n_requests=8, n_tokens=100)),
    Case(tr.throughput_separate, lambda dt: (_cost(), jnp.array([0.8, 0.2])),
         call=lambda fn, cost, v: fn(cost, v, n_requests=32, exclusive=True)),
]


def _snn_model():
    return snn.make_model(key(0), image_size=4, channels=(2, 2), num_steps=2)[0]


def _snn_state(dtype):
    """The batch-norm state, made when it is used: its int counter follows the x64 mode, not the builder's."""
    return cast(snn.make_model(key(0), image_size=4, channels=(2, 2), num_steps=2)[1], dtype)


SNN = [
    Case(snn.dsn_algorithm, lambda dt: (dt, 0.3 + 0.8 * normal(0, (8, 16))),
         call=lambda fn, dt, xs: core.run((a := fn(snn.DSNParams(v_dormant=-0.05))).step,
                                          jax.tree_util.tree_map(lambda v: v.astype(dt), a.init((16,))), None, xs=xs)),
    Case(snn.dsn_scan, lambda dt: (0.3 + 0.8 * normal(0, (8, 16)),),
         call=lambda fn, xs: fn(snn.DSNParams(v_dormant=-0.05), xs)),
    Case(snn.energy_pj, lambda dt: (jnp.asarray(1000.0), jnp.asarray(5000.0))),
    Case(snn.fit, lambda dt: (_snn_model(), uniform(1, (8, 1, 4, 4))),
         call=lambda fn, model, x: fn(key(2), model, _snn_state(x.dtype), x, jnp.arange(8) % 10, epochs=1,
                                      batch_size=4, optimizer=optax.sgd(0.1)),
         # SGD, not Adam: Adam's first step is lr * sign(g), and a gradient that is 0 in exact arithmetic (a
         # spiking net, a symmetric circuit) has the sign of its rounding noise: +-lr apart in float32
         x64_off="shuffles with jax.random.permutation in the default int type"),
    Case(snn.sop_dense, lambda dt: (jnp.array([[[1.0, 0.0, 1.0]]]), jnp.array([[[1.0, 0.0]]]))),
    Case(snn.train_algorithm, lambda dt: (_snn_model(), uniform(1, (4, 1, 4, 4))),
         call=lambda fn, model, x: jax.jit((a := fn(model, optax.sgd(0.1))).step)(
             None, a.init(model, _snn_state(x.dtype)), (x, jnp.array([0, 1, 2, 3])))),  # SGD: see fit
]


def _bt_env(dt):
    return tos.BTEnv(lambda k: (jnp.zeros(1, dt), jnp.zeros(1, dt)),
                     lambda k, s, u: (s + 0.5 * u[:1], s + 0.5 * u[:1], 0.0, jnp.asarray(False), {}),
                     lambda s: {"At": s[0] >= 1.0})


def _go(d_g=1):
    return tos.Skill(lambda o, g, m: jnp.ones(1), tos.goal_spec(d_g, 1), 3, lambda s: s[0] >= 1.0)


def _reach_env(dt):
    def reset(k):
        x = jax.random.uniform(k, (1,), dt, minval=-1.0, maxval=1.0)
        return x, x, jnp.zeros(1, x.dtype), jnp.zeros(1, x.dtype)

    def step(k, x, u, goal, mask):
        x = x + 0.1 * u
        return x, x, -jnp.abs(x[0]), jnp.abs(x[0]) < 0.05, jnp.abs(x[0]) < 0.05

    return tos.SkillEnv(reset, step)


TREE_OF_SKILL = [
    Case(tos.guiding_algorithm, lambda dt: (_bt_env(dt), tos.GuidingNet(key(0), obs_dim=1, d_g=1, width=4, depth=1)),
         call=lambda fn, env, guide: fn(env, _go(), _go(), guide, tos.GuideConfig(batch=4)).init(guide)),
    Case(tos.masked_goal, lambda dt: (jnp.array([0.25, 0.5]),), call=lambda fn, g: fn(g, tos.goal_spec(1, 2), 1)),
    Case(tos.ppo_algorithm, lambda dt: (_reach_env(dt), tos.SkillPolicy(key(0), obs_dim=1, action_dim=1, d_g=1,
                                                                         width=4, depth=1)),
         call=lambda fn, env, pol: fn(env, pol, tos.PPOConfig(num_envs=4, num_steps=8, num_minibatches=2)
                                  ).init(key(1), pol),
         pick=lambda s: (dtypes_only(s), s.goal), why="the reset draws the start in its dtype: dtypes and goals"),
    Case(tos.run_tos_episode, lambda dt: (jnp.ones(1),),
         call=lambda fn, one: fn(key(0), tos.behavior_tree.bt_expand(
             ("At",), [tos.behavior_tree.Action("Go", add=frozenset({"At"}))], set()),
             {"Go": tos.Skill(lambda o, g, m: one, tos.goal_spec(0, 1), 3, lambda s: s[0] >= 1.0)}, {}, set(),
             tos.BTEnv(reset=lambda k: (jnp.zeros_like(one), jnp.zeros_like(one)),
                       step=lambda k, s, u: (s + 0.5 * u, s + 0.5 * u, 0.0, jnp.asarray(False), {}),
                       literals=lambda s: {"At": s[0] >= 1.0}), num_episodes=2)),
    Case(tos.train_guiding, lambda dt: (_bt_env(dt), tos.GuidingNet(key(0), obs_dim=1, d_g=1, width=4, depth=1)),
         call=lambda fn, env, guide: fn(key(1), env, _go(), _go(), guide, tos.GuideConfig(num_updates=2, batch=2)),
         pick=dtypes_only, why="the guide's goals are drawn in its dtype: dtypes and shapes"),
]


CASES: dict[str, list[Case]] = {
    "alignment": ALIGNMENT,
    "attention.pe_spread": PE,
    "core": CORE,
    "eval.facts": FACTS,
    "forecasting": FORECASTING,
    "generative.active_scene": ACTIVE,
    "generative.flow_agent": FLOW_AGENT,
    "generative.semantic_flow": SEMANTIC_FLOW,
    "kernels": KERNELS,
    "losses.cwr": CWR,
    "multiscale": MULTISCALE,
    "online": ONLINE,
    "optim.denoise": DENOISE,
    "quantum": QUANTUM,
    "sampling.langevin": LANGEVIN,
    "sampling.msip": MSIP,
    "scaling": SCALING,
    "serving.token_router": TOKEN_ROUTER,
    "snn": SNN,
    "agents.tree_of_skill": TREE_OF_SKILL,
}
CASE_IDS: dict[str, Case] = {f"{area}.{c.fn.__name__}": c for area, cs in CASES.items() for c in cs}

# The default run: the cheapest cases of every area (each run of a case compiles its own programs: the float64
# run, the float32 run and the x64-off run take ~1-3 s together on the project's 2-core machine for these, up to
# ~50 s for a training loop). The other cases are marked slow: ``pytest -m slow`` runs them (the whole sweep).
QUICK = frozenset({
    "agents.tree_of_skill.masked_goal", "agents.tree_of_skill.run_tos_episode", "alignment.max_gain_at_kl",
    "alignment.proxy_gaps", "attention.pe_spread.sinusoidal_pe", "attention.pe_spread.spread", "core.gather",
    "core.make_train_step", "core.run", "core.sharded_vmap", "eval.facts.shortform_metrics",
    "forecasting.ef_forecast", "generative.active_scene.raycast", "generative.flow_agent.ode_algorithm",
    "generative.flow_agent.ode_sample", "generative.semantic_flow.euler_algorithm",
    "generative.semantic_flow.make_sigmas", "kernels.mmd2", "kernels.sqdist", "losses.cwr.calibration_report",
    "losses.cwr.cwr2d_lattice_report", "losses.cwr.cwr2d_loss", "losses.cwr.minimizer_algorithm",
    "multiscale.sample_data", "online.ogd_algorithm", "optim.denoise.denoised_optimizer_algorithm",
    "optim.denoise.disk", "optim.denoise.quadratic_mle", "quantum.qnn_apply",
    "sampling.langevin.make_composite_score", "sampling.langevin.ula_run", "sampling.msip.mean_shift",
    "scaling.loss", "scaling.scale_block_condition_number", "serving.token_router.confidence_router",
    "serving.token_router.derive_delayed_batching", "serving.token_router.fit_step_cost",
    "serving.token_router.simulate", "serving.token_router.throughput_separate", "snn.dsn_scan", "snn.energy_pj",
    "snn.sop_dense",
})


# ----------------------------------------------------------------------------------------------------------------
# the tests
# ----------------------------------------------------------------------------------------------------------------


def _params():
    def marks(cid, c):
        return ([pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []) + (
            [] if cid in QUICK else [pytest.mark.slow])

    return [pytest.param(cid, id=cid, marks=marks(cid, c)) for cid, c in CASE_IDS.items()]


class X64Off:
    """The x64-off float32 runs, from one subprocess per pytest run (shared by the xdist workers).

    The first process to claim the output directory starts ``float32_sweep_worker.py`` on the selected cases; it
    writes one result file per case as it goes, in table order, so a test waits only for its own case.
    """

    def __init__(self, out: pathlib.Path, ids: list[str]):
        self.out, self.proc = out, None
        try:
            os.close(os.open(out / "claimed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return  # another xdist worker of this run started it
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
        # x64 off; XLA's cheaper CPU compilation (the worker compiles every case once, and runs each for little)
        env.update(JAX_PLATFORMS="cpu", JAX_ENABLE_X64="0",
                   XLA_FLAGS="--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true")
        with open(out / "log.txt", "w") as log:
            self.proc = subprocess.Popen([sys.executable, str(WORKER), str(out), *ids], env=env, cwd=ROOT,
                                         stdout=log, stderr=subprocess.STDOUT)

    def result(self, cid: str, timeout: float = 1200.0):
        path, done = self.out / f"{cid}.pkl", self.out / "done"
        deadline = time.monotonic() + timeout
        while not path.exists():
            if done.exists() or (self.proc is not None and self.proc.poll() is not None) \
                    or time.monotonic() > deadline:
                time.sleep(0.5)  # a last look: the file may have landed with the exit
                if path.exists():
                    break
                log = (self.out / "log.txt").read_text()[-4000:] if (self.out / "log.txt").exists() else ""
                pytest.fail(f"the x64-off worker gave no result for {cid}:\n{log}")
            time.sleep(0.1)
        with open(path, "rb") as f:
            return pickle.load(f)

    def close(self):
        if self.proc is not None:
            try:
                self.proc.wait(timeout=1200)  # the other xdist workers may still read its files
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def x64_off(request, tmp_path_factory):
    ids = [item.callspec.params["cid"] for item in request.session.items
           if getattr(item, "originalname", None) == "test_float32"]
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's directory, shared by its workers
    out = base / "float32_sweep_x64_off"
    out.mkdir(exist_ok=True)
    runs = X64Off(out, ids)
    yield runs
    runs.close()


def _check(where: str, cid: str, lv32, lv64) -> None:
    case = CASE_IDS[cid]
    assert not wrong_dtypes(lv32, F32), f"{where}: float32 inputs gave {wrong_dtypes(lv32, F32)}"
    try:
        if where == "x64 off" and case.x64_off:
            compare_shapes(lv32, lv64)
        else:
            errors = compare(lv32, lv64, case.rtol, case.atol)
            if os.environ.get("FLOAT32_SWEEP_ERRORS"):  # a file to append the measured errors to (the table's audit)
                with open(os.environ["FLOAT32_SWEEP_ERRORS"], "a") as f:
                    f.write(f"{cid}\t{where}\t{case.rtol}\t{case.atol}\t{errors[0]:.3g}\t{errors[1]:.3g}\n")
    except AssertionError as e:
        raise AssertionError(f"{where}: the float32 run differs from the float64 run\n{e}") from None


def test_x64_is_on_in_this_process():
    assert jnp.zeros(()).dtype == jnp.float64


@pytest.mark.parametrize("cid", _params())
def test_float32(cid, x64_off):
    """Float64 and float32 runs with x64 on (here), and the float32 run with x64 off (the worker)."""
    case = CASE_IDS[cid]
    lv64 = leaves(case.run(F64))
    assert not wrong_dtypes(lv64, F64), f"float64 inputs gave {wrong_dtypes(lv64, F64)}"
    _check("x64 on", cid, leaves(case.run(F32)), lv64)
    status, value = x64_off.result(cid)
    assert status == "ok", f"x64 off: the float32 run failed:\n{value}"
    _check("x64 off", cid, value, lv64)


def _entry_points() -> dict[int, tuple[str, Callable]]:
    spec = importlib.util.spec_from_file_location("check_docstrings", ROOT / "tools" / "check_docstrings.py")
    chk = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("check_docstrings", chk)
    spec.loader.exec_module(chk)
    found = {}
    for pkg in chk.public_packages():
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            doc = inspect.getdoc(obj) if getattr(obj, "__doc__", None) else None
            if callable(obj) and doc and "Example:" in doc:
                found.setdefault(id(obj), (f"{pkg}.{name}", obj))
    return found


def test_every_entry_point_is_in_the_table():
    entry = _entry_points()
    fns = [c.fn for cs in CASES.values() for c in cs]
    cased, out = {id(f) for f in fns}, {id(f) for f in OUT_OF_SCOPE}
    assert len(cased) == len(fns), "an entry point has two cases"
    assert not cased & out, "an entry point is both a case and out of scope"
    missing = sorted(name for i, (name, _) in entry.items() if i not in cased | out)
    assert not missing, f"entry points with neither a case nor an out-of-scope reason: {missing}"
    stale = sorted(f.__name__ for f in [*fns, *OUT_OF_SCOPE] if id(f) not in entry)
    assert not stale, f"table entries that are not entry points (no Example:): {stale}"
    assert all(isinstance(r, str) and r.isidentifier() for r in OUT_OF_SCOPE.values()), "one-word reasons"
    assert QUICK <= set(CASE_IDS), f"QUICK names no case: {sorted(QUICK - set(CASE_IDS))}"
    fast_areas = {cid.rsplit(".", 1)[0] for cid in QUICK}
    assert fast_areas == set(CASES), f"areas without a case in the default run: {sorted(set(CASES) - fast_areas)}"


def test_every_non_default_tolerance_says_why():
    default = Case(len, lambda dt: ())
    for cid, c in CASE_IDS.items():
        if (c.rtol, c.atol) != (default.rtol, default.atol) or c.pick is not None:
            assert c.why, f"{cid}: a tolerance other than the default, or a picked output, needs a reason"
