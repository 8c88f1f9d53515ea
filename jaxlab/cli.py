"""The ``jaxlab`` command: ``list``, ``verify``, ``bench`` and ``cite``.

``jaxlab list`` prints the areas with their claims; ``jaxlab list --algorithms`` the registered iterative methods
(:func:`jaxlab.core.algorithms`); ``jaxlab list --negative`` the documented negative results (claims registered with
``expected="not reproduced"``) with their diagnoses.

``jaxlab verify [AREA ...] [--quick] [--json PATH] [--dtype float32] [--jobs N]`` runs the registered claims of the
areas (all when none is named) in float64, or in float32 with each claim's float32 tolerance (claims that need
float64 are skipped with their reason), and exits 1 if any fails; its progress goes to stderr, as a redrawn bar on a
terminal and as one line per claim otherwise (logs, pipes, CI). On the CPU it runs the claims in one worker process
per core (``--jobs``), and it keeps compiled programs in JAX's persistent compilation cache
(:mod:`jaxlab.core.cache`: ``$JAXLAB_CACHE_DIR``, ``off`` to disable), so a second run skips most compilation.
``jaxlab bench [AREA ...]`` runs ``bench/<area>.py`` from a source checkout and stores its JSON lines in
``bench/results/<area>.json`` (``jaxlab bench --help`` lists them). ``jaxlab cite NAME`` prints the BibTeX of a
paper key, a BibTeX key, an area, a function or a module. ``jaxlab --version`` prints the installed version.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def _version() -> str:
    """The installed distribution's version, else ``jaxlab.__version__`` (a source tree on ``sys.path``)."""
    from importlib import metadata

    try:
        return metadata.version("jaxlab")
    except metadata.PackageNotFoundError:
        import jaxlab

        return getattr(jaxlab, "__version__", "unknown")


def _verdict(o) -> str:
    return o.verdict


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def cmd_list(args) -> int:
    if getattr(args, "algorithms", False):
        return _list_algorithms()
    if getattr(args, "negative", False):
        return _list_negative()
    from jaxlab.core.verification import discover_areas, registered

    areas = discover_areas()
    if not areas:
        print("no areas registered")
        return 0
    print(f"{'area':<14} {'claims':>6} {'quick':>5}  title / modules / papers")
    for area, module in areas.items():
        mod = importlib.import_module(module)
        cl = registered(area)
        title = getattr(mod, "TITLE", "")
        modules = ", ".join(getattr(mod, "MODULES", ()))
        papers = ", ".join(dict.fromkeys(c.paper for c in cl))
        print(f"{area:<14} {len(cl):>6} {sum(c.quick for c in cl):>5}  {title}")
        if modules:
            print(f"{'':<28}modules: {modules}")
        if papers:
            print(f"{'':<28}papers:  {papers}")
    return 0


def _list_negative() -> int:
    """Print every claim registered with ``expected="not reproduced"``: its name, paper and docstring."""
    from jaxlab.core.verification import discover_areas, load_area

    found = [c for area in discover_areas() for c in load_area(area) if not c.reproduced]
    if not found:
        print("no claims are registered as not reproduced")
        return 0
    for c in found:
        print(f"{c.area}:{c.name}  ({c.paper}{', slow' if not c.quick else ''})")
        for line in c.doc.splitlines():
            print(f"    {line.strip()}" if line.strip() else "")
        print()
    print(f"{len(found)} documented negative results: `jaxlab verify` reports each as NOT REPRODUCED while its check "
          "(the measured opposite of the paper's statement) holds, and as FAIL once the behaviour changes")
    return 0


def _list_algorithms() -> int:
    import inspect

    from jaxlab.core.algorithm import algorithms

    registry = algorithms()
    if not registry:
        print("no algorithms registered")
        return 0
    wn = max(9, *(len(n) for n in registry))
    wa = max(4, *(len(s.area) for s in registry.values()))
    print(f"{'algorithm':<{wn}}  {'area':<{wa}}  factory")
    for name, spec in registry.items():
        f = spec.factory
        print(f"{name:<{wn}}  {spec.area:<{wa}}  {f.__module__}.{f.__qualname__}{inspect.signature(f)}")
    print(f"\n{len(registry)} algorithms: algo = factory(...); state = algo.init(...); "
          "state, info = algo.step(key, state[, x])")
    return 0


