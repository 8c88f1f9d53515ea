"""The one way jaxlab renames a keyword argument: the old name keeps working for one release, with a warning.

jaxlab uses one name per concept, following the JAX ecosystem: ``num_steps``, ``learning_rate`` (``step_size``
for samplers), ``batch_size``, ``key`` first in stochastic functions, ``dtype=None`` for "follow the inputs".
Functions that used another name accept it through :func:`renamed_kwargs` until the next release.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import TypeVar

__all__ = ["renamed_kwargs"]

F = TypeVar("F", bound=Callable)


def renamed_kwargs(**renames: str) -> Callable[[F], F]:
    """Decorator accepting deprecated keyword names: ``@renamed_kwargs(lr="learning_rate", n_steps="num_steps")``.

    A call with an old name warns (``DeprecationWarning`` naming the function, the old and the new name) and
    passes the value on under the new name.

    Args:
      **renames: ``old_name="new_name"`` pairs; every new name must be a parameter of the decorated function.

    Returns:
      A decorator that keeps the function's name, docstring and signature.

    Raises:
      ValueError: (at decoration) a new name is not a parameter of the function.
      TypeError: (at call) both the old and the new name are given.
    """

    def decorate(fn: F) -> F:
        params = inspect.signature(fn).parameters
        accepts_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        for old, new in renames.items():
            if new not in params and not accepts_kwargs:
                raise ValueError(f"renamed_kwargs: {fn.__qualname__} has no parameter {new!r} (renamed from {old!r})")
        name = getattr(fn, "__qualname__", repr(fn))

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{name}() got both {old!r} (deprecated) and {new!r}; pass only {new!r}")
                    warnings.warn(
                        f"{name}(): the keyword {old!r} is deprecated and will be removed in the next release; "
                        f"use {new!r}",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
