"""Checks that a refused DLPack call named its subject and changed nothing."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import pytest

import strideweave as sw


def live_exports() -> int:
    """Managed tensors produced and not yet deleted, after collecting garbage."""
    gc.collect()
    return sw._core._live_dlpack_exports()


def carrier_state(carriers) -> list[tuple[int, bool]]:
    return [(c.version, c.is_released) for c in carriers]


@contextlib.contextmanager
def refused(exc_type: type[BaseException], *subjects: str, carriers=()) -> Iterator:
    """Expects ``exc_type`` naming every subject, no managed tensor left and carriers unchanged."""
    before = carrier_state(carriers)
    live = live_exports()
    with pytest.raises(exc_type) as info:
        yield info
    message = str(info.value)
    for subject in subjects:
        assert subject in message, f"{subject!r} not named in {message!r}"
    assert carrier_state(carriers) == before
    assert live_exports() == live
