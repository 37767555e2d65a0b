"""Post-conditions of spec/core-layout for any generated layout, through the binding."""

import math
import pickle
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

COORDINATES = "core-layout/layouts-map-coordinates-to-indices-colexicographically"
MEASURE = "core-layout/size-rank-depth-and-cosize-summarize-a-layout"
LEAVES = "core-layout/leaf-modes-flatten-the-shape-tree-in-order"
INJECTIVE = "core-layout/injectivity-is-decided-exactly"
CANONICAL = "core-layout/the-canonical-injective-layout-is-compact-column-major"
COMPOSE = "core-layout/composition-follows-cute-and-refuses-inadmissible-operands"
COMPLEMENT = "core-layout/complement-fills-the-gaps-of-a-layouts-image"
TILE = "core-layout/divide-and-product-tile-one-layout-by-another"
IDENTITY = "core-layout/layouts-print-in-cute-notation-and-compare-by-value"


@pytest.mark.spec(MEASURE, f"{MEASURE}#4")
@given(S.layouts())
def test_cosize_and_size_match_brute_force(layout):
    indices = S.all_indices(layout)
    assert layout.size == len(indices) == S.shape_size(layout.shape)
    assert layout.cosize == (max(indices) + 1 if indices else 0)


@pytest.mark.spec(INJECTIVE, f"{INJECTIVE}#1")
@given(S.layouts())
def test_is_injective_matches_brute_force(layout):
    indices = S.all_indices(layout)
    assert layout.is_injective() == (len(set(indices)) == len(indices))


@pytest.mark.spec(f"{LEAVES}/agree-with-the-coordinate-map", f"{LEAVES}#1", f"{LEAVES}#2")
@pytest.mark.spec(
    f"{COORDINATES}#1",
    f"{COORDINATES}#2",
    f"{COORDINATES}#3",
    f"{COORDINATES}/map-a-mixed-coordinate",
)
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


@pytest.mark.spec(COMPOSE, f"{COMPOSE}#1", f"{COMPOSE}#2", f"{COMPOSE}#3")
@given(S.pow2_layouts(), S.pow2_layouts())
def test_admissible_composition_is_function_composition(a, b):
    check_composition(a, b, sw.composition(a, b))


@pytest.mark.spec(COMPOSE, f"{COMPOSE}#1", f"{COMPOSE}#4")
@given(S.layouts(), S.layouts())
def test_any_composition_is_correct_or_refused(a, b):
    try:
        r = sw.composition(a, b)
    except ValueError as e:
        assert "divisibility condition fails at mode" in str(e)
    else:
        check_composition(a, b, r)


@pytest.mark.spec(COMPLEMENT, f"{COMPLEMENT}#2")
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


@pytest.mark.spec(TILE, f"{TILE}#1")
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


@pytest.mark.spec(f"{MEASURE}#4")
@given(S.layouts())
def test_cosize_is_one_past_the_sum_over_leaf_modes(layout):
    """Generated strides are non-negative: the greatest index is the sum of (extent-1)*stride."""
    if layout.size == 0:
        assert layout.cosize == 0
    else:
        assert layout.cosize == 1 + sum((e - 1) * d for e, d in layout.leaf_modes)


def _congruent(coord, shape) -> bool:
    if isinstance(shape, int):
        return isinstance(coord, int) and not isinstance(coord, bool)
    return (
        isinstance(coord, tuple)
        and len(coord) == len(shape)
        and all(_congruent(c, s) for c, s in zip(coord, shape, strict=True))
    )


@pytest.mark.spec(f"{COORDINATES}#7")
@given(S.shapes())
def test_idx2crd_inverts_the_flat_index_decomposition(shape):
    extents = S.flatten(shape)
    layout = sw.Layout(shape)
    for i in range(S.shape_size(shape)):
        coord = sw.idx2crd(i, shape)
        assert _congruent(coord, shape), (i, coord)
        assert S.flatten(coord) == S.colex_coordinate(i, extents)
        assert S.collapse(coord, shape) == i
        assert layout.idx2crd(i) == coord


@pytest.mark.spec(f"{CANONICAL}#1", f"{CANONICAL}#2")
@given(S.shapes())
def test_compact_col_major_strides_are_prefix_products(shape):
    layout = sw.compact_col_major(shape)
    assert layout.shape == shape
    extents = S.flatten(shape)
    assert [d for _, d in layout.leaf_modes] == [
        math.prod(extents[:k]) for k in range(len(extents))
    ]
    assert layout.cosize == layout.size


@pytest.mark.spec(f"{COMPOSE}#3")
@given(S.pow2_layouts(), S.pow2_layouts())
def test_composition_with_a_tuple_distributes_over_its_modes(a, b):
    r = sw.composition(a, b)
    if isinstance(b.shape, tuple):
        assert isinstance(r.shape, tuple) and r.rank == b.rank
        for k in range(b.rank):
            assert r.mode(k) == sw.composition(a, b.mode(k)), k


