"""The bench page: each benchmark's ratios against their targets, and their history.

    python bench/page.py [--dir build/bench] [--no-append] [--repo PATH]

The last step of ``tox -e bench``. It reads the results the scripts wrote
(``<dir>/<script>.json`` for each script of SCRIPTS; a script without its file is named
as missing on the page), appends one line for this run to ``<dir>/history.jsonl`` (not
with ``--no-append``) and writes ``<dir>/index.html``: one self-contained file (no
script, no external resource; the plots are SVG images in ``data:`` URIs) holding, per
script, a plot of each row's ratio against its target, the rows as a table, and each
row's ratio over the recorded runs.

A row's ratio is its ``ratio`` (StrideWeave / anchor), or for a row without one its one
number named ``*_ratio`` (layout_algebra's ``wide_ratio``). A row is identified across
runs by its label columns (row_key). Every file is read and checked before the history
grows, so a malformed one fails the run (ResultError, naming the file) and leaves the
history as it was. Nothing here times anything.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import math
import os
import platform
import socket
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

# The scripts of `tox -e bench`, in its order.
SCRIPTS: tuple[str, ...] = (
    "dlpack_export",
    "carrier_bulk",
    "array_protocol",
    "layout_algebra",
    "move",
    "block_device",
    "tensorstore_carrier",
    "profiling",
    "autograd",
    "tiled",
    "metal",
)
HISTORY = "history.jsonl"
INDEX = "index.html"
# The most recent runs a history plot shows (history.jsonl keeps them all).
HISTORY_RUNS = 40
# A row's keys that are measurements or verdicts, never labels.
MEASURES = frozenset({"strideweave_us", "anchor_us", "ratio", "target", "met"})

MET, MISSED, UNTARGETED = "met", "missed", "untargeted"
_COLORS = {MET: "#2e7d32", MISSED: "#c62828", UNTARGETED: "#78909c"}
_HATCHES = {MET: "", MISSED: "//", UNTARGETED: ""}

Label = str | int | bool


class ResultError(ValueError):
    """A results or history file the page cannot read; the message names the file."""


@dataclass(frozen=True)
class Row:
    """One row of a script's results, as the page and the history keep it."""

    key: str  # row_key of the labels; `` #n`` for the n-th row of a script sharing them
    title: str  # the labels' values, for a reader
    labels: Mapping[str, Label]
    ratio: float | None
    target: float | None
    met: bool | None
    strideweave_us: float | None = None
    anchor_us: float | None = None

    @property
    def state(self) -> str:
        """MET or MISSED; UNTARGETED without a target (or without a ratio to hold to it)."""
        if self.target is None or self.met is None:
            return UNTARGETED
        return MET if self.met else MISSED

    def to_json(self) -> dict[str, object]:
        return {
            "labels": dict(self.labels),
            "ratio": self.ratio,
            "target": self.target,
            "met": self.met,
        }


@dataclass(frozen=True)
class ScriptResult:
    """One script's results file: when it was written and its rows."""

    script: str
    written: str
    rows: tuple[Row, ...]
    ratio_names: tuple[str, ...] = ("ratio",)


@dataclass(frozen=True)
class Run:
    """One line of the history: where and when the page was made, and every row seen."""

    commit: str | None
    dirty: bool | None
    date: str
    machine: Mapping[str, object]
    scripts: Mapping[str, tuple[Row, ...]]
    missing: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        """The short commit (``*`` when the tree was dirty) and the date, for an axis."""
        commit = (self.commit or "unknown")[:8] + ("*" if self.dirty else "")
        return f"{commit}\n{self.date[:16].replace('T', ' ')}"

    def to_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "dirty": self.dirty,
            "date": self.date,
            "machine": dict(self.machine),
            "scripts": {
                name: {"rows": [row.to_json() for row in rows]}
                for name, rows in self.scripts.items()
            },
            "missing": list(self.missing),
        }


# -- rows ---------------------------------------------------------------------------------


def label_columns(row: Mapping[str, Any]) -> dict[str, Label]:
    """The columns that name a row: every key but MEASURES holding a string, int or bool.

    Timings and ratios are floats and tables of timings are objects, so neither is a label.
    """
    return {
        k: v
        for k, v in row.items()
        if k not in MEASURES and isinstance(v, str | int) and not isinstance(v, float)
    }


