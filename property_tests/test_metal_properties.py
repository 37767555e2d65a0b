"""Metal movement properties (spec/interop-movement, the Metal requirements): for any
layout (nested, holes, stride zero, extents 0 and 1), any offset and every dtype Metal
holds, CPU to Metal to CPU preserves every logical value and the exact layout, and the
Metal destination holds the complete physical span; a fault injected at any device or
move stage of any Metal pair leaves both carriers exactly as they were (the move stages
its value in storage of its own) and publishes nothing."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import assume, given

import strideweave as sw
from conformance.interop_movement.movement import InjectedFault, snapshot
from strideweave._core import _testing
from strideweave.kit import strategies as S

BOUNDARY = "interop-movement/metal-movement-preserves-the-complete-tensor-value-boundary"
BULK = "interop-movement/metal-movement-uses-exact-registered-bulk-pairs"

PAIRS = [(sw.CPU, sw.Metal), (sw.Metal, sw.CPU), (sw.Metal, sw.Metal)]
# Device faults (allocation only where the destination is Metal), and every move stage.
DEVICE_FAULTS = ["allocation", "copy", "synchronize"]
MOVE_STAGES = list(_testing.move_stages)


@pytest.mark.spec(f"{BOUNDARY}#1", f"{BOUNDARY}#5", f"{BULK}#1")
@given(t=S.tensors(carrier_classes=st.just(sw.CPU)))
def test_cpu_to_metal_and_back_preserves_values_layout_and_span(t):
    values, layout = t.tolist(), t.layout
    cosize = layout.cosize if layout.size else 0
    span = t.carrier.tolist()[t.offset : t.offset + cosize]
    on_metal = sw.move(t, sw.Metal(t.dtype))
    assert type(on_metal.carrier) is sw.Metal and on_metal.layout == layout
    assert on_metal.carrier.slots == cosize and on_metal.carrier.tolist() == span
    assert on_metal.tolist() == values
    back = sw.move(on_metal, sw.CPU(t.dtype))
    assert back.layout == layout and back.tolist() == values
    assert back.carrier.tolist() == span
    assert t.carrier.is_released and on_metal.carrier.is_released


@pytest.mark.spec(f"{BOUNDARY}/preserve-the-source-after-failure", f"{BOUNDARY}#4")
@given(
    t=S.tensors(carrier_classes=st.just(sw.CPU)),
    pair=st.sampled_from(PAIRS),
    fault=st.sampled_from(
        [("device", f) for f in DEVICE_FAULTS] + [("move", s) for s in MOVE_STAGES]
    ),
    sized=st.booleans(),
)
def test_any_fault_leaves_both_carriers_intact(t, pair, fault, sized):
    source_class, destination_class = pair
    if source_class is sw.Metal:
        t = sw.Tensor(sw.Metal(t.dtype, values=t.carrier.tolist()), t.layout, t.offset)
    source, values = t.carrier, t.tolist()
    before = snapshot(source)
    cosize = t.layout.cosize if t.layout.size else 0
    # A span of nothing submits no device work; only a Metal destination allocates on it.
    assume(cosize > 0 or fault[0] == "move")
    assume(fault != ("device", "allocation") or destination_class is sw.Metal)
    destination = destination_class(t.dtype, cosize + 1 if sized else None)
    if sized:
        destination.write(cosize, True if t.dtype == sw.Bool else 1)
    destination_before = snapshot(destination)
    error = InjectedFault(f"{fault[0]} {fault[1]}")
    if fault[0] == "device":
        _testing.inject_metal_fault(fault[1], error)
    else:
        _testing.inject_move_fault(fault[1], error)
    try:
        with pytest.raises(InjectedFault) as info:
            sw.move(t, destination)
    finally:
        assert _testing.clear_metal_faults() == 0 and _testing.clear_move_faults() == 0
    assert info.value is error
    assert snapshot(source) == before and t.tolist() == values
    assert snapshot(destination) == destination_before
