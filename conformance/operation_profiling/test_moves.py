"""operation-profiling: a move's submission and completion events, and interop-movement's
"Profiling distinguishes submission from completion" with the moves that exist today
(its one scenario names Metal and is bound with the Metal carrier).

Times are compared with time.monotonic_ns(), the same host clock (CLOCK_MONOTONIC) the
events use: the tests order events against instants they control, never measure speed.
"""

from __future__ import annotations

import threading
import time

import pytest

import strideweave as sw
from conformance.interop_movement.movement import TERMINAL_TIMEOUT, Gate, HookError, gated_copy
from conformance.operation_profiling.profiling import (
    AWAIT,
    COLLECT,
    MOVE,
    SUBMISSION,
    Device,
    by_correlation,
    cpu_tensor,
    device_route,
    of_kind,
)
from strideweave.carriers.move import register_move_operation, unregister_move_operation


def assert_one_move(events, name, classes, shape, dtype="Float32"):
    """``events`` are exactly one move's submission then completion, correlated; returns
    them."""
    assert [e.kind for e in events] == ["submission", "completion"]
    submission, completion = events
    assert submission.correlation_id == completion.correlation_id
    assert submission.request == completion.request
    assert submission.request.startswith("move #")
    for e in events:
        assert e.category == "move"
        assert e.name == name
        assert e.carrier_classes == classes
        assert e.shapes == (shape,)
        assert e.dtype == dtype
        assert e.start_ns <= e.end_ns
        assert e.duration_ns == e.end_ns - e.start_ns
    # The completion spans submission through the terminal commit.
    assert completion.start_ns == submission.end_ns
    return submission, completion


@pytest.mark.spec(
    f"{MOVE}/exclude-a-move-from-operation-events",
    f"{MOVE}#1",
    f"{MOVE}#2",
    f"{MOVE}#3",
    f"{SUBMISSION}#1",
    f"{COLLECT}#2",
)
@pytest.mark.parametrize(
    ("source_cls", "destination_cls", "name"),
    [
        (sw.CPU, sw.FileBacked, "CpuToFileBackedMoveOperation"),
        (sw.FileBacked, sw.CPU, "FileBackedToCpuMoveOperation"),
        (sw.CPU, sw.Generic, "ElementwiseMoveOperation"),
    ],
)
def test_a_move_records_submission_and_completion(source_cls, destination_cls, name):
    t = sw.Tensor(source_cls(sw.Float32, values=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), sw.Layout((2, 3)))
    caller = threading.get_native_id()
    before = time.monotonic_ns()
    with sw.profile() as prof:
        handle = sw.move_async(t, destination_cls(sw.Float32))
        result = handle.wait()
    after = time.monotonic_ns()
    assert result.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    # No operation event: the copy hook or provider the move runs is not an operation.
    assert of_kind(prof.events, "operation") == []
    submission, completion = assert_one_move(
        prof.events,
        name,
        (source_cls.carrier_class.name, destination_cls.carrier_class.name),
        (2, 3),
    )
    assert submission.thread_id == caller
    assert before <= submission.start_ns and completion.end_ns <= after


@pytest.mark.spec(f"{COLLECT}#2", f"{SUBMISSION}#1", f"{MOVE}#2")
def test_a_pool_move_completes_on_the_worker_that_commits():
    """CPU -> FileBacked runs on the process pool: the completion is recorded by the worker
    that commits, the submission by the calling thread."""
    with sw.profile() as prof:
        sw.move(cpu_tensor(4096), sw.FileBacked(sw.Float32))
    submission, completion = assert_one_move(
        prof.events, "CpuToFileBackedMoveOperation", ("CPU", "FileBacked"), 4096
    )
    assert submission.thread_id == threading.get_native_id()
    assert completion.thread_id != submission.thread_id


