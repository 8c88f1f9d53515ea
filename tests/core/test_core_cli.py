import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlab import cli
from jaxlab.core import algorithms
from jaxlab.core import verification as C
from jaxlab.core.citations import cite, cites, papers_of, register_paper


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
    assert cli.main(["verify", "_cli", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert rows[0]["claim"] == "passes" and rows[0]["passed"] is True

    @C.claim(area="_cli", paper="gretton2012mmd")
    def fails():
        return C.ClaimResult.at_most(2.0, 1.0)

    assert cli.main(["verify", "_cli"]) == 1


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "jaxlab", "cite", "energy_distance"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "Energy statistics" in out.stdout
