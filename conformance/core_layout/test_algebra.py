"""core-layout: coalesce, composition, complement, right inverse, divide, product."""

import pytest

import strideweave as sw

COALESCE = "core-layout/coalesce-keeps-the-function"
COMPOSE = "core-layout/composition-follows-cute-and-refuses-inadmissible-operands"
COMPLEMENT = "core-layout/complement-fills-the-gaps-of-a-layouts-image"
INVERSE = "core-layout/right-inverse-undoes-a-layout-on-its-compact-prefix"
TILE = "core-layout/divide-and-product-tile-one-layout-by-another"


@pytest.mark.spec(f"{COALESCE}/merge-contiguous-modes")
def test_merge_contiguous_modes():
    assert sw.coalesce(sw.Layout((2, (1, 6)), (1, (6, 2)))) == sw.Layout(12, 1)


@pytest.mark.spec(f"{COALESCE}/keep-modes-that-do-not-merge")
def test_keep_modes_that_do_not_merge():
    layout = sw.Layout((2, 3), (1, 4))
    assert sw.coalesce(layout) == layout


@pytest.mark.spec(f"{COALESCE}#2", f"{COALESCE}#3")
def test_coalesce_drops_unit_modes_and_canonicalizes_degenerate_sizes():
    assert sw.coalesce(sw.Layout((1, 4, 1), (9, 2, 9))) == sw.Layout(4, 2)
    assert sw.coalesce(sw.Layout((3, 0), (1, 3))) == sw.Layout(0, 0)
    assert sw.coalesce(sw.Layout((1, (1,)), (5, (7,)))) == sw.Layout(1, 0)


@pytest.mark.spec(f"{COMPOSE}/compose-two-hierarchical-layouts")
def test_compose_two_hierarchical_layouts():
    a = sw.Layout((6, 2), (8, 2))
    b = sw.Layout((4, 3), (3, 1))
    r = sw.composition(a, b)
    assert r == sw.Layout(((2, 2), 3), ((24, 2), 8))
    assert [r(i) for i in range(b.size)] == [a(b(i)) for i in range(b.size)]


@pytest.mark.spec(f"{COMPOSE}/reject-a-shape-inadmissible-composition", f"{COMPOSE}#4")
def test_reject_a_shape_inadmissible_composition():
    a, b = sw.Layout((4, 3), (1, 5)), sw.Layout(3, 2)
    with pytest.raises(ValueError) as info:
        sw.composition(a, b)
    message = str(info.value)
    assert "shape divisibility" in message
    assert "mode 0 (4:1)" in message
    assert (a, b) == (sw.Layout((4, 3), (1, 5)), sw.Layout(3, 2))


@pytest.mark.spec(f"{COMPOSE}/reject-a-stride-inadmissible-composition", f"{COMPOSE}#4")
def test_reject_a_stride_inadmissible_composition():
    with pytest.raises(ValueError) as info:
        sw.composition(sw.Layout((4, 5), (1, 10)), sw.Layout(2, 3))
    message = str(info.value)
    assert "stride divisibility" in message
    assert "mode 0 (4:1)" in message


@pytest.mark.spec(COMPOSE)
def test_compose_mode_by_mode_with_a_tiler():
    a = sw.Layout((4, 6), (1, 4))
    assert sw.composition(a, (sw.Layout(2, 2), sw.Layout(3, 2))) == sw.Layout((2, 3), (2, 8))
    assert sw.composition(a, [sw.Layout(2, 2)]) == sw.Layout((2, 6), (2, 4))
    with pytest.raises(ValueError, match="rank 2"):
        sw.composition(a, (sw.Layout(2), sw.Layout(2), sw.Layout(2)))
    with pytest.raises(TypeError, match="not a Layout"):
        sw.composition(a, (sw.Layout(2), 3))
    with pytest.raises(TypeError, match="Layout or a tuple of Layouts"):
        sw.composition(a, 3)


@pytest.mark.spec(f"{COMPLEMENT}/complement-a-strided-layout", f"{COMPLEMENT}#1")
def test_complement_a_strided_layout():
    assert sw.complement(sw.Layout(4, 2), 24) == sw.Layout((2, 3), (1, 8))


