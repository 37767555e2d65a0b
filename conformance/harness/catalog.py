"""Index of every citable id across all specs.

Guarantees:

* ``lookup`` resolves exactly the requirement, scenario and clause ids the specs define;
  capability names are known but are not citable.
* ``cpp_requirement`` maps a C++ suite key ``<capability>__<requirement_slug>`` (ids with
  ``-`` written as ``_``) back to its requirement; this is unambiguous because slugs never
  contain ``_``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from .openspec import Clause, Requirement, Scenario, Spec

Kind = Literal["requirement", "scenario", "clause"]


def cpp_key(id_part: str) -> str:
    """Spell an id fragment as a C++ identifier fragment (``-`` -> ``_``)."""
    return id_part.replace("-", "_")


@dataclass(frozen=True)
class Target:
    """A citable spec element and where it lives."""

    kind: Kind
    id: str
    spec: Spec
    requirement: Requirement
    scenario: Scenario | None = None
    clause: Clause | None = None


class Catalog:
    """All specs of a project, indexed by id."""

    def __init__(self, specs: Sequence[Spec]) -> None:
        self.specs: tuple[Spec, ...] = tuple(specs)
        self._targets: dict[str, Target] = {}
        self._cpp_suites: dict[str, Requirement] = {}
        for spec in self.specs:
            for requirement in spec.requirements:
                self._add(Target("requirement", requirement.id, spec, requirement))
                suite = f"{cpp_key(spec.capability)}__{cpp_key(requirement.slug)}"
                self._cpp_suites[suite] = requirement
                for scenario in requirement.scenarios:
                    self._add(Target("scenario", scenario.id, spec, requirement, scenario))
                for clause in requirement.clauses:
                    self._add(Target("clause", clause.id, spec, requirement, clause=clause))

    def _add(self, target: Target) -> None:
        self._targets[target.id] = target

    @property
    def capabilities(self) -> tuple[str, ...]:
        return tuple(spec.capability for spec in self.specs)

    def spec(self, capability: str) -> Spec | None:
        return next((s for s in self.specs if s.capability == capability), None)

    def lookup(self, target_id: str) -> Target | None:
        """The element ``target_id`` names, or None."""
        return self._targets.get(target_id)

    def ids(self) -> Iterator[str]:
        return iter(self._targets)

    def scenarios(self) -> Iterator[tuple[Spec, Requirement, Scenario]]:
        for spec in self.specs:
            for requirement in spec.requirements:
                for scenario in requirement.scenarios:
                    yield spec, requirement, scenario

    def scenario_ids(self) -> list[str]:
        return [scenario.id for _, _, scenario in self.scenarios()]

    def cpp_requirement(self, suite: str) -> Requirement | None:
        """The requirement whose C++ suite key is ``suite``, or None."""
        return self._cpp_suites.get(suite)

    def cpp_suites(self) -> Iterable[str]:
        return self._cpp_suites.keys()

    def citation_problem(self, target_id: object) -> str | None:
        """None if ``target_id`` is citable, else what is wrong, phrased to follow "cites"."""
        if not isinstance(target_id, str):
            return f"{target_id!r}, which is not a string id"
        if target_id in self._targets:
            return None
        if target_id in self.capabilities:
            return f"{target_id!r}, a capability; cite a requirement, scenario or clause id"
        return f"unknown spec id {target_id!r}{suggestion(target_id, self._targets)}"


def suggestion(wrong: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known string, or an empty string."""
    matches = difflib.get_close_matches(wrong, list(known), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""
