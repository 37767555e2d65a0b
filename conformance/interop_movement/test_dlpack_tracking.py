"""interop-movement: export leaves carrier version tracking untouched.

Only the version half of the requirement is bound here: autograd does not exist yet, so
the gradient-tracking scenarios stay unbound.
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
