"""interop-movement: both bounds of each exportable dtype's range reach NumPy and PyTorch."""

import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.carrier_storage.test_dtype_bounds import (
    FLOAT32_MAX,
    FLOAT32_MIN_NORMAL,
    FLOAT32_MIN_SUBNORMAL,
    INF,
)
from conformance.interop_movement.refusals import refused

REQ = "interop-movement/only-float32-and-int32-logical-dtypes-are-exportable"
ALIAS = "interop-movement/export-is-zero-copy-same-device-and-stream-agnostic"

BOUNDS = {
    sw.Int32: [-(2**31), 2**31 - 1, -(2**31) + 1, 2**31 - 2],
    sw.Float32: [
        FLOAT32_MAX,
        -FLOAT32_MAX,
        FLOAT32_MIN_NORMAL,
        -FLOAT32_MIN_NORMAL,
        FLOAT32_MIN_SUBNORMAL,
        INF,
        -INF,
    ],
}
CONSUMERS = {"numpy": np.from_dlpack, "torch": torch.from_dlpack}


@pytest.mark.spec(f"{REQ}#1", f"{ALIAS}#1")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
@pytest.mark.parametrize("dtype", [sw.Int32, sw.Float32], ids=["Int32", "Float32"])
@pytest.mark.parametrize("max_version", [None, (1, 0)], ids=["legacy", "versioned"])
def test_export_carries_both_bounds(consumer, dtype, max_version):
    """The consumer reads every bound exactly, through a versioned and a legacy capsule."""
    values = BOUNDS[dtype]
    t = sw.tensor(values, dtype=dtype)
    array = CONSUMERS[consumer](_Versioned(t, max_version))
    assert array.tolist() == values
    assert t.tolist() == values


class _Versioned:
    """Forwards to a tensor, forcing one max_version (None: legacy) whatever the consumer asks."""

    def __init__(self, tensor: sw.Tensor, max_version):
        self.tensor, self.max_version = tensor, max_version

    def __dlpack__(self, **kwargs):
        kwargs["max_version"] = self.max_version
        return self.tensor.__dlpack__(**{k: v for k, v in kwargs.items() if k != "copy"})

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.spec(f"{REQ}#1")
def test_bool_bounds_are_stored_but_not_exported():
    t = sw.tensor([True, False])
    assert t.tolist() == [True, False]
    with refused(BufferError, "Bool", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0))
