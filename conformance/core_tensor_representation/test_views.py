"""core-tensor-representation: views share their carrier."""

import pytest

import strideweave as sw

REQ = "core-tensor-representation/views-share-their-carrier"


def grid():
    carrier = sw.CPU(sw.Int32, values=range(20))
    return carrier, sw.Tensor(carrier, sw.Layout((4, 5)))


@pytest.mark.spec(f"{REQ}/slice-a-mode", f"{REQ}#1", f"{REQ}#3")
def test_slice_a_mode():
    carrier, t = grid()
    row = t[1]
    assert row.carrier is carrier
    assert row.tolist() == [1, 5, 9, 13, 17]
    cols = t[:, 1:3]
    assert cols.carrier is carrier
    assert cols.shape == (4, 2)
    assert cols.tolist() == [[4, 8], [5, 9], [6, 10], [7, 11]]
    assert t[1:4:2, 4].tolist() == [17, 19]
    assert t[2, 3].tolist() == 14
    assert t[1:].tolist() == t[1:, :].tolist()
    assert t[:, 3:99].shape == (4, 2)


@pytest.mark.spec(f"{REQ}#3", f"{REQ}#4")
def test_index_a_tuple_mode():
    carrier = sw.CPU(sw.Int32, values=range(24))
    t = sw.Tensor(carrier, sw.Layout((2, (3, 4)), (1, (2, 6))))
    assert t[1, 5].tolist() == t.tolist()[1][2][1]  # 5 = (2, 1) colexicographically in (3, 4)
    assert t[:, :].tolist() == t.tolist()
    with pytest.raises(ValueError, match="only the full slice"):
        t[:, 1:3]
    with pytest.raises(IndexError, match="12"):
        t[0, 12]


@pytest.mark.spec(f"{REQ}#4")
@pytest.mark.parametrize(
    ("key", "error", "subject"),
    [
        (4, IndexError, "index 4"),
        (-5, IndexError, "index -5"),
        (2**64, IndexError, str(2**64)),
        ((0, 0, 0), IndexError, "too many indices"),
        ((slice(None, None, -1),), ValueError, "step -1"),
        ((slice(None, None, -(2**70)),), ValueError, "strides are non-negative"),
        ((slice(None, None, 0),), ValueError, "step cannot be zero"),
        ((slice(1.5, None),), TypeError, "1.5"),
        ("a", TypeError, "'a'"),
        (1.5, TypeError, "1.5"),
    ],
)
def test_reject_a_bad_index(key, error, subject):
    carrier, t = grid()
    with pytest.raises(error) as info:
        t[key]
    assert subject in str(info.value)
    assert carrier.version == 0


@pytest.mark.spec(f"{REQ}/broadcast-with-stride-zero", f"{REQ}#5")
def test_broadcast_with_stride_zero():
    carrier = sw.CPU(sw.Int32, values=[3, 8])
    t = sw.Tensor(carrier, sw.Layout((2, 1)))
    view = t.broadcast_to((2, 3))
    assert view.carrier is carrier
    assert view.layout == sw.Layout((2, 3), (1, 0))
    assert view.tolist() == [[3, 3, 3], [8, 8, 8]]
    widened = sw.Tensor(carrier, sw.Layout(2)).broadcast_to((2, (3, 2)))
    assert widened.layout == sw.Layout((2, (3, 2)), (1, (0, 0)))


@pytest.mark.spec(f"{REQ}/see-a-write-through-every-view", f"{REQ}#1")
def test_see_a_write_through_every_view():
    carrier, t = grid()
    sliced = t[:, 1:3]
    broadcast = sw.Tensor(carrier, sw.Layout((4, 1))).broadcast_to((4, 2))
    carrier.write(5, 99)
    assert sliced.tolist()[1][0] == 99
    assert broadcast.tolist()[1] == [1, 1]
    carrier.write(1, 42)
    assert broadcast.tolist()[1] == [42, 42]


@pytest.mark.spec(f"{REQ}/reject-an-incompatible-broadcast", f"{REQ}#5")
@pytest.mark.parametrize("target", [(2, 4), (2,), 6, (2, (3, 1))])
def test_reject_an_incompatible_broadcast(target):
    t = sw.Tensor(sw.CPU(sw.Int32, 6), sw.Layout((2, 3)))
    with pytest.raises(ValueError) as info:
        t.broadcast_to(target)
    assert "(2,3)" in str(info.value)


@pytest.mark.spec(f"{REQ}#2")
def test_relayout_builds_a_validated_view():
    carrier = sw.CPU(sw.Int32, values=range(6))
    t = sw.Tensor(carrier, sw.Layout(6))
    view = t.relayout(sw.Layout((3, 2), (2, 1)), offset=0)
    assert view.carrier is carrier
    assert view.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert t.relayout(sw.Layout(2), 4).tolist() == [4, 5]
    with pytest.raises(ValueError, match="exceeds"):
        t.relayout(sw.Layout(4), 3)


@pytest.mark.spec(f"{REQ}/slice-like-a-python-sequence", f"{REQ}#6")
def test_slice_like_a_python_sequence():
    t = sw.arange(0, 5, dtype=sw.Int32)
    assert t[-1].tolist() == 4
    assert t[-2:].tolist() == [3, 4]
    assert t[:: 2**63 - 1].tolist() == [0]
    assert t[0 : 2 : 2**63 - 1].tolist() == [0]
    assert t[2**64 :].tolist() == []
    assert t[-(2**70) : 2].tolist() == [0, 1]
    assert t[1 : 2**70 : 2**65].tolist() == [1]
    assert t[True:].tolist() == [1, 2, 3, 4]


@pytest.mark.spec(f"{REQ}/slice-like-a-python-sequence", f"{REQ}#6")
def test_negative_bounds_of_a_tuple_mode_may_still_select_all_of_it():
    """A slice that selects a whole tuple mode in order is the full slice, however written."""
    t = sw.Tensor(sw.CPU(sw.Int32, values=range(24)), sw.Layout((2, (3, 4))))
    assert t[:, -12:].tolist() == t.tolist()
    assert t[:, -(2**70) : 2**70].tolist() == t.tolist()
    assert t[-1, -1].tolist() == t.tolist()[1][2][3]
    with pytest.raises(ValueError, match="only the full slice"):
        t[:, -11:]


@pytest.mark.spec(f"{REQ}/refuse-a-reversing-slice", f"{REQ}#7")
@pytest.mark.parametrize("step", [-1, -2, -(2**63), -(2**70)])
def test_refuse_a_reversing_slice(step):
    carrier, t = grid()
    with pytest.raises(ValueError) as info:
        t[:, ::step]
    assert "strides are non-negative" in str(info.value)
    assert "cannot reverse" in str(info.value)
    assert carrier.version == 0
