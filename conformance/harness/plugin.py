"""pytest plugin binding tests to OpenSpec ids and reporting spec conformance.

Load it with ``-p conformance.harness.plugin``. It

* registers the ``spec(*ids)`` marker and the options ``--spec-strict=auto|all|none``,
  ``--spec-report DIR`` and ``--cpp-results DIR``;
* at collection start parses ``<rootdir>/spec/*/spec.md``, scans Python and C++ test
  sources for citations and reads C++ results; a malformed spec, invalid configuration or
  unreadable result file aborts the run with a usage error;
* turns a collected test that cites an unknown id into a collection error of its module,
  and aborts with a usage error when a test outside this session (static Python scan, C++
  source or C++ results) cites an unknown id;
* parametrizes every test requesting the ``spec_scenario`` fixture with all scenario ids
  (see ``conformance/test_spec_scenarios.py``), runs those items after every other test, and
  gives each the verdict of ``coverage.scenario_verdict``;
* records each Python test's outcome (failed if any phase failed, else xfailed/xpassed or
  skipped if so, else passed);
* at session end prints one summary line per capability and, with ``--spec-report``, writes
  the Markdown, JSON and JUnit coverage reports.

It also loads pytest's ``pytester`` plugin, which the harness's own tests use: pytest only
honours ``pytest_plugins`` in the rootdir conftest or in plugins like this one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import outcomes
from .catalog import Catalog
from .citations import CPP, PYTHON, Citation, Drift, check_citations
from .config import SPEC_DIR, STRICT_MODES, ConfigError, load_project_config, strict_capabilities
from .coverage import Coverage, Evidence, build_coverage, scenario_verdict
from .gtest_xml import ResultsError
from .openspec import SpecError, load_specs
from .report import summary_lines, write_reports
from .scan import CppResults, StaticScan, read_cpp_results, scan_project

pytest_plugins = ("pytester",)

SCENARIO_FIXTURE = "spec_scenario"
MARKER_HELP = (
    "spec(*ids): this test verifies the given OpenSpec scenario, requirement or clause ids"
)


class _SessionState:
    """Everything the plugin learns during one pytest session."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.catalog: Catalog | None = None
        self.strict: frozenset[str] = frozenset()
        self.scan = StaticScan((), (), ())
        self.cpp = CppResults({}, (), ())
        self.dynamic: list[Citation] = []
        self.collected_files: set[str] = set()
        self.python_outcomes: dict[str, str] = {}
        self.scenario_nodeids: set[str] = set()
        self.final: Coverage | None = None
        self.report_paths: list[Path] = []
        self.aborted = False

    def load(self) -> None:
        """Parse specs, scan sources and read C++ results; raise UsageError on bad input."""
        root = self.config.rootpath
        try:
            project = load_project_config(root)
            catalog = Catalog(load_specs(project.spec_root, relative_to=root))
            strict = strict_capabilities(
                self.config.getoption("spec_strict"), project.complete, catalog.capabilities
            )
            results = self.config.getoption("cpp_results")
            if results is not None:
                self.cpp = read_cpp_results(Path(results), catalog)
        except SpecError as error:
            raise pytest.UsageError(f"malformed spec:\n{error}") from None
        except (ConfigError, ResultsError) as error:
            raise pytest.UsageError(str(error)) from None
        self.scan = scan_project(project, catalog)
        self.catalog, self.strict = catalog, strict

    def item_citations(self, item: pytest.Item) -> list[str]:
        """Record the ``spec`` marks of ``item``; return drift messages for bad ones."""
        assert self.catalog is not None
        problems = []
        for mark in item.iter_markers("spec"):
            if mark.kwargs:
                problems.append("pytest.mark.spec takes no keyword arguments")
            if not mark.args:
                problems.append("pytest.mark.spec() names no id")
            for target in mark.args:
                problem = self.catalog.citation_problem(target)
                if problem is not None:
                    problems.append(f"cites {problem}")
                    continue
                self.dynamic.append(Citation(target, item.nodeid, PYTHON))
        return [f"{item.nodeid}: {problem}" for problem in problems]

    def outside_drift(self) -> list[Drift]:
        """Drift in test sources not collected in this session, in C++ sources and results."""
        assert self.catalog is not None
        python = [c for c in self.scan.python if c.path not in self.collected_files]
        return [
            *check_citations(python, self.catalog),
            *self.scan.cpp_drift,
            *self.cpp.drift,
        ]

    def evidence(self) -> Evidence:
        known = {(PYTHON, nodeid): outcome for nodeid, outcome in self.python_outcomes.items()}
        known.update({(CPP, label): outcome for label, outcome in self.cpp.outcomes.items()})
        citations = (*self.dynamic, *self.scan.python, *self.scan.cpp, *self.cpp.citations)
        return Evidence(citations, known)

    def coverage(self) -> Coverage:
        assert self.catalog is not None
        return build_coverage(self.catalog, self.evidence(), self.strict)

    # -- hooks (this object is registered as a plugin of its own config) -----------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self) -> None:
        self.load()

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        report = yield
        if self.catalog is None:
            return report
        if isinstance(collector, pytest.Module):
            self.collected_files.add(collector.nodeid)
        if not report.passed:
            return report
        problems: list[str] = []
        for node in report.result:
            if isinstance(node, pytest.Item) and not _is_scenario_item(node):
                problems.extend(self.item_citations(node))
        if problems:
            report.outcome = "failed"
            report.longrepr = "spec citation drift:\n" + "\n".join(f"  {p}" for p in problems)
            report.result = []
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        scenarios = [item for item in items if _is_scenario_item(item)]
        if scenarios:
            items[:] = [item for item in items if not _is_scenario_item(item)] + scenarios
        self.scenario_nodeids = {item.nodeid for item in scenarios}
        if self.catalog is None:
            return
        drift = self.outside_drift()
        if drift:
            self.aborted = True
            lines = "\n".join(f"  {d}" for d in drift)
            raise pytest.UsageError(
                f"spec citation drift (tests citing ids no spec defines):\n{lines}"
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.scenario_nodeids:
            return
        phase = _phase_outcome(report)
        if phase is not None:
            previous = self.python_outcomes.get(report.nodeid)
            self.python_outcomes[report.nodeid] = outcomes.merge_phases(previous, phase)

    def pytest_sessionfinish(self) -> None:
        if self.catalog is None or self.aborted:
            return
        self.final = self.coverage()
        directory = self.config.getoption("spec_report")
        if directory is not None:
            self.report_paths = write_reports(self.final, Path(directory))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.final is None:
            return
        terminalreporter.write_sep("-", "spec conformance")
        if not self.final.capabilities:
            terminalreporter.write_line(f"no specs under {self.config.rootpath / SPEC_DIR}")
        for line in summary_lines(self.final):
            terminalreporter.write_line(line)
        for path in self.report_paths:
            terminalreporter.write_line(f"spec coverage report: {path}")


_STATE = pytest.StashKey[_SessionState]()


def _state(config: pytest.Config) -> _SessionState:
    return config.stash[_STATE]


def _is_scenario_item(item: pytest.Item) -> bool:
    return SCENARIO_FIXTURE in getattr(item, "fixturenames", ())


def _phase_outcome(report: pytest.TestReport) -> str | None:
    """The outcome one report contributes; None for a passed setup or teardown."""
    xfail = hasattr(report, "wasxfail")
    if report.failed:
        return outcomes.FAILED
    if report.skipped:
        return outcomes.XFAILED if xfail else outcomes.SKIPPED
    if report.when != "call":
        return None
    return outcomes.XPASSED if xfail else outcomes.PASSED


class ScenarioProbe:
    """What a scenario item receives: its scenario id and the means to judge it."""

    def __init__(self, state: _SessionState, scenario_id: str) -> None:
        self._state = state
        self.scenario_id = scenario_id

    def verify(self) -> None:
        """Pass, fail or skip the running item per ``coverage.scenario_verdict``."""
        __tracebackhide__ = True  # report the outcome at the scenario test, not here
        found = self._state.coverage().scenario(self.scenario_id)
        if found is None:
            pytest.fail(f"unknown scenario {self.scenario_id}")
        capability, scenario = found
        verdict = scenario_verdict(scenario, capability.strict)
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
        help="which capabilities fail on unbound scenarios: auto (those listed in "
        "[tool.strideweave.conformance] complete), all or none. Default: auto.",
    )
    group.addoption(
        "--spec-report",
        metavar="DIR",
        default=None,
        help="write spec-coverage.md, .json and .junit.xml into DIR at session end.",
    )
    group.addoption(
        "--cpp-results",
        metavar="DIR",
        default=None,
        help="read C++ test outcomes from every *.xml (gtest XML) in DIR.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    state = _SessionState(config)
    config.stash[_STATE] = state
    config.pluginmanager.register(state, f"spec-conformance-{id(config)}")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None and config.pluginmanager.is_registered(state):
        config.pluginmanager.unregister(state)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if SCENARIO_FIXTURE not in metafunc.fixturenames:
        return
    catalog = _state(metafunc.config).catalog
    scenario_ids = catalog.scenario_ids() if catalog is not None else []
    metafunc.parametrize(SCENARIO_FIXTURE, scenario_ids, ids=scenario_ids, indirect=True)


@pytest.fixture
def spec_scenario(request: pytest.FixtureRequest) -> ScenarioProbe:
    """The scenario a ``test_scenario`` item stands for (parametrized by this plugin)."""
    return ScenarioProbe(_state(request.config), request.param)
