"""The HTML report, read back with the standard library's html.parser."""

from html.parser import HTMLParser

from strideweave._harness import outcomes
from strideweave._harness.catalog import Catalog
from strideweave._harness.citations import CPP, PYTHON, Citation
from strideweave._harness.coverage import Evidence, build_coverage
from strideweave._harness.html_report import to_html
from strideweave._harness.openspec import load_specs

from .conftest import COUNT_NONE, COUNT_ONE, COUNTED, NAME_ONE, NAMED, REPO_ROOT


class Elements(HTMLParser):
    """Every start tag's attributes in document order, and the text."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(document)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def kinds(self, kind: str) -> list[tuple[str, str]]:
        """(id, status) of every element with ``data-kind=kind``, in document order."""
        return [
            (attrs.get("id") or attrs["data-id"], attrs["data-status"])
            for _, attrs in self.tags
            if attrs.get("data-kind") == kind
        ]


def statuses(coverage, level):
    found = {}
    for cap in coverage.capabilities:
        for req in cap.requirements:
            if level == "requirement":
                found[req.requirement.id] = req.status
            for scenario in req.scenarios if level == "scenario" else ():
                found[scenario.scenario.id] = scenario.status
            for clause in req.clauses if level == "clause" else ():
                found[clause.clause.id] = clause.status
    return found


def demo_coverage(catalog):
    citations = (
        Citation(COUNT_ONE, "t.py::test_ok", PYTHON),
        Citation(COUNT_NONE, "S.count_none", CPP),
        Citation(f"{COUNTED}#2", "t.py::test_<b>", PYTHON),
    )
    results = {(PYTHON, "t.py::test_ok"): outcomes.PASSED, (CPP, "S.count_none"): outcomes.FAILED}
    return build_coverage(catalog, Evidence(citations, results), ["demo"])


def test_every_item_appears_with_its_status_failing_first(demo_catalog):
    coverage = demo_coverage(demo_catalog)
    page = Elements(to_html(coverage))
    assert page.kinds("requirement") == [(COUNTED, "fail"), (NAMED, "missing")]
    assert page.kinds("scenario") == [
        (COUNT_NONE, "fail"),
        (COUNT_ONE, "pass"),
        (NAME_ONE, "missing"),
    ]
    assert page.kinds("clause") == [
        (f"{COUNTED}#1", "missing"),
        (f"{COUNTED}#2", "bound"),
        ("demo/widgets-are-named#1", "missing"),
    ]
    text = "".join(page.text)
    assert "It MUST never go negative." in text
    assert "t.py::test_<b>" in text  # escaped on the way out, text on the way back


def test_anchors_details_and_self_containment(demo_catalog):
    document = to_html(demo_coverage(demo_catalog))
    page = Elements(document)
    details = {attrs["id"]: attrs for tag, attrs in page.tags if tag == "details"}
    assert "open" in details[COUNTED] and "open" not in details[NAMED]
    links = {attrs["href"] for tag, attrs in page.tags if tag == "a"}
    assert {f"#{COUNTED}", f"#{NAMED}", "#cap-demo"} <= links
    assert ("section", {"id": "cap-demo"}) in page.tags
    assert not [tag for tag, _ in page.tags if tag in ("script", "link", "img", "iframe")]
    assert "http://" not in document and "https://" not in document


def test_strict_mode_and_claimed_requirements(demo_catalog):
    strict = Elements(to_html(demo_coverage(demo_catalog)))
    details = {attrs["id"]: attrs for tag, attrs in strict.tags if tag == "details"}
    assert {rid: attrs["data-strict"] for rid, attrs in details.items()} == {
        COUNTED: "true",
        NAMED: "true",
    }
    assert "(strict)" in "".join(strict.text)
    claimed = build_coverage(demo_catalog, Evidence(), [NAMED])
    page = Elements(to_html(claimed))
    details = {attrs["id"]: attrs for tag, attrs in page.tags if tag == "details"}
    assert {rid: attrs["data-strict"] for rid, attrs in details.items()} == {
        COUNTED: "false",
        NAMED: "true",
    }
    text = "".join(page.text)
    assert "(strict for 1/2 requirements)" in text
    assert text.count("strict for 1/2 requirements") == 2  # summary table and heading
    assert "strict · 0/1 scenarios pass" in text
    assert "strict · 0/2 scenarios pass" not in text


def test_every_requirement_and_scenario_of_every_real_spec_appears():
    catalog = Catalog(load_specs(REPO_ROOT / "spec", relative_to=REPO_ROOT))
    ids = catalog.scenario_ids()
    citations = [Citation(sid, f"t.py::test_{n}", PYTHON) for n, sid in enumerate(ids[::2])]
    results = {(PYTHON, c.test): outcomes.FAILED for c in citations[::3]}
    results.update({(PYTHON, c.test): outcomes.PASSED for c in citations[1::3]})
    coverage = build_coverage(catalog, Evidence(tuple(citations), results), ())
    page = Elements(to_html(coverage))
    for level in ("requirement", "scenario", "clause"):
        shown = page.kinds(level)
        assert len(shown) == len(set(shown))
        assert dict(shown) == statuses(coverage, level)
    assert {status for _, status in page.kinds("scenario")} == {
        "fail",
        "pass",
        "not-run",
        "missing",
    }
