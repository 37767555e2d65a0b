"""Spec coverage: which scenarios, clauses and requirements are bound, passing or failing.

A scenario is bound only by citations of its own id; requirement and clause citations are
recorded on the requirement or clause. Citations of unknown ids are ignored here (drift).
The statuses are those of docs/conformance.md ("Reports"): a scenario is ``pass``,
``fail``, ``missing`` or ``not-run``; a clause ``passing``, ``failing``, ``missing`` or
``bound``; a requirement ``fail``, ``missing``, ``partial``, ``pass`` or ``not-run``.
A requirement is strict (its missing scenarios fail) when its capability is strict or its
own id is in the strict set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from . import outcomes
from .catalog import Catalog
from .citations import Citation, TestKind
from .openspec import Clause, Requirement, Scenario, Spec

PASS = "pass"
FAIL = "fail"
PARTIAL = "partial"
MISSING = "missing"
NOT_RUN = "not-run"

BOUND = "bound"
PASSING = "passing"
FAILING = "failing"


@dataclass(frozen=True)
class Evidence:
    """Everything known about tests: their citations and the outcomes of those that ran.

    ``outcomes`` is keyed by ``(kind, test label)``; a test without an entry did not run.
    """

    citations: tuple[Citation, ...] = ()
    outcomes: Mapping[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class BoundTest:
    """A test citing some id, with its outcome in this session (None: not run)."""

    test: str
    kind: TestKind
    outcome: str | None


@dataclass(frozen=True)
class ScenarioCoverage:
    scenario: Scenario
    status: str
    tests: tuple[BoundTest, ...]


@dataclass(frozen=True)
class ClauseCoverage:
    clause: Clause
    status: str
    tests: tuple[BoundTest, ...]


@dataclass(frozen=True)
class RequirementCoverage:
    requirement: Requirement
    status: str
    scenarios: tuple[ScenarioCoverage, ...]
    clauses: tuple[ClauseCoverage, ...]
    tests: tuple[BoundTest, ...]  # citations of the requirement id itself
    strict: bool


@dataclass(frozen=True)
class Counts:
    """Per-capability tallies; ``bound`` counts everything cited, passing/failing included."""

    requirements: Mapping[str, int]
    scenarios: Mapping[str, int]
    clauses: Mapping[str, int]


@dataclass(frozen=True)
class CapabilityCoverage:
    spec: Spec
    strict: bool
    requirements: tuple[RequirementCoverage, ...]
    counts: Counts

    @property
    def capability(self) -> str:
        return self.spec.capability

    @property
    def strict_requirements(self) -> tuple[RequirementCoverage, ...]:
        """The requirements strict one by one (none when the whole capability is strict)."""
        return () if self.strict else tuple(r for r in self.requirements if r.strict)

    @property
    def mode(self) -> str:
        """``strict``, ``not strict`` or ``strict for N/M requirements``."""
        if self.strict:
            return "strict"
        claimed = len(self.strict_requirements)
        total = len(self.requirements)
        return f"strict for {claimed}/{total} requirements" if claimed else "not strict"


@dataclass(frozen=True)
class Coverage:
    capabilities: tuple[CapabilityCoverage, ...]

    @cached_property
    def _scenarios(self) -> dict[str, tuple[RequirementCoverage, ScenarioCoverage]]:
        return {
            scenario.scenario.id: (requirement, scenario)
            for capability in self.capabilities
            for requirement in capability.requirements
            for scenario in requirement.scenarios
        }

    def scenario(self, scenario_id: str) -> tuple[RequirementCoverage, ScenarioCoverage] | None:
        return self._scenarios.get(scenario_id)

    @cached_property
    def _requirements(self) -> dict[str, RequirementCoverage]:
        return {r.requirement.id: r for c in self.capabilities for r in c.requirements}

    def requirement(self, requirement_id: str) -> RequirementCoverage | None:
        return self._requirements.get(requirement_id)


def _bound(
    citations: Sequence[Citation], outcomes_by_test: Mapping[tuple[str, str], str]
) -> tuple[BoundTest, ...]:
    seen: dict[tuple[str, str], BoundTest] = {}
    for citation in citations:
        key = (citation.kind, citation.test)
        if key not in seen:
            seen[key] = BoundTest(citation.test, citation.kind, outcomes_by_test.get(key))
    return tuple(sorted(seen.values(), key=lambda t: (t.kind, t.test)))


def _any(tests: Iterable[BoundTest], outcome: str) -> bool:
    return any(t.outcome == outcome for t in tests)


def _status(tests: Sequence[BoundTest], failed: str, passed: str, neither: str) -> str:
    if not tests:
        return MISSING
    if _any(tests, outcomes.FAILED):
        return failed
    return passed if _any(tests, outcomes.PASSED) else neither


def scenario_status(tests: Sequence[BoundTest]) -> str:
    return _status(tests, FAIL, PASS, NOT_RUN)


def clause_status(tests: Sequence[BoundTest]) -> str:
    return _status(tests, FAILING, PASSING, BOUND)


def requirement_status(
    scenarios: Sequence[ScenarioCoverage],
    clauses: Sequence[ClauseCoverage],
    tests: Sequence[BoundTest],
) -> str:
    if (
        any(s.status == FAIL for s in scenarios)
        or any(c.status == FAILING for c in clauses)
        or _any(tests, outcomes.FAILED)
    ):
        return FAIL
    cited = tests or any(s.tests for s in scenarios) or any(c.tests for c in clauses)
    if not cited:
        return MISSING
    if any(s.status == MISSING for s in scenarios):
        return PARTIAL
    if all(s.status == PASS for s in scenarios):
        return PASS
    return NOT_RUN


def _tally(statuses: Sequence[str], keys: Mapping[str, str]) -> dict[str, int]:
    """``total``, ``bound`` (anything not missing) and one count per ``keys`` entry
    (count name -> status)."""
    counts = {"total": len(statuses), BOUND: sum(s != MISSING for s in statuses)}
    counts.update({name: sum(s == status for s in statuses) for name, status in keys.items()})
    return counts


def _counts(requirements: Sequence[RequirementCoverage]) -> Counts:
    outcomes_by_name = {PASSING: PASS, FAILING: FAIL, MISSING: MISSING}
    requirement_counts = _tally(
        [r.status for r in requirements], {s: s for s in (PASS, FAIL, PARTIAL, MISSING, NOT_RUN)}
    )
    del requirement_counts[BOUND]
    return Counts(
        requirement_counts,
        _tally(
            [s.status for r in requirements for s in r.scenarios],
            {**outcomes_by_name, NOT_RUN: NOT_RUN},
        ),
        _tally(
            [c.status for r in requirements for c in r.clauses],
            {PASSING: PASSING, FAILING: FAILING, MISSING: MISSING},
        ),
    )


def build_coverage(catalog: Catalog, evidence: Evidence, strict: Iterable[str]) -> Coverage:
    """Coverage of every capability in ``catalog``; the capabilities and requirements whose
    names or ids are in ``strict`` are strict (a strict capability's requirements too)."""
    strict = frozenset(strict)
    by_target: dict[str, list[Citation]] = {}
    for citation in evidence.citations:
        if catalog.defines(citation.target):
            by_target.setdefault(citation.target, []).append(citation)

    def bound(target_id: str) -> tuple[BoundTest, ...]:
        return _bound(by_target.get(target_id, ()), evidence.outcomes)

    capabilities = []
    for spec in catalog.specs:
        requirements = []
        for requirement in spec.requirements:
            scenarios = []
            for scenario in requirement.scenarios:
                tests = bound(scenario.id)
                scenarios.append(ScenarioCoverage(scenario, scenario_status(tests), tests))
            clauses = []
            for clause in requirement.clauses:
                tests = bound(clause.id)
                clauses.append(ClauseCoverage(clause, clause_status(tests), tests))
            tests = bound(requirement.id)
            requirements.append(
                RequirementCoverage(
                    requirement,
                    requirement_status(scenarios, clauses, tests),
                    tuple(scenarios),
                    tuple(clauses),
                    tests,
                    spec.capability in strict or requirement.id in strict,
                )
            )
        capabilities.append(
            CapabilityCoverage(
                spec, spec.capability in strict, tuple(requirements), _counts(requirements)
            )
        )
    return Coverage(tuple(capabilities))


@dataclass(frozen=True)
class Verdict:
    """What a scenario item reports: ``outcome`` is ``passed``, ``failed`` or ``skipped``."""

    outcome: str
    message: str


def _listing(tests: Iterable[BoundTest], with_outcome: bool = False) -> str:
    return ", ".join(
        f"{t.test} [{t.kind}]" + (f" ({t.outcome or 'not run'})" if with_outcome else "")
        for t in tests
    )


def scenario_verdict(scenario: ScenarioCoverage, strict: bool) -> Verdict:
    """The verdict of a scenario item (see module docstring for statuses).

    missing -> failed when strict, else skipped; fail -> failed naming the failing tests;
    pass -> passed; not-run -> skipped naming the bound tests, except that a strict
    scenario whose bound tests ran in this session without one passing (all skipped or
    xfailed) fails: a strict scenario passes only when a bound test ran and passed.
    """
    sid = scenario.scenario.id
    tests = scenario.tests
    if scenario.status == MISSING:
        return Verdict(
            outcomes.FAILED if strict else outcomes.SKIPPED, f"missing: no test cites {sid}"
        )
    if scenario.status == FAIL:
        failing = [t for t in tests if t.outcome == outcomes.FAILED]
        return Verdict(outcomes.FAILED, f"{sid}: failing bound tests: {_listing(failing)}")
    if scenario.status == PASS:
        passing = [t for t in tests if t.outcome == outcomes.PASSED]
        return Verdict(outcomes.PASSED, f"{sid}: passed by {_listing(passing)}")
    if all(t.outcome is None for t in tests):
        return Verdict(
            outcomes.SKIPPED, f"bound to tests not run in this session: {_listing(tests)}"
        )
    message = f"no bound test passed: {_listing(tests, with_outcome=True)}"
    return Verdict(outcomes.FAILED if strict else outcomes.SKIPPED, message)


def clauses_verdict(requirement: RequirementCoverage) -> Verdict:
    """The verdict of a requirement's clause item (``every_clause_cited``): passed when
    every SHALL clause is cited; otherwise failed when the requirement is strict, else
    skipped, naming the uncited clauses."""
    uncited = [c.clause.id for c in requirement.clauses if c.status == MISSING]
    rid = requirement.requirement.id
    if not uncited:
        return Verdict(outcomes.PASSED, f"{rid}: every clause is cited")
    message = f"no test cites {', '.join(uncited)}"
    return Verdict(outcomes.FAILED if requirement.strict else outcomes.SKIPPED, message)
