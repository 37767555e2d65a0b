"""End-to-end behaviour of ``conformance.harness.plugin`` in miniature projects."""

import json
import xml.etree.ElementTree as ET

import pytest

from conformance.harness import plugin
from strideweave._harness.coverage import build_coverage

from .conftest import (
    COUNT_NONE,
    COUNT_ONE,
    COUNTED,
    NAME_ONE,
    NAMED,
    fake_binary,
    pin,
    run,
    write,
)

SCENARIO_TEST = "conformance/test_spec_scenarios.py::test_scenario"


def scenario_node(scenario_id: str) -> str:
    return f"{SCENARIO_TEST}[{scenario_id}]"


def assert_lines(lines: list[str], *expected: str) -> None:
    """Each ``expected`` text occurs in some line, in the given order."""
    position = 0
    for text in expected:
        for index in range(position, len(lines)):
            if text in lines[index]:
                position = index + 1
                break
        else:
            joined = "\n".join(lines)
            raise AssertionError(f"{text!r} not found (in order) in output:\n{joined}")


BOUND_TESTS = f"""
    import pytest

    @pytest.mark.spec("{COUNT_ONE}")
    def test_one():
        pass

    @pytest.mark.spec("{COUNT_NONE}")
    def test_none():
        assert False, "boom"

    @pytest.mark.spec("{NAME_ONE}")
    @pytest.mark.xfail(reason="not yet")
    def test_name():
        assert False
"""


def test_marker_is_registered(project):
    pytester = project()
    result = run(pytester, "--markers")
    assert_lines(result.stdout.lines, "@pytest.mark.spec(*ids): this test verifies")
    assert result.ret == 0


def test_scenario_items_are_collected_and_ordered_last(project):
    pytester = project()
    write(pytester, "conformance/test_zzz.py", "def test_last_alphabetically():\n    pass\n")
    write(pytester, "conformance/test_aaa.py", "def test_first():\n    pass\n")
    result = run(pytester, "--collect-only", "-q")
    assert result.ret == 0
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [
        "conformance/test_aaa.py::test_first",
        "conformance/test_zzz.py::test_last_alphabetically",
        scenario_node(COUNT_ONE),
        scenario_node(COUNT_NONE),
        scenario_node(NAME_ONE),
    ]


def test_scenario_items_only_with_their_file(project):
    pytester = project()
    write(pytester, "property_tests/test_p.py", "def test_p():\n    pass\n")
    result = run(pytester, "property_tests", "--collect-only", "-q")
    assert result.ret == 0
    assert not [line for line in result.outlines if "test_scenario" in line]


def test_unbound_scenario_fails_under_strict(project):
    pytester = project(complete=("demo",))
    result = run(pytester)
    result.assert_outcomes(failed=3)
    assert_lines(
        result.stdout.lines,
        f"Failed: missing: no test cites {COUNT_ONE}",
    )
    assert_lines(
        result.stdout.lines, "demo (strict): 0/2 requirements pass, 0/3 scenarios pass, 3 missing"
    )


def test_unbound_scenario_skips_when_not_strict(project):
    pytester = project()
    result = run(pytester)
    result.assert_outcomes(skipped=3)
    assert result.ret == 0
    assert_lines(result.stdout.lines, f"missing: no test cites {COUNT_ONE}")
    assert_lines(result.stdout.lines, "demo: 0/2 requirements pass, 0/3 scenarios pass, 3 missing")


@pytest.mark.parametrize(("option", "failed", "skipped"), [("all", 3, 0), ("none", 0, 3)])
def test_strict_option_overrides_pyproject(project, option, failed, skipped):
    pytester = project(complete=() if option == "all" else ("demo",))
    result = run(pytester, f"--spec-strict={option}")
    result.assert_outcomes(failed=failed, skipped=skipped)


def test_claimed_requirement_is_strict_in_a_capability_that_is_not(project):
    pytester = project(requirements=(COUNTED,))
    result = run(pytester, "-v")
    result.assert_outcomes(failed=2, skipped=1)
    assert_lines(
        result.stdout.lines,
        f"{scenario_node(COUNT_ONE)} FAILED",
        f"{scenario_node(COUNT_NONE)} FAILED",
        f"{scenario_node(NAME_ONE)} SKIPPED",
    )
    assert_lines(
        result.stdout.lines,
        "demo (strict for 1/2 requirements): 0/2 requirements pass, 0/3 scenarios pass, 3 missing",
    )
    run(pytester, "--spec-strict=none").assert_outcomes(skipped=3)


