"""autograd: true division (div, ``/``) and the comparisons (``==`` ... ``>=``)."""

import math

import pytest
import torch

import strideweave as sw
from strideweave._core import _testing

DIV = "autograd/true-division-takes-float32-operands"
CMP = "autograd/comparisons-return-bool-tensors-and-record-no-gradient"

COMPARISONS = {
    "eq": lambda p, q: p == q,
    "ne": lambda p, q: p != q,
    "lt": lambda p, q: p < q,
    "le": lambda p, q: p <= q,
    "gt": lambda p, q: p > q,
    "ge": lambda p, q: p >= q,
}


def holey_generic():
    """A (2, 3) Float32 view with holes and an offset over Generic storage: 1, 3, 5 / 2, 4, 6."""
    values = [9.0, 1.0, 9.0, 2.0, 9.0, 3.0, 9.0, 4.0, 9.0, 5.0, 9.0, 6.0]
    generic = sw.Generic(sw.Float32, values=values)
    return sw.Tensor(generic, sw.Layout((2, 3), (2, 4)), 1)


def is_fresh_canonical(t, dtype):
    return (
        type(t.carrier) is sw.CPU
        and t.offset == 0
        and t.layout == sw.Layout(t.shape)
        and t.is_mutable()
        and t.dtype == dtype
        and t.autograd_ctx is None
    )


def pointwise(f, x, y):
    if isinstance(x, list):
        return [pointwise(f, p, q) for p, q in zip(x, y, strict=True)]
    return f(x, y)


# -- true division ----------------------------------------------------------------------


@pytest.mark.spec(f"{DIV}/divide-tensors-and-constants", f"{DIV}#1", f"{DIV}#2", f"{DIV}#3")
def test_divide_tensors_and_constants():
    a = holey_generic()
    b = sw.tensor([[2.0, 4.0, 8.0], [16.0, 5.0, 3.0]])
    expected = pointwise(lambda p, q: p / q, a.tolist(), b.tolist())
    for quotient in (a / b, sw.div(a, b), sw.ops.div(a, b)):
        assert is_fresh_canonical(quotient, sw.Float32)
        got = quotient.tolist()
        for row_got, row_expected in zip(got, expected, strict=True):
            for g, e in zip(row_got, row_expected, strict=True):
                assert g == pytest.approx(e, rel=1e-7)
    assert (a / 4).tolist() == [[0.25, 0.75, 1.25], [0.5, 1.0, 1.5]]
    assert (1 / sw.tensor([2.0, 4.0, -0.5])).tolist() == [0.5, 0.25, -2.0]
    assert sw.div(2, sw.tensor([4.0])).tolist() == [0.5]
    assert a.carrier.version == 0
    assert "div" in sw.__all__ and "div" in sw.ops.__all__ and sw.ops.div is sw.div


@pytest.mark.spec(f"{DIV}/divide-by-zero", f"{DIV}#1")
def test_divide_by_zero():
    t = sw.tensor([1.0, -1.0, 0.0])
    for quotient in (t / sw.zeros(3), t / 0, t / 0.0):
        got = quotient.tolist()
        assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2])
    assert (1 / sw.tensor([0.0])).tolist() == [math.inf]


