"""interop-movement: many moves from many threads, some failing, some handles dropped,
some waited on from two threads, over legacy operations (Python hooks, bulk routes, the
inline fallback) and definition-backed routes whose provider reports synchronously or
through a Future another thread completes later. Every move reaches exactly one outcome
(one destination mutation) and no pin is left behind."""

from __future__ import annotations

import random
import threading
from concurrent.futures import Future

import pytest

import strideweave as sw
from conformance.interop_movement.movement import (
    TERMINAL_TIMEOUT,
    HookError,
    carrier_pair,
    copy_span,
    wait_until,
)
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.carriers.move import registered_move_operation

LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"
AWAIT = "interop-movement/await-results-share-one-completion-contract"
TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"

THREADS = 4
MOVES_PER_THREAD = 40


class SpanProvider(TransferProvider):
    """Copies the span on the worker running the prepared callable (writing only its first
    slot when ``fails``), then reports: at once, or (``asynchronous``) through a Future a
    timer thread completes a moment later, with a HookError when ``fails``."""

    def __init__(self, asynchronous: bool, fails: bool) -> None:
        super().__init__()
        self.asynchronous = asynchronous
        self.fails = fails
        self.timers: list[threading.Timer] = []
        self.lock = threading.Lock()

    def prepare(self, request):
        def transfer(output):
            count = min(request.element_count, 1) if self.fails else request.element_count
            output.carrier.write_range(0, request.source.read_range(request.offset, count))
            if not self.asynchronous:
                if self.fails:
                    raise HookError("the provider failed")
                return None
            future: Future = Future()

            def complete():
                if self.fails:
                    future.set_exception(HookError("the device failed"))
                else:
                    future.set_result(None)

            timer = threading.Timer(random.uniform(0, 0.002), complete)
            with self.lock:
                self.timers.append(timer)
            timer.start()
            return future

        return transfer

    def join(self) -> None:
        for timer in self.timers:
            timer.join(TERMINAL_TIMEOUT)
            assert not timer.is_alive(), "a Future was never completed"


def defined_route(asynchronous: bool, fails: bool) -> tuple[type, type, SpanProvider]:
    """Fresh CPU and Generic subclasses, the source defined with one route to the other."""

    class Source(sw.CPU):
        pass

    class Destination(sw.Generic):
        pass

    provider = SpanProvider(asynchronous, fails)
    route = TransferRoute(Source, Destination, "stress", provider)
    define_carrier(CarrierDefinition(Source, routes=[route]))
    return Source, Destination, provider


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
    # CPU -> FileBacked route on workers, the inline elementwise fallback, and
    # definition-backed routes reporting synchronously or through a Future.
    defined = [
        defined_route(asynchronous, fails)
        for asynchronous in (False, True)
        for fails in (False, True)
    ]
    routes = [
        (source_class, ok_class, False),
        (source_class, FailingDestination, True),
        (sw.CPU, sw.FileBacked, False),
        (sw.Generic, sw.CPU, False),
    ] + [(source, destination, provider.fails) for source, destination, provider in defined]
    records = []  # (source, destination, destination version, values, fails)
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
                version = destination.version
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
                    records.append((source, destination, version, values, fails))
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
    for _, _, provider in defined:
        provider.join()
    assert failures == []
    assert len(records) == THREADS * MOVES_PER_THREAD
    for source, destination, version, values, fails in records:
        # Dropped handles too: each move reaches its outcome and unpins both carriers.
        wait_until(
            lambda s=source, d=destination: s.pinned_by is None and d.pinned_by is None,
            "every move unpins its carriers",
        )
        assert destination.is_mutable()
        # One terminal commit: a failed move's writes (every move writes) count once; a
        # successful move is no in-place mutation and counts as received.
        if fails:
            assert destination.version == version + 1 and destination.moves_received == 0
        else:
            assert destination.version == version and destination.moves_received == 1
        if fails:
            assert not source.is_released and source.is_mutable()
            assert source.tolist() == values
        else:
            assert source.is_released
            assert destination.tolist()[: len(values)] == values
