"""interop-movement: asynchronous moves. AwaitResult and AwaitMove, eager submission,
the one terminal boundary, and lifetime while a move is pending.

A move is held pending by a Python copy hook waiting at a Gate (conformance/
interop_movement/movement.py): Python hooks run on a worker of the process pool, so
move_async returns while the hook waits.

The AwaitProjection and AwaitResidency halves of "Await results share one completion
contract" and its scenario "Wait for a failed projection" are bound with TiledEvictable's
tile operations, held pending by a tile class pair whose loads wait at a Gate
(conformance/carrier_composition/tiled.py) and failed by an injected move fault. Not
bound here: #7 (no completion callback or profiling finalization is public yet).
"Return while a device copy is pending" is bound with a definition-backed route whose
provider submits its copy to an emulated device thread (the Metal carrier's own device
queue arrives with Metal).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import inspect
import queue
import threading

import pytest

import strideweave as sw
from conformance.carrier_composition.tiled import gated_tiled
from conformance.interop_movement.movement import (
    TERMINAL_TIMEOUT,
    Gate,
    HookError,
    carrier_pair,
    gated_copy,
    refused,
    snapshot,
    source_tensor,
    wait_from_threads,
    wait_until,
)
from strideweave._core import _testing
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.carriers.move import registered_move_operation

AWAIT = "interop-movement/await-results-share-one-completion-contract"
ASYNC = "interop-movement/move-async-validates-one-movement-request"
EAGER = "interop-movement/move-submission-is-eager-but-does-not-force-host-synchronization"
TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"
PINS = "carrier-storage/an-operation-in-progress-can-pin-a-carrier"
LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"
MOVE = "interop-movement/move-relocates-values-into-a-caller-supplied-carrier"


class Pending:
    """A move held at a gate: the source tensor, its carrier and values, the destination,
    and the handle move_async returned (after the hook entered the gate)."""

    def __init__(self, error: BaseException | None = None, destination_slots: int = 0) -> None:
        self.source_class, self.destination_class = carrier_pair()
        self.gate = Gate()
        self.registration = registered_move_operation(
            self.source_class, self.destination_class, gated_copy(self.gate, error)
        )
        self.registration.__enter__()
        self.tensor = source_tensor(self.source_class)
        self.source = self.tensor.carrier
        self.values = self.tensor.tolist()
        self.source_state = snapshot(self.source)
        self.destination = self.destination_class(sw.Int32, destination_slots)
        self.destination_version = self.destination.version
        self.handle = sw.move_async(self.tensor, self.destination)
        self.registration.__exit__(None, None, None)
        assert self.gate.entered.wait(TERMINAL_TIMEOUT), "the copy hook never started"

    def finish(self) -> None:
        self.gate.open()
        wait_until(lambda: self.handle.done, "the move is done")


def expect_failure_contract(pending: Pending) -> None:
    """The source is live, unpinned and unchanged, the destination unpinned."""
    assert snapshot(pending.source) == pending.source_state
    assert pending.source.pinned_by is None and pending.source.is_mutable()
    assert pending.tensor.tolist() == pending.values
    assert pending.destination.pinned_by is None and pending.destination.is_mutable()


# -- Await results share one completion contract --------------------------------------


@pytest.mark.spec(f"{AWAIT}#1", f"{AWAIT}#2", f"{AWAIT}#8", f"{AWAIT}#9", f"{ASYNC}#1")
def test_await_move_is_a_read_only_await_result():
    assert issubclass(sw.AwaitMove, sw.AwaitResult)
    handle = sw.move_async(source_tensor(), sw.Generic(sw.Int32))
    assert type(handle) is sw.AwaitMove
    assert isinstance(handle.done, bool)
    result = handle.wait()
    assert isinstance(result, sw.Tensor)
    for cls in (sw.AwaitResult, sw.AwaitMove):
        with pytest.raises(TypeError):
            cls()
    with pytest.raises(AttributeError):
        handle.done = False
    with pytest.raises(AttributeError):
        handle.result = None
    # No coroutine protocol: neither __await__ nor .await(), and asyncio refuses it.
    for name in ("__await__", "await", "__aiter__", "__anext__", "send", "throw"):
        assert not hasattr(handle, name), name
    assert not inspect.isawaitable(handle)

    async def await_it():
        return await handle

    with pytest.raises(TypeError):
        asyncio.run(await_it())


@pytest.mark.spec(f"{AWAIT}#10")
def test_await_names_are_importable_from_both_places():
    import strideweave.carriers.move as move_module

    for name in ("move_async", "AwaitResult", "AwaitMove"):
        assert getattr(sw, name) is getattr(move_module, name)
        assert name in sw.__all__ and name in move_module.__all__


@pytest.mark.spec(f"{AWAIT}#3", f"{AWAIT}#4", f"{EAGER}#3", f"{TERMINAL}#1")
def test_done_becomes_true_exactly_at_the_terminal_outcome():
    pending = Pending()
    assert pending.handle.done is False
    # Nothing published, nothing released, both carriers pinned by the move.
    assert not pending.source.is_released
    assert pending.source.pinned_by == pending.destination.pinned_by is not None
    assert pending.handle.done is False
    pending.finish()
    # done became true only after the terminal commit: observed without wait().
    assert pending.source.is_released and pending.destination.pinned_by is None
    result = pending.handle.wait()
    assert result.tolist() == pending.values and result.carrier is pending.destination


@pytest.mark.spec(f"{AWAIT}/wait-for-a-move-more-than-once", f"{AWAIT}#5", f"{AWAIT}#6")
def test_wait_for_a_move_more_than_once():
    pending = Pending()
    results, errors = wait_from_threads(pending.handle.wait, 8, pending.gate.open)
    assert errors == []
    assert len(results) == 8
    assert all(r is results[0] for r in results)
    assert pending.handle.wait() is results[0]
    # One terminal commit: one move received (no destination mutation), one source
    # release, one hook call.
    assert pending.destination.moves_received == 1
    assert pending.destination.version == pending.destination_version
    assert pending.source.is_released
    assert len(pending.gate.calls) == 1


@pytest.mark.spec(f"{AWAIT}#4", f"{AWAIT}#5", f"{AWAIT}#6", f"{EAGER}#5")
def test_every_wait_raises_the_identical_recorded_exception():
    error = HookError("the transfer failed")
    pending = Pending(error)
    results, raised = wait_from_threads(pending.handle.wait, 6, pending.gate.open)
    assert results == []
    for _ in range(2):
        with pytest.raises(HookError) as info:
            pending.handle.wait()
        raised.append(info.value)
    assert len(raised) == 8 and all(e is error for e in raised)


@pytest.mark.spec(f"{AWAIT}#4")
def test_wait_releases_the_gil_while_it_blocks():
    """The hook needs the GIL on its worker; another Python thread opens the gate while
    this thread waits."""
    pending = Pending()
    opener = threading.Thread(target=pending.gate.open)
    opener.start()
    result = pending.handle.wait()
    opener.join()
    assert result.tolist() == pending.values


@pytest.mark.spec(f"{AWAIT}#1", f"{AWAIT}#2", f"{AWAIT}#8", f"{AWAIT}#9")
def test_await_projection_and_residency_are_read_only_await_results():
    from strideweave.carriers.tiled_evictable import (
        AwaitProjection,
        AwaitResidency,
        TiledEvictable,
    )

    tiled = TiledEvictable(sw.Int32, 6, 4, values=[1, 2, 3, 4, 5, 6])
    residency = tiled.make_resident([0])
    projection = tiled.project(sw.Layout((2, 2), (2, 1)))
    assert type(residency) is AwaitResidency and type(projection) is AwaitProjection
    for handle, cls in ((residency, AwaitResidency), (projection, AwaitProjection)):
        assert issubclass(cls, sw.AwaitResult) and isinstance(handle.done, bool)
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(AttributeError):
            handle.done = False
        for name in ("__await__", "await", "__aiter__", "__anext__", "send", "throw"):
            assert not hasattr(handle, name), name
        assert not inspect.isawaitable(handle)
    assert residency.wait() is None
    result = projection.wait()
    # One compact ordinary Tensor: a fresh CPU carrier, the compact layout of the shape.
    assert isinstance(result, sw.Tensor) and type(result.carrier) is sw.CPU
    assert result.layout == sw.Layout((2, 2)) and result.offset == 0
    assert result.tolist() == [[1, 2], [3, 4]]

    async def await_it():
        return await projection

    with pytest.raises(TypeError):
        asyncio.run(await_it())


@pytest.mark.spec(f"{AWAIT}#11")
def test_tiled_await_names_are_importable_from_tiled_evictable():
    import strideweave.carriers.tiled_evictable as tiled_module

    for name in ("AwaitProjection", "AwaitResidency"):
        assert name in tiled_module.__all__
        assert issubclass(getattr(tiled_module, name), sw.AwaitResult)


@pytest.mark.spec(f"{AWAIT}#3", f"{AWAIT}#4", f"{AWAIT}#5", f"{AWAIT}#6")
def test_wait_for_a_projection_and_a_residency_change_more_than_once():
    tiled, gate = gated_tiled()
    residency = tiled.make_resident([0])
    projection = tiled.project(sw.Layout(6), 2)
    assert gate.entered.wait(TERMINAL_TIMEOUT)
    assert residency.done is False and projection.done is False
    results, errors = wait_from_threads(lambda: (residency.wait(), projection.wait()), 6, gate.open)
    assert errors == [] and len(results) == 6
    assert all(r is None and p is results[0][1] for r, p in results)
    assert projection.wait() is results[0][1] and residency.done and projection.done
    assert results[0][1].tolist() == [102, 103, 104, 105, 106, 107]


@pytest.mark.spec(f"{AWAIT}/wait-for-a-failed-projection", f"{AWAIT}#4", f"{AWAIT}#6")
@pytest.mark.parametrize("injected", [True, False])
def test_wait_for_a_failed_projection(injected):
    """The transfer failure is an injected move fault, or raised by the tile class pair's
    own copy hook."""
    error = HookError("the tile transfer failed")
    if injected:
        tiled, gate = gated_tiled()
        gate.open()
        _testing.inject_move_fault("copy", error)
    else:
        tiled, gate = gated_tiled(error=error)
    values, version = tiled.tolist(), tiled.version
    projection = tiled.project(sw.Layout(3), 5)
    results, raised = wait_from_threads(projection.wait, 4, gate.open)
    assert results == []
    for _ in range(2):
        with pytest.raises(HookError) as info:
            projection.wait()
        raised.append(info.value)
    assert len(raised) == 6 and all(e is error for e in raised)
    assert projection.done
    assert tiled.residency == ("evicted",) * 3
    assert tiled.tolist() == values and tiled.version == version


# -- Move submission is eager but does not force host synchronization -------------------


@pytest.mark.spec(f"{EAGER}#1", f"{EAGER}#3", f"{ASYNC}/initiate-one-move", f"{ASYNC}#1")
def test_move_async_returns_while_the_copy_blocks():
    """The hook started without anyone waiting (eager), and move_async returned first."""
    pending = Pending()
    assert pending.handle.done is False
    pending.finish()
    assert pending.handle.wait().tolist() == pending.values


class DeviceQueue:
    """An emulated device: one thread running submitted copies in order, each once the
    test lets the device proceed; a copy's completion resolves its Future."""

    def __init__(self) -> None:
        self.commands: queue.Queue = queue.Queue()
        self.proceed = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def submit(self, copy) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self.commands.put((copy, future))
        return future

    def _run(self) -> None:
        while True:
            copy, future = self.commands.get()
            self.proceed.wait(TERMINAL_TIMEOUT)
            copy()
            future.set_result(None)


