"""The self-contained HTML coverage report (no script, no external resource).

A summary table (the strict mode and a stacked bar per requirement state and per scenario
state for each capability), then per capability one ``<details>`` per requirement with
``id`` = the requirement id, ``data-status`` = its status and ``data-strict`` = ``true`` or
``false`` (a strict requirement's summary line says ``strict``), holding its clauses and
scenarios (rows with ``data-status``; scenario rows have ``id`` = the scenario id) and their
citing tests.
Capabilities (by their worst requirement), requirements, clauses and scenarios are ordered
fail, missing, partial, not run / bound, pass, then document order; failing requirements
start expanded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape

from . import coverage as cov
from .coverage import BoundTest, CapabilityCoverage, Coverage, RequirementCoverage

_RANKED = (cov.FAIL, cov.FAILING, cov.MISSING, cov.PARTIAL, cov.NOT_RUN, cov.BOUND, cov.PASS)
_ORDER = {status: rank for rank, status in enumerate(_RANKED)} | {cov.PASSING: len(_RANKED)}
REQUIREMENT_STATES = (cov.FAIL, cov.MISSING, cov.PARTIAL, cov.NOT_RUN, cov.PASS)
SCENARIO_STATES = (cov.FAILING, cov.MISSING, cov.NOT_RUN, cov.PASSING)

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1300px;
  padding: 0 1em; color: #1d1d1f; }
code { font: 12.5px ui-monospace, monospace; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; }
th, td { text-align: left; vertical-align: top; padding: .3em .5em;
  border-bottom: 1px solid #e3e3e3; }
th { background: #f5f5f7; } h3 { margin: .6em 0 .2em; font-size: 14px; }
.bar { display: flex; height: 14px; min-width: 220px; border-radius: 3px; overflow: hidden;
  background: #eee; }
.counts, summary .meta { font-size: 12px; color: #555; } summary .meta { margin-left: .6em; }
.status { display: inline-block; min-width: 5.2em; text-align: center; border-radius: 3px;
  padding: 0 .35em; font-size: 12px; font-weight: 600; color: #fff; }
.s-pass, .s-passing { background: #2e7d32; } .s-fail, .s-failing { background: #c62828; }
.s-partial { background: #ef6c00; } .s-missing { background: #ad1457; }
.s-not-run, .s-bound { background: #78909c; }
details { border: 1px solid #ddd; border-radius: 4px; margin: .35em 0; }
summary { cursor: pointer; padding: .4em .6em; background: #fafafa; }
details[open] > summary { border-bottom: 1px solid #ddd; } details > div { padding: 0 .8em; }
a.anchor { color: #999; text-decoration: none; margin-left: .4em; }
ul.tests { margin: 0; padding-left: 1.1em; }
.o-passed { color: #2e7d32; } .o-failed { color: #c62828; font-weight: 600; }
.o-skipped, .o-xfailed, .o-xpassed, .o-not-run { color: #666; }
"""


def _status(status: str) -> str:
    return f'<span class="status s-{escape(status)}">{escape(status)}</span>'


def _bar(counts: Mapping[str, int], states: Sequence[str]) -> str:
    segments = "".join(
        f'<span class="s-{state}" style="width:{100 * counts[state] / counts["total"]:.2f}%" '
        f'title="{counts[state]} {state}"></span>'
        for state in states
        if counts[state]
    )
    legend = " · ".join(f"{counts[state]} {state}" for state in states if counts[state])
    return f'<div class="bar">{segments}</div><div class="counts">{legend or "none"}</div>'


def _tests(tests: Iterable[BoundTest]) -> str:
    items = [
        f"<li><code>{escape(t.test)}</code> "
        f'<span class="o-{escape(t.outcome or "not-run")}">{escape(t.outcome or "not run")}'
        f"</span> ({t.kind})</li>"
        for t in tests
    ]
    return f'<ul class="tests">{"".join(items)}</ul>' if items else "-"


def _sorted(items: Iterable, status_of) -> list:
    return sorted(items, key=lambda item: _ORDER[status_of(item)])


def _worst(cap: CapabilityCoverage) -> str:
    return min((r.status for r in cap.requirements), key=_ORDER.__getitem__, default=cov.PASS)


