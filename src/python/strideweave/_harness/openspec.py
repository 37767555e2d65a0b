"""OpenSpec ``spec.md`` parser.

Rules (after the OpenSpec CLI):

* ``## Purpose`` and ``## Requirements`` are required, each exactly once; section titles are
  compared case-insensitively. The Purpose must not be empty and Requirements must hold at
  least one requirement.
* Each ``###`` heading inside Requirements starts a requirement (a leading ``Requirement:``
  is stripped from the name); each ``####`` heading under a requirement is a scenario (a
  leading ``Scenario:`` is stripped). Deeper headings belong to the enclosing text.
* Headings inside fenced code blocks (``` or ~~~) are ignored.
* Names are trimmed and compared case-sensitively. Duplicate requirement names, duplicate
  scenario names within one requirement, and distinct names with the same slug are errors.
* A requirement needs at least one scenario, and its body (the text before its first
  scenario) must contain SHALL or MUST.
* The capability is the name of the folder holding ``spec.md`` and must be a slug.

Every violation is reported with file and line; ``parse_spec`` collects all violations of a
file before raising one ``SpecError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import ids
from .clauses import extract_clauses, is_normative
from .markdown import FenceTracker, parse_heading

_REQUIREMENT_PREFIX = re.compile(r"^requirement:\s*", re.IGNORECASE)
_SCENARIO_PREFIX = re.compile(r"^scenario:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """One spec violation at ``path``:``line`` (line is 1-based)."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class SpecError(ValueError):
    """A spec violates the OpenSpec rules; ``problems`` lists every violation found."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("SpecError needs at least one problem")
        super().__init__("\n".join(str(problem) for problem in self.problems))


@dataclass(frozen=True)
class Clause:
    """A normative sentence of a requirement body; ``number`` counts from 1."""

    number: int
    id: str
    text: str


@dataclass(frozen=True)
class Scenario:
    """A ``####`` block under a requirement; ``steps`` is its text up to the next heading."""

    name: str
    slug: str
    id: str
    line: int
    steps: str


@dataclass(frozen=True)
class Requirement:
    """A ``###`` block of the Requirements section."""

    name: str
    slug: str
    id: str
    line: int
    body: str
    clauses: tuple[Clause, ...]
    scenarios: tuple[Scenario, ...]


@dataclass(frozen=True)
class Spec:
    """One capability's parsed ``spec.md``."""

    capability: str
    path: Path
    purpose: str
    requirements: tuple[Requirement, ...]


@dataclass
class _Block:
    title: str
    line: int  # 1-based line of the heading
    lines: list[str]
    children: list[_Block]
    orphans: list[int] = field(default_factory=list)  # lines of #### headings outside a ###


