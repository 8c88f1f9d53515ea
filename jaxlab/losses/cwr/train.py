r"""Training scorers with classification-with-rejection surrogates on a known Gaussian mixture.

Task: K classes with means mu_k in R^D, x | z ~ N(mu_z, I), z uniform; the observed label is z with
probability 1 - eta and uniform on [K] otherwise (label noise). The class posterior is known exactly,

    p(y | x) = (1 - eta) softmax_k(-||x - mu_k||^2 / 2)_y + eta / K,

so the Bayes 0-1-c risk E_x min(c, 1 - max_y p(y | x)) can be estimated on any sample. A scorer f : R^D -> R^d
(linear or MLP, an ``equinox.nn.MLP``, or for ``cwr2d`` a
:class:`CentreRadiusScorer`) is trained by Adam (cosine-decayed step) on the empirical surrogate risk
(1/n) sum_i L(f(x_i), y_i) and evaluated through the surrogate's link psi by the empirical 0-1-c risk
(1/n) sum_i l_c(psi(f(x_i)), y_i), the rejection rate and the error on accepted points.

The study design (data, models, metrics) is jaxlab's: the target paper's experiments were not retrieved.
Training is :func:`jaxlab.core.train.trainer` (optax), driven by :func:`jaxlab.core.run`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float, Int

from jaxlab.core import Algorithm, register_algorithm, run
from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.train import trainer
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive
from jaxlab.losses.cwr.losses import cs_loss
from jaxlab.losses.cwr.papers import CHOW, CWR2026, RAMASWAMY
from jaxlab.losses.cwr.target import REJECT, bayes_decision, bayes_risk, cwr_target_loss

__all__ = [
    "CentreRadiusScorer",
    "MixtureTask",
    "cwr_metrics",
    "evaluate",
    "fit",
    "make_centre_radius_scorer",
    "make_mixture",
    "make_scorer",
    "mixture_bayes_risk",
    "sample_mixture",
    "scorer_train_algorithm",
]


class MixtureTask(NamedTuple):
    """K-class Gaussian mixture with unit covariance and symmetric label noise ``eta``.

    Attributes:
      means: ``(K, D)`` float array of the class means ``mu_k``.
      eta: label-noise rate in [0, 1) (a Python float): the observed label is uniform on [K] with probability
        ``eta``.
    """

    means: jax.Array
    eta: float


@cites(CHOW)
def make_mixture(key: Any, K: int, dim: int = 20, sep: float = 3.0, eta: float = 0.2) -> MixtureTask:
    """A random mixture task: means sep * N(0, I_D) / sqrt(D) (pairwise distance about sep * sqrt 2).

    The study design is jaxlab's (module docstring).

    Args:
      key: PRNG key for the means.
      K: number of classes ``>= 2``.
      dim: feature dimension D ``>= 1``.
      sep: mean scale ``> 0``.
      eta: label-noise rate in [0, 1).

    Returns:
      :class:`MixtureTask` with ``means`` of shape ``(K, dim)`` (default float dtype).

    Raises:
      TypeError: ``K`` or ``dim`` is not an int.
      ValueError: ``K < 2``, ``dim < 1``, ``sep <= 0`` or ``eta`` outside [0, 1).
    """
    K = check_int(K, "K", min_value=2)
    dim = check_int(dim, "dim", min_value=1)
    sep = check_positive(sep, "sep")
    eta = check_in_range(eta, "eta", 0.0, 1.0, hi_open=True)
    means = sep * jax.random.normal(key, (K, dim)) / jnp.sqrt(dim)
    return MixtureTask(means, float(eta))


def _posterior(task: MixtureTask, X: jax.Array) -> jax.Array:
    logits = -0.5 * jnp.sum((X[:, None, :] - task.means[None]) ** 2, axis=-1)
    K = task.means.shape[0]
    return (1 - task.eta) * jax.nn.softmax(logits, axis=-1) + task.eta / K


@cites(CHOW)
def sample_mixture(key: Any, task: MixtureTask, n: int) -> tuple[Float[Array, "n D"], Int[Array, " n"],
                                                                  Float[Array, "n K"]]:
    """Draw n points of the mixture: features X, noisy labels y and the exact posteriors P = p(. | x).

    ``z`` uniform on [K], ``x = mu_z + N(0, I)``; ``y = z`` with probability 1 - eta, else uniform on [K];
    ``P = (1 - eta) softmax_k(-||x - mu_k||^2 / 2) + eta / K``.

    Args:
      key: PRNG key.
      task: the :class:`MixtureTask`.
      n: number of points ``>= 1``.

    Returns:
      ``(X, y, P)``: ``(n, D)`` features (dtype of ``task.means``), ``(n,)`` int32 labels and ``(n, K)``
      posteriors.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 1``.
    """
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
    """Monte-Carlo Bayes 0-1-c risk mean_i min(c, 1 - max_y P[i, y]) on a sample's exact posteriors.

    Args:
      P: ``(n, K)`` float array of posteriors (rows on the simplex), e.g. from :func:`sample_mixture`.
      c: rejection cost in (0, 1).

    Returns:
      0-d float array.

    Raises:
      TypeError: ``P`` is not a float array.
      ValueError: a row of ``P`` is not a probability vector, or ``c`` outside (0, 1).
    """
    return jnp.mean(bayes_risk(P, c))


def make_scorer(key: Any, dim: int, d: int, width: int | None = None) -> eqx.nn.MLP:
    """A scorer R^dim -> R^d: linear (``width=None``) or a 2-layer ReLU MLP of the given width.

    Args:
      key: PRNG key for the initial weights.
      dim: input dimension ``>= 1``.
      d: score dimension ``>= 1`` (the surrogate's, see :func:`~jaxlab.losses.cwr.registry.surrogate_dim`).
      width: hidden width ``>= 1``, or ``None`` for a linear scorer.

    Returns:
      An ``equinox.nn.MLP`` mapping a ``(dim,)`` input to ``(d,)`` scores.

    Raises:
      TypeError: ``dim``, ``d`` or ``width`` is not an int.
      ValueError: ``dim``, ``d`` or ``width`` below 1.
    """
    dim, d = check_int(dim, "dim", min_value=1), check_int(d, "d", min_value=1)
    if width is None:
        return eqx.nn.MLP(dim, d, width_size=1, depth=0, key=key)
    width = check_int(width, "width", min_value=1)
    return eqx.nn.MLP(dim, d, width_size=width, depth=1, activation=jax.nn.relu, key=key)


class CentreRadiusScorer(eqx.Module):
    """A 2-d ``cwr2d`` scorer whose centre is a soft class position: ``u(x) = (m(x), r(x))`` with

        (z_1, ..., z_K, r) = g(x),   m = 1 + sum_{k<K} k softmax(z)_k  in [1, K],

    ``g`` a 2-layer ReLU MLP. The score is 2-d (the loss and link see only ``(m, r)``); the K hidden logits give
    ``m`` plateaus at the integers 1..K, where the ``cwr2d`` link accepts, instead of the piecewise-linear ramps of
    a ReLU output. jaxlab's choice of scorer (the target paper's experiments were not retrieved).

    Attributes:
      mlp: the ``equinox.nn.MLP`` g, ``(dim,) -> (K + 1,)``.
    """

    mlp: eqx.nn.MLP

    def __call__(self, x: Float[Array, " D"]) -> Float[Array, " 2"]:
        """Scores ``(m, r)`` of one input ``x`` of shape ``(D,)``."""
        g = self.mlp(x)
        K = g.shape[0] - 1
        m = 1 + jnp.sum(jnp.arange(K, dtype=g.dtype) * jax.nn.softmax(g[:K]))
        return jnp.stack([m, g[K]])


def make_centre_radius_scorer(key: Any, dim: int, K: int, width: int) -> CentreRadiusScorer:
    """A :class:`CentreRadiusScorer` R^dim -> R^2 for K classes, with a hidden layer of the given width.

    Args:
      key: PRNG key for the initial weights.
      dim: input dimension ``>= 1``.
      K: number of classes ``>= 2`` (the centre ranges over [1, K]).
      width: hidden width ``>= 1``.

    Returns:
      A :class:`CentreRadiusScorer` mapping a ``(dim,)`` input to ``(m, r)``.

    Raises:
      TypeError: ``dim``, ``K`` or ``width`` is not an int.
      ValueError: ``dim`` or ``width`` below 1, or ``K`` below 2.
    """
    dim, width = check_int(dim, "dim", min_value=1), check_int(width, "width", min_value=1)
    K = check_int(K, "K", min_value=2)
    return CentreRadiusScorer(eqx.nn.MLP(dim, K + 1, width_size=width, depth=1, activation=jax.nn.relu, key=key))


def scorer_train_algorithm(model: eqx.Module, X: Float[Array, "n D"], y: Int[Array, " n"],
                           loss: Callable[[jax.Array, jax.Array], jax.Array],
                           optimizer: optax.GradientTransformation, *, batch_size: int) -> Algorithm:
    """Minibatch training of a scorer on a surrogate loss, as a :func:`jaxlab.core.train.trainer` algorithm.

    Each step draws ``batch_size`` row indices i_1..i_B uniformly (with replacement) from ``key`` and takes one
    ``optimizer`` step on the mean surrogate loss (1/B) sum_b L(f_theta(x_{i_b}), y_{i_b}) of the scorer f_theta.

    Args:
      model: the scorer (an ``equinox`` module); its non-array part is bound here.
      X: features, shape ``(n, D)``.
      y: labels in ``0..K-1``, shape ``(n,)``.
      loss: the surrogate loss ``loss(u, y)``, batched over rows (e.g. ``surrogate(...).loss``).
      optimizer: any optax gradient transformation.
      batch_size: rows per minibatch.

    Returns:
      ``Algorithm(init, step)``: ``init(params)`` with ``params = eqx.filter(model, eqx.is_array)`` gives a
      :class:`jaxlab.core.train.TrainState`; ``step(key, state)`` returns it updated and a
      :class:`jaxlab.core.train.TrainInfo` holding the minibatch loss.
    """
    static = eqx.filter(model, eqx.is_array, inverse=True)

    def minibatch_loss(params: Any, key: Any, batch: Any) -> jax.Array:
        del batch  # the minibatch is drawn from the key
        idx = jax.random.randint(key, (batch_size,), 0, X.shape[0])
        scorer = eqx.combine(params, static)
        return jnp.mean(loss(jax.vmap(scorer)(X[idx]), y[idx]))

    return trainer(minibatch_loss, optimizer)


@cites(RAMASWAMY, CWR2026)
@renamed_kwargs(steps="num_steps")
def fit(key: Any, model: eqx.Module, X: Float[Array, "n D"], y: Int[Array, " n"],
        loss: Callable[[jax.Array, jax.Array], jax.Array], *, num_steps: int = 2000, learning_rate: float = 1e-2,
        batch_size: int = 256) -> tuple[eqx.Module, jax.Array]:
    """Train ``model`` on the surrogate ``loss(u, y)`` (batched over rows) by minibatch Adam, under jit.

    The step decays from ``learning_rate`` to 1% of it on a cosine schedule (polyhedral losses need the
    decay to settle on their kinks, e.g. r = 0 for an accepted point of ``cwr2d``); the steps are those of
    :func:`scorer_train_algorithm`, driven by :func:`jaxlab.core.run`. The training protocol is jaxlab's
    (the target paper's experiments were not retrieved).

    Args:
      key: PRNG key (the minibatches).
      model: the scorer, e.g. from :func:`make_scorer`.
      X: features, shape ``(n, D)``.
      y: labels, shape ``(n,)``.
      loss: the surrogate loss ``loss(u, y)``.
      num_steps: number of Adam steps.
      learning_rate: initial step size (> 0).
      batch_size: rows per minibatch.

    Returns:
      The trained model and the per-step minibatch losses, shape ``(num_steps,)``.

    Raises:
      TypeError: non-float ``X``, non-integer ``y`` or non-int counts.
      ValueError: ``X`` not 2-D, ``y`` not of shape ``(n,)``, ``num_steps`` or ``batch_size`` below 1, or
        ``learning_rate`` not finite and > 0.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.losses.cwr import fit, make_scorer, surrogate
      >>> X = jax.random.normal(jax.random.key(0), (128, 2))
      >>> y = (X[:, 0] > 0).astype(jnp.int32) + (X[:, 1] > 1).astype(jnp.int32)  # labels in 0..2
      >>> s = surrogate("cwr2d", K=3, c=0.2)
      >>> model, losses = fit(jax.random.key(1), make_scorer(jax.random.key(2), 2, s.dim), X, y, s.loss,
      ...                     num_steps=100, batch_size=32)
      >>> losses.shape  # decisions: s.link(jax.vmap(model)(X)), -1 = reject
      (100,)
    """
    X = as_array(X, "X", kind="float", ndim=2)
    y = as_array(y, "y", kind="int", shape=(X.shape[0],))
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    learning_rate = check_positive(learning_rate, "learning_rate")
    params, static = eqx.partition(model, eqx.is_array)
    optimizer = optax.adam(optax.cosine_decay_schedule(learning_rate, num_steps, alpha=1e-2))
    algo = scorer_train_algorithm(model, X, y, loss, optimizer, batch_size=batch_size)

    @jax.jit
    def go(params, key):
        final, trace = run(algo.step, algo.init(params), key, num_steps)
        return final.params, trace.infos.loss

    params, losses = go(params, key)
    return eqx.combine(params, static), losses


@cites(CHOW)
def cwr_metrics(decisions: Int[Array, " n"], y: Int[Array, " n"], c: float) -> dict[str, jax.Array]:
    """Empirical 0-1-c risk, rejection rate and error rate on accepted points (NaN if all are rejected).

    ``risk = (1/n) sum_i l_c(t_i, y_i)``, ``reject_rate = #{t_i = REJECT} / n``,
    ``accepted_error = #{t_i != REJECT, t_i != y_i} / #{t_i != REJECT}``.

    Args:
      decisions: ``(n,)`` int array of decisions in {-1, 0, ..., K-1}.
      y: ``(n,)`` int array of labels.
      c: rejection cost in (0, 1).

    Returns:
      A dict of 0-d arrays with keys ``"risk"``, ``"reject_rate"`` and ``"accepted_error"``.

    Raises:
      TypeError: non-integer ``decisions`` or ``y``.
      ValueError: ``decisions`` not 1-D, ``y`` not of its shape, decisions below -1, negative labels, or ``c``
        outside (0, 1).
    """
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
    """Metrics of the decisions ``link(model(x))`` on (X, y), next to the Bayes rule's when posteriors are given.

    With posteriors P also the risk of Chow's rule on the same labels (``bayes_risk_empirical``) and its
    expectation (``bayes_risk``, :func:`mixture_bayes_risk`).

    Args:
      model: the scorer, a callable on one ``(D,)`` input (vmapped over the rows of ``X``).
      X: ``(n, D)`` float array of features.
      y: ``(n,)`` int array of labels.
      link: the surrogate's link, scores ``(n, d)`` -> decisions ``(n,)``.
      c: rejection cost in (0, 1).
      P: ``(n, K)`` float array of exact posteriors, or ``None``.

    Returns:
      A dict of Python floats: the keys of :func:`cwr_metrics`, plus ``"bayes_risk"`` and
      ``"bayes_risk_empirical"`` when ``P`` is given.

    Raises:
      TypeError: non-integer decisions or labels.
      ValueError: invalid decisions, labels, posteriors or ``c`` (see :func:`cwr_metrics`).
    """
    decisions = link(jax.vmap(model)(X))
    out = {k: float(v) for k, v in cwr_metrics(decisions, y, c).items()}
    if P is not None:
        out["bayes_risk"] = float(mixture_bayes_risk(P, c))
        out["bayes_risk_empirical"] = float(jnp.mean(cwr_target_loss(bayes_decision(P, c), y, c)))
    return out


def _scorer_train_example(key: Any) -> tuple[Algorithm, Any, None]:
    """A linear scorer trained with the Crammer-Singer loss on 32 points of a 3-class mixture."""
    k_task, k_data, k_model = jax.random.split(key, 3)
    X, y, _ = sample_mixture(k_data, make_mixture(k_task, 3, dim=2), 32)
    model = make_scorer(k_model, 2, 3)
    algo = scorer_train_algorithm(model, X, y, cs_loss, optax.adam(1e-2), batch_size=8)
    return algo, algo.init(eqx.filter(model, eqx.is_array)), None


register_algorithm("cwr_scorer_train", scorer_train_algorithm, _scorer_train_example, area="cwr")
