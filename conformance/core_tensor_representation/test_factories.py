"""core-tensor-representation: the friendly factories copy into fresh CPU storage."""

import numpy as np
import pytest

import strideweave as sw
from conformance.sanitizers import skip_unsatisfiable_allocations_under_asan

REQ = "core-tensor-representation/factories-copy-into-fresh-cpu-storage"


@pytest.mark.spec(f"{REQ}/build-a-tensor-from-nested-lists", f"{REQ}#1", f"{REQ}#2", f"{REQ}#3")
def test_build_a_tensor_from_nested_lists():
    values = [[1, 2, 3], [4, 5, 6]]
    t = sw.tensor(values)
    assert t.dtype == sw.Int32
    assert t.shape == (2, 3)
    assert t.layout == sw.Layout((2, 3), (1, 2))
    assert t.offset == 0
    assert type(t.carrier) is sw.CPU
    assert t.carrier.slots == 6 and t.carrier.is_mutable()
    assert t.tolist() == values
    assert sw.tensor((1.5, 2)).tolist() == [1.5, 2.0]


@pytest.mark.spec(f"{REQ}/copy-rather-than-adopt", f"{REQ}#2", f"{REQ}#5")
def test_copy_rather_than_adopt():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = sw.tensor(array)
    array[0, 0] = 100.0
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert t.carrier.pointer() != array.ctypes.data
    nested = [[1, 2], [3, 4]]
    copied = sw.tensor(nested)
    nested[0][0] = 9
    assert copied.tolist() == [[1, 2], [3, 4]]
    again = sw.tensor(copied)
    copied.carrier.write(0, 7)
    assert again.tolist() == [[1, 2], [3, 4]]


@pytest.mark.spec(f"{REQ}/build-filled-tensors", f"{REQ}#1")
def test_build_filled_tensors():
    assert sw.zeros((2, 2)).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert sw.zeros((2, 2)).dtype == sw.Float32
    assert sw.full(3, 7).tolist() == [7, 7, 7]
    assert sw.full(3, 7).dtype == sw.Int32
    assert sw.arange(2, 8, 2).tolist() == [2, 4, 6]
    assert sw.arange(4).tolist() == [0, 1, 2, 3]
    assert sw.arange(1, 0, -0.25).tolist() == [1.0, 0.75, 0.5, 0.25]
    assert sw.arange(3, dtype=sw.Float32).tolist() == [0.0, 1.0, 2.0]
    assert sw.zeros((2, (1, 2)), dtype=sw.Int32).layout == sw.Layout((2, (1, 2)), (1, (2, 2)))
    for t in (sw.zeros(2), sw.full(2, True), sw.arange(2)):
        assert type(t.carrier) is sw.CPU and t.offset == 0 and t.carrier.is_mutable()


@pytest.mark.spec(f"{REQ}#3")
def test_infer_dtypes():
    assert sw.tensor([True, False]).dtype == sw.Bool
    assert sw.tensor([1, 2]).dtype == sw.Int32
    assert sw.tensor([1, 2.0]).dtype == sw.Float32
    assert sw.tensor([]).dtype == sw.Float32
    assert sw.tensor(5).shape == () and sw.tensor(5).tolist() == 5
    assert sw.tensor([1, 2], dtype=sw.Float32).tolist() == [1.0, 2.0]


@pytest.mark.spec(f"{REQ}/reject-ragged-input", f"{REQ}#4")
@pytest.mark.parametrize("values", [[[1, 2], [3]], [[1, 2], 3], [1, [2, 3]]])
def test_reject_ragged_input(values):
    with pytest.raises(ValueError, match="ragged"):
        sw.tensor(values)


@pytest.mark.spec(f"{REQ}#4")
@pytest.mark.parametrize(
    ("values", "dtype", "error"),
    [([1.5], sw.Int32, TypeError), ([2**40], sw.Int32, ValueError), (["x"], None, TypeError)],
)
def test_reject_unrepresentable_values(values, dtype, error):
    with pytest.raises(error):
        sw.tensor(values, dtype=dtype)


@pytest.mark.spec(f"{REQ}#5")
def test_no_factory_adopts_foreign_memory():
    public = {name for name in dir(sw) if not name.startswith("_")}
    assert not any("dlpack" in name.lower() or "frombuffer" in name.lower() for name in public)
    assert not hasattr(sw.Tensor, "from_dlpack")


INF = float("inf")
NAN = float("nan")


@pytest.mark.spec(f"{REQ}/reject-an-impossible-length", f"{REQ}#7")
@pytest.mark.parametrize(
    ("args", "subject"),
    [
        ((0.0, INF, 1.0), "infinite length"),
        ((0.0, -INF, 1.0), "infinite length"),
        ((0.0, 1.0, NAN), "cannot compute the length"),
        ((NAN, 1.0, 1.0), "cannot compute the length"),
        ((0, 1e30, 1e-30), "maximum allowed size"),
        ((0, 2**63 - 1), "9223372036854775807 elements of Int32"),
        ((-(2**63), 2**63 - 1), "18446744073709551615 elements of Int32"),
    ],
)
def test_reject_an_impossible_arange(args, subject):
    """As NumPy: ValueError, never an empty tensor or a raw C++ message."""
    with pytest.raises(ValueError) as info:
        sw.arange(*args)
    assert subject in str(info.value)
    assert "std::" not in str(info.value) and "vector" not in str(info.value)


