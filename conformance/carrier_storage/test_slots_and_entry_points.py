"""carrier-storage: construction, entry points, versions and tokens."""

import struct

import pytest

import strideweave as sw

HOLD = "carrier-storage/a-carrier-holds-slots-of-one-dtype"
ENTRY = "carrier-storage/entry-points-read-and-write-slots-and-count-mutations"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"
ALLOC = "carrier-storage/an-empty-carrier-can-be-allocated-once"

BUILTINS = [sw.CPU, sw.Generic]


@pytest.mark.spec(f"{HOLD}/allocate-slots-at-construction", f"{HOLD}#1", f"{HOLD}#2")
@pytest.mark.parametrize("cls", BUILTINS)
def test_allocate_slots_at_construction(cls):
    c = cls(sw.Float32, 6)
    assert c.dtype == sw.Float32
    assert c.slots == len(c) == 6
    assert c.tolist() == [0.0] * 6
    assert c.version == 0


@pytest.mark.spec(f"{HOLD}/construct-from-values", f"{HOLD}#2")
@pytest.mark.parametrize("cls", BUILTINS)
def test_construct_from_values(cls):
    c = cls(sw.Int32, values=[3, 1, 2])
    assert c.slots == 3
    assert [c.read(i) for i in range(3)] == [3, 1, 2]
    assert cls(sw.Int32, 3, values=(i for i in [3, 1, 2])).tolist() == [3, 1, 2]


@pytest.mark.spec(f"{HOLD}#2")
@pytest.mark.parametrize("cls", BUILTINS)
def test_construct_empty(cls):
    c = cls(sw.Bool)
    assert c.slots == 0 and c.tolist() == []


@pytest.mark.spec(f"{HOLD}/reject-a-malformed-construction", f"{HOLD}#3", f"{HOLD}#4")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize(
    ("args", "kwargs", "error", "subject"),
    [
        (("float64", 2), {}, TypeError, "dtype"),
        ((None, 2), {}, TypeError, "dtype"),
        ((sw.Int32, -1), {}, ValueError, "n=-1"),
        ((sw.Int32, 2), {"values": [1]}, ValueError, "n=2"),
        ((sw.Int32,), {"values": [1, 2.5]}, TypeError, "2.5"),
    ],
)
def test_reject_a_malformed_construction(cls, args, kwargs, error, subject):
    c = None
    with pytest.raises(error) as info:
        c = cls(*args, **kwargs)
    assert subject in str(info.value)
    assert c is None


@pytest.mark.spec(f"{ENTRY}/count-a-write", f"{ENTRY}#1", f"{ENTRY}#4")
@pytest.mark.parametrize("cls", BUILTINS)
def test_count_a_write(cls):
    c = cls(sw.Int32, 3)
    c.write(1, 42)
    assert c.version == 1
    assert c.read(1) == 42
    c.read(1)
    c.tolist()
    assert c.version == 1
    c.write(1, 42)
    assert c.version == 2


@pytest.mark.spec(f"{ENTRY}/keep-the-version-on-a-failed-write", f"{ENTRY}#2", f"{ENTRY}#3")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize(
    ("dtype", "slot", "value", "error", "subject"),
    [
        (sw.Int32, 3, 1, IndexError, "slot 3"),
        (sw.Int32, -1, 1, IndexError, "slot -1"),
        (sw.Int32, 0, 1.5, TypeError, "1.5"),
        (sw.Int32, 0, True, TypeError, "True"),
        (sw.Int32, 0, 2**31, ValueError, str(2**31)),
        (sw.Int32, 0, "7", TypeError, "'7'"),
        (sw.Float32, 0, False, TypeError, "False"),
        (sw.Bool, 0, 1, TypeError, "1"),
    ],
)
def test_keep_the_version_on_a_failed_write(cls, dtype, slot, value, error, subject):
    c = cls(dtype, 3)
    before = c.tolist()
    with pytest.raises(error) as info:
        c.write(slot, value)
    assert subject in str(info.value)
    assert c.version == 0
    assert c.tolist() == before


@pytest.mark.spec(f"{ENTRY}#2")
def test_read_out_of_range_names_slot_and_capacity():
    with pytest.raises(IndexError) as info:
        sw.CPU(sw.Int32, 3).read(5)
    assert "slot 5" in str(info.value) and "3 slots" in str(info.value)


@pytest.mark.spec(f"{ENTRY}/round-a-float32-value", f"{ENTRY}#5")
@pytest.mark.parametrize("cls", BUILTINS)
def test_round_a_float32_value(cls):
    c = cls(sw.Float32, 1)
    c.write(0, 0.1)
    assert c.read(0) == struct.unpack("f", struct.pack("f", 0.1))[0]
    assert c.read(0) != 0.1


@pytest.mark.spec(f"{TOKENS}/compare-tokens-across-a-write", f"{TOKENS}#1", f"{TOKENS}#2")
def test_compare_tokens_across_a_write():
    c = sw.CPU(sw.Float32, 2)
    first = c.version_token()
    c.read(0)
    second = c.version_token()
    assert first == second
    assert first.is_current() and second.is_current()
    c.write(0, 1.0)
    assert not first.is_current() and not second.is_current()
    assert first != c.version_token()
    assert c.version_token() == c.version_token()


