"""Post-conditions of spec/core-tensor-representation for any generated tensor."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

TOLIST = "core-tensor-representation/tolist-reads-logical-values-through-any-layout"
VIEWS = "core-tensor-representation/views-share-their-carrier"
FACTORIES = "core-tensor-representation/factories-copy-into-fresh-cpu-storage"

ANY_SCALAR = st.sampled_from([sw.Bool, sw.Int32, sw.Float32, sw.Floating, sw.Any])
RECORDS = st.just(sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool))


def leaf_extents(t: sw.Tensor) -> list[int]:
    return [e for e, _ in t.layout.leaf_modes]


def element(nested, coordinate: list[int]):
    for c in coordinate:
        nested = nested[c]
    return nested


@pytest.mark.spec(f"{TOLIST}#1", f"{TOLIST}#2", f"{TOLIST}#4")
@given(S.tensors(dtypes=ANY_SCALAR | RECORDS, carrier_classes=st.just(sw.Generic)) | S.tensors())
def test_tolist_reads_every_element_through_the_layout(t):
    """Element [i0][i1]... of tolist() is the slot offset + layout(i) for flat index i."""
    version = t.carrier.version
    values = t.tolist()
    extents = leaf_extents(t)
    if isinstance(t.shape, int):
        assert isinstance(values, list) and len(values) == t.layout.size
    for i in range(t.layout.size):
        coordinate = S.colex_coordinate(i, extents)
        expected = t.carrier.read(t.offset + t.layout(i))
        if isinstance(t.shape, int):
            assert values[i] == expected
        else:
            assert element(values, coordinate) == expected
    assert t.carrier.version == version


@pytest.mark.spec(f"{VIEWS}#1", f"{VIEWS}#3")
@given(S.tensors(layouts=S.layouts(extents=st.integers(1, 4))), st.data())
def test_an_integer_index_selects_the_first_leaf_of_an_integral_mode(t, data):
    """t[i] of an integral first mode reads tolist()[i] over the same carrier."""
    shape = t.layout.shape
    assume(isinstance(shape, int) or (len(shape) > 0 and isinstance(shape[0], int)))
    first = shape if isinstance(shape, int) else shape[0]
    i = data.draw(st.integers(0, first - 1))
    view = t[i]
    assert view.carrier is t.carrier
    assert view.tolist() == t.tolist()[i]


@pytest.mark.spec(f"{VIEWS}#1", f"{VIEWS}#5")
@given(S.tensors(), st.integers(0, 3))
def test_broadcasting_a_new_mode_repeats_every_element(t, extent):
    """Broadcasting to (shape..., extent) adds a stride-0 mode: every element repeats."""
    shape = t.shape if isinstance(t.shape, tuple) else (t.shape,)
    view = t.broadcast_to((*shape, extent))
    assert view.carrier is t.carrier
    assert view.layout.leaf_modes == [*t.layout.leaf_modes, (extent, 0)]
    base = t.tolist()
    wide = view.tolist()
    for i in range(math.prod(leaf_extents(t))):
        coordinate = S.colex_coordinate(i, leaf_extents(t))
        expected = element(base, coordinate) if isinstance(t.shape, tuple) else base[i]
        for k in range(extent):
            assert element(wide, [*coordinate, k]) == expected


@pytest.mark.spec(f"{FACTORIES}#1", f"{FACTORIES}#2")
@given(S.tensors(dtypes=S.concrete_dtypes()))
def test_tensor_of_tolist_copies_the_values_compactly(t):
    """sw.tensor(t) copies t's values into a fresh compact CPU tensor of the same leaf shape."""
    copy = sw.tensor(t)
    assert type(copy.carrier) is sw.CPU and copy.carrier is not t.carrier
    assert copy.tolist() == t.tolist()
    if copy.layout.size:
        assert copy.layout.cosize == copy.layout.size


@pytest.mark.spec(f"{VIEWS}#6", f"{VIEWS}/slice-like-a-python-sequence")
@given(
    S.tensors(layouts=S.layouts(extents=st.integers(0, 6))),
    S.slice_bounds(),
    S.slice_bounds(),
    S.slice_steps(),
)
def test_a_slice_selects_what_a_python_list_slice_selects(t, start, stop, step):
    """Slicing the first integral mode agrees with slicing its list of positions in Python."""
    shape = t.layout.shape
    assume(isinstance(shape, int) or (len(shape) > 0 and isinstance(shape[0], int)))
    extent = shape if isinstance(shape, int) else shape[0]
    key = slice(start, stop, step)
    view = t[key]
    expected = t.tolist()[key] if isinstance(shape, int) else list(range(extent))[key]
    if isinstance(shape, int):
        assert view.tolist() == expected
    else:
        rows = t.tolist()
        assert view.tolist() == [rows[i] for i in expected]
    assert view.carrier is t.carrier


@pytest.mark.spec(f"{VIEWS}#6")
@given(S.tensors(layouts=S.layouts(extents=st.integers(1, 6))), st.data())
def test_a_negative_integer_counts_from_the_end(t, data):
    shape = t.layout.shape
    assume(isinstance(shape, int) or (len(shape) > 0 and isinstance(shape[0], int)))
    extent = shape if isinstance(shape, int) else shape[0]
    i = data.draw(st.integers(-extent, -1))
    assert t[i].tolist() == t.tolist()[i]
