"""carrier-composition: Evictable, one carrier over a fast and a slow tier it owns."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import strideweave as sw
import strideweave.carriers
from conformance.interop_movement.movement import (
    TERMINAL_TIMEOUT,
    Gate,
    InjectedFault,
    copy_span,
    refused,
    snapshot,
)
from strideweave._core import _testing
from strideweave.carriers.move import register_move_operation, unregister_move_operation

SPEC = "carrier-composition"
OWNS = f"{SPEC}/evictable-takes-ownership-of-two-checked-tiers"
MOVES = f"{SPEC}/evictable-moves-its-values-between-tiers-without-a-public-move"
PINS = f"{SPEC}/an-evictable-transition-pins-it-and-fails-atomically"
ACCESS = f"{SPEC}/evictable-reads-and-writes-in-either-residency"
PUBLIC = f"{SPEC}/a-public-move-from-an-evictable-moves-its-current-values"
DLPACK = f"{SPEC}/evictable-refuses-dlpack-export"

# (fast class, slow class): every pair of the definition-free built-in storing carriers
# the spec's scenarios name.
TIER_PAIRS = [(sw.CPU, sw.FileBacked), (sw.CPU, sw.Generic), (sw.Generic, sw.FileBacked)]


def evictable(values=(1.0, 2.0, 3.0), pair=(sw.CPU, sw.FileBacked)) -> sw.Evictable:
    fast_class, slow_class = pair
    return sw.Evictable(fast_class(sw.Float32, values=list(values)), slow_class(sw.Float32))


def label(c: sw.Carrier) -> str:
    """How messages name a carrier: "CPU carrier #7" (the start of its repr)."""
    return " ".join(repr(c).lstrip("<").split()[:3])


def state(e: sw.Evictable) -> tuple:
    """What a refused or failed call must leave as it was."""
    return (snapshot(e), e.residency, e.fast, e.slow, e.fast.owner, e.slow.owner)


@pytest.mark.spec(f"{OWNS}/construct-over-cpu-and-filebacked", f"{OWNS}#1", f"{OWNS}#4")
def test_construct_over_cpu_and_filebacked():
    fast, slow = sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.FileBacked(sw.Float32)
    e = sw.Evictable(fast, slow)
    assert e.residency == "resident"
    assert (e.slots, e.tolist(), e.version) == (3, [1.0, 2.0, 3.0], 0)
    assert e.is_mutable() and not e.is_released and e.owner is None
    assert e.fast is fast and e.slow is slow
    assert fast.owner is e and slow.owner is e
    for tier in (fast, slow):
        assert not tier.is_mutable()
        with refused(RuntimeError, "owned by Evictable carrier", carriers=[tier, e]):
            tier.write_range(0, [9.0])
        with refused(RuntimeError, "owned by Evictable carrier", carriers=[tier, e]):
            tier.release()
    with refused(RuntimeError, "owned by Evictable carrier", carriers=[fast, e]):
        fast.write(0, 9.0)
    assert slow.slots == 0  # allocated at the first eviction


@pytest.mark.spec(f"{OWNS}#6")
@pytest.mark.parametrize("evicted", [False, True])
def test_refuse_to_relinquish_a_tier(evicted):
    e = evictable()
    if evicted:
        e.evict()
    for tier in (e.fast, e.slow):
        with refused(RuntimeError, label(e), label(tier), carriers=[e, tier]):
            e.relinquish(tier)
        assert tier.owner is e
    with refused(ValueError, "does not own", carriers=[e]):
        e.relinquish(sw.CPU(sw.Float32))


@pytest.mark.spec(f"{OWNS}#4")
def test_tiers_are_read_only_properties():
    e = evictable()
    with pytest.raises(AttributeError):
        e.fast = sw.CPU(sw.Float32)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        e.residency = "evicted"  # type: ignore[misc]


@pytest.mark.spec(f"{OWNS}#5")
def test_evictable_is_a_final_definition_free_builtin():
    assert sw.Evictable is strideweave.carriers.Evictable
    assert "Evictable" in sw.__all__ and "Evictable" in strideweave.carriers.__all__
    descriptor = sw.Evictable.carrier_class
    assert descriptor.name == "Evictable" and descriptor.definition_state == "definition-free"
    assert descriptor.parent == sw.Carrier.carrier_class
    assert evictable().carrier_class == descriptor
    with pytest.raises(TypeError):

        class Tiered(sw.Evictable):  # type: ignore[misc]
            pass


def _released(c: sw.Carrier) -> sw.Carrier:
    c.release()
    return c


# Owners of the "owned" tiers, kept alive for the whole session (an owner that dies ends
# its ownership).
OWNERS: list[sw.Carrier] = []


def _owned(c: sw.Carrier) -> sw.Carrier:
    OWNERS.append(sw.Generic(sw.Float32, 1))
    OWNERS[-1].take_ownership(c)
    return c


UNUSABLE = {
    "released": (lambda: _released(sw.CPU(sw.Float32, 2)), RuntimeError, "is released"),
    "owned": (lambda: _owned(sw.CPU(sw.Float32, 2)), RuntimeError, "owned by Generic carrier"),
    "immutable": (
        lambda: sw.CPU(sw.Float32, values=[1.0, 2.0], mutable=False),
        RuntimeError,
        "constructed immutable",
    ),
    "dtype": (lambda: sw.CPU(sw.Int32, 2), TypeError, "Int32"),
}


@pytest.mark.spec(f"{OWNS}/refuse-an-unusable-tier", f"{OWNS}#2", f"{OWNS}#3")
@pytest.mark.parametrize("side", ["fast", "slow"])
@pytest.mark.parametrize("kind", sorted(UNUSABLE))
def test_refuse_an_unusable_tier(side, kind):
    make, error, reason = UNUSABLE[kind]
    bad, good = make(), sw.CPU(sw.Float32, 2)
    fast, slow = (bad, good) if side == "fast" else (good, bad)
    with refused(error, f"{side} tier", label(bad), reason, carriers=[bad, good]):
        sw.Evictable(fast, slow)
    assert good.owner is None and good.is_mutable()


@pytest.mark.spec(f"{OWNS}/refuse-an-unusable-tier", f"{OWNS}#2", f"{OWNS}#3")
def test_refuse_a_pinned_tier_the_same_carrier_and_a_wrong_slow_size():
    fast, slow = sw.CPU(sw.Float32, values=[1.0, 2.0]), sw.FileBacked(sw.Float32, 3)
    with refused(ValueError, "slow tier", "FileBacked carrier", "3", "2", carriers=[fast, slow]):
        sw.Evictable(fast, slow)
    with refused(ValueError, "same carrier", carriers=[fast]):
        sw.Evictable(fast, fast)
    with fast._pin("move #test"):
        with refused(RuntimeError, "fast tier", "pinned by move #test", carriers=[fast, slow]):
            sw.Evictable(fast, sw.FileBacked(sw.Float32))
    for argument, call in (
        ("fast", lambda: sw.Evictable([1.0], slow)),
        ("slow", lambda: sw.Evictable(fast, None)),
    ):
        with refused(TypeError, f"{argument} tier", carriers=[fast, slow]):
            call()
    assert fast.owner is None and slow.owner is None


@pytest.mark.spec(f"{OWNS}/refuse-a-tier-class-without-a-lowered-edge", f"{OWNS}#2", f"{OWNS}#3")
@pytest.mark.parametrize("side", ["fast", "slow"])
def test_refuse_a_tier_class_without_a_lowered_edge(side):
    class Routed(sw.CPU):
        pass

    class Provider(sw.TransferProvider):
        def prepare(self, request):
            return lambda output: None

    sw.define_carrier(
        sw.CarrierDefinition(
            Routed, routes=[sw.TransferRoute(Routed, sw.CPU, "routed/cpu", Provider())]
        )
    )
    routed, plain = Routed(sw.Float32, values=[1.0]), sw.CPU(sw.Float32, values=[2.0])
    fast, slow = (routed, plain) if side == "fast" else (plain, routed)
    with refused(TypeError, "Routed", carriers=[routed, plain]):
        sw.Evictable(fast, slow)
    assert routed.owner is None and plain.owner is None


@pytest.mark.spec(f"{MOVES}/evict-and-promote-a-round-trip", f"{MOVES}#1", f"{MOVES}#2")
@pytest.mark.spec(f"{MOVES}#5", f"{ACCESS}#1")
@pytest.mark.parametrize("pair", TIER_PAIRS, ids=lambda p: f"{p[0].__name__}-{p[1].__name__}")
def test_evict_and_promote_a_round_trip(pair):
    e = evictable((1.0, 2.0, 3.0, 4.0), pair)
    fast, slow = e.fast, e.slow
    token = e.version_token()
    assert e.evict() is None
    assert e.residency == "evicted"
    assert fast.is_released and fast.owner is None
    assert e.fast is not fast and type(e.fast) is type(fast)
    assert e.fast.slots == 0 and e.fast.owner is e and not e.fast.is_released
    assert e.slow is slow and slow.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert e.tolist() == [1.0, 2.0, 3.0, 4.0] and token.is_current() and e.version == 0
    e.write(1, 7.0)
    assert slow.read(1) == 7.0 and e.version == 1
    assert e.promote() is None
    assert e.residency == "resident"
    assert e.fast.tolist() == [1.0, 7.0, 3.0, 4.0] == e.tolist()
    assert e.slow is slow and slow.tolist() == [1.0, 7.0, 3.0, 4.0]
    assert e.version == 1
    e.write(0, 5.0)
    assert slow.read(0) == 1.0  # the slow tier's copy is stale once the Evictable is written
    e.evict()
    assert slow.tolist() == [5.0, 7.0, 3.0, 4.0]


@pytest.mark.spec(f"{MOVES}/ignore-a-transition-to-the-current-residency", f"{MOVES}#4")
def test_ignore_a_transition_to_the_current_residency():
    e = evictable()
    before = state(e)
    assert e.promote() is None
    assert state(e) == before
    e.evict()
    before = state(e)
    assert e.evict() is None
    assert state(e) == before


@pytest.mark.spec(f"{MOVES}/record-nothing-for-a-transition", f"{MOVES}#3")
def test_record_nothing_for_a_transition():
    e = evictable()
    t = sw.Tensor(e, sw.Layout(3))
    t.requires_grad = True
    with sw.profile() as prof:
        e.evict()
        e.promote()
    assert prof.events == []
    assert not e.is_released and t.autograd_ctx is None and e.version == 0


@pytest.mark.spec(f"{MOVES}#5")
def test_a_transition_keeps_saved_versions_current():
    """A node saved over an Evictable before a transition still runs backward after it."""
    e = evictable((1.0, 2.0))
    t = sw.Tensor(e, sw.Layout(2))
    t.requires_grad = True
    y = (t * t).sum()
    e.evict()
    y.backward()
    assert t.grad.tolist() == [2.0, 4.0]


# The stages of a move's fault injection that lowered execution honours.
TIER_FAULT_STAGES = ("allocation", "copy")


@pytest.mark.spec(f"{PINS}/keep-everything-after-a-failed-transition", f"{PINS}#3")
@pytest.mark.parametrize("stage", TIER_FAULT_STAGES)
@pytest.mark.parametrize("pair", TIER_PAIRS, ids=lambda p: f"{p[0].__name__}-{p[1].__name__}")
def test_keep_everything_after_a_failed_transition(stage, pair):
    e = evictable((4.0, 5.0), pair)
    e.write(0, 6.0)
    for transition in ("evict", "promote"):
        before = state(e)
        fault = InjectedFault(f"{transition} fails at {stage}")
        _testing.inject_move_fault(stage, fault)
        try:
            with pytest.raises(InjectedFault) as info:
                getattr(e, transition)()
        finally:
            assert _testing.clear_move_faults() == 0
        assert info.value is fault
        assert state(e) == before and e.pinned_by is None
        getattr(e, transition)()
        assert e.tolist() == [6.0, 5.0] and e.version == 1
    assert e.residency == "resident"


def gated_tiers(gate: Gate):
    """Fresh tier classes whose fast -> slow edge is a registered, gated copy hook."""

    class Fast(sw.CPU):
        pass

    class Slow(sw.Generic):
        pass

    class GatedEvict(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            gate.pass_through(tensor, destination, output, element_count)
            copy_span(tensor, destination, element_count)

    register_move_operation(Fast, Slow, GatedEvict)
    return Fast, Slow


@pytest.mark.spec(f"{PINS}#1", f"{PINS}/read-during-an-eviction")
def test_writes_are_refused_and_reads_continue_during_an_eviction():
    gate = Gate()
    fast_class, slow_class = gated_tiers(gate)
    try:
        e = sw.Evictable(fast_class(sw.Float32, values=[1.0, 2.0]), slow_class(sw.Float32))
        outcome: list = []
        worker = threading.Thread(target=lambda: outcome.append(e.evict()))
        worker.start()
        assert gate.entered.wait(TERMINAL_TIMEOUT)
        name = f"evict of {label(e)}"
        assert e.pinned_by == name
        for refusal in (
            lambda: e.write(0, 9.0),
            lambda: e.write_range(0, [9.0]),
            e.release,
            e.promote,
            lambda: sw.move(sw.Tensor(e, sw.Layout(2)), sw.CPU(sw.Float32)),
        ):
            with refused(RuntimeError, name, carriers=[e]):
                refusal()
        assert e.tolist() == [1.0, 2.0] and sw.Tensor(e, sw.Layout(2)).tolist() == [1.0, 2.0]
        gate.open()
        worker.join(TERMINAL_TIMEOUT)
        assert outcome == [None] and e.residency == "evicted" and e.pinned_by is None
        assert e.tolist() == [1.0, 2.0] and e.version == 0
    finally:
        gate.open()
        unregister_move_operation(fast_class, slow_class)


@pytest.mark.spec(f"{PINS}/read-during-an-eviction", f"{PINS}#1")
def test_read_during_an_eviction():
    n = 1 << 18
    values = np.arange(n, dtype=np.float32)
    fast = sw.CPU(sw.Float32, n)
    fast.write_range(0, values)
    e = sw.Evictable(fast, sw.FileBacked(sw.Float32))
    window = sw.Tensor(e, sw.Layout((4, 2), (3, n // 2)), 5)
    expected = window.tolist()
    stop = threading.Event()
    errors: list = []
    reads = [0]

    def read() -> None:
        while not stop.is_set():
            try:
                assert e.read(n - 1) == float(n - 1)
                assert window.tolist() == expected
                reads[0] += 1
            except BaseException as error:  # reported below, on the main thread
                errors.append(error)
                return

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(3):
            e.evict()
            e.promote()
    finally:
        stop.set()
        reader.join(TERMINAL_TIMEOUT)
    assert errors == [] and reads[0] > 0
    assert e.version == 0


@pytest.mark.spec(f"{PINS}/refuse-a-transition-of-a-pinned-or-released-evictable", f"{PINS}#2")
@pytest.mark.parametrize("transition", ["evict", "promote"])
def test_refuse_a_transition_of_a_pinned_or_released_evictable(transition):
    e = evictable()
    if transition == "promote":
        e.evict()
    with e._pin("move #pending"):
        with refused(RuntimeError, label(e), "move #pending", carriers=[e]):
            getattr(e, transition)()
        assert e.residency == ("resident" if transition == "evict" else "evicted")
    e.release()
    with refused(RuntimeError, label(e), "released", carriers=[e]):
        getattr(e, transition)()


@pytest.mark.spec(f"{ACCESS}/read-and-write-while-evicted", f"{ACCESS}#1")
@pytest.mark.parametrize("pair", TIER_PAIRS, ids=lambda p: f"{p[0].__name__}-{p[1].__name__}")
def test_read_and_write_while_evicted(pair):
    e = evictable((1.0, 2.0, 3.0, 4.0), pair)
    e.evict()
    e.write(0, 10.0)
    e.write_range(2, np.array([30.0, 40.0], dtype=np.float32))
    assert e.version == 2
    assert e.read(0) == 10.0 and e.read_range(1, 3) == [2.0, 30.0, 40.0]
    out = np.zeros(4, dtype=np.float32)
    assert e.read_range(0, 4, out=out) is out and out.tolist() == [10.0, 2.0, 30.0, 40.0]
    assert sw.Tensor(e, sw.Layout(2, 2), 1).tolist() == [2.0, 40.0]
    assert np.asarray(sw.Tensor(e, sw.Layout((2, 2)))).tolist() == [[10.0, 30.0], [2.0, 40.0]]
    assert e.slow.tolist() == [10.0, 2.0, 30.0, 40.0]
    assert e.fast.slots == 0


@pytest.mark.spec(f"{ACCESS}#1")
@pytest.mark.parametrize("evicted", [False, True])
def test_entry_point_errors_change_nothing_in_either_residency(evicted):
    e = evictable()
    if evicted:
        e.evict()
    for error, call in (
        (IndexError, lambda: e.write(3, 1.0)),
        (IndexError, lambda: e.write_range(2, [1.0, 2.0])),
        (IndexError, lambda: e.read(-1)),
        (TypeError, lambda: e.write(0, "x")),
        (RuntimeError, lambda: e.allocate(2)),
    ):
        before = state(e)
        with pytest.raises(error) as info:
            call()
        assert "Evictable carrier" in str(info.value) or error is TypeError
        assert state(e) == before


@pytest.mark.spec(
    f"{ACCESS}/allocate-copy-and-release-an-evictable", f"{ACCESS}#2", f"{ACCESS}#3", f"{ACCESS}#4"
)
@pytest.mark.parametrize("pair", TIER_PAIRS, ids=lambda p: f"{p[0].__name__}-{p[1].__name__}")
def test_allocate_copy_and_release_an_evictable(pair):
    fast_class, slow_class = pair
    e = sw.Evictable(fast_class(sw.Int32), slow_class(sw.Int32))
    assert e.slots == 0
    e.allocate(3)
    assert (e.slots, e.version, e.tolist()) == (3, 1, [0, 0, 0])
    assert e.fast.slots == 3 and e.slow.slots == 0
    like = e.new_like()
    assert type(like) is sw.Evictable and like.slots == 0 and like.residency == "resident"
    assert like.owner is None and like.is_mutable() and like.dtype == sw.Int32
    assert type(like.fast) is fast_class and type(like.slow) is slow_class
    assert like.fast is not e.fast and like.fast.owner is like
    e.evict()
    fast, slow = e.fast, e.slow
    e.release()
    assert e.is_released and e.slots == 0
    assert fast.is_released and slow.is_released
    assert fast.owner is e and slow.owner is e
    e.release()
    assert type(e.new_like()) is sw.Evictable


@pytest.mark.spec(f"{ACCESS}#4")
def test_release_is_refused_while_pinned():
    e = evictable()
    with e._pin("move #holding"):
        with refused(RuntimeError, "move #holding", carriers=[e, e.fast, e.slow]):
            e.release()


@pytest.mark.spec(f"{ACCESS}#2")
def test_allocate_an_evicted_empty_evictable():
    e = sw.Evictable(sw.CPU(sw.Float32), sw.FileBacked(sw.Float32))
    e.evict()
    e.allocate(2)
    assert e.slow.slots == 2 and e.tolist() == [0.0, 0.0] and e.version == 1
    e.promote()
    assert e.fast.tolist() == [0.0, 0.0]


@pytest.mark.spec(f"{PUBLIC}/move-from-an-evicted-evictable", f"{PUBLIC}#1")
@pytest.mark.parametrize("evicted", [False, True])
@pytest.mark.parametrize("asynchronous", [False, True])
def test_move_from_an_evicted_evictable(evicted, asynchronous):
    e = evictable((1.0, 2.0, 3.0, 4.0, 5.0))
    if evicted:
        e.evict()
    fast, slow = e.fast, e.slow
    t = sw.Tensor(e, sw.Layout((2, 2), (1, 3)), 0)
    expected = t.tolist()
    destination = sw.CPU(sw.Float32)
    if asynchronous:
        result = sw.move_async(t, destination).wait()
    else:
        result = sw.move(t, destination)
    assert result.tolist() == expected and result.carrier is destination
    assert e.is_released and fast.is_released and slow.is_released
    assert sw.carriers.move.dispatch_move(sw.Evictable, sw.CPU) is sw.ElementwiseMoveOperation


@pytest.mark.spec(f"{PUBLIC}/move-into-an-evictable", f"{PUBLIC}#2")
def test_move_into_an_evictable():
    e = sw.Evictable(sw.CPU(sw.Float32), sw.FileBacked(sw.Float32))
    source = sw.tensor([[1.0, 2.0], [3.0, 4.0]])
    result = sw.move(source, e)
    assert result.carrier is e and result.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert e.fast.slots == 4 and e.version == 0 and e.moves_received == 1
    e.evict()
    assert result.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.spec(f"{PUBLIC}/differentiate-through-a-move-from-an-evictable", f"{PUBLIC}#3")
@pytest.mark.parametrize("evicted", [False, True])
def test_differentiate_through_a_move_from_an_evictable(evicted):
    e = evictable((1.0, 2.0, 3.0))
    if evicted:
        e.evict()
    t = sw.Tensor(e, sw.Layout(3))
    t.requires_grad = True
    moved = sw.move(t, sw.CPU(sw.Float32))
    assert moved.autograd_ctx is not None
    moved.sum().backward()
    assert type(t.grad.carrier) is sw.Evictable
    assert t.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.spec(f"{DLPACK}/refuse-export-of-a-resident-evictable-over-cpu", f"{DLPACK}#1")
@pytest.mark.parametrize("pair", TIER_PAIRS, ids=lambda p: f"{p[0].__name__}-{p[1].__name__}")
def test_refuse_export_of_a_resident_evictable_over_cpu(pair):
    e = evictable((1.0, 2.0, 3.0), pair)
    t = sw.Tensor(e, sw.Layout(3))
    for _ in ("resident", "evicted"):
        for call in (
            t.__dlpack__,
            lambda: t.__dlpack__(max_version=(1, 0)),
            t.__dlpack_device__,
            lambda: np.from_dlpack(t),
            e.dlpack_info,
        ):
            with refused(BufferError, "Evictable", carriers=[e, e.fast, e.slow]):
                call()
        e.evict()
    assert e.tolist() == [1.0, 2.0, 3.0]
