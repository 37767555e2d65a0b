"""pytest plugin binding tests to OpenSpec ids and reporting spec conformance.

Load it with ``-p conformance.harness.plugin`` (docs/conformance.md describes its options
and behaviour). At collection start it loads the project (``evidence.load_project``; bad
input is a usage error); a collected test citing an unknown id fails its module's
collection; after collection, when the session holds scenario items or writes reports, it
collects the project's test folders the session did not fully collect (in-process, nothing
runs), then aborts with a usage error on drift or clause pin mismatches. Scenario items
(tests requesting ``spec_scenario``) run last and get ``coverage.scenario_verdict``;
coverage is computed once, when the first of them runs.

In a run holding an ``evidence.EvidenceCollector`` it only registers the marker. It loads
pytest's ``pytester`` plugin for the harness's own tests (pytest only honours
``pytest_plugins`` in the rootdir conftest or in plugins).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from strideweave._harness import outcomes
from strideweave._harness.citations import CPP, PYTHON, Citation, mark_citations
from strideweave._harness.config import SPEC_DIR, STRICT_MODES, ConfigError, selects
from strideweave._harness.coverage import (
    Coverage,
    Evidence,
    build_coverage,
    clauses_verdict,
    scenario_verdict,
)
from strideweave._harness.openspec import SpecError
from strideweave._harness.report import Skip, summary_lines, write_reports

from .cpp import ResultsError
from .evidence import (
    EvidenceCollector,
    Project,
    collect_python,
    failures,
    load_project,
)

pytest_plugins = ("pytester",)

SCENARIO_FIXTURE = "spec_scenario"
REQUIREMENT_FIXTURE = "spec_requirement"
MARKER_HELP = (
    "spec(*ids): this test verifies the given OpenSpec scenario, requirement or clause ids"
)


class _SessionState:
    """Everything the plugin learns during one pytest session."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.project: Project | None = None
        self.citations: list[Citation] = []
        self.collected_files: set[str] = set()
        self.python_outcomes: dict[str, str] = {}
        self.skip_reasons: dict[str, str] = {}
        self.scenario_nodeids: set[str] = set()
        self.cached: Coverage | None = None
        self.report_paths: list[Path] = []
        self.aborted = self.partial = False

    def load(self) -> None:
        """Parse specs and pins, read C++ evidence; raise UsageError on bad input."""
        option = self.config.getoption
        results = option("cpp_results")
        try:
            self.project = load_project(
                self.config.rootpath,
                option("spec_strict"),
                Path(results) if results else None,
                [Path(binary) for binary in option("gtest_binary")],
            )
        except SpecError as error:
            raise pytest.UsageError(f"malformed spec:\n{error}") from None
        except (ConfigError, ResultsError) as error:
            raise pytest.UsageError(str(error)) from None

    def uncollected_dirs(self, project: Project) -> list[Path]:
        """Test folders not inside some path this session was asked to collect."""
        base = self.config.invocation_params.dir
        asked = [(base / arg.split("::", 1)[0]).resolve() for arg in self.config.args]
        return [
            d
            for d in project.config.test_dirs
            if not any(d.resolve().is_relative_to(a) for a in asked)
        ]

    def check_outside(self, project: Project) -> None:
        """Bind tests outside this session; raise UsageError on drift or pin mismatches."""
        uncollected = self.uncollected_dirs(project)
        if not (self.scenario_nodeids or self.config.getoption("spec_report")):
            self.partial, uncollected = bool(uncollected), []
        root = self.config.rootpath
        outside, drift = collect_python(
            root, uncollected, project.catalog, project.pins, self.collected_files
        )
        self.citations += outside
        messages = failures(project, self.citations, drift, every_test_known=not self.partial)
        if messages:
            raise pytest.UsageError("\n".join(messages))

    def coverage(self) -> Coverage:
        """Coverage from everything known so far, computed once until an outcome arrives."""
        project = self.project
        assert project is not None
        if self.cached is None:
            known = {(PYTHON, nodeid): out for nodeid, out in self.python_outcomes.items()}
            known.update({(CPP, label): out for label, out in project.cpp.outcomes.items()})
            evidence = Evidence((*self.citations, *project.cpp.citations), known)
            self.cached = build_coverage(project.catalog, evidence, project.strict)
        return self.cached

    # -- hooks (this object is registered as a plugin of its own config) -----------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self) -> None:
        self.load()

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        report = yield
        if self.project is None:
            return report
        if isinstance(collector, pytest.Module):
            self.collected_files.add(collector.nodeid)
        if not report.passed:
            return report
        problems: list[str] = []
        found: list[Citation] = []
        for node in report.result:
            if isinstance(node, pytest.Item) and not _is_scenario_item(node):
                marks = node.iter_markers("spec")
                catalog, pins = self.project.catalog, self.project.pins
                citations, wrong = mark_citations(node.nodeid, marks, catalog, pins)
                found += citations
                problems += [f"{node.nodeid}: {problem}" for problem in wrong]
        if problems:
            report.outcome = "failed"
            report.longrepr = "spec citation drift:\n" + "\n".join(f"  {p}" for p in problems)
            report.result = []
        else:
            self.citations += found
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.project is None or not self.project.config.every_clause_cited:
            # Without every_clause_cited, test_clauses_cited has no parameters: drop the
            # placeholder item pytest makes for an empty parameter set.
            items[:] = [
                i for i in items if REQUIREMENT_FIXTURE not in getattr(i, "fixturenames", ())
            ]
        scenarios = [item for item in items if _is_scenario_item(item)]
        if scenarios:
            items[:] = [item for item in items if not _is_scenario_item(item)] + scenarios
        self.scenario_nodeids = {item.nodeid for item in scenarios}
        if self.project is None:
            return
        try:
            self.check_outside(self.project)
        except pytest.UsageError:
            self.aborted = True
            raise

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skip_reasons[report.nodeid] = _skip_reason(report)
        if report.nodeid in self.scenario_nodeids:
            return
        phase = outcomes.phase_outcome(report)
        if phase is not None:
            previous = self.python_outcomes.get(report.nodeid)
            self.python_outcomes[report.nodeid] = outcomes.merge_phases(previous, phase)
            self.cached = None

    def pytest_sessionfinish(self) -> None:
        if self.project is None or self.aborted:
            return
        directory = self.config.getoption("spec_report")
        if directory is not None:
            self.report_paths = write_reports(self.coverage(), Path(directory), self.skips())

    def skips(self) -> list[Skip]:
        """Every skipped test of the session, Python and C++, with its reason; a declared
        machine-dependent skip names what the machine lacks and its fallback's outcome."""
        project = self.project
        assert project is not None
        found = list(self.skip_reasons.items())
        found += [
            (label, "skipped by the C++ test")
            for label, outcome in sorted(project.cpp.outcomes.items())
            if outcome == outcomes.SKIPPED
        ]
        known = {**self.python_outcomes, **project.cpp.outcomes}
        listed = []
        for test, reason in found:
            declared = project.config.machine_skip(test)
            if declared is not None:
                fallback = [o for n, o in known.items() if selects(declared.fallback, n)]
                outcome = outcomes.merge_instances(fallback) or "not run"
                reason += (
                    f" [machine-dependent: needs {declared.needs}; "
                    f"fallback {declared.fallback}: {outcome}]"
                )
            listed.append(Skip(test, reason, declared is not None))
        return listed

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.project is None or self.aborted:
            return
        scope = " (this session's tests only)" if self.partial else ""
        terminalreporter.write_sep("-", f"spec conformance{scope}")
        if not self.project.catalog.specs:
            terminalreporter.write_line(f"no specs under {self.config.rootpath / SPEC_DIR}")
        for line in summary_lines(self.coverage()):
            terminalreporter.write_line(line)
        skips = self.skips()
        if skips:
            machine = [skip for skip in skips if skip.machine_dependent]
            terminalreporter.write_line(
                f"{len(skips)} skipped tests ({len(machine)} declared machine-dependent); "
                "reasons in the short test summary and the Markdown report"
            )
            for skip in machine:
                terminalreporter.write_line(f"  {skip.test}: {skip.reason}")
        for path in self.report_paths:
            terminalreporter.write_line(f"spec coverage report: {path}")


