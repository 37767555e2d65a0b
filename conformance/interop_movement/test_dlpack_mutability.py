"""interop-movement: versioned exports carry an advisory READ_ONLY flag; legacy ones none."""

import ctypes

import numpy as np
import pytest

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.consumers import CONSUMERS

REQ = "interop-movement/versioned-exports-advertise-mutability-as-an-advisory-read-only-flag"


def immutable() -> sw.Tensor:
    return sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0], mutable=False), sw.Layout(3))


def owned() -> tuple[sw.Tensor, sw.Carrier]:
    """A tensor over a carrier owned by another, and that owner (it owns only while alive)."""
    t = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    owner = sw.CPU(sw.Float32, 1)
    owner.take_ownership(t.carrier)
    return t, owner


class LegacyOnly:
    """A producer wrapper that hands a consumer the legacy capsule whatever it asks for."""

    def __init__(self, tensor: sw.Tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None, **_):
        return self.tensor.__dlpack__()

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.spec(f"{REQ}/mark-an-immutable-tensor-read-only", f"{REQ}#1", f"{REQ}#2", f"{REQ}#4")
@pytest.mark.parametrize("how", ["constructed-immutable", "owned"])
def test_mark_an_immutable_tensor_read_only(how):
    """flags is exactly READ_ONLY and NumPy, which honours it, gives a non-writable array.

    PyTorch ignores READ_ONLY (it has no read-only tensors), so no torch assertion here.
    """
    t, owner = (immutable(), None) if how == "constructed-immutable" else owned()
    assert not t.is_mutable()
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert info.flags == R.READ_ONLY
    array = np.from_dlpack(t)
    assert not array.flags.writeable
    assert array.tolist() == [1.0, 2.0, 3.0]
    assert owner is None or t.carrier.owner is owner


class Recording:
    """A producer wrapper that records the keyword arguments of each __dlpack__ call."""

    def __init__(self, tensor: sw.Tensor):
        self.tensor = tensor
        self.calls: list[dict] = []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.isolated
@pytest.mark.spec(f"{REQ}/lose-the-signal-on-a-legacy-export", f"{REQ}#1", f"{REQ}#3")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_what_each_consumer_does_with_read_only(consumer):
    """Which capsule each consumer asks for, and what an immutable tensor becomes there.

    NumPy and PyTorch ask for a versioned capsule (max_version (1, 0)); NumPy gives a
    read-only array and PyTorch ignores the flag. JAX 0.10 asks with stream=None only,
    so it gets the legacy capsule, which has no flags word: the READ_ONLY signal never
    reaches it. Its arrays are immutable anyway, and it still aliases the carrier.
    """
    c = CONSUMERS[consumer]
    t = immutable()
    wrapper = Recording(t)
    array = c.from_dlpack(wrapper)
    assert [call.get("max_version") for call in wrapper.calls] == (
        [None] if consumer == "jax" else [(1, 0)]
    )
    assert c.address(array) == t.carrier.pointer()
    assert array.tolist() == [1.0, 2.0, 3.0]
    if consumer == "numpy":
        assert not array.flags.writeable
    if consumer == "torch":
        array[0] = 5.0  # no read-only tensors: the write reaches the immutable carrier
        assert t.tolist()[0] == 5.0
    if consumer == "jax":
        with pytest.raises(TypeError, match="immutable"):
            array[0] = 5.0
    assert t.carrier.version == 0 and not t.is_mutable()


@pytest.mark.spec(f"{REQ}/leave-a-mutable-tensor-writable", f"{REQ}#1")
@pytest.mark.parametrize("ceiling", [(1, 0), (2, 0)])
def test_leave_a_mutable_tensor_writable(ceiling):
    """A publicly mutable tensor exports flags 0 and NumPy writes through the alias."""
    t = sw.Tensor(sw.CPU(sw.Int32, values=[1, 2, 3]), sw.Layout(3))
    assert t.is_mutable()
    assert R.inspect(t.__dlpack__(max_version=ceiling)).flags == 0
    array = np.from_dlpack(t)
    assert array.flags.writeable
    array[0] = 11
    assert t.tolist() == [11, 2, 3]


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2")
def test_mutability_is_read_at_the_moment_of_export():
    """Taking and relinquishing ownership between exports flips the next export's flag only."""
    t = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    owner = sw.CPU(sw.Float32, 1)
    before = t.__dlpack__(max_version=(1, 0))
    owner.take_ownership(t.carrier)
    during = t.__dlpack__(max_version=(1, 0))
    owner.relinquish(t.carrier)
    after = t.__dlpack__(max_version=(1, 0))
    assert [R.inspect(c).flags for c in (before, during, after)] == [0, R.READ_ONLY, 0]


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2")
def test_a_released_carrier_is_not_mutable_even_for_an_empty_view():
    """A zero-size view of a released carrier still exports, and exports READ_ONLY."""
    t = sw.Tensor(sw.CPU(sw.Float32, 4), sw.Layout((2, 0)))
    t.carrier.release()
    assert not t.is_mutable()
    assert R.inspect(t.__dlpack__(max_version=(1, 0))).flags == R.READ_ONLY


@pytest.mark.spec(f"{REQ}/lose-the-signal-on-a-legacy-export", f"{REQ}#3")
def test_lose_the_signal_on_a_legacy_export():
    """The legacy capsule has no flags word: immutable and mutable exports read the same."""
    frozen = immutable()
    mutable = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    frozen_info = R.inspect(frozen.__dlpack__())
    mutable_info = R.inspect(mutable.__dlpack__())
    assert frozen_info.name == R.LEGACY and frozen_info.flags is None
    assert {**frozen_info.fields(), "data": 0} == {**mutable_info.fields(), "data": 0}
    frozen_array = np.from_dlpack(LegacyOnly(frozen))
    mutable_array = np.from_dlpack(LegacyOnly(mutable))
    assert frozen_array.flags.writeable == mutable_array.flags.writeable
    assert frozen_array.tolist() == mutable_array.tolist()


@pytest.mark.spec(f"{REQ}#5", f"{REQ}#6")
def test_the_flag_is_advisory():
    """A consumer writing through a READ_ONLY export succeeds; StrideWeave only sees new values."""
    t = immutable()
    consumed = R.consume(t.__dlpack__(max_version=(1, 0)))
    assert consumed.info.read_only
    version = t.carrier.version
    element = ctypes.c_float.from_address(consumed.info.data + consumed.info.byte_offset + 4)
    element.value = -4.5
    assert t.tolist() == [1.0, -4.5, 3.0]
    assert t.carrier.version == version
    assert not t.is_mutable()
    consumed.delete()
