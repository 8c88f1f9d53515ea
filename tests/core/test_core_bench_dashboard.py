"""The benchmark dashboard: goals in ``jaxlab.core.bench.emit`` and ``jaxlab bench --all / --compare``.

The CLI tests run tiny fake ``bench/*.py`` scripts from a temporary source root (``cli._source_root`` pointed
at it); only one of them imports jaxlab, so the file runs in a few seconds.
"""

import json
import math
import textwrap

import pytest

from jaxlab import cli
from jaxlab.core.bench import emit, load_figures, parse_goal, time_interleaved, time_under_load


def _emit(capsys, **kw):
    base = {"ours_s": 1.0, "peer": "p", "peer_s": 3.0, "compile_s": 0.0}
    row = emit("a", "c", **{**base, **kw})
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(row))  # the printed line is the returned row
    return row


# ------------------------------------------------------------------------------------------------- emit's goals


def test_ratio_goal(capsys):
    row = _emit(capsys, goal_ratio=2.0)  # ratio 3
    assert row["ratio"] == 3.0 and row["met"] is True and row["goal"] == "ratio >= 2"
    assert row["goal_clauses"] == [["ratio", ">=", 2.0]] and row["no_goal_reason"] is None
    assert _emit(capsys, goal_ratio=3.5)["met"] is False
    assert _emit(capsys, goal_ratio=3.0)["met"] is True  # the bound itself meets it


def test_metric_goal_reads_a_field_or_a_quality_entry(capsys):
    row = _emit(capsys, goal_metric="time_ratio", goal_op="<=", goal_value=0.75, time_ratio=0.8)
    assert row["met"] is False and row["goal"] == "time_ratio <= 0.75"
    row = _emit(capsys, quality={"overhead_x": 1.2}, goal_metric="overhead_x", goal_op="<=", goal_value=1.3)
    assert row["met"] is True
    # a ratio and a metric together: both must hold
    row = _emit(capsys, goal_ratio=2.0, goal_metric="compile_s", goal_op="<", goal_value=10.0, compile_s=12.0)
    assert row["met"] is False and row["goal"] == "ratio >= 2; compile_s < 10"
    assert _emit(capsys, goal_metric="ours_s", goal_op="<=", goal_value=0.05)["met"] is False  # 1 s > 50 ms


def test_legacy_text_goals_are_converted(capsys):
    assert parse_goal("ours <= 0.5x peer") == [("ratio", ">=", 2.0)]
    assert parse_goal("ratio >= 10, rel_cumloss_diff <= 1e-12") == [("ratio", ">=", 10.0),
                                                                    ("rel_cumloss_diff", "<=", 1e-12)]
    assert parse_goal("time_ratio <= 0.75") == [("time_ratio", "<=", 0.75)]
    assert parse_goal("ours <= 0.5x peer; slowdown <= 1.5x") == [("ratio", ">=", 2.0), ("slowdown", "<=", 1.5)]
    row = _emit(capsys, goal="ratio >= 20; compile_s < 10", compile_s=3.0)
    assert row["met"] is False and row["goal_clauses"] == [["ratio", ">=", 20.0], ["compile_s", "<", 10.0]]
    row = _emit(capsys, goal="ours <= 0.5x peer")  # ours 1 s, peer 3 s
    assert row["met"] is True and row["goal"] == "ratio >= 2"
    row = _emit(capsys, goal="ratio >= 1, rel_cumloss_diff <= 1e-12", quality={"rel_cumloss_diff": 1e-10})
    assert row["met"] is False
    for bad in ("faster than numpy", "ours >= 2x peer", "ratio >= 2 peer", ""):
        with pytest.raises(ValueError, match="goal"):
            parse_goal(bad)