def test_bound_claimed_requirement_passes(project):
    pytester = project(requirements=(COUNTED,))
    write(
        pytester,
        "conformance/test_widgets.py",
        f'import pytest\n\n@pytest.mark.spec("{COUNT_ONE}", "{COUNT_NONE}")\n'
        "def test_counts():\n    pass\n",
    )
    result = run(pytester, "--spec-report", "out")
    result.assert_outcomes(passed=3, skipped=1)
    assert result.ret == 0
    assert_lines(
        result.stdout.lines,
        "demo (strict for 1/2 requirements): 1/2 requirements pass, 2/3 scenarios pass, 1 missing",
    )
    (cap,) = json.loads((pytester.path / "out" / "spec-coverage.json").read_text())["capabilities"]
    assert cap["strict"] is False
    assert [(r["id"], r["strict"]) for r in cap["requirements"]] == [
        (COUNTED, True),
        (NAMED, False),
    ]


def test_bound_outcomes_decide_scenarios(project):
    pytester = project(complete=("demo",))
    write(pytester, "conformance/test_widgets.py", BOUND_TESTS)
    result = run(pytester, "-v")
    # NAME_ONE's only bound test xfailed: strict, so its scenario fails (none ran and passed).
    result.assert_outcomes(passed=2, failed=3, xfailed=1)
    assert_lines(
        result.stdout.lines,
        f"{scenario_node(COUNT_ONE)} PASSED",
        f"{scenario_node(COUNT_NONE)} FAILED",
        f"{scenario_node(NAME_ONE)} FAILED",
    )
    assert_lines(
        result.stdout.lines,
        f"Failed: {COUNT_NONE}: failing bound tests: "
        "conformance/test_widgets.py::test_none [python]",
    )
    assert_lines(
        result.stdout.lines,
        "no bound test passed: conformance/test_widgets.py::test_name [python] (xfailed)",
    )


def test_teardown_failure_fails_the_bound_test(project):
    pytester = project()
    write(
        pytester,
        "conformance/test_td.py",
        f"""
        import pytest

        @pytest.fixture
        def broken():
            yield
            raise RuntimeError("teardown")

        @pytest.mark.spec("{COUNT_ONE}")
        def test_ok(broken):
            pass
        """,
    )
    result = run(pytester)
    assert_lines(
        result.stdout.lines,
        f"Failed: {COUNT_ONE}: failing bound tests: conformance/test_td.py::test_ok [python]",
    )


def test_class_and_module_marks_bind(project):
    pytester = project(complete=("demo",))
    write(
        pytester,
        "conformance/test_marks.py",
        f"""
        import pytest

        pytestmark = [pytest.mark.spec("{COUNT_ONE}")]

        @pytest.mark.spec("{COUNT_NONE}")
        class TestGroup:
            def test_a(self):
                pass

        @pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.spec("{NAME_ONE}"))])
        def test_param(x):
            pass
        """,
    )
    result = run(pytester)
    result.assert_outcomes(passed=5)


def test_deselected_bound_test_skips_the_scenario(project):
    pytester = project(complete=("demo",))
    write(pytester, "conformance/test_widgets.py", BOUND_TESTS)
    result = run(pytester, "-k", "not test_one")
    assert_lines(
        result.stdout.lines,
        "bound to tests not run in this session: conformance/test_widgets.py::test_one [python]",
    )


def test_binding_from_a_file_outside_the_session(project):
    pytester = project(complete=("demo",))
    write(
        pytester,
        "property_tests/test_props.py",
        f"""
        import pytest

        @pytest.mark.spec("{COUNT_ONE}")
        def test_property():
            pass
        """,
    )
    result = run(pytester, "conformance")
    result.assert_outcomes(failed=2, skipped=1)
    assert_lines(
        result.stdout.lines,
        "bound to tests not run in this session: "
        "property_tests/test_props.py::test_property [python]",
    )