@pytest.mark.spec(f"{TOKENS}/tell-carriers-apart", f"{TOKENS}#2")
def test_tell_carriers_apart():
    a, b = sw.CPU(sw.Float32, 2), sw.CPU(sw.Float32, 2)
    assert a.version == b.version == 0
    assert a.version_token() != b.version_token()


@pytest.mark.spec(f"{TOKENS}#3")
def test_pointer_writes_are_invisible_to_versions():
    import ctypes

    c = sw.CPU(sw.Int32, 2)
    token = c.version_token()
    ctypes.c_int32.from_address(c.pointer() + 4).value = 99
    assert c.read(1) == 99
    assert c.version == 0 and token.is_current()


@pytest.mark.spec(f"{ALLOC}/allocate-an-empty-carrier", f"{ALLOC}#1", f"{ALLOC}#3")
@pytest.mark.parametrize("cls", BUILTINS)
def test_allocate_an_empty_carrier(cls):
    c = cls(sw.Int32)
    c.allocate(4)
    assert c.slots == 4 and c.tolist() == [0, 0, 0, 0]
    assert c.version == 1


@pytest.mark.spec(f"{ALLOC}/refuse-to-reallocate", f"{ALLOC}#2")
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_to_reallocate(cls):
    c = cls(sw.Int32, values=[5, 6])
    with pytest.raises(RuntimeError) as info:
        c.allocate(4)
    assert "already holds 2 slots" in str(info.value)
    assert cls.carrier_class.name in str(info.value)
    assert c.tolist() == [5, 6] and c.version == 0
    empty = cls(sw.Int32)
    with pytest.raises(ValueError, match="-1"):
        empty.allocate(-1)
    assert empty.slots == 0 and empty.version == 0


@pytest.mark.spec(f"{HOLD}/refuse-storage-that-cannot-exist", f"{HOLD}#5")
@pytest.mark.parametrize(
    ("cls", "dtype", "error", "subjects"),
    [
        (sw.CPU, sw.Bool, MemoryError, ("CPU", "4611686018427387904 slots")),
        (sw.Generic, sw.Float32, MemoryError, ("Generic", "4611686018427387904 slots")),
        (sw.CPU, sw.Float32, ValueError, ("CPU", "4611686018427387904 slots of Float32")),
    ],
)
def test_refuse_storage_that_cannot_exist(cls, dtype, error, subjects):
    """No raw C++ message: the error names the class and the slot count."""
    c = None
    with pytest.raises(error) as info:
        c = cls(dtype, 2**62)
    for subject in subjects:
        assert subject in str(info.value)
    assert "std::" not in str(info.value) and "vector" not in str(info.value)
    assert c is None


@pytest.mark.spec(f"{HOLD}#4", f"{HOLD}#5")
@pytest.mark.parametrize("cls", BUILTINS)
def test_allocate_refuses_storage_that_cannot_exist(cls):
    c = cls(sw.Bool)
    with pytest.raises(MemoryError, match=f"{cls.__name__}: cannot allocate"):
        c.allocate(2**62)
    assert c.slots == 0 and c.version == 0


@pytest.mark.spec(f"{HOLD}/reject-a-malformed-construction", f"{HOLD}#3")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize(("n", "error"), [(2**64, ValueError), (True, TypeError), (2.0, TypeError)])
def test_reject_a_slot_count_that_is_not_an_int64(cls, n, error):
    with pytest.raises(error) as info:
        cls(sw.Int32, n)
    assert "slot count n" in str(info.value) and repr(n) in str(info.value)


@pytest.mark.spec(f"{ENTRY}#3")
@pytest.mark.parametrize("cls", BUILTINS)
def test_a_deeply_nested_value_is_refused_without_recursing(cls):
    """A record field that is itself a tuple, however deep, is a TypeError, not a crash."""
    value = 1
    for _ in range(30_000):
        value = (value,)
    with pytest.raises(TypeError, match="not a scalar"):
        cls(sw.compound(x=sw.Int32), values=[value])
    with pytest.raises(TypeError, match="not a scalar"):
        cls(sw.Int32, 1).write(0, value)


class IndexRaised(Exception):
    """Raised by RaisingIndex.__index__."""


class RaisingIndex:
    """An integer-like whose __index__ raises one exception object."""

    def __init__(self) -> None:
        self.error = IndexRaised("__index__ failed")

    def __index__(self) -> int:
        raise self.error


@pytest.mark.spec(f"{ENTRY}#6")
@pytest.mark.parametrize(
    "call",
    [
        lambda c, i: c.read(i),
        lambda c, i: c.write(i, 5),
        lambda c, i: c.read_range(i, 1),
        lambda c, i: c.read_range(0, i),
        lambda c, i: c.write_range(i, [5]),
    ],
    ids=["read", "write", "read_range first", "read_range count", "write_range first"],
)
def test_an_index_hooks_exception_reaches_the_caller(call):
    carrier = sw.CPU(sw.Int32, values=[1, 2, 3])
    index = RaisingIndex()
    with pytest.raises(IndexRaised) as info:
        call(carrier, index)
    assert info.value is index.error
    assert carrier.tolist() == [1, 2, 3] and carrier.version == 0