def test_rows_without_a_goal_must_say_why(capsys):
    row = _emit(capsys, goal=None, no_goal_reason="a throughput row")
    assert row["met"] is None and row["goal"] is None and row["no_goal_reason"] == "a throughput row"
    with pytest.raises(ValueError, match="every row states a goal"):
        emit("a", "c", ours_s=1.0, peer="p", peer_s=2.0, compile_s=0.0)
    with pytest.raises(ValueError, match="no_goal_reason"):
        emit("a", "c", ours_s=1.0, peer="p", peer_s=2.0, compile_s=0.0, goal=None)
    with pytest.raises(ValueError, match="not both"):
        emit("a", "c", ours_s=1.0, peer="p", peer_s=2.0, compile_s=0.0, goal_ratio=1.0, goal="ratio >= 1")
    with pytest.raises(ValueError, match="goal_op and goal_value"):
        emit("a", "c", ours_s=1.0, peer="p", peer_s=2.0, compile_s=0.0, goal_metric="x")
    with pytest.raises(ValueError, match="goal_op must be one of"):
        emit("a", "c", ours_s=1.0, peer="p", peer_s=2.0, compile_s=0.0, goal_metric="x", goal_op="==",
             goal_value=1.0, x=1.0)
    with pytest.raises(ValueError, match="no metric 'overhead_x'"):
        emit("a", "c", ours_s=1.0, peer="p", peer_s=2.0, compile_s=0.0, goal_metric="overhead_x", goal_op="<=",
             goal_value=1.3)
    assert capsys.readouterr().out == ""  # nothing printed for a rejected row


def test_load_goal_and_untimed_rows(capsys):
    load = load_figures(1.0, 1.6, 6.0)
    assert load["slowdown"] == pytest.approx(1.6) and load["ratio"] == pytest.approx(3.75) and load["met"] is False
    row = _emit(capsys, goal_ratio=2.0, under_load=load)  # quiet ratio 3 meets 2, but the load slowdown is 1.6
    assert row["met"] is False and row["lapack"] is True and row["goal"] == "ratio >= 2; under load: slowdown <= 1.5"
    row = _emit(capsys, goal_ratio=2.0, under_load=load_figures(1.0, 1.4))
    assert row["met"] is True and row["under_load"]["ratio"] is None
    row = _emit(capsys, goal_ratio=1.0, lapack=True)  # calls LAPACK, not timed under load
    assert row["lapack"] is True and row["under_load"] is None and row["met"] is True
    with pytest.raises(ValueError, match="positive"):
        load_figures(0.0, 1.0)
    # an agreement row times nothing: no ratio, and a speed goal cannot be met
    row = _emit(capsys, ours_s=0.0, peer_s=0.0, quality={"max_abs_diff": 1e-8}, goal_metric="max_abs_diff",
                goal_op="<", goal_value=1e-6)
    assert row["ratio"] is None and row["met"] is True
    assert _emit(capsys, ours_s=0.0, peer_s=0.0, goal_ratio=1.0)["met"] is False
    assert math.isinf(_emit(capsys, ours_s=0.0, peer_s=1.0, goal_ratio=1.0)["ratio"])


# -------------------------------------------------------------------------------------- jaxlab bench (the CLI)

_ROW = ('{{"area": "{area}", "case": "{case}", "ours_s": {ours}, "peer": "numpy", "peer_s": {peer}, '
        '"ratio": {ratio}, "goal": "ratio >= 1", "goal_clauses": [["ratio", ">=", 1.0]], "met": {met}, '
        '"no_goal_reason": null, "lapack": false, "under_load": null}}')