def _default_jobs() -> int:
    """Worker processes for ``jaxlab verify``: one per core (at most 4, for memory) on the CPU backend; one on an
    accelerator, whose memory each process would otherwise claim for itself."""
    import jax

    if jax.default_backend() != "cpu":
        return 1
    from jaxlab.core.threads import usable_cores

    return max(1, min(4, usable_cores()))


def _load_seconds(path: Path | None) -> dict[str, float]:
    try:
        data = json.loads(path.read_text()) if path is not None else {}
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def _save_seconds(path: Path | None, seconds: dict[str, float], outcomes) -> None:
    if path is None:
        return
    merged = dict(seconds)
    merged.update({f"{o.area}:{o.claim}": round(o.seconds, 3) for o in outcomes if o.skipped is None})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(merged, indent=0, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache folder only costs the next run its schedule


def cmd_verify(args) -> int:
    if args.jobs is not None and args.jobs < 1:
        print(f"--jobs must be a positive integer, got {args.jobs}", file=sys.stderr)
        return 2
    from jaxlab.core.verification import (
        discover_areas,
        load_area,
        run_claims,
        run_claims_parallel,
        set_precision,
    )

    set_precision(args.dtype)  # before any claim module is imported
    from jaxlab.core.cache import cache_dir, enable_compilation_cache
    from jaxlab.core.loop import is_terminal  # the progress meter's terminal test, shared

    # before anything compiles, for this process, its workers and the subprocesses claims start; None when off
    xla_cache = enable_compilation_cache(children=True)
    root = cache_dir()
    timings = None if root is None else root / f"verify-seconds-{args.dtype}.json"

    known = discover_areas()
    areas = args.areas or list(known)
    unknown = [a for a in areas if a not in known]
    if unknown:
        print(f"unknown area(s): {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    claims = []
    for a in areas:
        claims += [c for c in load_area(a) if c.quick or not args.quick]
    if not claims:
        print("no claims to run", file=sys.stderr)
        return 1
    total = len(claims)
    t_start = time.perf_counter()
    counter = {"i": 0}
    tty = is_terminal(sys.stderr)

    def progress(o) -> None:
        counter["i"] += 1
        i = counter["i"]
        verdict = _verdict(o)
        if not tty:  # a log or a pipe: one plain line per claim, no carriage returns or escape codes
            print(f"[{i}/{total}] {o.area}:{o.claim} {verdict} ({o.seconds:.1f}s)", file=sys.stderr, flush=True)
            return
        bar = "#" * int(24 * i / total)
        print(f"\r[{bar:<24}] {i}/{total} {o.area}:{o.claim} {verdict} ({o.seconds:.1f}s)\033[K",
              end="\n" if (i == total or _verdict(o) == "FAIL") else "", file=sys.stderr, flush=True)

    jobs = args.jobs or _default_jobs()
    seconds = _load_seconds(timings)
    if jobs == 1:
        outcomes = run_claims(claims, on_done=progress)
    else:
        outcomes = run_claims_parallel(claims, jobs=jobs, on_done=progress, seconds=seconds, cache=xla_cache)
    _save_seconds(timings, seconds, outcomes)
    wa = max(4, *(len(o.area) for o in outcomes))
    wc = max(5, *(len(o.claim) for o in outcomes))
    wr = max(6, *(len(_verdict(o)) for o in outcomes))
    header = (f"{'area':<{wa}}  {'claim':<{wc}}  {'measured':>11}  {'expected':>12}  {'tolerance':>10}  "
              f"{'result':<{wr}}  seconds")
    print(f"claims in {args.dtype}")
    print(header)
    print("-" * len(header))
    for o in outcomes:
        print(f"{o.area:<{wa}}  {o.claim:<{wc}}  {_fmt(o.measured):>11}  {_fmt(o.expected):>12}  "
              f"{_fmt(o.tolerance):>10}  {_verdict(o):<{wr}}  {o.seconds:7.2f}")
    verdicts = [_verdict(o) for o in outcomes]
    n_pass, n_fail, n_skip = verdicts.count("PASS"), verdicts.count("FAIL"), verdicts.count("SKIP")
    n_neg = verdicts.count("NOT REPRODUCED")
    if n_neg:
        print("\nnot reproduced (documented negative results: the check asserts the measured opposite of the paper's "
              "statement; `jaxlab list --negative` gives each diagnosis):")
        for o in outcomes:
            if _verdict(o) == "NOT REPRODUCED":
                print(f"  {o.area}:{o.claim}: {o.details}" if o.details else f"  {o.area}:{o.claim}")
    if n_skip:
        print(f"\nskipped in {args.dtype} (the claim needs float64):")
        for o in outcomes:
            if o.skipped is not None:
                print(f"  {o.area}:{o.claim}: {o.skipped}")
    for o in outcomes:
        if o.error:
            print(f"\n{o.area}:{o.claim} raised:\n{o.error}", file=sys.stderr)
    neg = f"{n_neg} not reproduced, " if n_neg else ""
    print(f"\n{n_pass} passed, {neg}{n_fail} failed, {n_skip} skipped in {time.perf_counter() - t_start:.1f} s "
          f"({args.dtype}; {jobs} process{'es' if jobs > 1 else ''}; compilation cache: {xla_cache or 'off'})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps([o.as_dict() for o in outcomes], indent=2))
    return 1 if n_fail else 0


def _source_root() -> Path | None:
    root = Path(__file__).resolve().parent.parent
    return root if (root / "bench").is_dir() and (root / "pyproject.toml").is_file() else None


_WHEEL = ("jaxlab bench runs the scripts in bench/ of a source checkout; this jaxlab is installed from a "
          "wheel. Clone the repository and `pip install -e .[bench]` there.")


def _bench_scripts(root: Path) -> dict[str, Path]:
    """``bench/<name>.py`` of a source checkout by name, leaving out helpers (names starting with ``_``)."""
    return {p.stem: p for p in sorted((root / "bench").glob("*.py")) if not p.stem.startswith("_")}


# run only when named: the accelerator script times every area's kernel on the default backend, with no peers
_NOT_IN_ALL = ("accelerator",)


def _bench_epilog() -> str:
    root = _source_root()
    if root is None:
        return "no benchmarks available: " + _WHEEL
    names = [n if n not in _NOT_IN_ALL else f"{n} (only by name)" for n in _bench_scripts(root)]
    return f"available benchmarks (bench/<name>.py in {root}):\n  " + "\n  ".join(names)


def _run_bench_script(name: str, script: Path, root: Path) -> tuple[list[dict], int]:
    """Run one bench script in a subprocess, echo its output, and return its JSON rows and exit status."""
    print(f"== bench/{name}.py", file=sys.stderr, flush=True)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=root, stdout=subprocess.PIPE, text=True)
    rows = []
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        if line.lstrip().startswith("{"):
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line of a peer's own output that happens to start with a brace
            if isinstance(row, dict) and "case" in row:
                rows.append({"script": name, **row})
    return rows, proc.wait()


def _is_skip(row: dict) -> bool:
    """A line a script prints instead of a case it cannot run (a peer not installed): ``{"skipped": reason}``."""
    return "skipped" in row and "ours_s" not in row


_SIMD_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile")


def _cpu() -> dict:
    """The CPU's model name and the SIMD extensions that move bench ratios (``/proc/cpuinfo``; empty elsewhere).

    Peers differ in how they use the vector units (numpy's sorts are AVX-512 kernels where the CPU has them, XLA's
    CPU sort calls a compiled comparator), so the same row can read several times apart on two machines of one
    size. The dashboard records both so that a baseline is compared only with a run on the same kind of CPU.
    """
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    model = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", text, re.M)
    have = set(flags.group(1).split()) if flags else set()
    family = re.search(r"^cpu family\s*:\s*(\d+)$", text, re.M)
    number = re.search(r"^model\s*:\s*(\d+)$", text, re.M)
    return {"cpu_model": model.group(1).strip() if model else None,
            "cpu_family_model": f"{family.group(1)}/{number.group(1)}" if family and number else None,
            "simd": [f for f in _SIMD_FLAGS if f in have]}


def _machine() -> dict:
    import platform

    import jax
    import jaxlib

    from jaxlab.core.threads import usable_cores

    cores = usable_cores()
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "cpus_usable": cores, "python": platform.python_version(),
            "jax": jax.__version__, "jaxlib": jaxlib.__version__, **_cpu()}


_SUMMARY_FIELDS = ("script", "area", "case", "peer", "ours_s", "peer_s", "ratio", "compile_s", "goal",
                   "goal_clauses", "met", "no_goal_reason", "lapack", "under_load")


def _summary(rows: list[dict], failed: list[str], scripts: list[str], skipped: list[dict], machine: dict) -> dict:
    """The dashboard's summary: the machine, every row's goal fields and the counts of met / unmet / no goal."""
    import datetime

    kept = [{k: r.get(k) for k in _SUMMARY_FIELDS} for r in rows]
    return {
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "scripts": scripts,
        "failed": failed,
        "skipped": skipped,
        "rows": kept,
        "met": sum(r["met"] is True for r in kept),
        "unmet": sum(r["met"] is False for r in kept),
        "no_goal": sum(r["met"] is None for r in kept),
    }


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{1e3 * seconds:.4g}"


def _ratio(r) -> str:
    return "-" if r is None else ("inf" if r == float("inf") else f"{r:.3g}")


def _print_table(rows: list[dict], failed: list[str]) -> None:
    """The dashboard: one line per row (case, peer, ours, peer's time, ratio, goal, met), then the counts."""
    met_word = {True: "yes", False: "no", None: "-"}
    table = [(f"{r.get('area')}:{r.get('case')}", str(r.get("peer") or "-"), _ms(r.get("ours_s")),
              _ms(r.get("peer_s")), _ratio(r.get("ratio")),
              r.get("goal") or f"none ({r.get('no_goal_reason') or 'no goal stated'})", met_word[r.get("met")])
             for r in rows]
    head = ("case", "peer", "ours ms", "peer ms", "ratio", "goal", "met")
    wc = min(60, max([4] + [len(t[0]) for t in table]))
    wp = min(36, max([4] + [len(t[1]) for t in table]))
    wn = [max([len(head[i])] + [len(t[i]) for t in table]) for i in (2, 3, 4)]
    wg = min(56, max([4] + [len(t[5]) for t in table]))

    def fmt(t) -> str:
        return (f"{t[0][:wc]:<{wc}}  {t[1][:wp]:<{wp}}  {t[2]:>{wn[0]}}  {t[3]:>{wn[1]}}  {t[4]:>{wn[2]}}  "
                f"{t[5]:<{wg}}  {t[6]}")

    line = fmt(head)
    print("\n" + line)
    print("-" * len(line))
    for t in table:
        print(fmt(t))
    n_met = sum(r.get("met") is True for r in rows)
    n_unmet = sum(r.get("met") is False for r in rows)
    n_none = sum(r.get("met") is None for r in rows)
    print(f"\n{len(rows)} rows: {n_met} meet their goal, {n_unmet} do not, {n_none} without a goal")
    loaded = [r for r in rows if r.get("under_load")]
    if loaded:
        print("\nunder load (every core busy): jaxlab's slowdown, and the fair-share floors of the reference programs"
              " timed beside it (one-thread numpy / XLA matmul on every core)")
        for r in loaded:
            ul, floors = r["under_load"], r["under_load"].get("floors") or {}
            ref = " / ".join(f"{floors[k]:.2f}" for k in ("one_thread_numpy", "all_threads_xla_matmul") if k in floors)
            print(f"  {r.get('area')}:{r.get('case')}  slowdown {ul['slowdown']:.2f} (bound {ul['max_slowdown']:g})"
                  + (f", floors {ref}" if ref else ""))
    unmeasured = [f"{r.get('area')}:{r.get('case')}" for r in rows if r.get("lapack") and r.get("under_load") is None]
    if unmeasured:
        print(f"calls LAPACK, not timed under load: {', '.join(unmeasured)}")
    if failed:
        print(f"failed (their rows are missing): {', '.join(f'bench/{f}.py' for f in failed)}")


def _load_summary(path: str) -> dict:
    """A summary.json written by ``jaxlab bench --all``; raises ``ValueError`` naming the file if it is not one."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the summary {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ValueError(f"{path} is not a jaxlab bench summary (a JSON object with a 'rows' list)")
    return data


def _cpu_mismatch(old_machine: dict, new_machine: dict) -> str | None:
    """A warning line where the two summaries name different CPUs (model or SIMD extensions), else ``None``."""
    keys = ("cpu_model", "cpu_family_model", "simd", "cpus_usable")
    differ = [k for k in keys if k in old_machine and k in new_machine and old_machine[k] != new_machine[k]]
    if not differ:
        return None
    said = "; ".join(f"{k} {old_machine[k]} -> {new_machine[k]}" for k in differ)
    return f"warning: the two runs are on different CPUs ({said}); ratios against peers move with the CPU, not only " \
           "with the code"


def _print_compare(old_rows: list[dict], new_rows: list[dict], old_name: str, new_name: str) -> None:
    """Per row (matched on area and case): the old ratio, the new ratio and new / old, then rows on one side only."""
    def key(r: dict) -> str:
        return f"{r.get('area')}:{r.get('case')} vs {r.get('peer')}"  # a case can have several peers

    old = {key(r): r for r in old_rows}
    new = {key(r): r for r in new_rows}
    both = [k for k in new if k in old]
    print(f"\nratio change: old = {old_name}, new = {new_name} (ratio = peer time / our time; new/old < 1: jaxlab "
          "lost ground)")
    w = min(100, max([4] + [len(k) for k in both]))
    print(f"{'case vs peer':<{w}}  {'old':>8}  {'new':>8}  {'new/old':>8}  met (old -> new)")
    met_word = {True: "yes", False: "no", None: "-"}
    for k in both:
        ro, rn = old[k].get("ratio"), new[k].get("ratio")
        change = rn / ro if ro not in (None, 0, float("inf")) and rn is not None else None
        print(f"{k:<{w}}  {_ratio(ro):>8}  {_ratio(rn):>8}  {_ratio(change):>8}  "
              f"{met_word[old[k].get('met')]} -> {met_word[new[k].get('met')]}")
    only_old = [k for k in old if k not in new]
    only_new = [k for k in new if k not in old]
    if only_old:
        print(f"only in {old_name}: {', '.join(only_old)}")
    if only_new:
        print(f"only in {new_name}: {', '.join(only_new)}")


def cmd_bench(args) -> int:
    if args.against is not None:
        if args.compare is None or args.areas or args.all:
            print("--against B.json compares two summaries without a run: give it with --compare A.json only",
                  file=sys.stderr)
            return 2
        try:
            a, b = _load_summary(args.compare), _load_summary(args.against)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        if warning := _cpu_mismatch(a.get("machine") or {}, b.get("machine") or {}):
            print(warning)
        _print_compare(a["rows"], b["rows"], args.compare, args.against)
        return 0
    root = _source_root()
    if root is None:
        print(_WHEEL, file=sys.stderr)
        return 2
    if args.all and args.areas:
        print("--all runs every benchmark: name no areas with it", file=sys.stderr)
        return 2
    baseline = None
    if args.compare is not None:
        try:
            baseline = _load_summary(args.compare)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
    scripts = _bench_scripts(root)
    areas = args.areas or [n for n in scripts if n not in _NOT_IN_ALL]
    missing = [a for a in areas if a not in scripts]
    if missing:
        print(f"no benchmark for: {', '.join(missing)}; available: {', '.join(scripts)}", file=sys.stderr)
        return 2
    failed: list[str] = []
    all_rows: list[dict] = []
    skipped: list[dict] = []
    for a in areas:
        rows, code = _run_bench_script(a, scripts[a], root)
        if code != 0:
            print(f"bench/{a}.py exited with {code}", file=sys.stderr)
            failed.append(a)
        else:
            all_rows += [r for r in rows if not _is_skip(r)]
            skipped += [r for r in rows if _is_skip(r)]
        out = root / "bench" / "results" / f"{a}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps([{k: v for k, v in r.items() if k != "script"} for r in rows], indent=2) + "\n")
    _print_table(all_rows, failed)
    machine = _machine()
    print(f"machine: {machine.get('cpu_model')} (family/model {machine.get('cpu_family_model')}), SIMD "
          f"{' '.join(machine.get('simd') or []) or 'unknown'}, {machine['cpus_usable']} usable cores; "
          f"jax {machine['jax']}")
    for r in skipped:
        print(f"skipped {r.get('area')}:{r.get('case')}: {r.get('skipped')}")
    if args.all:
        path = root / "bench" / "results" / "summary.json"
        path.write_text(json.dumps(_summary(all_rows, failed, areas, skipped, machine), indent=2) + "\n")
        print(f"summary: {path}")
    if baseline is not None:  # the baseline's rows of the scripts that ran (all of them after --all)
        old_rows = [r for r in baseline["rows"] if r.get("script") in (None, *areas)]
        if warning := _cpu_mismatch(baseline.get("machine") or {}, machine):
            print(warning)
        _print_compare(old_rows, all_rows, args.compare, "this run")
    return 1 if failed else 0


def cmd_cite(args) -> int:
    from jaxlab.core.citations import cite

    try:
        print(cite(args.name))
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jaxlab", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"jaxlab {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="areas, their modules, papers and number of claims")
    ls.add_argument("--negative", action="store_true",
                    help="the claims registered as not reproduced (documented negative results), with their diagnoses")
    ls.add_argument("--algorithms", action="store_true",
                    help="list the registered iterative methods (Algorithm factories) instead")
    ls.set_defaults(fn=cmd_list)
    v = sub.add_parser("verify", help="run the registered claims (float64, or --dtype float32) and print a table")
    v.add_argument("areas", nargs="*", help="areas to verify (default: all)")
    v.add_argument("--quick", action="store_true", help="only the quick subset")
    v.add_argument("--json", metavar="PATH", help="also write the outcomes as JSON")
    v.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="precision the claims run in (default float64); in float32 each claim uses its float32 "
                        "tolerance, and claims that need float64 are skipped with their reason")
    v.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="worker processes (default: one per core, at most 4, on the CPU; 1 on an accelerator); "
                        "1 runs the claims in this process")
    v.set_defaults(fn=cmd_verify)
    b = sub.add_parser("bench", help="run bench/<area>.py from a source checkout", epilog=_bench_epilog(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("areas", nargs="*", help="benchmarks to run (default: all but accelerator; listed below)")
    b.add_argument("--all", action="store_true",
                   help="run every benchmark but accelerator and write bench/results/summary.json (the baseline)")
    b.add_argument("--compare", metavar="BASELINE.json",
                   help="after the run, print each row's ratio against this summary (old, new, new/old)")
    b.add_argument("--against", metavar="NEW.json",
                   help="with --compare A.json: compare the summary NEW.json with A.json, without running anything")
    b.set_defaults(fn=cmd_bench)
    c = sub.add_parser("cite", help="BibTeX of the papers behind a paper key, area, function or module")
    c.add_argument("name", nargs="?", default=None,
                   help="a paper key (pe_vaswani2017attention) or the key inside its BibTeX entry "
                        "(vaswani2017attention), an area (msip), a function (jaxlab.kernels.mmd2 or mmd2) or a "
                        "module (jaxlab.kernels); all papers when omitted")
    c.set_defaults(fn=cmd_cite)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    raise SystemExit(main())
