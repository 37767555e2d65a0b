"""autograd: T, transpose, permute and reshape are recorded views, checked against PyTorch."""

import numpy as np
import pytest
import torch

import strideweave as sw

VIEWS = "autograd/layout-views-are-recorded-views"


def leaf(shape):
    size = int(np.prod(shape))
    values = (np.arange(size, dtype=np.float32) * 0.5 - 3.0).reshape(shape)
    t = sw.tensor(values.tolist(), dtype=sw.Float32)
    t.requires_grad = True
    return t


def weights(shape):
    size = int(np.prod(shape))
    return (np.arange(size, dtype=np.float32) % 7 + 1).reshape(shape)


def backward_through(x, view):
    """x.grad after backward from the weighted sum of view(x), and view(x) itself."""
    y = view(x)
    w = weights(np.asarray(y.detach()).shape)
    # The weights under the canonical layout of y's shape (hierarchical or not).
    flat = w.reshape(-1, order="F").tolist()
    (y * sw.Tensor(sw.CPU(sw.Float32, values=flat), sw.Layout(y.shape))).sum().backward()
    return y, np.asarray(x.grad), w


def torch_grad(x, view, w):
    xt = torch.tensor(np.asarray(x.detach()), requires_grad=True)
    (view(xt) * torch.from_numpy(w)).sum().backward()
    return xt.grad.numpy()


def colex_reshape(xt, shape):
    """Reshape in column-major (first mode fastest) order, as strideweave's reshape."""
    reverse = tuple(reversed(range(xt.dim())))
    back = tuple(reversed(range(len(shape))))
    return xt.permute(reverse).reshape(tuple(reversed(shape))).permute(back)


@pytest.mark.spec(
    f"{VIEWS}/match-pytorchs-gradients-of-t-transpose-and-permute",
    f"{VIEWS}#1",
    f"{VIEWS}#2",
    f"{VIEWS}#3",
)
@pytest.mark.parametrize(
    ("ours", "theirs", "name"),
    [
        (lambda x: x.T, lambda x: x.permute(2, 1, 0), "permute"),
        (lambda x: x.transpose(0, 2), lambda x: torch.transpose(x, 0, 2), "transpose"),
        (lambda x: x.transpose(-1, 1), lambda x: torch.transpose(x, -1, 1), "transpose"),
        (lambda x: x.permute(2, 0, 1), lambda x: torch.permute(x, (2, 0, 1)), "permute"),
        (lambda x: x.permute(2, 0, 1).T, lambda x: x.permute(2, 0, 1).permute(2, 1, 0), "permute"),
    ],
)
def test_match_pytorchs_gradients_of_t_transpose_and_permute(ours, theirs, name):
    x = leaf((2, 3, 4))
    y, grad, w = backward_through(x, ours)
    assert y.autograd_ctx.name == name
    assert y.carrier is x.carrier
    assert np.array_equal(
        np.asarray(y.detach()), theirs(torch.from_numpy(np.asarray(x.detach()))).numpy()
    )
    assert np.array_equal(grad, torch_grad(x, theirs, w))
    assert x.grad.autograd_ctx is None and not x.grad.requires_grad


@pytest.mark.spec(
    f"{VIEWS}/match-pytorchs-gradient-of-reshape", f"{VIEWS}#1", f"{VIEWS}#2", f"{VIEWS}#3"
)
@pytest.mark.parametrize("shape", [(4, 6), (24,), (3, 2, 4), (2, 12)])
def test_match_pytorchs_gradient_of_reshape(shape):
    x = leaf((2, 3, 4))
    y, grad, w = backward_through(x, lambda t: t.reshape(shape))
    assert y.autograd_ctx.name == "reshape"
    assert y.carrier is x.carrier
    theirs = colex_reshape(torch.from_numpy(np.asarray(x.detach())), shape).numpy()
    assert np.array_equal(np.asarray(y.detach()), theirs)
    assert np.array_equal(grad, torch_grad(x, lambda t: colex_reshape(t, shape), w))


@pytest.mark.spec(f"{VIEWS}#1")
def test_a_hierarchical_reshape_records_the_same_node():
    x = leaf((2, 3, 4))
    y = x.reshape(((2, 3), (2, 2)))
    assert y.autograd_ctx.name == "reshape" and y.shape == ((2, 3), (2, 2))
    (y * 2.0).sum().backward()
    assert np.array_equal(np.asarray(x.grad), np.full((2, 3, 4), 2.0, dtype=np.float32))


@pytest.mark.spec(f"{VIEWS}/reshape-a-cotangent-that-has-no-view", f"{VIEWS}#2", f"{VIEWS}#3")
def test_reshape_a_cotangent_that_has_no_view():
    x = leaf((2, 3))
    y, grad, w = backward_through(x, lambda t: t.reshape((3, 2)).T)
    assert [n.name for n in [y.autograd_ctx, y.autograd_ctx.next_nodes[0]]] == [
        "permute",
        "reshape",
    ]
    theirs = torch_grad(x, lambda t: colex_reshape(t, (3, 2)).T, w)
    assert np.array_equal(grad, theirs)


@pytest.mark.spec(f"{VIEWS}#1")
def test_record_nothing_without_grad():
    x = leaf((2, 3))
    with sw.no_grad():
        for view in (x.T, x.transpose(0, 1), x.permute(1, 0), x.reshape(6)):
            assert view.autograd_ctx is None and not view.requires_grad
    plain = sw.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert plain.T.autograd_ctx is None and plain.reshape(4).autograd_ctx is None
