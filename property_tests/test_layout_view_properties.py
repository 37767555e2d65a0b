"""Layout views (T, transpose, permute, reshape) for any generated tensor.

spec/core-tensor-representation and spec/autograd: permuting modes and reshaping
through composition give views over the same storage whose values NumPy computes
from the tensor's values, reshape refuses exactly when no view exists, and the
gradients through them are PyTorch's.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

PERMUTE = "core-tensor-representation/permute-reorders-the-top-level-modes"
TRANSPOSE = "core-tensor-representation/transpose-swaps-two-top-level-modes"
T = "core-tensor-representation/t-reverses-the-top-level-modes"
RESHAPE = "core-tensor-representation/reshape-is-a-view-through-composition"
GRADS = "autograd/layout-views-are-recorded-views"


def modes_of(shape) -> list:
    """The top-level modes of a shape: one for an integral shape."""
    return [shape] if isinstance(shape, int) else list(shape)


def leaf_axes(shape, order) -> list[int]:
    """The NumPy axis order that moves the leaf modes of top-level modes as ``order`` does."""
    modes = modes_of(shape)
    starts = [0]
    for mode in modes:
        starts.append(starts[-1] + len(S.flatten(mode)))
    return [a for m in order for a in range(starts[m], starts[m + 1])]


def leaf_extents(shape) -> list[int]:
    return S.flatten(shape)


def flat_values(t: sw.Tensor) -> list:
    """The tensor's values in flat (colexicographic) order."""
    return np.asarray(t).reshape(-1, order="F").tolist()


@st.composite
def tensors_and_permutations(draw, tensors=None):
    t = draw(S.tensors() if tensors is None else tensors)
    order = draw(st.permutations(range(len(modes_of(t.shape)))))
    signed = [m - len(order) if draw(st.booleans()) else m for m in order]
    return t, list(order), signed


@pytest.mark.spec(f"{PERMUTE}#1", f"{PERMUTE}#2", f"{PERMUTE}#3")
@given(tensors_and_permutations())
def test_permute_moves_whole_modes_and_inverts(case):
    """The view's values are NumPy's transpose of the leaf axes; the inverse permutation
    gives back the layout and the values; nothing is read or written."""
    t, order, signed = case
    version = t.carrier.version
    view = t.permute(*signed)
    assert view.carrier is t.carrier and view.offset == t.offset
    modes = modes_of(t.shape)
    if isinstance(t.shape, tuple):
        assert view.shape == tuple(modes[m] for m in order)
    else:
        assert view.layout == t.layout
    assert view.layout.size == t.layout.size and view.layout.cosize == t.layout.cosize
    expected = np.asarray(t).transpose(leaf_axes(t.shape, order))
    assert np.asarray(view).tolist() == expected.tolist()
    inverse = [order.index(m) for m in range(len(order))]
    back = view.permute(inverse)
    assert back.layout == t.layout and back.offset == t.offset
    assert back.tolist() == t.tolist()
    assert t.carrier.version == version


@pytest.mark.spec(f"{TRANSPOSE}#1", f"{T}#1")
@given(S.tensors(), st.data())
def test_transpose_and_t_are_permutations(t, data):
    """transpose(i, j) is permute with i and j swapped; T is permute of the reversed modes."""
    rank = len(modes_of(t.shape))
    reverse = list(reversed(range(rank)))
    assert t.T.layout == t.permute(reverse).layout
    if rank == 0:
        return
    i = data.draw(st.integers(-rank, rank - 1))
    j = data.draw(st.integers(-rank, rank - 1))
    order = list(range(rank))
    order[i], order[j] = order[j], order[i]
    view = t.transpose(i, j)
    assert view.layout == t.permute(order).layout and view.carrier is t.carrier


def affine_strides(layout: sw.Layout, shape) -> list[int] | None:
    """The one stride per leaf of ``shape`` that reproduces ``layout``'s flat order, if any:
    the oracle for whether a reshape to ``shape`` has a view (brute force)."""
    extents = leaf_extents(shape)
    strides, weight = [], 1
    for e in extents:
        strides.append(layout(weight) if 1 < e and weight < layout.size else 0)
        weight *= e
    for i in range(layout.size):
        coordinate = S.colex_coordinate(i, extents)
        if layout(i) != sum(c * d for c, d in zip(coordinate, strides, strict=True)):
            return None
    return strides


# Mostly tensors of several elements (extents 2 to 4), so that refusals are common too.
SEVERAL = S.tensors(layouts=S.layouts(extents=st.integers(2, 4))) | S.tensors()


@st.composite
def tensors_and_shapes(draw):
    t = draw(SEVERAL)
    return t, draw(S.shapes_of_size(t.layout.size))


