"""interop-movement: a fault injected at every stage of a move, on every kind of route.

``strideweave._core._testing.inject_move_fault(stage, exception)`` arms a one-shot fault:
the next move to reach ``stage`` raises that exception object there. A fault before the
transfer is submitted (validation .. submission) raises directly from ``move_async``,
which returns no handle; a later one (copy .. result validation) is the handle's
terminal failure. Either way the source stays live with its values and version, no pin
is left, nothing is published, and a second move of the same Tensor succeeds.

Routes: the built-in pairs (CPU -> CPU, CPU -> Generic, Generic -> CPU, CPU ->
FileBacked, FileBacked -> CPU, and the three Metal pairs, which stage their value), a
pair of Python subclasses registered with a Python ``_copy``, and definition-backed pairs
whose TransferProvider's prepared callable reports synchronously or through a
concurrent.futures.Future another thread completes. The Python routes hold the transfer
until the test opens them, so two threads wait on a pending move that then fails.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future

import pytest

import strideweave as sw
from conformance.interop_movement.movement import (
    ALLOCATED,
    RAISED_DIRECTLY,
    STAGES,
    TERMINAL_TIMEOUT,
    WRITTEN,
    InjectedFault,
    carrier_pair,
    copy_span,
    snapshot,
    source_tensor,
    wait_from_threads,
)
from strideweave._core import _testing
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.carriers.move import registered_move_operation

TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"
EAGER = "interop-movement/move-submission-is-eager-but-does-not-force-host-synchronization"
LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"


@pytest.fixture(autouse=True)
def no_fault_left_armed() -> Iterator[None]:
    assert _testing.clear_move_faults() == 0, "a fault was armed before the test"
    yield
    assert _testing.clear_move_faults() == 0, "an injected fault never fired"


class Route:
    """An installed route from ``source_class`` to ``destination_class``. When ``holds``,
    its transfer waits until ``open()`` before it reports its outcome; threads it starts
    are joined by ``join()``."""

    def __init__(self, source_class: type, destination_class: type, holds: bool) -> None:
        self.source_class = source_class
        self.destination_class = destination_class
        self.holds = holds
        self.opened = threading.Event()
        self.threads: list[threading.Thread] = []

    def hold(self) -> None:
        assert self.opened.wait(TERMINAL_TIMEOUT), "the route was never opened"

    def open(self) -> None:
        self.opened.set()

    def start(self, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target)
        self.threads.append(thread)
        thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(TERMINAL_TIMEOUT)
            assert not thread.is_alive(), "a completing thread never finished"


def builtin_route(source_class: type, destination_class: type):
    @contextlib.contextmanager
    def installed() -> Iterator[Route]:
        yield Route(source_class, destination_class, holds=False)

    return installed


@contextlib.contextmanager
def python_copy_route() -> Iterator[Route]:
    """Fresh Python subclasses (Generic -> CPU) registered with a Python _copy."""
    route = Route(*carrier_pair(), holds=True)

    class HeldCopy(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            route.hold()
            copy_span(tensor, destination, element_count)

    with registered_move_operation(route.source_class, route.destination_class, HeldCopy):
        try:
            yield route
        finally:
            route.open()


def defined_route(asynchronous: bool):
    """Fresh CPU subclasses, the source defined with one TransferRoute to the destination.
    The prepared callable copies the span through ``output``'s carrier on the worker
    running it, then reports: by returning None (after the route opens), or by returning
    a Future that another thread completes once the route opens."""

    @contextlib.contextmanager
    def installed() -> Iterator[Route]:
        class Source(sw.CPU):
            pass

        class Destination(sw.CPU):
            pass

        route = Route(Source, Destination, holds=True)

        class SpanProvider(TransferProvider):
            def prepare(self, request):
                def transfer(output):
                    span = request.source.read_range(request.offset, request.element_count)
                    output.carrier.write_range(0, span)
                    if not asynchronous:
                        route.hold()
                        return None
                    future: Future = Future()

                    def complete():
                        route.hold()
                        future.set_result(None)

                    route.start(complete)
                    return future

                return transfer

        definition = CarrierDefinition(
            Source,
            routes=[TransferRoute(Source, Destination, "source->destination", SpanProvider())],
        )
        define_carrier(definition)
        try:
            yield route
        finally:
            route.open()
            route.join()
        # The transfers really reported through a Future (at least the last move's).
        assert route.threads or not asynchronous

    return installed


ROUTES = {
    "CPU->CPU": builtin_route(sw.CPU, sw.CPU),
    "CPU->Generic": builtin_route(sw.CPU, sw.Generic),
    "Generic->CPU": builtin_route(sw.Generic, sw.CPU),
    "CPU->FileBacked": builtin_route(sw.CPU, sw.FileBacked),
    "FileBacked->CPU": builtin_route(sw.FileBacked, sw.CPU),
    "CPU->Metal": builtin_route(sw.CPU, sw.Metal),
    "Metal->CPU": builtin_route(sw.Metal, sw.CPU),
    "Metal->Metal": builtin_route(sw.Metal, sw.Metal),
    "Python _copy": python_copy_route,
    "defined, synchronous": defined_route(asynchronous=False),
    "defined, Future": defined_route(asynchronous=True),
}


# Routes whose transfer stages the destination's value in storage of its own and installs
# it only at a successful commit (the Metal pairs; docs/movement.md, "Versions"): a failure
# at any stage leaves the destination exactly as it was, an empty one still empty.
STAGING = {"CPU->Metal", "Metal->CPU", "Metal->Metal"}


def failures_of(handle: sw.AwaitMove, route: Route) -> list[BaseException]:
    """What wait() raised: from two threads started while the move may be pending (the
    route opens after both started), then twice more from this thread."""
    results, raised = wait_from_threads(handle.wait, 2, route.open)
    assert results == [], "a waiter saw the move succeed"
    for _ in range(2):
        with pytest.raises(BaseException) as info:
            handle.wait()
        raised.append(info.value)
    return raised


@pytest.mark.spec(
    f"{TERMINAL}/fail-one-asynchronous-move",
    f"{TERMINAL}#1",
    f"{TERMINAL}#2",
    f"{TERMINAL}#3",
    f"{EAGER}#4",
    f"{EAGER}#5",
    f"{LIFETIME}#5",
)
@pytest.mark.parametrize("empty", [True, False], ids=["empty destination", "sized destination"])
@pytest.mark.parametrize("route_name", list(ROUTES))
@pytest.mark.parametrize("stage", STAGES)
def test_a_fault_at_any_stage_changes_nothing(stage, route_name, empty):
    with ROUTES[route_name]() as route:
        t = source_tensor(route.source_class)
        source, values = t.carrier, t.tolist()
        source_state = snapshot(source)
        cosize = t.layout.cosize
        if empty:
            destination = route.destination_class(sw.Int32)
        else:
            destination = route.destination_class(
                sw.Int32, values=[-1 - i for i in range(cosize + 2)]
            )
        destination_state = snapshot(destination)
        fault = InjectedFault(f"injected at {stage}")
        _testing.inject_move_fault(stage, fault)

        if stage in RAISED_DIRECTLY:
            with pytest.raises(InjectedFault) as info:
                sw.move_async(t, destination)
            assert info.value is fault
            route.open()
        else:
            handle = sw.move_async(t, destination)
            if route.holds and stage in WRITTEN:
                # The transfer waits for the route: nothing is committed yet.
                assert handle.done is False
                assert source.pinned_by is not None and not source.is_released
            raised = failures_of(handle, route)
            assert len(raised) == 4 and all(error is fault for error in raised)
            assert handle.done is True
        assert _testing.clear_move_faults() == 0  # the fault fired, exactly once

        # The source: live, unpinned, with its values and version.
        assert snapshot(source) == source_state
        assert not source.is_released and source.pinned_by is None and source.is_mutable()
        assert t.tolist() == values
        # The destination: unpinned and usable; written only as documented.
        assert destination.pinned_by is None and destination.is_mutable()
        assert not destination.is_released and destination.moves_received == 0
        if route_name in STAGING:  # the value was staged apart and dropped: no change
            assert snapshot(destination) == destination_state
        elif stage in WRITTEN:  # the transfer wrote it: one mutation, slots unspecified
            assert destination.slots == (cosize if empty else cosize + 2)
            assert destination.version == destination_state[0] + 1
        elif empty and stage in ALLOCATED:  # allocated before the fault, never written
            assert destination.tolist() == [0] * cosize
            assert destination.version == 1
        else:
            assert snapshot(destination) == destination_state

        # Usability restored: the same Tensor moves into the same destination.
        version = destination.version
        handle = sw.move_async(t, destination)
        result = handle.wait()
        assert result.carrier is destination and result.offset == 0
        assert result.layout == t.layout and result.tolist() == values
        assert handle.wait() is result
        assert source.is_released and source.pinned_by is None
        # A successful move is no in-place mutation of the destination: counted as received.
        assert destination.pinned_by is None and destination.version == version
        assert destination.moves_received == 1


@pytest.mark.spec(f"{TERMINAL}#3", f"{EAGER}#4", f"{EAGER}#5")
@pytest.mark.parametrize("stage", STAGES)
def test_move_raises_the_fault_of_any_stage_itself(stage):
    """``move`` is ``move_async(...).wait()``: the identical exception, wherever it arose."""
    t = source_tensor(sw.Generic)
    source_state = snapshot(t.carrier)
    destination = sw.CPU(sw.Int32)
    fault = InjectedFault(stage)
    _testing.inject_move_fault(stage, fault)
    with pytest.raises(InjectedFault) as info:
        sw.move(t, destination)
    assert info.value is fault
    assert _testing.clear_move_faults() == 0
    assert snapshot(t.carrier) == source_state
    assert destination.pinned_by is None


@pytest.mark.spec(f"{TERMINAL}#3")
def test_an_armed_fault_waits_for_the_stage_and_fires_once():
    """A fault fires at the next move reaching its stage, not at a move failing earlier,
    and only once; re-arming a stage replaces its fault."""
    stale, fault = InjectedFault("replaced"), InjectedFault("armed")
    _testing.inject_move_fault("completion", stale)
    _testing.inject_move_fault("completion", fault)
    t = source_tensor(sw.CPU)
    values = t.tolist()
    with pytest.raises(ValueError):  # fails validation: never reaches completion
        sw.move_async(t, t.carrier)
    with pytest.raises(InjectedFault) as info:
        sw.move(t, sw.Generic(sw.Int32))
    assert info.value is fault
    assert _testing.clear_move_faults() == 0
    assert sw.move(t, sw.Generic(sw.Int32)).tolist() == values
    # Unfired faults are counted and disarmed.
    _testing.inject_move_fault("copy", InjectedFault("never"))
    _testing.inject_move_fault("allocation", InjectedFault("never"))
    assert _testing.clear_move_faults() == 2
    assert _testing.clear_move_faults() == 0
