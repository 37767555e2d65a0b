"""Coverage reports: Markdown (short), HTML, JSON, JUnit XML and terminal lines.

``write_reports(coverage, directory)`` writes ``spec-coverage.md``, ``.html``
(``html_report``), ``.json`` and ``.junit.xml`` into ``directory`` (created); all describe
the same ``Coverage`` and are deterministic. docs/conformance.md documents each format,
the JSON schema (versioned by ``schema_version``) included.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import coverage as cov
from .coverage import (
    BoundTest,
    ClauseCoverage,
    Coverage,
    RequirementCoverage,
    ScenarioCoverage,
)
from .html_report import to_html
from .pins import fingerprint

JSON_NAME = "spec-coverage.json"
MARKDOWN_NAME = "spec-coverage.md"
JUNIT_NAME = "spec-coverage.junit.xml"
HTML_NAME = "spec-coverage.html"
SCHEMA_VERSION = 2


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
        "fingerprint": fingerprint(item.clause.text),
        "status": item.status,
        "tests": _tests_json(item.tests),
    }


def _requirement_json(item: RequirementCoverage) -> dict[str, Any]:
    return {
        "id": item.requirement.id,
        "name": item.requirement.name,
        "line": item.requirement.line,
        "status": item.status,
        "strict": item.strict,
        "citations": _tests_json(item.tests),
        "scenarios": [_scenario_json(s) for s in item.scenarios],
        "clauses": [_clause_json(c) for c in item.clauses],
    }


def to_json(coverage: Coverage) -> dict[str, Any]:
    """The JSON document (a dict of plain types)."""
    return {
        "schema_version": SCHEMA_VERSION,
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


def _overview(coverage: Coverage) -> list[str]:
    lines = [
        "| Capability | Mode | Requirements passing | Scenarios passing | Scenarios failing "
        "| Scenarios missing | Clauses cited |",
        "|---|---|---|---|---|---|---|",
    ]
    for cap in coverage.capabilities:
        r, s, c = cap.counts.requirements, cap.counts.scenarios, cap.counts.clauses
        lines.append(
            f"| {cap.capability} | {cap.mode} "
            f"| {r[cov.PASS]}/{r['total']} | {s[cov.PASSING]}/{s['total']} | {s[cov.FAILING]} "
            f"| {s[cov.MISSING]} | {c[cov.BOUND]}/{c['total']} |"
        )
    return lines


@dataclass(frozen=True)
class Skip:
    """A skipped test (node id or C++ label), its reason, and whether the project declares
    it machine-dependent (``[tool.strideweave.conformance] machine_skips``)."""

    test: str
    reason: str
    machine_dependent: bool = False


def to_markdown(coverage: Coverage, skips: Sequence[Skip] = ()) -> str:
    """A short Markdown document: the overview table, then per capability the requirements
    claimed strict one by one, and the ids of failing requirements and scenarios and of
    missing scenarios of strict requirements; then every skipped test with its reason."""
    lines = ["# Spec coverage", "", *_overview(coverage), ""]
    quiet = True
    for cap in coverage.capabilities:
        found = [f"- fail: `{r.requirement.id}`" for r in cap.requirements if r.status == cov.FAIL]
        found += [
            f"- {s.status}: `{s.scenario.id}`"
            for r in cap.requirements
            for s in r.scenarios
            if s.status == cov.FAIL or (r.strict and s.status == cov.MISSING)
        ]
        quiet = quiet and not found
        claimed = ", ".join(f"`{r.requirement.id}`" for r in cap.strict_requirements)
        if claimed or found:
            lines += [f"## {cap.capability}", ""]
        if claimed:
            lines += [f"Strict requirements: {claimed}", ""]
        lines += [*found, ""] if found else []
    if quiet:
        lines.append("Nothing fails, and no strict requirement misses a scenario.")
    lines += ["", "## Skipped tests", ""]
    lines += [f"- `{skip.test}`: {skip.reason}" for skip in skips] or ["No test was skipped."]
    lines += ["", f"Per-test detail: `{HTML_NAME}` and `{JSON_NAME}`."]
    return "\n".join(lines) + "\n"


def to_junit(coverage: Coverage) -> bytes:
    """The JUnit XML document (UTF-8, with declaration)."""
    root = ET.Element("testsuites", name="spec-coverage")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for cap in coverage.capabilities:
        suite = ET.SubElement(root, "testsuite", name=cap.capability)
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="mode", value=cap.mode)
        for req in cap.strict_requirements:
            ET.SubElement(
                properties, "property", name="strict-requirement", value=req.requirement.id
            )
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
                verdict = cov.scenario_verdict(sc, req.strict)
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


def write_reports(coverage: Coverage, directory: Path, skips: Sequence[Skip] = ()) -> list[Path]:
    """Write the four report files into ``directory`` (created); return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / name for name in (MARKDOWN_NAME, HTML_NAME, JSON_NAME, JUNIT_NAME)]
    paths[0].write_text(to_markdown(coverage, skips), encoding="utf-8")
    paths[1].write_text(to_html(coverage), encoding="utf-8")
    paths[2].write_text(json.dumps(to_json(coverage), indent=2) + "\n", encoding="utf-8")
    paths[3].write_bytes(to_junit(coverage) + b"\n")
    return paths


def summary_lines(coverage: Coverage) -> list[str]:
    """One line per capability, e.g.
    ``core-layout (strict): 12/12 requirements pass, 35/35 scenarios pass, 1 missing``
    (the mode in parentheses unless ``not strict``)."""
    lines = []
    for cap in coverage.capabilities:
        r, s = cap.counts.requirements, cap.counts.scenarios
        extras = [
            (s[cov.FAILING], "failing"),
            (s[cov.MISSING], "missing"),
            (s[cov.NOT_RUN], "not run"),
        ]
        lines.append(
            f"{cap.capability}{'' if cap.mode == 'not strict' else f' ({cap.mode})'}: "
            f"{r[cov.PASS]}/{r['total']} requirements pass, "
            f"{s[cov.PASSING]}/{s['total']} scenarios pass"
            + "".join(f", {count} {label}" for count, label in extras if count)
        )
    return lines