def _summary(coverage: Coverage) -> list[str]:
    rows = [
        "<table><thead><tr><th>Capability</th><th>Mode</th><th>Requirements</th>"
        "<th>Scenarios</th><th>Clauses cited</th></tr></thead><tbody>"
    ]
    for cap in _sorted(coverage.capabilities, _worst):
        r, s, c = cap.counts.requirements, cap.counts.scenarios, cap.counts.clauses
        rows.append(
            f'<tr><td><a href="#cap-{escape(cap.capability)}">{escape(cap.capability)}</a></td>'
            f"<td>{escape(cap.mode)}</td>"
            f"<td>{_bar(r, REQUIREMENT_STATES)}</td><td>{_bar(s, SCENARIO_STATES)}</td>"
            f"<td>{c[cov.BOUND]}/{c['total']}</td></tr>"
        )
    rows.append("</tbody></table>")
    return rows


def _requirement(req: RequirementCoverage) -> list[str]:
    rid = escape(req.requirement.id)
    passing = sum(s.status == cov.PASS for s in req.scenarios)
    cited = sum(c.status != cov.MISSING for c in req.clauses)
    opened = " open" if req.status == cov.FAIL else ""
    strict = "strict · " if req.strict else ""
    lines = [
        f'<details class="requirement" id="{rid}" data-kind="requirement" '
        f'data-status="{escape(req.status)}" data-strict="{str(req.strict).lower()}"{opened}>',
        f"<summary>{_status(req.status)} {escape(req.requirement.name)} "
        f'<span class="meta">{strict}{passing}/{len(req.scenarios)} scenarios pass · '
        f"{cited}/{len(req.clauses)} clauses cited · <code>{rid}</code></span>"
        f'<a class="anchor" href="#{rid}" title="link to this requirement">¶</a></summary>',
        "<div><h3>SHALL clauses</h3>",
        "<table><thead><tr><th>#</th><th>Clause</th><th>Status</th><th>Tests</th></tr>"
        "</thead><tbody>",
    ]
    for clause in _sorted(req.clauses, lambda c: c.status):
        lines.append(
            f'<tr data-kind="clause" data-id="{escape(clause.clause.id)}" '
            f'data-status="{escape(clause.status)}"><td>{clause.clause.number}</td>'
            f"<td>{escape(clause.clause.text)}</td><td>{_status(clause.status)}</td>"
            f"<td>{_tests(clause.tests)}</td></tr>"
        )
    lines += [
        "</tbody></table><h3>Scenarios</h3>",
        "<table><thead><tr><th>Scenario</th><th>Status</th><th>Tests</th></tr></thead><tbody>",
    ]
    for scenario in _sorted(req.scenarios, lambda s: s.status):
        sid = escape(scenario.scenario.id)
        lines.append(
            f'<tr id="{sid}" data-kind="scenario" data-status="{escape(scenario.status)}">'
            f"<td>{escape(scenario.scenario.name)}<br><code>{sid}</code></td>"
            f"<td>{_status(scenario.status)}</td><td>{_tests(scenario.tests)}</td></tr>"
        )
    lines.append("</tbody></table>")
    if req.tests:
        lines += ["<h3>Tests citing the requirement</h3>", _tests(req.tests)]
    lines.append("</div></details>")
    return lines


def _capability(cap: CapabilityCoverage) -> list[str]:
    name = escape(cap.capability)
    lines = [
        f'<section id="cap-{name}"><h2>{name} <small>({escape(cap.mode)})</small></h2>',
        f"<p>Spec: <code>{escape(cap.spec.path.as_posix())}</code></p>",
    ]
    for req in _sorted(cap.requirements, lambda r: r.status):
        lines += _requirement(req)
    lines.append("</section>")
    return lines


def to_html(coverage: Coverage) -> str:
    """The HTML document (see module docstring)."""
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Spec coverage</title><style>{_CSS}</style></head><body>",
        "<h1>Spec coverage</h1>",
        "<p>Requirements and scenarios by status; expand a requirement for its SHALL "
        "clauses, scenarios and citing tests. Failing and missing items come first.</p>",
        *_summary(coverage),
    ]
    for cap in _sorted(coverage.capabilities, _worst):
        lines += _capability(cap)
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"