def row_key(labels: Mapping[str, Label]) -> str:
    """The key of a row across runs: ``column=value`` of its labels, sorted by column.

    The same labels in any order give the same key; measurements never enter it.
    """
    return "; ".join(f"{k}={labels[k]}" for k in sorted(labels))


def keyed(label_sets: Sequence[Mapping[str, Label]]) -> list[tuple[str, str]]:
    """The key and title of each of a script's rows, in order: row_key and the labels'
    values (by column); the n-th row sharing a key gets `` #n`` on both."""
    seen: dict[str, int] = {}
    out = []
    for labels in label_sets:
        key = row_key(labels)
        title = " · ".join(str(labels[k]) for k in sorted(labels)) or "(no labels)"
        seen[key] = seen.get(key, 0) + 1
        suffix = "" if seen[key] == 1 else f" #{seen[key]}"
        out.append((key + suffix, title + suffix))
    return out


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _ratio(row: Mapping[str, Any], where: str) -> tuple[float | None, str | None]:
    """The row's ratio and the key it came from (see the module docstring)."""
    if "ratio" in row:
        names = ["ratio"]
    else:
        names = [k for k, v in row.items() if k.endswith("_ratio") and _number(v) is not None]
        if len(names) > 1:
            raise ResultError(f"{where}: several ratios ({', '.join(names)}) and no 'ratio'")
    if not names:
        return None, None
    value = row[names[0]]
    ratio = _number(value)
    # null (or NaN, inf: a zero timing) is a row without a ratio; anything else is an error.
    if ratio is None and value is not None and not isinstance(value, float):
        raise ResultError(f"{where}: {names[0]} {value!r} is not a number")
    return ratio, names[0]


def _target(value: object, where: str) -> float | None:
    """``"<= X"`` or a number: X; ``"-"``, null or absent: None."""
    if value is None or value == "-":
        return None
    if isinstance(value, str) and value.startswith("<="):
        number = value[2:].strip()
        try:
            return float(number)
        except ValueError:
            pass
    elif _number(value) is not None:
        return float(value)  # type: ignore[arg-type]
    raise ResultError(f"{where}: target {value!r} is neither '<= X' nor '-'")


def parse_rows(rows: object, where: str, *, stored: bool = False) -> tuple[list[Row], list[str]]:
    """The rows of a results file's ``rows`` (``stored``: of a history line's, whose rows
    hold ``labels``), and the keys their ratios came from."""
    if not isinstance(rows, list):
        raise ResultError(f"{where}: 'rows' is not a list")
    label_sets, figures, names = [], [], []
    for index, row in enumerate(rows):
        at = f"{where}: row {index}"
        if not isinstance(row, dict):
            raise ResultError(f"{at} is not an object")
        labels = row.get("labels") if stored else label_columns(row)
        if not isinstance(labels, dict):
            raise ResultError(f"{at} has no 'labels' object")
        ratio, name = _ratio(row, at)
        target = _target(row.get("target"), at)
        met = row.get("met")
        if not isinstance(met, bool):
            met = None if target is None or ratio is None else ratio <= target
        if name is not None and name not in names:
            names.append(name)
        label_sets.append(labels)
        figures.append((ratio, target, met, row))
    parsed = [
        Row(
            key,
            title,
            labels,
            ratio,
            target,
            met,
            _number(row.get("strideweave_us")),
            _number(row.get("anchor_us")),
        )
        for (key, title), labels, (ratio, target, met, row) in zip(
            keyed(label_sets), label_sets, figures, strict=True
        )
    ]
    return parsed, names


# -- reading ------------------------------------------------------------------------------


