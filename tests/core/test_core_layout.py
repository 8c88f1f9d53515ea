"""The package layout's rules, checked on the source: no import cycles, no private names imported across areas,
every area a package with a curated ``__all__``, and importing an area starts no XLA backend."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "jaxlab"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}
AREA_DIRS = sorted({p.parent for p in ROOT.rglob("claims.py")})
SHARED = {"jaxlab", "jaxlab.cli", "jaxlab.__main__"}


def _area_of(module: str) -> str:
    path = MODULES[module]
    for d in sorted(AREA_DIRS, key=lambda d: -len(d.parts)):
        if d in path.parents or (path.name == "__init__.py" and path.parent == d):
            return d.name
    top = module.split(".")[:2]
    return ".".join(top)  # shared packages (kernels, data, parent namespaces) are their own units


def _resolve(module: str, node: ast.ImportFrom) -> str | None:
    if node.level:
        base = module.split(".")
        if MODULES[module].name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - node.level + 1]
        name = ".".join(base + ([node.module] if node.module else []))
    else:
        name = node.module or ""
    return name if name.startswith("jaxlab") else None


def _imports(module: str):
    """(target module, imported names) for every ``import``/``from ... import`` in the module, at any depth."""
    tree = ast.parse(MODULES[module].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("jaxlab"):
                    yield a.name, []
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if target:
                yield target, [a.name for a in node.names]


def _edges():
    graph = {m: set() for m in MODULES}
    for m in MODULES:
        for target, names in _imports(m):
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            graph[m].update(subs)  # `from pkg import submodule` imports the submodule
            if target in MODULES and target != m and len(subs) < max(len(names), 1):
                graph[m].add(target)
    return graph


def test_there_are_no_import_cycles():
    graph = _edges()
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = [0]

    def strongconnect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strongconnect(v)
    assert not cycles, f"import cycles: {cycles}"


def test_no_private_name_is_imported_across_areas():
    bad = []
    for m in MODULES:
        for target, names in _imports(m):
            for name in names:
                full = f"{target}.{name}"
                source = full if full in MODULES else target
                private = name.startswith("_") or any(p.startswith("_") for p in target.split("."))
                if private and not name.startswith("__") and source in MODULES and _area_of(source) != _area_of(m):
                    bad.append(f"{m} imports {name} from {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("area_dir", AREA_DIRS, ids=[d.name for d in AREA_DIRS])
def test_every_area_is_a_package_with_claims_papers_and_a_curated_all(area_dir):
    for name in ("__init__.py", "claims.py", "papers.py"):
        assert (area_dir / name).is_file(), f"{area_dir.name} lacks {name}"
    tree = ast.parse((area_dir / "__init__.py").read_text())
    names = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)]
    assert "__all__" in names, f"{area_dir.name}/__init__.py has no __all__"


def test_importing_every_area_starts_no_backend():
    """A user may call jax.distributed.initialize after importing jaxlab: no area may touch the backend."""
    packages = sorted({_module_name(d / "__init__.py") for d in AREA_DIRS})
    code = (
        "import importlib, jax._src.xla_bridge as xb\n"
        f"for m in {packages!r}:\n"
        "    importlib.import_module(m)\n"
        "    assert not xb._backends, f'importing {m} initialised the XLA backend'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
