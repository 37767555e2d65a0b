"""Metal movement over the emulated device queue (spec/interop-movement: the four Metal
requirements, and the Metal scenarios of eager submission, pending lifetime and
profiling): the exact bulk pairs, the whole physical span, ordering against pending
device work, failure, gradients and the non-exporting boundary."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.interop_movement.movement import (
    InjectedFault,
    refused,
    snapshot,
    wait_until,
)
from strideweave._core import _testing
from strideweave.carriers.move import dispatch_move

BULK = "interop-movement/metal-movement-uses-exact-registered-bulk-pairs"
BOUNDARY = "interop-movement/metal-movement-preserves-the-complete-tensor-value-boundary"
REVERSE = "interop-movement/metal-movement-preserves-reverse-mode-carrier-boundaries"
SURFACE = "interop-movement/metal-exposes-no-new-public-device-interchange-surface"
EAGER = "interop-movement/move-submission-is-eager-but-does-not-force-host-synchronization"
LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"
PROFILING = "interop-movement/profiling-distinguishes-submission-from-completion"

# (source class, destination class) -> the registered bulk operation.
PAIRS = {
    (sw.CPU, sw.Metal): sw.CpuToMetalMoveOperation,
    (sw.Metal, sw.CPU): sw.MetalToCpuMoveOperation,
    (sw.Metal, sw.Metal): sw.MetalToMetalMoveOperation,
}
PAIR_IDS = [f"{s.__name__}->{d.__name__}" for s, d in PAIRS]

# Long enough that a submission returns well before its command buffer completes.
LATENCY_US = 100_000


pytestmark = pytest.mark.usefixtures("no_metal_fault_left_armed")


@pytest.fixture
def latency(metal_latency) -> None:
    """The emulated device takes LATENCY_US per command buffer for this test."""
    metal_latency(LATENCY_US)


def hierarchical(cls: type[sw.Carrier], dtype=sw.Float32, offset: int = 3) -> sw.Tensor:
    """A nested layout with holes, at an offset, over distinct values (two past the span)."""
    layout = sw.Layout(((2, 3), 2), ((1, 4), 13))
    count = offset + layout.cosize + 2
    values = [i + 0.5 for i in range(count)] if dtype == sw.Float32 else list(range(count))
    return sw.Tensor(cls(dtype, values=values), layout, offset)


@pytest.mark.spec(f"{BULK}/select-each-metal-bulk-pair", f"{BULK}#1")
@pytest.mark.parametrize("pair", list(PAIRS), ids=PAIR_IDS)
def test_select_each_metal_bulk_pair(pair):
    source_class, destination_class = pair
    operation = PAIRS[pair]
    assert dispatch_move(source_class, destination_class) is operation
    assert (operation.source_class, operation.destination_class) == pair
    t = hierarchical(source_class)
    expected = t.tolist()
    with sw.profile() as prof:
        result = sw.move(t, destination_class(sw.Float32))
    # The registered operation performed the transfer: the move's events name it.
    assert {e.name for e in prof.events if e.category == "move"} == {operation.__name__}
    assert type(result.carrier) is destination_class and result.tolist() == expected


@pytest.mark.spec(f"{BULK}#2", f"{BULK}#3", "carrier-storage/metal-stores-slots-in-device-memory#6")
def test_subclasses_and_other_pairs_take_the_elementwise_fallback():
    class SubMetal(sw.Metal):
        pass

    class SubCPU(sw.CPU):
        pass

    fallback = [
        (sw.CPU, SubMetal),
        (SubMetal, sw.CPU),
        (sw.Metal, SubMetal),
        (SubCPU, sw.Metal),
        (sw.Metal, SubCPU),
        (sw.Generic, sw.Metal),
        (sw.Metal, sw.Generic),
        (sw.FileBacked, sw.Metal),
        (sw.Metal, sw.FileBacked),
        (sw.BlockDeviceCarrier, sw.Metal),
        (sw.Metal, sw.BlockDeviceCarrier),
    ]
    for source_class, destination_class in fallback:
        assert dispatch_move(source_class, destination_class) is sw.ElementwiseMoveOperation
        t = hierarchical(source_class)
        expected = t.tolist()
        with sw.profile() as prof:
            result = sw.move(t, destination_class(sw.Float32))
        names = {e.name for e in prof.events if e.category == "move"}
        assert names == {"ElementwiseMoveOperation"}, (source_class, destination_class)
        assert type(result.carrier) is destination_class and result.tolist() == expected


@pytest.mark.spec(f"{BULK}#4")
@pytest.mark.parametrize("slow_class", [sw.CPU, sw.FileBacked], ids=["CPU", "FileBacked"])
def test_a_metal_tier_evicts_and_promotes(slow_class):
    fast = sw.Metal(sw.Float32, values=[1.0, 2.0, 3.0, 4.0])
    e = sw.Evictable(fast, slow_class(sw.Float32, 4))
    assert fast.owner is e
    e.evict()
    assert e.residency == "evicted" and e.slow.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert fast.is_released and type(e.fast) is sw.Metal
    e.write(2, 9.0)
    e.promote()
    assert e.residency == "resident" and e.fast.tolist() == [1.0, 2.0, 9.0, 4.0]
    t = sw.Tensor(e, sw.Layout(4))
    assert sw.move(t, sw.CPU(sw.Float32)).tolist() == [1.0, 2.0, 9.0, 4.0]


@pytest.mark.spec(f"{BULK}/refuse-an-unusable-metal-hierarchy", f"{BULK}#4")
@pytest.mark.parametrize("side", ["fast", "slow"])
def test_refuse_an_unusable_metal_hierarchy(side):
    """A Metal class whose movement belongs to a definition declaring no edge to the
    other tier: construction fails before either tier is owned."""

    class RoutedMetal(sw.Metal):
        pass

    class Provider(sw.TransferProvider):
        def prepare(self, request):
            return lambda output: None

    sw.define_carrier(
        sw.CarrierDefinition(
            RoutedMetal,
            routes=[sw.TransferRoute(RoutedMetal, sw.Metal, "routed-metal/metal", Provider())],
            elementwise_fallback=False,
        )
    )
    metal = RoutedMetal(sw.Float32, values=[1.0, 2.0])
    cpu = sw.CPU(sw.Float32, values=[3.0, 4.0])
    fast, slow = (metal, cpu) if side == "fast" else (cpu, metal)
    with refused(TypeError, "RoutedMetal", carriers=[metal, cpu]):
        sw.Evictable(fast, slow)
    assert metal.owner is None and cpu.owner is None
    assert metal.is_mutable() and cpu.is_mutable()


@pytest.mark.spec(f"{BOUNDARY}/move-a-hierarchical-physical-span-to-metal", f"{BOUNDARY}#1")
@pytest.mark.spec(f"{BOUNDARY}#5")
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32], ids=["Float32", "Int32"])
@pytest.mark.parametrize("pair", list(PAIRS), ids=PAIR_IDS)
def test_move_a_hierarchical_physical_span(pair, dtype):
    source_class, destination_class = pair
    t = hierarchical(source_class, dtype)
    source = t.carrier
    stored = source.tolist()
    expected = t.tolist()
    span = stored[t.offset : t.offset + t.layout.cosize]
    source_version = source.version
    destination = destination_class(dtype)
    result = sw.move(t, destination)
    assert result.carrier is destination and result.offset == 0
    assert result.layout == t.layout and result.dtype == dtype
    assert destination.slots == t.layout.cosize and destination.dtype == dtype
    assert destination.tolist() == span  # holes included
    assert result.tolist() == expected
    # Released after the transfer, its version untouched: not an in-place mutation,
    # of either carrier (the destination's allocation by the move included).
    assert source.is_released and source.version == source_version
    assert destination.version == 0 and destination.moves_received == 1


@pytest.mark.spec(f"{BOUNDARY}#1")
@pytest.mark.parametrize("pair", list(PAIRS), ids=PAIR_IDS)
def test_a_stride_zero_layout_stays_a_layout(pair):
    source_class, destination_class = pair
    t = sw.Tensor(source_class(sw.Int32, values=[7, 8, 9, 10]), sw.Layout((4, 3), (0, 1)), 1)
    result = sw.move(t, destination_class(sw.Int32))
    assert result.layout == t.layout
    assert result.carrier.slots == 3  # the cosize, not the 12 logical elements
    assert result.tolist() == [[8, 9, 10]] * 4


@pytest.mark.spec(f"{BOUNDARY}/synchronize-before-host-decode-and-release", f"{BOUNDARY}#2")
@pytest.mark.usefixtures("latency")
def test_synchronize_before_host_decode_and_release():
    """A Metal source with pending device work (an asynchronous operation's result)
    moves to CPU: the host values are those of the completed work, and the source is
    released only after it completed."""
    a = hierarchical(sw.Metal)
    pending = sw.add(a, a)
    assert type(pending.carrier) is sw.Metal
    assert _testing.metal_pending() > 0  # the addition has not run yet
    expected = [[[2 * v for v in row] for row in plane] for plane in a.tolist()]
    handle = sw.move_async(pending, sw.CPU(sw.Float32))
    assert not pending.carrier.is_released
    result = handle.wait()
    assert _testing.metal_pending() == 0
    assert result.tolist() == expected and pending.carrier.is_released


@pytest.mark.spec(f"{BOUNDARY}#2", f"{BOUNDARY}#3")
@pytest.mark.usefixtures("latency")
def test_metal_to_metal_stays_asynchronous_and_ordered():
    t = hierarchical(sw.Metal)
    expected = t.tolist()
    handle = sw.move_async(t, sw.Metal(sw.Float32))
    assert not handle.done and not t.carrier.is_released
    result = handle.wait()
    assert result.tolist() == expected and t.carrier.is_released


FAULTS = ["allocation", "copy", "synchronize"]
# Every pair with every device fault it can meet: a CPU destination's staged value is host
# memory, so a move into CPU makes no device allocation to fail.
PAIR_FAULTS = [
    pytest.param(pair, fault, id=f"{pair_id}-{fault}")
    for pair, pair_id in zip(PAIRS, PAIR_IDS, strict=True)
    for fault in FAULTS
    if fault != "allocation" or pair[1] is sw.Metal
]


@pytest.mark.spec(f"{BOUNDARY}/preserve-the-source-after-failure", f"{BOUNDARY}#4")
@pytest.mark.parametrize("sized", [False, True], ids=["empty destination", "sized destination"])
@pytest.mark.parametrize(("pair", "fault"), PAIR_FAULTS)
def test_preserve_both_carriers_after_a_device_failure(pair, fault, sized):
    source_class, destination_class = pair
    t = hierarchical(source_class)
    source, values = t.carrier, t.tolist()
    source_state = snapshot(source)
    cosize = t.layout.cosize
    if sized:  # one slot beyond the span too
        destination = destination_class(sw.Float32, values=[-1.0] * (cosize + 1))
    else:
        destination = destination_class(sw.Float32)
    destination_state = snapshot(destination)
    error = InjectedFault(f"Metal {fault}")
    _testing.inject_metal_fault(fault, error)
    handle = sw.move_async(t, destination)
    with pytest.raises(InjectedFault) as info:
        handle.wait()
    assert handle.done and info.value is error
    assert not _testing.clear_metal_faults()  # the fault fired
    # The source: live, unpinned, usable, with its values and version.
    assert snapshot(source) == source_state and t.tolist() == values
    # The destination: the move staged its value in storage of its own, dropped at the
    # failure, so nothing changed (version, slot count, values) and it is usable again.
    assert snapshot(destination) == destination_state
    assert destination.pinned_by is None and destination.is_mutable()
    result = sw.move(t, destination)
    assert result.tolist() == values and destination.version == destination_state[0]
    assert destination.moves_received == 1
    if sized:  # the slot beyond the span kept its value through the staged copy
        assert destination.read(cosize) == -1.0


@pytest.mark.spec(f"{BOUNDARY}/preserve-the-source-after-failure", f"{BOUNDARY}#4")
@pytest.mark.parametrize("stage", ["validation", "allocation", "submission", "copy"])
@pytest.mark.parametrize("pair", list(PAIRS), ids=PAIR_IDS)
def test_preserve_the_source_after_a_move_stage_failure(pair, stage):
    source_class, destination_class = pair
    t = hierarchical(source_class)
    source_state, values = snapshot(t.carrier), t.tolist()
    error = InjectedFault(stage)
    _testing.inject_move_fault(stage, error)
    destination = destination_class(sw.Float32, values=[-1.0] * t.layout.cosize)
    destination_state = snapshot(destination)
    with pytest.raises(InjectedFault) as info:
        sw.move(t, destination)
    assert info.value is error
    assert snapshot(t.carrier) == source_state and t.tolist() == values
    # Refused before the transfer started: both carriers' versions (and all else) kept.
    assert snapshot(destination) == destination_state
    assert destination.pinned_by is None and destination.is_mutable()


@pytest.mark.spec(f"{EAGER}/return-while-a-device-copy-is-pending", f"{EAGER}#1", f"{EAGER}#3")
@pytest.mark.parametrize("pair", list(PAIRS), ids=PAIR_IDS)
@pytest.mark.usefixtures("latency")
def test_return_while_a_metal_copy_is_pending(pair):
    source_class, destination_class = pair
    t = hierarchical(source_class)
    expected = t.tolist()
    handle = sw.move_async(t, destination_class(sw.Float32))
    # Returned while the device still holds the copy (its latency not yet elapsed).
    assert not handle.done and _testing.metal_pending() > 0
    assert t.carrier.pinned_by is not None and not t.carrier.is_released
    result = handle.wait()
    assert handle.done and result.tolist() == expected and t.carrier.is_released


@pytest.mark.spec(f"{LIFETIME}/drop-a-pending-handle", f"{LIFETIME}#1")
@pytest.mark.usefixtures("latency")
def test_drop_a_pending_metal_handle():
    t = hierarchical(sw.CPU)
    source, expected_span = t.carrier, t.carrier.tolist()[t.offset : t.offset + t.layout.cosize]
    destination = sw.Metal(sw.Float32)
    handle = sw.move_async(t, destination)
    del handle
    # Dropping did not wait for the device: the copy is still pending.
    assert _testing.metal_pending() > 0
    assert not source.is_released and destination.pinned_by is not None
    gc.collect()
    wait_until(lambda: source.is_released, "the dropped move committed")
    wait_until(lambda: destination.pinned_by is None, "the destination's pin ended")
    assert destination.tolist() == expected_span


@pytest.mark.spec(f"{REVERSE}/move-a-gradient-back-from-metal", f"{REVERSE}#1", f"{REVERSE}#2")
@pytest.mark.usefixtures("latency")
def test_move_a_gradient_back_from_metal():
    leaf = hierarchical(sw.CPU)
    leaf.requires_grad = True
    twos = [[[2.0 for _ in row] for row in plane] for plane in leaf.tolist()]
    on_metal = sw.move(leaf, sw.Metal(sw.Float32))
    assert isinstance(on_metal.autograd_ctx, sw.MoveNode)
    # A cotangent with device work still pending: backward synchronizes as needed.
    ones = sw.Tensor(sw.Metal(sw.Float32, values=[1.0] * 12), sw.Layout(((2, 3), 2)))
    cotangent = sw.add(ones, ones)
    assert _testing.metal_pending() > 0
    on_metal.backward(cotangent)
    grad = leaf.grad
    assert type(grad.carrier) is sw.CPU and grad.carrier is not leaf.carrier
    assert grad.shape == leaf.shape and grad.layout == leaf.layout and grad.tolist() == twos


@pytest.mark.spec(f"{REVERSE}#2")
def test_a_non_injective_cotangent_is_refused():
    leaf = hierarchical(sw.CPU)
    leaf.requires_grad = True
    on_metal = sw.move(leaf, sw.Metal(sw.Float32))
    broadcast = sw.Tensor(sw.Metal(sw.Float32, values=[1.0]), sw.Layout(((2, 3), 2), ((0, 0), 0)))
    with pytest.raises(ValueError, match="injective"):
        on_metal.backward(broadcast)
    assert leaf.grad is None


@pytest.mark.spec(f"{REVERSE}#3")
def test_a_failed_gradient_transfer_raises_without_another_carrier():
    leaf = hierarchical(sw.CPU)
    leaf.requires_grad = True
    on_metal = sw.move(leaf, sw.Metal(sw.Float32))
    cotangent = sw.Tensor(sw.Metal(sw.Float32, values=[1.0] * 12), sw.Layout(((2, 3), 2)))
    error = InjectedFault("the gradient's download")
    _testing.inject_metal_fault("copy", error)
    with pytest.raises(InjectedFault) as info:
        on_metal.backward(cotangent)
    assert info.value is error
    assert leaf.grad is None


def metal_tensor() -> sw.Tensor:
    return sw.Tensor(sw.Metal(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))


@pytest.mark.spec(f"{SURFACE}/reject-metal-dlpack-export", f"{SURFACE}#1")
def test_reject_metal_dlpack_export():
    t = metal_tensor()
    for call in (
        t.__dlpack__,
        lambda: t.__dlpack__(max_version=(1, 0)),
        lambda: np.from_dlpack(t),
        lambda: torch.from_dlpack(t),
        t.carrier.dlpack_info,
    ):
        with refused(BufferError, "Metal", carriers=[t.carrier]):
            call()
    assert t.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.spec(f"{SURFACE}#2", f"{SURFACE}#3", f"{SURFACE}#4")
def test_no_device_buffer_is_exposed_and_factories_stay_on_cpu():
    public = {name for name in dir(sw.Metal) if not name.startswith("_")}
    assert not public & {"buffer", "pointer", "data", "storage", "from_buffer", "device"}
    assert not hasattr(sw, "from_metal") and not hasattr(sw.Metal, "adopt")
    for made in (
        sw.tensor([1.0, 2.0]),
        sw.zeros((2, 2)),
        sw.full((2,), 3.0),
        sw.arange(4),
    ):
        assert type(made.carrier) is sw.CPU
    # The restrictions do not prevent the registered moves.
    assert sw.move(metal_tensor(), sw.CPU(sw.Float32)).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.spec(f"{PROFILING}/profile-an-asynchronous-metal-move", f"{PROFILING}#1")
@pytest.mark.spec(f"{PROFILING}#2", f"{PROFILING}#3")
@pytest.mark.usefixtures("latency")
def test_profile_an_asynchronous_metal_move():
    t = hierarchical(sw.CPU)
    with sw.profile() as prof:
        handle = sw.move_async(t, sw.Metal(sw.Float32))
        assert not handle.done
        handle.wait()
        handle.wait()  # a repeated wait records nothing more
    events = [e for e in prof.events if e.category == "move"]
    assert [e.kind for e in events] == ["submission", "completion"]
    submission, completion = events
    assert submission.correlation_id == completion.correlation_id
    assert submission.request == completion.request is not None
    assert submission.name == completion.name == "CpuToMetalMoveOperation"
    # Submission returned long before the device finished; the provider time runs
    # through completion, so it covers the device's latency.
    assert submission.duration_ns < LATENCY_US * 1000
    assert completion.end_ns - submission.start_ns >= LATENCY_US * 1000
