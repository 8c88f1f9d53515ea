import importlib.util
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from jaxlab import cli
from jaxlab.core import algorithms, progress_meter
from jaxlab.core import verification as C
from jaxlab.core.citations import cite, cites, papers_of, register_paper


@pytest.fixture(autouse=True)
def _no_user_cache(monkeypatch):
    """``jaxlab verify`` run from these tests writes no compilation cache or timings into the user's folder."""
    monkeypatch.setenv("JAXLAB_CACHE_DIR", "off")


def test_claim_result_helpers():
    assert C.ClaimResult.close(1.0 + 1e-9, 1.0, atol=1e-8).passed
    assert not C.ClaimResult.close(1.1, 1.0, rtol=0.05).passed
    assert not C.ClaimResult.close(float("nan"), 1.0, atol=1.0).passed
    assert C.ClaimResult.at_most(0.1, 0.2).passed and not C.ClaimResult.at_most(0.3, 0.2).passed
    assert C.ClaimResult.at_least(3.0, 2.0).passed and not C.ClaimResult.at_least(1.0, 2.0).passed


def test_run_claims_reports_failures_and_exceptions():
    @C.claim(area="_test", paper="gretton2012mmd")
    def good():
        return C.ClaimResult.close(1.0, 1.0)

    @C.claim(area="_test", paper="gretton2012mmd")
    def broken():
        raise RuntimeError("boom")

    out = C.run_claims(C.registered("_test"))
    assert [o.passed for o in out] == [True, False]
    assert "boom" in out[1].error


def test_claims_run_checks_as_nan_so_their_programs_are_cacheable(monkeypatch):
    """Inside run_claims, a failing run-time check of a jitted program gives NaN (the claim fails, no exception)
    and the program has no host callback (so JAX's persistent cache can store it); outside, it raises; with
    EQX_ON_ERROR set, the user's mode wins."""
    from jaxlab.core.validation import check_positive

    def make():  # a fresh program per call: the check mode is read when it is traced
        return jax.jit(lambda x: 2.0 * check_positive(x, "x"))

    @C.claim(area="_test_nan_checks", paper="gretton2012mmd")
    def bad_input():
        y = make()(jnp.asarray(-1.0))
        return C.ClaimResult.close(y, -2.0)

    @C.claim(area="_test_nan_checks", paper="gretton2012mmd")
    def good_input():
        return C.ClaimResult.close(make()(jnp.asarray(3.0)), 6.0)

    @C.claim(area="_test_nan_checks", paper="gretton2012mmd")
    def no_host_callback():
        hlo = make().lower(jnp.asarray(1.0)).as_text()
        return C.ClaimResult.at_most(float("callback" in hlo), 0.0)

    monkeypatch.delenv("EQX_ON_ERROR", raising=False)
    bad, good, plain = C.run_claims(C.registered("_test_nan_checks"))
    assert not bad.passed and bad.error is None and math.isnan(bad.measured)
    assert good.passed and plain.passed
    with pytest.raises(Exception, match="x must be > 0"):
        jax.block_until_ready(make()(jnp.asarray(-1.0)))  # outside verify: the check raises
    assert "callback" in make().lower(jnp.asarray(1.0)).as_text()
    monkeypatch.setenv("EQX_ON_ERROR", "raise")
    bad, _, _ = C.run_claims(C.registered("_test_nan_checks"))
    assert not bad.passed and "x must be > 0" in bad.error


def test_areas_are_discovered_from_file_names():
    areas = C.discover_areas()
    assert areas["core"] == "jaxlab.core.claims"
    # every area is a package named after it, holding claims.py and papers.py
    for area, module in areas.items():
        assert module.rsplit(".", 2)[-2:] == [area, "claims"], module
        pkg = importlib.util.find_spec(module.rsplit(".", 1)[0])
        assert pkg is not None and pkg.submodule_search_locations, f"{area} is not a package"
        assert (Path(pkg.origin).parent / "papers.py").is_file(), f"{area} has no papers.py"
    with pytest.raises(KeyError, match="unknown area"):
        C.load_area("no_such_area")