@pytest.mark.spec(
    f"{SUBMISSION}#1",
    f"{SUBMISSION}#2",
    f"{SUBMISSION}#3",
    f"{AWAIT}#7",
    f"{MOVE}/complete-a-move-after-the-profile-exited",
    f"{MOVE}#2",
    f"{COLLECT}#2",
)
def test_provider_time_runs_through_completion_after_the_profile_exited():
    """A provider returns before its device copy: the submission ends when move_async
    returns; the completion ends only after the device resolves the Future, on the thread
    that commits, after the profile exited, once however often wait() is called."""
    device = Device()
    host, accelerator = device_route(device)
    t = sw.Tensor(host(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    with sw.profile() as prof:
        called = time.monotonic_ns()
        handle = sw.move_async(t, accelerator(sw.Float32))
        returned = time.monotonic_ns()
        assert not handle.done
    # Only the submission so far: the device has not run the copy.
    [submission] = prof.events
    assert submission.kind == "submission"
    assert called <= submission.start_ns <= submission.end_ns <= returned
    released = time.monotonic_ns()
    device.proceed.set()
    waiters = [threading.Thread(target=handle.wait) for _ in range(4)]
    for waiter in waiters:
        waiter.start()
    result = handle.wait()
    for waiter in waiters:
        waiter.join(TERMINAL_TIMEOUT)
    assert handle.wait() is result
    assert result.tolist() == [1.0, 2.0, 3.0]
    submission, completion = assert_one_move(
        prof.events,
        "host->accelerator",
        (host.carrier_class.name, accelerator.carrier_class.name),
        3,
    )
    # Provider time is included: the completion ends after the device was released.
    assert completion.end_ns >= released > submission.end_ns
    # Committed off the calling thread (the binding reports a Future's outcome to a pool
    # worker, which commits).
    assert completion.thread_id != submission.thread_id


@pytest.mark.spec(f"{MOVE}/complete-a-failed-move", f"{MOVE}#2", f"{SUBMISSION}#3")
def test_a_failed_transfer_records_its_completion_before_wait_raises():
    device = Device()
    host, accelerator = device_route(device, error=HookError("device fault"))
    t = sw.Tensor(host(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    with sw.profile() as prof:
        handle = sw.move_async(t, accelerator(sw.Float32))
        device.proceed.set()
        for _ in range(2):
            with pytest.raises(HookError, match="device fault"):
                handle.wait()
        # Recorded before the outcome: visible as soon as wait() raised.
        assert_one_move(
            prof.events,
            "host->accelerator",
            (host.carrier_class.name, accelerator.carrier_class.name),
            2,
        )
    assert not t.carrier.is_released


@pytest.mark.spec(f"{MOVE}/complete-a-failed-move", f"{MOVE}#2")
def test_a_failed_copy_hook_records_its_completion():
    """A Python _copy raising on a pool worker: a failure through the legacy registry."""

    class Source(sw.Generic):
        pass

    class Destination(sw.CPU):
        pass

    gate = Gate()
    gate.open()
    failing = gated_copy(gate, HookError("hook fault"))
    register_move_operation(Source, Destination, failing)
    try:
        t = sw.Tensor(Source(sw.Float32, values=[1.0]), sw.Layout(1))
        with sw.profile() as prof:
            with pytest.raises(HookError):
                sw.move(t, Destination(sw.Float32))
    finally:
        unregister_move_operation(Source, Destination)
    assert of_kind(prof.events, "operation") == []
    assert_one_move(
        prof.events,
        failing.operation_class.name,
        (Source.carrier_class.name, Destination.carrier_class.name),
        1,
    )


@pytest.mark.spec(f"{MOVE}/record-nothing-for-a-refused-move", f"{MOVE}#4")
def test_a_refused_move_records_nothing():
    t = cpu_tensor(3)
    with sw.profile() as prof:
        with pytest.raises(TypeError, match="Int32"):
            sw.move_async(t, sw.CPU(sw.Int32))
        released = cpu_tensor(2)
        released.carrier.release()
        with pytest.raises(RuntimeError, match="released"):
            sw.move_async(released, sw.CPU(sw.Float32))
    assert prof.events == []


@pytest.mark.spec(
    f"{COLLECT}/collect-events-from-worker-threads", f"{COLLECT}#2", f"{SUBMISSION}#1"
)
def test_moves_from_many_threads_each_get_one_correlated_pair():
    threads_count, moves_each = 4, 5
    native_ids: list[int] = []
    with sw.profile() as prof:

        def work():
            native_ids.append(threading.get_native_id())
            for _ in range(moves_each):
                sw.move(cpu_tensor(8), sw.FileBacked(sw.Float32))

        threads = [threading.Thread(target=work) for _ in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TERMINAL_TIMEOUT)
    groups = by_correlation(prof.events)
    assert len(groups) == threads_count * moves_each
    for events in groups.values():
        submission, _ = assert_one_move(
            events, "CpuToFileBackedMoveOperation", ("CPU", "FileBacked"), 8
        )
        assert submission.thread_id in native_ids
    assert {g[0].thread_id for g in groups.values()} == set(native_ids)
    assert len({g[0].request for g in groups.values()}) == len(groups)


@pytest.mark.spec(f"{MOVE}#5", f"{MOVE}#1")
def test_a_backward_reverse_move_is_a_move_like_any_other():
    x = cpu_tensor()
    x.requires_grad = True
    y = sw.move(x, sw.FileBacked(sw.Float32))
    with sw.profile() as prof:
        (y * y).sum().backward()
        returned = time.monotonic_ns()
    moves = [e for e in prof.events if e.category == "move"]
    # The move node's reverse move, FileBacked -> CPU, through the captured built-in route.
    submission, completion = assert_one_move(
        moves, "FileBackedToCpuMoveOperation", ("FileBacked", "CPU"), 6
    )
    assert submission.thread_id == threading.get_native_id()
    assert completion.end_ns <= returned  # backward waited for the reverse move
    operations = [e.name for e in of_kind(prof.events, "operation")]
    assert "move" not in operations and "FileBackedToCpuMoveOperation" not in operations
    assert x.grad.tolist() == [2.0 * v for v in range(6)]