@pytest.mark.spec(f"{EAGER}/return-while-a-device-copy-is-pending", f"{EAGER}#1", f"{EAGER}#3")
def test_return_while_a_device_copy_is_pending():
    device = DeviceQueue()
    staged: list = []

    class DeviceCopy(TransferProvider):
        """Stages the span on the worker (admitted to write the destination), then
        submits the device copy and returns its completion without waiting for it."""

        def prepare(self, request):
            def run(output):
                span = request.source.read_range(request.offset, request.element_count)
                request.destination.write_range(0, span)
                return device.submit(lambda: staged.append(len(span)))

            return run

    class Host(sw.CPU):
        pass

    class Device(sw.CPU):
        pass

    define_carrier(
        CarrierDefinition(Host, routes=[TransferRoute(Host, Device, "host->device", DeviceCopy())])
    )
    tensor = source_tensor(Host)
    expected = tensor.tolist()
    handle = sw.move_async(tensor, Device(sw.Int32))
    # The device has not run the copy: move_async returned without synchronizing.
    assert not handle.done and staged == []
    assert tensor.carrier.pinned_by is not None and not tensor.carrier.is_released
    device.proceed.set()
    result = handle.wait()
    assert staged == [tensor.layout.cosize] and handle.done
    assert result.tolist() == expected and tensor.carrier.is_released


