r"""Training scorers with classification-with-rejection surrogates on a known Gaussian mixture (spec section 5).

Task: K classes with means mu_k in R^D, x | z ~ N(mu_z, I), z uniform; the observed label is z with
probability 1 - eta and uniform on [K] otherwise (label noise). The class posterior is known exactly,

    p(y | x) = (1 - eta) softmax_k(-||x - mu_k||^2 / 2)_y + eta / K,

so the Bayes 0-1-c risk E_x min(c, 1 - max_y p(y | x)) can be estimated on any sample. A scorer f : R^D -> R^d
(linear or MLP, an ``equinox.nn.MLP``) is trained by Adam (cosine-decayed step) on the empirical surrogate risk
(1/n) sum_i L(f(x_i), y_i) and evaluated through the surrogate's link psi by the empirical 0-1-c risk
(1/n) sum_i l_c(psi(f(x_i)), y_i), the rejection rate and the error on accepted points.

The study design (data, models, metrics) is the spec's recommendation: the target paper's experiments were
not retrieved. Training follows jaxlab's ``init``/``step`` + :func:`jaxlab.core.run` pattern.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive
from jaxlab.losses.cwr import REJECT, bayes_decision, bayes_risk, cwr_target_loss

__all__ = [
    "MixtureTask",
    "TrainState",
    "cwr_metrics",
    "evaluate",
    "fit",
    "make_mixture",
    "make_scorer",
    "mixture_bayes_risk",
    "sample_mixture",
    "train_init",
    "train_step",
]


class MixtureTask(NamedTuple):
    """K-class Gaussian mixture with unit covariance and symmetric label noise ``eta``."""

    means: jax.Array  # (K, D)
    eta: float


@cites("chow1970reject")
def make_mixture(key: Any, K: int, dim: int = 20, sep: float = 3.0, eta: float = 0.2) -> MixtureTask:
    """Random means sep * N(0, I_D) / sqrt(D) (pairwise distance about sep * sqrt 2) and label noise eta."""
    K = check_int(K, "K", min_value=2)
    dim = check_int(dim, "dim", min_value=1)
    check_positive(sep, "sep")
    check_in_range(eta, "eta", 0.0, 1.0, hi_open=True)
    means = sep * jax.random.normal(key, (K, dim)) / jnp.sqrt(dim)
    return MixtureTask(means, float(eta))


def _posterior(task: MixtureTask, X: jax.Array) -> jax.Array:
    logits = -0.5 * jnp.sum((X[:, None, :] - task.means[None]) ** 2, axis=-1)
    K = task.means.shape[0]
    return (1 - task.eta) * jax.nn.softmax(logits, axis=-1) + task.eta / K


@cites("chow1970reject")
def sample_mixture(key: Any, task: MixtureTask, n: int) -> tuple[Float[Array, "n D"], Int[Array, " n"],
                                                                  Float[Array, "n K"]]:
    """Draw n points: features X, noisy labels y and the exact posteriors P = p(. | x)."""
    n = check_int(n, "n", min_value=1)
    return _sample(key, task.means, task.eta, n)


@jax.jit(static_argnums=3)
def _sample(key, means, eta, n):
    kz, kx, kn, ku = jax.random.split(key, 4)
    K, D = means.shape
    z = jax.random.randint(kz, (n,), 0, K)
    X = means[z] + jax.random.normal(kx, (n, D), dtype=means.dtype)
    flip = jax.random.bernoulli(kn, eta, (n,))
    y = jnp.where(flip, jax.random.randint(ku, (n,), 0, K), z).astype(jnp.int32)
    return X, y, _posterior(MixtureTask(means, eta), X)


def mixture_bayes_risk(P: Float[Array, "n K"], c: float) -> jax.Array:
    """Monte-Carlo Bayes 0-1-c risk mean_i min(c, 1 - max_y P[i, y]) on a sample's exact posteriors."""
    return jnp.mean(bayes_risk(P, c))


def make_scorer(key: Any, dim: int, d: int, width: int | None = None) -> eqx.nn.MLP:
    """Linear scorer (``width=None``) or a 2-layer ReLU MLP of the given width, R^dim -> R^d."""
    dim, d = check_int(dim, "dim", min_value=1), check_int(d, "d", min_value=1)
    if width is None:
        return eqx.nn.MLP(dim, d, width_size=1, depth=0, key=key)
    width = check_int(width, "width", min_value=1)
    return eqx.nn.MLP(dim, d, width_size=width, depth=1, activation=jax.nn.relu, key=key)


