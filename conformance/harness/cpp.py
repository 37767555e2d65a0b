"""C++ (gtest / RapidCheck) citations, carried by test names.

Convention: a suite name containing ``__`` is a citation::

    Suite = <capability>__<requirement-slug>          ('-' written as '_')
    Name  = <scenario-slug> | clause<N> | requirement  ('-' written as '_'),
            optionally followed by __<free suffix> for uniqueness

so ``TEST(core_layout__coalesce_keeps_the_function, merge_contiguous_modes__nested)`` cites
``core-layout/coalesce-keeps-the-function/merge-contiguous-modes``. A ``DISABLED_`` prefix on
the suite or the name is ignored for the mapping. When a scenario slug is literally
``requirement`` or ``clause<N>``, the scenario wins.

The static scan reads every ``*.cc`` file below the given directories, blanks out comments
(keeping line numbers), and finds ``TEST``, ``TEST_F``, ``TEST_P``, ``TYPED_TEST``,
``TYPED_TEST_P``, ``RC_GTEST_PROP`` and ``RC_GTEST_FIXTURE_PROP`` declarations.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import ids
from .catalog import Catalog, cpp_key, suggestion
from .citations import CPP, Citation, Drift, iter_test_files

MACROS = (
    "TEST",
    "TEST_F",
    "TEST_P",
    "TYPED_TEST",
    "TYPED_TEST_P",
    "RC_GTEST_PROP",
    "RC_GTEST_FIXTURE_PROP",
)
_DECLARATION = re.compile(
    r"\b(?:" + "|".join(sorted(MACROS, key=len, reverse=True)) + r")\s*\(\s*"
    r"([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)"
)
_COMMENT_OR_LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL
)
_CLAUSE_NAME = re.compile(r"clause([0-9]+)")
_DISABLED = "DISABLED_"


@dataclass(frozen=True)
class CppTest:
    """A gtest-style test ``suite.name`` (undecorated), optionally located in source."""

    suite: str
    name: str
    path: str | None = None
    line: int | None = None

    @property
    def label(self) -> str:
        return f"{self.suite}.{self.name}"


@dataclass(frozen=True)
class CppResolution:
    """What a C++ test name cites: ``target`` id, a ``problem``, or neither (no citation)."""

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
        if 1 <= number <= len(requirement.clauses):
            capability = requirement.id.split("/", 1)[0]
            return CppResolution(target=ids.clause_id(capability, requirement.slug, number))
        return CppResolution(
            problem=f"{requirement.id} has {len(requirement.clauses)} clauses, not {number}"
        )
    options = [cpp_key(s.slug) for s in requirement.scenarios]
    return CppResolution(
        problem=f"test name {name!r} names no scenario of {requirement.id} "
        f"(expected a scenario slug, clause<N> or requirement){suggestion(head, options)}"
    )


def strip_comments(source: str) -> str:
    """Blank out ``//`` and ``/* */`` comments, keeping string literals and line numbers."""

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith(("//", "/*")):
            return re.sub(r"[^\n]", " ", text)
        return text

    return _COMMENT_OR_LITERAL.sub(blank, source)


def declared_tests(source: str, relpath: str | None = None) -> list[CppTest]:
    """Every test declaration in one C++ source text."""
    code = strip_comments(source)
    return [
        CppTest(m.group(1), m.group(2), relpath, code.count("\n", 0, m.start()) + 1)
        for m in _DECLARATION.finditer(code)
    ]


def scan_cpp_tests(root: Path, directories: Sequence[str]) -> list[CppTest]:
    """Every test declared in ``*.cc`` files below ``root/<directory>``."""
    tests: list[CppTest] = []
    for path in iter_test_files(root, directories, "*.cc"):
        try:
            source = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        tests.extend(declared_tests(source, path.relative_to(root).as_posix()))
    return tests


def cpp_citations(
    tests: Iterable[CppTest], catalog: Catalog, *, static: bool
) -> tuple[list[Citation], list[Drift]]:
    """Citations of ``tests`` and drift for names that follow the convention but miss."""
    citations: list[Citation] = []
    drift: list[Drift] = []
    for test in tests:
        resolution = resolve_name(test.suite, test.name, catalog)
        where = test.path or test.label
        if test.path is not None and test.line is not None:
            where = f"{test.path}:{test.line}"
        if resolution.problem is not None:
            drift.append(Drift(where, f"C++ test {test.label}", resolution.problem))
        elif resolution.target is not None:
            citations.append(
                Citation(resolution.target, test.label, CPP, static, test.path, test.line)
            )
    return citations, drift
