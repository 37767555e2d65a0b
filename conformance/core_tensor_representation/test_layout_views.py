"""core-tensor-representation: T, transpose, permute and reshape are layout views."""

import numpy as np
import pytest

import strideweave as sw

PERMUTE = "core-tensor-representation/permute-reorders-the-top-level-modes"
TRANSPOSE = "core-tensor-representation/transpose-swaps-two-top-level-modes"
T = "core-tensor-representation/t-reverses-the-top-level-modes"
RESHAPE = "core-tensor-representation/reshape-is-a-view-through-composition"


def hierarchical():
    carrier = sw.CPU(sw.Int32, values=range(24))
    return carrier, sw.Tensor(carrier, sw.Layout((2, (3, 4)), (1, (2, 6))))


def holes():
    """Three columns of four elements, eight slots apart, at offset 2."""
    carrier = sw.CPU(sw.Int32, values=range(100, 132))
    return carrier, sw.Tensor(carrier, sw.Layout((4, 3), (1, 8)), offset=2)


def fortran_reshape(t, extents):
    return np.asarray(t).reshape(extents, order="F").tolist()


@pytest.mark.spec(f"{PERMUTE}/permute-hierarchical-modes", f"{PERMUTE}#1", f"{PERMUTE}#2")
def test_permute_hierarchical_modes():
    carrier, t = hierarchical()
    base = t.tolist()
    for view in (t.permute(1, 0), t.permute((1, 0)), t.permute([-1, -2]), t.permute(-1, 0)):
        assert view.layout == sw.Layout(((3, 4), 2), ((2, 6), 1))
        assert view.carrier is carrier and view.offset == t.offset
        values = view.tolist()
        for i in range(2):
            for j in range(3):
                for k in range(4):
                    assert values[j][k][i] == base[i][j][k]
    assert t.permute(0, 1).layout == t.layout
    assert carrier.version == 0


@pytest.mark.spec(f"{PERMUTE}#3")
def test_an_integral_shape_is_one_mode_and_a_rank_0_tensor_has_none():
    t = sw.arange(0, 5, dtype=sw.Int32)
    for view in (t.permute(0), t.permute(-1), t.permute((0,))):
        assert view.layout == t.layout and view.shape == 5
    scalar = sw.Tensor(sw.CPU(sw.Int32, values=[7]), sw.Layout(()))
    assert scalar.permute().layout == scalar.layout
    assert scalar.permute(()).tolist() == 7
    with pytest.raises(ValueError, match="1 modes given for a tensor of rank 0"):
        scalar.permute(0)
    with pytest.raises(ValueError, match="2 modes given for a tensor of rank 1"):
        t.permute(0, 0)


@pytest.mark.spec(f"{PERMUTE}/refuse-modes-that-are-not-a-permutation", f"{PERMUTE}#4")
@pytest.mark.parametrize(
    ("modes", "error", "subjects"),
    [
        ((0,), ValueError, ["1 modes given", "rank 2"]),
        ((0, 1, 0), ValueError, ["3 modes given", "rank 2"]),
        ((0, 2), IndexError, ["mode 2", "rank 2"]),
        ((0, -3), IndexError, ["mode -3", "rank 2"]),
        ((0, 2**70), IndexError, ["out of range", "rank 2"]),
        ((1, 1), ValueError, ["mode 1 is given twice"]),
        ((1, -1), ValueError, ["mode -1 is given twice"]),
        ((0, 1.5), TypeError, ["1.5"]),
        ((0, True), TypeError, ["True"]),
        (("0", 1), TypeError, ["'0'"]),
    ],
)
def test_refuse_modes_that_are_not_a_permutation(modes, error, subjects):
    carrier = sw.CPU(sw.Int32, values=range(6))
    t = sw.Tensor(carrier, sw.Layout((2, 3)))
    with pytest.raises(error) as info:
        t.permute(*modes)
    for subject in subjects:
        assert subject in str(info.value)
    assert "permute" in str(info.value) or error is TypeError
    assert carrier.version == 0 and t.layout == sw.Layout((2, 3))


def carriers_of_other_classes(tmp_path):
    values = [float(v) for v in range(12)]
    return [
        sw.FileBacked(sw.Float32, values=values, path=str(tmp_path / "views.bin")),
        sw.Metal(sw.Float32, values=values),
    ]


@pytest.mark.spec(
    f"{PERMUTE}/permute-a-tensor-on-any-carrier", f"{PERMUTE}#5", f"{RESHAPE}#1", f"{RESHAPE}#7"
)
def test_permute_a_tensor_on_any_carrier(tmp_path):
    for carrier in carriers_of_other_classes(tmp_path):
        t = sw.Tensor(carrier, sw.Layout((2, 3), (1, 2)))
        version = carrier.version
        expected = np.asarray(t.tolist())
        for view, values in (
            (t.permute(1, 0), expected.T),
            (t.transpose(0, 1), expected.T),
            (t.T, expected.T),
            (t.reshape(6), expected.reshape(6, order="F")),
            (t.reshape((3, 2)), expected.reshape((3, 2), order="F")),
        ):
            assert view.carrier is carrier
            assert view.tolist() == values.tolist()
        assert carrier.version == version


