"""Evidence gathered outside pytest's collection: source scans and C++ result files.

``scan_project`` never raises for test sources (unreadable files are skipped);
``read_cpp_results`` raises ``ResultsError`` for unreadable result files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import outcomes
from .catalog import Catalog
from .citations import Citation, Drift, scan_python_citations
from .config import ProjectConfig
from .cpp import cpp_citations, scan_cpp_tests
from .gtest_xml import load_gtest_results


@dataclass(frozen=True)
class StaticScan:
    """Citations found in source.

    ``python`` holds every literal Python citation, valid or not (callers decide which files
    to check, see ``citations.check_citations``); ``cpp`` holds resolved C++ citations and
    ``cpp_drift`` the C++ names that follow the convention but cite nothing known.
    """

    python: tuple[Citation, ...]
    cpp: tuple[Citation, ...]
    cpp_drift: tuple[Drift, ...]


@dataclass(frozen=True)
class CppResults:
    """C++ outcomes by undecorated ``Suite.Name`` label, with the citations those names make."""

    outcomes: Mapping[str, str]
    citations: tuple[Citation, ...]
    drift: tuple[Drift, ...]


def scan_project(config: ProjectConfig, catalog: Catalog) -> StaticScan:
    """Scan the project's Python and C++ test sources for citations."""
    python = scan_python_citations(config.root, config.python_test_dirs)
    cpp, drift = cpp_citations(
        scan_cpp_tests(config.root, config.cpp_test_dirs), catalog, static=True
    )
    return StaticScan(tuple(python), tuple(cpp), tuple(drift))


def read_cpp_results(location: Path, catalog: Catalog) -> CppResults:
    """Outcomes and citations from gtest XML at ``location`` (directory or file).

    Several cases with one undecorated label (parameter instances) are merged: any failure
    fails the test, otherwise any pass passes it.
    """
    cases = load_gtest_results(location)
    grouped: dict[str, list[str]] = {}
    first_case = {}
    for case in cases:
        grouped.setdefault(case.test.label, []).append(case.outcome)
        first_case.setdefault(case.test.label, case.test)
    merged = {label: outcomes.merge_instances(found) for label, found in grouped.items()}
    citations, drift = cpp_citations(first_case.values(), catalog, static=False)
    return CppResults(
        {label: outcome for label, outcome in merged.items() if outcome is not None},
        tuple(citations),
        tuple(drift),
    )
