"""autograd: the math operations (add, sub, mul, neg, sum) and their errors."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

NAME = "autograd/every-operation-is-an-operation-with-a-name"
ELEMENTWISE = "autograd/elementwise-operations-take-operands-of-equal-shape-and-dtype"
FRESH = "autograd/operation-results-are-fresh-canonical-cpu-tensors"
SUM = "autograd/sum-reduces-over-top-level-modes"
VIEWS = "autograd/broadcast-and-indexing-are-recorded-views"


def nested(f, *xs):
    """f applied leaf by leaf to nested lists of equal structure."""
    if isinstance(xs[0], list):
        return [nested(f, *items) for items in zip(*xs, strict=True)]
    return f(*xs)


def close(actual, expected):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            close(a, e)
    else:
        assert math.isclose(actual, expected, rel_tol=1e-6, abs_tol=1e-6), (actual, expected)


def leaf(values):
    t = sw.tensor(values, dtype=sw.Float32)
    t.requires_grad = True
    return t


def is_fresh_canonical(t):
    return (
        type(t.carrier) is sw.CPU
        and t.offset == 0
        and t.layout == sw.Layout(t.shape)
        and t.is_mutable()
        and t.autograd_ctx is None
    )


@pytest.mark.spec(f"{NAME}/name-the-node-of-each-operation", f"{NAME}#1")
def test_name_the_node_of_each_operation():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    results = {
        "add": x + x,
        "sub": x - 1,
        "mul": 2 * x,
        "neg": -x,
        "sum": x.sum(),
        "broadcast_to": x[0:1].broadcast_to((1, 3, 2)),
        "index": x[1],
    }
    for name, result in results.items():
        assert result.autograd_ctx.name == name
        assert isinstance(result.autograd_ctx, sw.autograd.Node)
    assert x.autograd_ctx is None
    assert (x * x).autograd_ctx.next_nodes[0].name == "accumulate_grad"


@pytest.mark.spec(f"{NAME}/reach-the-operations-from-the-module-and-the-operators", f"{NAME}#2")
def test_reach_the_operations_from_the_module_and_the_operators():
    a = sw.tensor([1.0, 2.0, 3.0])
    b = sw.tensor([4.0, 5.0, 7.0])
    for module_op, operator in [
        (sw.add, lambda p, q: p + q),
        (sw.sub, lambda p, q: p - q),
        (sw.mul, lambda p, q: p * q),
    ]:
        name = module_op.__name__
        assert getattr(sw.ops, name) is module_op
        assert module_op(a, b).tolist() == operator(a, b).tolist()
        assert getattr(sw.ops, name)(a, b).tolist() == operator(a, b).tolist()
    assert sw.neg(a).tolist() == (-a).tolist() == sw.ops.neg(a).tolist() == [-1.0, -2.0, -3.0]
    assert sw.sum(a).tolist() == a.sum().tolist() == sw.ops.sum(a).tolist() == 6.0
    for name in ["add", "sub", "mul", "neg", "sum"]:
        assert name in sw.__all__ and name in sw.ops.__all__


@pytest.mark.spec(f"{ELEMENTWISE}/combine-two-tensors-of-any-layout", f"{ELEMENTWISE}#1")
def test_combine_two_tensors_of_any_layout():
    # A strided view with a hole and an offset over Generic storage.
    values = [9.0, 1.0, 9.0, 2.0, 9.0, 3.0, 9.0, 4.0, 9.0, 5.0, 9.0, 6.0]
    generic = sw.Generic(sw.Float32, values=values)
    a = sw.Tensor(generic, sw.Layout((2, 3), (2, 4)), 1)
    b = sw.tensor([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])
    assert a.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    assert (a + b).tolist() == [[11.0, 23.0, 35.0], [42.0, 54.0, 66.0]]
    assert (b - a).tolist() == [[9.0, 17.0, 25.0], [38.0, 46.0, 54.0]]
    assert (a * b).tolist() == [[10.0, 60.0, 150.0], [80.0, 200.0, 360.0]]
    assert generic.version == 0


@pytest.mark.spec(f"{ELEMENTWISE}/combine-two-tensors-of-any-layout", f"{FRESH}#1", f"{FRESH}#2")
@settings(max_examples=60, deadline=None)
@given(S.tensors(dtypes=st.just(sw.Float32)), st.data())
def test_operations_on_any_layout_and_carrier(a, data):
    b = data.draw(S.tensors(dtypes=st.just(sw.Float32), layouts=st.just(a.layout)))
    before = (a.carrier.version, b.carrier.version)
    x, y = a.tolist(), b.tolist()
    if not isinstance(x, list):
        x, y = [x], [y]
    for result, expected in [
        (a + b, nested(lambda p, q: p + q, x, y)),
        (a - b, nested(lambda p, q: p - q, x, y)),
        (a * b, nested(lambda p, q: p * q, x, y)),
        (-a, nested(lambda p: -p, x)),
        (a * 0.5 + 1, nested(lambda p: p * 0.5 + 1, x)),
    ]:
        assert result.shape == a.shape
        assert is_fresh_canonical(result)
        got = result.tolist()
        close(got if isinstance(got, list) else [got], expected)
    total = a.sum()
    assert total.shape == ()
    flat = []
    nested(flat.append, x)
    assert math.isclose(total.tolist(), sum(flat), rel_tol=1e-5, abs_tol=1e-3)
    assert (a.carrier.version, b.carrier.version) == before


@pytest.mark.spec(
    f"{ELEMENTWISE}/combine-a-tensor-and-a-constant", f"{ELEMENTWISE}#1", f"{ELEMENTWISE}#4"
)
def test_combine_a_tensor_and_a_constant():
    t = sw.tensor([1.0, 2.0, 4.0])
    assert (t + 1).tolist() == [2.0, 3.0, 5.0]
    assert (2 * t).tolist() == [2.0, 4.0, 8.0]
    assert (1 - t).tolist() == [0.0, -1.0, -3.0]
    assert (t - 1.5).tolist() == [-0.5, 0.5, 2.5]
    assert sw.sub(1, t).tolist() == [0.0, -1.0, -3.0]
    assert sw.mul(t, 0.5).tolist() == [0.5, 1.0, 2.0]
    i = sw.tensor([1, 2], dtype=sw.Int32)
    assert (i * 3).tolist() == [3, 6]
    with pytest.raises(TypeError, match=r"2\.5"):
        i + 2.5
    with pytest.raises(ValueError, match=str(2**40)):
        i + 2**40
    with pytest.raises(TypeError):
        t + "1"
    with pytest.raises(TypeError, match="add: operand '1'"):
        sw.add(t, "1")


@pytest.mark.spec(f"{ELEMENTWISE}/wrap-int32-arithmetic", f"{ELEMENTWISE}#2")
def test_wrap_int32_arithmetic():
    big = sw.tensor([2**31 - 1, -(2**31)], dtype=sw.Int32)
    assert (big + 1).tolist() == [-(2**31), -(2**31) + 1]
    assert (big - 1).tolist() == [2**31 - 2, 2**31 - 1]
    assert (big * 2).tolist() == [-2, 0]
    assert (-big).tolist() == [-(2**31) + 1, -(2**31)]
    assert sw.tensor([2**30, 2**30], dtype=sw.Int32).sum().tolist() == -(2**31)
    assert (big + 1).dtype == sw.Int32


def mismatches():
    f = sw.tensor([1.0, 2.0])
    g = sw.tensor([1.0, 2.0, 3.0])
    i = sw.tensor([1, 2], dtype=sw.Int32)
    b = sw.tensor([True, False])
    point = sw.compound([("x", sw.Float32), ("y", sw.Float32)])
    planar = sw.Tensor.from_planes(point, [sw.tensor([1.0, 2.0]), sw.tensor([3.0, 4.0])])
    return [
        (f, g, ValueError, r"shapes differ: 2 and 3"),
        (f, i, TypeError, r"dtypes differ: Float32 and Int32"),
        (b, b, TypeError, r"add: dtype Bool is not supported"),
        (planar, f, NotImplementedError, r"add is not implemented for a multi-subtensor"),
        (f, planar, NotImplementedError, r"add is not implemented for a multi-subtensor"),
    ]


@pytest.mark.spec(
    f"{ELEMENTWISE}/refuse-mismatched-operands",
    f"{ELEMENTWISE}#3",
    f"{ELEMENTWISE}#6",
)
@pytest.mark.parametrize("case", range(5))
def test_refuse_mismatched_operands(case):
    x = leaf([1.0, 2.0])
    a, b, error, message = mismatches()[case]
    carriers = [t.carrier for t in (a, b) if not t.is_multi_subtensor] + [
        p.carrier for t in (a, b) if t.is_multi_subtensor for p in t.planes
    ]
    before = [c.version for c in carriers]
    with pytest.raises(error, match=message):
        sw.add(a, b)
    with pytest.raises(error, match=message.replace("add", "mul")):
        a * b
    assert [c.version for c in carriers] == before
    with pytest.raises(ValueError, match="shapes differ"):
        x + sw.tensor([1.0, 2.0, 3.0])
    assert x.grad is None and x.autograd_ctx is None


@pytest.mark.spec(f"{ELEMENTWISE}/refuse-mismatched-operands")
def test_refuse_neg_and_sum_of_bool_and_planar():
    b = sw.tensor([True, False])
    with pytest.raises(TypeError, match="neg: dtype Bool"):
        -b  # noqa: B018
    with pytest.raises(TypeError, match="sum: dtype Bool"):
        b.sum()
    point = sw.compound([("x", sw.Float32), ("y", sw.Float32)])
    planar = sw.Tensor.from_planes(point, [sw.tensor([1.0]), sw.tensor([3.0])])
    with pytest.raises(NotImplementedError, match="sum is not implemented for a multi-subtensor"):
        planar.sum()


@pytest.mark.spec(f"{ELEMENTWISE}/refuse-a-released-operand", f"{ELEMENTWISE}#5")
def test_refuse_a_released_operand():
    for cls in (sw.CPU, sw.Generic, sw.FileBacked):
        carrier = cls(sw.Float32, values=[1.0, 2.0])
        t = sw.Tensor(carrier, sw.Layout(2))
        other = sw.tensor([1.0, 1.0])
        carrier.release()
        for compute in (sw.add, sw.mul):
            with pytest.raises(RuntimeError, match=f"{cls.__name__} carrier #"):
                compute(t, other)
            with pytest.raises(RuntimeError, match=f"{cls.__name__} carrier #"):
                compute(other, t)
        for compute in (sw.neg, sw.sum):
            with pytest.raises(RuntimeError, match=f"{cls.__name__} carrier #"):
                compute(t)
        assert carrier.version == 0 and other.carrier.version == 0


@pytest.mark.spec(f"{FRESH}/return-fresh-storage", f"{FRESH}#1", f"{FRESH}#2")
def test_return_fresh_storage(tmp_path):
    source = sw.FileBacked(sw.Float32, values=[1.0, 2.0, 3.0, 4.0], path=str(tmp_path / "f.bin"))
    t = sw.Tensor(source, sw.Layout((2, 2), (2, 1)))
    result = -t
    assert result.tolist() == [[-1.0, -2.0], [-3.0, -4.0]]
    assert is_fresh_canonical(result)
    assert result.carrier is not source
    assert source.version == 0
    assert result.dtype == sw.Float32
    result.carrier.write(0, 7.0)
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.spec(f"{SUM}/sum-every-element", f"{SUM}#1")
def test_sum_every_element():
    t = sw.arange(6, dtype=sw.Float32).relayout(sw.Layout((2, 3), (3, 1)))
    total = t.sum()
    assert total.shape == ()
    assert total.tolist() == 15.0
    assert is_fresh_canonical(total)
    assert sw.sum(sw.tensor([1, 2, 3], dtype=sw.Int32)).tolist() == 6


@pytest.mark.spec(f"{SUM}/sum-over-one-mode", f"{SUM}#1", f"{SUM}#2", f"{SUM}#4")
def test_sum_over_one_mode():
    t = sw.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert t.sum(modes=(0,)).shape == (3,)
    assert t.sum(modes=(0,)).tolist() == [3.0, 5.0, 7.0]
    assert t.sum(modes=(1,)).tolist() == [3.0, 12.0]
    assert t.sum(modes=-1).tolist() == [3.0, 12.0]
    assert t.sum(modes=(0, 1)).tolist() == 15.0
    kept = t.sum(modes=())
    assert kept.shape == t.shape and kept.tolist() == t.tolist()
    nested = sw.Tensor(sw.arange(12, dtype=sw.Float32).carrier, sw.Layout(((2, 3), 2)))
    assert nested.sum(modes=(1,)).shape == ((2, 3),)
    assert nested.sum(modes=(1,)).tolist() == [[6.0, 10.0, 14.0], [8.0, 12.0, 16.0]]


@pytest.mark.spec(f"{SUM}/refuse-a-bad-mode", f"{SUM}#3")
def test_refuse_a_bad_mode():
    t = sw.tensor([[0.0, 1.0], [2.0, 3.0]])
    with pytest.raises(ValueError, match="mode 2 is out of range"):
        t.sum(modes=(2,))
    with pytest.raises(ValueError, match="mode 0 is given twice"):
        t.sum(modes=(0, 0))
    with pytest.raises(ValueError, match="mode -3 is out of range"):
        sw.sum(t, modes=[-3])
    assert t.carrier.version == 0
