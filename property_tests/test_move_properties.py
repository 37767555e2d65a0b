"""interop-movement properties: for any layout (nested, holes, stride zero, extents 0 and
1), any offset and any ordered pair of Generic, CPU, FileBacked, BlockDeviceCarrier and
Python-subclass carriers, a move preserves every logical value and the exact layout, and
releases exactly the source; CPU to BlockDeviceCarrier and back carries the whole physical
span, holes included; with a fault injected at any stage (on those pairs, a registered
Python _copy and definition-backed routes), nothing changes."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import hypothesis.strategies as st
import pytest
from hypothesis import given

import strideweave as sw
from conformance.interop_movement.movement import (
    ALLOCATED,
    RAISED_DIRECTLY,
    STAGES,
    WRITTEN,
    InjectedFault,
)
from strideweave._core import _testing
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.carriers.move import registered_move_operation
from strideweave.kit import strategies as S

MOVE = "interop-movement/move-relocates-values-into-a-caller-supplied-carrier"
ASYNC = "interop-movement/move-async-validates-one-movement-request"


class PyCPU(sw.CPU):
    pass


class PyGeneric(sw.Generic):
    pass


class PyFileBacked(sw.FileBacked):
    pass


class PyBlockDevice(sw.BlockDeviceCarrier):
    pass


MOVE_CARRIERS = st.sampled_from(
    [
        sw.Generic,
        sw.CPU,
        sw.FileBacked,
        sw.BlockDeviceCarrier,
        PyCPU,
        PyGeneric,
        PyFileBacked,
        PyBlockDevice,
    ]
)
# The exact pairs with a bulk route: it writes the span with one range write, which
# counts as the pin's one mutation even when the span is empty.


@pytest.mark.spec(f"{MOVE}#2", f"{MOVE}#4", f"{MOVE}#5", f"{MOVE}#6", f"{ASYNC}#1")
@given(
    t=S.tensors(carrier_classes=MOVE_CARRIERS),
    destination_class=MOVE_CARRIERS,
    spare=st.none() | S.EXTRA_SLOTS,
    wait=st.booleans(),
    data=st.data(),
)
def test_a_move_preserves_values_and_layout_and_releases_the_source(
    t, destination_class, spare, wait, data
):
    source = t.carrier
    values, layout = t.tolist(), t.layout
    cosize = layout.cosize if layout.size else 0
    source_version = source.version
    # An empty destination, or one of cosize + spare slots holding other values.
    slots = 0 if spare is None else cosize + spare
    destination = destination_class(t.dtype, values=data.draw(S.slot_values(t.dtype, slots)))
    version = destination.version
    result = sw.move_async(t, destination).wait() if wait else sw.move(t, destination)
    assert result.carrier is destination and result.offset == 0
    assert result.layout == layout
    assert result.tolist() == values
    assert destination.slots == (cosize if spare is None else slots)
    assert destination.pinned_by is None and destination.is_mutable()
    assert not destination.is_released
    assert destination.version == version  # no in-place mutation, whatever the route wrote
    assert destination.moves_received == 1
    assert source.is_released and source.pinned_by is None
    assert source.version == source_version


BLOCK = "carrier-storage/blockdevicecarrier-stores-slots-in-aligned-blocks"
ALIGN = "carrier-storage/transfer-requests-report-the-carriers-i-o-alignment"


@pytest.mark.spec(f"{ALIGN}#2", f"{BLOCK}#6", f"{BLOCK}#12")
@given(
    t=S.tensors(carrier_classes=st.just(sw.CPU)),
    block_size=st.sampled_from([None, 4096, 8192]),
    buffered=st.booleans(),
)
def test_cpu_to_block_device_and_back_carries_the_whole_span(t, block_size, buffered):
    """For any layout and offset: the built-in operations move the physical span [offset,
    offset + cosize) of the CPU source, holes included, through whole aligned blocks, and
    each move into the BlockDeviceCarrier syncs it once before it completes."""
    values, layout = t.tolist(), t.layout
    cosize = layout.cosize if layout.size else 0
    span = t.carrier.read_range(t.offset, cosize)
    _testing.refuse_direct_io(buffered)
    try:
        block = sw.BlockDeviceCarrier(t.dtype, block_size=block_size)
    finally:
        _testing.refuse_direct_io(False)
    if buffered:
        assert not block.direct_io and block.alignment == 1
    syncs = _testing.block_device_syncs()
    on_block = sw.move(t, block)
    assert _testing.block_device_syncs() == syncs + 1
    assert on_block.layout == layout and on_block.tolist() == values
    assert block.slots == cosize and block.tolist() == span
    back = sw.move(on_block, sw.CPU(t.dtype))
    assert back.layout == layout and back.tolist() == values
    assert back.carrier.tolist() == span
    assert block.is_released


class FailingSource(sw.Generic):
    pass


class FailingDestination(sw.CPU):
    pass


class MoveFailed(Exception):
    pass


class WriteThenFail(sw.MoveOperation):
    """Writes the first slot of the span, then fails the move."""

    def _copy(self, tensor, destination, output, element_count):
        if element_count:
            destination.write(0, tensor.carrier.read(tensor.offset))
        raise MoveFailed("the transfer failed")


TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"


@pytest.mark.spec(f"{TERMINAL}#3")
@given(
    t=S.tensors(carrier_classes=st.just(FailingSource)),
    empty=st.booleans(),
)
def test_a_failed_move_leaves_the_source_live_and_unchanged(t, empty):
    source = t.carrier
    values, before = t.tolist(), (source.version, source.slots, source.tolist())
    cosize = t.layout.cosize if t.layout.size else 0
    destination = FailingDestination(t.dtype, 0 if empty else cosize)
    with registered_move_operation(FailingSource, FailingDestination, WriteThenFail):
        handle = sw.move_async(t, destination)
    with pytest.raises(MoveFailed):
        handle.wait()
    assert handle.done
    assert not source.is_released and source.pinned_by is None and source.is_mutable()
    assert (source.version, source.slots, source.tolist()) == before
    assert t.tolist() == values
    assert destination.pinned_by is None and destination.is_mutable()
    assert destination.version == (1 if cosize else 0)


EAGER = "interop-movement/move-submission-is-eager-but-does-not-force-host-synchronization"
LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"


class SpanCopy(sw.MoveOperation):
    """A Python _copy: the span, slot by slot, through the public entry points."""

    def _copy(self, tensor, destination, output, element_count):
        for slot in range(element_count):
            destination.write(slot, tensor.carrier.read(tensor.offset + slot))


class SpanProvider(TransferProvider):
    """Copies the span with one range read and write on the worker running the prepared
    callable; reports by returning None, or (``asynchronous``) through a Future another
    thread completes."""

    def __init__(self, asynchronous: bool) -> None:
        super().__init__()
        self.asynchronous = asynchronous
        self.completers: list[threading.Thread] = []

    def prepare(self, request):
        def transfer(output):
            span = request.source.read_range(request.offset, request.element_count)
            output.carrier.write_range(0, span)
            if not self.asynchronous:
                return None
            future: Future = Future()
            completer = threading.Thread(target=future.set_result, args=(None,))
            self.completers.append(completer)
            completer.start()
            return future

        return transfer

    def join(self) -> None:
        while self.completers:
            self.completers.pop().join()


class DefinedSource(sw.CPU):
    pass


class DefinedDestination(sw.Generic):
    pass


class FutureSource(sw.Generic):
    pass


class FutureDestination(sw.CPU):
    pass


def defined_pair(source: type, destination: type, provider: SpanProvider) -> tuple[type, type]:
    """Defines ``source`` with one route, to ``destination``, through ``provider``."""
    define_carrier(
        CarrierDefinition(source, routes=[TransferRoute(source, destination, "span", provider)])
    )
    return source, destination


PROVIDERS = (SpanProvider(asynchronous=False), SpanProvider(asynchronous=True))
DEFINED_PAIRS = (
    defined_pair(DefinedSource, DefinedDestination, PROVIDERS[0]),
    defined_pair(FutureSource, FutureDestination, PROVIDERS[1]),
)

# Every ordered pair of the built-ins and their definition-free Python subclasses (PyGeneric
# -> PyCPU through a registered Python _copy), and the two definition-backed routes.
FAULT_PAIRS = st.one_of(
    st.tuples(MOVE_CARRIERS, MOVE_CARRIERS),
    st.sampled_from(DEFINED_PAIRS),
)


def carrier_state(carrier: sw.Carrier) -> tuple:
    return (
        carrier.version,
        carrier.is_released,
        carrier.pinned_by,
        carrier.is_mutable(),
        carrier.slots,
        carrier.tolist(),
    )


@pytest.mark.spec(f"{TERMINAL}#1", f"{TERMINAL}#3", f"{EAGER}#4", f"{EAGER}#5", f"{LIFETIME}#5")
@given(
    pair=FAULT_PAIRS, stage=st.sampled_from(STAGES), spare=st.none() | S.EXTRA_SLOTS, data=st.data()
)
def test_a_fault_at_any_stage_changes_nothing(pair, stage, spare, data):
    source_class, destination_class = pair
    t = data.draw(S.tensors(carrier_classes=st.just(source_class)), label="tensor")
    source = t.carrier
    values, source_state = t.tolist(), carrier_state(source)
    cosize = t.layout.cosize if t.layout.size else 0
    slots = 0 if spare is None else cosize + spare
    destination = destination_class(t.dtype, values=data.draw(S.slot_values(t.dtype, slots)))
    destination_state = carrier_state(destination)
    fault = InjectedFault(stage)
    with registered_move_operation(PyGeneric, PyCPU, SpanCopy):
        _testing.inject_move_fault(stage, fault)
        try:
            try:
                handle = sw.move_async(t, destination)
            except InjectedFault as error:
                assert error is fault and stage in RAISED_DIRECTLY
            else:
                assert stage not in RAISED_DIRECTLY
                for _ in range(2):
                    with pytest.raises(InjectedFault) as info:
                        handle.wait()
                    assert info.value is fault
                assert handle.done
        finally:  # disarmed even when an assertion failed, for the next example
            unfired = _testing.clear_move_faults()
        assert unfired == 0  # the fault fired, once

        assert carrier_state(source) == source_state
        assert t.tolist() == values
        assert destination.pinned_by is None and destination.is_mutable()
        if stage in WRITTEN and cosize:  # the transfer wrote: one mutation
            assert destination.slots == (slots or cosize)
            assert destination.version == destination_state[0] + 1
        elif stage in WRITTEN:
            # An empty span: no slot changed; a bulk route's empty range write may count.
            assert destination.tolist() == destination_state[5]
        elif spare is None and cosize and stage in ALLOCATED:
            assert destination.tolist() == [0] * cosize and destination.version == 1
        else:
            assert carrier_state(destination) == destination_state

        result = sw.move(t, destination)  # usability restored
        assert result.tolist() == values and result.layout == t.layout
        assert source.is_released and destination.pinned_by is None
    for provider in PROVIDERS:
        provider.join()
