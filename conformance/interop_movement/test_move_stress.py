"""interop-movement: many moves from many threads, some failing, some handles dropped,
some waited on from two threads. Every move reaches exactly one outcome and no pin is
left behind."""

from __future__ import annotations

import random
import threading

import pytest

import strideweave as sw
from conformance.interop_movement.movement import (
    TERMINAL_TIMEOUT,
    HookError,
    carrier_pair,
    copy_span,
    wait_until,
)
from strideweave.carriers.move import registered_move_operation

LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"
AWAIT = "interop-movement/await-results-share-one-completion-contract"
TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"

THREADS = 4
MOVES_PER_THREAD = 40


@pytest.mark.spec(f"{LIFETIME}#5", f"{AWAIT}#5", f"{AWAIT}#6", f"{TERMINAL}#2", f"{TERMINAL}#3")
def test_concurrent_moves_each_reach_one_outcome():
    source_class, ok_class = carrier_pair()

    class FailingDestination(sw.Generic):
        pass

    class Copy(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            copy_span(tensor, destination, element_count)

    class Fail(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            if element_count:
                destination.write(0, -1)
            raise HookError(f"refused {tensor.carrier.read(0)}")

    # (source class, destination class, fails): Python hooks on workers, the bulk
    # CPU -> FileBacked route on workers, and the inline elementwise fallback.
    routes = [
        (source_class, ok_class, False),
        (source_class, FailingDestination, True),
        (sw.CPU, sw.FileBacked, False),
        (sw.Generic, sw.CPU, False),
    ]
    records = []  # (source, destination, values, fails)
    lock = threading.Lock()
    failures = []

    def worker(seed):
        rng = random.Random(seed)
        try:
            for k in range(MOVES_PER_THREAD):
                source_cls, destination_cls, fails = rng.choice(routes)
                n = rng.randint(1, 24)
                source = source_cls(sw.Int32, values=[seed * 1000 + k * 30 + i for i in range(n)])
                t = sw.Tensor(source, sw.Layout(n))
                values = t.tolist()
                destination = destination_cls(sw.Int32, rng.choice([0, n, n + 3]))
                handle = sw.move_async(t, destination)
                mode = rng.choice(["wait", "drop", "two waiters"])
                outcomes = []

                def observe(h=handle, out=outcomes):
                    try:
                        out.append(h.wait())
                    except HookError as error:
                        out.append(error)

                if mode == "two waiters":
                    other = threading.Thread(target=observe)
                    other.start()
                    observe()
                    other.join(TERMINAL_TIMEOUT)
                    assert not other.is_alive()
                    assert outcomes[0] is outcomes[1]
                elif mode == "wait":
                    observe()
                if outcomes:
                    assert isinstance(outcomes[0], HookError if fails else sw.Tensor)
                    if not fails:
                        assert outcomes[0].tolist() == values
                with lock:
                    records.append((source, destination, values, fails))
        except BaseException as error:  # a failed assertion on this thread
            failures.append(error)
            raise

    with (
        registered_move_operation(source_class, ok_class, Copy),
        registered_move_operation(source_class, FailingDestination, Fail),
    ):
        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TERMINAL_TIMEOUT * 4)
            assert not thread.is_alive(), "a mover never finished"
    assert failures == []
    assert len(records) == THREADS * MOVES_PER_THREAD
    for source, destination, values, fails in records:
        # Dropped handles too: each move reaches its outcome and unpins both carriers.
        wait_until(
            lambda s=source, d=destination: s.pinned_by is None and d.pinned_by is None,
            "every move unpins its carriers",
        )
        assert destination.is_mutable()
        if fails:
            assert not source.is_released and source.is_mutable()
            assert source.tolist() == values
        else:
            assert source.is_released
            assert destination.tolist()[: len(values)] == values
