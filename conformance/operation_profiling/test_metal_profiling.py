"""operation-profiling of Metal operations: the event measures the host launch of the
device command buffer and closes without synchronizing the device (interop-movement,
"Metal exposes no new public device-interchange surface")."""

from __future__ import annotations

import time

import pytest

import strideweave as sw
from conformance.operation_profiling.profiling import OPERATION
from strideweave._core import _testing

METAL_SURFACE = "interop-movement/metal-exposes-no-new-public-device-interchange-surface"
LATENCY_S = 0.1


def metal(values: list[float]) -> sw.Tensor:
    return sw.Tensor(sw.Metal(sw.Float32, values=values), sw.Layout(len(values)))


@pytest.mark.spec(
    f"{METAL_SURFACE}/profile-without-forcing-completion",
    f"{METAL_SURFACE}#5",
    f"{METAL_SURFACE}#6",
    f"{OPERATION}#1",
)
def test_profile_without_forcing_completion(metal_latency):
    a = metal([1.0, 2.0, 3.0])
    b = metal([10.0, 20.0, 30.0])
    metal_latency(int(LATENCY_S * 1_000_000))
    start = time.monotonic()
    with sw.profile() as prof:
        c = a + b
    [event] = prof.events
    # The event is closed and read while the device still holds the work.
    assert _testing.metal_pending() > 0
    assert time.monotonic() - start < LATENCY_S / 2
    assert (event.kind, event.name) == ("operation", "add")
    assert event.carrier_classes == ("Metal", "Metal")
    assert event.end_ns - event.start_ns < LATENCY_S * 1e9 / 4
    assert type(c.carrier) is sw.Metal
    # Host observation synchronizes at its own boundary.
    assert c.tolist() == [11.0, 22.0, 33.0]
    assert time.monotonic() - start >= LATENCY_S * 0.9
