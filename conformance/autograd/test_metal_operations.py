"""autograd: the math operations on Metal tensors run as asynchronous device commands.

All-Metal operands give a fresh Metal result computed by one command buffer submitted
without waiting; operands mixed with another carrier give a CPU result. Each Metal result
is compared with the same operation on CPU copies of the same slots (the same compute
body runs on both, so Float32 results are bit-identical).
"""

from __future__ import annotations

import time

import pytest

import strideweave as sw
from strideweave._core import _testing

FRESH = "autograd/operation-results-are-fresh-canonical-cpu-tensors"
ON_METAL = f"{FRESH}/compute-on-metal-without-synchronizing"
MIXED = f"{FRESH}/mix-metal-with-another-carrier"
GRADS = f"{FRESH}/keep-the-gradients-of-metal-leaves-on-metal"
ELEMENTWISE = "autograd/elementwise-operations-take-operands-of-equal-shape-and-dtype"

# (layout, offset): hierarchical with holes, an offset, stride 0, rank 1 and contiguous.
LAYOUTS = [
    (sw.Layout(((2, 2), 3), ((1, 5), 11)), 3),
    (sw.Layout((3, 4), (0, 2)), 1),
    (sw.Layout((2, (3, 2)), (7, (1, 3))), 0),
    (sw.Layout(6, 3), 2),
    (sw.Layout((2, 3)), 0),
]

INT_EDGES = [2147483647, -2147483648, 65536, -7, 46341]


def slot_values(dtype: sw.DType, n: int, salt: int) -> list:
    if dtype == sw.Int32:
        wrap = [(INT_EDGES[(i + salt) % len(INT_EDGES)] + i + 2**31) % 2**32 for i in range(n)]
        return [v - 2**31 for v in wrap]
    return [0.25 * (i + 1) * (-1) ** (i + salt) + salt for i in range(n)]


def twins(dtype: sw.DType, layout: sw.Layout, offset: int, salt: int = 0):
    """The same slots and view over a Metal and a CPU carrier."""
    values = slot_values(dtype, offset + layout.cosize + 2, salt)
    return tuple(sw.Tensor(cls(dtype, values=values), layout, offset) for cls in (sw.Metal, sw.CPU))


def assert_fresh_metal(result: sw.Tensor, *operands: sw.Tensor) -> None:
    assert type(result.carrier) is sw.Metal
    assert result.offset == 0
    assert result.layout == sw.Layout(result.shape)
    assert result.is_mutable()
    assert all(result.carrier is not t.carrier for t in operands)


def operations(a: sw.Tensor, b: sw.Tensor) -> dict:
    rank = len(a.shape) if isinstance(a.shape, tuple) else 1
    results = {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "add constant": a + 3,
        "constant sub": 2 - a,
        "sub constant": a - 1,
        "mul constant": a * 5,
        "neg": -a,
        "sum": a.sum(),
        "sum no modes": a.sum(modes=()),
        "sum mode 0": a.sum(modes=(0,)),
    }
    if rank > 1:
        results["sum last mode"] = a.sum(modes=(-1,))
    return results


@pytest.mark.spec(ON_METAL, f"{FRESH}#1", f"{FRESH}#2", f"{FRESH}#3", f"{ELEMENTWISE}#1")
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32], ids=["Float32", "Int32"])
@pytest.mark.parametrize("case", range(len(LAYOUTS)))
def test_each_operation_on_metal_matches_cpu(dtype, case):
    layout, offset = LAYOUTS[case]
    a, a_cpu = twins(dtype, layout, offset)
    b, b_cpu = twins(dtype, layout, offset, salt=1)
    versions = (a.carrier.version, b.carrier.version)
    on_metal = operations(a, b)
    on_cpu = operations(a_cpu, b_cpu)
    for name, result in on_metal.items():
        assert_fresh_metal(result, a, b)
        assert result.shape == on_cpu[name].shape, name
        assert type(on_cpu[name].carrier) is sw.CPU
        assert result.tolist() == on_cpu[name].tolist(), name
    assert (a.carrier.version, b.carrier.version) == versions


@pytest.mark.spec(ON_METAL, f"{ELEMENTWISE}/wrap-int32-arithmetic", f"{ELEMENTWISE}#1")
def test_int32_wraps_on_metal():
    t = sw.Tensor(sw.Metal(sw.Int32, values=[2147483647, -2147483648, 65536]), sw.Layout(3))
    assert (t + 1).tolist() == [-2147483648, -2147483647, 65537]
    assert (t - 1).tolist() == [2147483646, 2147483647, 65535]
    assert (t * t).tolist() == [1, 0, 0]
    assert (-t).tolist() == [-2147483647, -2147483648, -65536]
    assert t.sum().tolist() == 65535


