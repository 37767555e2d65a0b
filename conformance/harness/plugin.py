"""pytest plugin binding tests to OpenSpec ids and reporting spec conformance.

Load it with ``-p conformance.harness.plugin``. It

* registers the ``spec(*ids)`` marker and the options ``--spec-strict=auto|all|none``,
  ``--spec-report DIR``, ``--cpp-results DIR`` and ``--gtest-binary PATH`` (repeatable);
* at collection start parses ``<rootdir>/spec/*/spec.md`` and ``spec/clauses.lock``, reads
  C++ results and lists the given gtest binaries; a malformed spec or lock, invalid
  configuration, unreadable result file or failing binary aborts with a usage error;
* turns a collected test that cites an unknown id into a collection error of its module;
* after collection, when the session holds scenario items or writes reports, collects
  (``--collect-only``, in-process) the project's test folders this session did not fully
  collect, so tests outside the session still bind (otherwise the summary says it covers
  this session's tests only); a test there or a C++ test citing an unknown id, or any
  clause citation whose pin does not match (see ``pins``), aborts with a usage error;
* parametrizes every test requesting the ``spec_scenario`` fixture with all scenario ids
  (see ``conformance/test_spec_scenarios.py``), runs those items after every other test, and
  gives each the verdict of ``coverage.scenario_verdict``; coverage is computed once, when
  the first scenario item runs (every other test has run by then);
* records each Python test's outcome (failed if any phase failed, else xfailed/xpassed or
  skipped if so, else passed);
* at session end prints one summary line per capability and, with ``--spec-report``, writes
  the Markdown, HTML, JSON and JUnit coverage reports.

In a collection-only run holding an ``evidence.EvidenceCollector`` the plugin only
registers the marker. It also loads pytest's ``pytester`` plugin, which the harness's own
tests use: pytest only honours ``pytest_plugins`` in the rootdir conftest or in plugins.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import outcomes
from .catalog import Catalog
from .citations import CPP, PYTHON, Citation
from .config import SPEC_DIR, STRICT_MODES, ConfigError, load_project_config, strict_capabilities
from .coverage import Coverage, Evidence, build_coverage, scenario_verdict
from .evidence import CppEvidence, EvidenceCollector, collect_python, mark_citations, read_cpp
from .gtest_xml import ResultsError
from .openspec import SpecError, load_specs
from .pins import Pin, pin_failure, pin_problems, read_lock
from .report import summary_lines, write_reports

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
        self.pins: dict[str, Pin] = {}
        self.lock = Path()
        self.test_dirs: tuple[Path, ...] = ()
        self.cpp = CppEvidence()
        self.citations: list[Citation] = []
        self.collected_files: set[str] = set()
        self.python_outcomes: dict[str, str] = {}
        self.scenario_nodeids: set[str] = set()
        self.cached: Coverage | None = None
        self.report_paths: list[Path] = []
        self.aborted = False
        self.partial = False

    def load(self) -> None:
        """Parse specs and pins, read C++ evidence; raise UsageError on bad input."""
        root = self.config.rootpath
        try:
            project = load_project_config(root)
            catalog = Catalog(load_specs(project.spec_root, relative_to=root))
            strict = strict_capabilities(
                self.config.getoption("spec_strict"), project.complete, catalog.capabilities
            )
            self.pins = read_lock(project.lock_path)
            results = self.config.getoption("cpp_results")
            binaries = [Path(b) for b in self.config.getoption("gtest_binary")]
            self.cpp = read_cpp(
                catalog, Path(results) if results else None, binaries, self.pins
            )
        except SpecError as error:
            raise pytest.UsageError(f"malformed spec:\n{error}") from None
        except (ConfigError, ResultsError) as error:
            raise pytest.UsageError(str(error)) from None
        self.lock = project.lock_path
        self.test_dirs = tuple(root / d for d in project.python_test_dirs)
        self.catalog, self.strict = catalog, strict

    def uncollected_dirs(self) -> list[Path]:
        """Test folders not inside some path this session was asked to collect."""
        base = self.config.invocation_params.dir
        asked = [(base / arg.split("::", 1)[0]).resolve() for arg in self.config.args]
        return [d for d in self.test_dirs if not any(d.resolve().is_relative_to(a) for a in asked)]

    def check_outside(self) -> None:
        """Bind tests outside this session; raise UsageError on drift or pin mismatches."""
        assert self.catalog is not None
        uncollected = self.uncollected_dirs()
        if not (self.scenario_nodeids or self.config.getoption("spec_report")):
            self.partial, uncollected = bool(uncollected), []
        outside, drift = collect_python(
            self.config.rootpath, uncollected, self.catalog, self.pins, self.collected_files
        )
        self.citations += outside
        drift += self.cpp.drift
        if drift:
            lines = "\n".join(f"  {d}" for d in drift)
            raise pytest.UsageError(
                f"spec citation drift (tests citing ids no spec defines):\n{lines}"
            )
        problems = pin_problems((*self.citations, *self.cpp.citations), self.catalog, self.pins)
        if problems:
            raise pytest.UsageError(pin_failure(problems, self.lock))

    def coverage(self) -> Coverage:
        """Coverage from everything known so far, computed once until an outcome arrives."""
        assert self.catalog is not None
        if self.cached is None:
            known = {(PYTHON, nodeid): out for nodeid, out in self.python_outcomes.items()}
            known.update({(CPP, label): out for label, out in self.cpp.outcomes.items()})
            evidence = Evidence((*self.citations, *self.cpp.citations), known)
            self.cached = build_coverage(self.catalog, evidence, self.strict)
        return self.cached

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
        found: list[Citation] = []
        for node in report.result:
            if isinstance(node, pytest.Item) and not _is_scenario_item(node):
                marks = node.iter_markers("spec")
                citations, wrong = mark_citations(node.nodeid, marks, self.catalog, self.pins)
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
        scenarios = [item for item in items if _is_scenario_item(item)]
        if scenarios:
            items[:] = [item for item in items if not _is_scenario_item(item)] + scenarios
        self.scenario_nodeids = {item.nodeid for item in scenarios}
        if self.catalog is None:
            return
        try:
            self.check_outside()
        except pytest.UsageError:
            self.aborted = True
            raise

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.scenario_nodeids:
            return
        phase = _phase_outcome(report)
        if phase is not None:
            previous = self.python_outcomes.get(report.nodeid)
            self.python_outcomes[report.nodeid] = outcomes.merge_phases(previous, phase)
            self.cached = None

    def pytest_sessionfinish(self) -> None:
        if self.catalog is None or self.aborted:
            return
        directory = self.config.getoption("spec_report")
        if directory is not None:
            self.report_paths = write_reports(self.coverage(), Path(directory))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.catalog is None or self.aborted:
            return
        scope = " (this session's tests only)" if self.partial else ""
        terminalreporter.write_sep("-", f"spec conformance{scope}")
        if not self.catalog.specs:
            terminalreporter.write_line(f"no specs under {self.config.rootpath / SPEC_DIR}")
        for line in summary_lines(self.coverage()):
            terminalreporter.write_line(line)
        for path in self.report_paths:
            terminalreporter.write_line(f"spec coverage report: {path}")


_STATE = pytest.StashKey[_SessionState]()


def _state(config: pytest.Config) -> _SessionState | None:
    return config.stash.get(_STATE, None)


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


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None and config.pluginmanager.is_registered(state):
        config.pluginmanager.unregister(state)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if SCENARIO_FIXTURE not in metafunc.fixturenames:
        return
    state = _state(metafunc.config)
    if state is None:
        return
    scenario_ids = state.catalog.scenario_ids() if state.catalog is not None else []
    metafunc.parametrize(SCENARIO_FIXTURE, scenario_ids, ids=scenario_ids, indirect=True)


@pytest.fixture
def spec_scenario(request: pytest.FixtureRequest) -> ScenarioProbe:
    """The scenario a ``test_scenario`` item stands for (parametrized by this plugin)."""
    state = _state(request.config)
    assert state is not None
    return ScenarioProbe(state, request.param)
