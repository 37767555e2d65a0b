"""``python -m conformance.harness list|check|pin``."""

import io
import json
import subprocess
import sys
import textwrap

from conformance.harness.cli import main

from .conftest import (
    COUNT_NONE,
    COUNT_ONE,
    COUNTED,
    DEMO_SPEC,
    NAME_ONE,
    REPO_ROOT,
    claims,
    fake_binary,
)


def make_project(root, complete=("demo",), requirements=()):
    (root / "spec" / "demo").mkdir(parents=True)
    (root / "spec" / "demo" / "spec.md").write_text(DEMO_SPEC)
    (root / "pyproject.toml").write_text(claims(complete, requirements))


def cli(*args):
    out = io.StringIO()
    status = main(list(args), out)
    return status, out.getvalue()


def test_list_text(tmp_path):
    make_project(tmp_path)
    status, text = cli("list", "--root", str(tmp_path))
    assert status == 0
    lines = text.splitlines()
    assert lines[:6] == [
        "demo",
        "  demo/widgets-are-counted",
        f"    {COUNT_ONE}",
        f"    {COUNT_NONE}",
        "    demo/widgets-are-counted#1",
        "    demo/widgets-are-counted#2",
    ]
    assert f"    {NAME_ONE}" in lines


def test_list_json(tmp_path):
    make_project(tmp_path)
    status, text = cli("list", "--json", "--root", str(tmp_path))
    assert status == 0
    (cap,) = json.loads(text)["capabilities"]
    assert cap["capability"] == "demo"
    assert cap["path"] == "spec/demo/spec.md"
    assert cap["requirements"][0]["scenarios"][0] == {
        "id": COUNT_ONE,
        "name": "Count one widget",
        "line": 13,
        "status": "missing",
        "tests": [],
    }
    assert cap["requirements"][0]["clauses"][1]["text"] == "It MUST never go negative."


def bind_all(root):
    (root / "conformance").mkdir()
    (root / "conformance" / "test_demo.py").write_text(
        textwrap.dedent(
            f"""
            import pytest

            @pytest.mark.spec("{COUNT_ONE}", "{COUNT_NONE}")
            def test_counts():
                pass
            """
        )
    )
    return fake_binary(root, "demo__widgets_are_named.\n  name_a_widget\n")


def test_check_passes_when_everything_is_bound(tmp_path):
    make_project(tmp_path)
    binary = bind_all(tmp_path)
    status, text = cli("check", "--root", str(tmp_path), "--gtest-binary", str(binary))
    assert status == 0, text
    assert "C++ tests not seen" not in text
    assert "demo (strict): 2 requirements, 3 scenarios, 3 bound, 0 missing" in text
    assert text.endswith("check passed\n")


def test_check_finds_the_cpp_tests_of_build_cpp(tmp_path):
    """Bare `check` binds the C++ tests where `tox` builds them: no flags needed."""
    make_project(tmp_path)
    binary = bind_all(tmp_path)
    (tmp_path / "build" / "cpp").mkdir(parents=True)
    binary.rename(tmp_path / "build" / "cpp" / "strideweave_unit_tests")
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 0, text
    assert "C++ tests: build/cpp/strideweave_unit_tests\n" in text
    assert "C++ tests not seen" not in text
    assert text.endswith("check passed\n")


def test_check_names_what_it_could_not_bind_and_fails_in_one_line(tmp_path):
    make_project(tmp_path)
    bind_all(tmp_path)  # the C++ binary is not where check looks
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert f"missing: no test cites {NAME_ONE}" in text
    assert text.splitlines()[-1] == (
        "check failed: 1 strict scenario bound by no test (C++ tests not seen, "
        "so scenarios bound only in C++ count as missing)"
    )


def test_check_fails_on_missing_scenarios_only_when_strict(tmp_path):
    make_project(tmp_path)
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert f"missing: no test cites {COUNT_ONE}" in text
    assert "C++ tests not seen: pass --gtest-binary (built tests) or --cpp-results" in text
    assert cli("check", "--root", str(tmp_path), "--strict", "none")[0] == 0


def test_check_fails_on_missing_scenarios_of_a_claimed_requirement(tmp_path):
    make_project(tmp_path, complete=(), requirements=(COUNTED,))
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert (
        "demo (strict for 1/2 requirements): 2 requirements, 3 scenarios, 0 bound, 3 missing"
        in text
    )
    assert [line for line in text.splitlines() if line.startswith("missing:")] == [
        f"missing: no test cites {COUNT_ONE}",
        f"missing: no test cites {COUNT_NONE}",
    ]
    assert cli("check", "--root", str(tmp_path), "--strict", "none")[0] == 0


def test_check_passes_when_a_claimed_requirement_is_bound(tmp_path):
    make_project(tmp_path, complete=(), requirements=(COUNTED,))
    bind_all(tmp_path)
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 0, text
    assert (
        "demo (strict for 1/2 requirements): 2 requirements, 3 scenarios, 2 bound, 1 missing"
        in text
    )


def test_check_reports_an_unknown_claimed_requirement(tmp_path):
    make_project(tmp_path, complete=(), requirements=("demo/widgets-are-countd",))
    assert cli("check", "--root", str(tmp_path)) == (
        1,
        "error: [tool.strideweave.conformance] complete_requirements names unknown "
        "requirements: demo/widgets-are-countd (did you mean 'demo/widgets-are-counted'?)\n",
    )


def test_check_without_the_cpp_build_misses_cpp_bindings(tmp_path):
    make_project(tmp_path)
    bind_all(tmp_path)
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert f"missing: no test cites {NAME_ONE}" in text