@pytest.mark.spec(ON_METAL, f"{FRESH}#3")
def test_operands_sharing_one_metal_carrier():
    carrier = sw.Metal(sw.Float32, values=[float(i) for i in range(12)])
    a = sw.Tensor(carrier, sw.Layout((2, 3), (1, 2)), 0)
    b = sw.Tensor(carrier, sw.Layout((2, 3), (6, 1)), 1)
    c = a * b + a
    assert_fresh_metal(c, a, b)
    assert c.tolist() == [
        [0.0 * 1 + 0, 2.0 * 2 + 2, 4.0 * 3 + 4],
        [1.0 * 7 + 1, 3 * 8.0 + 3, 5 * 9.0 + 5],
    ]


@pytest.mark.spec(ON_METAL, f"{FRESH}#3", f"{FRESH}#4")
def test_a_chain_returns_before_the_device_completes_it(metal_latency):
    layout, offset = LAYOUTS[0]
    a, a_cpu = twins(sw.Float32, layout, offset)
    b, b_cpu = twins(sw.Float32, layout, offset, salt=1)
    _testing.metal_synchronize()
    metal_latency(50_000)  # 50 ms per command buffer: 20 of them take a second on the device

    def chain(x, y):
        for i in range(20):
            x = [x + y, x - y, x * 0.5, -x][i % 4]
        return x

    start = time.monotonic()
    result = chain(a, b)
    returned = time.monotonic() - start
    pending = _testing.metal_pending()
    assert pending > 0
    assert returned < 0.5, returned
    assert type(result.carrier) is sw.Metal
    expected = chain(a_cpu, b_cpu).tolist()
    assert result.tolist() == expected  # waits for the whole chain
    assert time.monotonic() - start >= 20 * 0.05 * 0.9


@pytest.mark.spec(MIXED, f"{FRESH}#5", f"{FRESH}#1")
def test_mixed_operands_give_a_cpu_result(metal_latency):
    layout, offset = LAYOUTS[0]
    a, a_cpu = twins(sw.Float32, layout, offset)
    values = slot_values(sw.Float32, offset + layout.cosize + 2, 0)
    generic = sw.Tensor(sw.Generic(sw.Float32, values=values), layout, offset)
    expected = (a_cpu + a_cpu).tolist()
    for x, y in [(a, a_cpu), (a_cpu, a), (a, generic)]:
        result = x + y
        assert type(result.carrier) is sw.CPU
        assert result.tolist() == expected
    # Reading the Metal operand synchronizes: the result is complete when the call returns.
    m = -a
    metal_latency(50_000)
    start = time.monotonic()
    result = m * a_cpu
    assert time.monotonic() - start >= 0.045  # waited for a device round trip
    assert type(result.carrier) is sw.CPU
    assert result.tolist() == ((-a_cpu) * a_cpu).tolist()


@pytest.mark.spec(f"{ELEMENTWISE}/refuse-a-released-operand", f"{ELEMENTWISE}#5")
def test_refuse_a_released_metal_operand():
    carrier = sw.Metal(sw.Float32, values=[1.0, 2.0])
    t = sw.Tensor(carrier, sw.Layout(2))
    other = sw.Tensor(sw.Metal(sw.Float32, values=[1.0, 1.0]), sw.Layout(2))
    carrier.release()
    pending = _testing.metal_pending()
    for compute in (lambda: t + other, lambda: other * t, lambda: -t, lambda: t.sum()):
        with pytest.raises(RuntimeError, match="Metal carrier #"):
            compute()
    assert _testing.metal_pending() <= pending


def graph(x, y):
    """A one-element result using every differentiable operation."""
    z = (x * y + x) - (-y) * 2.0
    z = z + x[0:1].broadcast_to(x.shape) * 3.0
    return z.sum() + x.sum(modes=(0,)).sum()


@pytest.mark.spec(GRADS, f"{FRESH}#6")
def test_backward_keeps_the_gradients_of_metal_leaves_on_metal(metal_latency):
    layout, offset = sw.Layout((2, 3), (4, 1)), 1
    x, x_cpu = twins(sw.Float32, layout, offset)
    y, y_cpu = twins(sw.Float32, layout, offset, salt=1)
    for t in (x, y, x_cpu, y_cpu):
        t.requires_grad = True
    metal_latency(5_000)
    graph(x, y).backward()
    graph(x_cpu, y_cpu).backward()
    assert _testing.metal_pending() > 0  # backward itself did not synchronize
    for metal, cpu in [(x, x_cpu), (y, y_cpu)]:
        assert type(metal.grad.carrier) is sw.Metal
        assert metal.grad.tolist() == cpu.grad.tolist()
    # A second backward accumulates on Metal.
    metal_latency(0)
    graph(x, y).backward()
    graph(x_cpu, y_cpu).backward()
    assert type(x.grad.carrier) is sw.Metal
    assert x.grad.tolist() == x_cpu.grad.tolist()
    assert y.grad.tolist() == y_cpu.grad.tolist()
