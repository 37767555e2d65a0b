"""Coverage reports: JSON, Markdown (GitHub-readable), JUnit XML and terminal lines.

``write_reports(coverage, directory)`` creates ``directory`` if needed and writes
``spec-coverage.json``, ``spec-coverage.md`` and ``spec-coverage.junit.xml``; the three
files describe the same ``Coverage`` and are deterministic for equal input.

JUnit: one ``<testsuite>`` per capability, one ``<testcase>`` per scenario with
``classname="<capability>/<requirement-slug>"`` and ``name="<scenario-slug>"``; a failing
scenario (or a missing one in a strict capability) carries ``<failure>``, a missing one in
a non-strict capability ``<skipped message="missing">``, a not-run one ``<skipped
message="not-run">``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from . import coverage as cov
from .coverage import (
    BoundTest,
    CapabilityCoverage,
    ClauseCoverage,
    Coverage,
    RequirementCoverage,
    ScenarioCoverage,
)

JSON_NAME = "spec-coverage.json"
MARKDOWN_NAME = "spec-coverage.md"
JUNIT_NAME = "spec-coverage.junit.xml"
FORMAT_VERSION = 1


def _tests_json(tests: tuple[BoundTest, ...]) -> list[dict[str, Any]]:
    return [{"test": t.test, "kind": t.kind, "outcome": t.outcome or "not-run"} for t in tests]


def _scenario_json(item: ScenarioCoverage) -> dict[str, Any]:
    return {
        "id": item.scenario.id,
        "name": item.scenario.name,
        "line": item.scenario.line,
        "status": item.status,
        "tests": _tests_json(item.tests),
    }


def _clause_json(item: ClauseCoverage) -> dict[str, Any]:
    return {
        "id": item.clause.id,
        "number": item.clause.number,
        "text": item.clause.text,
        "status": item.status,
        "tests": _tests_json(item.tests),
    }


def _requirement_json(item: RequirementCoverage) -> dict[str, Any]:
    return {
        "id": item.requirement.id,
        "name": item.requirement.name,
        "line": item.requirement.line,
        "status": item.status,
        "citations": _tests_json(item.tests),
        "scenarios": [_scenario_json(s) for s in item.scenarios],
        "clauses": [_clause_json(c) for c in item.clauses],
    }


def to_json(coverage: Coverage) -> dict[str, Any]:
    """The JSON document (a dict of plain types)."""
    return {
        "format": FORMAT_VERSION,
        "capabilities": [
            {
                "capability": cap.capability,
                "path": cap.spec.path.as_posix(),
                "strict": cap.strict,
                "counts": {
                    "requirements": dict(cap.counts.requirements),
                    "scenarios": dict(cap.counts.scenarios),
                    "clauses": dict(cap.counts.clauses),
                },
                "requirements": [_requirement_json(r) for r in cap.requirements],
            }
            for cap in coverage.capabilities
        ],
    }


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _tests_cell(tests: tuple[BoundTest, ...]) -> str:
    if not tests:
        return "-"
    return "<br>".join(f"`{t.test}` ({t.kind}: {t.outcome or 'not run'})" for t in tests)


def _strict_label(cap: CapabilityCoverage) -> str:
    return "strict" if cap.strict else "not strict"


def _overview(coverage: Coverage) -> list[str]:
    rows: list[list[object]] = []
    for cap in coverage.capabilities:
        r, s, c = cap.counts.requirements, cap.counts.scenarios, cap.counts.clauses
        rows.append(
            [
                cap.capability,
                _strict_label(cap),
                f"{r[cov.PASS]}/{r['total']}",
                f"{s[cov.PASSING]}/{s['total']}",
                s[cov.FAILING],
                s[cov.MISSING],
                f"{c[cov.BOUND]}/{c['total']}",
            ]
        )
    header = ["Capability", "Mode", "Requirements passing", "Scenarios passing"]
    header += ["Scenarios failing", "Scenarios missing", "Clauses cited"]
    return _table(header, rows)


def _counts_table(cap: CapabilityCoverage) -> list[str]:
    r, s, c = cap.counts.requirements, cap.counts.scenarios, cap.counts.clauses
    rows: list[list[object]] = [
        ["Requirements", r["total"], r[cov.PASS], r[cov.FAIL], r[cov.PARTIAL]],
        ["Scenarios", s["total"], s[cov.PASSING], s[cov.FAILING], "-"],
        ["Clauses", c["total"], c[cov.PASSING], c[cov.FAILING], "-"],
    ]
    rows[0] += [r[cov.MISSING], r[cov.NOT_RUN], "-"]
    rows[1] += [s[cov.MISSING], s[cov.NOT_RUN], s[cov.BOUND]]
    rows[2] += [c[cov.MISSING], "-", c[cov.BOUND]]
    return _table(["", "total", "pass", "fail", "partial", "missing", "not run", "bound"], rows)


def _requirements_table(cap: CapabilityCoverage) -> list[str]:
    rows: list[list[object]] = []
    for req in cap.requirements:
        passing = sum(x.status == cov.PASS for x in req.scenarios)
        cited = sum(x.status != cov.MISSING for x in req.clauses)
        rows.append(
            [
                f"`{req.requirement.id}`",
                req.status,
                f"{passing}/{len(req.scenarios)}",
                f"{cited}/{len(req.clauses)}",
                _tests_cell(req.tests),
            ]
        )
    header = ["Requirement", "Status", "Scenarios passing", "Clauses cited", "Direct citations"]
    return _table(header, rows)


def _capability_section(cap: CapabilityCoverage) -> list[str]:
    lines = ["", f"## {cap.capability} ({_strict_label(cap)})", ""]
    lines += [f"Spec: `{cap.spec.path.as_posix()}`", ""]
    lines += _counts_table(cap)
    lines += ["", "### Requirements", ""]
    lines += _requirements_table(cap)
    lines += ["", "### Scenarios", ""]
    scenarios = [sc for req in cap.requirements for sc in req.scenarios]
    lines += _table(
        ["Scenario", "Status", "Tests"],
        [[f"`{sc.scenario.id}`", sc.status, _tests_cell(sc.tests)] for sc in scenarios],
    )
    cited = [cl for req in cap.requirements for cl in req.clauses if cl.tests]
    if cited:
        lines += ["", "### Cited clauses", ""]
        lines += _table(
            ["Clause", "Status", "Text", "Tests"],
            [
                [f"`{cl.clause.id}`", cl.status, cl.clause.text, _tests_cell(cl.tests)]
                for cl in cited
            ],
        )
    return lines


def to_markdown(coverage: Coverage) -> str:
    """A Markdown document: an overview table with one row per capability, then per
    capability a counts table, a per-requirement table, a per-scenario table and the cited
    clauses."""
    lines = ["# Spec coverage", "", *_overview(coverage)]
    for cap in coverage.capabilities:
        lines += _capability_section(cap)
    return "\n".join(lines) + "\n"


def to_junit(coverage: Coverage) -> bytes:
    """The JUnit XML document (UTF-8, with declaration)."""
    root = ET.Element("testsuites", name="spec-coverage")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for cap in coverage.capabilities:
        suite = ET.SubElement(root, "testsuite", name=cap.capability)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        for req in cap.requirements:
            for sc in req.scenarios:
                counts["tests"] += 1
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=f"{cap.capability}/{req.requirement.slug}",
                    name=sc.scenario.slug,
                )
                verdict = cov.scenario_verdict(sc, cap.strict)
                if verdict.outcome == "failed":
                    counts["failures"] += 1
                    failure = ET.SubElement(case, "failure", message=verdict.message)
                    failure.text = verdict.message
                elif verdict.outcome == "skipped":
                    counts["skipped"] += 1
                    skipped = ET.SubElement(case, "skipped", message=sc.status)
                    skipped.text = verdict.message
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("errors", "0")
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("errors", "0")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def write_reports(coverage: Coverage, directory: Path) -> list[Path]:
    """Write the three report files into ``directory`` (created); return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / JSON_NAME
    markdown_path = directory / MARKDOWN_NAME
    junit_path = directory / JUNIT_NAME
    json_path.write_text(json.dumps(to_json(coverage), indent=2) + "\n", encoding="utf-8")
    markdown_path.write_text(to_markdown(coverage), encoding="utf-8")
    junit_path.write_bytes(to_junit(coverage) + b"\n")
    return [markdown_path, json_path, junit_path]


def summary_lines(coverage: Coverage) -> list[str]:
    """One line per capability, e.g.
    ``core-layout (strict): 12/12 requirements pass, 35/35 scenarios pass``."""
    lines = []
    for cap in coverage.capabilities:
        r, s = cap.counts.requirements, cap.counts.scenarios
        text = (
            f"{cap.capability}{' (strict)' if cap.strict else ''}: "
            f"{r[cov.PASS]}/{r['total']} requirements pass, "
            f"{s[cov.PASSING]}/{s['total']} scenarios pass"
        )
        extras = [
            f"{s[key]} {label}"
            for key, label in (
                (cov.FAILING, "failing"),
                (cov.MISSING, "missing"),
                (cov.NOT_RUN, "not run"),
            )
            if s[key]
        ]
        lines.append(text + "".join(f", {extra}" for extra in extras))
    return lines
