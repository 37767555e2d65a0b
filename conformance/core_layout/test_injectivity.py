"""core-layout: exact injectivity."""

import pytest

import strideweave as sw

REQ = "core-layout/injectivity-is-decided-exactly"


@pytest.mark.spec(f"{REQ}/accept-an-interleaved-injective-layout", f"{REQ}#1")
def test_accept_an_interleaved_injective_layout():
    layout = sw.Layout((3, 2), (2, 3))
    assert [layout(i) for i in range(6)] == [0, 2, 4, 3, 5, 7]
    assert layout.is_injective()


@pytest.mark.spec(f"{REQ}/detect-a-collision", f"{REQ}#1")
@pytest.mark.parametrize(
    "layout",
    [sw.Layout((2, 3), (1, 0)), sw.Layout((3, 2), (1, 2)), sw.Layout((4, 3), (2, 3))],
)
def test_detect_a_collision(layout):
    assert not layout.is_injective()


@pytest.mark.spec(f"{REQ}#2")
@pytest.mark.parametrize(
    "layout", [sw.Layout(0), sw.Layout((1, 1), (0, 0)), sw.Layout((0, 5), (0, 0)), sw.Layout(())]
)
def test_sizes_zero_and_one_are_injective(layout):
    assert layout.is_injective()