@pytest.mark.spec(f"{PERMUTE}#5", f"{RESHAPE}#7")
@pytest.mark.parametrize(
    ("view", "name"),
    [
        (lambda t: t.permute(0), "permute"),
        (lambda t: t.T, "permute"),
        (lambda t: t.transpose(0, 0), "transpose"),
        (lambda t: t.reshape(3), "reshape"),
    ],
)
def test_refuse_a_multi_subtensor_tensor(view, name):
    xs = sw.tensor([0.5, 1.5, 2.5])
    ns = sw.tensor([1, 2, 3])
    t = sw.Tensor.from_planes(sw.compound(x=sw.Float32, n=sw.Int32), [xs, ns])
    with pytest.raises(NotImplementedError, match=name):
        view(t)
    assert xs.carrier.version == 0 and ns.carrier.version == 0


@pytest.mark.spec(f"{TRANSPOSE}/transpose-a-matrix", f"{TRANSPOSE}#1", f"{TRANSPOSE}#2")
def test_transpose_a_matrix():
    t = sw.tensor([[1, 2, 3], [4, 5, 6]])
    for view in (t.transpose(0, 1), t.transpose(-1, -2), t.transpose(1, 0)):
        assert view.layout == sw.Layout((3, 2), (2, 1))
        assert view.carrier is t.carrier
        assert view.tolist() == [[1, 4], [2, 5], [3, 6]]
    assert t.transpose(1, 1).layout == t.layout
    assert t.transpose(0, -2).layout == t.layout
    _, h = hierarchical()
    assert h.transpose(0, 1).layout == h.permute(1, 0).layout


@pytest.mark.spec(f"{TRANSPOSE}/refuse-a-transpose-mode-out-of-range", f"{TRANSPOSE}#2")
@pytest.mark.parametrize(
    ("i", "j", "error", "subjects"),
    [
        (0, 2, IndexError, ["transpose", "mode 2", "rank 2"]),
        (-3, 0, IndexError, ["transpose", "mode -3", "rank 2"]),
        (0, 1.0, TypeError, ["1.0"]),
        (None, 0, TypeError, ["None"]),
    ],
)
def test_refuse_a_transpose_mode_out_of_range(i, j, error, subjects):
    carrier = sw.CPU(sw.Int32, values=range(6))
    t = sw.Tensor(carrier, sw.Layout((2, 3)))
    with pytest.raises(error) as info:
        t.transpose(i, j)
    for subject in subjects:
        assert subject in str(info.value)
    assert carrier.version == 0


@pytest.mark.spec(f"{T}/reverse-three-modes", f"{T}#1")
def test_reverse_three_modes():
    carrier = sw.CPU(sw.Float32, values=[float(v) for v in range(24)])
    t = sw.Tensor(carrier, sw.Layout((2, 3, 4)))
    view = t.T
    assert view.shape == (4, 3, 2)
    assert view.carrier is carrier
    assert view.layout == sw.Layout((4, 3, 2), (6, 2, 1))
    assert np.array_equal(np.asarray(view), np.asarray(t).transpose(2, 1, 0))
    _, h = hierarchical()
    assert h.T.layout == h.permute(1, 0).layout


@pytest.mark.spec(f"{T}/keep-a-tensor-of-rank-0-or-1", f"{T}#1")
def test_keep_a_tensor_of_rank_0_or_1():
    carrier = sw.CPU(sw.Int32, values=range(8))
    for layout, offset in ((sw.Layout(()), 3), (sw.Layout(5, 1), 1), (sw.Layout((5,), (1,)), 2)):
        t = sw.Tensor(carrier, layout, offset)
        view = t.T
        assert view.layout == layout and view.offset == offset and view.carrier is carrier


