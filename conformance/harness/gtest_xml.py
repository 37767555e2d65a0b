"""Reading gtest XML result files (``--gtest_output=xml``) and test binaries' test lists.

Guarantees:

* Every ``<testcase>`` anywhere in the document yields one ``GtestCase``; the suite is the
  ``classname`` attribute, else the enclosing ``<testsuite name>``.
* Parameterisation decorations are removed: ``Prefix/Suite`` and ``Suite/0`` become
  ``Suite``, ``Name/0`` becomes ``Name``.
* Outcome: ``failed`` if the case has a ``<failure>`` or ``<error>`` child; else
  ``skipped`` if it has a ``<skipped>`` child, ``status="notrun"`` or a ``result`` other
  than ``completed``; else ``passed``.
* Unreadable or malformed files raise ``ResultsError`` naming the file.
* ``list_gtest_binary`` runs a binary with ``--gtest_list_tests`` (no test runs) and
  undecorates its tests the same way; a binary that cannot run raises ``ResultsError``.
"""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from . import outcomes
from .cpp import CppTest


class ResultsError(ValueError):
    """A C++ result file or directory cannot be read."""


@dataclass(frozen=True)
class GtestCase:
    """One executed (or skipped) test case from a result file."""

    suite: str
    name: str
    outcome: str
    message: str | None
    source: str

    @property
    def test(self) -> CppTest:
        """The undecorated test, located at its result file."""
        return CppTest(self.suite, self.name, self.source)


def undecorate_suite(suite: str) -> str:
    """``Prefix/Suite`` -> ``Suite``; ``Suite/0`` -> ``Suite``; ``Prefix/Suite/0`` -> ``Suite``."""
    parts = suite.split("/")
    while len(parts) > 1 and parts[-1].isdigit():
        parts.pop()
    return parts[-1]


def undecorate_name(name: str) -> str:
    """``Name/0`` (or ``Name/param_name``) -> ``Name``."""
    return name.split("/", 1)[0]


def _case_outcome(case: ET.Element) -> tuple[str, str | None]:
    for tag in ("failure", "error"):
        problem = case.find(tag)
        if problem is not None:
            message = problem.get("message") or (problem.text or "").strip() or tag
            return outcomes.FAILED, message
    skipped = case.find("skipped")
    if skipped is not None:
        return outcomes.SKIPPED, skipped.get("message") or None
    if case.get("status") == "notrun":
        return outcomes.SKIPPED, "not run"
    result = case.get("result")
    if result is not None and result != "completed":
        return outcomes.SKIPPED, result
    return outcomes.PASSED, None


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
                outcome, message = _case_outcome(child)
                cases.append(
                    GtestCase(
                        undecorate_suite(owner),
                        undecorate_name(name),
                        outcome,
                        message,
                        str(path),
                    )
                )

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
