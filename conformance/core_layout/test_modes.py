"""core-layout: mode(i) selects a top-level mode like a Python sequence item."""

import pytest

import strideweave as sw

REQ = "core-layout/modes-are-selected-like-python-sequence-items"


@pytest.mark.spec(f"{REQ}/select-a-mode-from-either-end", f"{REQ}#1", f"{REQ}#2")
def test_select_a_mode_from_either_end():
    layout = sw.Layout((2, (3, 4)), (1, (2, 6)))
    assert layout.mode(1) == layout.mode(-1) == sw.Layout((3, 4), (2, 6))
    assert layout.mode(0) == layout.mode(-2) == sw.Layout(2, 1)
    assert sw.Layout(4, 1).mode(0) == sw.Layout(4, 1)
    assert sw.Layout(4, 1).mode(-1) == sw.Layout(4, 1)


@pytest.mark.spec(f"{REQ}/reject-a-mode-index-out-of-range", f"{REQ}#2")
@pytest.mark.parametrize(
    ("shape", "stride", "index", "rank"),
    [
        ((), (), 0, 0),
        ((), (), -1, 0),
        ((2, (3, 4)), None, 5, 2),
        ((2, (3, 4)), None, -3, 2),
        ((2, 3), (1, 2), 2, 2),
        (4, 1, 5, 1),
        (4, 1, 1, 1),
        (4, 1, 2**80, 1),
        (4, 1, -(2**80), 1),
    ],
)
def test_reject_a_mode_index_out_of_range(shape, stride, index, rank):
    layout = sw.Layout(shape, stride)
    with pytest.raises(IndexError) as info:
        layout.mode(index)
    assert f"index {index} " in str(info.value) and f"rank {rank}" in str(info.value)


@pytest.mark.spec(f"{REQ}#2")
@pytest.mark.parametrize("index", [True, 1.0, "0", None])
def test_reject_a_mode_index_that_is_not_an_integer(index):
    with pytest.raises(TypeError) as info:
        sw.Layout((2, 3)).mode(index)
    assert repr(index) in str(info.value)
