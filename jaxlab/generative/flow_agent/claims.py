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

import jax
import jax.numpy as jnp
import numpy as np
import optax
import scipy.optimize

from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.generative import flow_agent as FA
from jaxlab.generative.flow_agent import flow_matching as FM
from jaxlab.generative.flow_agent.papers import FLOW_MATCHING, FLOWAGENT, OT_CFM

TITLE = "Conditional flow matching and FlowAgent: CFM loss floor, minibatch OT, decoding margin, closed-loop agents"
MODULES = ("jaxlab.generative.flow_agent.flow_matching", "jaxlab.generative.flow_agent")

_AREA = "flow_agent"
P_FAILS = (0.0, 0.1, 0.2)
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
    return agents, losses


@functools.cache
def _curves(unseen_only: bool):
    agents, _ = _trained()
    return {(name, p): FA.evaluate(jax.random.key(4), _world(), a, 500, p, HORIZONS, unseen_only=unseen_only)
            for name, a in agents.items() for p in P_FAILS}


def _row(res) -> str:
    return "/".join(f"{res[n]['success']:.2f}" for n in sorted(res))


@claim(area=_AREA, paper=FLOWAGENT, quick=False)
def flowagent_cfm_loss_decreases() -> ClaimResult:
    """(b).4-1: the trajectory CFM loss is finite and decreasing; measured = mean loss of the last 100 / first
    100 of the 3,000 steps (< 1)."""
    _, losses = _trained()
    a, b = float(jnp.mean(losses[:100])), float(jnp.mean(losses[-100:]))
    return ClaimResult.at_most(b / a, 1.0, details=f"first 100 steps {a:.4f}, last 100 {b:.4f}")


@claim(area=_AREA, paper=FLOWAGENT, quick=False)
def flowagent_degrades_more_slowly_with_horizon() -> ClaimResult:
    """(b).4-4 (paper's claim, not reliably reproduced here): success rate vs horizon n = 1..6 at p_fail in
    {0, 0.1, 0.2}, 500 episodes each; measured = mean over p_fail of [drop_FlowAgent - drop_stepwise],
    drop = success(n=1) - success(n=6) (paper: FlowAgent degrades more slowly, so <= 0). Details: all curves."""
    c = _curves(False)
    diff = np.mean([(c["flowagent", p][1]["success"] - c["flowagent", p][6]["success"])
                    - (c["stepwise", p][1]["success"] - c["stepwise", p][6]["success"]) for p in P_FAILS])
    details = "; ".join(f"{name} p={p}: {_row(c[name, p])}" for name in ("flowagent", "stepwise", "classifier")
                        for p in P_FAILS)
    return ClaimResult.at_most(diff, 0.0, details="success n=1..6 " + details)


@claim(area=_AREA, paper=FLOWAGENT, quick=False)
def flowagent_beats_classifier_on_unseen_tools() -> ClaimResult:
    """(b).4-5 (paper's claim, not reliably reproduced here): success on tasks whose reference plan uses an
    unseen tool, mean over horizons and p_fail in {0, 0.1, 0.2}; measured = FlowAgent - step-wise classifier
    (paper: > 0). The classifier may still succeed through alternative seen tools; details: the three agents
    (FlowAgent with plan repair)."""
    c = _curves(True)
    mean = {name: float(np.mean([np.mean([r["success"] for r in c[name, p].values()]) for p in P_FAILS]))
            for name in ("flowagent", "stepwise", "classifier")}
    return ClaimResult.at_least(mean["flowagent"] - mean["classifier"], 0.0,
                                details=", ".join(f"{k} {v:.3f}" for k, v in mean.items()))
