"""carrier-storage: range entry points and bulk reads through the span walker."""

import numpy as np
import pytest

import strideweave as sw

RANGE = "carrier-storage/range-entry-points-read-and-write-consecutive-slots"
BULK = "carrier-storage/bulk-reads-take-one-snapshot-through-the-span-walker"

BUILTINS = [sw.CPU, sw.Generic]
RECORD = sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool)


def state(c):
    """Everything a failed call must leave unchanged."""
    return (c.tolist(), c.version, c.is_released, c.owner, c.slots)


@pytest.mark.spec(f"{RANGE}/write-and-read-a-range", f"{RANGE}#1", f"{RANGE}#8")
@pytest.mark.parametrize("cls", BUILTINS)
def test_write_and_read_a_range(cls):
    c = cls(sw.Float32, 6)
    assert c.write_range(1, [1.5, 2, 3]) is None
    assert c.read_range(0, 6) == [0.0, 1.5, 2.0, 3.0, 0.0, 0.0]
    assert c.version == 1
    assert c.read_range(2, 2) == [2.0, 3.0] and c.version == 1


@pytest.mark.spec(f"{RANGE}#1")
@pytest.mark.parametrize(
    ("cls", "dtype", "values"),
    [
        (sw.CPU, sw.Bool, [True, False, True]),
        (sw.CPU, sw.Int32, [-(2**31), 0, 2**31 - 1]),
        (sw.CPU, RECORD, [(0.5, 1, True), (1.5, -2, False), (2.0, 3, True)]),
        (sw.Generic, RECORD, [(0.5, 1, True), (1.5, -2, False), (2.0, 3, True)]),
        (sw.Generic, sw.Floating, [0.1, 2.0, 3.0]),
        (sw.Generic, sw.Any, [True, 7, 2.5]),
    ],
)
def test_ranges_return_what_read_returns(cls, dtype, values):
    c = cls(dtype, 4)
    c.write_range(1, values)
    assert c.read_range(1, 3) == [c.read(i) for i in (1, 2, 3)] == values
    assert c.read_range(0, 4) == c.tolist()


@pytest.mark.spec(f"{RANGE}#1")
def test_a_float32_range_rounds_to_single_precision():
    c = sw.CPU(sw.Float32, 1)
    c.write_range(0, [0.1])
    assert c.read_range(0, 1) == [float(np.float32(0.1))]


@pytest.mark.spec(f"{RANGE}#8")
@pytest.mark.parametrize("cls", BUILTINS)
def test_an_empty_write_range_still_counts_once(cls):
    c = cls(sw.Int32, 3)
    c.write_range(3, [])
    assert c.version == 1
    c.write_range(0, np.zeros(0, dtype=np.int32))
    assert c.version == 2
    assert c.read_range(3, 0) == [] and c.version == 2


@pytest.mark.spec(f"{RANGE}/copy-through-numpy-buffers", f"{RANGE}#2", f"{RANGE}#4")
@pytest.mark.parametrize("cls", BUILTINS)
def test_copy_through_numpy_buffers(cls):
    c = cls(sw.Float32, 5)
    source = np.array([1.0, 2.5, -3.0], dtype=np.float32)
    c.write_range(1, source)
    out = np.full(3, 9.0, dtype=np.float32)
    assert c.read_range(1, 3, out=out) is out
    assert out.tolist() == [1.0, 2.5, -3.0]
    source[:] = 7.0
    assert c.tolist() == [0.0, 1.0, 2.5, -3.0, 0.0]
    out[:] = 0.0
    assert c.tolist() == [0.0, 1.0, 2.5, -3.0, 0.0]