@pytest.mark.spec(f"{EAGER}#1")
def test_a_provider_transfer_is_submitted_before_move_async_returns():
    """Generic, not Metal: a route's provider is prepared on the calling thread before
    move_async returns, and its transfer starts on a worker without anyone waiting. The
    transfer blocks until the test lets it finish, so the handle is pending when
    move_async returns."""
    prepared, started, finish = [], threading.Event(), threading.Event()

    class Held(TransferProvider):
        def prepare(self, request):
            prepared.append(threading.get_ident())

            def run(output):
                started.set()
                finish.wait(TERMINAL_TIMEOUT)
                request.destination.write_range(
                    0, request.source.read_range(request.offset, request.element_count)
                )

            return run

    class Host(sw.CPU):
        pass

    class Sink(sw.CPU):
        pass

    define_carrier(CarrierDefinition(Host, routes=[TransferRoute(Host, Sink, "held", Held())]))
    tensor = source_tensor(Host)
    expected = tensor.tolist()
    handle = sw.move_async(tensor, Sink(sw.Int32))
    assert prepared == [threading.get_ident()]
    assert not handle.done
    # Nobody waits on the handle: the transfer starts because move_async submitted it.
    assert started.wait(TERMINAL_TIMEOUT), "the submitted transfer never started"
    assert not handle.done
    finish.set()
    assert handle.wait().tolist() == expected


