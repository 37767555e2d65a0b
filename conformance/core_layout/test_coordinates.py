"""core-layout: the coordinate map, idx2crd, and coordinate errors."""

import pytest

import strideweave as sw

REQ = "core-layout/layouts-map-coordinates-to-indices-colexicographically"


@pytest.fixture
def spread():
    return sw.Layout((2, (3, 4)), (1, (20, 100)))


@pytest.mark.spec(f"{REQ}/map-a-flat-index")
def test_map_a_flat_index():
    layout = sw.Layout((2, (3, 4)), (1, (2, 6)))
    assert layout(7) == 7
    assert layout.idx2crd(7) == (1, (0, 1))


@pytest.mark.spec(f"{REQ}/map-a-flat-coordinate")
def test_map_a_flat_coordinate(spread):
    assert spread((1, 2, 3)) == 341
    assert spread([1, 2, 3]) == 341


@pytest.mark.spec(f"{REQ}/map-a-hierarchical-coordinate", f"{REQ}#2")
def test_map_a_hierarchical_coordinate(spread):
    assert spread((1, (2, 3))) == 341
    assert spread((1, 11)) == 341
    assert spread(23) == 341


@pytest.mark.spec(f"{REQ}/invert-a-flat-index-into-a-coordinate")
def test_invert_a_flat_index_into_a_coordinate():
    assert sw.idx2crd(23, (2, (3, 4))) == (1, (2, 3))
    assert sw.Layout((2, (3, 4))).idx2crd(23) == (1, (2, 3))
    assert sw.idx2crd(4, 6) == 4


@pytest.mark.spec(f"{REQ}/reject-an-out-of-range-coordinate", f"{REQ}#6")
@pytest.mark.parametrize(
    ("coord", "component", "extent"),
    [
        ((1, (3, 0)), "3", "3"),
        ((2, 0), "2", "2"),
        ((-1, 0), "-1", "2"),
        ((0, 12), "12", "12"),
        ((1, 2, 4), "4", "4"),
        (24, "24", "24"),
        (-1, "-1", "24"),
    ],
)
def test_reject_an_out_of_range_coordinate(spread, coord, component, extent):
    with pytest.raises(IndexError) as info:
        spread(coord)
    message = str(info.value)
    assert component in message
    assert extent in message
    assert spread((1, (2, 3))) == 341  # the layout still maps valid coordinates


@pytest.mark.spec(f"{REQ}/reject-an-out-of-range-coordinate")
def test_reject_every_coordinate_of_an_empty_layout():
    with pytest.raises(IndexError):
        sw.Layout((3, 0))(0)
    with pytest.raises(IndexError):
        sw.idx2crd(6, (2, 3))


@pytest.mark.spec(f"{REQ}/reject-a-coordinate-of-the-wrong-structure", f"{REQ}#4")
@pytest.mark.parametrize("coord", [(1, 2, 3, 4), ((1, 0), 2), (1, (1, 2, 0)), ()])
def test_reject_a_coordinate_of_the_wrong_structure(spread, coord):
    with pytest.raises(ValueError) as info:
        spread(coord)
    assert "coordinate" in str(info.value)


@pytest.mark.spec(f"{REQ}#5")
def test_reject_a_non_integer_coordinate(spread):
    with pytest.raises(TypeError):
        spread(1.5)
    with pytest.raises(TypeError):
        spread((True, 0))


@pytest.mark.spec(f"{REQ}/map-a-mixed-coordinate", f"{REQ}#2")
def test_map_a_mixed_coordinate(spread):
    """An integer stands for the tuple mode (3, 4), read colexicographically: 4 is (1, 1)."""
    assert spread((1, 4)) == 121 == spread((1, (1, 1)))
    assert spread((0, 5)) == spread((0, (2, 1))) == 140
    deep = sw.Layout(((2, 3), (2, (2, 3))), ((1, 10), (100, (1000, 10000))))
    assert deep((4, (1, 5))) == deep(((0, 2), (1, (1, 2)))) == deep(((0, 2), (1, 5)))
    assert deep((4, 11)) == deep(((0, 2), (1, (1, 2))))


@pytest.mark.spec(f"{REQ}#3")
def test_a_tuple_of_the_rank_is_read_hierarchically_before_flat():
    """((2,3),()) has rank 2 and two leaf modes: a pair is read hierarchically, so its
    second component indexes the empty mode (extent 1), never the leaf of extent 3."""
    layout = sw.Layout(((2, 3), ()), ((1, 2), ()))
    assert [e for e, _ in layout.leaf_modes] == [2, 3] and layout.rank == 2
    assert layout((4, 0)) == layout(((0, 2), ())) == 4
    with pytest.raises(IndexError):
        layout((1, 2))  # read flat it would be 1 + 2 * 2 = 5
    # A tuple of the leaf-mode count that is not the rank is read flat.
    nested = sw.Layout(((2, 3),), ((1, 2),))
    assert nested.rank == 1
    assert nested((1, 2)) == 5 == nested(((1, 2),)) == nested((5,))
