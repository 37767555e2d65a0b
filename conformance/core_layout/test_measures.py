"""core-layout: size, rank, depth, cosize, leaf modes and the canonical layout."""

import pytest

import strideweave as sw

MEASURE = "core-layout/size-rank-depth-and-cosize-summarize-a-layout"
LEAVES = "core-layout/leaf-modes-flatten-the-shape-tree-in-order"
CANONICAL = "core-layout/the-canonical-injective-layout-is-compact-column-major"


@pytest.mark.spec(f"{MEASURE}/measure-a-nested-layout")
def test_measure_a_nested_layout():
    layout = sw.Layout((2, (3, 4)), (1, (2, 6)))
    assert (layout.size, layout.rank, layout.depth, layout.cosize) == (24, 2, 2, 24)


@pytest.mark.spec(f"{MEASURE}#1", f"{MEASURE}#2", f"{MEASURE}#3")
def test_integer_and_empty_tuple_shapes():
    assert (sw.Layout(5).size, sw.Layout(5).rank, sw.Layout(5).depth) == (5, 1, 0)
    empty = sw.Layout(())
    assert (empty.size, empty.rank, empty.depth, empty.cosize) == (1, 0, 1, 1)


@pytest.mark.spec(f"{MEASURE}/measure-gapped-and-broadcast-layouts", f"{MEASURE}#4")
def test_measure_gapped_and_broadcast_layouts():
    gapped = sw.Layout((2, 3), (1, 4))
    broadcast = sw.Layout((2, 3), (1, 0))
    assert (gapped.size, gapped.cosize) == (6, 10)
    assert (broadcast.size, broadcast.cosize) == (6, 2)


@pytest.mark.spec(f"{MEASURE}/measure-an-empty-layout", f"{MEASURE}#4")
@pytest.mark.parametrize("layout", [sw.Layout(0), sw.Layout((3, 0, 5), (100, 7, 9))])
def test_measure_an_empty_layout(layout):
    assert layout.size == 0
    assert layout.cosize == 0


@pytest.mark.spec(f"{LEAVES}/list-the-leaf-modes-of-a-nested-layout", f"{LEAVES}#1")
def test_list_the_leaf_modes_of_a_nested_layout():
    layout = sw.Layout(((2, 3), (4, 1)), ((1, 2), (6, 0)))
    assert layout.leaf_modes == [(2, 1), (3, 2), (4, 6), (1, 0)]


@pytest.mark.spec(f"{LEAVES}/agree-with-the-coordinate-map", f"{LEAVES}#2")
def test_agree_with_the_coordinate_map():
    layout = sw.Layout(((2, 3), (4, 1)), ((1, 2), (6, 0)))
    modes = layout.leaf_modes
    for i in range(layout.size):
        flat = []
        rest = i
        for extent, _ in modes:
            flat.append(rest % extent)
            rest //= extent
        assert layout(i) == sum(c * d for c, (_, d) in zip(flat, modes, strict=True))
        assert layout(tuple(flat)) == layout(i)


@pytest.mark.spec(
    f"{CANONICAL}/build-the-canonical-layout-of-a-nested-shape", f"{CANONICAL}#1", f"{CANONICAL}#2"
)
def test_build_the_canonical_layout_of_a_nested_shape():
    layout = sw.compact_col_major(((2, 3), 4))
    assert layout == sw.Layout(((2, 3), 4), ((1, 2), 6))
    assert layout.cosize == 24
    assert sorted(layout(i) for i in range(layout.size)) == list(range(24))
