"""Evidence: which tests cite which ids, from what pytest and gtest already know.

* Python: the ``spec`` marks of collected pytest items. ``collect_python`` runs pytest's
  collection in-process (``--collect-only``; nothing runs) for tests outside the current
  session and for ``python -m conformance.harness``. A module that fails to collect is
  drift naming the module and the error's last line.
* C++: the tests of gtest XML results (with outcomes) and of gtest binaries'
  ``--gtest_list_tests`` (bound, without outcomes), see ``cpp`` for the naming convention.
  Several cases with one undecorated label (parameter instances) are merged: any failure
  fails the test, otherwise any pass passes it.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import outcomes
from .catalog import Catalog
from .citations import PYTHON, Citation, Drift
from .cpp import CppTest, cpp_citations
from .gtest_xml import list_gtest_binary, load_gtest_results


@dataclass(frozen=True)
class CppEvidence:
    """C++ outcomes by undecorated ``Suite.Name`` label, the citations and the drift."""

    outcomes: Mapping[str, str] = field(default_factory=dict)
    citations: tuple[Citation, ...] = ()
    drift: tuple[Drift, ...] = ()


def read_cpp(
    catalog: Catalog,
    results: Path | None,
    binaries: Sequence[Path] = (),
    pinned: Collection[str] = (),
) -> CppEvidence:
    """Evidence from the gtest XML at ``results`` (directory or file) and ``binaries``.

    Raises ``ResultsError`` for unreadable results or a binary that cannot list its tests.
    """
    grouped: dict[str, list[str]] = {}
    tests: dict[str, CppTest] = {}
    for case in load_gtest_results(results) if results is not None else ():
        grouped.setdefault(case.test.label, []).append(case.outcome)
        tests.setdefault(case.test.label, case.test)
    for binary in binaries:
        for test in list_gtest_binary(binary):
            tests.setdefault(test.label, test)
    merged = {label: outcomes.merge_instances(found) for label, found in grouped.items()}
    citations, drift = cpp_citations(tests.values(), catalog, pinned)
    return CppEvidence(
        {label: outcome for label, outcome in merged.items() if outcome is not None},
        tuple(citations),
        tuple(drift),
    )


def mark_citations(
    nodeid: str, marks: Iterable[pytest.Mark], catalog: Catalog, pinned: Collection[str] = ()
) -> tuple[list[Citation], list[str]]:
    """The citations one item's ``spec`` marks make, and what is wrong with the others.

    A citation of a ``pinned`` clause id that no longer exists is kept (a pin problem).
    """
    citations: list[Citation] = []
    problems: list[str] = []
    for mark in marks:
        if mark.kwargs:
            problems.append("pytest.mark.spec takes no keyword arguments")
        if not mark.args:
            problems.append("pytest.mark.spec() names no id")
        for target in mark.args:
            problem = catalog.citation_problem(target)
            if problem is not None and not (isinstance(target, str) and target in pinned):
                problems.append(f"cites {problem}")
            else:
                citations.append(Citation(target, nodeid, PYTHON))
    return citations, problems


class EvidenceCollector:
    """A plugin for a collection-only run: records every item's ``spec`` marks.

    The harness plugin stays passive in a run holding one (it only registers the marker).
    """

    def __init__(self) -> None:
        self.items: list[tuple[str, list[pytest.Mark]]] = []
        self.errors: list[Drift] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
            message = f"collection failed: {lines[-1].strip() if lines else 'error'}"
            self.errors.append(Drift(report.nodeid, report.nodeid, message))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = [(item.nodeid, list(item.iter_markers("spec"))) for item in session.items]


def collect_python(
    root: Path,
    paths: Sequence[Path],
    catalog: Catalog,
    pinned: Collection[str] = (),
    skip_modules: Collection[str] = (),
) -> tuple[list[Citation], list[Drift]]:
    """Citations and drift of the pytest items collected from ``paths`` (in-process).

    Items of modules in ``skip_modules`` (node ids, e.g. already collected) are ignored.
    Modules under ``root`` first imported by this collection are forgotten afterwards, so
    another project's test file of the same name can be collected later in this process.
    """
    existing = [str(path) for path in paths if path.exists()]
    if not existing:
        return [], []
    collector = EvidenceCollector()
    args = ["--collect-only", "-qq", "-p", "no:cacheprovider", "--rootdir", str(root)]
    before = set(sys.modules)
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main([*args, *existing], plugins=[collector])
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if path and Path(path).resolve().is_relative_to(root.resolve()):
            del sys.modules[name]
    citations: list[Citation] = []
    drift = list(collector.errors)
    for nodeid, marks in collector.items:
        if nodeid.split("::", 1)[0] in skip_modules:
            continue
        found, problems = mark_citations(nodeid, marks, catalog, pinned)
        citations += found
        drift += [Drift(nodeid, nodeid, problem) for problem in problems]
    return citations, drift
