"""C++ (gtest / RapidCheck) citations, carried by test names.

Convention: a suite name containing ``__`` is a citation::

    Suite = <capability>__<requirement-slug>          ('-' written as '_')
    Name  = <scenario-slug> | clause<N> | requirement  ('-' written as '_'),
            optionally followed by __<free suffix> for uniqueness

so ``TEST(core_layout__coalesce_keeps_the_function, merge_contiguous_modes__nested)`` cites
``core-layout/coalesce-keeps-the-function/merge-contiguous-modes``. A ``DISABLED_`` prefix on
the suite or the name is ignored for the mapping. When a scenario slug is literally
``requirement`` or ``clause<N>``, the scenario wins.

Tests are known from gtest XML results (``--gtest_output=xml``) and from a built binary's
``--gtest_list_tests`` output (RapidCheck properties are gtest tests):

* Every ``<testcase>`` of a result file is one case; its suite is the ``classname``
  attribute, else the enclosing ``<testsuite name>``. Outcome: ``failed`` with a
  ``<failure>`` or ``<error>`` child; else ``skipped`` with a ``<skipped>`` child,
  ``status="notrun"`` or a ``result`` other than ``completed``; else ``passed``.
* Parameterisation decorations are removed: ``Prefix/Suite`` and ``Suite/0`` become
  ``Suite``, ``Name/0`` becomes ``Name``. Cases with one ``Suite.Name`` label merge: any
  failure fails the test, otherwise any pass passes it; listed tests have no outcome.
* Unreadable or malformed result files, and a binary that cannot list its tests, raise
  ``ResultsError``.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from strideweave._harness import ids, outcomes
from strideweave._harness.catalog import Catalog, cpp_key, suggestion
from strideweave._harness.citations import CPP, Citation, Drift

_CLAUSE_NAME = re.compile(r"clause([0-9]+)")
_DISABLED = "DISABLED_"


@dataclass(frozen=True)
class CppTest:
    """A gtest-style test ``suite.name`` (undecorated) and the file that told of it."""

    suite: str
    name: str
    path: str | None = None

    @property
    def label(self) -> str:
        return f"{self.suite}.{self.name}"


@dataclass(frozen=True)
class CppResolution:
    """What a C++ test name cites: ``target`` id, a ``problem``, or neither (no citation).

    A clause number past the requirement's clauses has both: the id and the problem."""

    target: str | None = None
    problem: str | None = None


def _strip_disabled(text: str) -> str:
    return text[len(_DISABLED) :] if text.startswith(_DISABLED) else text


def resolve_name(suite: str, name: str, catalog: Catalog) -> CppResolution:
    """Map a test's suite and name to the spec id it cites (see module docstring)."""
    suite = _strip_disabled(suite)
    name = _strip_disabled(name)
    if "__" not in suite:
        return CppResolution()
    requirement = catalog.cpp_requirement(suite)
    if requirement is None:
        return CppResolution(
            problem=f"suite {suite!r} names no known requirement "
            f"(expected <capability>__<requirement_slug>){suggestion(suite, catalog.cpp_suites())}"
        )
    head = name.split("__", 1)[0]
    for scenario in requirement.scenarios:
        if cpp_key(scenario.slug) == head:
            return CppResolution(target=scenario.id)
    if head == "requirement":
        return CppResolution(target=requirement.id)
    clause = _CLAUSE_NAME.fullmatch(head)
    if clause is not None:
        number = int(clause.group(1))
        capability = requirement.id.split("/", 1)[0]
        target = ids.clause_id(capability, requirement.slug, number)
        if 1 <= number <= len(requirement.clauses):
            return CppResolution(target=target)
        return CppResolution(
            target, f"{requirement.id} has {len(requirement.clauses)} clauses, not {number}"
        )
    options = [cpp_key(s.slug) for s in requirement.scenarios]
    return CppResolution(
        problem=f"test name {name!r} names no scenario of {requirement.id} "
        f"(expected a scenario slug, clause<N> or requirement){suggestion(head, options)}"
    )


