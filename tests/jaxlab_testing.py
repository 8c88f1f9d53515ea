"""Test helpers shared by every area's tests."""

import jax


def raises_eager_and_jit(fn, *args, match: str, eager_exc=(ValueError, TypeError), **kwargs) -> None:
    """Assert that ``fn(*args, **kwargs)`` rejects its input both eagerly and under ``jax.jit``.

    Eagerly the error is ``ValueError``/``TypeError`` (``eager_exc``); under ``jit`` the array arguments are
    traced, so a value check can only fire at run time (an ``equinox.error_if`` error, a ``RuntimeError``), while
    a shape or type check still fires at trace time. Either way the message must match ``match`` (the argument's
    name). Non-array arguments (strings, callables, None) are closed over, not traced.
    """
    import re

    import pytest

    with pytest.raises(eager_exc, match=match):
        fn(*args, **kwargs)

    arrays = {i: a for i, a in enumerate(args) if _traceable(a)}
    kw_arrays = {k: v for k, v in kwargs.items() if _traceable(v)}

    def traced(arr_args, arr_kwargs):
        full = [arr_args.get(i, a) for i, a in enumerate(args)]
        return fn(*full, **{**kwargs, **arr_kwargs})

    with pytest.raises(Exception) as info:
        jax.block_until_ready(jax.jit(traced)(arrays, kw_arrays))
    assert re.search(match, str(info.value)), f"under jit: {info.value!s:.500}"


def _traceable(a) -> bool:
    import numpy as np

    if isinstance(a, (bool, str)) or a is None or callable(a):
        return False
    if isinstance(a, (int, float, np.ndarray, np.generic, jax.Array)):
        return np.asarray(a).dtype.kind in "biufc"
    return False
