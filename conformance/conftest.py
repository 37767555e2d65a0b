"""Fixtures every conformance suite may use: the emulated Metal device's test hooks."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from strideweave._core import _testing


@pytest.fixture
def metal_latency() -> Iterator[Callable[[int], None]]:
    """Yields the setter of the emulated Metal device's latency per command buffer (in
    microseconds); afterwards resets it to 0 and waits for the device to drain."""
    try:
        yield _testing.set_metal_latency
    finally:
        _testing.set_metal_latency(0)
        _testing.metal_synchronize()


@pytest.fixture
def no_metal_fault_left_armed() -> Iterator[None]:
    """Fails a test that armed a Metal fault which never fired; disarms move faults."""
    yield
    assert _testing.clear_metal_faults() == 0, "a Metal fault was armed and never fired"
    _testing.clear_move_faults()
