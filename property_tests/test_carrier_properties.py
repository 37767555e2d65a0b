"""Post-conditions of spec/carrier-storage's range entry points for any generated carrier."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

RANGE = "carrier-storage/range-entry-points-read-and-write-consecutive-slots"
BULK = "carrier-storage/bulk-reads-take-one-snapshot-through-the-span-walker"
FILE = "carrier-storage/filebacked-stores-slots-in-a-file"

NUMPY = {sw.Bool: np.bool_, sw.Int32: np.int32, sw.Float32: np.float32}


@pytest.mark.spec(f"{RANGE}#1", f"{RANGE}#2", f"{RANGE}#8", f"{FILE}#9")
@given(S.filled_carriers(carrier_classes=S.STORING_CARRIERS), st.data(), st.booleans())
def test_ranges_round_trip_and_count_once(c, data, as_buffer):
    """write_range then read_range returns the values; each write_range counts exactly once."""
    first, count = data.draw(S.slot_ranges(c.slots))
    values = data.draw(S.slot_values(c.dtype, count))
    before = c.tolist()
    version = c.version
    c.write_range(first, np.array(values, dtype=NUMPY[c.dtype]) if as_buffer else values)
    assert c.version == version + 1
    assert c.read_range(first, count) == values
    out = np.zeros(count, dtype=NUMPY[c.dtype])
    assert c.read_range(first, count, out=out) is out and out.tolist() == values
    assert c.tolist() == before[:first] + values + before[first + count :]
    assert c.version == version + 1


@pytest.mark.spec(f"{RANGE}#5", f"{RANGE}#7")
@given(S.filled_carriers(carrier_classes=S.STORING_CARRIERS), st.data())
def test_a_range_past_the_end_changes_nothing(c, data):
    """A range reaching past the last slot fails with IndexError and changes nothing."""
    first = data.draw(st.integers(0, c.slots))
    values = data.draw(S.slot_values(c.dtype, c.slots - first + 1))
    before, version = c.tolist(), c.version
    with pytest.raises(IndexError, match=f"{c.slots} slots"):
        c.write_range(first, values)
    with pytest.raises(IndexError, match=f"{c.slots} slots"):
        c.read_range(first, len(values))
    assert c.tolist() == before and c.version == version


@pytest.mark.spec(f"{BULK}#1", f"{BULK}#4")
@given(S.tensors(dtypes=S.concrete_dtypes()))
def test_tensor_of_a_tensor_copies_every_element(t):
    """sw.tensor(t), one strided copy, holds element i of t at index i of its compact layout."""
    copy = sw.tensor(t)
    assert copy.tolist() == sw.tensor(t.tolist()).tolist()
    assert [e for e, _ in copy.layout.leaf_modes] == [e for e, _ in t.layout.leaf_modes] or (
        t.layout.size == 0
    )
    for i in range(t.layout.size):
        assert copy.carrier.read(copy.layout(i)) == t.carrier.read(t.offset + t.layout(i))
    assert t.carrier.version == 0


@pytest.mark.spec(f"{BULK}#2", f"{BULK}#3", f"{FILE}#1", f"{FILE}#9")
@given(S.tensors(carrier_classes=st.just(sw.FileBacked)))
def test_a_file_backed_tensor_reads_what_cpu_reads(t):
    """The span walker reads a FileBacked carrier (one range call per run) into the same
    values as the same slots on CPU, for any layout and offset; the file holds the slots."""
    values = t.carrier.tolist()
    on_cpu = sw.Tensor(sw.CPU(t.dtype, values=values), t.layout, t.offset)
    assert t.tolist() == on_cpu.tolist()
    assert sw.tensor(t).tolist() == on_cpu.tolist()
    assert np.fromfile(t.carrier.path, NUMPY[t.dtype]).tolist() == values
    assert t.carrier.version == 0


BLOCK = "carrier-storage/blockdevicecarrier-stores-slots-in-aligned-blocks"


@pytest.mark.spec(f"{BLOCK}#1", f"{BLOCK}#6")
@given(S.tensors(carrier_classes=st.just(sw.BlockDeviceCarrier)))
def test_a_block_device_tensor_reads_what_cpu_reads(t):
    """The span walker reads a BlockDeviceCarrier (one range call per run, each cut into
    whole blocks) into the same values as the same slots on CPU, for any layout and
    offset; the file holds the slots from byte 0."""
    values = t.carrier.tolist()
    on_cpu = sw.Tensor(sw.CPU(t.dtype, values=values), t.layout, t.offset)
    assert t.tolist() == on_cpu.tolist()
    assert sw.tensor(t).tolist() == on_cpu.tolist()
    assert np.fromfile(t.carrier.path, NUMPY[t.dtype], count=len(values)).tolist() == values
    assert t.carrier.version == 0


@pytest.mark.spec(f"{BLOCK}#6")
@given(
    st.sampled_from([sw.Int32, sw.Float32, sw.Bool]),
    st.integers(1, 9000),
    st.sampled_from([None, 4096, 8192]),
    st.booleans(),
    st.data(),
)
def test_block_device_writes_at_any_offset_keep_every_other_slot(
    dtype, n, block_size, buffered, data
):
    """Writes of any range, from host memory at any alignment, change exactly their slots:
    partial blocks are read, patched and written back."""
    np_dtype = NUMPY[dtype]
    sw._core._testing.refuse_direct_io(buffered)
    try:
        c = sw.BlockDeviceCarrier(dtype, n, block_size=block_size)
    finally:
        sw._core._testing.refuse_direct_io(False)
    expected = np.zeros(n, np_dtype)
    for _ in range(data.draw(st.integers(1, 4))):
        first = data.draw(st.integers(0, n - 1))
        count = data.draw(st.integers(1, n - first))
        shift = data.draw(st.sampled_from([0, 1, 3, 64]))
        raw = bytearray(count * expected.itemsize + shift)
        chunk = np.frombuffer(raw, np_dtype, count=count, offset=shift)
        chunk[:] = (
            (np.arange(first, first + count) * 7 + 1) % 2
            if dtype == sw.Bool
            else (np.arange(first, first + count) * 7 + 1)
        )
        c.write_range(first, chunk)
        expected[first : first + count] = chunk
        assert np.array_equal(c.read_range(0, n, out=np.empty(n, np_dtype)), expected)
    assert c.path.stat().st_size % c.block_size == 0