def test_list_and_cite_commands(capsys):
    assert cli.main(["list"]) == 0
    assert "core" in capsys.readouterr().out
    assert cli.main(["cite", "mmd2"]) == 0
    assert "A Kernel Two-Sample Test" in capsys.readouterr().out
    assert cli.main(["cite", "no_such_function_anywhere"]) == 2
    assert cli.main(["verify", "no_such_area"]) == 2


def test_list_algorithms(capsys):
    assert cli.main(["list", "--algorithms"]) == 0
    out = capsys.readouterr().out
    for name, spec in algorithms().items():
        assert name in out and spec.factory.__qualname__ in out


def test_citation_registry():
    assert papers_of("jaxlab.kernels.gaussian.ksd")[0].key == "liu2016ksd"
    assert "Stein" in cite("ksd")
    assert {p.key for p in papers_of("jaxlab.kernels.gaussian")} >= {"gretton2012mmd", "liu2016ksd"}
    register_paper("gretton2012mmd", papers_of("gretton2012mmd")[0].bibtex)  # same entry: no-op
    with pytest.raises(ValueError, match="different BibTeX"):
        register_paper("gretton2012mmd", "@misc{x, title={other}}")
    with pytest.raises(KeyError, match="unknown paper key"):
        cites("not_registered")(lambda: None)


