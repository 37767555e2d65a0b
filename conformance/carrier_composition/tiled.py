"""Helpers for the TiledEvictable tests (spec/carrier-composition, "TiledEvictable"):
tile classes that record the tile carriers a TiledEvictable makes, and a tile class pair
whose loads wait at a Gate, so a tile operation can be held pending."""

from __future__ import annotations

import strideweave as sw
from conformance.interop_movement.movement import Gate, carrier_pair, gated_copy
from strideweave.carriers.move import registered_move_operation
from strideweave.carriers.tiled_evictable import TiledEvictable


def recording_classes() -> tuple[type[sw.Carrier], type[sw.Carrier], list, list]:
    """Fresh fast (CPU) and slow (FileBacked) subclasses whose new_like() records each
    carrier it makes: (Fast, Slow, fast tiles, slow tiles)."""
    fast_tiles: list[sw.Carrier] = []
    slow_tiles: list[sw.Carrier] = []

    class Fast(sw.CPU):
        def new_like(self):
            made = Fast(self.dtype)
            fast_tiles.append(made)
            return made

    class Slow(sw.FileBacked):
        def new_like(self):
            made = Slow(self.dtype)
            slow_tiles.append(made)
            return made

    return Fast, Slow, fast_tiles, slow_tiles


def gated_tiled(
    n: int = 10, tile_slots: int = 4, error: BaseException | None = None, **options
) -> tuple[TiledEvictable, Gate]:
    """A TiledEvictable of n Int32 values 100, 101, ... whose tile loads (slow -> fast)
    wait at the returned gate (then raise ``error`` when given)."""
    gate = Gate()
    slow, fast = carrier_pair()
    with registered_move_operation(slow, fast, gated_copy(gate, error)):
        tiled = TiledEvictable(
            sw.Int32,
            n,
            tile_slots,
            fast_class=fast,
            slow_class=slow,
            values=[100 + i for i in range(n)],
            **options,
        )
    return tiled, gate


def state(tiled: TiledEvictable) -> tuple:
    """What a failed or refused tile operation must leave unchanged."""
    return (tiled.version, tiled.residency, tiled.use_order, tiled.tolist())
