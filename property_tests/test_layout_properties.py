"""Post-conditions of spec/core-layout for any generated layout, through the binding."""

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from property_tests import strategies as S

COORDINATES = "core-layout/layouts-map-coordinates-to-indices-colexicographically"


@pytest.mark.spec("core-layout/size-rank-depth-and-cosize-summarize-a-layout")
@given(S.layouts())
def test_cosize_and_size_match_brute_force(layout):
    indices = S.all_indices(layout)
    assert layout.size == len(indices) == S.shape_size(layout.shape)
    assert layout.cosize == (max(indices) + 1 if indices else 0)


@pytest.mark.spec("core-layout/injectivity-is-decided-exactly")
@given(S.layouts())
def test_is_injective_matches_brute_force(layout):
    indices = S.all_indices(layout)
    assert layout.is_injective() == (len(set(indices)) == len(indices))


@pytest.mark.spec(
    "core-layout/leaf-modes-flatten-the-shape-tree-in-order/agree-with-the-coordinate-map"
)
@pytest.mark.spec(f"{COORDINATES}#2", f"{COORDINATES}/map-a-mixed-coordinate")
@given(S.layouts(), st.data())
def test_leaf_modes_agree_with_every_coordinate_form(layout, data):
    """Flat index, flat, nested and mixed coordinates (an integer for any tuple mode) agree."""
    modes = layout.leaf_modes
    assert [e for e, _ in modes] == S.flatten(layout.shape)
    assert [d for _, d in modes] == S.flatten(layout.stride)
    for i in range(layout.size):
        flat = S.colex_coordinate(i, [e for e, _ in modes])
        expected = sum(c * d for c, (_, d) in zip(flat, modes, strict=True))
        nested = layout.idx2crd(i)
        assert S.flatten(nested) == flat
        assert layout(i) == layout(nested) == expected
        if isinstance(layout.shape, int) or len(flat) != layout.rank:
            assert layout(tuple(flat)) == expected
        for mixed in S.single_collapses(nested, layout.shape):
            assert layout(mixed) == expected, mixed
    if layout.size > 0:
        i = data.draw(S.coordinates(layout))
        mixed = data.draw(S.mixed_coordinates(layout.idx2crd(i), layout.shape))
        assert layout(mixed) == layout(i)


@pytest.mark.spec("core-layout/the-canonical-injective-layout-is-compact-column-major")
@given(S.shapes())
def test_compact_layout_is_injective_with_cosize_size(shape):
    layout = sw.compact_col_major(shape)
    assert layout == sw.Layout(shape)
    assert layout.is_injective()
    if layout.size > 0:
        assert layout.cosize == layout.size
        assert sorted(S.all_indices(layout)) == list(range(layout.size))


@pytest.mark.spec("core-layout/coalesce-keeps-the-function#1")
@given(S.layouts())
def test_coalesce_keeps_the_function(layout):
    result = sw.coalesce(layout)
    assert result.size == layout.size
    assert result.depth <= 1
    assert S.all_indices(result) == S.all_indices(layout)


def check_composition(a, b, r):
    assert S.compatible(b.shape, r.shape)
    if isinstance(b.shape, int) or S.without_broadcast_modes(b).is_injective():
        for i in range(b.size):
            assert r(i) == S.evaluate_extended(a, b(i))


@pytest.mark.spec("core-layout/composition-follows-cute-and-refuses-inadmissible-operands")
@given(S.pow2_layouts(), S.pow2_layouts())
def test_admissible_composition_is_function_composition(a, b):
    check_composition(a, b, sw.composition(a, b))


@pytest.mark.spec("core-layout/composition-follows-cute-and-refuses-inadmissible-operands")
@given(S.layouts(), S.layouts())
def test_any_composition_is_correct_or_refused(a, b):
    try:
        r = sw.composition(a, b)
    except ValueError as e:
        assert "divisibility condition fails at mode" in str(e)
    else:
        check_composition(a, b, r)


@pytest.mark.spec("core-layout/complement-fills-the-gaps-of-a-layouts-image")
@given(S.complementable_layouts(), st.integers(0, 2 * S.MAX_SIZE))
def test_complement_is_disjoint_ordered_and_bounded(layout, cotarget):
    r = sw.complement(layout, cotarget)
    image = set(S.all_indices(layout))
    assert all(r(i) not in image for i in range(1, r.size))
    strides = [d for _, d in r.leaf_modes]
    assert strides == sorted(set(strides))
    span = max([e * d for e, d in layout.leaf_modes if e > 1 and d > 0], default=1)
    assert r.cosize <= -(-max(cotarget, 1) // span) * span
    together = sw.Layout((layout.shape, r.shape), (layout.stride, r.stride))
    assert together.is_injective()
    assert together.size >= cotarget


@pytest.mark.spec("core-layout/right-inverse-undoes-a-layout-on-its-compact-prefix#1")
@given(S.layouts())
def test_right_inverse_undoes_the_layout(layout):
    r = sw.right_inverse(layout)
    assert sw.coalesce(r) == r
    assert all(layout(r(i)) == i for i in range(r.size))


@pytest.mark.spec("core-layout/divide-and-product-tile-one-layout-by-another")
@given(S.pow2_layouts(), S.complementable_layouts())
def test_logical_divide_is_its_definition(a, b):
    tile = sw.Layout(
        (b.shape, sw.complement(b, a.size).shape), (b.stride, sw.complement(b, a.size).stride)
    )
    try:
        divided = sw.logical_divide(a, b)
    except ValueError:
        with pytest.raises(ValueError):
            sw.composition(a, tile)
    else:
        assert divided == sw.composition(a, tile)


@pytest.mark.spec("core-layout/layouts-print-in-cute-notation-and-compare-by-value")
@given(S.layouts())
def test_repr_equality_hash_and_pickle_agree(layout):
    text = repr(layout)
    assert " " not in text
    shape_text, stride_text = text.split(":")
    twin = sw.Layout(S.parse_int_tuple(shape_text), S.parse_int_tuple(stride_text))
    assert twin == layout and hash(twin) == hash(layout)
    assert pickle.loads(pickle.dumps(layout)) == layout