def _utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def load_result(path: Path, script: str) -> ScriptResult:
    """One script's results file; ResultError, naming ``path``, if it is malformed."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ResultError(f"{path}: not valid JSON: {error}") from error
    except (OSError, UnicodeDecodeError) as error:
        raise ResultError(f"{path}: cannot be read: {error}") from error
    if not isinstance(document, dict) or "rows" not in document:
        raise ResultError(f"{path}: not a benchmark result (an object with 'rows')")
    rows, names = parse_rows(document["rows"], str(path))
    return ScriptResult(script, _utc(path.stat().st_mtime), tuple(rows), tuple(names))


def load_results(directory: Path) -> tuple[list[ScriptResult], list[str]]:
    """The results present in ``directory`` (SCRIPTS order) and the scripts without any."""
    present, missing = [], []
    for script in SCRIPTS:
        path = directory / f"{script}.json"
        if path.is_file():
            present.append(load_result(path, script))
        else:
            missing.append(script)
    return present, missing


def load_history(path: Path) -> list[Run]:
    """Every run recorded in ``path`` (none if it does not exist), oldest first."""
    if not path.exists():
        return []
    runs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise ResultError(f"{where}: not valid JSON: {error}") from error
        if not isinstance(entry, dict) or not isinstance(entry.get("scripts"), dict):
            raise ResultError(f"{where}: not a history line (an object with 'scripts')")
        scripts = {}
        for script, result in entry["scripts"].items():
            rows = result.get("rows") if isinstance(result, dict) else None
            scripts[script] = tuple(parse_rows(rows, f"{where}: {script}", stored=True)[0])
        runs.append(
            Run(
                entry.get("commit"),
                entry.get("dirty"),
                str(entry.get("date", "")),
                entry.get("machine") or {},
                scripts,
                tuple(entry.get("missing") or ()),
            )
        )
    return runs


# -- this run -----------------------------------------------------------------------------


def git_state(repo: Path) -> tuple[str | None, bool | None]:
    """``git rev-parse HEAD`` of ``repo`` and whether its tree is dirty; (None, None)
    outside a git checkout or without git."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60
        )
        if done.returncode != 0:
            raise subprocess.SubprocessError(done.stderr)
        return done.stdout

    try:
        return git("rev-parse", "HEAD").strip(), bool(git("status", "--porcelain").strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The first ``model name`` of ``cpuinfo``, else what ``platform`` knows."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def machine() -> dict[str, object]:
    """The machine a run measured on: hostname, CPU model, CPU count, platform."""
    return {
        "hostname": socket.gethostname(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def current_run(
    results: Sequence[ScriptResult], missing: Sequence[str], repo: Path, now: datetime
) -> Run:
    commit, dirty = git_state(repo)
    return Run(
        commit,
        dirty,
        now.astimezone(UTC).isoformat(timespec="seconds"),
        machine(),
        {result.script: result.rows for result in results},
        tuple(missing),
    )


def append_history(path: Path, run: Run) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as history:
        history.write(json.dumps(run.to_json(), sort_keys=True) + "\n")


# -- plots --------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _wrap(text: str, width: int = 48) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _log_limits(values: Sequence[float]) -> tuple[float, float]:
    """Limits of a log axis showing ``values`` and 1, with room for the value labels."""
    low, high = min([*values, 1.0]), max([*values, 1.0])
    return low / 3, high * 3


def _log2(axes: Axes, which: str) -> None:
    """Axis ``which`` ("x" or "y") of ``axes`` on a base-2 log scale whose ticks read as
    plain numbers (0.25, 1, 4)."""
    if which == "x":
        axes.set_xscale("log", base=2)
        axis = axes.xaxis
    else:
        axes.set_yscale("log", base=2)
        axis = axes.yaxis
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.3g}"))


def ratio_figure(result: ScriptResult) -> Figure:
    """Horizontal bars from 1 (as fast as the anchor) to each row's ratio, on a log axis.

    A bar is green (met its target), red and hatched (missed it) or grey (no target); a
    row with a target has a black tick at it. SVG ids: ``ratio-<i>-<state>`` for row i's
    bar, ``target-<i>`` for its target tick.
    """
    rows = result.rows
    lines = [_wrap(row.title).count("\n") + 1 for row in rows]
    figure = _figure(9.0, 1.3 + 0.2 * sum(lines) + 0.12 * len(rows))
    axes = figure.add_subplot()
    _log2(axes, "x")
    values = [v for row in rows for v in (row.ratio, row.target) if v is not None]
    axes.set_xlim(*_log_limits(values))
    for index, row in enumerate(rows):
        if row.ratio is None:
            axes.text(1.0, index, "  no ratio", va="center", fontsize=8, color="#555")
        else:
            axes.barh(
                index,
                row.ratio - 1.0,
                left=1.0,
                height=0.6,
                color=_COLORS[row.state],
                hatch=_HATCHES[row.state],
                edgecolor="white" if row.state == MISSED else _COLORS[row.state],
                gid=f"ratio-{index}-{row.state}",
            )
            axes.annotate(
                f"{row.ratio:.3g}",
                (row.ratio, index),
                xytext=(7 if row.ratio >= 1 else -7, 0),
                textcoords="offset points",
                ha="left" if row.ratio >= 1 else "right",
                va="center",
                fontsize=7,
            )
        if row.target is not None:
            axes.plot(
                [row.target],
                [index],
                marker="|",
                markersize=16,
                markeredgewidth=2.5,
                color="black",
                linestyle="none",
                gid=f"target-{index}",
            )
    axes.axvline(1.0, color="#555", linewidth=0.8, linestyle="--")
    axes.set_yticks(range(len(rows)), [_wrap(row.title) for row in rows], fontsize=7)
    axes.set_ylim(len(rows) - 0.5, -0.5)
    if result.ratio_names in ((), ("ratio",)):
        xlabel = "ratio = StrideWeave / anchor (log scale; 1 = as fast as the anchor)"
    else:
        xlabel = f"{' or '.join(result.ratio_names)} (log scale)"
    axes.set_xlabel(xlabel, fontsize=8)
    axes.tick_params(axis="x", labelsize=7)
    axes.set_title(result.script, fontsize=10)
    legend = [Patch(color=_COLORS[s], hatch=_HATCHES[s], label=s) for s in (MET, MISSED)]
    legend.append(Patch(color=_COLORS[UNTARGETED], label="no target"))
    legend.append(
        Line2D(
            [],
            [],
            marker="|",
            markersize=10,
            markeredgewidth=2,
            color="black",
            linestyle="none",
            label="target (<=)",
        )
    )
    figure.legend(handles=legend, fontsize=7, loc="outside lower center", ncols=4, frameon=False)
    return figure


def history_series(
    runs: Sequence[Run], script: str
) -> tuple[list[Run], dict[str, list[Row | None]]]:
    """The runs holding ``script`` and, per row key, that row in each of them (None where
    a run lacks it); keys in the order of the latest run, then older ones."""
    holding = [run for run in runs if script in run.scripts]
    series: dict[str, list[Row | None]] = {}
    for run in reversed(holding):
        for row in run.scripts[script]:
            series.setdefault(row.key, [])
    for key in series:
        for run in holding:
            found = [row for row in run.scripts[script] if row.key == key]
            series[key].append(found[0] if found else None)
    return holding, series


def history_figure(runs: Sequence[Run], script: str) -> Figure | None:
    """Each row's ratio over the recorded runs holding ``script`` (the last HISTORY_RUNS),
    x labelled by short commit and date; a ratio that missed its target is ringed red.
    SVG ids: ``history-<j>`` for the j-th row's line. None when no run holds ``script``."""
    holding, series = history_series(runs[-HISTORY_RUNS:], script)
    if not holding:
        return None
    columns = 1 if len(series) <= 8 else 2
    legend_lines = math.ceil(len(series) / columns)
    figure = _figure(9.0, 3.4 + 0.17 * legend_lines)
    axes = figure.add_subplot()
    _log2(axes, "y")
    colors = matplotlib.colormaps["tab20"].colors
    x = list(range(len(holding)))
    values = []
    for j, found in enumerate(series.values()):
        y = [row.ratio if row and row.ratio is not None else math.nan for row in found]
        values += [v for v in y if not math.isnan(v)]
        title = next(row.title for row in found if row is not None)
        axes.plot(
            x,
            y,
            marker="o",
            markersize=4,
            linewidth=1.2,
            color=colors[j % len(colors)],
            label=_wrap(title, 60),
            gid=f"history-{j}",
        )
        missed = [
            (i, v)
            for i, (row, v) in enumerate(zip(found, y, strict=True))
            if row is not None and row.state == MISSED
        ]
        if missed:
            axes.plot(
                *zip(*missed, strict=True),
                marker="o",
                markersize=9,
                linestyle="none",
                markerfacecolor="none",
                markeredgecolor=_COLORS[MISSED],
            )
    if values:
        axes.set_ylim(*_log_limits(values))
    axes.axhline(1.0, color="#555", linewidth=0.8, linestyle="--")
    axes.set_xticks(x, [run.short for run in holding], fontsize=6.5)
    axes.set_xlim(-0.5, len(x) - 0.5)
    if len(x) > 8:
        axes.tick_params(axis="x", labelrotation=60)
    axes.tick_params(axis="y", labelsize=7)
    axes.set_ylabel("ratio (log scale)", fontsize=8)
    axes.set_title(f"{script}: ratio per run (red ring: missed its target)", fontsize=10)
    figure.legend(fontsize=6.5, loc="outside lower center", ncols=columns, frameon=False)
    return figure


def svg_uri(figure: Figure) -> str:
    """``figure`` as an SVG ``data:`` URI (text kept as text, no date in its metadata)."""
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "strideweave-bench"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


# -- the page -----------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px;
  padding: 0 1em; color: #1d1d1f; }
code { font: 12.5px ui-monospace, monospace; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; }
th, td { text-align: left; vertical-align: top; padding: .25em .5em;
  border-bottom: 1px solid #e3e3e3; font-size: 13px; }
th { background: #f5f5f7; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: .6em 0; } figure img { max-width: 100%; height: auto; }
figcaption, .meta { font-size: 12px; color: #555; }
.s-met { color: #2e7d32; font-weight: 600; } .s-missed { color: #c62828; font-weight: 600; }
.s-untargeted { color: #78909c; }
section { border-top: 1px solid #ddd; margin-top: 1.5em; }
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _run_text(run: Run) -> str:
    commit = f"<code>{_e(run.commit)}</code>" if run.commit else "an unknown commit"
    dirty = " (dirty tree)" if run.dirty else ""
    m = run.machine
    return (
        f"{commit}{dirty}, {_e(run.date)}, on {_e(m.get('hostname'))} "
        f"({_e(m.get('cpu'))}, {_e(m.get('cpus'))} CPUs, {_e(m.get('platform'))})"
    )


def _summary(results: Sequence[ScriptResult]) -> list[str]:
    lines = [
        "<table><thead><tr><th>Script</th><th>Rows</th><th>With a target</th><th>Met</th>"
        "<th>Missed</th><th>Written (UTC)</th></tr></thead><tbody>"
    ]
    for result in results:
        states = [row.state for row in result.rows]
        targeted = len(states) - states.count(UNTARGETED)
        lines.append(
            f'<tr><td><a href="#script-{_e(result.script)}">{_e(result.script)}</a></td>'
            f'<td class="n">{len(states)}</td><td class="n">{targeted}</td>'
            f'<td class="n s-met">{states.count(MET)}</td>'
            f'<td class="n s-missed">{states.count(MISSED)}</td><td>{_e(result.written)}</td></tr>'
        )
    lines.append("</tbody></table>")
    return lines


def _plot(figure: Figure, kind: str, script: str, caption: str) -> str:
    return (
        f'<figure class="plot" data-plot="{kind}" data-script="{_e(script)}">'
        f'<img alt="{_e(caption)}" src="{svg_uri(figure)}"><figcaption>{_e(caption)}'
        "</figcaption></figure>"
    )


def _section(result: ScriptResult, runs: Sequence[Run]) -> list[str]:
    name = result.script
    lines = [
        f'<section id="script-{_e(name)}" data-script="{_e(name)}"><h2>{_e(name)}</h2>',
        f'<p class="meta">bench/{_e(name)}.py, results written {_e(result.written)}</p>',
    ]
    if result.rows:
        caption = (
            f"{name}: each row's ratio (bar from 1) against its target (black tick); "
            "green met, red missed, grey no target"
        )
        lines.append(_plot(ratio_figure(result), "ratio", name, caption))
    else:
        lines.append("<p>No rows.</p>")
    lines.append(
        "<table><thead><tr><th>Row</th><th>StrideWeave us</th><th>anchor us</th>"
        "<th>Ratio</th><th>Target</th><th>Met</th></tr></thead><tbody>"
    )
    for row in result.rows:
        verdict = {MET: "yes", MISSED: "no", UNTARGETED: "-"}[row.state]
        lines.append(
            f'<tr data-key="{_e(row.key)}" data-state="{row.state}"><td>{_e(row.title)}</td>'
            f'<td class="n">{_us(row.strideweave_us)}</td><td class="n">{_us(row.anchor_us)}</td>'
            f'<td class="n">{"-" if row.ratio is None else f"{row.ratio:.3f}"}</td>'
            f'<td class="n">{"-" if row.target is None else f"<= {row.target:g}"}</td>'
            f'<td class="s-{row.state}">{verdict}</td></tr>'
        )
    lines.append("</tbody></table>")
    history = history_figure(runs, name)
    if history is None:
        lines.append('<p class="meta">No run of this script is recorded in the history.</p>')
    else:
        caption = f"{name}: each row's ratio over the recorded runs (short commit, UTC date)"
        lines.append(_plot(history, "history", name, caption))
    lines.append("</section>")
    return lines


def _runs(runs: Sequence[Run]) -> list[str]:
    if not runs:
        return ["<p>No runs recorded.</p>"]
    lines = [
        "<table><thead><tr><th>#</th><th>Commit</th><th>Date (UTC)</th><th>Host</th>"
        "<th>CPU</th><th>CPUs</th><th>Platform</th><th>Scripts</th></tr></thead><tbody>"
    ]
    for number, run in enumerate(runs, start=1):
        m = run.machine
        commit = (run.commit or "unknown")[:12] + (" (dirty)" if run.dirty else "")
        lines.append(
            f'<tr><td class="n">{number}</td><td><code>{_e(commit)}</code></td>'
            f"<td>{_e(run.date)}</td><td>{_e(m.get('hostname'))}</td><td>{_e(m.get('cpu'))}</td>"
            f'<td class="n">{_e(m.get("cpus"))}</td><td>{_e(m.get("platform"))}</td>'
            f'<td class="n">{len(run.scripts)}</td></tr>'
        )
    lines.append("</tbody></table>")
    return lines


def to_html(
    results: Sequence[ScriptResult],
    missing: Sequence[str],
    runs: Sequence[Run],
    this_run: Run,
    directory: Path,
) -> str:
    """The page (see the module docstring)."""
    if missing:
        names = ", ".join(f"<code>{_e(name)}</code>" for name in missing)
        absent = (
            f"Missing (no <code>&lt;script&gt;.json</code> in <code>{_e(directory)}</code>): "
            f"{names}."
        )
    else:
        absent = f"All {len(SCRIPTS)} scripts have results."
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>StrideWeave benchmarks</title><style>{_CSS}</style></head><body>",
        "<h1>StrideWeave benchmarks</h1>",
        f'<p class="meta">Page made at {_run_text(this_run)}.</p>',
        "<p>Ratio = StrideWeave time / anchor time (1 = as fast as the anchor). Each script "
        "has a plot of its rows' ratios against their targets and, from "
        f"<code>{HISTORY}</code>, each row's ratio over the recorded runs (the last "
        f"{HISTORY_RUNS}). Runs on different machines are not comparable: the runs table "
        "says where each ran.</p>",
        f'<p id="missing" data-missing="{_e(" ".join(missing))}">{absent}</p>',
        *_summary(results),
    ]
    for result in results:
        lines += _section(result, runs)
    lines += ['<section id="runs"><h2>Recorded runs</h2>', *_runs(runs), "</section>"]
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


def generate(
    directory: Path, *, append: bool = True, repo: Path | None = None, now: datetime | None = None
) -> tuple[Path, list[str]]:
    """Reads the results and the history in ``directory``, appends this run's line unless
    ``append`` is false, and writes the page; returns its path and the missing scripts.

    ``repo``: the git checkout whose commit is recorded (default: the one holding this
    file); ``now``: the run's date (default: the current time)."""
    results, missing = load_results(directory)
    history = directory / HISTORY
    runs = load_history(history)
    this_run = current_run(
        results, missing, repo or Path(__file__).resolve().parents[1], now or datetime.now(UTC)
    )
    if append:
        append_history(history, this_run)
        runs.append(this_run)
    directory.mkdir(parents=True, exist_ok=True)
    index = directory / INDEX
    index.write_text(to_html(results, missing, runs, this_run, directory), encoding="utf-8")
    return index, missing


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dir", type=Path, default=Path("build/bench"), help="results folder")
    parser.add_argument("--no-append", action="store_true", help=f"leave {HISTORY} as it is")
    parser.add_argument("--repo", type=Path, help="git checkout to record (default: this one)")
    args = parser.parse_args(argv)
    try:
        index, missing = generate(args.dir, append=not args.no_append, repo=args.repo)
    except ResultError as error:
        print(f"page.py: {error}", file=sys.stderr)
        return 1
    print(f"wrote {index}" + (f" (no results of {', '.join(missing)})" if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