@pytest.mark.spec(f"{RANGE}#2", f"{RANGE}#3")
def test_buffers_of_every_native_format():
    b = sw.CPU(sw.Bool, 3)
    b.write_range(0, np.array([True, False, True]))
    assert b.tolist() == [True, False, True]
    i = sw.CPU(sw.Int32, 2)
    i.write_range(0, np.array([5, -6], dtype=np.int32))
    raw = bytearray(8)
    i.read_range(0, 2, out=raw)
    assert np.frombuffer(raw, dtype=np.int32).tolist() == [5, -6]
    i.write_range(0, memoryview(np.array([1, 2], dtype=np.int32).tobytes()))
    assert i.tolist() == [1, 2]
    packed = np.dtype([("x", "<f4"), ("n", "<i4"), ("b", "?")])
    r = sw.CPU(RECORD, 2)
    r.write_range(0, np.array([(0.5, 1, True), (1.5, -2, False)], dtype=packed))
    assert r.tolist() == [(0.5, 1, True), (1.5, -2, False)]
    out = np.zeros(2, dtype=packed)
    r.read_range(0, 2, out=out)
    assert out.tolist() == [(0.5, 1, True), (1.5, -2, False)]


@pytest.mark.spec(f"{RANGE}#2")
def test_generic_of_an_abstract_dtype_iterates_a_buffer():
    g = sw.Generic(sw.Floating, 2)
    g.write_range(0, np.array([0.1, 0.2]))
    assert g.tolist() == [0.1, 0.2]


@pytest.mark.spec(f"{RANGE}#3")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize(
    ("call", "subject"),
    [
        (lambda c: c.write_range(0, np.zeros(2, dtype=np.float64)), "format 'd'"),
        (lambda c: c.write_range(0, np.zeros((2, 2), dtype=np.float32).T), "C-contiguous"),
        (lambda c: c.read_range(0, 2, out=np.zeros(2, dtype=np.int32)), "format 'i'"),
        (lambda c: c.read_range(0, 2, out=bytes(8)), "writable"),
        (lambda c: c.read_range(0, 2, out=[0.0, 0.0]), "buffer"),
    ],
)
def test_refuse_a_buffer_of_another_format(cls, call, subject):
    c = cls(sw.Float32, values=[1.0, 2.0, 3.0, 4.0])
    before = state(c)
    with pytest.raises(TypeError) as info:
        call(c)
    assert subject in str(info.value)
    assert state(c) == before


@pytest.mark.spec(f"{RANGE}#3")
def test_refuse_out_for_a_dtype_without_an_item_size():
    g = sw.Generic(sw.Any, values=[1, 2.5])
    with pytest.raises(TypeError) as info:
        g.read_range(0, 2, out=bytearray(16))
    assert "Generic carrier" in str(info.value) and "Any" in str(info.value)
    assert g.tolist() == [1, 2.5] and g.version == 0


@pytest.mark.spec(f"{RANGE}#9")
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_an_out_or_a_buffer_of_the_wrong_length(cls):
    c = cls(sw.Int32, values=[1, 2, 3])
    out = np.zeros(2, dtype=np.int32)
    with pytest.raises(ValueError, match="3 items"):
        c.read_range(0, 3, out=out)
    assert out.tolist() == [0, 0]
    with pytest.raises(ValueError, match="whole number"):
        c.write_range(0, b"\x01\x00\x00\x00\x02")
    assert c.tolist() == [1, 2, 3] and c.version == 0


@pytest.mark.spec(f"{RANGE}/refuse-a-range-out-of-bounds", f"{RANGE}#5")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.read_range(4, 3),
        lambda c: c.write_range(4, [1, 2, 3]),
        lambda c: c.write_range(4, np.array([1, 2, 3], dtype=np.int32)),
        lambda c: c.read_range(-1, 1),
        lambda c: c.read_range(7, 0),
    ],
)
def test_refuse_a_range_out_of_bounds(cls, call):
    c = cls(sw.Int32, values=[1, 2, 3, 4, 5, 6])
    before = state(c)
    with pytest.raises(IndexError) as info:
        call(c)
    message = str(info.value)
    assert "6 slots" in message and cls.carrier_class.name in message
    assert "[4, 4 + 3)" in message or "[-1" in message or "[7" in message
    assert state(c) == before


