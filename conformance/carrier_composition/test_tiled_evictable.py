"""carrier-composition: TiledEvictable. Tiles and their carriers, reads and writes in
either tile state, bounded residency, projection, the operation queue and its pin, failed
tile transfers, and the definition's one route.

Tile operations are held pending by a tile class pair whose loads wait at a Gate
(conformance/carrier_composition/tiled.py).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import strideweave as sw
from conformance.carrier_composition.tiled import gated_tiled, recording_classes, state
from conformance.interop_movement.movement import HookError, refused
from strideweave._core import _testing
from strideweave.carriers import CarrierDefinition, define_carrier
from strideweave.carriers.tiled_evictable import AwaitProjection, AwaitResidency, TiledEvictable

SPLIT = "carrier-composition/tiledevictable-splits-its-slots-into-owned-tiles"
ENTRY = "carrier-composition/tiledevictable-reads-and-writes-any-slot-in-either-tile-state"
LRU = "carrier-composition/tile-residency-is-bounded-and-evicts-the-least-recently-used-tile-first"
PROJECT = "carrier-composition/projection-completes-with-one-compact-ordinary-tensor"
QUEUE = "carrier-composition/tile-operations-run-in-submission-order-on-the-process-pool"
FAILED = "carrier-composition/a-failed-tile-transfer-leaves-every-tile-consistent"
ROUTE = "carrier-composition/tiledevictable-is-definition-backed-with-one-projection-route"


def ten(**options) -> TiledEvictable:
    return TiledEvictable(sw.Int32, 10, 4, values=list(range(10)), **options)


# -- TiledEvictable splits its slots into owned tiles -----------------------------------


@pytest.mark.spec(f"{SPLIT}/construct-a-tiled-carrier", f"{SPLIT}#1", f"{SPLIT}#2", f"{SPLIT}#4")
def test_construct_a_tiled_carrier():
    fast, slow, fast_tiles, slow_tiles = recording_classes()
    tiled = TiledEvictable(
        sw.Int32, 10, 4, fast_class=fast, slow_class=slow, resident_limit=2, values=range(10)
    )
    assert tiled.tolist() == list(range(10)) and tiled.slots == 10
    assert (tiled.tile_slots, tiled.tile_count, tiled.resident_limit) == (4, 3, 2)
    assert tiled.fast_class is fast and tiled.slow_class is slow
    assert tiled.residency == ("evicted",) * 3 and tiled.use_order == ()
    # One slow carrier per tile, made by new_like, sized to the tile, owned.
    assert [c.slots for c in slow_tiles] == [4, 4, 2]
    assert all(c.owner is tiled and not c.is_mutable() for c in slow_tiles)
    assert [c.tolist() for c in slow_tiles] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert fast_tiles == []
    tiled.make_resident([1]).wait()
    assert len(fast_tiles) == 1 and fast_tiles[0].owner is tiled
    assert fast_tiles[0].tolist() == [4, 5, 6, 7]
    for name in ("tile_slots", "tile_count", "resident_limit", "fast_class", "residency"):
        with pytest.raises(AttributeError):
            setattr(tiled, name, None)
    zeros = TiledEvictable(sw.Float32, 5, 8)
    assert zeros.tolist() == [0.0] * 5 and zeros.tile_count == 1
    assert zeros.fast_class is sw.CPU and zeros.slow_class is sw.FileBacked
    assert zeros.resident_limit is None


@pytest.mark.spec(f"{SPLIT}#3")
@pytest.mark.parametrize(
    ("arguments", "options", "error", "subject"),
    [
        ((sw.Any, 4, 2), {}, TypeError, "TiledEvictable"),
        ((sw.Int32, -1, 2), {}, ValueError, "n"),
        ((sw.Int32, 3, 2), {"values": [1, 2]}, ValueError, "n=3"),
        ((sw.Int32, 4, 0), {}, ValueError, "tile_slots"),
        ((sw.Int32, 4, 2), {"resident_limit": 0}, ValueError, "resident_limit"),
        ((sw.Int32, 4, 2), {"fast_class": int}, TypeError, "fast_class"),
        ((sw.Int32, 4, 2), {"slow_class": sw.Carrier}, TypeError, "slow_class"),
        ((sw.Int32, 4, 2), {"values": ["x", 1, 2, 3]}, TypeError, "'x'"),
    ],
)
def test_construction_refusals(arguments, options, error, subject):
    with pytest.raises(error) as info:
        TiledEvictable(*arguments, **options)
    assert subject in str(info.value)


@pytest.mark.spec(f"{SPLIT}/reject-a-tile-class-without-a-lowered-edge", f"{SPLIT}#3")
def test_reject_a_tile_class_without_a_lowered_edge():
    _fast, slow, fast_tiles, slow_tiles = recording_classes()

    class Defined(sw.CPU):
        pass

    define_carrier(CarrierDefinition(Defined))
    for options in ({"fast_class": Defined, "slow_class": slow}, {"slow_class": Defined}):
        with pytest.raises(TypeError) as info:
            TiledEvictable(sw.Int32, 8, 4, **options)
        assert "TiledEvictable" in str(info.value) and "Defined" in str(info.value)
    assert slow_tiles == [] and fast_tiles == []


@pytest.mark.spec(f"{SPLIT}#5")
def test_tiled_evictable_is_final():
    with pytest.raises(TypeError):

        class Sub(TiledEvictable):
            pass


# -- TiledEvictable reads and writes any slot in either tile state ------------------------


@pytest.mark.spec(f"{ENTRY}/write-a-resident-tile-and-an-evicted-tile", f"{ENTRY}#1", f"{ENTRY}#2")
def test_write_a_resident_tile_and_an_evicted_tile():
    tiled = ten()
    tiled.make_resident([0]).wait()
    before = tiled.version
    tiled.write(1, 41)
    assert tiled.version == before + 1
    tiled.write(9, 49)
    assert tiled.version == before + 2
    tiled.write_range(4, [54, 55])
    assert tiled.version == before + 3
    expected = [0, 41, 2, 3, 54, 55, 6, 7, 8, 49]
    assert tiled.residency == ("resident", "evicted", "evicted") and tiled.use_order == (0,)
    assert tiled.tolist() == expected and tiled.read(9) == 49
    assert tiled.read_range(3, 4) == [3, 54, 55, 6]
    # A Tensor over slots 1, 2 (resident tile 0) and 8, 9 (evicted tile 2).
    assert sw.Tensor(tiled, sw.Layout((2, 2), (1, 7)), 1).tolist() == [[41, 8], [2, 49]]
    # Reads changed neither residency nor use order.
    assert tiled.residency == ("resident", "evicted", "evicted") and tiled.use_order == (0,)
    version = tiled.version
    tiled.evict([0]).wait()
    assert tiled.tolist() == expected and tiled.version == version
    tiled.make_resident([0, 1, 2]).wait()
    assert tiled.tolist() == expected and tiled.version == version
    assert tiled.residency == ("resident",) * 3


@pytest.mark.spec(f"{ENTRY}#3")
def test_allocation_is_refused_and_new_like_is_empty():
    tiled = ten(resident_limit=2)
    empty = tiled.new_like()
    assert type(empty) is TiledEvictable and empty.slots == 0 and empty.tile_count == 0
    assert (empty.dtype, empty.tile_slots, empty.resident_limit) == (sw.Int32, 4, 2)
    assert (empty.fast_class, empty.slow_class) == (sw.CPU, sw.FileBacked)
    for carrier in (empty, tiled):
        with refused(RuntimeError, "TiledEvictable", "allocation", carriers=[carrier]):
            carrier.allocate(4)
    tiled.release()
    assert tiled.new_like().slots == 0


@pytest.mark.spec(f"{ENTRY}/refuse-dlpack-export-of-a-tiledevictable", f"{ENTRY}#4")
def test_refuse_dlpack_export_of_a_tiledevictable():
    tiled = ten()
    tensor = sw.Tensor(tiled, sw.Layout(4))
    for residency in ("evicted", "resident"):
        if residency == "resident":
            tiled.make_resident([0, 1, 2]).wait()
        with refused(BufferError, "TiledEvictable", carriers=[tiled]):
            tensor.__dlpack__()
        with pytest.raises(BufferError, match="TiledEvictable"):
            np.from_dlpack(tensor)
        with pytest.raises(BufferError, match="TiledEvictable"):
            tiled.dlpack_info()


@pytest.mark.spec(f"{ENTRY}#5")
def test_release_releases_every_tile():
    fast, slow, fast_tiles, slow_tiles = recording_classes()
    tiled = TiledEvictable(sw.Int32, 10, 4, fast_class=fast, slow_class=slow)
    tiled.make_resident([0, 2]).wait()
    tiled.release()
    assert tiled.is_released and tiled.slots == 0 and tiled.residency == ()
    assert len(slow_tiles) == 3 and len(fast_tiles) == 2
    assert all(c.is_released for c in slow_tiles + fast_tiles)


# -- Tile residency is bounded and evicts the least recently used tile first -------------


@pytest.mark.spec(
    f"{LRU}/evict-the-least-recently-used-tile",
    f"{LRU}#1",
    f"{LRU}#3",
    f"{LRU}#4",
    f"{LRU}#5",
    f"{LRU}#7",
)
def test_evict_the_least_recently_used_tile():
    tiled = ten(resident_limit=2)
    version = tiled.version
    handle = tiled.make_resident([0, 1])
    assert type(handle) is AwaitResidency and handle.wait() is None
    assert tiled.use_order == (0, 1)
    tiled.make_resident([0]).wait()
    assert tiled.use_order == (1, 0)
    tiled.make_resident([2]).wait()
    assert tiled.residency == ("resident", "evicted", "resident")
    assert tiled.use_order == (0, 2)
    assert tiled.tolist() == list(range(10)) and tiled.version == version
    # Duplicates count once; projection marks its tiles used.
    tiled.make_resident([1, 1]).wait()
    assert tiled.use_order == (2, 1)
    tiled.project(sw.Layout(2), 8).wait()
    assert tiled.use_order == (1, 2)


@pytest.mark.spec(f"{LRU}#2", f"{LRU}#5")
def test_evict_writes_back_a_written_tile():
    fast, slow, fast_tiles, slow_tiles = recording_classes()
    tiled = TiledEvictable(sw.Int32, 8, 4, fast_class=fast, slow_class=slow, values=range(8))
    tiled.make_resident([0, 1]).wait()
    tiled.write(5, 55)
    slow_versions = [c.version for c in slow_tiles]
    version = tiled.version
    assert tiled.evict([0, 1]).wait() is None
    assert tiled.residency == ("evicted", "evicted") and tiled.use_order == ()
    # Tile 1 was written: copied back; tile 0 was not: its slow carrier untouched.
    assert slow_tiles[0].version == slow_versions[0]
    assert slow_tiles[1].version > slow_versions[1]
    assert slow_tiles[1].tolist() == [4, 55, 6, 7]
    assert all(c.is_released for c in fast_tiles)
    assert tiled.tolist() == [0, 1, 2, 3, 4, 55, 6, 7] and tiled.version == version
    tiled.evict([0, 1]).wait()  # evicted tiles are skipped
    assert tiled.residency == ("evicted", "evicted")


@pytest.mark.spec(f"{LRU}/reject-a-residency-request-beyond-the-limit", f"{LRU}#6")
def test_reject_a_residency_request_beyond_the_limit():
    tiled = ten(resident_limit=2)
    tiled.make_resident([0]).wait()
    before = state(tiled)
    with pytest.raises(ValueError, match="resident_limit"):
        tiled.make_resident([0, 1, 2])
    for call in (tiled.make_resident, tiled.evict):
        with pytest.raises(IndexError, match="tile 3"):
            call([1, 3])
        with pytest.raises(IndexError, match="tile -1"):
            call([-1])
        with pytest.raises(TypeError, match="tiles"):
            call(1)
        with pytest.raises(TypeError, match="tiles"):
            call(["0"])
    assert state(tiled) == before and tiled.pinned_by is None


# -- Projection completes with one compact ordinary Tensor -------------------------------


@pytest.mark.spec(f"{PROJECT}/project-a-window-across-tiles", f"{PROJECT}#1", f"{PROJECT}#2")
def test_project_a_window_across_tiles():
    tiled = TiledEvictable(sw.Int32, 24, 5, values=[100 + i for i in range(24)])
    layout = sw.Layout((3, (2, 2)), (2, (7, 1)))
    handle = tiled.project(layout, 3)
    assert type(handle) is AwaitProjection
    result = handle.wait()
    oracle = sw.Tensor(sw.CPU(sw.Int32, values=tiled.tolist()), layout, 3)
    assert result.tolist() == oracle.tolist()
    assert type(result.carrier) is sw.CPU and result.offset == 0
    assert result.layout == sw.Layout(layout.shape)
    assert result.carrier.slots == layout.size and result.is_mutable()
    # The window reaches slots 3 .. 3 + cosize - 1: tiles 0 .. 3.
    assert tiled.residency == ("resident",) * 4 + ("evicted",)
    # The result shares no storage: writing it changes nothing in the TiledEvictable.
    version = tiled.version
    result.carrier.write(0, -1)
    assert tiled.version == version and tiled.read(3) == 103
    assert np.array_equal(np.from_dlpack(handle.wait()), np.from_dlpack(result))


@pytest.mark.spec(f"{PROJECT}/reject-a-window-outside-the-slots", f"{PROJECT}#3")
def test_reject_a_window_outside_the_slots():
    tiled = ten(resident_limit=2)
    before = state(tiled)
    with pytest.raises(IndexError) as info:
        tiled.project(sw.Layout(4, 3), 1)
    assert "4:3 (cosize 10) at offset 1" in str(info.value) and "10 slots" in str(info.value)
    for offset in (8, 2**63 - 1):
        with pytest.raises(IndexError, match="10 slots"):
            tiled.project(sw.Layout(3), offset)
    with pytest.raises(ValueError, match="offset"):
        tiled.project(sw.Layout(3), -1)
    with pytest.raises(ValueError, match="resident_limit"):
        tiled.project(sw.Layout(10))
    assert state(tiled) == before and tiled.pinned_by is None
    # An empty window is within any carrier.
    assert tiled.project(sw.Layout(0), 50).wait().tolist() == []
    tiled.release()
    with pytest.raises(RuntimeError, match="TiledEvictable"):
        tiled.project(sw.Layout(1))


# -- Tile operations run in submission order on the process pool -------------------------


@pytest.mark.spec(f"{QUEUE}/refuse-a-write-while-a-tile-operation-is-pending", f"{QUEUE}#2")
def test_refuse_a_write_while_a_tile_operation_is_pending():
    tiled, gate = gated_tiled()
    handle = tiled.make_resident([0])
    assert gate.entered.wait(60)
    assert handle.done is False
    pin = tiled.pinned_by
    assert pin is not None and "tile operations" in pin and "TiledEvictable" in pin
    with refused(RuntimeError, pin, carriers=[tiled]):
        tiled.write(0, 1)
    with refused(RuntimeError, pin, carriers=[tiled]):
        tiled.release()
    with refused(RuntimeError, pin, carriers=[tiled]):
        sw.move(sw.Tensor(tiled, sw.Layout(2)), sw.CPU(sw.Int32))
    assert tiled.read(5) == 105 and tiled.tolist() == [100 + i for i in range(10)]
    # A second operation queues behind the first under the same pin.
    second = tiled.evict([0])
    assert tiled.pinned_by == pin
    gate.open()
    assert handle.wait() is None and second.wait() is None
    tiled.write(0, 7)
    assert tiled.read(0) == 7 and tiled.pinned_by is None


@pytest.mark.spec(f"{QUEUE}#2")
def test_a_tile_operation_refuses_another_operations_pin():
    tiled = ten()
    with tiled._pin("a test's operation") as lease:
        with pytest.raises(RuntimeError, match="a test's operation"):
            tiled.project(sw.Layout(2))
        with pytest.raises(RuntimeError, match="a test's operation"):
            tiled.make_resident([0])
        assert lease.active
    assert tiled.residency == ("evicted",) * 3


@pytest.mark.spec(f"{QUEUE}/run-tile-operations-in-submission-order", f"{QUEUE}#1")
def test_run_tile_operations_in_submission_order():
    tiled, gate = gated_tiled()
    first = tiled.make_resident([0])
    assert gate.entered.wait(60)
    second = tiled.evict([0])
    third = tiled.project(sw.Layout(4))
    assert not (first.done or second.done or third.done)
    gate.open()
    assert third.wait().tolist() == [100, 101, 102, 103]
    assert first.done and second.done
    # evict ran between the two loads of tile 0: both loads went through the gate, and
    # the projection, which ran last, left tile 0 resident.
    assert len(gate.calls) == 2
    assert tiled.residency == ("resident", "evicted", "evicted")
    threads = {call[-1] for call in gate.calls}
    assert threading.get_ident() not in threads


# -- A failed tile transfer leaves every tile consistent ---------------------------------


@pytest.mark.spec(
    f"{FAILED}/fail-a-projections-tile-load", f"{FAILED}#1", f"{FAILED}#2", f"{FAILED}#3"
)
@pytest.mark.parametrize("stage", ["allocation", "copy"])
def test_fail_a_projections_tile_load(stage):
    tiled = ten()
    tiled.make_resident([0]).wait()
    before = state(tiled)
    error = HookError(f"injected at {stage}")
    _testing.inject_move_fault(stage, error)
    handle = tiled.project(sw.Layout(8))
    raised = []
    for _ in range(2):
        with pytest.raises(HookError) as info:
            handle.wait()
        raised.append(info.value)
    assert raised[0] is error and raised[1] is error and handle.done
    # Tile 0 was resident already; tile 1's load failed: it is still evicted.
    assert state(tiled) == before
    assert tiled.pinned_by is None and tiled.is_mutable()
    assert tiled.project(sw.Layout(8)).wait().tolist() == list(range(8))


@pytest.mark.spec(f"{FAILED}#1", f"{FAILED}#2", f"{FAILED}#3")
def test_fail_an_eviction_and_a_later_load():
    tiled = ten()
    tiled.make_resident([0, 1]).wait()
    tiled.write(1, 11)
    tiled.write(5, 15)
    before = state(tiled)
    error = HookError("write-back failed")
    _testing.inject_move_fault("copy", error)
    handle = tiled.evict([0, 1])
    with pytest.raises(HookError) as info:
        handle.wait()
    assert info.value is error
    # Tile 0's write-back failed: it stays resident with its values; tile 1 was never
    # reached.
    assert state(tiled) == before
    tiled.evict([0, 1]).wait()
    assert tiled.residency == ("evicted",) * 3 and tiled.tolist() == before[3]
    # A failed load leaves its tile evicted; the tiles loaded before stay resident.
    tiled.make_resident([2]).wait()
    version = tiled.version
    error = HookError("load failed")
    _testing.inject_move_fault("copy", error)
    handle = tiled.make_resident([0, 1])
    with pytest.raises(HookError) as info:
        handle.wait()
    assert info.value is error
    assert tiled.residency == ("evicted", "evicted", "resident")
    assert tiled.tolist() == before[3] and tiled.version == version


# -- TiledEvictable is definition-backed with one projection route ------------------------


@pytest.mark.spec(
    f"{ROUTE}/move-a-tiledevictable-window-to-cpu", f"{ROUTE}#1", f"{ROUTE}#2", f"{ROUTE}#3"
)
def test_move_a_tiledevictable_window_to_cpu():
    cls = TiledEvictable.carrier_class
    assert cls.definition_state == "definition-backed"
    tiled = TiledEvictable(sw.Int32, 20, 3, values=[100 + i for i in range(20)])
    tiled.make_resident([1]).wait()
    layout = sw.Layout((2, 3), (5, 2))
    tensor = sw.Tensor(tiled, layout, 2)
    expected = tensor.tolist()
    destination = sw.CPU(sw.Int32)
    result = sw.move(tensor, destination)
    assert result.tolist() == expected and result.carrier is destination
    assert result.layout == layout and result.offset == 0
    assert tiled.is_released
    # The lowered tile transfers made no public move: nothing recorded for autograd.
    assert result.autograd_ctx is None


@pytest.mark.spec(f"{ROUTE}/refuse-an-undeclared-pair", f"{ROUTE}#2")
def test_refuse_an_undeclared_pair():
    tiled = ten()
    tensor = sw.Tensor(tiled, sw.Layout(4))

    class CpuSubclass(sw.CPU):
        pass

    for destination in (sw.FileBacked(sw.Int32), sw.Generic(sw.Int32), CpuSubclass(sw.Int32)):
        name = type(destination).__name__
        with refused(NotImplementedError, "TiledEvictable", name, carriers=[tiled, destination]):
            sw.move(tensor, destination)
    other = ten()
    source = sw.tensor([1, 2, 3, 4], dtype=sw.Int32)
    with refused(NotImplementedError, "TiledEvictable", "CPU", carriers=[other, source.carrier]):
        sw.move(source, other)


@pytest.mark.spec(f"{QUEUE}#3")
def test_tiled_names_are_importable():
    import strideweave.carriers as carriers
    import strideweave.carriers.tiled_evictable as module

    assert module.TiledEvictable is sw.TiledEvictable is carriers.TiledEvictable
    assert set(module.__all__) == {"AwaitProjection", "AwaitResidency", "TiledEvictable"}
    assert issubclass(module.AwaitProjection, sw.AwaitResult)
    assert issubclass(module.AwaitResidency, sw.AwaitResult)


@pytest.mark.spec(f"{ROUTE}#1", f"{ROUTE}#2")
def test_a_differentiable_move_out_of_a_tiledevictable_is_refused():
    """Its backward would move gradients CPU -> TiledEvictable, a pair no definition
    permits: the move fails before anything is pinned or changed."""
    tiled = TiledEvictable(sw.Float32, 4, 2, values=[1.0, 2.0, 3.0, 4.0])
    tensor = sw.Tensor(tiled, sw.Layout(4))
    tensor.requires_grad = True
    destination = sw.CPU(sw.Float32)
    with refused(NotImplementedError, "TiledEvictable", "CPU", carriers=[tiled, destination]):
        sw.move(tensor, destination)
    with sw.no_grad():
        assert sw.move(tensor, destination).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert tiled.is_released
