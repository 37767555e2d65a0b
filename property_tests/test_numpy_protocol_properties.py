"""__array__, repr, len and iteration of spec/core-tensor-representation for any tensor."""

import ast
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

ARRAY = "core-tensor-representation/numpy-reads-a-tensor-through-the-array-protocol"
TEXT = "core-tensor-representation/a-tensors-text-shows-its-values-and-its-representation"
LEN = "core-tensor-representation/len-and-iteration-follow-the-first-mode"

RECORD = sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool)
ABSTRACT = st.sampled_from([sw.Floating, sw.Any])
CONCRETE_OR_RECORD = S.concrete_dtypes() | st.just(RECORD)
ANY_TENSOR = S.tensors(dtypes=CONCRETE_OR_RECORD) | S.tensors(
    dtypes=ABSTRACT, carrier_classes=st.just(sw.Generic)
)


def leaf_extents(t: sw.Tensor) -> tuple[int, ...]:
    return tuple(e for e, _ in t.layout.leaf_modes)


def as_array(t: sw.Tensor, **kwargs) -> np.ndarray:
    """np.asarray(t, **kwargs) with every warning an error (NumPy's copy-keyword one too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return np.asarray(t, **kwargs)


def exportable(t: sw.Tensor) -> bool:
    return type(t.carrier) is sw.CPU and t.dtype in (sw.Float32, sw.Int32)


@st.composite
def multi_subtensor_tensors(draw: st.DrawFn) -> sw.Tensor:
    """A multi-subtensor RECORD tensor whose planes share a shape but not a layout or offset."""
    layout = draw(S.layouts())
    same_shape = st.just(layout) | st.builds(sw.Layout, st.just(layout.shape))
    planes = [
        draw(S.tensors(dtypes=st.just(field), layouts=same_shape)) for _, field in RECORD.fields
    ]
    return sw.Tensor.from_planes(RECORD, planes)


@pytest.mark.spec(f"{ARRAY}#1", f"{ARRAY}#2")
@given(ANY_TENSOR | multi_subtensor_tensors(), st.sampled_from([None, True]))
def test_the_array_reads_like_tolist(t, copy):
    """For any layout (holes, stride 0, nesting, offsets), carrier and dtype: same values."""
    carriers = [p.carrier for p in t.planes] if t.is_multi_subtensor else [t.carrier]
    versions = [c.version for c in carriers]
    array = as_array(t, copy=copy)
    base = t.planes[0] if t.is_multi_subtensor else t
    assert array.shape == leaf_extents(base)
    assert array.tolist() == t.tolist()
    assert [c.version for c in carriers] == versions


@pytest.mark.spec(f"{ARRAY}#3", f"{ARRAY}#5")
@given(S.tensors(mutable=st.booleans()))
def test_copy_false_succeeds_exactly_when_export_is_allowed(t):
    """A zero-copy view exists for an exportable tensor, and it aliases the window."""
    if not exportable(t):
        with pytest.raises(ValueError, match="no zero-copy view"):
            as_array(t, copy=False)
        return
    view = as_array(t, copy=False)
    assert view.flags.writeable == t.is_mutable()
    assert as_array(t).__array_interface__ == view.__array_interface__
    if t.layout.size == 0:
        return
    assert view.__array_interface__["data"][0] == t.carrier.pointer() + 4 * t.offset
    if t.is_mutable():
        coordinate = tuple(extent - 1 for extent in view.shape)
        slot = t.offset + t.layout(t.layout.size - 1)
        view[coordinate] = 123
        assert t.carrier.read(slot) == 123


@pytest.mark.spec(f"{ARRAY}#4", f"{ARRAY}#6")
@given(S.tensors(), st.sampled_from([None, np.float64, np.int64]))
def test_copy_true_never_aliases(t, dtype):
    """copy=True (with or without a conversion) gives a new writable array."""
    before = t.tolist()
    copied = as_array(t, copy=True, dtype=dtype)
    assert copied.flags.writeable
    if dtype is not None:
        assert copied.dtype == dtype
    if exportable(t):
        assert not np.shares_memory(copied, as_array(t, copy=False))
    if copied.size:
        first = (0,) * copied.ndim
        copied[first] = not copied[first] if t.dtype == sw.Bool else 77
    assert t.tolist() == before


def _single_precision(dtype: sw.DType, value):
    """``value`` with every Float32 value, record fields included, rounded to float32."""
    if isinstance(value, list):
        return [_single_precision(dtype, v) for v in value]
    if dtype.is_compound:
        return tuple(_single_precision(f, v) for (_, f), v in zip(dtype.fields, value, strict=True))
    return np.float32(value).item() if dtype == sw.Float32 else value


@pytest.mark.spec(f"{TEXT}#2")
@given(ANY_TENSOR)
def test_repr_shows_tolists_values(t):
    """The values part of repr reads back (as Python literals) to tolist()'s values."""
    text = repr(t)
    body = text[len("Tensor(") : text.index(", dtype=")]
    shown = ast.literal_eval(body)
    expected = t.tolist()
    # Float32 values, also as record fields, are shown in single precision.
    assert _single_precision(t.dtype, shown) == _single_precision(t.dtype, expected)
    assert f"layout={t.layout!r}, offset={t.offset}, carrier=" in text


