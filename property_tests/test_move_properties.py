"""interop-movement properties: for any layout (nested, holes, stride zero, extents 0 and
1), any offset and any ordered pair of Generic, CPU, FileBacked and Python-subclass
carriers, a move preserves every logical value and the exact layout, and releases
exactly the source."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given

import strideweave as sw
from property_tests import strategies as S
from strideweave.carriers.move import registered_move_operation

MOVE = "interop-movement/move-relocates-values-into-a-caller-supplied-carrier"
ASYNC = "interop-movement/move-async-validates-one-movement-request"


class PyCPU(sw.CPU):
    pass


class PyGeneric(sw.Generic):
    pass


class PyFileBacked(sw.FileBacked):
    pass


MOVE_CARRIERS = st.sampled_from([sw.Generic, sw.CPU, sw.FileBacked, PyCPU, PyGeneric, PyFileBacked])
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
    assert destination.version == version + 1  # one mutation, whatever the route wrote
    assert source.is_released and source.pinned_by is None
    assert source.version == source_version


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
