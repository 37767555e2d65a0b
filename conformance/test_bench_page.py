"""The bench page (bench/page.py), fed fake results: its history lines, plots and errors.

No test here times anything or asserts a time.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bench import page

REPO_ROOT = Path(__file__).resolve().parents[1]


def result(benchmark: str, rows: list[dict]) -> dict:
    return {"benchmark": benchmark, "unit": "microseconds per call (median)", "rows": rows}


def bare(ratio: float, **labels: object) -> dict:
    """A row with no target or met column at all (dlpack_export's rows)."""
    return {**labels, "strideweave_us": 2.0 * ratio, "anchor_us": 2.0, "ratio": ratio}


def timed(ratio: float, target: float | None = None, **labels: object) -> dict:
    """A row as benchlib.with_target writes it."""
    row = bare(ratio, **labels)
    if target is None:
        return {**row, "target": "-", "met": "-"}
    return {**row, "target": f"<= {target}", "met": ratio <= target}


# Three scripts present (one with a row missing its target, one reporting `wide_ratio`
# like layout_algebra, one without targets like dlpack_export); the rest missing.
PRESENT = {
    "carrier_bulk": [
        timed(1.1, 1.25, case="copy 64 MiB"),
        timed(2.0, 1.5, case="tolist 1e6"),
        timed(0.5, None, case="transposed gather"),
    ],
    "layout_algebra": [
        {"operation": "coalesce", "microseconds": {"depth 63": 1.0}, "wide_ratio": 3.1},
        {"operation": "right_inverse", "microseconds": {"depth 63": 2.0}, "wide_ratio": 3.3},
    ],
    "dlpack_export": [
        bare(2.0, case="1-D 1e6", operation="np.from_dlpack"),
        bare(1.25, case="rank-0", operation="np.from_dlpack"),
    ],
}
MISSING = [script for script in page.SCRIPTS if script not in PRESENT]


def write_results(directory: Path, scale: float = 1.0) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for script, rows in PRESENT.items():
        scaled = [
            {k: v * scale if k in ("ratio", "wide_ratio") else v for k, v in row.items()}
            for row in rows
        ]
        (directory / f"{script}.json").write_text(json.dumps(result(script, scaled)))


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A git checkout with one commit, and that commit."""
    checkout = tmp_path / "repo"
    checkout.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(checkout), *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "-q")
    (checkout / "file.txt").write_text("x\n")
    git("add", "file.txt")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "one")
    return checkout, git("rev-parse", "HEAD")


def history(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / page.HISTORY).read_text().splitlines()]


class Elements(HTMLParser):
    """Every start tag with its attributes, in document order."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(document)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def figures(self, kind: str) -> list[str | None]:
        return [a["data-script"] for t, a in self.tags if t == "figure" and a["data-plot"] == kind]

    def svg(self, kind: str, script: str) -> str:
        """The SVG of a script's plot, decoded from its ``data:`` URI."""
        tags = iter(self.tags)
        for tag, attrs in tags:
            if tag == "figure" and (attrs["data-plot"], attrs["data-script"]) == (kind, script):
                tag, attrs = next(tags)
                assert tag == "img"
                prefix = "data:image/svg+xml;base64,"
                assert attrs["src"] is not None and attrs["src"].startswith(prefix)
                return base64.b64decode(attrs["src"][len(prefix) :]).decode()
        raise AssertionError(f"no {kind} plot of {script}")


def test_each_run_appends_one_history_line(tmp_path, repo):
    checkout, head = repo
    bench = tmp_path / "bench"
    write_results(bench)
    assert page.main(["--dir", str(bench), "--repo", str(checkout)]) == 0
    [line] = history(bench)
    assert line["commit"] == head and line["dirty"] is False
    assert datetime.fromisoformat(line["date"]).utcoffset().total_seconds() == 0
    assert set(line["machine"]) == {"hostname", "cpu", "cpus", "platform"}
    assert isinstance(line["machine"]["cpus"], int) and line["machine"]["hostname"]
    assert line["missing"] == MISSING
    assert set(line["scripts"]) == set(PRESENT)
    assert line["scripts"]["carrier_bulk"]["rows"] == [
        {"labels": {"case": "copy 64 MiB"}, "ratio": 1.1, "target": 1.25, "met": True},
        {"labels": {"case": "tolist 1e6"}, "ratio": 2.0, "target": 1.5, "met": False},
        {"labels": {"case": "transposed gather"}, "ratio": 0.5, "target": None, "met": None},
    ]
    # layout_algebra: the ratio is `wide_ratio`; the table of timings is not a label.
    assert line["scripts"]["layout_algebra"]["rows"][0] == {
        "labels": {"operation": "coalesce"},
        "ratio": 3.1,
        "target": None,
        "met": None,
    }

    (checkout / "file.txt").write_text("changed\n")
    assert page.main(["--dir", str(bench), "--repo", str(checkout)]) == 0
    lines = history(bench)
    assert len(lines) == 2 and lines[0] == line
    assert lines[1]["commit"] == head and lines[1]["dirty"] is True


def test_no_append_leaves_the_history_and_no_git_records_no_commit(tmp_path):
    bench = tmp_path / "bench"
    write_results(bench)
    not_a_checkout = tmp_path / "plain"
    not_a_checkout.mkdir()
    assert page.main(["--dir", str(bench), "--no-append", "--repo", str(not_a_checkout)]) == 0
    assert not (bench / page.HISTORY).exists()
    assert (bench / page.INDEX).is_file()
    assert page.main(["--dir", str(bench), "--repo", str(not_a_checkout)]) == 0
    [line] = history(bench)
    assert line["commit"] is None and line["dirty"] is None
    assert "an unknown commit" in (bench / page.INDEX).read_text()


def test_two_runs_give_two_points_per_row(tmp_path, repo):
    checkout, _ = repo
    bench = tmp_path / "bench"
    write_results(bench)
    page.generate(bench, repo=checkout, now=datetime.fromisoformat("2030-01-02T03:04:05+00:00"))
    write_results(bench, scale=1.5)
    page.generate(bench, repo=checkout)
    runs = page.load_history(bench / page.HISTORY)
    assert len(runs) == 2
    for script, rows in PRESENT.items():
        holding, series = page.history_series(runs, script)
        assert len(holding) == 2 and len(series) == len(rows)
        ratios = [[r.ratio for r in found if r is not None] for found in series.values()]
        assert all(len(points) == 2 for points in ratios)
        assert all(b == pytest.approx(a * 1.5) for a, b in ratios)

        axes = page.history_figure(runs, script).axes[0]
        lines = [line for line in axes.get_lines() if (line.get_gid() or "").startswith("history")]
        assert len(lines) == len(rows)
        assert all(len(line.get_xdata()) == 2 for line in lines)
        ticks = [tick.get_text() for tick in axes.get_xticklabels()]
        assert ticks[0].endswith("2030-01-02 03:04") and ticks[0].startswith(runs[0].commit[:8])

    svg = Elements((bench / page.INDEX).read_text()).svg("history", "carrier_bulk")
    assert all(f'id="history-{j}"' in svg for j in range(3))


def test_the_page_plots_each_present_script_and_names_the_missing(tmp_path, repo):
    bench = tmp_path / "bench"
    write_results(bench)
    index, missing = page.generate(bench, repo=repo[0])
    assert missing == MISSING
    document = index.read_text()
    elements = Elements(document)
    present = [s for s in page.SCRIPTS if s in PRESENT]
    assert elements.figures("ratio") == present
    assert elements.figures("history") == present
    [(_, paragraph)] = [(t, a) for t, a in elements.tags if a.get("id") == "missing"]
    assert paragraph["data-missing"] == " ".join(MISSING)
    text = document[document.index('id="missing"') :]
    text = text[: text.index("</p>")]
    assert all(f"<code>{name}</code>" in text for name in MISSING)
    assert not any(f"<code>{name}</code>" in text for name in PRESENT)

    # Self-contained: no script, nothing fetched, no URL of any kind.
    assert not [t for t, _ in elements.tags if t in ("script", "link", "iframe", "object")]
    assert "<script" not in document.lower() and "http://" not in document
    assert "https://" not in document and "url(" not in document and "@import" not in document
    sources = [a["src"] for t, a in elements.tags if "src" in a]
    assert sources and all((s or "").startswith("data:image/svg+xml;base64,") for s in sources)
    assert all((a["href"] or "").startswith("#") for t, a in elements.tags if "href" in a)
    for script in present:
        svg = elements.svg("ratio", script)
        assert "<script" not in svg and 'xlink:href="http' not in svg


def test_a_row_without_target_is_drawn_without_one(tmp_path, repo):
    bench = tmp_path / "bench"
    write_results(bench)
    index, _ = page.generate(bench, repo=repo[0])
    svg = Elements(index.read_text()).svg("ratio", "carrier_bulk")
    # Row 0 met its target, row 1 missed it, row 2 has none: a tick for 0 and 1 only.
    assert 'id="target-0"' in svg and 'id="target-1"' in svg
    assert 'id="target-2"' not in svg
    for index_state in ("0-met", "1-missed", "2-untargeted"):
        assert f'id="ratio-{index_state}"' in svg

    def style(gid: str) -> str:
        """The style of the bar in group ``gid`` (a missed bar's fill is a hatch pattern)."""
        group = svg[svg.index(f'id="{gid}"') :]
        return re.search(r'style="([^"]*)"', group).group(1)

    styles = [style(gid) for gid in ("ratio-0-met", "ratio-1-missed", "ratio-2-untargeted")]
    assert len(set(styles)) == 3 and "url(#h" in styles[1]

    # A script without any target (dlpack_export) draws no tick at all.
    assert 'id="target-' not in Elements(index.read_text()).svg("ratio", "dlpack_export")


def test_rows_are_keyed_by_their_labels():
    assert page.row_key({"operation": "x", "case": "1-D"}) == "case=1-D; operation=x"
    assert page.row_key({"case": "1-D", "operation": "x"}) == "case=1-D; operation=x"
    row = {
        **timed(1.5, 2.0, case="a", threads=8),
        "microseconds": {"a": 1.0},
        "wide_ratio": 2.0,
    }
    assert page.label_columns(row) == {"case": "a", "threads": 8}
    rows, _ = page.parse_rows([row, {**row, "ratio": 9.0}, {**row, "case": "b"}], "x")
    keys = ["case=a; threads=8", "case=a; threads=8 #2", "case=b; threads=8"]
    assert [r.key for r in rows] == keys
    assert [r.title for r in rows] == ["a · 8", "a · 8 #2", "b · 8"]


def test_a_row_without_a_ratio_is_kept_through_the_history(tmp_path, repo):
    bench = tmp_path / "bench"
    write_results(bench)
    rows = [timed(1.0, 2.0, case="a"), {**timed(1.0, 2.0, case="b"), "ratio": float("nan")}]
    (bench / "carrier_bulk.json").write_text(json.dumps(result("carrier_bulk", rows)))
    page.generate(bench, repo=repo[0])
    page.generate(bench, repo=repo[0])
    [_, line] = history(bench)
    assert [r["ratio"] for r in line["scripts"]["carrier_bulk"]["rows"]] == [1.0, None]
    runs = page.load_history(bench / page.HISTORY)
    assert [row.ratio for row in runs[1].scripts["carrier_bulk"]] == [1.0, None]
    svg = Elements((bench / page.INDEX).read_text()).svg("ratio", "carrier_bulk")
    assert 'id="ratio-0-met"' in svg and 'id="ratio-1-' not in svg and "no ratio" in svg


def test_the_scripts_listed_are_the_bench_scripts():
    scripts = {p.stem for p in (REPO_ROOT / "bench").glob("*.py")} - {
        "benchlib",
        "page",
        "__init__",
    }
    assert scripts == set(page.SCRIPTS)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"benchmark": "carrier_bulk"}', "not a benchmark result"),
        ('{"rows": {"a": 1}}', "'rows' is not a list"),
        ('{"rows": [{"case": "a", "ratio": "fast"}]}', "row 0: ratio 'fast' is not a number"),
        ('{"rows": [{"case": "a", "ratio": 1.0, "target": "< 2"}]}', "row 0: target '< 2'"),
    ],
)
def test_a_malformed_result_fails_naming_its_file(tmp_path, repo, capsys, content, message):
    bench = tmp_path / "bench"
    write_results(bench)
    broken = bench / "carrier_bulk.json"
    broken.write_text(content)
    with pytest.raises(page.ResultError, match=re.escape(f"{broken}: ")) as error:
        page.load_result(broken, "carrier_bulk")
    assert message in str(error.value)

    assert page.main(["--dir", str(bench), "--repo", str(repo[0])]) == 1
    err = capsys.readouterr().err
    assert str(broken) in err and message in err
    assert not (bench / page.HISTORY).exists() and not (bench / page.INDEX).exists()


def test_a_malformed_history_line_fails_naming_the_file_and_line(tmp_path, repo):
    bench = tmp_path / "bench"
    write_results(bench)
    page.generate(bench, repo=repo[0])
    with (bench / page.HISTORY).open("a") as file:
        file.write("{truncated\n")
    with pytest.raises(page.ResultError, match=re.escape(f"{bench / page.HISTORY}:2: not valid")):
        page.generate(bench, repo=repo[0])
    assert len((bench / page.HISTORY).read_text().splitlines()) == 2
