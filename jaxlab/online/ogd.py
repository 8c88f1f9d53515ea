r"""Online gradient descent (OGD) on linear features: the first-order baseline for USP features.

Reference: M. Zinkevich, *Online convex programming and generalized infinitesimal gradient ascent* (ICML 2003);
the USP experimental protocol (A. Marsden and E. Hazan, arXiv:2502.06545 and arXiv:2605.08390) runs it on the
same features as VAW with a learning-rate grid {1e-3, 1e-2, 1e-1}.

Round ``t`` with parameters ``theta_t`` (d, k)::

    y^_t = theta_t^T a_t,    loss_t = ||y^_t - y_t||^2,
    theta_{t+1} = Pi_K(theta_t + update(grad_theta loss_t)),    Pi_K(theta) = theta min(1, R / ||theta||_F),

where ``update`` is any optax transformation (``optax.sgd(learning_rate)`` gives plain OGD) and ``K`` the Frobenius
ball of radius ``R`` (no projection when ``radius=None``). Regret of OGD scales with ``R`` times the gradient
bound times ``sqrt(T)``, which is what USP's exponentially large comparator norm breaks.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

import jaxlab.online.papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import run as scan_run
from jaxlab.core.types import Array, Float, Int
from jaxlab.core.validation import check_int, check_positive, tie_finite_checks
from jaxlab.online._checks import check_stream

__all__ = ["OGDInfo", "OGDState", "init", "ogd_algorithm", "run", "step"]


class OGDState(NamedTuple):
    """State of online gradient descent.

    Attributes:
      theta: ``(d, k)`` float array, the parameters ``theta_t`` (prediction ``theta_t^T a_t``).
      opt_state: the optax optimizer's state.
      t: 0-d int32 array, the number of rounds played.
    """

    theta: Float[Array, "d k"]
    opt_state: Any
    t: Int[Array, ""]


class OGDInfo(NamedTuple):
    """Record of one OGD round.

    Attributes:
      y_hat: ``(k,)`` float array, the prediction ``theta_t^T a_t`` made before the update.
      loss: 0-d float array, its squared loss ``||y^_t - y_t||^2``.
    """

    y_hat: Float[Array, " k"]
    loss: Float[Array, ""]


@cites("zinkevich2003online")
def init(dim: int, optimizer: optax.GradientTransformation, *, num_outputs: int = 1, dtype=None) -> OGDState:
    """Initial OGD state: ``theta_1 = 0`` and the optimizer's initial state.

    Args:
      dim: feature dimension ``d >= 1``.
      optimizer: the optax transformation that will be stepped.
      num_outputs: number of outputs ``k >= 1``.
      dtype: float dtype of ``theta``; ``None`` is the default float dtype.

    Returns:
      :class:`OGDState` with ``theta`` of shape ``(dim, num_outputs)`` and ``t = 0``.

    Raises:
      TypeError: ``dim`` or ``num_outputs`` is not an int.
      ValueError: ``dim`` or ``num_outputs`` below 1.
    """
    dim = check_int(dim, "dim", min_value=1)
    num_outputs = check_int(num_outputs, "num_outputs", min_value=1)
    dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
    theta = jnp.zeros((dim, num_outputs), dtype)
    return OGDState(theta, optimizer.init(theta), jnp.zeros((), jnp.int32))


def _loss(theta, a, y):
    y_hat = theta.T @ a
    return jnp.sum((y_hat - y) ** 2), y_hat


@cites("zinkevich2003online")
def step(state: OGDState, a: Float[Array, " d"], y: Float[Array, " k"], optimizer: optax.GradientTransformation,
         *, radius: float | None = None) -> tuple[OGDState, OGDInfo]:
    """One OGD round: predict ``theta_t^T a``, step on the squared loss, project onto the Frobenius ball.

    ``theta_{t+1} = Pi_K(theta_t + update(grad_theta ||theta_t^T a - y||^2))`` with
    ``Pi_K(theta) = theta min(1, R / ||theta||_F)``.

    Args:
      state: the current :class:`OGDState`.
      a: ``(d,)`` float array, the features ``a_t``.
      y: ``(k,)`` float array (or a scalar when ``k = 1``), the target ``y_t``.
      optimizer: the optax transformation the state was built with.
      radius: the ball's radius ``R``, or ``None`` for no projection (not validated here; see
        :func:`ogd_algorithm`).

    Returns:
      ``(state, OGDInfo)``: the updated state and the prediction made before the update with its loss.
    """
    (loss, y_hat), g = jax.value_and_grad(_loss, has_aux=True)(state.theta, a, jnp.atleast_1d(y))
    updates, opt_state = optimizer.update(g, state.opt_state, state.theta)
    theta = optax.apply_updates(state.theta, updates)
    if radius is not None:
        theta = theta * jnp.minimum(1.0, radius / jnp.maximum(jnp.linalg.norm(theta), jnp.finfo(theta.dtype).tiny))
    return OGDState(theta, opt_state, state.t + 1), OGDInfo(y_hat, loss)


@cites("zinkevich2003online")
def ogd_algorithm(optimizer: optax.GradientTransformation, *, radius: float | None = None) -> Algorithm:
    """Online gradient descent as an :class:`~jaxlab.core.Algorithm` (data-driven).

    ``init(dim, *, num_outputs=1, dtype=None)`` sets ``theta_1 = 0`` and the optimizer's state;
    ``step(key, state, x)`` with ``x = (a_t, y_t)`` predicts ``theta_t^T a_t``, then takes one optimizer step on
    the squared loss and projects onto the Frobenius ball of radius ``radius`` (``key`` is ignored).

    Args:
      optimizer: any optax transformation (``optax.sgd(learning_rate)`` is plain OGD).
      radius: the ball's radius ``R > 0``, or ``None`` for no projection.

    Returns:
      ``Algorithm(init, step)``; ``step`` returns ``(OGDState, OGDInfo)``.

    Raises:
      TypeError: ``optimizer`` is not an optax transformation.
      ValueError: ``radius <= 0``.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.core import run
      >>> from jaxlab.online import ogd_algorithm
      >>> a = jax.random.normal(jax.random.key(0), (50, 3))
      >>> y = a @ jnp.array([1.0, -0.5, 0.25])
      >>> algo = ogd_algorithm(optax.sgd(0.05), radius=10.0)
      >>> state, trace = run(algo.step, algo.init(3), None, xs=(a, y))
      >>> trace.infos.loss.shape
      (50,)
    """
    if not isinstance(optimizer, optax.GradientTransformation):
        raise TypeError(f"optimizer must be an optax.GradientTransformation, got {type(optimizer).__name__}")
    if radius is not None:
        radius = check_positive(radius, "radius")

    def init_fn(dim: int, *, num_outputs: int = 1, dtype=None) -> OGDState:
        return init(dim, optimizer, num_outputs=num_outputs, dtype=dtype)

    def step_fn(key, state: OGDState, x) -> tuple[OGDState, OGDInfo]:
        del key  # deterministic
        a, y = x
        return step(state, a, y, optimizer, radius=radius)

    return Algorithm(init_fn, step_fn)


@cites("zinkevich2003online", "marsden2025usp")
def run(features: Float[Array, "T d"], targets: Float[Array, " T"] | Float[Array, "T k"],
        optimizer: optax.GradientTransformation, *, radius: float | None = None) -> tuple[OGDState, OGDInfo]:
    """OGD over a stream: :func:`ogd_algorithm` driven by :func:`jaxlab.core.run` over
    ``xs = (features, targets)`` (``lax.scan``), jitted.

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``, finite.
      optimizer: any optax transformation (``optax.sgd(learning_rate)`` is plain OGD); it must be hashable
        (it is a static argument of the jitted loop).
      radius: the Frobenius ball's radius ``R > 0``, or ``None`` for no projection.

    Returns:
      ``(state, info)``: the final :class:`OGDState` and the per-round :class:`OGDInfo` with leading axis ``T``;
      ``info.y_hat`` has the shape of ``targets``.

    Raises:
      TypeError: non-float inputs.
      ValueError: mismatched lengths, ``T = 0``, non-finite entries, or ``radius <= 0``.
    """
    features, targets = check_stream(features, targets, defer=True)
    if radius is not None:
        radius = check_positive(radius, "radius")
    y2 = targets[:, None] if targets.ndim == 1 else targets
    final, info = _scan(features, y2, optimizer, radius)
    out = final, info._replace(y_hat=info.y_hat[:, 0]) if targets.ndim == 1 else info
    # a non-finite a_t or y_t makes the round-t loss (theta_t^T a_t - y_t)^2 non-finite, whatever the optimizer
    return tie_finite_checks(out, witness=info.loss, features=features, targets=targets)


@functools.partial(jax.jit, static_argnums=(2, 3))
def _scan(features, y2, optimizer, radius):
    algo = ogd_algorithm(optimizer, radius=radius)
    state0 = algo.init(features.shape[1], num_outputs=y2.shape[1], dtype=features.dtype)
    final, trace = scan_run(algo.step, state0, None, xs=(features, y2))
    return final, trace.infos


def _example(key):
    features = jax.random.normal(key, (8, 3))
    targets = features @ jnp.array([1.0, -0.5, 0.25])
    algo = ogd_algorithm(optax.sgd(0.1), radius=10.0)
    return algo, algo.init(3, dtype=features.dtype), (features, targets)


register_algorithm("ogd", ogd_algorithm, _example, area="online")
