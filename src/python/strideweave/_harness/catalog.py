"""Index of every citable id across all specs.

Guarantees:

* ``citation_problem`` accepts exactly the requirement, scenario and clause ids the specs
  define; capability names are known but are not citable.
* ``cpp_requirement`` maps a C++ suite key ``<capability>__<requirement_slug>`` (ids with
  ``-`` written as ``_``) back to its requirement; this is unambiguous because slugs never
  contain ``_``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence

from .openspec import Clause, Requirement, Spec


def cpp_key(id_part: str) -> str:
    """Spell an id fragment as a C++ identifier fragment (``-`` -> ``_``)."""
    return id_part.replace("-", "_")


class Catalog:
    """All specs of a project, indexed by id."""

    def __init__(self, specs: Sequence[Spec]) -> None:
        self.specs: tuple[Spec, ...] = tuple(specs)
        self.capabilities = tuple(spec.capability for spec in self.specs)
        self._cpp_suites: dict[str, Requirement] = {}
        self._ids: set[str] = set()
        for spec in self.specs:
            for requirement in spec.requirements:
                self._cpp_suites[f"{cpp_key(spec.capability)}__{cpp_key(requirement.slug)}"] = (
                    requirement
                )
                self._ids.add(requirement.id)
                self._ids.update(scenario.id for scenario in requirement.scenarios)
                self._ids.update(clause.id for clause in requirement.clauses)

    def defines(self, target_id: str) -> bool:
        """True if ``target_id`` is a requirement, scenario or clause id."""
        return target_id in self._ids

    def scenario_ids(self) -> list[str]:
        return [s.id for spec in self.specs for r in spec.requirements for s in r.scenarios]

    def requirement_ids(self) -> list[str]:
        return [r.id for spec in self.specs for r in spec.requirements]

    def clauses(self) -> Iterator[Clause]:
        for spec in self.specs:
            for requirement in spec.requirements:
                yield from requirement.clauses

    def cpp_requirement(self, suite: str) -> Requirement | None:
        """The requirement whose C++ suite key is ``suite``, or None."""
        return self._cpp_suites.get(suite)

    def cpp_suites(self) -> Iterable[str]:
        return self._cpp_suites.keys()

    def citation_problem(self, target_id: object) -> str | None:
        """None if ``target_id`` is citable, else what is wrong, phrased to follow "cites"."""
        if not isinstance(target_id, str):
            return f"{target_id!r}, which is not a string id"
        if target_id in self._ids:
            return None
        if target_id in self.capabilities:
            return f"{target_id!r}, a capability; cite a requirement, scenario or clause id"
        return f"unknown spec id {target_id!r}{suggestion(target_id, self._ids)}"


def suggestion(wrong: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known string, or an empty string."""
    matches = difflib.get_close_matches(wrong, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""