@pytest.mark.spec(
    f"{RESHAPE}/reshape-a-compact-tensor", f"{RESHAPE}#1", f"{RESHAPE}#2", f"{RESHAPE}#3"
)
def test_reshape_a_compact_tensor():
    t = sw.arange(0, 6, dtype=sw.Int32)
    for view in (t.reshape((2, 3)), t.reshape(2, 3), t.reshape([2, 3]), t.reshape(-1, 3)):
        assert view.layout == sw.Layout((2, 3), (1, 2))
        assert view.tolist() == [[0, 2, 4], [1, 3, 5]]
        assert view.carrier is t.carrier and view.offset == 0
    assert t.reshape((3, -1)).shape == (3, 2)
    nested = t.reshape(((2, 1), 3))
    assert nested.shape == ((2, 1), 3)
    assert nested.layout == sw.Layout(((2, 1), 3), ((1, 0), 2))
    assert t.reshape(((-1, 1), 3)).shape == ((2, 1), 3)
    assert t.reshape(6).shape == 6 and t.reshape((6,)).shape == (6,)
    assert t.reshape(6).layout == t.layout
    # A factory's tensor reshapes back and forth, in its stored (column-major) order.
    m = sw.tensor([[0, 1, 2], [3, 4, 5]])
    assert m.reshape(6).tolist() == [0, 3, 1, 4, 2, 5]
    assert m.reshape(6).reshape(2, 3).tolist() == m.tolist()
    assert m.reshape((3, 2)).tolist() == fortran_reshape(m, (3, 2))
    scalar = sw.tensor([5]).reshape(())
    assert scalar.shape == () and scalar.tolist() == 5
    assert scalar.reshape(1, 1).tolist() == [[5]]


@pytest.mark.spec(f"{RESHAPE}/reshape-a-strided-view-with-holes", f"{RESHAPE}#1", f"{RESHAPE}#2")
def test_reshape_a_strided_view_with_holes():
    carrier, t = holes()
    view = t.reshape((2, 2, 3))
    assert view.layout == sw.Layout((2, 2, 3), (1, 2, 8))
    assert view.offset == 2 and view.carrier is carrier
    assert view.tolist() == fortran_reshape(t, (2, 2, 3))
    grouped = t.reshape(((2, 2), 3))
    assert grouped.layout == sw.Layout(((2, 2), 3), ((1, 2), 8))
    assert np.asarray(grouped).tolist() == fortran_reshape(t, (2, 2, 3))
    assert carrier.version == 0


@pytest.mark.spec(f"{RESHAPE}#3")
def test_an_empty_tensor_reshapes_to_any_shape_of_size_0():
    t = sw.Tensor(sw.CPU(sw.Float32, 4), sw.Layout((0, 3)), offset=4)
    for shape in ((3, 0), 0, ((2, 0), 5), (0, 2, 7)):
        view = t.reshape(shape)
        assert view.layout.size == 0 and view.offset == 4 and view.carrier is t.carrier
    with pytest.raises(ValueError, match="cannot be inferred"):
        t.reshape((0, 2, -1))  # any extent would do: ambiguous, as in PyTorch and NumPy
    assert np.asarray(t.reshape(((2, 0), 5))).shape == (2, 0, 5)


@pytest.mark.spec(f"{RESHAPE}/refuse-a-reshape-that-has-no-view", f"{RESHAPE}#5", f"{RESHAPE}#6")
def test_refuse_a_reshape_that_has_no_view():
    _, t = holes()
    m = sw.tensor([[1, 2, 3], [4, 5, 6]])
    broadcast = sw.tensor([[1], [2]]).broadcast_to((2, 3))
    for source, shape in ((t, 12), (m.T, 6), (t, (3, 4)), (broadcast, 6)):
        version = source.carrier.version
        layout = source.layout
        with pytest.raises(ValueError) as info:
            source.reshape(shape)
        message = str(info.value)
        assert "no view" in message and "relayout" in message and "sw.tensor(t)" in message
        assert str(layout) in message
        assert source.carrier.version == version and source.layout == layout
    # The copy the message names always reshapes.
    assert sw.tensor(m.T).reshape(6).tolist() == fortran_reshape(m.T, 6)


@pytest.mark.spec(f"{RESHAPE}/refuse-a-size-mismatch", f"{RESHAPE}#4", f"{RESHAPE}#6")
@pytest.mark.parametrize(
    ("shape", "subjects"),
    [
        ((4,), ["6 elements", "(2,3)", "(4)", "of 4 elements"]),
        ((2, (2, 2)), ["6 elements", "of 8 elements"]),
        ((2**62, 4), ["6 elements", "more than 2**63 - 1"]),
        ((-1, 4), ["6 elements", "-1", "cannot be inferred"]),
        ((-1, 0), ["cannot be inferred"]),
        ((-1, -1), ["more than one -1"]),
        ((2, -3), ["extent -3", "negative"]),
    ],
)
def test_refuse_a_size_mismatch(shape, subjects):
    carrier = sw.CPU(sw.Int32, values=range(6))
    t = sw.Tensor(carrier, sw.Layout((2, 3)))
    with pytest.raises(ValueError) as info:
        t.reshape(shape)
    for subject in subjects:
        assert subject in str(info.value)
    assert carrier.version == 0


@pytest.mark.spec(f"{RESHAPE}#3")
@pytest.mark.parametrize("shape", [(), (2.0, 3), ("6",), (None,), ((2, 3.5),)])
def test_refuse_a_shape_that_is_not_made_of_integers(shape):
    t = sw.arange(0, 6, dtype=sw.Int32)
    with pytest.raises(TypeError, match="reshape"):
        t.reshape(*shape)