def reference_complement(layout: sw.Layout, cotarget: int) -> sw.Layout | None:
    """CuTe's complement: the modes of extent > 1 and stride > 0 sorted by stride, each gap
    before a mode filled by a mode, then a last mode reaching the cotarget rounded up (None
    when a sorted mode overlaps or its stride does not divide: no complement)."""
    modes = sorted((d, e) for e, d in layout.leaf_modes if e > 1 and d > 0)
    shape, stride = [], [1]
    for d, e in modes:
        if d % stride[-1] != 0:
            return None
        shape.append(d // stride[-1])
        stride.append(d * e)
    shape.append(-(-max(cotarget, 1) // stride[-1]))
    return sw.coalesce(sw.Layout(tuple(shape), tuple(stride)))


@pytest.mark.spec(f"{COMPLEMENT}#1", f"{COMPLEMENT}#4")
@given(
    st.one_of(S.complementable_layouts(), S.layouts().filter(lambda layout: layout.size > 0)),
    st.integers(1, 2 * S.MAX_SIZE),
)
def test_complement_is_cutes_construction_or_refused(layout, cotarget):
    """For layouts of positive size and a positive cotarget (the spec sentence fixes
    neither an empty layout's complement nor a zero cotarget's last mode)."""
    expected = reference_complement(layout, cotarget)
    if expected is not None:
        assert sw.complement(layout, cotarget) == expected
        return
    with pytest.raises(ValueError) as info:
        sw.complement(layout, cotarget)
    named = re.search(
        r"mode (\d+):(\d+) overlaps or does not divide the span (\d+)", str(info.value)
    )
    assert named, str(info.value)
    extent, stride, span = map(int, named.groups())
    assert extent > 1 and stride > 0 and stride % span != 0
    assert stride in {d for e, d in layout.leaf_modes if e > 1}


@pytest.mark.spec(f"{COMPLEMENT}#5")
@given(S.complementable_layouts(), st.integers(-(2**40), -1))
def test_complement_refuses_a_negative_cotarget(layout, cotarget):
    with pytest.raises(ValueError, match=f"cotarget {cotarget}"):
        sw.complement(layout, cotarget)


def _modes_layout(modes: list[sw.Layout]) -> sw.Layout:
    return sw.Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


# Layouts with a tuple shape (one mode or more), for tilers given mode by mode.
TUPLE_LAYOUTS = S.pow2_layouts().filter(lambda a: isinstance(a.shape, tuple) and a.rank > 0)


@st.composite
def tuple_tilers(draw, a: sw.Layout) -> tuple[sw.Layout, ...]:
    """A tuple of at most rank(a) complementable layouts, one per leading mode of ``a``."""
    return tuple(draw(st.lists(S.complementable_layouts(), min_size=1, max_size=a.rank)))


@pytest.mark.spec(f"{TILE}#1")
@given(TUPLE_LAYOUTS, st.data())
def test_logical_divide_by_a_tuple_divides_mode_by_mode(a, data):
    tiler = data.draw(tuple_tilers(a))
    try:
        divided = sw.logical_divide(a, tiler)
    except ValueError:
        with pytest.raises(ValueError):
            for k, t in enumerate(tiler):
                sw.logical_divide(a.mode(k), t)
        return
    modes = [sw.logical_divide(a.mode(k), t) for k, t in enumerate(tiler)]
    modes += [a.mode(k) for k in range(len(tiler), a.rank)]
    assert divided == _modes_layout(modes)


@pytest.mark.spec(f"{TILE}#2")
@given(TUPLE_LAYOUTS, st.data())
def test_zipped_divide_regroups_tiles_and_rests(a, data):
    tiler = data.draw(tuple_tilers(a))
    try:
        divided = sw.logical_divide(a, tiler)
    except ValueError:
        with pytest.raises(ValueError):
            sw.zipped_divide(a, tiler)
        return
    tiles = [divided.mode(k).mode(0) for k in range(len(tiler))]
    rests = [divided.mode(k).mode(1) for k in range(len(tiler))]
    rests += [divided.mode(k) for k in range(len(tiler), a.rank)]
    assert sw.zipped_divide(a, tiler) == _modes_layout([_modes_layout(tiles), _modes_layout(rests)])


@pytest.mark.spec(f"{TILE}#3")
@given(S.complementable_layouts(), S.pow2_layouts())
def test_logical_product_is_its_definition(a, b):
    try:
        rest = sw.composition(sw.complement(a, a.size * b.cosize), b)
    except ValueError:
        with pytest.raises(ValueError):
            sw.logical_product(a, b)
        return
    assert sw.logical_product(a, b) == _modes_layout([a, rest])


def cute_notation(t) -> str:
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(cute_notation(x) for x in t) + ")"


@pytest.mark.spec(f"{IDENTITY}#1")
@given(S.layouts())
def test_repr_is_shape_colon_stride_in_cute_notation(layout):
    assert repr(layout) == f"{cute_notation(layout.shape)}:{cute_notation(layout.stride)}"


@pytest.mark.spec(f"{IDENTITY}#2")
@given(S.layouts(), S.layouts(), st.booleans())
def test_layouts_are_equal_exactly_when_their_trees_are(a, b, twin):
    if twin:
        b = sw.Layout(a.shape, a.stride)
    same = a.shape == b.shape and a.stride == b.stride
    assert (a == b) == same and (a != b) == (not same)
    if same:
        assert hash(a) == hash(b)
        assert {a: "a"}[b] == "a"
    else:
        assert b not in {a: "a"}
