"""One iteration protocol for every iterative jaxlab method, and the registry of those methods.

An :class:`Algorithm` is a pair of pure functions, in the manner of blackjax's ``SamplingAlgorithm`` and optax's
``GradientTransformation``. A factory binds a method's hyperparameters once and returns one::

    algo = jaxlab.sampling.msip.msip_algorithm(estimator, step_size=0.5)
    state = algo.init(Y0, key)
    state, info = algo.step(key, state)               # key-driven methods (samplers, SGD)
    state, info = algo.step(key, state, x)            # data-driven methods (online learners), x one datum

States and infos are NamedTuples of arrays, so a step jits, vmaps (over keys, chains, problems) and shards.
:func:`jaxlab.core.run` drives any step with :func:`jax.lax.scan`, once per key or once per leading entry of
``xs``.

Every factory is registered with :func:`register_algorithm` together with a tiny example;
:func:`algorithms` returns the registry (``jaxlab list --algorithms`` prints it), and one test steps every
example under ``jit`` and under ``vmap`` over keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from jaxlab.core.verification import import_areas

__all__ = ["Algorithm", "AlgorithmSpec", "algorithms", "register_algorithm"]


class Algorithm(NamedTuple):
    """A pair of pure functions: ``init(...) -> state`` and ``step(key, state[, x]) -> (state, info)``.

    Attributes:
      init: builds the initial state from the method's starting point (particles, parameters, a dimension).
      step: advances the state by one iteration. Key-driven methods take ``(key, state)``; data-driven methods
        take ``(key, state, x)`` with one entry ``x`` of the data stream (their ``key`` may be ``None``, as
        :func:`jaxlab.core.run` passes it when it is given no key). Returns the new state and a NamedTuple of
        diagnostics.
    """

    init: Callable[..., Any]
    step: Callable[..., tuple[Any, Any]]


class AlgorithmSpec(NamedTuple):
    """A registered factory and its tiny example.

    Attributes:
      factory: ``factory(**hyperparameters) -> Algorithm``.
      example: ``example(key) -> (algorithm, initial_state, xs)``, a tiny instance that steps in well under a
        second; ``xs`` is ``None`` for key-driven steps, else a pytree whose leaves have a leading axis that the
        step consumes one entry at a time.
      area: the area (package) that defines the method.
    """

    factory: Callable[..., Algorithm]
    example: Callable[[Any], tuple[Algorithm, Any, Any]]
    area: str


_REGISTRY: dict[str, AlgorithmSpec] = {}


def register_algorithm(
    name: str,
    factory: Callable[..., Algorithm],
    example: Callable[[Any], tuple[Algorithm, Any, Any]],
    *,
    area: str,
) -> None:
    """Register ``factory`` under ``name`` with a tiny ``example`` (see :class:`AlgorithmSpec`).

    Called at the bottom of the module that defines the factory. Re-registering the same factory is a no-op
    (modules can be reloaded); a different factory under a taken name raises ``ValueError``.

    Args:
      name: the method's name, e.g. ``"msip"`` or ``"vaw"``.
      factory: callable binding the hyperparameters and returning an :class:`Algorithm`.
      example: callable ``example(key) -> (algorithm, initial_state, xs)``.
      area: the area that defines the method (the name ``jaxlab list`` prints).

    Raises:
      TypeError: ``factory`` or ``example`` is not callable.
      ValueError: ``name`` is already registered with another factory.
    """
    if not callable(factory) or not callable(example):
        raise TypeError(f"register_algorithm({name!r}): factory and example must be callable")
    old = _REGISTRY.get(name)
    if old is not None and getattr(old.factory, "__qualname__", None) != getattr(factory, "__qualname__", None):
        raise ValueError(f"algorithm {name!r} is already registered by {old.factory.__module__}")
    _REGISTRY[name] = AlgorithmSpec(factory, example, area)


def algorithms() -> dict[str, AlgorithmSpec]:
    """Every registered iterative method, sorted by name.

    Imports every area package first (their modules register their factories at import), so the answer does
    not depend on what the caller has imported.

    Returns:
      A new ``dict`` ``{name: AlgorithmSpec(factory, example, area)}`` (a copy: editing it leaves the registry
      unchanged).
    """
    import_areas()
    return dict(sorted(_REGISTRY.items()))
