"""C++ (gtest / RapidCheck) citations, carried by test names.

Convention: a suite name containing ``__`` is a citation::

    Suite = <capability>__<requirement-slug>          ('-' written as '_')
    Name  = <scenario-slug> | clause<N> | requirement  ('-' written as '_'),
            optionally followed by __<free suffix> for uniqueness

so ``TEST(core_layout__coalesce_keeps_the_function, merge_contiguous_modes__nested)`` cites
``core-layout/coalesce-keeps-the-function/merge-contiguous-modes``. A ``DISABLED_`` prefix on
the suite or the name is ignored for the mapping. When a scenario slug is literally
``requirement`` or ``clause<N>``, the scenario wins.

Tests are known from gtest XML results and from a built binary's ``--gtest_list_tests``
output (see ``gtest_xml``; RapidCheck properties are gtest tests).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from . import ids
from .catalog import Catalog, cpp_key, suggestion
from .citations import CPP, Citation, Drift

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
