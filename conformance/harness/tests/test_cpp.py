"""C++ test-name citations: mapping and drift."""

import pytest

from conformance.harness.cpp import CppTest, cpp_citations, resolve_name
from strideweave._harness.citations import CPP

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
    assert resolution.target == (f"{COUNTED}#{name[6:]}" if name.startswith("clause") else None)
    if problem is not None:
        assert resolution.problem == problem
    else:
        assert resolution.problem is not None


def test_cpp_citations_and_drift(demo_catalog):
    tests = [
        CppTest(SUITE, "count_one_widget", "build/unit_tests"),
        CppTest("Plain", "test", "build/unit_tests"),
        CppTest(SUITE, "nope", "build/unit_tests"),
        CppTest(SUITE, "clause3", "build/unit_tests"),
    ]
    citations, drift = cpp_citations(tests, demo_catalog)
    assert [(c.target, c.test, c.kind) for c in citations] == [
        (COUNT_ONE, f"{SUITE}.count_one_widget", CPP)
    ]
    assert [str(d) for d in drift] == [
        f"build/unit_tests: C++ test {SUITE}.nope: test name 'nope' names no scenario of "
        f"{COUNTED} (expected a scenario slug, clause<N> or requirement)",
        f"build/unit_tests: C++ test {SUITE}.clause3: {COUNTED} has 2 clauses, not 3",
    ]


def test_a_deleted_pinned_clause_is_cited_not_drift(demo_catalog):
    tests = [CppTest(SUITE, "clause3")]
    citations, drift = cpp_citations(tests, demo_catalog, pinned={f"{COUNTED}#3"})
    assert [c.target for c in citations] == [f"{COUNTED}#3"]
    assert drift == []
