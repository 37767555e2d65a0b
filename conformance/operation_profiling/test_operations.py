"""operation-profiling: operation events of the math operations (ops::apply opens the
profiling scope of every operation), from every thread, beside moves."""

from __future__ import annotations

import json
import threading

import pytest

import strideweave as sw
from conformance.interop_movement.movement import TERMINAL_TIMEOUT
from conformance.operation_profiling.profiling import (
    COLLECT,
    MOVE,
    OPERATION,
    TRACE,
    Device,
    device_route,
)


def floats(shape, carrier_cls=sw.CPU, start=0.0) -> sw.Tensor:
    layout = sw.Layout(shape)
    values = [start + i for i in range(layout.size)]
    return sw.Tensor(carrier_cls(sw.Float32, values=values), layout)


@pytest.mark.spec(f"{OPERATION}/profile-an-operation", f"{OPERATION}#1")
def test_profile_an_operation():
    a, b = floats((2, 3)), floats((2, 3), sw.Generic)
    with sw.profile() as prof:
        c = a + b
    assert c.tolist() == [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]]
    [event] = prof.events
    assert (event.kind, event.category, event.name) == ("operation", "operation", "add")
    assert event.carrier_classes == ("CPU", "Generic")
    assert event.shapes == ((2, 3), (2, 3))
    assert event.dtype == "Float32"
    assert event.request is None
    assert event.thread_id == threading.get_native_id()
    assert event.start_ns <= event.end_ns


@pytest.mark.spec(f"{OPERATION}#1")
def test_every_math_operation_records_one_event():
    a = floats(4)
    with sw.profile() as prof:
        b = -a
        c = b * 2.0
        d = sw.sub(c, a)
        e = d.sum()
        sw.sum(floats((2, 2)), modes=(0,))
        a.broadcast_to((4, 3))
    del e
    events = prof.events
    assert [ev.name for ev in events] == ["neg", "mul", "sub", "sum", "sum", "broadcast_to"]
    assert all(ev.kind == "operation" for ev in events)
    assert events[1].carrier_classes == ("CPU",)  # the constant is no input Tensor
    assert events[2].shapes == (4, 4)
    assert len({ev.correlation_id for ev in events}) == len(events)


@pytest.mark.spec(f"{COLLECT}/collect-events-from-worker-threads", f"{COLLECT}#2")
def test_operations_on_worker_threads():
    native_ids: list[int] = []
    with sw.profile() as prof:

        def work():
            native_ids.append(threading.get_native_id())
            x = floats(8)
            for _ in range(10):
                x = x + 1.0

        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TERMINAL_TIMEOUT)
    adds = [e for e in prof.events if e.name == "add"]
    assert len(adds) == 30
    assert {e.thread_id for e in adds} == set(native_ids)


@pytest.mark.spec(f"{MOVE}#1", f"{MOVE}#2", f"{TRACE}#1")
def test_moves_and_operations_side_by_side(tmp_path):
    """An operation on a moved Tensor: the move is only its two events, the operation one
    event naming the destination's class; the trace shows both kinds."""
    with sw.profile() as prof:
        moved = sw.move(floats(5), sw.FileBacked(sw.Float32))
        total = moved.sum()
    assert total.tolist() == 10.0
    kinds = [e.kind for e in prof.events]
    assert kinds == ["submission", "completion", "operation"]
    submission, completion, operation = prof.events
    assert operation.carrier_classes == ("FileBacked",)
    assert operation.correlation_id != submission.correlation_id
    assert completion.end_ns <= operation.start_ns
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    entries = json.loads(path.read_text())["traceEvents"]
    [x_op] = [e for e in entries if e["cat"] == "operation"]
    assert x_op["ph"] == "X" and x_op["name"] == "sum"
    assert sorted(e["ph"] for e in entries if e["cat"] == "move") == ["X", "b", "e"]
    rows = {(r.kind, r.name): r for r in prof.key_averages()}
    assert rows[("operation", "sum")].count == 1


@pytest.mark.spec(f"{MOVE}#1", f"{MOVE}#2", f"{COLLECT}#2")
def test_an_operation_runs_while_a_move_is_pending():
    """Operations on the calling thread while a device copy is pending fall inside the
    move's completion span; the move's events stay its own two."""
    device = Device()
    host, accelerator = device_route(device)
    t = sw.Tensor(host(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    with sw.profile() as prof:
        handle = sw.move_async(t, accelerator(sw.Float32))
        doubled = floats(3) * 2.0
        device.proceed.set()
        handle.wait()
    assert doubled.tolist() == [0.0, 2.0, 4.0]
    submission, operation, completion = prof.events
    assert [submission.kind, operation.kind, completion.kind] == [
        "submission",
        "operation",
        "completion",
    ]
    assert operation.name == "mul"
    assert submission.correlation_id == completion.correlation_id != operation.correlation_id
    assert completion.start_ns <= operation.start_ns <= operation.end_ns <= completion.end_ns


@pytest.mark.spec(f"{OPERATION}#1")
def test_backward_records_the_operations_it_runs():
    x = floats(3)
    x.requires_grad = True
    y = (x * x).sum()
    with sw.profile() as prof:
        y.backward()
    assert x.grad.tolist() == [0.0, 2.0, 4.0]
    assert prof.events, "the engine's gradient operations record events"
    assert all(e.kind == "operation" for e in prof.events)
    assert all(e.thread_id == threading.get_native_id() for e in prof.events)
