"""The carrier kit as a pytest plugin: ``-p strideweave.kit.plugin``.

``pytest -p strideweave.kit.plugin --strideweave-carrier MODULE:NAME --pyargs
strideweave.kit.checks`` runs the kit's checks against the carrier factory ``NAME`` of
``MODULE`` inside a team's own suite (``python -m strideweave.kit`` runs exactly this).
The plugin registers the ``spec`` marker, provides the ``carrier_factory`` fixture, records
each check's ``spec`` citations and outcome, and prints the requirement-coverage summary
(the harness's terminal lines) and, for each failed check, the clauses it cites with the
first lines of its failure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from strideweave._harness import outcomes
from strideweave._harness.catalog import Catalog
from strideweave._harness.citations import Citation, mark_citations
from strideweave._harness.coverage import Coverage, Evidence, build_coverage
from strideweave._harness.report import summary_lines
from strideweave.kit import FactoryError, catalog, load_factory

OPTION = "--strideweave-carrier"
MARKER_HELP = (
    "spec(*ids): this check verifies the given OpenSpec scenario, requirement or clause ids"
)


class KitRecorder:
    """The citations and outcomes of one session's checks, and their coverage."""

    def __init__(self, reference: str | None) -> None:
        self.reference = reference
        self.catalog = catalog()
        self.citations: list[Citation] = []
        self.outcomes: dict[tuple[str, str], str] = {}
        self.failures: dict[str, str] = {}
        self.problems: list[str] = []

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            marks = list(item.iter_markers("spec"))
            if not marks:
                continue
            found, wrong = mark_citations(item.nodeid, marks, self.catalog)
            self.citations += found
            self.problems += [f"{item.nodeid}: {problem}" for problem in wrong]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        phase = outcomes.phase_outcome(report)
        if phase is None:
            return
        key = ("python", report.nodeid)
        self.outcomes[key] = outcomes.merge_phases(self.outcomes.get(key), phase)
        if report.failed:
            self.failures[report.nodeid] = _failure_text(report)

    def coverage(self) -> Coverage:
        """The coverage, by the checks that ran, of the requirements the checks cite (the
        kit's contracts). Nothing is strict: a scenario of those requirements that no check
        covers (one about a built-in class, or about a carrier pair the kit does not
        build) is reported missing, not failed."""
        checked = {c.target.split("#")[0] for c in self.citations}
        specs = [
            dataclasses.replace(
                spec,
                requirements=tuple(
                    r
                    for r in spec.requirements
                    if r.id in checked or any(s.id in checked for s in r.scenarios)
                ),
            )
            for spec in self.catalog.specs
        ]
        evidence = Evidence(tuple(self.citations), dict(self.outcomes))
        return build_coverage(Catalog(specs), evidence, ())

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # A check citing an id the shipped specs lack fails the run.
        if self.problems and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def cited_by(self, nodeid: str) -> list[str]:
        return [c.target for c in self.citations if c.test == nodeid]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        title = f"strideweave carrier kit: {self.reference or 'carrier_factory fixture'}"
        terminalreporter.section(title)
        for line in summary_lines(self.coverage()):
            terminalreporter.write_line(line)
        for problem in self.problems:
            terminalreporter.write_line(f"citation problem: {problem}", red=True)
        for nodeid, text in self.failures.items():
            terminalreporter.write_line(f"FAILED {nodeid}", red=True)
            terminalreporter.write_line(f"  cites: {', '.join(self.cited_by(nodeid))}")
            for line in text.splitlines()[:6]:
                terminalreporter.write_line(f"  {line}")


def _failure_text(report: pytest.TestReport) -> str:
    """The violation's message when a check raised one, else pytest's short text."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    return message if message else str(report.longreprtext).strip().splitlines()[-1:][0]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("strideweave-kit", "strideweave carrier conformance kit")
    group.addoption(
        OPTION,
        dest="strideweave_carrier",
        metavar="MODULE:NAME",
        help="the carrier factory the kit's checks run against (a Carrier subclass or a "
        "callable taking (dtype, n=None, *, values=None))",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    reference = config.getoption("strideweave_carrier")
    recorder = KitRecorder(reference)
    config.stash[RECORDER] = recorder
    config.pluginmanager.register(recorder, "strideweave-kit-recorder")


RECORDER = pytest.StashKey[KitRecorder]()


def recorder_of(config: pytest.Config) -> KitRecorder:
    """The recorder of a session this plugin configured."""
    return config.stash[RECORDER]


@pytest.fixture(scope="session")
def carrier_factory(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """The carrier factory named by ``--strideweave-carrier MODULE:NAME``."""
    reference = request.config.getoption("strideweave_carrier")
    if reference is None:
        pytest.fail(f"the kit's checks need {OPTION} MODULE:NAME", pytrace=False)
    try:
        return load_factory(reference)
    except FactoryError as error:
        pytest.fail(str(error), pytrace=False)