@pytest.mark.spec(f"{COMPLEMENT}/complement-a-two-mode-layout", f"{COMPLEMENT}#1")
def test_complement_a_two_mode_layout():
    assert sw.complement(sw.Layout((2, 2), (1, 6)), 24) == sw.Layout((3, 2), (2, 12))


@pytest.mark.spec(
    f"{COMPLEMENT}/reject-a-layout-without-complement", f"{COMPLEMENT}#4", f"{COMPLEMENT}#5"
)
def test_reject_a_layout_without_complement():
    with pytest.raises(ValueError) as info:
        sw.complement(sw.Layout((2, 2), (1, 1)), 8)
    assert "2:1" in str(info.value)
    with pytest.raises(ValueError, match="cotarget -1"):
        sw.complement(sw.Layout(4), -1)


@pytest.mark.spec(f"{COMPLEMENT}#3")
def test_complement_ignores_broadcast_and_unit_modes():
    assert sw.complement(sw.Layout((4, 3, 1), (2, 0, 7)), 24) == sw.Layout((2, 3), (1, 8))


@pytest.mark.spec(f"{INVERSE}/invert-a-permuted-compact-layout")
def test_invert_a_permuted_compact_layout():
    layout = sw.Layout((2, 3), (3, 1))
    r = sw.right_inverse(layout)
    assert r == sw.Layout((3, 2), (2, 1))
    assert [layout(r(i)) for i in range(6)] == list(range(6))


@pytest.mark.spec(f"{INVERSE}/invert-the-compact-prefix-of-a-gapped-layout")
def test_invert_the_compact_prefix_of_a_gapped_layout():
    assert sw.right_inverse(sw.Layout((4, 8), (1, 5))) == sw.Layout(4, 1)


@pytest.mark.spec(f"{INVERSE}#2")
def test_right_inverse_of_degenerate_layouts():
    assert sw.right_inverse(sw.Layout((4, 8), (2, 8))) == sw.Layout(1, 0)
    assert sw.right_inverse(sw.Layout((3, 0), (1, 3))) == sw.Layout(0, 0)


@pytest.mark.spec(f"{TILE}/divide-a-layout-by-a-tile", f"{TILE}#1")
def test_divide_a_layout_by_a_tile():
    result = sw.logical_divide(sw.Layout((4, 2, 3), (2, 1, 8)), sw.Layout(4, 2))
    assert result == sw.Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))


@pytest.mark.spec(f"{TILE}/regroup-a-mode-by-mode-division", f"{TILE}#1", f"{TILE}#2")
def test_regroup_a_mode_by_mode_division():
    a = sw.Layout((4, 6), (1, 4))
    tiler = (sw.Layout(2, 1), sw.Layout(3, 1))
    assert sw.zipped_divide(a, tiler) == sw.Layout(((2, 3), (2, 2)), ((1, 4), (2, 12)))
    assert sw.tiled_divide(a, tiler) == sw.Layout(((2, 3), 2, 2), ((1, 4), 2, 12))
    assert sw.logical_divide(a, tiler) == sw.Layout(((2, 2), (3, 2)), ((1, 2), (4, 12)))


@pytest.mark.spec(f"{TILE}/reproduce-a-layout-with-a-product", f"{TILE}#3")
def test_reproduce_a_layout_with_a_product():
    result = sw.logical_product(sw.Layout((2, 2), (4, 1)), sw.Layout(6, 1))
    assert result == sw.Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))


@pytest.mark.spec(f"{TILE}#4")
def test_divide_and_product_refuse_inadmissible_operands():
    with pytest.raises(ValueError, match="divisibility"):
        sw.logical_divide(sw.Layout((4, 5), (1, 10)), sw.Layout(2, 3))
    with pytest.raises(ValueError, match="has no complement"):
        sw.logical_divide(sw.Layout(8), sw.Layout((2, 2), (1, 1)))
    with pytest.raises(ValueError, match="has no complement"):
        sw.logical_product(sw.Layout((2, 2), (1, 1)), sw.Layout(2))