def test_verify_json_and_exit_code(tmp_path, monkeypatch):
    @C.claim(area="_cli", paper="gretton2012mmd")
    def passes():
        return C.ClaimResult.at_most(0.0, 1.0)

    monkeypatch.setattr(C, "discover_areas", lambda: {"_cli": "jaxlab.core.verification"})
    path = tmp_path / "out.json"
    assert cli.main(["verify", "_cli", "--jobs", "1", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert rows[0]["claim"] == "passes" and rows[0]["passed"] is True

    @C.claim(area="_cli", paper="gretton2012mmd")
    def fails():
        return C.ClaimResult.at_most(2.0, 1.0)

    assert cli.main(["verify", "_cli", "--jobs", "1"]) == 1
    assert cli.main(["verify", "_cli", "--jobs", "0"]) == 2


def test_parallel_verify_matches_serial_and_survives_a_dead_worker(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # the spawned workers import the fixture by name
    fixture = importlib.import_module("verify_fixture_claims")
    claims = C.registered(fixture.AREA)
    seen = []
    out = C.run_claims_parallel(claims, jobs=2, on_done=seen.append)
    assert [o.claim for o in out] == [c.name for c in claims]  # the order of the claims, not of completion
    assert sorted(o.claim for o in seen) == sorted(c.name for c in claims)  # each reported once, as it arrived
    by = {o.claim: o for o in out}
    assert by["passes"].passed and not by["fails"].passed and by["runs_after_the_crash"].passed
    assert by["negative_result_holds"].verdict == "NOT REPRODUCED" and by["passes"].verdict == "PASS"
    assert by["kills_its_worker"].verdict == "FAIL" and not by["passes"].not_reproduced
    assert by["fails"].error is None and "boom in a worker" in by["raises"].error
    assert not by["kills_its_worker"].passed and "exit code 3" in by["kills_its_worker"].error
    for name in ("passes", "fails", "runs_after_the_crash"):  # in another process, in this process's precision
        assert f"pid={os.getpid()} " not in by[name].details
        assert f"precision={C.precision()}" in by[name].details
    with pytest.raises(ValueError, match="jobs"):
        C.run_claims_parallel(claims, jobs=0)


def test_parallel_verify_fails_the_claims_when_every_worker_dies_at_start(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    fixture = importlib.import_module("verify_fixture_claims")
    monkeypatch.setattr(C, "_worker", fixture.dies_at_start)  # spawn sends the target by name: the workers die
    out = C.run_claims_parallel(C.registered(fixture.AREA), jobs=2)  # returns (no endless respawning)
    assert all(not o.passed and "no worker process was left" in o.error and "code 5" in o.error for o in out)


def test_verify_plan_keeps_areas_together_and_runs_the_longest_first():
    def mk(area, name):
        return C.Claim(area, name, "p", True, lambda: None)

    claims = [mk("a", f"a{i}") for i in range(3)] + [mk("b", f"b{i}") for i in range(8)] + [mk("c", "c0")]
    seconds = {"a:a0": 1.0, "a:a1": 1.0, "a:a2": 1.0, "c:c0": 2.0} | {f"b:b{i}": 10.0 for i in range(8)}
    units = C._plan(claims, 2, seconds)  # total 85 s, 2 workers: pieces of at most 85 / 8 = 10.6 s
    names = [[c.name for c in u] for u in units]
    assert sorted(n for u in names for n in u) == sorted(c.name for c in claims)
    assert names[-2:] == [["a0", "a1", "a2"], ["c0"]]  # short areas stay whole, the longest units go first
    assert all(len(u) == 1 and u[0].startswith("b") for u in names[:-2])  # the 80 s area is cut
    # no timings: every claim counts 1, pieces of at most 12 / 4 = 3 claims
    assert [len(u) for u in C._plan(claims, 1, {})] == [3, 3, 3, 2, 1]


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "jaxlab", "cite", "energy_distance"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "Energy statistics" in out.stdout


def test_version_is_the_installed_one(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out.split()
    assert out == ["jaxlab", metadata.version("jaxlab")]


def _entry_key(bibtex: str) -> str:
    """The citation key written inside a BibTeX entry, parsed independently of the registry."""
    return bibtex.split("{", 1)[1].split(",", 1)[0].strip()


@pytest.mark.parametrize(
    ("name", "bibkey"),
    [
        ("ag_toposcope2026", "toposcope2026"),  # registry key
        ("toposcope2026", "toposcope2026"),  # the key inside the entry
        ("vaswani2017attention", "vaswani2017attention"),  # registered as pe_vaswani2017attention
        ("richard2014statistical", "richard2014statistical"),  # richard2014tensorpca
        ("jacovi2025facts", "jacovi2025facts"),  # jacovi2025factsgrounding
        ("horowitz2014computing", "horowitz2014computing"),  # horowitz2014energy
        ("ma2026evolutionary", "ma2026evolutionary"),  # gen_ma2026evolutionary
        ("jaxlab.kernels.mmd2", "gretton2012kernel"),  # a function by its public dotted name
        ("jaxlab.kernels.gaussian.ksd", "liu2016kernelized"),  # ... and by its defining module
        ("mmd2", "gretton2012kernel"),  # bare function name
    ],
)
def test_cite_accepts_every_form_of_name(capsys, name, bibkey):
    assert cli.main(["cite", name]) == 0
    out = capsys.readouterr().out.strip()
    entries = ["@" + e for e in out.split("\n@")] if out.startswith("@") else []
    assert [_entry_key(e) for e in entries] == [bibkey]


def test_cite_registry_and_bibtex_keys_give_the_same_entry():
    for registry_key, bibkey in [("pe_vaswani2017attention", "vaswani2017attention"),
                                 ("gen_ma2026evolutionary", "ma2026evolutionary")]:
        assert cite(registry_key) == cite(bibkey)
        assert papers_of(bibkey)[0].key == registry_key and papers_of(registry_key)[0].bibkey == bibkey


def test_cite_area_prints_every_paper_of_its_papers_py(capsys):
    import jaxlab.sampling.msip.papers as msip_papers

    expected = {getattr(msip_papers, c) for c in msip_papers.__all__}
    assert {p.key for p in papers_of("msip")} == expected
    assert cli.main(["cite", "msip"]) == 0
    out = capsys.readouterr().out
    keys = {_entry_key(e) for e in out.strip().split("\n\n")}
    assert keys == {p.bibkey for p in papers_of("msip")} and "belhadji2026discretize" in keys
    assert "neal2003slice" in keys  # a paper the area uses but no function of it is tagged with


def test_cite_unknown_name_fails_and_lists_accepted_forms(capsys):
    assert cli.main(["cite", "vaswani2017atention"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "msip" in captured.err and "jaxlab.kernels.mmd2" in captured.err and "BibTeX" in captured.err
    assert "Did you mean: vaswani2017attention" in captured.err
    with pytest.raises(KeyError, match="no paper, area, function or module"):
        papers_of("jaxlab.kernels.no_such_function")


def test_bench_help_lists_the_benchmarks(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    listed = out.split("available benchmarks", 1)[1].split()
    assert "core" in listed and "sampling" in listed
    assert not any(name.startswith("_") for name in listed)  # helpers such as bench/_sampling_msip.py


def test_bench_help_says_so_when_installed_from_a_wheel(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_source_root", lambda: None)
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    assert "wheel" in capsys.readouterr().out
    assert cli.main(["bench", "core"]) == 2


def test_verify_progress_to_a_non_tty_is_plain_lines(capsys, monkeypatch):
    @C.claim(area="_plain", paper="gretton2012mmd")
    def first():
        return C.ClaimResult.at_most(0.0, 1.0)

    @C.claim(area="_plain", paper="gretton2012mmd")
    def second():
        return C.ClaimResult.at_most(2.0, 1.0)

    monkeypatch.setattr(C, "discover_areas", lambda: {"_plain": "jaxlab.core.verification"})
    assert cli.main(["verify", "_plain", "--jobs", "1"]) == 1
    err = capsys.readouterr().err
    assert "\r" not in err and "\033" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("[")]
    assert len(lines) == 2  # one line per completed claim
    assert lines[0].startswith("[1/2] _plain:first PASS") and lines[1].startswith("[2/2] _plain:second FAIL")


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("tty", [False, True])
def test_progress_meter_redraws_only_on_a_terminal(tty):
    stream = _Tty() if tty else io.StringIO()

    def body(carry, i):
        progress_meter(i, 100, label="m", stream=stream)
        return carry + i, None

    jax.jit(lambda: jax.lax.scan(body, 0, jnp.arange(100)))()
    jax.effects_barrier()
    text = stream.getvalue()
    assert "100/100" in text
    if tty:
        assert text.count("\r") == 1 + 20 and text.endswith("\n")  # step 0, then every 5th step
    else:
        assert "\r" not in text
        assert [ln.split()[-3] for ln in text.splitlines()] == ["1/100"] + [f"{d}/100" for d in range(10, 101, 10)]


@pytest.fixture
def restore_x64():
    before = jax.config.read("jax_enable_x64")
    yield
    jax.config.update("jax_enable_x64", before)


def test_verify_dtype_float32_runs_claims_in_float32_and_skips_what_needs_float64(
        tmp_path, capsys, monkeypatch, restore_x64):
    seen = {}

    @C.claim(area="_f32", paper="gretton2012mmd")
    def default_dtype_follows_the_run():
        x = jnp.linspace(0.0, 1.0, 11)
        seen[C.precision()] = str(x.dtype)
        # the sum of 0, 0.1, ..., 1 is 5.5: exact to ~1e-15 in float64, to a few float32 ulps in float32
        return C.ClaimResult.close(jnp.sum(x), 5.5, atol=C.by_precision(1e-13, 4e-6))

    @C.claim(area="_f32", paper="gretton2012mmd", needs_float64="a 1e-10 figure is below float32's resolution")
    def tiny_figure():
        return C.ClaimResult.close(1.0 + jnp.asarray(1e-10), 1.0 + 1e-10, atol=1e-12)

    monkeypatch.setattr(C, "discover_areas", lambda: {"_f32": "jaxlab.core.verification"})
    path = tmp_path / "f32.json"
    assert cli.main(["verify", "_f32", "--dtype", "float32", "--json", str(path), "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    rows = {r["claim"]: r for r in json.loads(path.read_text())}
    assert seen == {"float32": "float32"}
    assert rows["default_dtype_follows_the_run"]["passed"] is True
    assert rows["default_dtype_follows_the_run"]["tolerance"] == pytest.approx(4e-6)
    assert rows["tiny_figure"]["skipped"] == "a 1e-10 figure is below float32's resolution"
    assert rows["tiny_figure"]["passed"] is False and rows["tiny_figure"]["measured"] is None
    assert {r["dtype"] for r in rows.values()} == {"float32"}
    assert "1 passed, 0 failed, 1 skipped" in out and "SKIP" in out
    assert "tiny_figure: a 1e-10 figure is below float32's resolution" in out

    # the default run is float64: both claims run, at their float64 tolerances
    assert cli.main(["verify", "_f32", "--json", str(path), "--jobs", "1"]) == 0
    rows = {r["claim"]: r for r in json.loads(path.read_text())}
    assert seen["float64"] == "float64"
    assert all(r["passed"] and r["dtype"] == "float64" and r["skipped"] is None for r in rows.values())
    assert rows["default_dtype_follows_the_run"]["tolerance"] == pytest.approx(1e-13)
    assert "2 passed, 0 failed, 0 skipped" in capsys.readouterr().out


def test_needs_float64_must_give_a_reason():
    with pytest.raises(ValueError, match="needs_float64"):
        C.claim(area="_f32", paper="gretton2012mmd", needs_float64="  ")


def test_verify_reports_documented_negative_results_as_not_reproduced(tmp_path, capsys, monkeypatch):
    @C.claim(area="_neg", paper="gretton2012mmd")
    def holds():
        return C.ClaimResult.at_most(0.0, 1.0)

    @C.claim(area="_neg", paper="gretton2012mmd", expected="not reproduced")
    def paper_gain_is_absent():
        """The paper's gain of 2 is not seen: the measured gain's upper bound stays below 1.2.

        Diagnosis: an invented reason, for the test.
        """
        return C.ClaimResult.at_most(1.1, 1.2, details="gain 1.10 +- 0.02")

    monkeypatch.setattr(C, "discover_areas", lambda: {"_neg": "jaxlab.core.verification"})
    path = tmp_path / "neg.json"
    assert cli.main(["verify", "_neg", "--jobs", "1", "--json", str(path)]) == 0  # a negative result does not fail
    captured = capsys.readouterr()
    assert "1 passed, 1 not reproduced, 0 failed, 0 skipped" in captured.out
    assert "_neg:paper_gain_is_absent NOT REPRODUCED" in captured.err
    assert "_neg:paper_gain_is_absent: gain 1.10 +- 0.02" in captured.out
    rows = {r["claim"]: r for r in json.loads(path.read_text())}
    assert rows["paper_gain_is_absent"]["verdict"] == "NOT REPRODUCED" and rows["paper_gain_is_absent"]["passed"]
    assert rows["holds"]["verdict"] == "PASS" and not rows["holds"]["not_reproduced"]

    assert cli.main(["list", "--negative"]) == 0
    out = capsys.readouterr().out
    assert "_neg:paper_gain_is_absent  (gretton2012mmd)" in out and "Diagnosis: an invented reason" in out
    assert "holds" not in out.split("documented negative results")[0]

    # once the behaviour changes (the check of the negative result fails), the claim is a FAIL and verify exits 1
    @C.claim(area="_neg", paper="gretton2012mmd", expected="not reproduced", name="paper_gain_is_absent")
    def now_reproduces():
        return C.ClaimResult.at_most(2.0, 1.2)

    assert cli.main(["verify", "_neg", "--jobs", "1"]) == 1
    assert "1 passed, 1 failed, 0 skipped" in capsys.readouterr().out


def test_expected_must_be_reproduced_or_not_reproduced():
    with pytest.raises(ValueError, match="expected must be 'reproduced' or 'not reproduced'"):
        C.claim(area="_neg", paper="gretton2012mmd", expected="negative")