@pytest.mark.spec(f"{EAGER}#1", f"{ASYNC}/initiate-one-move")
def test_a_bulk_file_move_completes_without_a_wait():
    t = sw.Tensor(sw.CPU(sw.Int32, values=list(range(4096))), sw.Layout(4096))
    source = t.carrier
    destination = sw.FileBacked(sw.Int32)
    handle = sw.move_async(t, destination)
    wait_until(lambda: handle.done, "the bulk transfer completes")
    assert source.is_released
    assert destination.tolist() == list(range(4096))
    assert handle.wait().carrier is destination


@pytest.mark.spec(
    f"{EAGER}#2",
    f"{LIFETIME}#2",
    f"{LIFETIME}#3",
    f"{PINS}/refuse-reads-of-a-carrier-pinned-for-writing",
    f"{PINS}#9",
)
def test_a_pending_move_protects_its_carriers():
    pending = Pending()
    source, destination, t = pending.source, pending.destination, pending.tensor
    pin = source.pinned_by
    token = source.version_token()
    carriers = [source, destination]
    with refused(RuntimeError, pin, carriers=carriers):
        source.write(0, 1)
    with refused(RuntimeError, pin, carriers=carriers):
        source.write_range(0, [1, 2])
    with refused(RuntimeError, pin, carriers=carriers):
        source.release()
    with refused(RuntimeError, pin, carriers=carriers):
        sw.Generic(sw.Int32).take_ownership(source)
    with refused(RuntimeError, pin, carriers=carriers):
        sw.move(t, sw.Generic(sw.Int32))
    with refused(RuntimeError, pin, carriers=carriers):
        sw.move_async(t[0], sw.CPU(sw.Int32))
    # The destination is refused to every other thread too.
    with refused(RuntimeError, pin, carriers=carriers):
        destination.write(0, 1)
    with refused(RuntimeError, pin, carriers=carriers):
        destination.release()
    with refused(RuntimeError, "destination", "mutable", carriers=carriers):
        sw.move(sw.tensor([1, 2], dtype=sw.Int32), destination)
    # Its slots are incomplete: reads by every other thread are refused until the commit.
    over_destination = sw.Tensor(destination, sw.Layout(1))
    reads = (
        lambda: destination.read(0),
        lambda: destination.read_range(0, 1),
        destination.tolist,
        over_destination.tolist,
        over_destination.__dlpack__,
    )
    for read in reads:
        with refused(RuntimeError, pin, "while it writes", carriers=carriers):
            read()
    assert destination.pinned_by == pin and destination.slots == pending.tensor.layout.cosize
    # Reads of the source observe the captured value and version.
    assert t.tolist() == pending.values
    assert source.read(1) == 101 and source.version == pending.source_state[0]
    assert token.is_current()
    pending.finish()
    assert pending.handle.wait().tolist() == pending.values


