"""interop-movement: export aliases the carrier's storage, seen from NumPy and PyTorch."""

import gc
import sys

import numpy as np
import pytest
import torch

import strideweave as sw

REQ = "interop-movement/export-is-zero-copy-same-device-and-stream-agnostic"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"
LIFETIME = "interop-movement/a-capsule-keeps-its-producer-alive-but-not-released-storage"

# A lifetime defect crashes the interpreter: each test runs in its own child process.
pytestmark = pytest.mark.isolated

CONSUMERS = {
    "numpy": (np.from_dlpack, lambda a: a.__array_interface__["data"][0], np.float32, np.int32),
    "torch": (torch.from_dlpack, lambda x: x.data_ptr(), torch.float32, torch.int32),
}


def window(dtype) -> sw.Tensor:
    """A gapped (2, 3):(1, 4) window at offset 2 of twelve distinct slots."""
    values = [float(i) + 0.5 for i in range(12)] if dtype == sw.Float32 else list(range(12))
    return sw.Tensor(sw.CPU(dtype, values=values), sw.Layout((2, 3), (1, 4)), 2)


# First in this module, on purpose: a capsule that stopped holding its producer
# would let the aliasing tests below read freed storage and kill the run with no
# test named; this test names the defect before they run.
@pytest.mark.spec(f"{LIFETIME}#1")
@pytest.mark.parametrize("max_version", [None, (1, 0)], ids=["legacy", "versioned"])
def test_a_capsule_holds_one_reference_to_its_producer(max_version):
    """The producer's refcount rises by one per capsule and falls back when each is freed."""
    t = window(sw.Float32)
    before = sys.getrefcount(t)
    capsules = [t.__dlpack__(max_version=max_version) for _ in range(2)]
    assert sys.getrefcount(t) == before + 2
    capsules.pop()
    assert sys.getrefcount(t) == before + 1
    capsules.clear()
    assert sys.getrefcount(t) == before


@pytest.mark.spec(f"{LIFETIME}#1", f"{LIFETIME}#2")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_a_consumer_array_holds_the_producer_until_freed(consumer):
    """A consumer's array owns the capsule's reference: it drops when the array is freed."""
    t = window(sw.Int32)
    before = sys.getrefcount(t)
    array = CONSUMERS[consumer][0](t)
    assert sys.getrefcount(t) == before + 1
    del array
    gc.collect()
    assert sys.getrefcount(t) == before


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
