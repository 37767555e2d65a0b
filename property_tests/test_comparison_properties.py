"""Properties of the comparisons and true division (spec/autograd) for any layout
(nested, holes, stride 0, extents 0 and 1) at any offset over CPU, Generic, FileBacked
and Metal storage: each comparison gives the Bool values NumPy computes on copies of the
operands, with a tensor or a constant on either side; division gives NumPy's float32
quotients bit for bit (infinities and NaN included); and division's gradients are
PyTorch's."""

from __future__ import annotations

import operator

import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from hypothesis import given, settings

import strideweave as sw
from strideweave.kit import strategies as S

CMP = "autograd/comparisons-return-bool-tensors-and-record-no-gradient"
DIV = "autograd/true-division-takes-float32-operands"
CARRIERS = st.sampled_from([sw.CPU, sw.Generic, sw.FileBacked, sw.Metal])
ORDERINGS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
EQUALITIES = {"eq": operator.eq, "ne": operator.ne}


def flat(t: sw.Tensor) -> np.ndarray:
    """``t``'s values in flat colexicographic order, as NumPy values (a copy)."""
    return np.array(t, copy=True).flatten(order="F")


@st.composite
def operand_pairs(draw: st.DrawFn, dtypes: st.SearchStrategy[sw.DType], values_for=None):
    """Two tensors of one shape and dtype, each with its own layout, offset and carrier."""
    dtype = draw(dtypes)
    values_for = values_for or S.comparable_values
    a = draw(S.tensors(st.just(dtype), carrier_classes=CARRIERS, values_for=values_for))
    b = draw(
        S.tensors(
            st.just(dtype),
            layouts=S.layouts_of_shape(a.shape),
            carrier_classes=CARRIERS,
            values_for=values_for,
        )
    )
    return a, b


def assert_fresh_bool(result: sw.Tensor, *operands: sw.Tensor) -> None:
    on_metal = all(type(t.carrier) is sw.Metal for t in operands)
    assert type(result.carrier) is (sw.Metal if on_metal else sw.CPU)
    assert result.dtype == sw.Bool and result.offset == 0
    assert result.layout == sw.Layout(result.shape)
    assert result.autograd_ctx is None and not result.requires_grad


@pytest.mark.spec(
    f"{CMP}/compare-two-tensors-of-any-layout", f"{CMP}#1", f"{CMP}#2", f"{CMP}#3", f"{CMP}#4"
)
@settings(deadline=None)
@given(operand_pairs(st.sampled_from([sw.Float32, sw.Int32, sw.Bool])), st.data())
def test_comparisons_agree_with_numpy_for_any_layout(pair, data):
    a, b = pair
    versions = (a.carrier.version, b.carrier.version)
    x, y = flat(a), flat(b)
    comparisons = dict(EQUALITIES)
    if a.dtype != sw.Bool:
        comparisons.update(ORDERINGS)
    # A value of b's when it has one, so that equality happens.
    pool = flat(b).tolist() or data.draw(S.comparable_values(a.dtype, 1))
    constant = data.draw(st.sampled_from(pool), label="constant")
    for name, compare in comparisons.items():
        for result, operands, expected in [
            (compare(a, b), (a, b), compare(x, y)),
            (getattr(sw, name)(a, b), (a, b), compare(x, y)),
            (compare(a, constant), (a,), compare(x, np.array(constant, dtype=x.dtype))),
            (compare(constant, a), (a,), compare(np.array(constant, dtype=x.dtype), x)),
        ]:
            assert_fresh_bool(result, *operands)
            assert result.shape == a.shape
            np.testing.assert_array_equal(flat(result), expected, err_msg=name)
    assert (a.carrier.version, b.carrier.version) == versions


@pytest.mark.spec(f"{CMP}/compare-bool-tensors-for-equality-only", f"{CMP}#2")
@settings(deadline=None)
@given(operand_pairs(st.just(sw.Bool)), st.sampled_from(sorted(ORDERINGS)))
def test_orderings_refuse_bool_for_any_layout(pair, name):
    a, b = pair
    with pytest.raises(TypeError, match=f"{name}: dtype Bool is not supported"):
        ORDERINGS[name](a, b)


@pytest.mark.spec(f"{DIV}/divide-tensors-and-constants", f"{DIV}#1", f"{DIV}#2")
@settings(deadline=None)
@given(operand_pairs(st.just(sw.Float32)), st.sampled_from([2, -0.5, 0, 0.0, 3]))
def test_division_agrees_with_numpy_for_any_layout(pair, constant):
    a, b = pair
    x, y = flat(a), flat(b)
    c = np.float32(constant)
    with np.errstate(divide="ignore", invalid="ignore"):
        cases = [
            (a / b, (a, b), x / y),
            (sw.div(a, b), (a, b), x / y),
            (a / constant, (a,), x / c),
            (constant / a, (a,), c / x),
        ]
    for result, operands, expected in cases:
        on_metal = all(type(t.carrier) is sw.Metal for t in operands)
        assert type(result.carrier) is (sw.Metal if on_metal else sw.CPU)
        assert result.dtype == sw.Float32 and result.layout == sw.Layout(result.shape)
        np.testing.assert_array_equal(flat(result), expected.astype(np.float32))


@pytest.mark.spec(f"{DIV}/differentiate-division-as-pytorch-does", f"{DIV}#4")
@settings(deadline=None)
@given(operand_pairs(st.just(sw.Float32), S.nonzero_float_values), st.data())
def test_division_gradients_agree_with_torch_for_any_layout(pair, data):
    a, b = pair
    wants = data.draw(st.sampled_from([(True, True), (True, False), (False, True)]))
    a.requires_grad, b.requires_grad = wants
    y = (a / b + 2 / a + b / 4).sum()
    y.backward()
    ta = torch.tensor(flat(a), requires_grad=wants[0])
    tb = torch.tensor(flat(b), requires_grad=wants[1])
    (ta / tb + 2 / ta + tb / 4).sum().backward()
    for ours, theirs, wanted in [(a, ta, wants[0]), (b, tb, wants[1])]:
        if not wanted:
            assert ours.grad is None and theirs.grad is None
            continue
        assert ours.grad.shape == ours.shape
        np.testing.assert_allclose(flat(ours.grad), theirs.grad.numpy(), rtol=1e-6, atol=1e-7)