@pytest.mark.spec(f"{LEN}#1", f"{LEN}#2")
@given(ANY_TENSOR)
def test_iteration_walks_the_first_mode(t):
    """len(t) is the first mode's size and t[i] is its colexicographic item i."""
    if t.shape == ():
        with pytest.raises(TypeError):
            len(t)
        return
    first = t.shape if isinstance(t.shape, int) else t.shape[0]
    extents = S.flatten(first)
    assert len(t) == S.shape_size(first)
    values = t.tolist()
    items = list(t)
    assert len(items) == len(t)
    for i, item in enumerate(items):
        nested = values
        for c in S.colex_coordinate(i, extents):
            nested = nested[c]
        assert item.carrier is t.carrier
        assert item.tolist() == nested


SCALAR = "core-tensor-representation/a-one-element-tensor-converts-to-a-python-scalar"
NUMPY = "core-tensor-representation/numpy-is-the-zero-copy-numpy-view"

ONE_ELEMENT = S.layouts(extents=st.just(1))


def size_of(t: sw.Tensor) -> int:
    size = 1
    for extent in leaf_extents(t.planes[0] if t.is_multi_subtensor else t):
        size *= extent
    return size


@pytest.mark.spec(f"{SCALAR}#1", f"{SCALAR}#2", f"{SCALAR}#6")
@given(
    S.tensors(dtypes=CONCRETE_OR_RECORD, layouts=ONE_ELEMENT)
    | S.tensors(dtypes=ABSTRACT, layouts=ONE_ELEMENT, carrier_classes=st.just(sw.Generic))
)
def test_a_one_element_tensor_converts_to_its_value(t):
    """For any nesting of unit modes, any strides and offset, carrier and dtype: item() is
    the one value tolist() holds, and float() and int() convert it as Python does."""
    value = t.tolist()
    while isinstance(value, list):
        value = value[0]
    item = t.item()
    assert item == value and type(item) is type(value)
    if t.dtype.is_compound:
        with pytest.raises(TypeError, match="compound"):
            float(t)
    else:
        assert float(t) == float(value) and int(t) == int(value)
        assert bool(t) == bool(value)
    assert t.carrier.version == 0


@pytest.mark.spec(f"{SCALAR}#3")
@given(ANY_TENSOR | multi_subtensor_tensors())
def test_only_one_element_converts(t):
    """item() succeeds exactly for a tensor of one element, whatever its layout."""
    if size_of(t) == 1:
        assert [t.item()] == np.asarray(t).reshape(-1).tolist()
        return
    with pytest.raises(ValueError, match=f"this tensor has {size_of(t)} elements"):
        t.item()


@pytest.mark.spec(f"{NUMPY}#1", f"{NUMPY}#2")
@given(S.tensors(mutable=st.booleans()))
def test_numpy_is_the_view_exactly_when_one_exists(t):
    """numpy() is np.asarray(t)'s zero-copy view (same address, values and writability)
    for an exportable tensor of any layout, and TypeError naming np.array(t) otherwise."""
    if not exportable(t):
        with pytest.raises(TypeError, match=r"np\.array\(t\)"):
            t.numpy()
        assert t.carrier.version == 0
        return
    view = t.numpy()
    assert view.__array_interface__ == as_array(t).__array_interface__
    assert view.shape == leaf_extents(t) and view.tolist() == t.tolist()
    assert view.flags.writeable == t.is_mutable()
    if t.layout.size:
        assert view.__array_interface__["data"][0] == t.carrier.pointer() + 4 * t.offset