_STATE = pytest.StashKey[_SessionState]()


def _state(config: pytest.Config) -> _SessionState | None:
    return config.stash.get(_STATE, None)


def _is_scenario_item(item: pytest.Item) -> bool:
    """A harness item (a scenario's or a requirement's clauses'): judged last, from the
    outcomes of the other items, and never evidence itself."""
    names = getattr(item, "fixturenames", ())
    return SCENARIO_FIXTURE in names or REQUIREMENT_FIXTURE in names


def _skip_reason(report: pytest.TestReport) -> str:
    """A skip's reason as pytest's ``-rs`` line shows it."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


class ScenarioProbe:
    """What a scenario item receives: its scenario id and the means to judge it."""

    def __init__(self, state: _SessionState, scenario_id: str) -> None:
        self._state = state
        self.scenario_id = scenario_id

    def verify(self) -> None:
        """Pass, fail or skip the running item per ``coverage.scenario_verdict``."""
        __tracebackhide__ = True  # report the outcome at the scenario test, not here
        found = self._state.coverage().scenario(self.scenario_id)
        assert found is not None, f"unknown scenario {self.scenario_id}"
        requirement, scenario = found
        verdict = scenario_verdict(scenario, requirement.strict)
        if verdict.outcome == outcomes.FAILED:
            pytest.fail(verdict.message)
        if verdict.outcome == outcomes.SKIPPED:
            pytest.skip(verdict.message)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("spec", "spec conformance (conformance.harness)")
    group.addoption(
        "--spec-strict",
        choices=STRICT_MODES,
        default="auto",
        help="which scenarios fail when unbound: auto (those of the capabilities and "
        "requirements listed in [tool.strideweave.conformance] complete and "
        "complete_requirements), all or none. Default: auto.",
    )
    group.addoption(
        "--spec-report",
        metavar="DIR",
        default=None,
        help="write spec-coverage.md, .html, .json and .junit.xml into DIR at session end.",
    )
    group.addoption(
        "--cpp-results",
        metavar="DIR",
        default=None,
        help="read C++ test outcomes from every *.xml (gtest XML) in DIR.",
    )
    group.addoption(
        "--gtest-binary",
        metavar="PATH",
        action="append",
        default=[],
        help="bind the C++ tests this gtest binary lists (--gtest_list_tests); repeatable.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    if any(isinstance(p, EvidenceCollector) for p in config.pluginmanager.get_plugins()):
        return
    state = _SessionState(config)
    config.stash[_STATE] = state
    config.pluginmanager.register(state, f"spec-conformance-{id(config)}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = _state(metafunc.config)
    if state is None:
        return
    project = state.project
    if SCENARIO_FIXTURE in metafunc.fixturenames:
        scenario_ids = project.catalog.scenario_ids() if project is not None else []
        metafunc.parametrize(SCENARIO_FIXTURE, scenario_ids, ids=scenario_ids, indirect=True)
    if REQUIREMENT_FIXTURE in metafunc.fixturenames:
        wanted = project is not None and project.config.every_clause_cited
        ids = project.catalog.requirement_ids() if wanted else []
        metafunc.parametrize(REQUIREMENT_FIXTURE, ids, ids=ids, indirect=True)


class RequirementProbe:
    """What a clause item receives: its requirement id and the means to judge it."""

    def __init__(self, state: _SessionState, requirement_id: str) -> None:
        self._state = state
        self.requirement_id = requirement_id

    def verify(self) -> None:
        """Pass, fail or skip the running item per ``coverage.clauses_verdict``."""
        __tracebackhide__ = True
        requirement = self._state.coverage().requirement(self.requirement_id)
        assert requirement is not None, f"unknown requirement {self.requirement_id}"
        verdict = clauses_verdict(requirement)
        if verdict.outcome == outcomes.FAILED:
            pytest.fail(verdict.message)
        if verdict.outcome == outcomes.SKIPPED:
            pytest.skip(verdict.message)


@pytest.fixture
def spec_requirement(request: pytest.FixtureRequest) -> RequirementProbe:
    """The requirement a ``test_clauses_cited`` item stands for (parametrized by this
    plugin when ``every_clause_cited`` is set)."""
    state = _state(request.config)
    assert state is not None
    return RequirementProbe(state, request.param)


@pytest.fixture
def spec_scenario(request: pytest.FixtureRequest) -> ScenarioProbe:
    """The scenario a ``test_scenario`` item stands for (parametrized by this plugin)."""
    state = _state(request.config)
    assert state is not None
    return ScenarioProbe(state, request.param)