@pytest.mark.spec(f"{RESHAPE}#1", f"{RESHAPE}#2", f"{RESHAPE}#5", f"{RESHAPE}#6")
@given(tensors_and_shapes())
def test_reshape_is_a_view_exactly_when_one_exists(case):
    """reshape succeeds exactly when one stride per leaf reproduces the flat order; the
    view then holds NumPy's column-major reshape of the values, at the same offset over
    the same carrier; otherwise ValueError names relayout and nothing changed."""
    t, shape = case
    version = t.carrier.version
    strides = affine_strides(t.layout, shape)
    if strides is None:
        with pytest.raises(ValueError) as info:
            t.reshape(shape)
        assert "no view" in str(info.value) and "relayout" in str(info.value)
    else:
        view = t.reshape(shape)
        assert view.shape == shape
        assert view.carrier is t.carrier and view.offset == t.offset
        if t.layout.size > 0:
            assert [d for e, d in view.layout.leaf_modes if e > 1] == [
                d for e, d in zip(leaf_extents(shape), strides, strict=True) if e > 1
            ]
        expected = np.asarray(t).reshape(leaf_extents(shape), order="F")
        assert np.asarray(view).tolist() == expected.tolist()
        assert flat_values(view) == flat_values(t)
    assert t.carrier.version == version


@pytest.mark.spec(f"{RESHAPE}#1", f"{RESHAPE}#2")
@given(S.tensors())
def test_reshape_to_the_own_shape_or_the_flat_size(t):
    """Reshaping to the tensor's own shape always has a view (its own layout, up to
    the strides of extent-1 modes); so does the flat shape exactly when the layout
    coalesces to one mode."""
    same = t.reshape(t.shape)
    assert same.shape == t.shape
    assert np.asarray(same).tolist() == np.asarray(t).tolist()
    if t.layout.size > 0:
        assert [d for e, d in same.layout.leaf_modes if e > 1] == [
            d for e, d in t.layout.leaf_modes if e > 1
        ]
    one_mode = isinstance(sw.coalesce(t.layout).shape, int)
    if one_mode:
        assert t.reshape(t.layout.size).tolist() == flat_values(t)
    else:
        with pytest.raises(ValueError, match="no view"):
            t.reshape(t.layout.size)


@pytest.mark.spec(f"{PERMUTE}#1", f"{RESHAPE}#1")
@given(tensors_and_permutations(S.tensors(dtypes=st.just(sw.Int32))), st.data())
def test_views_share_the_storage(case, data):
    """A value written through the carrier is read through every view of that slot."""
    t, order, _ = case
    if t.layout.size == 0:
        return
    flat = data.draw(S.coordinates(t.layout))
    slot = t.offset + t.layout(flat)
    t.carrier.write(slot, -12345)
    views = [t.permute(order), t.T]
    reshaped = data.draw(S.shapes_of_size(t.layout.size))
    if affine_strides(t.layout, reshaped) is not None:
        views.append(t.reshape(reshaped))
    for view in views:
        assert view.carrier is t.carrier
        assert -12345 in flat_values(view)
    assert flat_values(t)[flat] == -12345


@st.composite
def float_leaves_and_permutations(draw):
    t = draw(S.tensors(dtypes=st.just(sw.Float32), layouts=S.injective_layouts()))
    t.requires_grad = True
    order = draw(st.permutations(range(len(modes_of(t.shape)))))
    return t, list(order)


@pytest.mark.spec(f"{GRADS}#2", f"{GRADS}#3")
@given(float_leaves_and_permutations(), st.data())
def test_gradients_through_layout_views_are_pytorchs(case, data):
    """The gradient of a weighted sum through permute, and then through reshape where it
    has a view, equals PyTorch's for the same values and weights."""
    x, order = case
    values = np.asarray(x.detach())
    reshaped = data.draw(S.shapes_of_size(x.layout.size))
    y = x.permute(order)
    axes = leaf_axes(x.shape, order)
    reshape = affine_strides(y.layout, reshaped) is not None
    if reshape:
        y = y.reshape(reshaped)
    extents = [e for e, _ in y.layout.leaf_modes]
    w = (np.arange(math.prod(extents), dtype=np.float32) % 5 + 1).reshape(extents)
    weights = sw.Tensor(
        sw.CPU(sw.Float32, values=w.reshape(-1, order="F").tolist()), sw.Layout(y.shape)
    )
    (y * weights).sum().backward()

    xt = torch.tensor(values, requires_grad=True)
    yt = xt.permute(axes)
    if reshape:
        yt = yt.permute(tuple(reversed(range(yt.dim())))).reshape(tuple(reversed(extents)))
        yt = yt.permute(tuple(reversed(range(yt.dim()))))
    (yt * torch.from_numpy(w)).sum().backward()
    assert np.asarray(x.grad).tolist() == xt.grad.numpy().tolist()
