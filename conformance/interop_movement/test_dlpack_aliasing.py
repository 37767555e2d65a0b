"""interop-movement: export aliases the carrier's storage, seen from NumPy and PyTorch."""

import numpy as np
import pytest
import torch

import strideweave as sw

REQ = "interop-movement/export-is-zero-copy-same-device-and-stream-agnostic"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"

CONSUMERS = {
    "numpy": (np.from_dlpack, lambda a: a.__array_interface__["data"][0], np.float32, np.int32),
    "torch": (torch.from_dlpack, lambda x: x.data_ptr(), torch.float32, torch.int32),
}


def window(dtype) -> sw.Tensor:
    """A gapped (2, 3):(1, 4) window at offset 2 of twelve distinct slots."""
    values = [float(i) + 0.5 for i in range(12)] if dtype == sw.Float32 else list(range(12))
    return sw.Tensor(sw.CPU(dtype, values=values), sw.Layout((2, 3), (1, 4)), 2)


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32])
def test_consumer_aliases_the_carrier_storage(consumer, dtype):
    """The consumer's first element sits in the carrier's buffer, same dtype, on the CPU."""
    from_dlpack, address, np_float, np_int = CONSUMERS[consumer]
    t = window(dtype)
    array = from_dlpack(t)
    assert address(array) == t.carrier.pointer() + 2 * 4
    assert array.dtype == (np_float if dtype == sw.Float32 else np_int)
    assert array.tolist() == t.tolist()
    if consumer == "torch":
        assert array.device.type == "cpu"


@pytest.mark.spec(f"{REQ}#1", f"{TOKENS}#3")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_a_consumer_write_is_seen_by_the_tensor(consumer):
    """Writing through the consumer's array changes tolist() and leaves the version alone."""
    t = window(sw.Int32)
    array = CONSUMERS[consumer][0](t)
    version = t.carrier.version
    array[1, 2] = -7
    array[0, 0] = -8
    assert t.tolist() == [[-8, 6, 10], [3, 7, -7]]
    assert t.carrier.read(2) == -8 and t.carrier.read(11) == -7
    assert t.carrier.version == version


@pytest.mark.spec(f"{REQ}#1")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_a_carrier_write_is_seen_by_the_consumer(consumer):
    """A write through the carrier's entry point shows in the consumer's existing array."""
    t = window(sw.Float32)
    array = CONSUMERS[consumer][0](t)
    t.carrier.write(7, -1.25)
    assert array[1, 1].item() == -1.25
    assert array.tolist() == t.tolist()
