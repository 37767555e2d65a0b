"""Citations: which tests claim to verify which spec ids.

A citation binds one test to one id. Python tests cite ids through ``pytest.mark.spec``;
C++ tests cite them through their gtest names (see ``cpp``). This module holds the common
data model and the static scan of Python test files.

Static Python scan guarantees:

* Every ``test_*.py`` below the given directories (hidden and ``__pycache__`` directories
  excluded) is parsed with ``ast``; files that do not parse are skipped (pytest reports
  them when it collects them).
* Every call ``<anything>.mark.spec(...)`` or ``mark.spec(...)`` contributes one citation
  per string-literal positional argument; other arguments are ignored (they are seen by the
  dynamic marker check instead).
* A citation's ``test`` label is ``<path>`` for module-level code, else
  ``<path>::<Class>::<function>`` for the innermost enclosing classes and functions,
  including calls in their decorators. ``<path>`` is POSIX and relative to the scan root,
  so labels are prefixes of pytest node ids.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .catalog import Catalog

TestKind = Literal["python", "cpp"]
PYTHON: TestKind = "python"
CPP: TestKind = "cpp"


@dataclass(frozen=True)
class Citation:
    """``test`` (of ``kind``) cites ``target``.

    ``static`` is True when the citation was found in source rather than on a collected
    pytest item or in a C++ result file; ``path``/``line`` locate it when known.
    """

    target: str
    test: str
    kind: TestKind
    static: bool = False
    path: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        if self.path is None:
            return self.test
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class Drift:
    """A test cites something no spec defines."""

    where: str
    test: str
    message: str

    def __str__(self) -> str:
        prefix = self.where if self.where == self.test else f"{self.where}: {self.test}"
        return f"{prefix}: {self.message}"


def check_citations(citations: Iterable[Citation], catalog: Catalog) -> list[Drift]:
    """Drift for every citation whose target the catalog does not define."""
    drift = []
    for citation in citations:
        problem = catalog.citation_problem(citation.target)
        if problem is not None:
            drift.append(Drift(citation.where, citation.test, f"cites {problem}"))
    return drift


def iter_test_files(root: Path, directories: Sequence[str], pattern: str) -> Iterator[Path]:
    """Files matching ``pattern`` below ``root/<directory>``, sorted, hidden dirs skipped."""
    seen: set[Path] = set()
    for directory in directories:
        base = root / directory
        if not base.is_dir():
            continue
        for path in sorted(base.rglob(pattern)):
            relative_parts = path.relative_to(root).parts[:-1]
            if any(p.startswith(".") or p == "__pycache__" for p in relative_parts):
                continue
            if path.is_file() and path not in seen:
                seen.add(path)
                yield path


def _is_spec_mark(func: ast.expr) -> bool:
    if not (isinstance(func, ast.Attribute) and func.attr == "spec"):
        return False
    owner = func.value
    if isinstance(owner, ast.Attribute):
        return owner.attr == "mark"
    return isinstance(owner, ast.Name) and owner.id == "mark"


def _static_string(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The value of a string literal, or of an f-string or ``+`` built only from
    literals and module-level string constants; None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.format_spec is not None or value.conversion != -1:
                    return None
                part = _static_string(value.value, constants)
            else:
                part = _static_string(value, constants)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _static_string(node.left, constants)
        right = _static_string(node.right, constants)
        return None if left is None or right is None else left + right
    return None


def _module_string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = <static string>`` assignments, in order."""
    constants: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                value = _static_string(statement.value, constants)
                if value is not None:
                    constants[target.id] = value
    return constants


def python_source_citations(source: str, relpath: str) -> list[Citation]:
    """Static citations in one Python source text, in line order (``relpath`` names it).

    An id counts when it is a string literal or an f-string / concatenation of
    literals and module-level string constants (``f"{REQ}/scenario"``).
    """
    try:
        tree = ast.parse(source, filename=relpath)
    except (SyntaxError, ValueError):
        return []
    constants = _module_string_constants(tree)
    found: list[Citation] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            scope = (*scope, node.name)
        if isinstance(node, ast.Call) and _is_spec_mark(node.func):
            label = "::".join((relpath, *scope))
            for arg in node.args:
                value = _static_string(arg, constants)
                if value is not None:
                    found.append(Citation(value, label, PYTHON, True, relpath, arg.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(tree, ())
    return sorted(found, key=lambda c: c.line or 0)


def scan_python_citations(root: Path, directories: Sequence[str]) -> list[Citation]:
    """Static citations of every ``test_*.py`` below ``root/<directory>``."""
    citations: list[Citation] = []
    for path in iter_test_files(root, directories, "test_*.py"):
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        citations.extend(python_source_citations(source, path.relative_to(root).as_posix()))
    return citations


def covers(static_label: str, nodeid: str) -> bool:
    """True if the pytest item ``nodeid`` lies within the static label's scope."""
    return nodeid == static_label or nodeid.startswith((f"{static_label}::", f"{static_label}["))
