"""The fuzz suite: no input crashes strideweave, and every failure is a documented exception.

Each target of ``property_tests/fuzz.py`` (one per public entry point, one per class for
its properties) is a test here. The targets run in child processes
(``python -m property_tests.fuzz``), all selected targets in one child so the imports are
paid once; when a child dies (a segfault, an abort, the watchdog of a hung call) the
target it was running fails with the signal and the reproducer of its last call, and a
new child runs the targets after it.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

from property_tests import fuzz
from strideweave.kit import strategies as S


def _outcome_text(code: int) -> str:
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exited with status {code}"


def run_targets(names: list[str], report: pathlib.Path, root: pathlib.Path) -> dict[str, str]:
    """Runs ``names`` in children until each has an outcome; returns name -> failure text."""
    failures: dict[str, str] = {}
    remaining = list(names)
    while remaining:
        for stale in ("results", "current", "repro"):
            (report / stale).unlink(missing_ok=True)
        child = subprocess.run(
            [sys.executable, "-m", "property_tests.fuzz", str(report), *remaining],
            cwd=root,
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},
            capture_output=True,
            text=True,
            check=False,
        )
        results = report / "results"
        lines = results.read_text(encoding="utf-8").splitlines() if results.exists() else []
        finished = dict(line.split("\t") for line in lines)
        for name, outcome in finished.items():
            if outcome == "failed":
                failures[name] = (report / f"{name}.txt").read_text(encoding="utf-8")
        remaining = [n for n in remaining if n not in finished]
        if child.returncode == 0 and not remaining:
            break
        current = report / "current"
        if not current.exists():
            raise RuntimeError(f"the fuzz child failed to start:\n{child.stderr[-4000:]}")
        crashed = current.read_text(encoding="utf-8")
        repro = report / "repro"
        last_call = repro.read_text(encoding="utf-8") if repro.exists() else "(none recorded)"
        failures[crashed] = (
            f"{crashed}: the process {_outcome_text(child.returncode)} "
            f"(a crash, or the watchdog after {fuzz.WATCHDOG_SECONDS} s)\n"
            f"reproducer (last call): {last_call}\n"
            f"stderr tail:\n{child.stderr[-3000:]}"
        )
        remaining = remaining[remaining.index(crashed) + 1 :]
    return failures


@pytest.fixture(scope="session")
def fuzz_failures(request, tmp_path_factory) -> dict[str, str]:
    selected = [
        item.callspec.params["target"]
        for item in request.session.items
        if item.originalname == "test_target_survives_arbitrary_arguments"
    ]
    report = tmp_path_factory.mktemp("fuzz")
    return run_targets(selected, report, request.config.rootpath)


@pytest.mark.parametrize("target", fuzz.target_names())
def test_target_survives_arbitrary_arguments(target, fuzz_failures):
    if target in fuzz_failures:
        pytest.fail(fuzz_failures[target], pytrace=False)


def test_every_public_name_has_a_fuzz_target():
    public = fuzz.public_entry_points()
    covered = fuzz.covered_entry_points()
    assert sorted(public - covered) == [], "public entry points without a fuzz target"
    assert sorted(covered - public) == [], "fuzz targets of names strideweave no longer has"
    import strideweave as sw

    assert all(hasattr(sw, name) for name in fuzz.NEEDS_NO_TARGET)


def test_a_crash_names_the_target_and_its_reproducer(tmp_path, request):
    """The crash path itself: a target that kills its process fails alone, with its input,
    and the targets after it still run in a new process."""
    failures = run_targets(
        ["Layout.__repr__", fuzz.CRASH_PROBE, "DType.__repr__"], tmp_path, request.config.rootpath
    )
    assert list(failures) == [fuzz.CRASH_PROBE], failures
    assert "killed by SIGABRT" in failures[fuzz.CRASH_PROBE]
    assert "os.abort()" in failures[fuzz.CRASH_PROBE]


NONE_AS_SELF = """
import types

import strideweave as sw
from property_tests import fuzz

for entry in sorted(fuzz.ENTRY_POINTS):
    owner, _, member = entry.rpartition(".")
    cls = fuzz.resolve(owner) if owner else None
    attribute = vars(cls).get(member) if isinstance(cls, type) else None
    if attribute is None or member == "__init__" or isinstance(attribute, staticmethod):
        continue
    if isinstance(attribute, types.FunctionType):  # written in Python: no C++ self
        continue
    print(entry, flush=True)
    try:
        getattr(cls, member)(None)
    except TypeError:
        continue
    raise AssertionError(f"{entry} accepted None as self")

for class_name in sorted(fuzz.PROPERTY_READERS):
    cls = fuzz.resolve(class_name)
    for name in fuzz.property_names(class_name):
        attribute = next(
            (vars(k)[name] for k in cls.__mro__ if name in vars(k)), None
        )
        if not isinstance(attribute, property):  # static properties take no self
            continue
        if isinstance(attribute.fget, types.FunctionType):  # written in Python: no C++ self
            continue
        print(f"{class_name}.{name}", flush=True)
        try:
            attribute.fget(None)
        except TypeError:
            continue
        raise AssertionError(f"{class_name}.{name} accepted None as self")
"""


def test_methods_and_properties_refuse_none_as_self(request):
    """Regression: methods and read-only properties bound from member function pointers
    took None as a null self (``sw.Layout.is_injective(None)`` and
    ``sw.Layout.size.fget(None)`` segfaulted)."""
    child = subprocess.run(
        [sys.executable, "-c", NONE_AS_SELF],
        cwd=request.config.rootpath,
        capture_output=True,
        text=True,
        check=False,
    )
    last = child.stdout.splitlines()[-1:] or ["(none)"]
    assert child.returncode == 0, (
        f"{_outcome_text(child.returncode)} at {last[0]}:\n{child.stderr[-2000:]}"
    )


@pytest.mark.parametrize("container", [tuple, list])
def test_a_reproducer_describes_deeply_nested_values_in_any_position(container):
    """A fuzz case's reproducer (its repr) must not recurse through a deep value: a slice
    whose bound was one made ``repr(case)`` raise RecursionError, failing the target."""
    deep = S.nest(2, 30_000, container)
    for value in (deep, slice(deep), slice(1, deep, 2), (1, slice(None, deep)), {"k": deep}):
        text = S.describe(value)
        assert "nest(" in text and len(text) < 100, text
        # The reproducer rebuilds the value (compared through its description: == on a
        # 30,000-deep value would itself recurse too deep).
        assert S.describe(eval(text, {"nest": S.nest, "slice": slice})) == text
