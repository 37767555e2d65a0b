"""operation-profiling: profiles, their lifetime and the events they collect."""

from __future__ import annotations

import pytest

import strideweave as sw
import strideweave.profiling
from conformance.operation_profiling.profiling import COLLECT, by_correlation, cpu_tensor


def identity(e: sw.ProfileEvent) -> tuple:
    return (e.kind, e.correlation_id, e.start_ns, e.end_ns, e.thread_id)


def move_once() -> None:
    sw.move(cpu_tensor(4), sw.FileBacked(sw.Float32))


@pytest.mark.spec(f"{COLLECT}#1")
def test_profile_returns_a_new_profile_each_time():
    first, second = sw.profile(), sw.profile()
    assert isinstance(first, sw.Profile) and first is not second
    assert first.events == []
    assert sw.profile is strideweave.profiling.profile
    assert sw.Profile is strideweave.profiling.Profile
    assert sw.ProfileEvent is strideweave.profiling.ProfileEvent
    for name in ("profile", "Profile", "ProfileEvent", "KeyAverage", "KeyAverages"):
        assert name in sw.__all__ and name in strideweave.profiling.__all__
    with first as entered:
        assert entered is first


@pytest.mark.spec(f"{COLLECT}/collect-nothing-outside-a-profile", f"{COLLECT}#1", f"{COLLECT}#2")
def test_collect_nothing_outside_a_profile():
    move_once()
    with sw.profile() as prof:
        pass
    move_once()
    assert prof.events == []
    with sw.profile() as prof:
        move_once()
    move_once()
    assert len(prof.events) == 2


@pytest.mark.spec(f"{COLLECT}/nest-two-profiles", f"{COLLECT}#2", f"{COLLECT}#3")
def test_nest_two_profiles():
    with sw.profile() as outer:
        move_once()
        with sw.profile() as inner:
            move_once()
        move_once()
    assert len(by_correlation(outer.events)) == 3
    inner_moves = by_correlation(inner.events)
    assert len(inner_moves) == 1
    [(correlation_id, events)] = inner_moves.items()
    assert [identity(e) for e in by_correlation(outer.events)[correlation_id]] == [
        identity(e) for e in events
    ]
    # Delivery order: each move's submission comes before its completion.
    kinds = [e.kind for e in outer.events]
    assert kinds == ["submission", "completion"] * 3


@pytest.mark.spec(f"{COLLECT}/refuse-to-enter-a-profile-twice", f"{COLLECT}#1")
def test_refuse_to_enter_a_profile_twice():
    prof = sw.profile()
    with prof:
        move_once()
    before = [(e.kind, e.correlation_id) for e in prof.events]
    with pytest.raises(RuntimeError, match="Profile"):
        prof.__enter__()
    with pytest.raises(RuntimeError, match="Profile"):
        with prof:
            move_once()
    assert [(e.kind, e.correlation_id) for e in prof.events] == before


FIELDS = [
    "name",
    "kind",
    "category",
    "request",
    "carrier_classes",
    "shapes",
    "dtype",
    "start_ns",
    "end_ns",
    "duration_ns",
    "thread_id",
    "correlation_id",
]


@pytest.mark.spec(f"{COLLECT}#3")
@pytest.mark.parametrize("field", FIELDS)
def test_event_fields_are_read_only(field):
    with sw.profile() as prof:
        move_once()
    event = prof.events[0]
    before = getattr(event, field)
    with pytest.raises(AttributeError):
        setattr(event, field, before)
    assert getattr(event, field) == before
