"""carrier-storage: the carrier conformance kit (``python -m strideweave.kit``), run as a
user runs it, in a child interpreter: on every built-in carrier, on a carrier that breaks
a clause, and as a pytest plugin in another suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import strideweave as sw
from conformance.carrier_storage.broken_carriers import BROKEN
from conformance.harness.evidence import collect_python
from strideweave import kit
from strideweave._harness.catalog import Catalog
from strideweave._harness.openspec import load_specs
from strideweave._harness.pins import pin_problems, read_lock

KIT = "carrier-storage/a-conformance-kit-checks-a-carrier-class"
LIKE = "carrier-storage/new-like-creates-an-empty-carrier-of-the-same-exact-class#1"
BUILTINS = ("CPU", "Generic", "Metal", "FileBacked", "BlockDeviceCarrier")
TIMEOUT = 600
REPO = Path(__file__).resolve().parents[2]


def run(args: list[str], cwd: Path, *extra_path: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd`` with this interpreter's import path, plus ``extra_path``."""
    path = [str(p) for p in extra_path] + [p for p in sys.path if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def carriers_module(directory: Path) -> Path:
    """A module of carrier factories a user would write: a CPU subclass whose new_like
    returns a plain CPU carrier (a contract a Python subclass can break)."""
    (directory / "user_carriers.py").write_text(
        textwrap.dedent(
            """
            import strideweave as sw

            class PlainLike(sw.CPU):
                def new_like(self):
                    return sw.CPU(self.dtype)
            """
        )
    )
    return directory


@pytest.mark.spec(f"{KIT}/kit-passes-on-every-built-in-carrier", f"{KIT}#1", f"{KIT}#2", f"{KIT}#4")
@pytest.mark.parametrize("name", BUILTINS)
def test_kit_passes_on_every_built_in_carrier(name, tmp_path):
    html, markdown = tmp_path / "kit.html", tmp_path / "kit.md"
    result = run(
        [
            "-m",
            "strideweave.kit",
            f"strideweave:{name}",
            "--html",
            str(html),
            "--markdown",
            str(markdown),
        ],
        tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"strideweave carrier kit: strideweave:{name}" in output
    for capability in kit.CAPABILITIES:
        assert f"\n{capability}: " in output, output
    assert " failed" not in output and "failing" not in output
    # The reports name the scenarios the checks cover, with the harness's writers.
    scenario = (
        "carrier-storage/range-entry-points-read-and-write-consecutive-slots/write-and-read-a-range"
    )
    assert scenario in html.read_text() and "<!DOCTYPE html>" in html.read_text()
    assert "carrier-storage" in markdown.read_text()
    # Nothing is left in the directory the kit ran in but the reports asked for.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kit.html", "kit.md"]


@pytest.mark.spec(f"{KIT}/kit-reports-the-clause-a-carrier-breaks", f"{KIT}#2", f"{KIT}#3")
def test_kit_reports_the_clause_a_carrier_breaks(tmp_path):
    result = run(
        ["-m", "strideweave.kit", "user_carriers:PlainLike"], tmp_path, carriers_module(tmp_path)
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"{LIKE}: {kit.clause_text(LIKE)}" in output
    assert "observed: new_like gave CPU(Float32)" in output
    assert "test_create_a_like_carrier_from_a_released_carrier" in output


@pytest.mark.spec(f"{KIT}/kit-passes-on-a-python-storage-carrier", f"{KIT}#4")
@pytest.mark.parametrize("name", ["BytesCarrier", "AsyncBytesCarrier"])
def test_kit_passes_on_a_python_storage_carrier(name, tmp_path):
    reference = f"conformance.carrier_storage.python_carriers:{name}"
    result = run(["-m", "strideweave.kit", reference], tmp_path, REPO)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert " failed" not in output and " passed" in output


@pytest.mark.spec(f"{KIT}#4")
def test_the_documented_50_line_carrier_passes_the_kit(tmp_path):
    """docs/carrier-kit.md's example, run as written: its own demo, then the kit."""
    doc = (REPO / "docs" / "carrier-kit.md").read_text()
    code = doc.split("```python\n# my_carriers.py\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) <= 50
    (tmp_path / "my_carriers.py").write_text(code)
    demo = run(["my_carriers.py"], tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.startswith("[1.0, 2.0, 3.0] [[1.0, 2.0], [3.0, 4.0]] <NumpyCarrier")
    result = run(["-m", "strideweave.kit", "my_carriers:NumpyCarrier"], tmp_path, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and " failed" not in output, output


@pytest.mark.spec(f"{KIT}/kit-fails-each-broken-example-carrier", f"{KIT}#5")
@pytest.mark.parametrize(("name", "clause"), sorted(BROKEN.items()))
def test_kit_fails_each_broken_example_carrier(name, clause, tmp_path):
    reference = f"conformance.carrier_storage.broken_carriers:{name}"
    result = run(["-m", "strideweave.kit", reference], tmp_path, REPO)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert clause in output, output[-4000:]


def test_there_are_at_least_ten_broken_example_carriers():
    assert len(BROKEN) >= 10


@pytest.mark.spec(f"{KIT}#1")
def test_the_plugin_runs_the_checks_in_another_suite(tmp_path):
    """A team's suite: its own (empty) configuration, the plugin and the checks by name."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    args = ["-m", "pytest", "-p", "strideweave.kit.plugin", "-p", "no:cacheprovider", "-q"]
    args += ["-c", str(tmp_path / "pytest.ini"), "--pyargs", "strideweave.kit.checks"]
    passing = run([*args, "--strideweave-carrier", "strideweave:Generic"], tmp_path)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "strideweave carrier kit: strideweave:Generic" in passing.stdout
    failing = run(
        [*args, "--strideweave-carrier", "user_carriers:PlainLike"],
        tmp_path,
        carriers_module(tmp_path),
    )
    assert failing.returncode == 1 and LIKE in failing.stdout


@pytest.mark.spec(f"{KIT}#1")
def test_refuse_a_reference_that_names_no_factory(tmp_path):
    for reference in (
        "no_colon",
        "strideweave:NoSuchCarrier",
        "no_such_module:X",
        "strideweave:__name__",
    ):
        result = run(["-m", "strideweave.kit", reference], tmp_path)
        assert result.returncode == 2 and reference in result.stderr, result.stderr


@pytest.mark.spec(f"{KIT}#6")
def test_the_kit_reads_the_clauses_of_the_shipped_or_the_source_specs():
    """Installed, the package holds the spec files (CMakeLists.txt installs them); in the
    source tree the kit reads spec/. Either way the text is the repository's."""
    root = Path(__file__).resolve().parents[2]
    package = Path(sw.__file__).resolve().parent
    for capability in kit.CAPABILITIES:
        path = kit.spec_path(capability)
        expected = package / "spec" / capability / "spec.md"
        if not expected.is_file():
            expected = package.parents[2] / "spec" / capability / "spec.md"
        assert path == expected
        assert path.read_text() == (root / "spec" / capability / "spec.md").read_text()
    assert kit.clause_text(LIKE).startswith("new_like() SHALL return a new, empty")


@pytest.mark.spec(f"{KIT}#3")
def test_the_checks_cite_pinned_clauses_of_the_current_specs():
    """The checks sit outside this suite's test folders, so the harness's own drift and pin
    checks do not see them: a clause whose number or text changed must be caught here,
    since a check's failure names the clause by its citation."""
    root = Path(__file__).resolve().parents[2]
    catalog = Catalog(load_specs(root / "spec"))
    pins = read_lock(root / "spec" / "clauses.lock")
    checks = Path(kit.__file__).resolve().parent / "checks"
    citations, drift = collect_python(root, [checks], catalog, pins)
    assert [str(d) for d in drift] == []
    assert {c.target.split("/")[0] for c in citations} == set(kit.CAPABILITIES)
    assert pin_problems(citations, catalog, pins) == []
