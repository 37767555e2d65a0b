"""interop-movement: export changes neither version tracking nor gradient tracking.

Exports (both capsule versions, NumPy, PyTorch and the direct reader) leave versions,
tokens, autograd_ctx and .grad as they were; a consumer's write through the buffer is
invisible to versions, so autograd's saved-version check misses it and backward consumes
the written values.
"""

import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R

REQ = "interop-movement/export-changes-neither-version-tracking-nor-gradient-tracking"
ENTRY = "carrier-storage/entry-points-read-and-write-slots-and-count-mutations"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"


def written() -> sw.Tensor:
    """A tensor whose carrier has a non-zero version."""
    t = sw.Tensor(sw.CPU(sw.Int32, 6), sw.Layout((2, 3), (1, 2)))
    for slot in range(6):
        t.carrier.write(slot, slot * slot)
    return t


@pytest.mark.spec(f"{REQ}/leave-the-version-unchanged-across-export", f"{ENTRY}#4")
def test_leave_the_version_unchanged_across_export():
    """Producing, consuming, reading and deleting exports leaves the version as it was."""
    t = written()
    version = t.carrier.version
    token = t.carrier.version_token()
    assert version == 6
    capsules = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0))]
    array = np.from_dlpack(t)
    x = torch.from_dlpack(t)
    assert array.tolist() == x.tolist() == t.tolist()
    consumed = R.consume(t.__dlpack__(max_version=(1, 0)))
    consumed.delete()
    del capsules, array, x
    assert t.carrier.version == version
    assert token == t.carrier.version_token() and token.is_current()


@pytest.mark.spec(f"{REQ}#3", f"{TOKENS}#3")
@pytest.mark.parametrize("consumer", [np.from_dlpack, torch.from_dlpack], ids=["numpy", "torch"])
def test_a_consumer_write_keeps_the_version_and_every_token(consumer):
    """Tokens taken before export still compare equal and are current after a foreign write."""
    t = written()
    before_export = t.carrier.version_token()
    array = consumer(t)
    after_export = t.carrier.version_token()
    array[1, 2] = -1
    assert t.tolist()[1][2] == -1
    assert before_export == after_export == t.carrier.version_token()
    assert before_export.is_current() and after_export.is_current()
    t.carrier.write(0, 1)
    assert not before_export.is_current()


# -- gradient tracking ---------------------------------------------------------------------


def graph() -> tuple[sw.Tensor, sw.Tensor, sw.Tensor]:
    """x (a leaf requiring grad), w (a constant input mul saves) and y = x * w."""
    x = sw.tensor([1.0, 2.0, 3.0], dtype=sw.Float32)
    x.requires_grad = True
    w = sw.tensor([4.0, 5.0, 6.0], dtype=sw.Float32)
    return x, w, x * w


def exports(t: sw.Tensor) -> list:
    """Every way a consumer takes t: both capsule versions, NumPy, PyTorch, the reader."""
    taken = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0)), np.from_dlpack(t)]
    taken.append(torch.from_dlpack(t))
    consumed = R.consume(t.__dlpack__(max_version=(1, 0)))
    consumed.delete()
    return taken


@pytest.mark.spec(f"{REQ}/export-without-disturbing-the-graph", f"{REQ}#1", f"{REQ}#2")
def test_export_without_disturbing_the_graph():
    x, w, y = graph()
    node = y.autograd_ctx
    assert node is not None and node.name == "mul"
    versions = [t.carrier.version for t in (x, w, y)]
    taken = exports(y) + exports(x)
    assert np.from_dlpack(y).tolist() == [4.0, 10.0, 18.0]
    assert y.autograd_ctx is node and x.autograd_ctx is None
    assert y.grad is None and x.grad is None
    assert [t.carrier.version for t in (x, w, y)] == versions
    assert node.next_nodes[0].variable is x  # no node was recorded in between
    y.backward(sw.tensor([1.0, 1.0, 1.0], dtype=sw.Float32))
    assert x.grad.tolist() == [4.0, 5.0, 6.0]
    del taken


@pytest.mark.spec(f"{REQ}#2")
def test_a_gradient_exports_under_the_same_rules():
    x, _, y = graph()
    y.sum().backward()
    gradient = x.grad
    version = gradient.carrier.version
    array = np.from_dlpack(gradient)
    assert array.tolist() == [4.0, 5.0, 6.0] and array.flags.writeable
    assert torch.from_dlpack(gradient).tolist() == [4.0, 5.0, 6.0]
    assert R.inspect(gradient.__dlpack__(max_version=(1, 0))).flags == 0  # writable
    assert gradient.carrier.version == version and x.grad is gradient
    assert gradient.autograd_ctx is None


@pytest.mark.spec(f"{REQ}/miss-a-foreign-write-during-backward", f"{REQ}#3", f"{REQ}#4")
@pytest.mark.parametrize("consumer", [np.from_dlpack, torch.from_dlpack], ids=["numpy", "torch"])
def test_miss_a_foreign_write_during_backward(consumer):
    x, w, y = graph()
    token = w.carrier.version_token()
    version = w.carrier.version
    array = consumer(w)
    array[0], array[1], array[2] = 7.0, 8.0, 9.0  # a write StrideWeave cannot see
    assert w.carrier.version == version and token == w.carrier.version_token()
    y.sum().backward()  # mul saved w: its version still matches, so no error
    assert x.grad.tolist() == [7.0, 8.0, 9.0]  # the modified storage
    assert w.carrier.version == version


@pytest.mark.spec(f"{REQ}#4")
def test_a_write_through_an_entry_point_is_detected_unlike_a_foreign_one():
    x, w, y = graph()
    w.carrier.write(0, 7.0)
    with pytest.raises(RuntimeError, match="mul"):
        y.sum().backward()
    assert x.grad is None
