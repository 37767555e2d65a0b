"""spec/carrier-storage "Metal stores slots in device memory": the Metal carrier over the
emulated device queue: its dtypes, entry points that synchronize with pending device
work, release after pending work, and the storage it never exposes."""

from __future__ import annotations

import numpy as np
import pytest

import strideweave as sw
from conformance.interop_movement.movement import InjectedFault, refused, snapshot
from conformance.sanitizers import skip_unsatisfiable_allocations_under_asan
from strideweave._core import _testing

METAL = "carrier-storage/metal-stores-slots-in-device-memory"
BUILT = "carrier-storage/a-carrier-holds-slots-of-one-dtype"

LATENCY_US = 100_000


pytestmark = pytest.mark.usefixtures("no_metal_fault_left_armed")


@pytest.fixture
def latency(metal_latency) -> None:
    """The emulated device takes LATENCY_US per command buffer for this test."""
    metal_latency(LATENCY_US)


@pytest.mark.spec(f"{METAL}/reject-a-dtype-the-device-does-not-hold", f"{METAL}#3")
@pytest.mark.parametrize(
    "dtype",
    [sw.Floating, sw.Any, sw.compound([("x", sw.Float32), ("y", sw.Int32)])],
    ids=["Floating", "Any", "compound"],
)
def test_reject_a_dtype_the_device_does_not_hold(dtype):
    allocated = _testing.metal_allocated_bytes()
    with pytest.raises(TypeError) as info:
        sw.Metal(dtype, 2)
    assert "Metal" in str(info.value) and dtype.name in str(info.value)
    assert _testing.metal_allocated_bytes() == allocated  # no device buffer was kept


@pytest.mark.spec(f"{METAL}#1", f"{METAL}#3", f"{METAL}#4", f"{BUILT}#1")
@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (sw.Float32, [0.5, -2.0, 3.25]),
        (sw.Int32, [-(2**31), 7, 2**31 - 1]),
        (sw.Bool, [True, False, True]),
    ],
    ids=["Float32", "Int32", "Bool"],
)
def test_entry_points_read_and_write_device_slots(dtype, values):
    zero = sw.Metal(dtype, 3)
    assert zero.slots == 3 and len(zero) == 3
    assert zero.tolist() == [0] * 3  # False for Bool
    c = sw.Metal(dtype, values=values)
    assert c.tolist() == values and c.version == 0
    c.write(1, values[0])
    assert c.read(1) == values[0] and c.version == 1
    c.write_range(0, values[::-1])
    assert c.read_range(0, 3) == values[::-1] and c.version == 2
    out = np.zeros(3, {"Float32": np.float32, "Int32": np.int32, "Bool": np.bool_}[dtype.name])
    assert c.read_range(0, 3, out=out) is out and out.tolist() == values[::-1]
    empty = sw.Metal(dtype)
    assert empty.slots == 0
    empty.allocate(2)
    assert empty.slots == 2 and empty.version == 1
    fresh = c.new_like()
    assert type(fresh) is sw.Metal and fresh.dtype == dtype and fresh.slots == 0


@pytest.mark.spec(f"{METAL}#1")
def test_metal_exposes_no_storage_and_is_definition_free():
    c = sw.Metal(sw.Float32, values=[1.0, 2.0])
    assert not hasattr(c, "pointer")
    with refused(BufferError, "Metal", carriers=[c]):
        c.dlpack_info()
    assert sw.Metal.carrier_class.definition_state in ("open", "definition-free")


@pytest.mark.spec(f"{METAL}#4")
def test_a_failed_device_write_changes_nothing():
    c = sw.Metal(sw.Int32, values=[1, 2, 3])
    before = snapshot(c)
    error = InjectedFault("upload")
    _testing.inject_metal_fault("copy", error)
    with pytest.raises(InjectedFault) as info:
        c.write_range(0, [7, 8, 9])
    assert info.value is error
    assert snapshot(c) == before


@pytest.mark.spec(f"{BUILT}#1")
def test_a_failed_device_allocation_produces_no_carrier():
    error = InjectedFault("allocation")
    _testing.inject_metal_fault("allocation", error)
    with pytest.raises(InjectedFault) as info:
        sw.Metal(sw.Float32, 4)
    assert info.value is error
    empty = sw.Metal(sw.Float32)
    _testing.inject_metal_fault("allocation", error)
    with pytest.raises(InjectedFault):
        empty.allocate(4)
    assert empty.slots == 0 and empty.version == 0 and empty.is_mutable()


@pytest.mark.spec(f"{METAL}/read-after-pending-device-work", f"{METAL}#2", f"{METAL}#4")
@pytest.mark.usefixtures("latency")
def test_read_after_pending_device_work():
    a = sw.Tensor(sw.Metal(sw.Int32, values=[1, 2, 3, 4]), sw.Layout(4))
    result = sw.mul(sw.add(a, a), a)
    assert type(result.carrier) is sw.Metal
    assert _testing.metal_pending() > 0  # neither operation has run yet
    assert result.carrier.read(3) == 32
    assert result.tolist() == [2, 8, 18, 32]


@pytest.mark.spec(f"{METAL}/release-after-pending-device-work", f"{METAL}#5")
@pytest.mark.usefixtures("latency")
def test_release_after_pending_device_work():
    a = sw.Tensor(sw.Metal(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    pending = sw.neg(a)
    assert _testing.metal_pending() > 0
    pending.carrier.release()
    # Release returned only after the negation (the buffer's last use) completed.
    assert _testing.metal_pending() == 0
    assert pending.carrier.is_released and pending.carrier.slots == 0
    with refused(RuntimeError, "released"):
        pending.carrier.read(0)
    assert a.tolist() == [1.0, 2.0]


@skip_unsatisfiable_allocations_under_asan
@pytest.mark.spec(f"{METAL}#7")
def test_a_failed_kernel_leaves_its_result_without_a_value():
    """A sum over a 2**50-element broadcast of a Metal tensor: the kernel cannot gather
    its operand on the device. Its result used to read as 0.0; every use of it now
    raises the kernel's MemoryError, naming the operation, the count and the dtype."""
    metal = sw.Tensor(sw.Metal(sw.Float32, values=[1.0]), sw.Layout(1), 0)
    result = metal.broadcast_to((1 << 20, 1 << 20, 1 << 10)).sum()
    expected = f"sum: gathering an operand: cannot allocate {1 << 50} items of Float32"
    uses = {
        "tolist": lambda: result.tolist(),
        "read": lambda: result.carrier.read(0),
        "move out": lambda: sw.move(result, sw.CPU(sw.Float32)),
        "operation": lambda: (result + result).tolist(),
    }
    for name, use in uses.items():
        with pytest.raises(MemoryError) as info:
            use()
        assert str(info.value).startswith(expected), (name, str(info.value))
        assert "'sum'" in str(info.value), name
    assert not result.carrier.is_released
    result.carrier.release()
    # The operand itself is unaffected, and a sum that fits works.
    assert metal.tolist() == [1.0]
    assert metal.broadcast_to((4,)).sum().tolist() == 4.0
