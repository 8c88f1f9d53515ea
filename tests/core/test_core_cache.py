"""jaxlab.core.cache: where the compilation cache lives, how it is pruned, and that a second process loads from it."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlab.core import cache as C


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(C.ENV, str(tmp_path / "mine"))
    assert C.cache_dir() == tmp_path / "mine"
    for off in ("off", "OFF", "0", "false", "No", " none "):
        monkeypatch.setenv(C.ENV, off)
        assert C.cache_dir() is None
        assert C.enable_compilation_cache() is None  # off and no path: nothing changes
    monkeypatch.delenv(C.ENV)
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert C.cache_dir() == tmp_path / "xdg" / "jaxlab"
        monkeypatch.delenv("XDG_CACHE_HOME")
        assert C.cache_dir() == Path.home() / ".cache" / "jaxlab"


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"min_compile_seconds": -1.0}, ValueError, "min_compile_seconds"),
    ({"min_compile_seconds": float("nan")}, ValueError, "min_compile_seconds"),
    ({"min_compile_seconds": "1"}, TypeError, "min_compile_seconds"),
    ({"max_bytes": 0}, ValueError, "max_bytes"),
    ({"max_bytes": 1.5e9}, TypeError, "max_bytes"),
    ({"max_bytes": True}, TypeError, "max_bytes"),
])
def test_bad_arguments_name_themselves(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        C.enable_compilation_cache(tmp_path, **kwargs)


def test_prune_deletes_the_entries_used_longest_ago(tmp_path):
    for i in range(10):  # ten 100-byte files, used at times 1000, 1001, ..., 1009
        f = tmp_path / f"e{i}"
        f.write_bytes(b"x" * 100)
        os.utime(f, (1000 + i, 1000 + i))
    assert C.prune(tmp_path, 1000) == 0  # 1000 bytes: at the cap, nothing goes
    assert C.prune(tmp_path, 900) == 400  # past 900: down to 3/4 of it (675), the 4 oldest files go
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"e{i}" for i in range(4, 10)]
    assert C.prune(tmp_path / "missing", 10) == 0


_PROGRAM = textwrap.dedent("""
    import sys
    import jax, jax.numpy as jnp
    from jaxlab.core.cache import enable_compilation_cache
    hits = []
    jax.monitoring.register_event_listener(
        lambda name, **kw: hits.append(name) if name == "/jax/compilation_cache/cache_hits" else None)
    import os
    assert enable_compilation_cache(sys.argv[1], children=True) is not None
    y = jax.jit(lambda x: jnp.sin(x) @ jnp.cos(x).T)(jnp.ones((3, 3)))
    print(len(hits), float(y.sum()), os.environ["JAX_COMPILATION_CACHE_DIR"] == sys.argv[1],
          os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"])
""")


def test_a_second_process_loads_the_compiled_program(tmp_path):
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.pop("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", None)
    runs = [subprocess.run([sys.executable, "-c", _PROGRAM, str(tmp_path)], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    (h1, y1, e1, t1), (h2, y2, _, _) = (r.stdout.split() for r in runs)
    assert int(h1) == 0 and int(h2) >= 1  # cold, then loaded from disk
    assert y1 == y2
    assert e1 == "True" and float(t1) == 0.0  # children=True: the processes it starts use the same cache
    assert any(tmp_path.iterdir())