def _fake_root(tmp_path, *, failing: bool = False):
    """A source root with bench/ scripts: one through emit, one printing rows itself, a helper, the accelerator."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'fake'\n")
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "alpha.py").write_text(textwrap.dedent("""\
        from jaxlab.core.bench import emit, load_figures
        print("some peer's chatter {not json")
        emit("alpha", "fast", ours_s=0.001, peer="numpy", peer_s=0.004, compile_s=0.1, goal_ratio=2.0,
             lapack=True, under_load=load_figures(0.001, 0.0012, 0.004,
                                                  floors={"one_thread_numpy": 1.5, "all_threads_xla_matmul": 2.0}))
        emit("alpha", "slow", ours_s=0.002, peer="numpy", peer_s=0.001, compile_s=0.1, goal_ratio=1.0, lapack=True)
        emit("alpha", "tput", ours_s=0.5, peer=None, peer_s=None, compile_s=0.1, goal=None,
             no_goal_reason="a throughput row")
    """))
    beta = [
        "import sys",
        f"print({_ROW.format(area='beta', case='one', ours=0.01, peer=0.02, ratio=2.0, met='true')!r})",
        "print('{\"area\": \"beta\", \"case\": \"river\", \"skipped\": \"river not installed\"}')",
    ]
    if failing:
        beta.append("sys.exit(1)")
    (bench / "beta.py").write_text("\n".join(beta) + "\n")
    (bench / "_helper.py").write_text("raise SystemExit('a helper is never run')\n")
    (bench / "accelerator.py").write_text("open('accelerator_ran', 'w').write('yes')\n")
    return tmp_path


def test_time_interleaved_rounds_warmup_calls_and_between():
    log = []
    calls = {name: (lambda name=name: log.append(name), ()) for name in ("a", "b")}
    out = time_interleaved(calls, repeats=2, warmup=2, between=lambda name: log.append("|"))
    # one first (compile) call each, then per round and case: 2 untimed warm-up calls, the timed call, between
    assert log == ["a", "b"] + 2 * ["a", "a", "a", "|", "b", "b", "b", "|"]
    assert set(out) == {"a", "b"}
    assert all(0 <= v["min_s"] <= v["median_s"] for v in out.values())


def test_time_under_load_times_the_cases_with_every_core_busy(monkeypatch):
    import contextlib

    import jaxlab.core.bench as B

    state = {"busy": False, "calls": [], "refs": []}
    # per round: quiet and busy medians of jaxlab and the peer (round 1's quiet time of jaxlab is the caller's),
    # and of the two references
    quiet = [None, {"ours": 1.0, "peer": 5.0}, {"ours": 2.0, "peer": 5.0}]
    busy = [{"ours": 3.0, "peer": 12.0}, {"ours": 1.2, "peer": 10.0}, {"ours": 4.0, "peer": 11.0}]
    quiet_refs = {"one_thread_numpy": 1.0, "all_threads_xla_matmul": 1.0}
    busy_refs = [{"one_thread_numpy": 1.5, "all_threads_xla_matmul": 2.0},
                 {"one_thread_numpy": 1.6, "all_threads_xla_matmul": 2.2},
                 {"one_thread_numpy": 1.4, "all_threads_xla_matmul": 1.8}]

    @contextlib.contextmanager
    def fake_busy(n=None):
        state["busy"] = True
        yield
        state["busy"] = False

    def fake_interleaved(cases, repeats):
        n_busy = sum(b for b, _, _ in state["calls"])
        state["calls"].append((state["busy"], sorted(cases), repeats))
        table = busy[n_busy] if state["busy"] else quiet[n_busy]
        return {c: {"median_s": table[c]} for c in cases}

    def fake_references(repeats):
        state["refs"].append((state["busy"], repeats))
        return busy_refs[len(state["refs"]) // 2 - 1] if state["busy"] else quiet_refs

    monkeypatch.setattr(B, "busy_cores", fake_busy)
    monkeypatch.setattr(B, "time_interleaved", fake_interleaved)
    monkeypatch.setattr(B, "_time_references", fake_references)
    cases = {"ours": (lambda: None, ()), "peer": (lambda: None, ())}
    load = time_under_load(cases, 2.0, peer="peer", repeats=3)
    # busy, then (quiet, busy) twice more, every case each time; the references quietly and busy in each round
    assert state["calls"] == [(True, ["ours", "peer"], 3)] + 2 * [(False, ["ours", "peer"], 3),
                                                                    (True, ["ours", "peer"], 3)]
    assert state["refs"] == 3 * [(False, 3), (True, 3)] and state["busy"] is False
    # slowdowns per round 3/2, 1.2/1, 4/2: median 1.5 (met, at the bound); busy times are medians over rounds
    assert load["slowdown"] == 1.5 and load["met"] and load["ours_s"] == 3.0 and load["peer_s"] == 11.0
    assert load["ratio"] == pytest.approx(11.0 / 3.0)
    assert load["floors"] == {"one_thread_numpy": 1.5, "all_threads_xla_matmul": 2.0}
    state["calls"].clear()
    state["refs"].clear()
    assert time_under_load(cases, 2.0, repeats=1, rounds=1)["peer_s"] is None  # no peer named: only jaxlab's
    assert len(state["calls"]) == 1 and len(state["refs"]) == 2
    with pytest.raises(KeyError, match="'svgd'"):
        time_under_load(cases, 1.0, peer="svgd")
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        time_under_load(cases, 1.0, rounds=0)


def test_load_references_show_the_fair_share_floor():
    """The reference programs run: one thread of numpy, and a jitted matmul with a known result."""
    import jaxlab.core.bench as B

    assert set(B.LOAD_REFERENCES) == {"one_thread_numpy", "all_threads_xla_matmul"}
    out = B.LOAD_REFERENCES["all_threads_xla_matmul"]()
    assert out.shape == (1024, 1024) and float(out[0, 0]) == pytest.approx(1.0 / 1024, rel=1e-5)
    assert B.LOAD_REFERENCES["one_thread_numpy"]() is None


def test_bench_all_prints_the_table_and_writes_the_summary(tmp_path, monkeypatch, capsys):
    root = _fake_root(tmp_path)
    monkeypatch.setattr(cli, "_source_root", lambda: root)
    assert cli.main(["bench", "--all"]) == 0
    out = capsys.readouterr().out
    assert not (root / "accelerator_ran").exists()  # --all leaves out the GPU script
    table = out[out.index("case "):]
    for col in ("peer", "ours ms", "peer ms", "ratio", "goal", "met"):
        assert col in table.splitlines()[0]
    lines = {ln.split()[0]: ln for ln in table.splitlines()[2:] if ln.startswith(("alpha:", "beta:"))}
    assert set(lines) == {"alpha:fast", "alpha:slow", "alpha:tput", "beta:one"}
    assert lines["alpha:fast"].split()[-1] == "yes" and "4" in lines["alpha:fast"].split()  # ratio 4
    assert lines["alpha:slow"].split()[-1] == "no" and lines["alpha:tput"].split()[-1] == "-"
    assert "none (a throughput row)" in lines["alpha:tput"]
    assert "4 rows: 2 meet their goal, 1 do not, 1 without a goal" in out
    assert "calls LAPACK, not timed under load: alpha:slow" in out
    assert "  alpha:fast  slowdown 1.20 (bound 1.5), floors 1.50 / 2.00" in out
    assert "skipped beta:river: river not installed" in out

    summary = json.loads((root / "bench" / "results" / "summary.json").read_text())
    assert (summary["met"], summary["unmet"], summary["no_goal"]) == (2, 1, 1)
    assert summary["failed"] == [] and summary["scripts"] == ["alpha", "beta"]
    assert {"platform", "cpu_count", "jax", "jaxlib"} <= set(summary["machine"])
    assert "usable cores; jax" in out
    assert "T" in summary["created"]
    fast = next(r for r in summary["rows"] if r["case"] == "fast")
    assert fast["ratio"] == pytest.approx(4.0) and fast["met"] is True and fast["lapack"] is True
    assert fast["under_load"]["slowdown"] == pytest.approx(1.2) and fast["script"] == "alpha"
    assert {"area", "case", "peer", "ours_s", "peer_s", "ratio", "goal", "met", "under_load"} <= set(fast)
    # each script's own rows still go to bench/results/<name>.json
    assert len(json.loads((root / "bench" / "results" / "alpha.json").read_text())) == 3

    # by name, the accelerator script still runs, and no summary is written without --all
    (root / "bench" / "results" / "summary.json").unlink()
    assert cli.main(["bench", "accelerator"]) == 0
    assert (root / "accelerator_ran").exists() and not (root / "bench" / "results" / "summary.json").exists()
    assert cli.main(["bench", "--all", "beta"]) == 2  # --all names no areas


def test_a_failing_script_is_listed_and_its_rows_left_out(tmp_path, monkeypatch, capsys):
    root = _fake_root(tmp_path, failing=True)
    monkeypatch.setattr(cli, "_source_root", lambda: root)
    (root / "bench" / "alpha.py").unlink()  # keep this test to the script that fails (no jax import)
    assert cli.main(["bench", "--all"]) == 1
    out = capsys.readouterr().out
    assert "failed (their rows are missing): bench/beta.py" in out and "beta:one" not in out
    summary = json.loads((root / "bench" / "results" / "summary.json").read_text())
    assert summary["failed"] == ["beta"] and summary["rows"] == [] and summary["met"] == 0


def _summary_file(path, rows):
    path.write_text(json.dumps({"created": "2026-12-05T00:00:00+00:00", "machine": {}, "failed": [], "rows": rows}))
    return str(path)


def _row(case, ratio, met, peer="numpy"):
    return {"area": "x", "case": case, "peer": peer, "ours_s": 1.0, "peer_s": ratio, "ratio": ratio, "met": met}


def test_compare_two_summaries(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_source_root", lambda: None)  # no run, so no source checkout is needed
    a = _summary_file(tmp_path / "a.json", [_row("k", 4.0, True), _row("k", 2.0, True, peer="torch"),
                                            _row("gone", 1.0, True)])
    b = _summary_file(tmp_path / "b.json", [_row("k", 2.0, True), _row("k", 3.0, True, peer="torch"),
                                            _row("new", 5.0, True)])
    assert cli.main(["bench", "--compare", a, "--against", b]) == 0
    lines = {ln.rsplit(" vs ", 1)[-1].split()[0]: ln.split() for ln in capsys.readouterr().out.splitlines()
             if ln.startswith("x:k vs ")}
    assert lines["numpy"][-6:] == ["4", "2", "0.5", "yes", "->", "yes"]  # old, new, new/old, met
    assert lines["torch"][-6:] == ["2", "3", "1.5", "yes", "->", "yes"]
    capsys.readouterr()
    cli.main(["bench", "--compare", a, "--against", b])
    out = capsys.readouterr().out
    assert f"only in {a}: x:gone vs numpy" in out and f"only in {b}: x:new vs numpy" in out
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert cli.main(["bench", "--compare", str(bad), "--against", b]) == 2
    assert "not a jaxlab bench summary" in capsys.readouterr().err
    assert cli.main(["bench", "--against", b]) == 2  # --against needs --compare


def test_compare_after_a_run(tmp_path, monkeypatch, capsys):
    root = _fake_root(tmp_path)
    monkeypatch.setattr(cli, "_source_root", lambda: root)
    base = _summary_file(tmp_path / "base.json", [{**_row("one", 4.0, True), "area": "beta", "script": "beta"},
                                                  {**_row("fast", 4.0, True), "area": "alpha", "script": "alpha"}])
    assert cli.main(["bench", "--compare", base, "beta"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("beta:one vs numpy"))
    assert line.split()[-6:] == ["4", "2", "0.5", "yes", "->", "yes"]
    assert "alpha:fast" not in out  # a script that did not run is not reported as missing


def test_compare_warns_when_the_cpus_differ(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_source_root", lambda: None)
    rows = [_row("k", 4.0, True)]
    a, b = _summary_file(tmp_path / "a.json", rows), _summary_file(tmp_path / "b.json", rows)
    assert cli.main(["bench", "--compare", a, "--against", b]) == 0
    assert "different CPUs" not in capsys.readouterr().out  # no CPU recorded: nothing to warn about
    for path, simd in ((a, ["avx2", "fma"]), (b, ["avx2", "fma", "avx512f"])):
        data = json.loads(open(path).read())
        data["machine"] = {"cpu_model": "x", "simd": simd}
        open(path, "w").write(json.dumps(data))
    assert cli.main(["bench", "--compare", a, "--against", b]) == 0
    out = capsys.readouterr().out
    assert "different CPUs (simd ['avx2', 'fma'] -> ['avx2', 'fma', 'avx512f'])" in out
    assert cli._cpu_mismatch({"cpu_model": "x"}, {"cpu_model": "x", "simd": []}) is None  # only shared keys count
