"""C++ test-name citations: mapping, source scanning and drift."""

import pytest

from conformance.harness.citations import CPP
from conformance.harness.cpp import (
    CppTest,
    cpp_citations,
    declared_tests,
    resolve_name,
    scan_cpp_tests,
    strip_comments,
)

from .conftest import COUNT_NONE, COUNT_ONE, COUNTED, NAME_ONE

SUITE = "demo__widgets_are_counted"


@pytest.mark.parametrize(
    ("suite", "name", "target"),
    [
        (SUITE, "count_one_widget", COUNT_ONE),
        (SUITE, "count_none__empty_input", COUNT_NONE),
        (SUITE, "count_none__", COUNT_NONE),
        ("demo__widgets_are_named", "name_a_widget", NAME_ONE),
        (SUITE, "clause2", f"{COUNTED}#2"),
        (SUITE, "clause1__property", f"{COUNTED}#1"),
        (SUITE, "requirement", COUNTED),
        (SUITE, "requirement__fuzz", COUNTED),
        (f"DISABLED_{SUITE}", "DISABLED_count_none", COUNT_NONE),
    ],
)
def test_resolve_citing_names(demo_catalog, suite, name, target):
    resolution = resolve_name(suite, name, demo_catalog)
    assert (resolution.target, resolution.problem) == (target, None)


def test_plain_suites_are_not_citations(demo_catalog):
    resolution = resolve_name("DLPackAbi", "VersionIsOnePointZero", demo_catalog)
    assert (resolution.target, resolution.problem) == (None, None)


@pytest.mark.parametrize(
    ("suite", "name", "problem"),
    [
        (
            "demo__widgets_are_countd",
            "count_none",
            "suite 'demo__widgets_are_countd' names no known requirement "
            "(expected <capability>__<requirement_slug>) "
            "(did you mean 'demo__widgets_are_counted'?)",
        ),
        (
            "other__widgets_are_counted",
            "count_none",
            "suite 'other__widgets_are_counted' names no known requirement "
            "(expected <capability>__<requirement_slug>) "
            "(did you mean 'demo__widgets_are_counted'?)",
        ),
        (
            SUITE,
            "count_nothing",
            f"test name 'count_nothing' names no scenario of {COUNTED} "
            "(expected a scenario slug, clause<N> or requirement) (did you mean 'count_none'?)",
        ),
        (SUITE, "clause3", f"{COUNTED} has 2 clauses, not 3"),
        (SUITE, "clause0", f"{COUNTED} has 2 clauses, not 0"),
        (SUITE, "count-none", None),
    ],
)
def test_resolve_problems(demo_catalog, suite, name, problem):
    resolution = resolve_name(suite, name, demo_catalog)
    assert resolution.target is None
    if problem is not None:
        assert resolution.problem == problem
    else:
        assert resolution.problem is not None


SOURCE = """\
#include <gtest/gtest.h>
// TEST(demo__widgets_are_counted, commented_out)
/* TEST(demo__widgets_are_counted, block
   commented) */
TEST(demo__widgets_are_counted, count_one_widget) {}
TEST_F(Fixture, plain) {}
TEST_P(demo__widgets_are_counted,
       count_none__param) {}
TYPED_TEST(demo__widgets_are_named, name_a_widget) {}
TYPED_TEST_P(S4, N4) {}
RC_GTEST_PROP(demo__widgets_are_counted, clause1, (int x)) {}
RC_GTEST_FIXTURE_PROP(demo__widgets_are_counted, requirement__fx, ()) {}
const char* s = "TEST(in_string_literal, counts_anyway)";  // strings are kept
MY_TEST(not_a, macro) {}
"""


def test_declared_tests():
    found = declared_tests(SOURCE, "src/cpp/x_test.cc")
    assert [(t.suite, t.name, t.line) for t in found] == [
        ("demo__widgets_are_counted", "count_one_widget", 5),
        ("Fixture", "plain", 6),
        ("demo__widgets_are_counted", "count_none__param", 7),
        ("demo__widgets_are_named", "name_a_widget", 9),
        ("S4", "N4", 10),
        ("demo__widgets_are_counted", "clause1", 11),
        ("demo__widgets_are_counted", "requirement__fx", 12),
        ("in_string_literal", "counts_anyway", 13),
    ]
    assert found[0].label == "demo__widgets_are_counted.count_one_widget"


def test_strip_comments_keeps_lines_and_strings():
    code = 'a // x\n/* y\n z */ b "// kept"\n'
    stripped = strip_comments(code)
    assert stripped.count("\n") == code.count("\n")
    assert "x" not in stripped and "y" not in stripped
    assert '"// kept"' in stripped


def test_cpp_citations_and_drift(demo_catalog):
    tests = [
        CppTest(SUITE, "count_one_widget", "src/cpp/a_test.cc", 3),
        CppTest("Plain", "test", "src/cpp/a_test.cc", 4),
        CppTest(SUITE, "nope", "src/cpp/a_test.cc", 5),
    ]
    citations, drift = cpp_citations(tests, demo_catalog, static=True)
    assert [(c.target, c.test, c.kind, c.static, c.where) for c in citations] == [
        (COUNT_ONE, f"{SUITE}.count_one_widget", CPP, True, "src/cpp/a_test.cc:3")
    ]
    assert len(drift) == 1
    assert str(drift[0]).startswith(
        f"src/cpp/a_test.cc:5: C++ test {SUITE}.nope: test name 'nope' names no scenario"
    )


def test_scan_cpp_tests_reads_cc_files_under_dirs(tmp_path):
    for relpath in ["src/cpp/a/x_test.cc", "property_tests/cpp/props.cc", "src/other/y.cc"]:
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"TEST({SUITE}, count_none) {{}}\n")
    (tmp_path / "src/cpp/a/header.h").write_text(f"TEST({SUITE}, in_header) {{}}\n")
    found = scan_cpp_tests(tmp_path, ("src/cpp", "property_tests/cpp"))
    assert [(t.path, t.line) for t in found] == [
        ("src/cpp/a/x_test.cc", 1),
        ("property_tests/cpp/props.cc", 1),
    ]