class _Parser:
    def __init__(self, path: Path, text: str, capability: str) -> None:
        self.path = path
        self.shown_path = path.as_posix()
        self.lines = text.splitlines()
        self.capability = capability
        self.problems: list[Problem] = []

    def problem(self, line: int, message: str) -> None:
        self.problems.append(Problem(self.shown_path, line, message))

    def sections(self) -> list[_Block]:
        """Split the document into ``##`` sections, each with ``###``/``####`` children."""
        sections: list[_Block] = []
        section: _Block | None = None
        requirement: _Block | None = None
        target: list[str] | None = None
        fences = FenceTracker()
        for index, line in enumerate(self.lines):
            heading = None if fences.feed(line) else parse_heading(line)
            number = index + 1
            if heading is not None and heading.level <= 2:
                section = requirement = None
                target = None
                if heading.level == 2:
                    section = _Block(heading.title, number, [], [])
                    sections.append(section)
                    target = section.lines
                continue
            if section is not None and heading is not None and heading.level == 3:
                requirement = _Block(heading.title, number, [], [])
                section.children.append(requirement)
                target = requirement.lines
                continue
            if section is not None and heading is not None and heading.level == 4:
                if requirement is None:
                    section.orphans.append(number)
                    continue
                scenario = _Block(heading.title, number, [], [])
                requirement.children.append(scenario)
                target = scenario.lines
                continue
            if target is not None:
                target.append(line)
        return sections

    def parse(self) -> Spec:
        if not ids.is_slug(self.capability):
            self.problem(1, f"capability folder name {self.capability!r} is not a slug")
        by_title: dict[str, list[_Block]] = {}
        for section in self.sections():
            by_title.setdefault(section.title.strip().lower(), []).append(section)
        purpose = self.single_section(by_title, "Purpose")
        requirements_section = self.single_section(by_title, "Requirements")
        purpose_text = "\n".join(purpose.lines).strip() if purpose else ""
        if purpose is not None and not purpose_text:
            self.problem(purpose.line, "the Purpose section is empty")
        requirements: tuple[Requirement, ...] = ()
        if requirements_section is not None:
            requirements = self.requirements(requirements_section)
        if self.problems:
            raise SpecError(self.problems)
        return Spec(self.capability, self.path, purpose_text, requirements)

    def single_section(self, by_title: dict[str, list[_Block]], title: str) -> _Block | None:
        found = by_title.get(title.lower(), [])
        if not found:
            self.problem(1, f"missing required section '## {title}'")
            return None
        for duplicate in found[1:]:
            self.problem(duplicate.line, f"duplicate section '## {title}'")
        return found[0]

    def requirements(self, section: _Block) -> tuple[Requirement, ...]:
        for line in section.orphans:
            self.problem(line, "scenario heading outside a requirement")
        if not section.children:
            self.problem(section.line, "the Requirements section has no requirement")
        result: list[Requirement] = []
        names: dict[str, int] = {}
        slugs: dict[str, tuple[str, int]] = {}
        for block in section.children:
            name = _REQUIREMENT_PREFIX.sub("", block.title).strip()
            if not self.check_name("requirement", name, block.line, names, slugs):
                continue
            result.append(self.requirement(block, name))
        return tuple(result)

    def check_name(
        self,
        kind: str,
        name: str,
        line: int,
        names: dict[str, int],
        slugs: dict[str, tuple[str, int]],
    ) -> bool:
        """Record ``name``; report and return False if empty, duplicated or slug-colliding."""
        if not name:
            self.problem(line, f"{kind} heading has no name")
            return False
        if name in names:
            self.problem(line, f"duplicate {kind} {name!r} (first at line {names[name]})")
            return False
        names[name] = line
        key = ids.slug(name)
        if not key:
            self.problem(line, f"{kind} name {name!r} has an empty slug")
            return False
        if key in slugs:
            other, other_line = slugs[key]
            self.problem(
                line,
                f"{kind} {name!r} has the same slug {key!r} as {other!r} (line {other_line})",
            )
            return False
        slugs[key] = (name, line)
        return True

    def requirement(self, block: _Block, name: str) -> Requirement:
        req_slug = ids.slug(name)
        body = "\n".join(block.lines).strip()
        if not block.children:
            self.problem(block.line, f"requirement {name!r} has no scenario")
        if not is_normative(body):
            self.problem(block.line, f"requirement {name!r} has no SHALL or MUST in its body")
        clauses = tuple(
            Clause(number, ids.clause_id(self.capability, req_slug, number), text)
            for number, text in enumerate(extract_clauses(body), start=1)
        )
        scenarios: list[Scenario] = []
        names: dict[str, int] = {}
        slugs: dict[str, tuple[str, int]] = {}
        for child in block.children:
            scenario_name = _SCENARIO_PREFIX.sub("", child.title).strip()
            if not self.check_name("scenario", scenario_name, child.line, names, slugs):
                continue
            scenario_slug = ids.slug(scenario_name)
            scenarios.append(
                Scenario(
                    name=scenario_name,
                    slug=scenario_slug,
                    id=ids.scenario_id(self.capability, req_slug, scenario_slug),
                    line=child.line,
                    steps="\n".join(child.lines).strip(),
                )
            )
        return Requirement(
            name=name,
            slug=req_slug,
            id=ids.requirement_id(self.capability, req_slug),
            line=block.line,
            body=body,
            clauses=clauses,
            scenarios=tuple(scenarios),
        )


def parse_spec(path: Path, text: str | None = None, capability: str | None = None) -> Spec:
    """Parse one spec file and raise ``SpecError`` listing every violation.

    ``text`` defaults to the file's content and ``capability`` to the name of the folder
    holding ``path``; ``path`` is stored in the Spec and shown in problems as given.
    """
    path = Path(path)
    if text is None:
        text = path.read_text(encoding="utf-8")
    return _Parser(path, text, capability or path.parent.name).parse()


def spec_files(spec_root: Path) -> list[Path]:
    """Every ``<spec_root>/<capability>/spec.md``, sorted by capability."""
    spec_root = Path(spec_root)
    if not spec_root.is_dir():
        return []
    return sorted(p for p in spec_root.glob("*/spec.md") if p.is_file())


def load_specs(spec_root: Path, *, relative_to: Path | None = None) -> tuple[Spec, ...]:
    """Parse every spec under ``spec_root``, sorted by capability; raise one ``SpecError``
    covering all files.

    With ``relative_to``, each Spec.path (and each problem) is relative to it where possible.
    A missing ``spec_root`` yields no specs.
    """
    specs: list[Spec] = []
    problems: list[Problem] = []
    for path in spec_files(spec_root):
        shown = path
        if relative_to is not None and path.is_relative_to(relative_to):
            shown = path.relative_to(relative_to)
        try:
            specs.append(parse_spec(shown, path.read_text(encoding="utf-8")))
        except SpecError as error:
            problems.extend(error.problems)
    if problems:
        raise SpecError(problems)
    return tuple(specs)
