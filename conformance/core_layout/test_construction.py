"""core-layout: construction and validation of Layouts."""

import pytest

import strideweave as sw

REQ = "core-layout/layouts-pair-congruent-shape-and-stride-trees-of-non-negative-integers"


@pytest.mark.spec(f"{REQ}/build-a-hierarchical-layout")
def test_build_a_hierarchical_layout():
    layout = sw.Layout((2, (3, 4)), (1, (2, 6)))
    assert layout.shape == (2, (3, 4))
    assert layout.stride == (1, (2, 6))


@pytest.mark.spec(f"{REQ}#1")
def test_lists_are_accepted_as_tuples():
    assert sw.Layout([2, [3, 4]], [1, [2, 6]]) == sw.Layout((2, (3, 4)), (1, (2, 6)))
    assert sw.Layout(5, 3).shape == 5


@pytest.mark.spec(f"{REQ}/default-to-the-compact-column-major-stride", f"{REQ}#6")
def test_default_to_the_compact_column_major_stride():
    assert sw.Layout((2, (3, 4))).stride == (1, (2, 6))
    assert sw.Layout(7).stride == 1
    assert sw.Layout((2, (3, 4)), None) == sw.Layout((2, (3, 4)))


@pytest.mark.spec(f"{REQ}/reject-a-negative-extent-or-stride", f"{REQ}#2", f"{REQ}#3")
@pytest.mark.parametrize(
    ("shape", "stride", "value", "where"),
    [
        ((2, (-3, 4)), None, "-3", "shape[1][0]"),
        ((2, 3), (1, -7), "-7", "stride[1]"),
        (-1, 1, "-1", "shape"),
    ],
)
def test_reject_a_negative_extent_or_stride(shape, stride, value, where):
    with pytest.raises(ValueError, match="negative") as info:
        sw.Layout(shape, stride)
    assert value in str(info.value)
    assert where in str(info.value)


@pytest.mark.spec(f"{REQ}/reject-a-non-integer-leaf", f"{REQ}#3")
@pytest.mark.parametrize(
    ("shape", "stride", "bad"),
    [
        ((2, 3.0), None, "3.0"),
        ((2, "3"), None, "'3'"),
        ((2, None), None, "None"),
        ((2, True), None, "True"),
        ((2, 3), (1, False), "False"),
        ({2, 3}, None, "{2, 3}"),
    ],
)
def test_reject_a_non_integer_leaf(shape, stride, bad):
    with pytest.raises(TypeError) as info:
        sw.Layout(shape, stride)
    assert bad in str(info.value)


@pytest.mark.spec(f"{REQ}/reject-a-non-congruent-stride", f"{REQ}#4")
@pytest.mark.parametrize(
    ("shape", "stride"),
    [((2, (3, 4)), (1, 2, 6)), ((2, 3), 1), (6, (1,)), ((2, (3, 4)), (1, (2, (6,))))],
)
def test_reject_a_non_congruent_stride(shape, stride):
    with pytest.raises(ValueError, match="not congruent") as info:
        sw.Layout(shape, stride)
    message = str(info.value)
    assert sw.Layout(shape).__repr__().split(":")[0] in message
    assert str(stride).replace(" ", "").replace(",)", ")") in message


@pytest.mark.spec(f"{REQ}#5")
@pytest.mark.parametrize(
    ("shape", "stride", "subject"),
    [
        ((2, 2**63), None, str(2**63)),
        ((2, 3), (1, -(2**63) - 1), str(-(2**63) - 1)),
        ((2**40, 2**40), None, "size"),
        ((2, 3), (1, 2**62), "cosize"),
    ],
)
def test_reject_values_beyond_int64(shape, stride, subject):
    with pytest.raises(ValueError) as info:
        sw.Layout(shape, stride)
    assert subject in str(info.value)


@pytest.mark.spec(f"{REQ}#7")
def test_failed_construction_produces_no_layout():
    layout = None
    with pytest.raises(ValueError):
        layout = sw.Layout((2, -1))
    assert layout is None
    with pytest.raises(AttributeError):
        sw.Layout(4).shape = 5  # immutable: nothing can be patched into a half-built value


def nested(levels: int, leaf=2, container=tuple):
    """``leaf`` wrapped in ``levels`` one-element containers."""
    for _ in range(levels):
        leaf = container([leaf])
    return leaf


NESTED_ENTRIES = {
    "Layout(x)": lambda x: sw.Layout(x),
    "Layout(x, x)": lambda x: sw.Layout(x, x),
    "Layout(2, x)": lambda x: sw.Layout(2, x),
    "Layout(1)(x)": lambda x: sw.Layout(1)(x),
    "zeros(x)": lambda x: sw.zeros(x),
    "full(x, 1)": lambda x: sw.full(x, 1),
    "compact_col_major(x)": lambda x: sw.compact_col_major(x),
    "idx2crd(0, x)": lambda x: sw.idx2crd(0, x),
    "broadcast_to(x)": lambda x: sw.tensor([1]).broadcast_to(x),
    "pickle state": lambda x: sw.Layout.__new__(sw.Layout).__setstate__((x, x)),
}


@pytest.mark.spec(f"{REQ}/reject-nesting-deeper-than-64-levels", f"{REQ}#8")
@pytest.mark.parametrize("entry", sorted(NESTED_ENTRIES))
@pytest.mark.parametrize("levels", [65, 30_000])
@pytest.mark.parametrize("container", [tuple, list])
def test_reject_nesting_deeper_than_64_levels(entry, levels, container):
    """Every entry converting an IntTuple refuses deep nesting with ValueError, never a crash."""
    with pytest.raises(ValueError, match="deeper than the limit of 64 levels"):
        NESTED_ENTRIES[entry](nested(levels, container=container))


@pytest.mark.spec(f"{REQ}/reject-nesting-deeper-than-64-levels", f"{REQ}#8")
def test_nesting_64_levels_deep_is_accepted():
    layout = sw.Layout(nested(64), nested(64, leaf=3))
    assert layout.depth == 64 and layout.size == 2 and layout.leaf_modes == [(2, 3)]
    assert layout(nested(64, leaf=1)) == 3
    assert sw.composition(layout, layout).depth == 64
    with pytest.raises(ValueError, match="64"):
        sw.Layout((layout.shape, 1))


@pytest.mark.spec(f"{REQ}#8")
def test_an_algebra_result_deeper_than_the_limit_is_refused():
    """logical_product nests its operand one level deeper: at the limit that is refused."""
    a = sw.Layout(nested(64))
    with pytest.raises(ValueError, match="64"):
        sw.logical_product(a, sw.Layout(2))
