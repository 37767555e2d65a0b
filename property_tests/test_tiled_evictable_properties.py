"""carrier-composition properties: for any layout (nested, holes, stride zero, extents 0
and 1), any offset, any tile size and any residency of the tiles, a TiledEvictable's
projection equals the window read from a CPU carrier holding the same values (the
oracle), and its Tensor reads agree with it; a fault injected into a tile transfer leaves
every value, the version and each tile's state consistent."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given

import strideweave as sw
from strideweave._core import _testing
from strideweave.carriers.tiled_evictable import TiledEvictable
from strideweave.kit import strategies as S

PROJECT = "carrier-composition/projection-completes-with-one-compact-ordinary-tensor"
ENTRY = "carrier-composition/tiledevictable-reads-and-writes-any-slot-in-either-tile-state"
FAILED = "carrier-composition/a-failed-tile-transfer-leaves-every-tile-consistent"


class InjectedFault(Exception):
    """The fault these properties inject into tile transfers."""


@st.composite
def tiled_windows(draw: st.DrawFn):
    """(tiled, oracle, layout, offset): a TiledEvictable whose tiles are a drawn mix of
    resident and evicted, a CPU carrier of the same values, and a window within both."""
    dtype = draw(S.CONCRETE_DTYPES)
    layout = draw(S.ANY_LAYOUTS)
    offset = draw(S.OFFSETS)
    cosize = layout.cosize if layout.size else 0
    n = offset + cosize + draw(S.EXTRA_SLOTS)
    values = draw(S.slot_values(dtype, n))
    # At most eight tiles: each slow tile is a file.
    tile_slots = draw(st.integers(max(1, -(-n // 8)), max(1, n)))
    fast, slow = draw(st.sampled_from([(sw.CPU, sw.FileBacked), (sw.Generic, sw.CPU)]))
    tiled = TiledEvictable(dtype, n, tile_slots, fast_class=fast, slow_class=slow, values=values)
    resident = draw(st.lists(st.integers(0, max(0, tiled.tile_count - 1)), max_size=4))
    if tiled.tile_count:
        tiled.make_resident(resident).wait()
    written = draw(st.lists(st.integers(0, max(0, n - 1)), max_size=3))
    for slot in written if n else []:
        values[slot] = values[(slot + 1) % n]
        tiled.write(slot, values[slot])
    oracle = sw.CPU(dtype, values=values) if n else sw.CPU(dtype, 0)
    return tiled, oracle, layout, offset


@pytest.mark.spec(f"{PROJECT}#1", f"{ENTRY}#1")
@given(tiled_windows())
def test_projection_equals_the_cpu_oracle(window):
    tiled, oracle, layout, offset = window
    residency, version = tiled.residency, tiled.version
    expected = sw.Tensor(oracle, layout, offset).tolist()
    assert sw.Tensor(tiled, layout, offset).tolist() == expected
    assert tiled.residency == residency
    result = tiled.project(layout, offset).wait()
    assert result.tolist() == expected
    assert result.layout == sw.Layout(layout.shape) and type(result.carrier) is sw.CPU
    assert tiled.version == version and tiled.tolist() == oracle.tolist()


@pytest.mark.spec(f"{FAILED}#2", f"{FAILED}#3")
@given(tiled_windows(), st.sampled_from(["allocation", "copy"]), st.booleans())
def test_an_injected_fault_leaves_the_values_intact(window, stage, evicting):
    tiled, oracle, layout, offset = window
    version = tiled.version
    error = InjectedFault(stage)
    _testing.inject_move_fault(stage, error)
    try:
        if evicting:
            handle = tiled.evict(range(tiled.tile_count))
        else:
            handle = tiled.project(layout, offset)
        try:
            handle.wait()
        except InjectedFault as raised:
            assert raised is error
    finally:
        _testing.clear_move_faults()
    assert tiled.version == version and tiled.tolist() == oracle.tolist()
    assert tiled.pinned_by is None
    assert tiled.project(sw.Layout(tiled.slots)).wait().tolist() == oracle.tolist()
