"""What the kit's checks share: example settings, the dtypes, and sample values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings

import strideweave as sw
from strideweave.kit import expect, violation

HOLDS = "carrier-storage/a-carrier-holds-slots-of-one-dtype"

# Every property check draws this many examples; no example database is written into the
# directory the kit runs in.
KIT_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# The concrete dtypes the kit stores; a carrier class holds a non-empty subset of them.
DTYPES = (sw.Float32, sw.Int32, sw.Bool)

Make = Callable[..., sw.Carrier]


def held_dtypes(make: Make) -> tuple[sw.DType, ...]:
    """The dtypes of DTYPES the factory's class holds; each other one must be refused at
    construction with TypeError or ValueError naming it, and one at least held."""
    held = []
    for dtype in DTYPES:
        try:
            make(dtype, 1)
        except (TypeError, ValueError) as refusal:
            expect(
                str(dtype) in str(refusal),
                f"{HOLDS}#3",
                f"{type(refusal).__name__} refusing {dtype} does not name it: {refusal}",
            )
            continue
        held.append(dtype)
    if not held:
        raise violation(f"{HOLDS}#1", f"the factory holds none of {', '.join(map(str, DTYPES))}")
    return tuple(held)


def sample(dtype: sw.DType, k: int) -> Any:
    """The k-th sample value of ``dtype``, exactly representable; ``sample(dtype, 0)``
    differs from the zero, and Int32 and Float32 samples differ for every k."""
    if dtype == sw.Bool:
        return k % 2 == 0
    if dtype == sw.Float32:
        return (k + 1) / 4
    return k + 1


def zero(dtype: sw.DType) -> Any:
    """The dtype's zero as read returns it."""
    return False if dtype == sw.Bool else 0.0 if dtype == sw.Float32 else 0


def allocatable(carrier: sw.Carrier, n: int) -> bool:
    """Allocate ``n`` slots in the empty ``carrier``; False when its class does not support
    allocation (the core's RuntimeError saying so, or NotImplementedError), which the spec
    allows."""
    try:
        carrier.allocate(n)
    except NotImplementedError:
        return False
    except RuntimeError as refusal:
        if "does not support allocation" in str(refusal):
            return False
        raise
    return True
