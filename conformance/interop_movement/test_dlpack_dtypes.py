"""interop-movement: only Float32 and Int32 export (NumPy, PyTorch and JAX read them); the
carrier opt-in is checked first."""

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.refusals import refused

REQ = "interop-movement/only-float32-and-int32-logical-dtypes-are-exportable"


class OptedInGeneric(sw.Generic):
    """A Generic that opts into DLPack with a non-null pointer it never expects to be read."""

    def dlpack_info(self):
        return {"pointer": 4096, "device_type": 1, "device_id": 0}


@pytest.mark.isolated
@pytest.mark.spec(f"{REQ}/export-a-supported-dtype", f"{REQ}#1")
@pytest.mark.parametrize(
    ("dtype", "values", "code", "np_dtype", "torch_dtype"),
    [
        (sw.Float32, [0.5, -1.25, 3.0], R.CODE_FLOAT, np.float32, torch.float32),
        (sw.Int32, [7, -(2**31), 2**31 - 1], R.CODE_INT, np.int32, torch.int32),
    ],
)
def test_export_a_supported_dtype(dtype, values, code, np_dtype, torch_dtype):
    """Float32 maps to (float, 32, 1) and Int32 to (int, 32, 1), aliasing the same storage."""
    t = sw.Tensor(sw.CPU(dtype, values=values), sw.Layout(3))
    for max_version in (None, (1, 0)):
        info = R.inspect(t.__dlpack__(max_version=max_version))
        assert (info.code, info.bits, info.lanes) == (code, 32, 1)
        assert info.data == t.carrier.pointer()
    array = np.from_dlpack(t)
    x = torch.from_dlpack(t)
    j = jnp.from_dlpack(t)
    assert array.dtype == np_dtype and x.dtype == torch_dtype and j.dtype == np_dtype
    assert array.tolist() == x.tolist() == j.tolist() == values
    assert array.__array_interface__["data"][0] == x.data_ptr() == t.carrier.pointer()
    assert j.unsafe_buffer_pointer() == t.carrier.pointer()


@pytest.mark.spec(f"{REQ}/reject-an-unsupported-dtype", f"{REQ}#2")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_reject_an_unsupported_dtype(max_version):
    """A Bool CPU tensor fails with BufferError naming Float32 and Int32; nothing changed."""
    t = sw.Tensor(sw.CPU(sw.Bool, values=[True, False, True]), sw.Layout(3))
    with refused(BufferError, "Float32", "Int32", "Bool", carriers=[t.carrier]):
        t.__dlpack__(max_version=max_version)


@pytest.mark.spec(f"{REQ}#2")
@pytest.mark.parametrize("dtype", [sw.Floating, sw.Any])
def test_reject_an_abstract_dtype_on_an_opted_in_carrier(dtype):
    """Floating and Any fail on the dtype before the carrier's pointer is ever used."""
    t = sw.Tensor(OptedInGeneric(dtype, 2), sw.Layout(2))
    assert t.__dlpack_device__() == (1, 0)
    with refused(BufferError, "Float32", "Int32", dtype.name, carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0))


@pytest.mark.spec(f"{REQ}#2")
def test_reject_a_compound_dtype():
    """A compound dtype on CPU fails with BufferError naming the supported dtypes."""
    dtype = sw.compound(x=sw.Float32, n=sw.Int32)
    t = sw.Tensor(sw.CPU(dtype, values=[(1.0, 1), (2.0, 2)]), sw.Layout(2))
    with refused(BufferError, "Float32", "Int32", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0))


@pytest.mark.spec(f"{REQ}#3")
@pytest.mark.parametrize("dtype", [sw.Bool, sw.Floating, sw.Any])
def test_report_the_carrier_failure_before_the_dtype(dtype):
    """A non-exportable dtype on Generic fails naming Generic, not the supported dtypes."""
    t = sw.Tensor(sw.Generic(dtype, 2), sw.Layout(2))
    for call in (t.__dlpack__, t.__dlpack_device__):
        with refused(BufferError, "Generic", carriers=[t.carrier]) as info:
            call()
        assert "Float32" not in str(info.value)
