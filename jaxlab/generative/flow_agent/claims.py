"""Claims of conditional flow matching and FlowAgent, area
``flow_agent``: the Gaussian CFM loss floor ``s pi / 2``, a trained 1-D flow, Sinkhorn vs the exact assignment,
OT-CFM straightness, FlowAgent's decoding margin and Gronwall bound, and the closed-loop comparisons of
FlowAgent with the step-wise baselines (horizon curve, unseen tools).

The trained FlowAgent claims (not quick) use sizes **[chosen]** for a CPU: 40 tools, 12 types, 20k (task, plan)
pairs, 3,000 AdamW steps of batch 256, Euler 20 steps, 500 episodes per setting; the FlowAgent paper is known
only from its abstract, so these compare our reconstruction (:mod:`jaxlab.generative.flow_agent.planner`) with
the paper's qualitative claims and report the measured numbers whatever they are.
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import scipy.optimize

from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.generative import flow_agent as FA
from jaxlab.generative.flow_agent import flow_matching as FM
from jaxlab.generative.flow_agent.evaluation import _task_pools
from jaxlab.generative.flow_agent.papers import FLOW_MATCHING, FLOWAGENT, OT_CFM

TITLE = "Conditional flow matching and FlowAgent: CFM loss floor, minibatch OT, decoding margin, closed-loop agents"
MODULES = ("jaxlab.generative.flow_agent.flow_matching", "jaxlab.generative.flow_agent")

_AREA = "flow_agent"
P_FAILS = (0.0, 0.2, 0.4)
N_EPISODES = 500
HORIZONS = (1, 2, 3, 4, 5, 6)


@claim(area=_AREA, paper=FLOW_MATCHING, quick=True)
def cfm_gaussian_loss_floor() -> ClaimResult:
    """F2-1: the I-CFM loss with the analytic velocity u* from N(0, 1) to N(m, s^2) equals s pi / 2 (any m; here
    m = 3), for s in {0.5, 1, 2}: per s, 50 independent seeds of 2 * 10^4 samples (10^6 in all); their mean lies
    within 4.5 standard errors (SE from the spread of the seeds, about 0.16 % of s pi / 2) of s pi / 2."""
    seeds, n = 50, 20_000
    sigmas = np.array([0.5, 1.0, 2.0])

    @jax.jit
    @jax.vmap
    def loss(key, s):
        k0, k1, k2 = jax.random.split(key, 3)
        x0 = jax.random.normal(k0, (n, 1))
        x1 = 3.0 + s * jax.random.normal(k1, (n, 1))
        return FM.cfm_loss(lambda x, t, c: FM.gaussian_optimal_velocity(x, t, 3.0, s), k2, x0, x1)

    keys = jax.random.split(jax.random.key(0), 3 * seeds)
    s_arg = jnp.repeat(jnp.asarray(sigmas, jnp.result_type(float)), seeds)
    losses = np.asarray(loss(keys, s_arg)).reshape(3, seeds)
    # float32: a seed's loss is a mean of n = 2e4 squared residuals (a tree reduction, <= ~15 roundings of eps32:
    # 2e-6 relative), 10^3 times below one seed's SE (~1.1 %): no allowance needed
    mean, se = mean_and_se(losses.T)
    return ClaimResult.within_se(mean, sigmas * np.pi / 2, se, k=4.5,
                                 details=f"s = 0.5, 1, 2; {seeds} seeds x {n} samples per s")


@claim(area=_AREA, paper=FLOW_MATCHING, quick=False)
def cfm_trained_mlp_reaches_the_floor() -> ClaimResult:
    """F2-2: MLP (2 hidden layers of 64, SiLU, input (x, t)) trained 2,000 AdamW steps (batch 512) on
    N(0, 1) -> N(3, 1); measured = loss on 10^5 fresh samples / (pi / 2) - 1 (accepted: in [-0.01, 0.05]);
    Euler-100 samples must have mean 3 +- 0.05 and std 1 +- 0.05. The learning rate decays from 1e-3 to 0 on a
    cosine over the 2,000 steps (**[chosen]**): at a constant 1e-3 the last iterate keeps Adam's
    step noise and its samples missed (mean 3.092, std 0.953); with the decay, seeds 1 and 2 gave mean
    2.996 / 2.998, std 0.983 / 0.986."""
    model = FM.VelocityMLP((1,), width=64, key=jax.random.key(0))

    def sample(k):
        ka, kb = jax.random.split(k)
        return jax.random.normal(ka, (512, 1)), 3 + jax.random.normal(kb, (512, 1)), None

    model, _ = FM.cfm_fit(jax.random.key(1), model, sample, num_steps=2000,
                          learning_rate=optax.cosine_decay_schedule(1e-3, 2000))
    ka, kb, kc, kd = jax.random.split(jax.random.key(2), 4)
    x0, x1 = jax.random.normal(ka, (100_000, 1)), 3 + jax.random.normal(kb, (100_000, 1))
    excess = float(FM.cfm_loss(model, kc, x0, x1)) / (np.pi / 2) - 1
    xs = jax.jit(jax.vmap(lambda z: FM.ode_sample(model, z, num_steps=100)))(jax.random.normal(kd, (100_000, 1)))
    mean, std = float(jnp.mean(xs)), float(jnp.std(xs))
    ok = -0.01 <= excess <= 0.05 and abs(mean - 3) <= 0.05 and abs(std - 1) <= 0.05
    return ClaimResult(excess, "in [-0.01, 0.05]", 0.05, ok, details=f"samples mean {mean:.4f}, std {std:.4f}")


@claim(area=_AREA, paper=OT_CFM, quick=True)
def sinkhorn_cost_close_to_exact_assignment() -> ClaimResult:
    """F2-3: B = 128, x0 ~ N(0, 1), x1 ~ N(3, 1): the sorted matching equals the Hungarian assignment, and
    log-domain Sinkhorn with eps = 0.01 mean(C), 500 iterations has transport cost sum P*C within 1 % of the
    exact cost (observed 0.6 %); measured = relative excess (eps = 0.05 mean(C) in details, about 3 %)."""
    k0, k1 = jax.random.split(jax.random.key(0))
    x0, x1 = jax.random.normal(k0, (128, 1)), 3 + jax.random.normal(k1, (128, 1))
    C = (x0 - x1.T) ** 2
    # the reference assignment and cost in float64 from the same samples: a float32 cost matrix rounds
    # near-equal assignments together and the Hungarian algorithm may then return another optimum
    C64 = (np.asarray(x0, np.float64) - np.asarray(x1, np.float64).T) ** 2
    _, cols = scipy.optimize.linear_sum_assignment(C64)
    perm = np.asarray(FM.ot_pairing(None, x0, x1, method="exact_1d"))
    exact = float(C64[np.arange(128), cols].sum()) / 128
    if not np.array_equal(perm, cols):
        return ClaimResult(float("nan"), "sorted = Hungarian", 0.0, False, "the sorted matching differs")
    excess = {}
    for rel, iters in ((0.01, 500), (0.05, 500)):
        P, _, _ = FM.sinkhorn_log(C, rel * float(jnp.mean(C)), iters)
        excess[rel] = float(jnp.sum(P * C)) / exact - 1
    return ClaimResult.at_most(excess[0.01], 0.01, details=f"exact cost {exact:.4f}; eps = 0.05 mean(C): excess "
                               f"{excess[0.05]:.4f}; the sorted matching equals the Hungarian assignment")


def _eight_gaussians(key, n):
    kc, kn = jax.random.split(key)
    ang = jax.random.randint(kc, (n,), 0, 8) * (np.pi / 4)
    return 2.0 * jnp.stack([jnp.cos(ang), jnp.sin(ang)], 1) + 0.1 * jax.random.normal(kn, (n, 2))


def _moons(key, n):
    ks, ka, kn = jax.random.split(key, 3)
    a = jax.random.uniform(ka, (n,)) * np.pi
    upper = jax.random.bernoulli(ks, 0.5, (n,))
    x = jnp.where(upper, jnp.cos(a), 1 - jnp.cos(a))
    y = jnp.where(upper, jnp.sin(a), 0.5 - jnp.sin(a))
    return jnp.stack([x - 0.5, y - 0.25], 1) * 1.5 + 0.05 * jax.random.normal(kn, (n, 2))


@claim(area=_AREA, paper=OT_CFM, quick=False)
def ot_cfm_paths_are_straighter() -> ClaimResult:
    """F2-4: 8 Gaussians -> moons (2-D), batch 256, the same MLP (width 64) trained 2,000 steps with the
    independent and the exact-OT coupling; path-length ratio int |v| dt / |x(1) - x(0)| of 1,000 Euler-100
    paths; measured = (ratio_OT - 1) / (ratio_I - 1) (Tong et al.: OT paths are straighter, so < 1)."""
    ratios = {}
    for coupling in ("independent", "ot_exact"):
        model = FM.VelocityMLP((2,), width=64, key=jax.random.key(0))

        def sample(k):
            ka, kb = jax.random.split(k)
            return _eight_gaussians(ka, 256), _moons(kb, 256), None

        model, _ = FM.cfm_fit(jax.random.key(1), model, sample, num_steps=2000, coupling=coupling)
        z = _eight_gaussians(jax.random.key(2), 1000)
        _, traj = jax.jit(jax.vmap(lambda x, m=model: FM.ode_sample(m, x, num_steps=100, return_traj=True)))(z)
        ratios[coupling] = float(jnp.mean(jax.vmap(FM.path_length_ratio)(traj)))
    r_i, r_ot = ratios["independent"], ratios["ot_exact"]
    return ClaimResult.at_most((r_ot - 1) / (r_i - 1), 1.0, details=f"path-length ratio I-CFM {r_i:.4f}, "
                               f"OT-CFM {r_ot:.4f}")


@functools.cache
def _world():
    return FA.make_tool_world(jax.random.key(0))


def _reference_trajectories():
    w = _world()
    s, g = jnp.meshgrid(jnp.arange(w.n_types), jnp.arange(w.n_types), indexing="ij")
    tools, _ = jax.vmap(lambda a, b: FA.reference_plan(w, a, b, FA.K_DEFAULT))(s.ravel(), g.ravel())
    return tools, jax.vmap(lambda p: FA.encode_plan(w, p, FA.K_DEFAULT))(tools)


@claim(area=_AREA, paper=FLOWAGENT, quick=True)
def decoding_margin() -> ClaimResult:
    """(b).4-2: every waypoint of the 144 reference trajectories rotated by an angle alpha = 0.49 theta_min
    (random plane) decodes to the same plan (theta_min: smallest angle between tool and STOP embeddings);
    measured = fraction of unchanged plans (expected 1); at alpha = 2 theta_min errors must appear (details)."""
    w = _world()
    E = np.concatenate([np.asarray(w.emb), np.asarray(w.stop)[None]])
    cos = np.clip(E @ E.T, -1, 1)
    np.fill_diagonal(cos, -1)
    theta_min = float(np.arccos(cos.max()))
    tools, taus = _reference_trajectories()

    @jax.jit
    def unchanged(key, alpha):
        def one(k, t):
            r = jax.random.normal(k, t.shape)
            r = r - jnp.sum(r * t, 1, keepdims=True) * t
            t2 = jnp.cos(alpha) * t + jnp.sin(alpha) * r / jnp.linalg.norm(r, axis=1, keepdims=True)
            return FA.decode_trajectory(t2, w, jnp.ones(w.n_tools, bool))

        dec = jax.vmap(one)(jax.random.split(key, taus.shape[0]), taus)
        return jnp.mean(jnp.all(dec == tools, axis=1))

    inside = float(unchanged(jax.random.key(1), 0.49 * theta_min))
    outside = float(unchanged(jax.random.key(2), 2 * theta_min))
    if outside >= 1.0:
        return ClaimResult(inside, 1.0, 0.0, False, f"no error at alpha = 2 theta_min ({theta_min:.4f} rad)")
    return ClaimResult.close(inside, 1.0, details=f"theta_min = {theta_min:.4f} rad; unchanged at 2 theta_min: "
                             f"{outside:.3f}")


@claim(area=_AREA, paper=FLOWAGENT, quick=True)
def gronwall_endpoint_deviation() -> ClaimResult:
    """(b).4-3: v(x) = x (L = 1) against v(x) + eps: the endpoint deviation at t = 1 is eps (e - 1), which is the
    Gronwall bound eps (e^L - 1) / L with equality; measured = relative error of Euler with 1,000 steps
    (tolerance 1e-3), eps = 1e-2, x(0) = 0.7."""
    eps, x0 = 1e-2, jnp.array([0.7])
    a = FM.ode_sample(lambda x, t, c: x, x0, num_steps=1000)
    b = FM.ode_sample(lambda x, t, c: x + eps, x0, num_steps=1000)
    exact = eps * (np.e - 1)
    return ClaimResult.close(float((b - a)[0]) / exact, 1.0, atol=1e-3,
                             details=f"deviation {float((b - a)[0]):.6e}, eps (e - 1) = {exact:.6e}")


@functools.cache
def _trained():
    w = _world()
    tasks = FA.training_tasks(jax.random.key(1), w, 20000)
    flow, losses = FA.train_flowagent(jax.random.key(2), w, tasks=tasks, return_losses=True)
    step = FA.train_stepwise(jax.random.key(3), w, tasks=tasks)
    cls = FA.train_stepwise(jax.random.key(3), w, tasks=tasks, kind="classify")
    agents = {"flowagent": FA.FlowAgentPlanner(flow, repair=True), "stepwise": FA.StepwiseAgent(step),
              "classifier": FA.StepwiseAgent(cls)}
    return agents, losses, flow, tasks


def _targets(world, tasks):
    """The reference trajectories ``tau`` (N, K, D) and conditions ``c`` (N, 3 D) of the training tasks."""
    taus = jax.vmap(lambda p: FA.encode_plan(world, p, FA.K_DEFAULT))(tasks.tools)
    conds = jax.vmap(lambda s, g, a: FA.task_condition(world, s, g, a))(tasks.s, tasks.g, tasks.avail)
    return taus, conds


def _heldout_cfm_losses(velocity, world, tasks, key, n):
    """Per-sample CFM losses ``mean_elements |v(x_t, t, c) - (tau - x_0)|^2`` of ``n`` fresh draws (task uniform
    over ``tasks`` as in training, ``t ~ U(0, 1)``, ``x_0 ~ N(0, I)``); ``velocity(x, t, c)`` on one sample."""
    taus, conds = _targets(world, tasks)
    ki, kt, kx = jax.random.split(key, 3)
    i = jax.random.randint(ki, (n,), 0, taus.shape[0])
    t = jax.random.uniform(kt, (n,), taus.dtype)
    x0 = jax.random.normal(kx, (n, *taus.shape[1:]), taus.dtype)
    x1 = taus[i]
    xt = t[:, None, None] * x1 + (1 - t[:, None, None]) * x0
    v = jax.jit(lambda a, b, c: jax.lax.map(lambda z: velocity(*z), (a, b, c), batch_size=1000))(xt, t, conds[i])
    return np.asarray(jnp.mean((v - (x1 - x0)) ** 2, axis=(1, 2)))


def _condition_blind_floor(world, tasks, key, n):
    """Per-sample Rao-Blackwellised estimates of the smallest CFM loss of a velocity field that ignores ``c``.

    The training targets are a finite mixture: trajectory ``tau_j`` with frequency ``pi_j``. Given ``x_t = x`` at
    time ``t``, ``u = (tau - x) / (1 - t)`` and ``p(j | x, t) ∝ pi_j N(x; t tau_j, (1 - t)^2 I)``, so the best
    ``c``-blind field has the loss ``E_{t, x} tr Cov(tau | x, t) / ((1 - t)^2 K D)`` (per element); one sample per
    draw ``(t, j, x_0)``."""
    uniq, inv, counts = np.unique(np.asarray(tasks.tools), axis=0, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    taus = jax.vmap(lambda p: FA.encode_plan(world, p, FA.K_DEFAULT))(jnp.asarray(uniq)).reshape(len(uniq), -1)
    log_pi = jnp.log(jnp.asarray(counts / counts.sum(), taus.dtype))
    kj, kt, kx = jax.random.split(key, 3)
    j = jnp.asarray(inv)[jax.random.randint(kj, (n,), 0, inv.size)]
    t = jax.random.uniform(kt, (n,), taus.dtype)
    x = t[:, None] * taus[j] + (1 - t[:, None]) * jax.random.normal(kx, (n, taus.shape[1]), taus.dtype)

    def one(a):
        tt, xx = a
        w = jax.nn.softmax(log_pi - jnp.sum((xx - tt * taus) ** 2, 1) / (2 * (1 - tt) ** 2))
        return w @ jnp.sum((taus - w @ taus) ** 2, 1) / ((1 - tt) ** 2 * taus.shape[1])

    return np.asarray(jax.jit(lambda a: jax.lax.map(one, a, batch_size=1000))((t, x)))


def _cfm_loss_check(per_sample, losses, blind, dim) -> ClaimResult:
    """Pass when the training losses are finite, the last 100 average below the first 100, and the held-out loss
    lies 4 SE below 1, the smallest loss of any field that ignores ``x_t`` (see the claim)."""
    losses = np.asarray(losses)
    first, last = float(np.mean(losses[:100])), float(np.mean(losses[-100:]))
    mean, se = mean_and_se(per_sample)
    b_mean, b_se = mean_and_se(blind)
    ok = bool(np.all(np.isfinite(losses)) and last < first and mean + 4 * se < 1.0)
    return ClaimResult(float(mean), "< 1 - 4 SE (x_t-blind minimum)", 1.0 - 4 * float(se), ok,
                       f"held-out loss {mean:.4f} +- {se:.4f} (SE); x_t-blind minimum 1 (exact), zero field "
                       f"1 + 1/D = {1 + 1 / dim:.4f}, c-blind minimum {b_mean:.4f} +- {b_se:.4f}, exact minimum 0; "
                       f"training loss first 100 steps {first:.4f}, last 100 {last:.4f}")


@claim(area=_AREA, paper=FLOWAGENT, quick=False)
def flowagent_cfm_loss_decreases() -> ClaimResult:
    """(b).4-1: the trajectory CFM loss is finite and decreases, and the trained velocity field uses the state
    ``x_t``: its loss on fresh draws lies below the minimum of every field that ignores ``x_t``.

    Floors (derived here for the training data): the condition ``c = (s, g, avail)`` determines the reference
    plan, so given ``c`` the target ``x_1 = tau(c)`` is a point and ``u_t = tau(c) - x_0``. Hence (i) the exact
    minimum is 0 (``u* = (tau(c) - x) / (1 - t)``); (ii) a field ``v(t, c)`` that ignores ``x_t`` has the loss
    ``E |tau(c) - v|^2 + E |x_0|^2 / (K D) >= 1`` per element, with equality at ``v = tau(c)``, which is what a
    trainer regressing on ``x_1`` instead of ``x_1 - x_0`` learns; the untrained net sits near the zero field's
    ``1 + 1/D``; (iii) a field that ignores ``c`` has at least the mixture's conditional variance (Monte Carlo,
    :func:`_condition_blind_floor`, reported in details). Measured: the mean loss of 2 * 10^4 fresh draws with its
    SE; pass when it is below ``1 - 4 SE`` and the mean of the last 100 training losses is below that of the
    first 100. Tried: the untrained net (what a learning rate of 0 leaves) gives 1.0636 +- 0.0009 and a net
    trained 300 steps on the ``x_1`` target 1.0134 +- 0.0009 (float32 runs): both fail; the trained net (3,000
    AdamW steps, width 1024) gives 0.110 +- 0.001. It stays above the ``c``-blind minimum (0.048 +- 0.0003): the MLP
    underfits the ``1 / (1 - t)`` gain of ``u*`` near ``t = 1`` (loss about 0.06 for ``t < 0.9``, 0.5 for
    ``0.9 <= t < 0.99``, 1.0 above), also with a learning rate decayed to 0 on a cosine (last 100 steps 0.117)."""
    _, losses, flow, tasks = _trained()
    w = _world()
    per = _heldout_cfm_losses(flow, w, tasks, jax.random.key(9), 20_000)
    blind = _condition_blind_floor(w, tasks, jax.random.key(10), 5_000)
    return _cfm_loss_check(per, losses, blind, w.dim)


SLACK = 1  # budget: an episode succeeds when it reaches g within n + SLACK environment steps


def _binomial(x):
    """Rate of a 0/1 array and its binomial SE (with ``(k + 1) / (m + 2)`` inside the variance, so never 0)."""
    x = np.asarray(x, bool)
    m = x.size
    q = (x.sum() + 1) / (m + 2)
    return float(x.mean()), float(np.sqrt(q * (1 - q) / m))


@functools.cache
def _episodes(unseen_only: bool):
    """Per episode: horizon n, p_fail, and per agent (success within 2 N_MAX + 4 steps, steps taken); 500 tasks
    per (horizon, p_fail), all p_fails in one vmapped call per agent."""
    agents, _, _, _ = _trained()
    w = _world()
    s_all, g_all, length, unseen = _task_pools(w, FA.K_DEFAULT)
    rng = np.random.default_rng(4 + unseen_only)
    rows = []
    for p in P_FAILS:
        for n in HORIZONS:
            pool = np.flatnonzero((length == n) & (unseen | (not unseen_only)))
            idx = rng.choice(pool, N_EPISODES)
            rows.append((s_all[idx], g_all[idx], np.full(N_EPISODES, n), np.full(N_EPISODES, p)))
    s, g, n, pf = (np.concatenate(a) for a in zip(*rows, strict=True))
    keys = jax.random.split(jax.random.key(5 + unseen_only), s.size)
    run = eqx.filter_jit(lambda a: FA.run_episodes(keys, w, jnp.asarray(s, jnp.int32), jnp.asarray(g, jnp.int32),
                                                   a, p_fail=jnp.asarray(pf, w.emb.dtype), max_steps=2 * FA.N_MAX + 4,
                                                   K=FA.K_DEFAULT))
    out = {}
    for name, a in agents.items():
        f = run(a)
        out[name] = (np.asarray(f.success), np.asarray(f.t))
    return n, pf, out


def _within_budget(n, out, name):
    sc, t = out[name]
    return (sc & (t <= n + SLACK)).astype(float)


def _paired(d):
    """Mean of per-episode differences (agents run on the same tasks and keys) and its SE; ``1 / m`` is added to
    the variance so that an all-equal cell does not report SE 0."""
    d = np.asarray(d, float)
    return float(d.mean()), float(np.sqrt((d.var() + 1 / d.size) / d.size))


@claim(area=_AREA, paper=FLOWAGENT, quick=False, expected="not reproduced")
def flowagent_degrades_more_slowly_with_horizon() -> ClaimResult:
    """(b).4-4, not reproduced: FlowAgent does not degrade more slowly with the horizon than the step-wise
    agent, and it succeeds less often.

    The paper's claim (abstract): the step-wise paradigm "causes error accumulation over long horizons", while
    FlowAgent generates the whole chain with a global view and "achieves superior robustness ... in long-horizon
    reasoning". Regime: with no step budget every agent is near the ceiling (success n = 1..6 at p_fail <= 0.2
    of 0.89-1.00 for all three agents; drop difference +0.009), so here an episode succeeds only when it reaches
    ``g`` within ``n + 1`` environment steps (one wasted or failed call allowed), at p_fail in {0, 0.2, 0.4}, 500
    tasks per (horizon, p_fail) drawn as in :func:`~jaxlab.generative.flow_agent.evaluate`, the same tasks and
    keys for every agent. The step-wise agent is then off the ceiling (success at n = 6: 1.00, 0.47, 0.11).
    Gain = mean over p_fail of [drop_stepwise - drop_FlowAgent], drop = success(n = 1) - success(n = 6) (the
    paper: > 0); level = success of the step-wise agent minus FlowAgent's over all 9,000 episodes; both with the
    SE of paired per-episode differences. Check (the measured opposite): gain < 4 SE and level > 4 SE.
    Measured (float64): gain +0.013 +- 0.007, level +0.027 +- 0.002 (13 SE); against the classifier the gain is
    +0.012 +- 0.009 (details). A float32 pilot with other seeds gave gains of +0.013, +0.023, +0.024 and +0.007
    (each +- 0.02, unpaired SE) at budgets n, n + 1, n + 2 and none. Diagnosis: the drops are set by the tool
    failures (the BFS oracle drops as much: 0.44 at p_fail = 0.2 in the pilot); FlowAgent starts lower (its
    success is below the step-wise agent's, or equal to 2 decimals, in every (n, p_fail) cell), which is where
    its small positive gain comes from: the ratios success(6) / success(1) of the two agents agree within
    0.01. The state ``(z, g, avail)`` is fully observed and every failure triggers a re-plan, so a step-wise
    policy is Markov-optimal and a whole-plan generator has no global information to add; it only has more to
    get right at once (its first plans are valid in 87 % of episodes)."""
    n, pf, out = _episodes(False)
    ok = {a: _within_budget(n, out, a) for a in out}
    terms = {}
    for base in ("stepwise", "classifier"):
        gain, var = 0.0, 0.0
        for p in P_FAILS:
            (d1, e1), (d6, e6) = (_paired((ok[base] - ok["flowagent"])[(n == h) & (pf == p)]) for h in (1, 6))
            gain += (d1 - d6) / len(P_FAILS)
            var += (e1**2 + e6**2) / len(P_FAILS) ** 2
        terms[base] = (gain, float(np.sqrt(var)))
    level, level_se = _paired(ok["stepwise"] - ok["flowagent"])
    gain, se = terms["stepwise"]
    curves = "; ".join(f"{a} p={p}: " + "/".join(f"{ok[a][(n == h) & (pf == p)].mean():.2f}" for h in HORIZONS)
                       for a in out for p in P_FAILS)
    return ClaimResult(gain, "< 4 SE, and step-wise success above FlowAgent's by > 4 SE", 4 * se,
                       gain < 4 * se and level > 4 * level_se,
                       f"gain {gain:+.4f} +- {se:.4f}; level {level:+.4f} +- {level_se:.4f} (paired SE); vs the "
                       f"classifier: gain {terms['classifier'][0]:+.4f} +- {terms['classifier'][1]:.4f}; success "
                       f"within n + {SLACK} steps, n = 1..6: {curves}")


@claim(area=_AREA, paper=FLOWAGENT, quick=False)
def flowagent_beats_classifier_on_unseen_tools() -> ClaimResult:
    """(b).4-5: on tasks whose reference plan needs a tool unseen in training, FlowAgent succeeds more often than
    the step-wise soft-max classifier over the seen tools (the abstract: the step-wise paradigm "restricts
    generalization to unseen tools").

    Tasks: every (s, g) whose shortest plan on the full tool set uses an unseen tool (4-9 per horizon), 500
    episodes per (horizon n = 1..6, p_fail in {0, 0.2, 0.4}), success within 2 N_MAX + 4 steps. Measured:
    success of FlowAgent minus the classifier's over all 9,000 episodes; pass when it exceeds 4 binomial SE.
    Measured (float64): 0.873 vs 0.737, +0.136 +- 0.006. The classifier reaches ``g`` through seen
    alternatives when no tool fails (1.00 at p_fail = 0, as FlowAgent) and falls behind as failures remove them
    (0.76 and 0.45 at 0.2 and 0.4; FlowAgent 0.93 and 0.69). The gain is not the flow's: the regression step-wise
    agent, which like FlowAgent decodes by embedding proximity and so can pick unseen tools, does as well (0.883);
    within ``n + 1`` steps the gap to the classifier shrinks to +0.024 +- 0.007 (details)."""
    n, pf, out = _episodes(True)
    rate = {a: _binomial(out[a][0]) for a in out}
    budget = {a: _binomial(out[a][0] & (out[a][1] <= n + SLACK))[0] for a in out}
    gap = rate["flowagent"][0] - rate["classifier"][0]
    se = float(np.hypot(rate["flowagent"][1], rate["classifier"][1]))
    per_p = "; ".join(f"p={p}: " + ", ".join(f"{a} {out[a][0][pf == p].mean():.3f}" for a in out) for p in P_FAILS)
    return ClaimResult(gap, "> 4 SE", 4 * se, gap > 4 * se,
                       f"SE {se:.4f}; success " + ", ".join(f"{a} {r[0]:.4f}" for a, r in rate.items())
                       + f"; {per_p}; within n + {SLACK} steps: "
                       + ", ".join(f"{a} {v:.4f}" for a, v in budget.items()))