@pytest.mark.spec(f"{DIV}/refuse-int32-division", f"{DIV}#2")
def test_refuse_int32_division():
    i = sw.tensor([4, 2], dtype=sw.Int32)
    x = sw.tensor([1.0, 2.0])
    x.requires_grad = True
    for divide in (lambda: i / i, lambda: i / 2, lambda: 2 / i, lambda: sw.div(i, i)):
        with pytest.raises(TypeError, match="div: dtype Int32 is not supported") as caught:
            divide()
        assert "no promotion" in str(caught.value)
    with pytest.raises(TypeError, match="div: dtype Int32"):
        sw.div(x.detach(), i)
    with pytest.raises(ValueError, match="div: the operands' shapes differ: 2 and 3"):
        x / sw.tensor([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="div: dtype Bool"):
        sw.tensor([True]) / sw.tensor([True])
    point = sw.compound([("x", sw.Float32), ("y", sw.Float32)])
    planar = sw.Tensor.from_planes(point, [sw.tensor([1.0]), sw.tensor([3.0])])
    with pytest.raises(NotImplementedError, match="div is not implemented for a multi-subtensor"):
        planar / 2
    assert i.carrier.version == 0 and x.grad is None
    with pytest.raises(TypeError):
        x / "2"


@pytest.mark.spec(f"{DIV}/differentiate-division-as-pytorch-does", f"{DIV}#4", f"{DIV}#3")
def test_differentiate_division_as_pytorch_does():
    a_values = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
    b_values = [[2.0, 0.25, -3.0], [7.0, -0.5, 1.25]]
    a = sw.tensor(a_values)
    b = sw.tensor(b_values)
    a.requires_grad = b.requires_grad = True
    q = a / b
    assert q.autograd_ctx.name == "div"
    assert (2 / a).autograd_ctx.name == "div" and (a / 4).autograd_ctx.name == "div"
    cotangent = [[1.0, -1.0, 0.5], [2.0, 3.0, -0.25]]
    y = q * (2 / a) + a / 4 + b / a
    y.backward(sw.tensor(cotangent))

    ta = torch.tensor(a_values, requires_grad=True)
    tb = torch.tensor(b_values, requires_grad=True)
    ty = (ta / tb) * (2 / ta) + ta / 4 + tb / ta
    ty.backward(torch.tensor(cotangent))
    for ours, theirs in [(a.grad, ta.grad), (b.grad, tb.grad)]:
        for row, expected in zip(ours.tolist(), theirs.tolist(), strict=True):
            assert row == pytest.approx(expected, rel=1e-6)
    assert not a.grad.requires_grad and a.grad.autograd_ctx is None


@pytest.mark.spec(f"{DIV}#4")
def test_backward_through_a_modified_divisor_fails():
    a = sw.tensor([1.0, 2.0])
    b = sw.tensor([4.0, 8.0])
    a.requires_grad = True
    q = (a / b).sum()
    b.carrier.write(0, 5.0)
    with pytest.raises(RuntimeError, match="div"):
        q.backward()
    assert a.grad is None
    r = (3 / a).sum()
    a.detach().carrier.write(1, 2.0)
    with pytest.raises(RuntimeError, match="div"):
        r.backward()


# -- comparisons ------------------------------------------------------------------------


@pytest.mark.spec(f"{CMP}/compare-two-tensors-of-any-layout", f"{CMP}#1", f"{CMP}#4", f"{CMP}#6")
def test_compare_two_tensors_of_any_layout():
    a = holey_generic()
    b = sw.tensor([[1.0, 4.0, 5.0], [3.0, 4.0, 0.5]])
    i = sw.tensor([[-1, 2, 3]], dtype=sw.Int32)
    j = sw.tensor([[1, 2, -3]], dtype=sw.Int32)
    for name, compare in COMPARISONS.items():
        for x, y in [(a, b), (i, j), (j, i)]:
            expected = pointwise(compare, x.tolist(), y.tolist())
            for result in (compare(x, y), getattr(sw, name)(x, y), getattr(sw.ops, name)(x, y)):
                assert is_fresh_canonical(result, sw.Bool), name
                assert result.shape == x.shape
                assert result.tolist() == expected, name
    assert (a == b).tolist() == [[True, False, True], [False, True, False]]
    assert (i < j).tolist() == [[True, False, False]]  # signed
    assert a.carrier.version == 0 and b.carrier.version == 0


@pytest.mark.spec(
    f"{CMP}/compare-with-a-constant-on-either-side", f"{CMP}#1", f"{CMP}#2", f"{CMP}#6"
)
def test_compare_with_a_constant_on_either_side():
    t = sw.tensor([1.0, 2.0, 3.0])
    assert (t < 2).tolist() == [True, False, False]
    assert (2 < t).tolist() == [False, False, True]
    assert (t == 1).tolist() == [True, False, False]
    assert (3 >= t).tolist() == [True, True, True]
    assert (2.5 > t).tolist() == [True, True, False]
    assert (1 != t).tolist() == [False, True, True]
    assert (t <= 2.0).tolist() == [True, True, False]
    assert sw.lt(2, t).tolist() == [False, False, True]
    assert sw.ge(2, t).tolist() == [True, True, False]
    assert sw.eq(t, 3).tolist() == [False, False, True]
    assert (t == 0.1).tolist() == [False, False, False]
    assert (sw.tensor([0.1]) == 0.1).tolist() == [True]  # the constant as Float32
    i = sw.tensor([-5, 5], dtype=sw.Int32)
    assert (i > 0).tolist() == [False, True]
    assert (0 > i).tolist() == [True, False]
    with pytest.raises(TypeError, match=r"2\.5"):
        i < 2.5  # noqa: B015
    with pytest.raises(ValueError, match=str(2**40)):
        i == 2**40  # noqa: B015
    with pytest.raises(TypeError):
        t < "2"  # noqa: B015
    with pytest.raises(TypeError, match="lt: operand '2'"):
        sw.lt(t, "2")
    with pytest.raises(TypeError, match="at least one operand must be a Tensor"):
        sw.eq(1, 2)
    for name in COMPARISONS:
        assert name in sw.__all__ and name in sw.ops.__all__
        assert getattr(sw.ops, name) is getattr(sw, name)


@pytest.mark.spec(f"{CMP}/compare-nan", f"{CMP}#3")
def test_compare_nan():
    t = sw.tensor([math.nan, 1.0])
    assert (t == t).tolist() == [False, True]
    assert (t != t).tolist() == [True, False]
    for name in ("lt", "le", "gt", "ge"):
        compare = COMPARISONS[name]
        assert compare(t, t).tolist()[0] is False, name
        assert compare(t, 0.0).tolist()[0] is False, name
        assert compare(0.0, t).tolist()[0] is False, name
    assert (t == math.nan).tolist() == [False, False]
    assert (t != math.nan).tolist() == [True, True]


@pytest.mark.spec(f"{CMP}/compare-bool-tensors-for-equality-only", f"{CMP}#2")
def test_compare_bool_tensors_for_equality_only():
    p = sw.tensor([True, False, True])
    q = sw.tensor([True, True, False])
    assert (p == q).tolist() == [True, False, False]
    assert (p != q).tolist() == [False, True, True]
    assert (p == True).tolist() == [True, False, True]  # noqa: E712
    assert sw.ne(False, p).tolist() == [True, False, True]
    for name in ("lt", "le", "gt", "ge"):
        with pytest.raises(TypeError, match=f"{name}: dtype Bool is not supported"):
            COMPARISONS[name](p, q)
    with pytest.raises(TypeError, match="Bool"):
        p == 1  # noqa: B015
    with pytest.raises(TypeError, match="eq: the operands' dtypes differ: Bool and Int32"):
        p == sw.tensor([1, 0, 1], dtype=sw.Int32)  # noqa: B015
    assert p.carrier.version == 0 and q.carrier.version == 0


def mismatches():
    f = sw.tensor([1.0, 2.0])
    g = sw.tensor([1.0, 2.0, 3.0])
    i = sw.tensor([1, 2], dtype=sw.Int32)
    point = sw.compound([("x", sw.Float32), ("y", sw.Float32)])
    planar = sw.Tensor.from_planes(point, [sw.tensor([1.0, 2.0]), sw.tensor([3.0, 4.0])])
    return [
        (f, g, ValueError, r"{op}: the operands' shapes differ: 2 and 3"),
        (f, i, TypeError, r"{op}: the operands' dtypes differ: Float32 and Int32"),
        (planar, f, NotImplementedError, r"{op} is not implemented for a multi-subtensor"),
        (f, planar, NotImplementedError, r"{op} is not implemented for a multi-subtensor"),
    ]


@pytest.mark.spec(f"{CMP}/refuse-mismatched-comparands", f"{CMP}#2")
@pytest.mark.parametrize("case", range(4))
def test_refuse_mismatched_comparands(case):
    a, b, error, message = mismatches()[case]
    carriers = [p.carrier for t in (a, b) for p in (t.planes if t.is_multi_subtensor else [t])]
    before = [c.version for c in carriers]
    for name, compare in COMPARISONS.items():
        with pytest.raises(error, match=message.format(op=name)):
            compare(a, b)
        with pytest.raises(error, match=message.format(op=name)):
            getattr(sw, name)(a, b)
    assert [c.version for c in carriers] == before


@pytest.mark.spec(f"{CMP}/refuse-mismatched-comparands", f"{CMP}#2")
def test_refuse_a_released_comparand():
    carrier = sw.CPU(sw.Float32, values=[1.0, 2.0])
    t = sw.Tensor(carrier, sw.Layout(2))
    carrier.release()
    for compare in (lambda: t == sw.tensor([1.0, 1.0]), lambda: 1 < t):
        with pytest.raises(RuntimeError, match="CPU carrier #"):
            compare()


@pytest.mark.spec(f"{CMP}/record-no-gradient-through-a-comparison", f"{CMP}#5")
def test_record_no_gradient_through_a_comparison():
    x = sw.tensor([1.0, 2.0])
    x.requires_grad = True
    y = x * 2
    for result in (x < y, x == 1, 2 >= y, sw.ne(y, x), y > 0.5):
        assert result.autograd_ctx is None
        assert result.requires_grad is False
        assert result.is_leaf
    # The comparison is still an operation with a name: profiling sees it.
    with sw.profile() as prof:
        x <= y  # noqa: B015
    assert "le" in [event.name for event in prof.events]


@pytest.mark.spec(f"{CMP}/keep-tensors-hashable-by-identity", f"{CMP}#7")
def test_keep_tensors_hashable_by_identity():
    a = sw.tensor([1.0, 2.0])
    b = sw.tensor([1.0, 2.0])
    assert hash(a) == hash(a) and isinstance(hash(a), int)
    assert len({a, b}) == 2 and a in {a} and b in {a, b}
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    assert (a == None) is False  # noqa: E711
    assert (a != None) is True  # noqa: E711
    assert (a == "text") is False and (a != object()) is True
    assert (a == b).tolist() == [True, True]


@pytest.mark.spec(f"{CMP}/compare-on-metal", f"{CMP}#4", f"{DIV}#2")
def test_compare_and_divide_on_metal(metal_latency):
    values = [0.5 * i - 2 for i in range(14)]
    a = sw.Tensor(sw.Metal(sw.Float32, values=values), sw.Layout((2, 3), (1, 4)), 1)
    b = sw.Tensor(sw.Metal(sw.Float32, values=values[::-1]), sw.Layout((2, 3), (3, 1)), 2)
    a_cpu = sw.Tensor(sw.CPU(sw.Float32, values=values), a.layout, a.offset)
    b_cpu = sw.Tensor(sw.CPU(sw.Float32, values=values[::-1]), b.layout, b.offset)
    metal_latency(20_000)
    results = {name: compare(a, b) for name, compare in COMPARISONS.items()}
    results["lt constant"] = a < 0.5
    results["constant lt"] = 0.5 < a
    results["div"] = a / b
    results["constant div"] = 1 / a
    assert _testing.metal_pending() > 0  # submitted without waiting
    expected = {name: compare(a_cpu, b_cpu) for name, compare in COMPARISONS.items()}
    expected["lt constant"] = a_cpu < 0.5
    expected["constant lt"] = 0.5 < a_cpu
    expected["div"] = a_cpu / b_cpu
    expected["constant div"] = 1 / a_cpu
    for name, result in results.items():
        assert type(result.carrier) is sw.Metal, name
        assert result.layout == sw.Layout(result.shape) and result.offset == 0
        assert result.dtype == expected[name].dtype
        assert result.tolist() == expected[name].tolist(), name
    mixed = a == b_cpu
    assert type(mixed.carrier) is sw.CPU and mixed.tolist() == expected["eq"].tolist()
    i = sw.Tensor(sw.Metal(sw.Int32, values=[-3, 4]), sw.Layout(2))
    p = sw.Tensor(sw.Metal(sw.Bool, values=[True, False]), sw.Layout(2))
    assert (i < 0).tolist() == [True, False] and type((i < 0).carrier) is sw.Metal
    assert (p == p).tolist() == [True, True] and type((p != p).carrier) is sw.Metal


@pytest.mark.spec(f"{DIV}#4", "autograd/operation-results-are-fresh-canonical-cpu-tensors#6")
def test_division_gradients_of_metal_leaves_stay_on_metal():
    x = sw.Tensor(sw.Metal(sw.Float32, values=[1.0, 2.0, 4.0]), sw.Layout(3))
    y = sw.Tensor(sw.Metal(sw.Float32, values=[0.5, 8.0, -2.0]), sw.Layout(3))
    x.requires_grad = y.requires_grad = True
    (x / y + 1 / x).sum().backward()
    assert type(x.grad.carrier) is sw.Metal and type(y.grad.carrier) is sw.Metal
    assert x.grad.tolist() == pytest.approx([1 / 0.5 - 1, 1 / 8 - 1 / 4, -1 / 2 - 1 / 16])
    assert y.grad.tolist() == pytest.approx([-1 / 0.25, -2 / 64, -4 / 4])