@pytest.mark.spec(f"{REQ}#7")
def test_arange_counts_exactly_at_the_int64_extremes():
    assert sw.arange(-(2**31), 2**31 - 1, 2**30).tolist() == [-(2**31), -(2**30), 0, 2**30]
    assert sw.arange(2**31 - 1, -(2**31), -(2**32 - 1)).tolist() == [2**31 - 1]
    assert sw.arange(0, 5, 2**63 - 1).tolist() == [0]


@pytest.mark.spec(f"{REQ}/reject-an-impossible-length", f"{REQ}#7")
@pytest.mark.parametrize(
    ("make", "subject"),
    [
        (lambda: sw.zeros(2**62), "4611686018427387904 elements of Float32"),
        (lambda: sw.zeros((2**31, 2**31), sw.Int32), "4611686018427387904 elements of Int32"),
    ],
)
def test_reject_a_factory_beyond_the_largest_buffer(make, subject):
    with pytest.raises(ValueError) as info:
        make()
    assert subject in str(info.value)


@pytest.mark.spec(f"{REQ}#7")
def test_a_factory_that_cannot_allocate_raises_memory_error():
    """2**62 Bool bytes are addressable but cannot be allocated: MemoryError naming the count."""
    with pytest.raises(MemoryError) as info:
        sw.full(2**62, True)
    assert "4611686018427387904" in str(info.value)
    assert "std::" not in str(info.value)


def nested_lists(levels: int):
    values = 1
    for _ in range(levels):
        values = [values]
    return values


@pytest.mark.spec(f"{REQ}/reject-values-nested-too-deep", f"{REQ}#6")
@pytest.mark.parametrize("levels", [65, 100_000])
def test_reject_values_nested_too_deep(levels):
    with pytest.raises(ValueError, match="deeper than the limit of 64 levels"):
        sw.tensor(nested_lists(levels))


@pytest.mark.spec(f"{REQ}#6")
def test_values_nested_64_levels_deep_are_read():
    t = sw.tensor(nested_lists(64))
    assert t.shape == (1,) * 64
    assert t.tolist() == nested_lists(64)


@pytest.mark.spec(f"{REQ}#1")
def test_a_list_mutated_by_an_item_index_is_read_from_a_copy():
    """An item's __index__ clearing the list being read cannot make the read go wrong."""
    values = [0, 0, 0]

    class Clearing:
        def __index__(self):
            values.clear()
            return 7

    values[:] = [Clearing(), 1, 2]
    assert sw.tensor(values).tolist() == [7, 1, 2]
    shape = [0, 2]

    class ClearingShape:
        def __index__(self):
            shape.clear()
            return 3

    shape[0] = ClearingShape()
    assert sw.Layout(shape).shape == (3, 2)
    shape[:] = [ClearingShape(), [ClearingShape(), 2]]
    assert sw.zeros(shape).shape == (3, (3, 2))


COMPOUND = sw.compound(re=sw.Float32, im=sw.Float32)


def planar_tensor():
    """A 2x2 multi-subtensor tensor of COMPOUND, one Float32 plane per field."""
    re = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 5.0, 6.0]), sw.Layout((2, 2)))
    im = sw.Tensor(sw.CPU(sw.Float32, values=[3.0, 4.0, 7.0, 8.0]), sw.Layout((2, 2)))
    return sw.Tensor.from_planes(COMPOUND, [re, im])


def record_tensor():
    """A 2x2 tensor of COMPOUND over one carrier of records, at an offset."""
    records = [(0.0, 0.0), (1.0, 3.0), (2.0, 4.0), (5.0, 7.0), (6.0, 8.0)]
    return sw.Tensor(sw.Generic(COMPOUND, values=records), sw.Layout((2, 2)), 1)


@pytest.mark.spec(f"{REQ}#8")
@pytest.mark.parametrize("make", [planar_tensor, record_tensor], ids=["planar", "records"])
def test_a_compound_tensor_copies_with_its_dtype_shape_and_records(make):
    source = make()
    expected = [[(1.0, 3.0), (5.0, 7.0)], [(2.0, 4.0), (6.0, 8.0)]]
    assert source.tolist() == expected
    copied = sw.tensor(source)
    assert copied.dtype == COMPOUND
    assert copied.shape == (2, 2)
    assert copied.tolist() == expected
    assert not copied.is_multi_subtensor
    assert type(copied.carrier) is sw.CPU and copied.layout == sw.Layout((2, 2), (1, 2))
    assert sw.tensor(source, dtype=COMPOUND).tolist() == expected
    with pytest.raises(TypeError, match=r"compound\(re=Float32, im=Float32\).*Float32"):
        sw.tensor(source, dtype=sw.Float32)
    assert source.tolist() == expected  # the source is untouched


@pytest.mark.spec(f"{REQ}#8")
def test_an_empty_compound_tensor_keeps_its_shape():
    empty = sw.Tensor(sw.CPU(COMPOUND, 0), sw.Layout((0, 3)))
    copied = sw.tensor(empty)
    assert copied.dtype == COMPOUND and copied.shape == (0, 3) and copied.tolist() == []


@skip_unsatisfiable_allocations_under_asan
def test_an_operation_that_cannot_gather_its_operand_names_itself():
    """A broadcast view of 2**50 elements summed: the gathered operand cannot be
    allocated, and the MemoryError names the operation, the count and the dtype rather
    than std::bad_alloc."""
    huge = sw.tensor([1.0]).broadcast_to((1 << 20, 1 << 20, 1 << 10))
    with pytest.raises(MemoryError) as info:
        huge.sum()
    assert str(info.value) == (
        f"sum: gathering an operand: cannot allocate {1 << 50} items of Float32"
    )