# -- One asynchronous move publishes at one terminal boundary --------------------------


@pytest.mark.spec(f"{TERMINAL}#2")
def test_the_destination_publishes_before_the_source_is_released():
    """Watched from another thread: whenever the source is seen released, the destination
    is already unpinned with the move counted as received; whenever done is seen, the
    source is released. The destination's version never changes."""
    for _ in range(20):
        pending = Pending()
        violations = []
        stop = threading.Event()

        def watch(p=pending, v=violations, stop=stop):
            while not stop.is_set():
                done = p.handle.done
                released = p.source.is_released
                destination_pin = p.destination.pinned_by
                destination_moves = p.destination.moves_received
                if p.destination.version != p.destination_version:
                    v.append("the destination's version changed")
                if done and not released:
                    v.append("done before the source was released")
                if released and (destination_pin is not None or destination_moves != 1):
                    v.append("the source was released before the destination published")

        watcher = threading.Thread(target=watch)
        watcher.start()
        pending.finish()
        stop.set()
        watcher.join()
        assert violations == []
        assert pending.handle.wait().tolist() == pending.values


@pytest.mark.spec(f"{TERMINAL}/fail-one-asynchronous-move", f"{TERMINAL}#3", f"{EAGER}#5")
@pytest.mark.parametrize("destination_slots", [0, 11])
def test_fail_one_asynchronous_move(destination_slots):
    error = HookError("provider completion failed")
    pending = Pending(error, destination_slots)
    assert pending.handle.done is False
    pending.finish()
    # The failure contracts hold once done is true, before anyone waits.
    expect_failure_contract(pending)
    with pytest.raises(HookError) as info:
        pending.handle.wait()
    assert info.value is error
    expect_failure_contract(pending)
    # Both carriers are usable again: the source moves on.
    assert sw.move(pending.tensor, sw.Generic(sw.Int32)).tolist() == pending.values


