"""Binding rules, statuses, counts and scenario verdicts."""

from strideweave._harness import coverage as cov
from strideweave._harness import outcomes
from strideweave._harness.citations import CPP, PYTHON, Citation
from strideweave._harness.coverage import Evidence, build_coverage, scenario_verdict

from .conftest import COUNT_NONE, COUNT_ONE, COUNTED, NAME_ONE, NAMED


def py(target, test):
    return Citation(target, test, PYTHON)


def build(catalog, citations=(), results=None, strict=()):
    results = results or {}
    return build_coverage(catalog, Evidence(tuple(citations), results), strict)


def scenario(coverage, sid):
    return coverage.scenario(sid)[1]


def test_unbound_scenarios_are_missing(demo_catalog):
    coverage = build(demo_catalog, strict=["demo"])
    (capability,) = coverage.capabilities
    assert capability.strict
    assert all(r.status == cov.MISSING for r in capability.requirements)
    item = scenario(coverage, COUNT_ONE)
    assert item.status == cov.MISSING
    assert scenario_verdict(item, strict=True) == cov.Verdict(
        outcomes.FAILED, f"missing: no test cites {COUNT_ONE}"
    )
    assert scenario_verdict(item, strict=False).outcome == outcomes.SKIPPED
    assert scenario_verdict(item, strict=False).message.startswith("missing")


def test_a_claimed_requirement_is_strict_in_a_capability_that_is_not(demo_catalog):
    results = {(PYTHON, "t.py::test_ok"): outcomes.PASSED}
    coverage = build(demo_catalog, [py(COUNT_ONE, "t.py::test_ok")], results, strict=[COUNTED])
    (capability,) = coverage.capabilities
    assert not capability.strict
    assert [r.strict for r in capability.requirements] == [True, False]
    assert capability.strict_requirements == capability.requirements[:1]
    assert capability.mode == "strict for 1/2 requirements"
    requirement, missing = coverage.scenario(COUNT_NONE)
    assert requirement.requirement.id == COUNTED
    assert scenario_verdict(missing, requirement.strict) == cov.Verdict(
        outcomes.FAILED, f"missing: no test cites {COUNT_NONE}"
    )
    requirement, passing = coverage.scenario(COUNT_ONE)
    assert scenario_verdict(passing, requirement.strict).outcome == outcomes.PASSED
    requirement, relaxed = coverage.scenario(NAME_ONE)
    assert not requirement.strict
    assert scenario_verdict(relaxed, requirement.strict).outcome == outcomes.SKIPPED


def test_a_strict_capability_makes_every_requirement_strict(demo_catalog):
    (strict,) = build(demo_catalog, strict=["demo"]).capabilities
    assert all(r.strict for r in strict.requirements)
    assert (strict.mode, strict.strict_requirements) == ("strict", ())
    (relaxed,) = build(demo_catalog).capabilities
    assert not any(r.strict for r in relaxed.requirements)
    assert (relaxed.mode, relaxed.strict_requirements) == ("not strict", ())


def test_pass_fail_and_not_run(demo_catalog):
    citations = [
        py(COUNT_ONE, "t.py::test_ok"),
        py(COUNT_ONE, "t.py::test_xfail"),
        py(COUNT_NONE, "t.py::test_ok"),
        py(COUNT_NONE, "t.py::test_bad"),
        py(NAME_ONE, "t.py::test_other_suite"),
    ]
    results = {
        (PYTHON, "t.py::test_ok"): outcomes.PASSED,
        (PYTHON, "t.py::test_xfail"): outcomes.XFAILED,
        (PYTHON, "t.py::test_bad"): outcomes.FAILED,
    }
    coverage = build(demo_catalog, citations, results)
    assert scenario(coverage, COUNT_ONE).status == cov.PASS
    failing = scenario(coverage, COUNT_NONE)
    assert failing.status == cov.FAIL
    assert scenario_verdict(failing, False) == cov.Verdict(
        outcomes.FAILED, f"{COUNT_NONE}: failing bound tests: t.py::test_bad [python]"
    )
    not_run = scenario(coverage, NAME_ONE)
    assert not_run.status == cov.NOT_RUN
    assert scenario_verdict(not_run, True) == cov.Verdict(
        outcomes.SKIPPED, "bound to tests not run in this session: t.py::test_other_suite [python]"
    )


