"""core-layout: CuTe notation, value equality and hashing."""

import pytest

import strideweave as sw

REQ = "core-layout/layouts-print-in-cute-notation-and-compare-by-value"


@pytest.mark.spec(f"{REQ}/print-a-nested-layout", f"{REQ}#1")
def test_print_a_nested_layout():
    assert repr(sw.Layout((2, (3, 4)), (1, (2, 6)))) == "(2,(3,4)):(1,(2,6))"
    assert repr(sw.Layout(4, 2)) == "4:2"
    assert repr(sw.Layout((6,), (1,))) == "(6):(1)"


@pytest.mark.spec(f"{REQ}/compare-layouts-by-value", f"{REQ}#2")
def test_compare_layouts_by_value():
    a = sw.Layout((2, 3), (1, 2))
    b = sw.Layout([2, 3], [1, 2])
    c = sw.Layout((2, 3), (1, 3))
    assert a == b and hash(a) == hash(b)
    assert a != c and b != c
    assert {a: "x"}[b] == "x"
    assert a != (2, 3)


@pytest.mark.spec(f"{REQ}/distinguish-tree-structure", f"{REQ}#2")
def test_distinguish_tree_structure():
    layouts = [sw.Layout(6, 1), sw.Layout((6,), (1,)), sw.Layout((2, 3), (1, 2))]
    assert all(layout.size == 6 for layout in layouts)
    assert len(set(layouts)) == 3
    assert layouts[0] != layouts[1] != layouts[2] != layouts[0]


@pytest.mark.spec(f"{REQ}#3")
def test_layouts_are_immutable():
    layout = sw.Layout((2, 3))
    for attribute in ("shape", "stride", "size", "cosize"):
        with pytest.raises(AttributeError):
            setattr(layout, attribute, 1)
    with pytest.raises(AttributeError):
        layout.extra = 1
