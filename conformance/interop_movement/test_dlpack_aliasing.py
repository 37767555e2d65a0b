"""interop-movement: export aliases the carrier's storage, seen from NumPy, PyTorch and JAX."""

import gc
import sys

import pytest

import strideweave as sw
from conformance.interop_movement.consumers import CONSUMERS

REQ = "interop-movement/export-is-zero-copy-same-device-and-stream-agnostic"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"
LIFETIME = "interop-movement/a-capsule-keeps-its-producer-alive-but-not-released-storage"

# A lifetime defect crashes the interpreter: each test runs in its own child process.
pytestmark = pytest.mark.isolated

WRITABLE = sorted(name for name, c in CONSUMERS.items() if c.writable)


def window(dtype, consumer: str = "numpy") -> sw.Tensor:
    """A gapped (2, 3):(1, 4) window at offset 2 of 24 distinct slots; for a consumer that
    aliases only compact windows at its alignment (JAX), the compact (2, 3) window at
    the first aligned offset."""
    values = [float(i) + 0.5 for i in range(24)] if dtype == sw.Float32 else list(range(24))
    c = CONSUMERS[consumer]
    if c.any_strides:
        return sw.Tensor(sw.CPU(dtype, values=values), sw.Layout((2, 3), (1, 4)), 2)
    return sw.Tensor(sw.CPU(dtype, values=values), sw.Layout((2, 3)), c.alignment // 4)


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
    t = window(sw.Int32, consumer)
    before = sys.getrefcount(t)
    array = CONSUMERS[consumer].from_dlpack(t)
    assert sys.getrefcount(t) == before + 1
    del array
    gc.collect()
    assert sys.getrefcount(t) == before


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32])
def test_consumer_aliases_the_carrier_storage(consumer, dtype):
    """The consumer's first element sits in the carrier's buffer, same dtype, on the CPU."""
    c = CONSUMERS[consumer]
    t = window(dtype, consumer)
    array = c.from_dlpack(t)
    assert c.address(array) == t.carrier.pointer() + 4 * t.offset
    assert array.dtype == c.dtypes[dtype]
    assert array.tolist() == t.tolist()
    if consumer == "torch":
        assert array.device.type == "cpu"
    if consumer == "jax":
        assert [d.platform for d in array.devices()] == ["cpu"]


@pytest.mark.spec(f"{REQ}#1", f"{TOKENS}#3")
@pytest.mark.parametrize("consumer", WRITABLE)
def test_a_consumer_write_is_seen_by_the_tensor(consumer):
    """Writing through the consumer's array changes tolist() and leaves the version alone."""
    t = window(sw.Int32)
    array = CONSUMERS[consumer].from_dlpack(t)
    version = t.carrier.version
    array[1, 2] = -7
    array[0, 0] = -8
    assert t.tolist() == [[-8, 6, 10], [3, 7, -7]]
    assert t.carrier.read(2) == -8 and t.carrier.read(11) == -7
    assert t.carrier.version == version


@pytest.mark.spec(f"{REQ}#1")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_a_carrier_write_is_seen_by_the_consumer(consumer):
    """A write through the carrier's entry point shows in the consumer's existing array,
    JAX's immutable arrays included: they alias the carrier as much as the others."""
    t = window(sw.Float32, consumer)
    array = CONSUMERS[consumer].from_dlpack(t)
    t.carrier.write(t.offset + t.layout((1, 1)), -1.25)
    assert array[1, 1].item() == -1.25
    assert array.tolist() == t.tolist()


@pytest.mark.spec(f"{REQ}#1")
@pytest.mark.parametrize("consumer", sorted(set(CONSUMERS) - set(WRITABLE)))
def test_an_immutable_consumer_refuses_writes(consumer):
    """JAX arrays refuse item assignment; .at[].set() makes a new array, the carrier keeps
    its values and its version."""
    t = window(sw.Int32, consumer)
    array = CONSUMERS[consumer].from_dlpack(t)
    with pytest.raises(TypeError, match="immutable"):
        array[0, 0] = -8
    changed = array.at[0, 0].set(-8)
    assert CONSUMERS[consumer].address(changed) != t.carrier.pointer() + 4 * t.offset
    assert t.tolist() == array.tolist() and t.tolist()[0][0] != -8
    assert t.carrier.version == 0
