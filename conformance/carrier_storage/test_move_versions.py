"""carrier-storage: a successful move changes neither carrier's version; the destination
counts the moves it received, and a saved input over it refuses backward after one.

Every route of interop-movement's fault tests (conformance/interop_movement/
test_move_faults.py: the built-in pairs, a Python _copy, definition routes' providers),
plus the BlockDeviceCarrier pairs, into an empty and into a sized destination.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import strideweave as sw
from conformance.interop_movement.movement import InjectedFault, snapshot, source_tensor
from conformance.interop_movement.test_move_faults import ROUTES as FAULT_ROUTES
from conformance.interop_movement.test_move_faults import STAGING, builtin_route
from strideweave._core import _testing

REQ = "carrier-storage/a-successful-move-changes-neither-carriers-version"
PIN = "carrier-storage/an-operation-in-progress-can-pin-a-carrier"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"

ROUTES = {
    **FAULT_ROUTES,
    "CPU->BlockDeviceCarrier": builtin_route(sw.CPU, sw.BlockDeviceCarrier),
    "BlockDeviceCarrier->CPU": builtin_route(sw.BlockDeviceCarrier, sw.CPU),
}
EMPTY = pytest.mark.parametrize("empty", [True, False], ids=["empty", "sized"])


@pytest.fixture(autouse=True)
def no_fault_left_armed() -> Iterator[None]:
    assert _testing.clear_move_faults() == 0, "a fault was armed before the test"
    yield
    assert _testing.clear_move_faults() == 0, "an injected fault never fired"


def destination_for(route, cosize: int, empty: bool) -> sw.Carrier:
    if empty:
        return route.destination_class(sw.Int32)
    return route.destination_class(sw.Int32, values=[-1 - i for i in range(cosize + 2)])


@pytest.mark.spec(
    f"{REQ}/move-into-a-carrier-holding-slots",
    f"{REQ}/move-into-an-empty-carrier",
    f"{REQ}#1",
    f"{REQ}#2",
    f"{REQ}#3",
    f"{REQ}#5",
    f"{TOKENS}#2",
)
@EMPTY
@pytest.mark.parametrize("route_name", list(ROUTES))
def test_a_successful_move_changes_neither_version(route_name, empty):
    with ROUTES[route_name]() as route:
        route.open()  # a holding route reports at once
        t = source_tensor(route.source_class)
        source, values, cosize = t.carrier, t.tolist(), t.layout.cosize
        destination = destination_for(route, cosize, empty)
        source_version = source.version
        version = destination.version
        assert destination.moves_received == 0 and source.moves_received == 0
        token = destination.version_token()

        result = sw.move(t, destination)

        assert result.carrier is destination and result.tolist() == values
        assert destination.slots == (cosize if empty else cosize + 2)
        if not empty:  # the slots past the span keep their values
            assert destination.read_range(cosize, 2) == [-1 - cosize, -2 - cosize]
        assert source.is_released and source.version == source_version
        assert source.moves_received == 0
        assert destination.version == version
        assert token.is_current() and token == destination.version_token()
        assert destination.moves_received == 1
        assert destination.pinned_by is None and destination.is_mutable()

        # The move's pin ended cleanly: a public write counts once, as always.
        destination.write(0, 5)
        assert destination.version == version + 1 and not token.is_current()
        assert destination.moves_received == 1


@pytest.mark.spec(f"{REQ}#3", f"{REQ}#5")
@pytest.mark.parametrize("cls", [sw.CPU, sw.Generic, sw.FileBacked, sw.Metal])
def test_each_successful_move_counts_once(cls):
    destination = cls(sw.Int32, values=[0] * 16)
    version = destination.version
    for k in range(1, 4):
        t = source_tensor(sw.CPU)
        values = t.tolist()
        assert sw.move_async(t, destination).wait().tolist() == values
        assert destination.moves_received == k and destination.version == version


@pytest.mark.spec(f"{REQ}#5")
def test_nothing_but_a_move_counts_as_received():
    c = sw.CPU(sw.Int32)
    c.allocate(3)
    c.write(0, 1)
    c.write_range(1, [2, 3])
    assert c.moves_received == 0 and c.version == 3
    t = sw.Tensor(c, sw.Layout(3))
    sw.move(t, sw.Generic(sw.Int32))  # the source of a move receives nothing
    assert c.is_released and c.moves_received == 0 and c.version == 3

    # A composite's transfers between its own parts are not moves.
    fast, slow = sw.CPU(sw.Float32, values=[1.0, 2.0]), sw.FileBacked(sw.Float32)
    e = sw.Evictable(fast, slow)
    e.evict()
    e.promote()
    assert slow.version == 1 and e.fast.version == 1  # each part written once
    assert slow.moves_received == 0 and e.fast.moves_received == 0
    assert e.moves_received == 0 and e.version == 0
    with pytest.raises(AttributeError):
        e.moves_received = 1  # read-only


@pytest.mark.spec(f"{REQ}/keep-the-versions-of-a-failed-move", f"{REQ}#4", f"{REQ}#5", f"{PIN}#6")
@EMPTY
@pytest.mark.parametrize("route_name", list(ROUTES))
@pytest.mark.parametrize("stage", ["submission", "completion"])
def test_a_failed_move_keeps_its_version_rule(stage, route_name, empty):
    with ROUTES[route_name]() as route:
        route.open()
        t = source_tensor(route.source_class)
        source, cosize = t.carrier, t.layout.cosize
        destination = destination_for(route, cosize, empty)
        source_state, destination_state = snapshot(source), snapshot(destination)
        fault = InjectedFault(stage)
        _testing.inject_move_fault(stage, fault)
        with pytest.raises(InjectedFault) as info:
            sw.move(t, destination)
        assert info.value is fault
        assert snapshot(source) == source_state and source.moves_received == 0
        assert destination.moves_received == 0 and destination.pinned_by is None
        if route_name in STAGING:  # staged apart and dropped: nothing changed
            assert snapshot(destination) == destination_state
        elif stage == "completion":  # the transfer wrote it: one mutation
            assert destination.version == destination_state[0] + 1
        elif empty:  # allocated at submission, never written
            assert destination.tolist() == [0] * cosize and destination.version == 1
        else:
            assert snapshot(destination) == destination_state

        # The same Tensor then moves into the same destination: counted, no new version.
        version, values = destination.version, t.tolist()
        assert sw.move(t, destination).tolist() == values
        assert destination.version == version and destination.moves_received == 1


def multiply(destination: sw.Carrier) -> tuple[sw.Tensor, sw.Tensor]:
    """x * c summed, c over ``destination``: mul saves c as its input 1."""
    x = sw.tensor([1.0, 2.0])
    x.requires_grad = True
    c = sw.Tensor(destination, sw.Layout(2))
    return x, (x * c).sum()


@pytest.mark.spec(
    f"{REQ}/refuse-backward-over-a-saved-input-whose-carrier-received-a-move",
    f"{REQ}#6",
)
@pytest.mark.parametrize("cls", [sw.CPU, sw.Generic, sw.Metal])
def test_backward_refuses_a_saved_input_whose_carrier_received_a_move(cls):
    destination = cls(sw.Float32, values=[3.0, 4.0])
    x, y = multiply(destination)
    version = destination.version
    sw.move(sw.tensor([7.0, 8.0]), destination)
    assert destination.version == version and destination.moves_received == 1
    message = (
        rf"mul: saved input 1 in {cls.__name__} carrier #\d+ received a move after it was "
        r"saved: 0 moves received when saved, now 1"
    )
    with pytest.raises(RuntimeError, match=message):
        y.backward()
    assert x.grad is None and y.autograd_ctx is not None


@pytest.mark.spec(f"{REQ}/refuse-backward-over-a-saved-input-whose-carrier-received-a-move")
def test_backward_succeeds_without_a_move():
    destination = sw.CPU(sw.Float32, values=[3.0, 4.0])
    sw.move(sw.tensor([5.0, 6.0]), destination)  # received before the save: no refusal
    x, y = multiply(destination)
    y.backward()
    assert x.grad.tolist() == [5.0, 6.0]