def test_check_fails_on_drift(tmp_path):
    make_project(tmp_path, complete=())
    (tmp_path / "property_tests").mkdir()
    (tmp_path / "property_tests" / "test_p.py").write_text(
        'import pytest\n\n@pytest.mark.spec("demo/nope")\ndef test_p():\n    pass\n'
    )
    (tmp_path / "property_tests" / "test_broken.py").write_text("import no_such_module\n")
    binary = fake_binary(tmp_path, "demo__no_such_requirement.\n  x\n")
    status, text = cli("check", "--root", str(tmp_path), "--gtest-binary", str(binary))
    assert status == 1
    lines = text.splitlines()
    start = lines.index("spec citation drift (tests citing ids no spec defines):")
    assert lines[start + 1 : start + 4] == [
        "  property_tests/test_broken.py: collection failed: "
        "E   ModuleNotFoundError: No module named 'no_such_module'",
        "  property_tests/test_p.py::test_p: cites unknown spec id 'demo/nope'",
        f"  {binary}: C++ test demo__no_such_requirement.x: suite 'demo__no_such_requirement' "
        "names no known requirement (expected <capability>__<requirement_slug>)",
    ]


def test_check_reads_cpp_results(tmp_path):
    make_project(tmp_path, complete=())
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.xml").write_text(
        '<testsuites><testsuite name="demo__widgets_are_named">'
        '<testcase name="name_nobody" classname="demo__widgets_are_named"/>'
        "</testsuite></testsuites>"
    )
    status, text = cli("check", "--root", str(tmp_path), "--cpp-results", str(tmp_path / "results"))
    assert status == 1
    assert "name_nobody" in text


def test_check_reports_malformed_spec(tmp_path):
    (tmp_path / "spec" / "demo").mkdir(parents=True)
    (tmp_path / "spec" / "demo" / "spec.md").write_text("## Purpose\n\nx\n")
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert "spec/demo/spec.md:1: missing required section '## Requirements'" in text


def test_module_entry_point(tmp_path):
    make_project(tmp_path)
    completed = subprocess.run(
        [sys.executable, "-m", "conformance.harness", "list", "--root", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("demo\n")


def test_check_collects_with_the_projects_own_plugin_options(tmp_path):
    make_project(tmp_path)
    binary = bind_all(tmp_path)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[tool.pytest.ini_options]\naddopts = ["-p", "conformance.harness.plugin", '
        '"--strict-markers"]\n\n' + pyproject.read_text()
    )
    status, text = cli("check", "--root", str(tmp_path), "--gtest-binary", str(binary))
    assert status == 0, text
    assert "demo (strict): 2 requirements, 3 scenarios, 3 bound, 0 missing" in text


def test_check_refuses_a_machine_skip_whose_fallback_covers_less(tmp_path):
    make_project(tmp_path, complete=())
    (tmp_path / "pyproject.toml").write_text(
        claims((), ())
        + "\n[[tool.strideweave.conformance.machine_skips]]\n"
        + 'test = "conformance/test_io.py::test_direct"\n'
        + 'needs = "O_DIRECT"\n'
        + 'fallback = "conformance/test_io.py::test_fallback"\n'
    )
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "test_io.py").write_text(
        textwrap.dedent(
            f"""
            import pytest

            @pytest.mark.spec("{COUNT_ONE}", "{COUNT_NONE}")
            def test_direct():
                pass

            @pytest.mark.spec("{COUNT_ONE}")
            def test_fallback():
                pass
            """
        )
    )
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert (
        "  fallback conformance/test_io.py::test_fallback of conformance/test_io.py::test_direct "
        f"does not cite {COUNT_NONE}"
    ) in text.splitlines()
    assert text.splitlines()[-1].startswith(
        "check failed: machine-dependent skips declared wrongly"
    )
    # Once the fallback cites what the test cites, the declaration holds.
    source = (tmp_path / "conformance" / "test_io.py").read_text()
    (tmp_path / "conformance" / "test_io.py").write_text(
        source.replace(
            f'@pytest.mark.spec("{COUNT_ONE}")\n',
            f'@pytest.mark.spec("{COUNT_ONE}", "{COUNT_NONE}")\n',
        )
    )
    assert cli("check", "--root", str(tmp_path))[0] == 0


def test_check_names_uncited_clauses_when_every_clause_must_be_cited(tmp_path):
    make_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        claims(("demo",)).replace(
            "[tool.strideweave.conformance]\n",
            "[tool.strideweave.conformance]\nevery_clause_cited = true\n",
        )
    )
    binary = bind_all(tmp_path)
    status, text = cli("check", "--root", str(tmp_path), "--gtest-binary", str(binary))
    assert status == 1
    missing = [line for line in text.splitlines() if line.startswith("missing: ")]
    assert missing == [
        f"missing: no test cites clause {COUNTED}#1",
        f"missing: no test cites clause {COUNTED}#2",
        "missing: no test cites clause demo/widgets-are-named#1",
    ]
    assert (
        text.splitlines()[-1] == "check failed: 3 clauses of strict requirements cited by no test"
    )


def test_check_says_first_that_test_modules_failed_to_collect(tmp_path):
    make_project(tmp_path, complete=())
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "test_x.py").write_text("import no_such_extension\n")
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert text.splitlines()[-1].startswith(
        "check failed: 1 test module failed to collect (first: conformance/test_x.py: "
        "collection failed: E   ModuleNotFoundError: No module named 'no_such_extension')"
    )


def test_check_says_so_when_a_conftest_does_not_import(tmp_path):
    make_project(tmp_path, complete=())
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "conftest.py").write_text("import no_such_extension\n")
    (tmp_path / "conformance" / "test_x.py").write_text("def test_x():\n    pass\n")
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    last = text.splitlines()[-1]
    assert last.startswith("check failed: 1 test module failed to collect (first: "), last
    assert "ModuleNotFoundError: No module named 'no_such_extension'" in last