@pytest.mark.spec(f"{RANGE}#5")
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_a_negative_count(cls):
    c = cls(sw.Int32, 2)
    with pytest.raises(ValueError, match="count -1"):
        c.read_range(0, -1)
    assert c.version == 0


@pytest.mark.spec(f"{RANGE}/refuse-values-without-changing-a-slot", f"{RANGE}#7")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize(
    ("dtype", "values", "error", "subject"),
    [
        (sw.Int32, [1, 2, 2.5], TypeError, "2.5"),
        (sw.Int32, [1, 2, 2**40], ValueError, str(2**40)),
        (sw.Float32, [1.0, True], TypeError, "True"),
        (sw.Bool, np.array([1, 0, 2], dtype=np.uint8), ValueError, "item 2"),
        (sw.Int32, "123", TypeError, "iterable"),
        (sw.Int32, [1, "x"], TypeError, "'x'"),
    ],
)
def test_refuse_values_without_changing_a_slot(cls, dtype, values, error, subject):
    c = cls(dtype, 3)
    before = state(c)
    with pytest.raises(error) as info:
        c.write_range(0, values)
    assert subject in str(info.value)
    assert state(c) == before


@pytest.mark.spec(f"{RANGE}#6")
@pytest.mark.parametrize("cls", BUILTINS)
def test_ranges_of_a_released_carrier_fail(cls):
    c = cls(sw.Int32, 2)
    c.release()
    for call in (lambda: c.read_range(0, 0), lambda: c.write_range(0, [])):
        with pytest.raises(RuntimeError) as info:
            call()
        assert "released" in str(info.value) and cls.carrier_class.name in str(info.value)
    assert c.is_released and c.version == 0


@pytest.mark.spec(f"{RANGE}#6")
@pytest.mark.parametrize("cls", BUILTINS)
def test_write_range_refuses_a_carrier_that_is_not_publicly_mutable(cls):
    frozen = cls(sw.Int32, values=[1, 2], mutable=False)
    with pytest.raises(RuntimeError) as info:
        frozen.write_range(0, [3])
    assert "constructed immutable" in str(info.value)
    assert frozen.tolist() == [1, 2] and frozen.version == 0
    owner, owned = sw.Generic(sw.Int32, 1), cls(sw.Int32, 2)
    owner.take_ownership(owned)
    with pytest.raises(RuntimeError) as info:
        owned.write_range(0, np.array([3], dtype=np.int32))
    assert "owned by" in str(info.value) and "Generic carrier" in str(info.value)
    assert owned.tolist() == [0, 0] and owned.version == 0


@pytest.mark.spec(f"{BULK}#1", f"{BULK}#2")
def test_carrier_tolist_reads_one_range():
    c = sw.CPU(sw.Int32, values=[3, 1, 2])
    assert c.tolist() == c.read_range(0, 3) == [3, 1, 2]
    assert c.version == 0


@pytest.mark.spec(f"{BULK}#4")
@pytest.mark.parametrize(
    "layout",
    [
        sw.Layout((2, 3), (3, 1)),
        sw.Layout((2, (3, 2)), (1, (4, 2))),
        sw.Layout(5, 2),
        sw.Layout(()),
        sw.Layout((0, 3)),
        sw.Layout((2, 3), (0, 1)),
    ],
)
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32, sw.Bool])
def test_tensor_of_a_tensor_is_tensor_of_its_tolist(layout, dtype):
    values = [(k % 2 == 1) if dtype == sw.Bool else k for k in range(max(layout.cosize, 1) + 2)]
    t = sw.Tensor(sw.CPU(dtype, values=values), layout, 1 if layout.size else 0)
    copy, via_list = sw.tensor(t), sw.tensor(t.tolist())
    assert copy.dtype == via_list.dtype
    assert copy.shape == via_list.shape and copy.layout == via_list.layout
    assert copy.tolist() == via_list.tolist() == t.tolist()
    assert copy.carrier is not t.carrier and t.carrier.version == 0