def test_unknown_id_fails_collection(project):
    pytester = project()
    write(
        pytester,
        "conformance/test_bad.py",
        f"""
        import pytest

        @pytest.mark.spec("{COUNTED}/count-two")
        def test_bad():
            pass

        def test_fine():
            pass
        """,
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert_lines(
        result.stdout.lines,
        "ERROR collecting conformance/test_bad.py",
        "spec citation drift:",
        f"  conformance/test_bad.py::test_bad: cites unknown spec id '{COUNTED}/count-two'",
        "Interrupted: 1 error during collection",
    )


@pytest.mark.parametrize(
    ("mark", "problem"),
    [
        ("pytest.mark.spec()", "pytest.mark.spec() names no id"),
        ("pytest.mark.spec(42)", "cites 42, which is not a string id"),
        ("pytest.mark.spec('demo')", "cites 'demo', a capability; cite a requirement"),
        (f"pytest.mark.spec('{COUNT_ONE}', x=1)", "pytest.mark.spec takes no keyword arguments"),
    ],
)
def test_malformed_marks_fail_collection(project, mark, problem):
    pytester = project()
    write(
        pytester,
        "conformance/test_bad.py",
        f"import pytest\n\n@{mark}\ndef test_bad():\n    pass\n",
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert_lines(
        result.stdout.lines,
        "spec citation drift:",
        f"  conformance/test_bad.py::test_bad: {problem}",
    )


def test_unknown_id_outside_the_session_is_a_usage_error(project):
    pytester = project()
    write(
        pytester,
        "property_tests/test_other.py",
        'import pytest\n\n@pytest.mark.spec("demo/nope")\ndef test_other():\n    pass\n',
    )
    result = run(pytester, "conformance")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(
        result.stderr.lines,
        "ERROR: spec citation drift (tests citing ids no spec defines):",
        "  property_tests/test_other.py::test_other: cites unknown spec id 'demo/nope'",
    )


def test_cpp_binary_drift_is_a_usage_error(project):
    pytester = project()
    binary = fake_binary(pytester.path, "demo__widgets_are_counted.\n  count_two\n")
    result = run(pytester, "--gtest-binary", str(binary))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(
        result.stderr.lines,
        f"  {binary}: C++ test demo__widgets_are_counted.count_two: test name",
    )


def test_unbuilt_gtest_binary_is_a_usage_error(project):
    pytester = project()
    result = run(pytester, "--gtest-binary", "build/not_built")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(result.stderr.lines, "ERROR: gtest binary build/not_built: cannot run")


def test_malformed_spec_is_a_usage_error(project):
    pytester = project(
        spec="## Purpose\n\nx\n\n## Requirements\n\n### Requirement: R\n\nNo keyword.\n"
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(
        result.stderr.lines,
        "ERROR: malformed spec:",
        "spec/demo/spec.md:7: requirement 'R' has no scenario",
        "spec/demo/spec.md:7: requirement 'R' has no SHALL or MUST in its body",
    )


def test_unknown_complete_capability_is_a_usage_error(project):
    pytester = project(complete=("demo", "ghost"))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(result.stderr.lines, "complete names unknown capabilities: ghost")


def test_claiming_a_requirement_of_a_complete_capability_is_a_usage_error(project):
    pytester = project(complete=("demo",), requirements=(NAMED,))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(
        result.stderr.lines,
        "ERROR: [tool.strideweave.conformance] complete_requirements names requirements of "
        f"capabilities listed in complete: {NAMED}",
    )


GTEST_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="demo__widgets_are_counted">
    <testcase name="count_one_widget__fast" status="run" result="completed"
              classname="demo__widgets_are_counted"/>
    <testcase name="count_none" status="run" result="completed"
              classname="demo__widgets_are_counted"><failure message="bad count"/></testcase>
  </testsuite>
</testsuites>
"""


def test_cpp_results_decide_scenarios(project):
    pytester = project(complete=("demo",))
    binary = fake_binary(pytester.path, "demo__widgets_are_named.\n  name_a_widget\n")
    write(pytester, "build/results/widgets.xml", GTEST_XML)
    result = run(pytester, "--cpp-results", "build/results", "--gtest-binary", str(binary), "-v")
    assert_lines(
        result.stdout.lines,
        f"{scenario_node(COUNT_ONE)} PASSED",
        f"{scenario_node(COUNT_NONE)} FAILED",
        f"{scenario_node(NAME_ONE)} SKIPPED",
    )
    assert_lines(
        result.stdout.lines,
        f"{COUNT_NONE}: failing bound tests: demo__widgets_are_counted.count_none [cpp]",
    )
    assert_lines(
        result.stdout.lines,
        "bound to tests not run in this session: demo__widgets_are_named.name_a_widget [cpp]",
    )


def test_listed_cpp_tests_bind_scenarios_as_not_run(project):
    pytester = project(complete=("demo",))
    binary = fake_binary(pytester.path, "demo__widgets_are_counted.\n  count_none\n")
    result = run(pytester, "--gtest-binary", str(binary))
    assert_lines(
        result.stdout.lines,
        "bound to tests not run in this session: demo__widgets_are_counted.count_none [cpp]",
    )


def test_missing_cpp_results_dir_is_a_usage_error(project):
    pytester = project()
    result = run(pytester, "--cpp-results", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert_lines(result.stderr.lines, "ERROR: C++ results location nowhere does not exist")


def test_report_files(project):
    pytester = project(complete=("demo",))
    write(pytester, "conformance/test_widgets.py", BOUND_TESTS)
    write(
        pytester,
        "conformance/test_clauses.py",
        f'import pytest\n\n@pytest.mark.spec("{COUNTED}#2", "{COUNTED}")\n'
        "def test_c():\n    pass\n",
    )
    pin(pytester)
    result = run(pytester, "--spec-report", "out/reports")
    assert_lines(
        result.stdout.lines,
        "- spec conformance -",
        "demo (strict): 0/2 requirements pass, 1/3 scenarios pass, 1 failing, 1 not run",
        "spec coverage report: out/reports/spec-coverage.md",
    )
    out = pytester.path / "out" / "reports"
    data = json.loads((out / "spec-coverage.json").read_text())
    (cap,) = data["capabilities"]
    assert cap["strict"] is True
    assert cap["counts"]["requirements"] == {
        "total": 2,
        "pass": 0,
        "fail": 1,
        "partial": 0,
        "missing": 0,
        "not-run": 1,
    }
    assert cap["counts"]["scenarios"] == {
        "total": 3,
        "bound": 3,
        "passing": 1,
        "failing": 1,
        "missing": 0,
        "not-run": 1,
    }
    assert cap["counts"]["clauses"] == {
        "total": 3,
        "bound": 1,
        "passing": 1,
        "failing": 0,
        "missing": 2,
    }
    counted = cap["requirements"][0]
    assert counted["citations"] == [
        {"test": "conformance/test_clauses.py::test_c", "kind": "python", "outcome": "passed"}
    ]
    suite = ET.parse(out / "spec-coverage.junit.xml").getroot().find("testsuite")
    # The strict scenario whose only bound test xfailed fails: none ran and passed.
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
        "demo",
        "3",
        "2",
        "0",
    )
    markdown = (out / "spec-coverage.md").read_text()
    assert "| demo | strict | 0/2 | 1/3 | 1 | 0 | 1/3 |" in markdown


def test_summary_is_printed_without_scenario_items(project):
    pytester = project()
    write(
        pytester,
        "property_tests/test_p.py",
        f'import pytest\n\n@pytest.mark.spec("{COUNT_ONE}")\ndef test_p():\n    pass\n',
    )
    result = run(pytester, "property_tests")
    result.assert_outcomes(passed=1)
    assert_lines(
        result.stdout.lines,
        "spec conformance (this session's tests only)",
        "demo: 0/2 requirements pass, 1/3 scenarios pass, 2 missing",
    )


def test_coverage_is_computed_once_per_session(project, monkeypatch):
    pytester = project(complete=("demo",))
    write(pytester, "conformance/test_widgets.py", BOUND_TESTS)
    calls = []

    def counting(*args, **kwargs):
        calls.append(args)
        return build_coverage(*args, **kwargs)

    monkeypatch.setattr(plugin, "build_coverage", counting)
    result = run(pytester, "--spec-report", "out")
    # Strict: the scenario whose only bound test xfailed fails (none ran and passed).
    result.assert_outcomes(passed=2, failed=3, xfailed=1)
    assert len(calls) == 1


def declare_machine_skip(pytester: pytest.Pytester, test: str, needs: str, fallback: str) -> None:
    """Appends one [[tool.strideweave.conformance.machine_skips]] entry to pyproject.toml."""
    pyproject = pytester.path / "pyproject.toml"
    entry = f'test = "{test}"\nneeds = "{needs}"\nfallback = "{fallback}"\n'
    pyproject.write_text(
        f"{pyproject.read_text()}\n[[tool.strideweave.conformance.machine_skips]]\n{entry}"
    )


def test_skips_are_listed_and_declared_machine_skips_name_their_fallback(project):
    pytester = project()
    declare_machine_skip(
        pytester,
        "conformance/test_io.py::test_direct",
        "a file system that accepts O_DIRECT",
        "conformance/test_io.py::test_fallback",
    )
    write(
        pytester,
        "conformance/test_io.py",
        f"""
        import pytest

        @pytest.mark.spec("{COUNT_ONE}")
        def test_direct():
            pytest.skip("no O_DIRECT here")

        @pytest.mark.spec("{COUNT_ONE}")
        def test_fallback():
            pass

        @pytest.mark.spec("{COUNT_NONE}")
        def test_other():
            pytest.skip("not today")
        """,
    )
    result = run(pytester, "--spec-report", "out")
    # Two tests and two scenario items (not strict: one missing, one not run) skipped.
    assert_lines(
        result.stdout.lines,
        "4 skipped tests (1 declared machine-dependent); reasons in the short test summary "
        "and the Markdown report",
        "  conformance/test_io.py::test_direct: no O_DIRECT here [machine-dependent: needs a "
        "file system that accepts O_DIRECT; fallback conformance/test_io.py::test_fallback: "
        "passed]",
    )
    markdown = (pytester.path / "out" / "spec-coverage.md").read_text()
    assert "- `conformance/test_io.py::test_other`: not today\n" in markdown
    assert (
        "- `conformance/test_io.py::test_direct`: no O_DIRECT here [machine-dependent" in markdown
    )


def test_every_clause_cited_adds_one_item_per_requirement(project):
    pytester = project(complete=("demo",))
    pyproject = pytester.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "[tool.strideweave.conformance]\n",
            "[tool.strideweave.conformance]\nevery_clause_cited = true\n",
        )
    )
    write(
        pytester,
        "conformance/test_all.py",
        f"""
        import pytest

        @pytest.mark.spec("{COUNT_ONE}", "{COUNT_NONE}", "{NAME_ONE}", "{COUNTED}#1", "{NAMED}#1")
        def test_all():
            pass
        """,
    )
    pin(pytester)
    result = run(pytester, "-v")
    # Three scenario items pass; of the two clause items, `counted` misses its clause #2.
    result.assert_outcomes(passed=5, failed=1)
    assert_lines(
        result.stdout.lines,
        "conformance/test_spec_scenarios.py::test_clauses_cited[demo/widgets-are-counted] FAILED",
        "conformance/test_spec_scenarios.py::test_clauses_cited[demo/widgets-are-named] PASSED",
    )
    assert_lines(result.stdout.lines, f"Failed: no test cites {COUNTED}#2")


def test_a_partial_session_does_not_judge_machine_skips_it_cannot_see(project):
    pytester = project()
    declare_machine_skip(
        pytester,
        "property_tests/test_io.py::test_direct",
        "O_DIRECT",
        "property_tests/test_io.py::test_fallback",
    )
    write(
        pytester,
        "conformance/test_a.py",
        f'import pytest\n\n@pytest.mark.spec("{COUNT_ONE}")\ndef test_a():\n    pass\n',
    )
    write(
        pytester,
        "property_tests/test_io.py",
        f'import pytest\n\n@pytest.mark.spec("{COUNT_NONE}")\ndef test_direct():\n    pass\n\n'
        f'@pytest.mark.spec("{COUNT_NONE}")\ndef test_fallback():\n    pass\n',
    )
    # Only conformance/test_a.py: the declared tests are outside the session.
    run(pytester, "conformance/test_a.py").assert_outcomes(passed=1)
    # The whole project: the declaration is judged, and holds (three tests and two scenario
    # items pass; the scenario nothing cites is skipped, not strict).
    run(pytester).assert_outcomes(passed=5, skipped=1)
