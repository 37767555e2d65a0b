"""Deliberately broken carriers: each is a PythonStorageCarrier (BytesCarrier) that breaks
one contract of spec/carrier-storage, through its storage methods or through a public
method it overrides. ``test_kit`` runs the kit on each and expects it to fail naming the
clause in ``BROKEN``."""

from __future__ import annotations

import struct
import time

from conformance.carrier_storage.python_carriers import BytesCarrier

ENTRY = "carrier-storage/entry-points-read-and-write-slots-and-count-mutations"
RANGES = "carrier-storage/range-entry-points-read-and-write-consecutive-slots"


class DroppedWrites(BytesCarrier):
    """Stores nothing after construction: a write reads back the old value."""

    def _write_range(self, first, count, data):
        if self.storage is not None and any(self.storage):
            return
        super()._write_range(first, count, data)


class ShiftedReads(BytesCarrier):
    """Reads each range one slot too far: a range off by one."""

    def _read_range(self, first, count, out):
        size = self.dtype.itemsize
        shifted = self.storage[(first + 1) * size : (first + 1 + count) * size]
        out[: len(shifted)] = shifted


class DirtyAllocation(BytesCarrier):
    """Allocates slots holding 1 bytes, not zeros."""

    def _allocate(self, n):
        super()._allocate(n)
        self.storage[:] = b"\x01" * len(self.storage)


class FrozenVersion(BytesCarrier):
    """Reports version 0 whatever was written: a write leaves the version unchanged."""

    @property
    def version(self):
        return 0


class ReleasedTwice(BytesCarrier):
    """Frees its storage on every release(), also the second time, which then fails."""

    def release(self):
        if self.storage is None and self.released:
            raise RuntimeError("ReleasedTwice: the storage was already freed")
        super().release()


class ReadableAfterRelease(BytesCarrier):
    """Answers reads after release with zeros instead of refusing them."""

    def read(self, slot):
        if self.is_released:
            return self.dtype.itemsize and 0
        return super().read(slot)

    def tolist(self):
        if self.is_released:
            return []
        return super().tolist()


class LaxConversion(BytesCarrier):
    """Stores a value of the wrong kind (a float in an Int32 slot, any int in a Bool)."""

    def write(self, slot, value):
        kind = self.dtype.name
        if kind == "Int32" and isinstance(value, float):
            value = int(value)
        elif kind == "Bool" and not isinstance(value, bool):
            value = bool(value)
        elif kind == "Float32" and isinstance(value, (bool, str)):
            value = 0.0
        super().write(slot, value)


class IgnoresPins(BytesCarrier):
    """Writes a pinned carrier's storage directly instead of refusing the write."""

    def write(self, slot, value):
        if self.pinned_by is not None and self.dtype.name == "Int32":
            self.storage[slot * 4 : slot * 4 + 4] = struct.pack("=i", int(value))
            return
        super().write(slot, value)


class UnlockedRanges(BytesCarrier):
    """Writes a range as two writes, letting others run between: a missing lock (readers
    see torn ranges, and each range write counts twice)."""

    def write_range(self, first, values):
        values = list(values) if not isinstance(values, (bytes, bytearray, memoryview)) else values
        if isinstance(values, list) and len(values) > 1:
            half = len(values) // 2
            super().write_range(first, values[:half])
            time.sleep(0.0005)
            super().write_range(first + half, values[half:])
            return
        super().write_range(first, values)


class LenientRanges(BytesCarrier):
    """Reads a range that runs past the last slot, padding it with zeros, instead of
    refusing it with IndexError."""

    def read_range(self, first, count, *, out=None):
        if out is None and first + count > self.slots >= first >= 0:
            inside = super().read_range(first, self.slots - first)
            return inside + [inside[0] * 0 if inside else 0] * (first + count - self.slots)
        return super().read_range(first, count, out=out)


class FullNewLike(BytesCarrier):
    """new_like() returns a carrier already holding as many slots, not an empty one."""

    def new_like(self):
        return type(self)(self.dtype, self.slots)


# Each broken carrier, with the clause the kit must name.
BROKEN = {
    "DroppedWrites": f"{RANGES}#1",
    "ShiftedReads": f"{ENTRY}#1",
    "DirtyAllocation": "carrier-storage/an-empty-carrier-can-be-allocated-once#1",
    "FrozenVersion": f"{ENTRY}#4",
    "ReleasedTwice": "carrier-storage/release-relinquishes-storage-once/release-twice",
    "ReadableAfterRelease": "carrier-storage/release-relinquishes-storage-once#3",
    "LaxConversion": f"{ENTRY}#3",
    "IgnoresPins": "carrier-storage/an-operation-in-progress-can-pin-a-carrier#2",
    "UnlockedRanges": f"{RANGES}#7",
    "LenientRanges": f"{RANGES}#5",
    "FullNewLike": "carrier-storage/new-like-creates-an-empty-carrier-of-the-same-exact-class#1",
}
