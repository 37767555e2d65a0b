"""Evidence: which tests cite which ids, from what pytest and gtest already know.

* ``load_project`` reads a project's specs, strict ids (capabilities and requirements),
  clause pins and C++ evidence (raising ``SpecError``, ``ConfigError`` or ``ResultsError``);
  ``failures`` turns drift and pin mismatches into the messages that fail a run or ``check``.
* Python: the ``spec`` marks of collected pytest items. ``collect_python`` runs pytest's
  collection in-process (``--collect-only``; nothing runs) for tests outside the current
  session and for ``python -m conformance.harness``. A module that fails to collect is
  drift naming the module and the error's last line.
* C++: gtest XML results and binaries' test lists, see ``cpp``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from strideweave._harness.catalog import Catalog
from strideweave._harness.citations import Citation, Drift, mark_citations
from strideweave._harness.config import (
    MachineSkip,
    ProjectConfig,
    load_project_config,
    selects,
    strict_ids,
)
from strideweave._harness.openspec import load_specs
from strideweave._harness.pins import Pin, pin_failure, pin_problems, read_lock

from .cpp import CppEvidence, read_cpp


@dataclass(frozen=True)
class Project:
    config: ProjectConfig
    catalog: Catalog
    strict: frozenset[str]
    pins: Mapping[str, Pin]
    cpp: CppEvidence


def load_project(
    root: Path, strict: str, cpp_results: Path | None, binaries: Sequence[Path]
) -> Project:
    config = load_project_config(root)
    catalog = Catalog(load_specs(config.spec_root, relative_to=root))
    pins = read_lock(config.lock_path)
    requirements = {spec.capability: [r.id for r in spec.requirements] for spec in catalog.specs}
    strict_set = strict_ids(strict, config.complete, config.complete_requirements, requirements)
    return Project(
        config, catalog, strict_set, pins, read_cpp(catalog, cpp_results, binaries, pins)
    )


def failures(
    project: Project,
    citations: Iterable[Citation],
    drift: Iterable[Drift],
    every_test_known: bool = True,
) -> list[str]:
    """A message for the drift (with the C++ drift), one for the pin mismatches and one for
    wrongly declared machine-dependent skips, if any. The last needs every test's
    citations: a session that collected only some tests passes ``every_test_known=False``."""
    messages = []
    lines = [f"  {d}" for d in (*drift, *project.cpp.drift)]
    if lines:
        messages.append(
            "spec citation drift (tests citing ids no spec defines):\n" + "\n".join(lines)
        )
    every = (*citations, *project.cpp.citations)
    problems = pin_problems(every, project.catalog, project.pins)
    if problems:
        messages.append(pin_failure(problems, project.config.lock_path))
    skips = machine_skip_problems(project.config.machine_skips, every) if every_test_known else []
    if skips:
        messages.append(
            "machine-dependent skips declared wrongly (pyproject.toml, machine_skips):\n"
            + "\n".join(f"  {problem}" for problem in skips)
        )
    return messages


def machine_skip_problems(skips: Iterable[MachineSkip], citations: Iterable[Citation]) -> list[str]:
    """What is wrong with the declared machine-dependent skips: a test or fallback that
    cites nothing known, or a fallback that does not cite every id its test cites."""
    cited: dict[str, set[str]] = {}
    for citation in citations:
        cited.setdefault(citation.test, set()).add(citation.target)

    def ids(pattern: str) -> set[str] | None:
        found = [targets for test, targets in cited.items() if selects(pattern, test)]
        return set().union(*found) if found else None

    problems = []
    for skip in skips:
        test, fallback = ids(skip.test), ids(skip.fallback)
        for role, name, found in (("test", skip.test, test), ("fallback", skip.fallback, fallback)):
            if found is None:
                problems.append(f"{role} {name} is no test that cites a spec id")
        uncovered = sorted((test or set()) - (fallback or set()))
        if test is not None and fallback is not None and uncovered:
            problems.append(
                f"fallback {skip.fallback} of {skip.test} does not cite {', '.join(uncovered)}"
            )
    return problems


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
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        status = pytest.main([*args, *existing], plugins=[collector])
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if path and Path(path).resolve().is_relative_to(root.resolve()):
            del sys.modules[name]
    citations: list[Citation] = []
    drift = list(collector.errors)
    if status in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR):
        # Before any module: a conftest.py that does not import (usually the extension
        # is not installed) or a bad option; its last line says which.
        lines = [line.strip() for line in output.getvalue().splitlines() if line.strip()]
        where = " ".join(existing)
        drift.append(
            Drift(where, where, f"collection failed: {lines[-1] if lines else f'exit {status}'}")
        )
    for nodeid, marks in collector.items:
        if nodeid.split("::", 1)[0] in skip_modules:
            continue
        found, problems = mark_citations(nodeid, marks, catalog, pinned)
        citations += found
        drift += [Drift(nodeid, nodeid, problem) for problem in problems]
    return citations, drift