class TrainState(NamedTuple):
    """Trainable arrays of the scorer and the optax state."""

    params: Any
    opt_state: Any


def train_init(model: eqx.Module, optimizer: optax.GradientTransformation) -> TrainState:
    """Initial training state of ``model`` (its array leaves) under ``optimizer``."""
    params = eqx.filter(model, eqx.is_array)
    return TrainState(params, optimizer.init(params))


def train_step(key: Any, state: TrainState, *, static: Any, X: jax.Array, y: jax.Array,
               loss: Callable[[jax.Array, jax.Array], jax.Array], optimizer: optax.GradientTransformation,
               batch_size: int) -> tuple[TrainState, jax.Array]:
    """One Adam step on a random minibatch of the mean surrogate loss. Info: the minibatch loss."""
    idx = jax.random.randint(key, (batch_size,), 0, X.shape[0])

    def objective(params):
        model = eqx.combine(params, static)
        return jnp.mean(loss(jax.vmap(model)(X[idx]), y[idx]))

    value, grad = jax.value_and_grad(objective)(state.params)
    updates, opt_state = optimizer.update(grad, state.opt_state, state.params)
    return TrainState(optax.apply_updates(state.params, updates), opt_state), value


@cites("ramaswamy2018abstain", "cwr2026lowdim")
def fit(key: Any, model: eqx.Module, X: Float[Array, "n D"], y: Int[Array, " n"],
        loss: Callable[[jax.Array, jax.Array], jax.Array], *, steps: int = 2000, learning_rate: float = 1e-2,
        batch_size: int = 256) -> tuple[eqx.Module, jax.Array]:
    """Train ``model`` on the surrogate ``loss(u, y)`` (batched over rows) by minibatch Adam, under jit.

    The step decays from ``learning_rate`` to 1% of it on a cosine schedule (polyhedral losses need the
    decay to settle on their kinks, e.g. r = 0 for an accepted point of ``cwr2d``).

    Returns the trained model and the per-step minibatch losses.
    """
    X = as_array(X, "X", kind="float", ndim=2)
    y = as_array(y, "y", kind="int", shape=(X.shape[0],))
    steps = check_int(steps, "steps", min_value=1)
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    check_positive(learning_rate, "learning_rate")
    params, static = eqx.partition(model, eqx.is_array)
    optimizer = optax.adam(optax.cosine_decay_schedule(learning_rate, steps, alpha=1e-2))

    @jax.jit
    def go(params, key):
        state = TrainState(params, optimizer.init(params))
        step = lambda k, s: train_step(k, s, static=static, X=X, y=y, loss=loss,  # noqa: E731
                                       optimizer=optimizer, batch_size=batch_size)
        final, trace = run(step, state, key, steps)
        return final.params, trace.infos

    params, losses = go(params, key)
    return eqx.combine(params, static), losses


@cites("chow1970reject")
def cwr_metrics(decisions: Int[Array, " n"], y: Int[Array, " n"], c: float) -> dict[str, jax.Array]:
    """Empirical 0-1-c risk, rejection rate and error rate on accepted points (NaN if all are rejected)."""
    decisions = as_array(decisions, "decisions", kind="int", ndim=1)
    y = as_array(y, "y", kind="int", shape=decisions.shape)
    accepted = decisions != REJECT
    n_acc = jnp.sum(accepted)
    wrong = jnp.sum(accepted & (decisions != y))
    return {
        "risk": jnp.mean(cwr_target_loss(decisions, y, c)),
        "reject_rate": 1.0 - n_acc / decisions.shape[0],
        "accepted_error": jnp.where(n_acc > 0, wrong / jnp.maximum(n_acc, 1), jnp.nan),
    }


def evaluate(model: eqx.Module, X: Float[Array, "n D"], y: Int[Array, " n"],
             link: Callable[[jax.Array], jax.Array], c: float,
             P: Float[Array, "n K"] | None = None) -> dict[str, float]:
    """Metrics of ``link(model(x))`` on (X, y); with posteriors P also the Bayes rule's risk on the same
    labels (``bayes_risk_empirical``) and its expectation (``bayes_risk``)."""
    decisions = link(jax.vmap(model)(X))
    out = {k: float(v) for k, v in cwr_metrics(decisions, y, c).items()}
    if P is not None:
        out["bayes_risk"] = float(mixture_bayes_risk(P, c))
        out["bayes_risk_empirical"] = float(jnp.mean(cwr_target_loss(bayes_decision(P, c), y, c)))
    return out
