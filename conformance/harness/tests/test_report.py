"""Report files and terminal summary."""

import json
import xml.etree.ElementTree as ET

from strideweave._harness import outcomes
from strideweave._harness.citations import CPP, PYTHON, Citation
from strideweave._harness.coverage import Evidence, build_coverage
from strideweave._harness.pins import fingerprint
from strideweave._harness.report import Skip, summary_lines, to_markdown, write_reports

from .conftest import COUNT_NONE, COUNT_ONE, COUNTED, NAME_ONE, NAMED


def coverage(catalog, strict=()):
    citations = (
        Citation(COUNT_ONE, "t.py::test_ok", PYTHON),
        Citation(COUNT_NONE, "S.count_none", CPP),
        Citation(f"{COUNTED}#1", "t.py::test_ok", PYTHON),
        Citation(COUNTED, "t.py::test_req|pipe", PYTHON),
    )
    results = {(PYTHON, "t.py::test_ok"): outcomes.PASSED, (CPP, "S.count_none"): outcomes.FAILED}
    return build_coverage(catalog, Evidence(citations, results), strict)


def test_write_reports(tmp_path, demo_catalog):
    paths = write_reports(coverage(demo_catalog), tmp_path / "nested" / "out")
    assert [p.name for p in paths] == [
        "spec-coverage.md",
        "spec-coverage.html",
        "spec-coverage.json",
        "spec-coverage.junit.xml",
    ]
    assert all(p.is_file() for p in paths)


def test_json_content(tmp_path, demo_catalog):
    write_reports(coverage(demo_catalog, strict=["demo"]), tmp_path)
    data = json.loads((tmp_path / "spec-coverage.json").read_text())
    assert data["schema_version"] == 2
    (cap,) = data["capabilities"]
    assert cap["capability"] == "demo"
    assert cap["strict"] is True
    assert cap["counts"]["requirements"] == {
        "total": 2,
        "pass": 0,
        "fail": 1,
        "partial": 0,
        "missing": 1,
        "not-run": 0,
    }
    assert cap["counts"]["scenarios"] == {
        "total": 3,
        "bound": 2,
        "passing": 1,
        "failing": 1,
        "missing": 1,
        "not-run": 0,
    }
    assert cap["counts"]["clauses"] == {
        "total": 3,
        "bound": 1,
        "passing": 1,
        "failing": 0,
        "missing": 2,
    }
    counted = cap["requirements"][0]
    assert counted["id"] == COUNTED
    assert counted["status"] == "fail"
    assert counted["citations"] == [
        {"test": "t.py::test_req|pipe", "kind": "python", "outcome": "not-run"}
    ]
    assert counted["scenarios"][0] == {
        "id": COUNT_ONE,
        "name": "Count one widget",
        "line": 13,
        "status": "pass",
        "tests": [{"test": "t.py::test_ok", "kind": "python", "outcome": "passed"}],
    }
    assert counted["scenarios"][1]["tests"] == [
        {"test": "S.count_none", "kind": "cpp", "outcome": "failed"}
    ]
    assert counted["clauses"][0] == {
        "id": f"{COUNTED}#1",
        "number": 1,
        "text": "The counter SHALL count widgets.",
        "fingerprint": fingerprint("The counter SHALL count widgets."),
        "status": "passing",
        "tests": [{"test": "t.py::test_ok", "kind": "python", "outcome": "passed"}],
    }


def junit_cases(path):
    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    return root, suite, {case.get("name"): case for case in suite.findall("testcase")}


def junit_properties(suite):
    return [(p.get("name"), p.get("value")) for p in suite.find("properties")]


def test_junit_strict_and_not_strict(tmp_path, demo_catalog):
    write_reports(coverage(demo_catalog, strict=["demo"]), tmp_path)
    root, suite, cases = junit_cases(tmp_path / "spec-coverage.junit.xml")
    assert suite.get("name") == "demo"
    assert junit_properties(suite) == [("mode", "strict")]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "2", "0")
    assert root.get("tests") == "3"
    assert cases["count-one-widget"].get("classname") == "demo/widgets-are-counted"
    assert list(cases["count-one-widget"]) == []
    assert "S.count_none" in cases["count-none"].find("failure").get("message")
    assert (
        cases["name-a-widget"].find("failure").get("message")
        == f"missing: no test cites {NAME_ONE}"
    )

    write_reports(coverage(demo_catalog), tmp_path)
    _, suite, cases = junit_cases(tmp_path / "spec-coverage.junit.xml")
    assert junit_properties(suite) == [("mode", "not strict")]
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")
    assert cases["name-a-widget"].find("skipped").get("message") == "missing"