def test_xfail_and_skip_never_pass(demo_catalog):
    citations = [py(COUNT_ONE, "t.py::test_xfail"), py(COUNT_ONE, "t.py::test_skip")]
    results = {
        (PYTHON, "t.py::test_xfail"): outcomes.XFAILED,
        (PYTHON, "t.py::test_skip"): outcomes.SKIPPED,
    }
    item = scenario(build(demo_catalog, citations, results), COUNT_ONE)
    assert item.status == cov.NOT_RUN
    message = (
        "no bound test passed: t.py::test_skip [python] (skipped), "
        "t.py::test_xfail [python] (xfailed)"
    )
    # Strict: a scenario passes only when a bound test ran and passed, so bound tests
    # that all skipped fail it; not strict, it is skipped.
    assert scenario_verdict(item, True) == cov.Verdict(outcomes.FAILED, message)
    assert scenario_verdict(item, False) == cov.Verdict(outcomes.SKIPPED, message)


def test_cpp_outcomes_count(demo_catalog):
    citations = [
        Citation(COUNT_ONE, "S.count_one_widget", CPP),
        Citation(COUNT_ONE, "S.count_one_widget", CPP),
        Citation(COUNT_NONE, "S.count_none", CPP),
    ]
    results = {(CPP, "S.count_one_widget"): outcomes.PASSED, (CPP, "S.count_none"): outcomes.FAILED}
    coverage = build(demo_catalog, citations, results)
    passing = scenario(coverage, COUNT_ONE)
    assert passing.status == cov.PASS
    assert passing.tests == (cov.BoundTest("S.count_one_widget", CPP, outcomes.PASSED),)
    assert scenario(coverage, COUNT_NONE).status == cov.FAIL


def test_requirement_and_clause_citations_do_not_bind_scenarios(demo_catalog):
    citations = [py(COUNTED, "t.py::test_req"), py(f"{COUNTED}#1", "t.py::test_clause")]
    results = {(PYTHON, "t.py::test_req"): outcomes.PASSED}
    coverage = build(demo_catalog, citations, results)
    counted = coverage.capabilities[0].requirements[0]
    assert [s.status for s in counted.scenarios] == [cov.MISSING, cov.MISSING]
    assert counted.status == cov.PARTIAL
    assert counted.tests == (cov.BoundTest("t.py::test_req", PYTHON, outcomes.PASSED),)
    assert [c.status for c in counted.clauses] == [cov.BOUND, cov.MISSING]


def test_requirement_statuses(demo_catalog):
    ok = "t.py::test_ok"
    results = {(PYTHON, ok): outcomes.PASSED, (PYTHON, "t.py::test_bad"): outcomes.FAILED}

    def status(*citations):
        return build(demo_catalog, citations, results).capabilities[0].requirements[0].status

    assert status() == cov.MISSING
    assert status(py(COUNT_ONE, ok)) == cov.PARTIAL
    assert status(py(COUNT_ONE, ok), py(COUNT_NONE, ok)) == cov.PASS
    assert status(py(COUNT_ONE, ok), py(COUNT_NONE, "t.py::test_later")) == cov.NOT_RUN
    assert status(py(COUNT_ONE, ok), py(COUNT_NONE, ok), py(f"{COUNTED}#2", "t.py::test_bad")) == (
        cov.FAIL
    )
    assert status(py(COUNT_ONE, ok), py(COUNTED, "t.py::test_bad")) == cov.FAIL
    assert status(py(f"{COUNTED}#1", ok)) == cov.PARTIAL


def test_counts(demo_catalog):
    ok, bad = "t.py::test_ok", "t.py::test_bad"
    citations = [
        py(COUNT_ONE, ok),
        py(COUNT_NONE, bad),
        py(f"{COUNTED}#1", ok),
        py(f"{COUNTED}#2", "t.py::test_absent"),
        py(NAMED, ok),
        py("demo/unknown", ok),
    ]
    results = {(PYTHON, ok): outcomes.PASSED, (PYTHON, bad): outcomes.FAILED}
    counts = build(demo_catalog, citations, results).capabilities[0].counts
    assert counts.requirements == {
        "total": 2,
        cov.PASS: 0,
        cov.FAIL: 1,
        cov.PARTIAL: 1,
        cov.MISSING: 0,
        cov.NOT_RUN: 0,
    }
    assert counts.scenarios == {
        "total": 3,
        cov.BOUND: 2,
        cov.PASSING: 1,
        cov.FAILING: 1,
        cov.MISSING: 1,
        cov.NOT_RUN: 0,
    }
    assert counts.clauses == {
        "total": 3,
        cov.BOUND: 2,
        cov.PASSING: 1,
        cov.FAILING: 0,
        cov.MISSING: 1,
    }