@pytest.mark.spec(f"{TERMINAL}#3")
def test_a_failure_after_writing_the_destination_counts_one_mutation():
    source_class, destination_class = carrier_pair()

    class HalfWay(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            destination.write(0, 1)
            destination.write(1, 2)
            raise HookError("half way")

    t = source_tensor(source_class)
    source_state = snapshot(t.carrier)
    destination = destination_class(sw.Int32, 11)
    with registered_move_operation(source_class, destination_class, HalfWay):
        with pytest.raises(HookError):
            sw.move(t, destination)
    assert snapshot(t.carrier) == source_state
    assert destination.version == 1 and destination.pinned_by is None


@pytest.mark.spec(f"{MOVE}#1", f"{MOVE}#3")
def test_move_is_move_async_then_wait():
    """The same outcome either way: the same failure object, the same pins' names shape,
    the same result for the same input."""
    error = HookError("same path")
    source_class, destination_class = carrier_pair()
    names = []

    class Failing(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            names.append(tensor.carrier.pinned_by)
            raise error

    for call in (sw.move, lambda t, d: sw.move_async(t, d).wait()):
        t = source_tensor(source_class)
        with registered_move_operation(source_class, destination_class, Failing):
            with pytest.raises(HookError) as info:
                call(t, destination_class(sw.Int32))
        assert info.value is error
        assert t.carrier.pinned_by is None and not t.carrier.is_released
    assert all(name.startswith("move #") for name in names) and names[0] != names[1]


# -- Pending movement preserves lifetime through completion ---------------------------


@pytest.mark.spec(
    f"{LIFETIME}/drop-a-pending-handle", f"{LIFETIME}#1", f"{LIFETIME}#4", f"{LIFETIME}#5"
)
@pytest.mark.parametrize("fails", [False, True])
def test_drop_a_pending_handle(fails):
    pending = Pending(HookError("dropped and failed") if fails else None)
    source, destination = pending.source, pending.destination
    # Drop the handle and the Tensor on another thread: neither blocks.
    holder = [pending.handle, pending.tensor]
    pending.handle = pending.tensor = None

    def drop():
        holder.clear()
        gc.collect()

    dropper = threading.Thread(target=drop)
    dropper.start()
    dropper.join(TERMINAL_TIMEOUT)
    assert not dropper.is_alive(), "dropping a pending handle blocked"
    # Not released early, not cancelled: still pinned, the hook still waiting.
    assert not source.is_released and source.pinned_by is not None
    assert destination.pinned_by is not None
    with pytest.raises(RuntimeError, match="while it writes"):  # not exposed incomplete
        destination.tolist()
    pending.gate.open()
    if fails:
        wait_until(lambda: source.pinned_by is None, "the failed move unpins the source")
        assert not source.is_released and source.tolist()[1:12:2] == [101, 103, 105, 107, 109, 111]
    else:
        wait_until(lambda: source.is_released, "the move releases the source")
        assert destination.tolist()[::2] == [101, 103, 105, 107, 109, 111]
    wait_until(lambda: destination.pinned_by is None, "the destination is unpinned")
    assert destination.is_mutable()


@pytest.mark.spec(f"{LIFETIME}#1")
def test_the_request_keeps_every_participant_alive():
    """Every caller reference dropped: the hook still gets the Tensor and the destination."""
    pending = Pending()
    source = pending.source
    pending.handle = pending.tensor = pending.destination = None
    gc.collect()
    seen_tensor, seen_destination = pending.gate.calls[0][:2]
    assert seen_tensor.carrier is source
    pending.gate.open()
    wait_until(lambda: source.is_released, "the move completes")
    assert seen_destination.tolist()[::2] == [101, 103, 105, 107, 109, 111]


@pytest.mark.spec(f"{LIFETIME}#6")
def test_cancellation_is_not_exposed():
    for cls in (sw.AwaitResult, sw.AwaitMove):
        assert [name for name in dir(cls) if "cancel" in name.lower()] == []
    assert [name for name in dir(sw) if "cancel" in name.lower()] == []
