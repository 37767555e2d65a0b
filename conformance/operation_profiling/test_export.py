"""operation-profiling: the Chrome trace export and key_averages."""

from __future__ import annotations

import json
import os

import pytest

import strideweave as sw
from conformance.operation_profiling.profiling import AVERAGES, TRACE, by_correlation, cpu_tensor


def profiled_moves(count: int) -> sw.Profile:
    with sw.profile() as prof:
        for _ in range(count):
            sw.move(cpu_tensor(16), sw.FileBacked(sw.Float32))
    return prof


def microseconds(ns: int) -> float:
    return ns / 1000


@pytest.mark.spec(f"{TRACE}/export-operations-and-an-asynchronous-move", f"{TRACE}#1", f"{TRACE}#2")
def test_export_an_asynchronous_move(tmp_path):
    prof = profiled_moves(2)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    entries = trace["traceEvents"]
    for entry in entries:
        assert {"name", "cat", "ph", "ts", "pid", "tid"} <= entry.keys()
        assert entry["pid"] == os.getpid()
    for correlation_id, (submission, completion) in by_correlation(prof.events).items():
        [x] = [
            e for e in entries if e["ph"] == "X" and e["args"]["correlation_id"] == correlation_id
        ]
        assert x["cat"] == "move" and x["name"] == submission.name
        assert x["args"]["kind"] == "submission"
        assert x["tid"] == submission.thread_id
        assert x["ts"] == pytest.approx(microseconds(submission.start_ns), abs=1e-3)
        assert x["dur"] == pytest.approx(microseconds(submission.duration_ns), abs=1e-3)
        pair = [e for e in entries if e["ph"] in "be" and e["id"] == correlation_id]
        assert [e["ph"] for e in pair] == ["b", "e"]
        begin, end = pair
        assert begin["cat"] == end["cat"] == "move"
        assert begin["name"] == end["name"] == completion.name
        assert begin["args"]["kind"] == "completion"
        assert begin["args"]["correlation_id"] == correlation_id
        assert begin["tid"] == end["tid"] == completion.thread_id
        assert begin["ts"] == pytest.approx(microseconds(completion.start_ns), abs=1e-3)
        assert end["ts"] == pytest.approx(microseconds(completion.end_ns), abs=1e-3)
    assert len(entries) == 3 * 2


@pytest.mark.spec(f"{TRACE}#1")
def test_export_accepts_str_paths_and_an_empty_profile(tmp_path):
    path = str(tmp_path / "empty.json")
    sw.profile().export_chrome_trace(path)
    assert json.loads(open(path).read())["traceEvents"] == []


@pytest.mark.spec(f"{AVERAGES}/average-repeated-operations", f"{AVERAGES}#1")
def test_average_repeated_events():
    prof = profiled_moves(3)
    rows = prof.key_averages()
    assert [r.total_ns for r in rows] == sorted((r.total_ns for r in rows), reverse=True)
    by_kind = {r.kind: r for r in rows}
    assert set(by_kind) == {"submission", "completion"}
    for kind, row in by_kind.items():
        durations = [e.duration_ns for e in prof.events if e.kind == kind]
        assert row.name == "CpuToFileBackedMoveOperation"
        assert row.count == 3
        assert row.total_ns == sum(durations)
        assert row.mean_ns == pytest.approx(sum(durations) / 3)
        assert row.min_ns == min(durations)
        assert row.max_ns == max(durations)
    table = rows.table()
    header, rule, *lines = table.splitlines()
    assert header.split() == ["Name", "Kind", "Calls", "Total", "Mean", "Min", "Max"]
    assert set(rule) == {"-"}
    assert lines[-1] == rule
    assert [line.split()[:3] for line in lines[:-1]] == [
        [r.name, r.kind, str(r.count)] for r in rows
    ]
