"""interop-movement: a validated multi-subtensor Tensor refuses both DLPack calls."""

import pytest

import strideweave as sw
from conformance.interop_movement.refusals import refused

REQ = "interop-movement/multi-subtensor-tensors-reject-dlpack-export"
BOUNDARY = (
    "core-tensor-representation/"
    "operations-without-per-plane-semantics-reject-multi-subtensor-tensors"
)


class Watched(sw.CPU):
    """A CPU carrier that counts calls of its DLPack hook."""

    calls = 0

    def dlpack_info(self):
        type(self).calls += 1
        return super().dlpack_info()


def planes_tensor() -> tuple[sw.Tensor, list[sw.Carrier]]:
    xs = Watched(sw.Float32, values=[1.0, 2.0, 3.0])
    ns = Watched(sw.Int32, values=[4, 5, 6])
    planes = [sw.Tensor(xs, sw.Layout(3)), sw.Tensor(ns, sw.Layout(3))]
    t = sw.Tensor.from_planes(sw.compound(x=sw.Float32, n=sw.Int32), planes)
    assert t.is_multi_subtensor
    return t, [xs, ns]


@pytest.mark.spec(f"{REQ}/reject-a-multi-subtensor-export", f"{REQ}#1", f"{REQ}#2", BOUNDARY)
@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.__dlpack__(),
        lambda t: t.__dlpack__(max_version=(1, 0)),
        lambda t: t.__dlpack__(None, max_version=(1, 0), dl_device=(1, 0), copy=False),
        lambda t: t.__dlpack_device__(),
    ],
    ids=["legacy", "versioned", "all-arguments", "device"],
)
def test_reject_a_multi_subtensor_export(call):
    """NotImplementedError naming DLPack; no plane's hook is called, nothing changes."""
    t, carriers = planes_tensor()
    Watched.calls = 0
    with refused(NotImplementedError, "DLPack", carriers=carriers):
        call(t)
    assert Watched.calls == 0
    assert [c.is_mutable() for c in carriers] == [True, True]
    assert t.tolist() == [(1.0, 4), (2.0, 5), (3.0, 6)]
