"""Helpers of the profiling tests: moves that exist today (CPU <-> FileBacked on the
process pool, and a definition-backed route whose provider completes a
concurrent.futures.Future on an emulated device thread), and event filters."""

from __future__ import annotations

import concurrent.futures
import queue
import threading

import strideweave as sw
from conformance.interop_movement.movement import TERMINAL_TIMEOUT
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier

OPERATION = "operation-profiling/each-operation-records-one-event"
COLLECT = "operation-profiling/a-profile-collects-events-from-every-thread-while-it-is-active"
MOVE = "operation-profiling/a-move-records-its-submission-and-its-completion-and-no-operation-event"
TRACE = "operation-profiling/a-profile-exports-a-chrome-trace"
AVERAGES = "operation-profiling/key-averages-aggregates-events-per-kind-and-name"
# interop-movement's requirements this capability serves.
SUBMISSION = "interop-movement/profiling-distinguishes-submission-from-completion"
AWAIT = "interop-movement/await-results-share-one-completion-contract"


def of_kind(events: list[sw.ProfileEvent], kind: str) -> list[sw.ProfileEvent]:
    return [e for e in events if e.kind == kind]


def by_correlation(events: list[sw.ProfileEvent]) -> dict[int, list[sw.ProfileEvent]]:
    """The events grouped by correlation id, each group in delivery order."""
    groups: dict[int, list[sw.ProfileEvent]] = {}
    for e in events:
        groups.setdefault(e.correlation_id, []).append(e)
    return groups


def cpu_tensor(n: int = 6) -> sw.Tensor:
    return sw.Tensor(sw.CPU(sw.Float32, values=[float(i) for i in range(n)]), sw.Layout(n))


class Device:
    """An emulated device: one thread running submitted copies in order, each once the
    test releases it (``proceed``); a copy's completion resolves its Future on the device
    thread, with ``error`` when the copy was submitted with one."""

    def __init__(self) -> None:
        self.proceed = threading.Event()
        self._copies: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def submit(self, error: BaseException | None = None) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._copies.put((future, error))
        return future

    def _run(self) -> None:
        while True:
            future, error = self._copies.get()
            self.proceed.wait(TERMINAL_TIMEOUT)
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)


def device_route(device: Device, error: BaseException | None = None):
    """(Host, Accelerator): two fresh CPU subclasses whose definition-backed route
    "host->accelerator" stages the values on the worker, then submits the device copy and
    returns its Future; the device resolves it (with ``error`` when given)."""

    class DeviceCopy(TransferProvider):
        def prepare(self, request):
            def run(output):
                span = request.source.read_range(request.offset, request.element_count)
                request.destination.write_range(0, span)
                return device.submit(error)

            return run

    class Host(sw.CPU):
        pass

    class Accelerator(sw.CPU):
        pass

    define_carrier(
        CarrierDefinition(
            Host, routes=[TransferRoute(Host, Accelerator, "host->accelerator", DeviceCopy())]
        )
    )
    return Host, Accelerator
