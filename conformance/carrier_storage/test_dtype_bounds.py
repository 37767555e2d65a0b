"""carrier-storage: both bounds of every concrete dtype's range, on write and at construction."""

import struct

import pytest

import strideweave as sw

ENTRY = "carrier-storage/entry-points-read-and-write-slots-and-count-mutations"
HOLD = "carrier-storage/a-carrier-holds-slots-of-one-dtype"

FLOAT32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
FLOAT32_MIN_NORMAL = struct.unpack("<f", struct.pack("<I", 0x00800000))[0]
FLOAT32_MIN_SUBNORMAL = struct.unpack("<f", struct.pack("<I", 0x00000001))[0]
ROUNDS_TO_INFINITY = 2.0**128 - 2.0**103  # FLT_MAX plus half an ulp
INF = float("inf")

ACCEPTED = [
    (sw.Int32, -(2**31)),
    (sw.Int32, 2**31 - 1),
    (sw.Float32, FLOAT32_MAX),
    (sw.Float32, -FLOAT32_MAX),
    (sw.Float32, FLOAT32_MIN_NORMAL),
    (sw.Float32, -FLOAT32_MIN_NORMAL),
    (sw.Float32, FLOAT32_MIN_SUBNORMAL),
    (sw.Float32, INF),
    (sw.Float32, -INF),
    (sw.Bool, True),
    (sw.Bool, False),
]

REFUSED = [
    (sw.Int32, -(2**31) - 1, ValueError),
    (sw.Int32, 2**31, ValueError),
    (sw.Float32, ROUNDS_TO_INFINITY, ValueError),
    (sw.Float32, -ROUNDS_TO_INFINITY, ValueError),
    (sw.Bool, 1, TypeError),
    (sw.Bool, 0, TypeError),
]


@pytest.mark.spec(f"{ENTRY}#1", f"{ENTRY}#3", f"{ENTRY}#5")
@pytest.mark.parametrize("cls", [sw.CPU, sw.Generic])
@pytest.mark.parametrize(("dtype", "value"), ACCEPTED)
def test_write_accepts_both_bounds(cls, dtype, value):
    """Each bound is stored exactly and read back unchanged, through write and values=."""
    carrier = cls(dtype, 2)
    carrier.write(1, value)
    assert carrier.read(1) == value and type(carrier.read(1)) is type(value)
    assert carrier.version == 1
    assert cls(dtype, values=[value]).read(0) == value


@pytest.mark.spec(f"{ENTRY}#5")
def test_float32_rounds_to_its_largest_value_below_half_an_ulp():
    carrier = sw.CPU(sw.Float32, 1)
    carrier.write(0, ROUNDS_TO_INFINITY - 2.0**80)
    assert carrier.read(0) == FLOAT32_MAX


@pytest.mark.spec(f"{ENTRY}/keep-the-version-on-a-failed-write", f"{ENTRY}#3", f"{HOLD}#4")
@pytest.mark.parametrize("cls", [sw.CPU, sw.Generic])
@pytest.mark.parametrize(("dtype", "value", "error"), REFUSED)
def test_write_refuses_one_beyond_each_bound(cls, dtype, value, error):
    """One beyond each bound fails naming the value and the dtype, and changes nothing."""
    carrier = cls(dtype, values=[ACCEPTED_BY_DTYPE[dtype]])
    with pytest.raises(error) as info:
        carrier.write(0, value)
    message = str(info.value)
    assert dtype.name in message
    assert (repr(value) if isinstance(value, int) else "out of range") in message
    assert carrier.read(0) == ACCEPTED_BY_DTYPE[dtype]
    assert carrier.version == 0
    with pytest.raises(error):
        cls(dtype, values=[value])


ACCEPTED_BY_DTYPE = {sw.Int32: 2**31 - 1, sw.Float32: FLOAT32_MAX, sw.Bool: True}