def cpp_citations(
    tests: Iterable[CppTest], catalog: Catalog, pinned: Collection[str] = ()
) -> tuple[list[Citation], list[Drift]]:
    """Citations of ``tests`` and drift for names that follow the convention but miss.

    A citation of a ``pinned`` clause id that no longer exists is kept (a pin problem)."""
    citations: list[Citation] = []
    drift: list[Drift] = []
    for test in tests:
        resolution = resolve_name(test.suite, test.name, catalog)
        where = test.path or test.label
        if resolution.problem is not None and resolution.target not in pinned:
            drift.append(Drift(where, f"C++ test {test.label}", resolution.problem))
        elif resolution.target is not None:
            citations.append(Citation(resolution.target, test.label, CPP))
    return citations, drift


class ResultsError(ValueError):
    """A C++ result file or directory cannot be read."""


@dataclass(frozen=True)
class GtestCase:
    """One executed (or skipped) test case: the undecorated test and its outcome."""

    test: CppTest
    outcome: str


def undecorate_suite(suite: str) -> str:
    """``Prefix/Suite`` -> ``Suite``; ``Suite/0`` -> ``Suite``; ``Prefix/Suite/0`` -> ``Suite``."""
    parts = suite.split("/")
    while len(parts) > 1 and parts[-1].isdigit():
        parts.pop()
    return parts[-1]


def undecorate_name(name: str) -> str:
    """``Name/0`` (or ``Name/param_name``) -> ``Name``."""
    return name.split("/", 1)[0]


def _case_outcome(case: ET.Element) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return outcomes.FAILED
    skipped = case.find("skipped") is not None or case.get("status") == "notrun"
    if skipped or case.get("result") not in (None, "completed"):
        return outcomes.SKIPPED
    return outcomes.PASSED


def parse_gtest_xml(path: Path) -> list[GtestCase]:
    """All test cases of one gtest XML file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as error:
        raise ResultsError(f"{path}: cannot read gtest XML: {error}") from error
    cases: list[GtestCase] = []

    def walk(element: ET.Element, suite: str | None) -> None:
        for child in element:
            if child.tag == "testsuite":
                walk(child, child.get("name"))
            elif child.tag == "testcase":
                owner = child.get("classname") or suite
                name = child.get("name")
                if not owner or not name:
                    raise ResultsError(f"{path}: <testcase> without suite or name")
                test = CppTest(undecorate_suite(owner), undecorate_name(name), str(path))
                cases.append(GtestCase(test, _case_outcome(child)))

    if root.tag not in ("testsuites", "testsuite"):
        raise ResultsError(f"{path}: expected <testsuites> or <testsuite> as root element")
    walk(root, root.get("name") if root.tag == "testsuite" else None)
    return cases


def load_gtest_results(location: Path) -> list[GtestCase]:
    """Cases from every ``*.xml`` in directory ``location`` (sorted), or from one file."""
    location = Path(location)
    if location.is_file():
        return parse_gtest_xml(location)
    if not location.is_dir():
        raise ResultsError(f"C++ results location {location} does not exist")
    cases: list[GtestCase] = []
    for path in sorted(location.glob("*.xml")):
        cases.extend(parse_gtest_xml(path))
    return cases


def parse_test_list(listing: str, source: str) -> list[CppTest]:
    """Tests in ``--gtest_list_tests`` output (``Suite.`` lines, then indented names),
    undecorated like result files; ``source`` names the binary."""
    tests: list[CppTest] = []
    suite = None
    for line in listing.splitlines():
        text = line.split("#", 1)[0].rstrip()
        if not text.strip():
            continue
        if not line[0].isspace():
            suite = undecorate_suite(text.rstrip("."))
        elif suite is not None:
            tests.append(CppTest(suite, undecorate_name(text.strip()), source))
    return tests


def list_gtest_binary(binary: Path) -> list[CppTest]:
    """The tests a gtest binary declares (it runs none); raise ``ResultsError`` if it fails."""
    try:
        listed = subprocess.run(
            [str(binary), "--gtest_list_tests"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise ResultsError(f"gtest binary {binary}: cannot run: {error}") from error
    if listed.returncode != 0:
        raise ResultsError(
            f"gtest binary {binary}: --gtest_list_tests exited {listed.returncode}: "
            f"{listed.stderr.strip()}"
        )
    return parse_test_list(listed.stdout, str(binary))


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
