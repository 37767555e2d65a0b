"""Citations: which tests claim to verify which spec ids.

A citation binds one test to one id. Python tests cite ids through ``pytest.mark.spec``
(read from collected items, see ``evidence``); C++ tests cite them through their gtest names
(see ``cpp``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .catalog import Catalog

TestKind = Literal["python", "cpp"]
PYTHON: TestKind = "python"
CPP: TestKind = "cpp"


@dataclass(frozen=True)
class Citation:
    """``test`` (a pytest node id or a C++ ``Suite.Name``) of ``kind`` cites ``target``."""

    target: str
    test: str
    kind: TestKind


@dataclass(frozen=True)
class Drift:
    """A test cites something no spec defines; ``where`` locates the test."""

    where: str
    test: str
    message: str

    def __str__(self) -> str:
        prefix = self.where if self.where == self.test else f"{self.where}: {self.test}"
        return f"{prefix}: {self.message}"


def mark_citations(
    nodeid: str, marks: Iterable[Any], catalog: Catalog, pinned: Collection[str] = ()
) -> tuple[list[Citation], list[str]]:
    """The citations one item's ``spec`` marks make, and what is wrong with the others.

    ``marks`` are pytest ``Mark`` objects (read through ``args`` and ``kwargs`` only).

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