def test_claimed_requirements_in_every_format(tmp_path, demo_catalog):
    claimed = coverage(demo_catalog, strict=[NAMED])
    write_reports(claimed, tmp_path)
    (cap,) = json.loads((tmp_path / "spec-coverage.json").read_text())["capabilities"]
    assert cap["strict"] is False
    assert [(r["id"], r["strict"]) for r in cap["requirements"]] == [
        (COUNTED, False),
        (NAMED, True),
    ]
    _, suite, cases = junit_cases(tmp_path / "spec-coverage.junit.xml")
    assert junit_properties(suite) == [
        ("mode", "strict for 1/2 requirements"),
        ("strict-requirement", NAMED),
    ]
    assert (suite.get("failures"), suite.get("skipped")) == ("2", "0")
    assert cases["name-a-widget"].find("failure").get("message") == (
        f"missing: no test cites {NAME_ONE}"
    )
    text = (tmp_path / "spec-coverage.md").read_text()
    assert "| demo | strict for 1/2 requirements | 0/2 | 1/3 | 1 | 1 | 1/3 |" in text
    assert text.split("\n## ")[1].splitlines()[:7] == [
        "demo",
        "",
        f"Strict requirements: `{NAMED}`",
        "",
        f"- fail: `{COUNTED}`",
        f"- fail: `{COUNT_NONE}`",
        f"- missing: `{NAME_ONE}`",
    ]
    assert summary_lines(claimed) == [
        "demo (strict for 1/2 requirements): 0/2 requirements pass, 1/3 scenarios pass, "
        "1 failing, 1 missing"
    ]


def test_markdown_names_claimed_requirements_when_nothing_fails(demo_catalog):
    citations = (Citation(COUNT_ONE, "t", PYTHON), Citation(COUNT_NONE, "t", PYTHON))
    clean = build_coverage(demo_catalog, Evidence(citations), [COUNTED])
    assert to_markdown(clean).split("\n## ")[1].splitlines() == [
        "demo",
        "",
        f"Strict requirements: `{COUNTED}`",
        "",
        "Nothing fails, and no strict requirement misses a scenario.",
    ]
    assert to_markdown(clean).split("\n## ")[2].splitlines() == [
        "Skipped tests",
        "",
        "No test was skipped.",
        "",
        "Per-test detail: `spec-coverage.html` and `spec-coverage.json`.",
    ]


def test_markdown_lists_every_skip_with_its_reason(demo_catalog):
    skips = [
        Skip("t.py::test_a[x]", "no tmpfs at /dev/shm", machine_dependent=True),
        Skip("Suite.name", "skipped by the C++ test"),
    ]
    text = to_markdown(coverage(demo_catalog), skips)
    assert text.split("\n## Skipped tests\n")[1].splitlines()[:4] == [
        "",
        "- `t.py::test_a[x]`: no tmpfs at /dev/shm",
        "- `Suite.name`: skipped by the C++ test",
        "",
    ]


def test_markdown(demo_catalog):
    text = to_markdown(coverage(demo_catalog, strict=["demo"]))
    assert text.startswith("# Spec coverage\n")
    assert "| demo | strict | 0/2 | 1/3 | 1 | 1 | 1/3 |" in text
    assert text.split("\n## ")[1].splitlines() == [
        "demo",
        "",
        f"- fail: `{COUNTED}`",
        f"- fail: `{COUNT_NONE}`",
        f"- missing: `{NAME_ONE}`",
        "",
    ]
    assert "t.py::test_ok" not in text
    relaxed = to_markdown(coverage(demo_catalog))
    assert NAME_ONE not in relaxed and COUNT_NONE in relaxed
    clean = build_coverage(demo_catalog, Evidence((Citation(COUNT_ONE, "t", PYTHON),)), ())
    assert "Nothing fails, and no strict requirement misses a scenario." in to_markdown(clean)


def test_summary_lines(demo_catalog):
    assert summary_lines(coverage(demo_catalog, strict=["demo"])) == [
        "demo (strict): 0/2 requirements pass, 1/3 scenarios pass, 1 failing, 1 missing"
    ]
    empty = build_coverage(demo_catalog, Evidence(), ())
    assert summary_lines(empty) == ["demo: 0/2 requirements pass, 0/3 scenarios pass, 3 missing"]
