"""interop-movement: moves of the factory's carriers to and from CPU, both ways.

Values and layouts (generated ones, with holes and broadcasts, from the one strategies
module), the route each direction resolves, a fault injected at every stage of a move
(``strideweave._core._testing.inject_move_fault``, the library's own fault injection), and
the reverse route a move's backward takes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave._core import _testing  # type: ignore[attr-defined]  # not in _core.pyi
from strideweave.kit import expect, expect_raises, violation
from strideweave.kit import strategies as S
from strideweave.kit.checks.support import KIT_SETTINGS, Make, sample

MOVE = "interop-movement/move-relocates-values-into-a-caller-supplied-carrier"
VERSIONS = "carrier-storage/a-successful-move-changes-neither-carriers-version"
TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"
AUTOGRAD = "interop-movement/move-participates-in-autograd-across-the-carrier-boundary"
ROUTES = "interop-movement/move-routes-are-exact-and-definition-owned"

STAGES = _testing.move_stages
# A fault up to submission raises from move_async; a later one fails the handle.
RAISED_DIRECTLY = STAGES[: STAGES.index("copy")]
DIRECTIONS = ("to CPU", "from CPU")
HOLES = sw.Layout((2, 3), (2, 4))  # six coordinates over cosize 11, holes between


class InjectedFault(Exception):
    """The exception every injected fault raises."""


@pytest.fixture(autouse=True)
def no_fault_left_armed() -> Iterator[None]:
    """No check starts with a fault armed, nor leaves one (a move refused before the
    stage of its fault leaves it armed: the check has failed on the refusal already)."""
    assert _testing.clear_move_faults() == 0, "a move fault was armed before the check"
    yield
    _testing.clear_move_faults()


def source_and_destination(
    make: Make, direction: str, dtype: sw.DType, layout: sw.Layout, offset: int, sized: bool
) -> tuple[sw.Tensor, sw.Carrier]:
    """A Tensor over a carrier holding distinct values, and the destination of its move:
    the factory's carrier to CPU, or CPU to the factory's; empty, or with two spare slots
    (callers pass ``sized`` for a class that does not support allocation)."""
    values = [sample(dtype, s) for s in range(offset + layout.cosize + 1)]
    to_cpu = direction == "to CPU"
    carrier = make(dtype, values=values) if to_cpu else sw.CPU(dtype, values=values)
    n = layout.cosize + 2 if sized else None
    destination = sw.CPU(dtype, n) if to_cpu else make(dtype, n)
    return sw.Tensor(carrier, layout, offset), destination


def check_moved(t: sw.Tensor, destination: sw.Carrier, sized: bool) -> None:
    """Moves ``t`` into ``destination`` and checks the published result."""
    values, source = t.tolist(), t.carrier
    source_version, destination_version = source.version, destination.version
    result = sw.move(t, destination)
    expect(
        result.carrier is destination and result.offset == 0 and result.layout == t.layout,
        f"{MOVE}#2",
        f"the result is over {type(result.carrier).__name__} at offset {result.offset} "
        f"with layout {result.layout}, source layout {t.layout}",
    )
    got = result.tolist()
    expect(got == values, f"{MOVE}#6", f"moved {values}, the result reads {got}")
    expect(source.is_released, f"{MOVE}#2", "the source carrier is live after the move")
    if not sized:
        expect(
            destination.slots == t.layout.cosize,
            f"{MOVE}#5",
            f"an empty destination got {destination.slots} slots for cosize {t.layout.cosize}",
        )
    expect(
        source.version == source_version and destination.version == destination_version,
        f"{VERSIONS}#1",
        f"versions {source_version}, {destination_version} became "
        f"{source.version}, {destination.version}",
    )
    expect(
        destination.moves_received == 1,
        f"{VERSIONS}#5",
        f"the destination counts {destination.moves_received} moves received",
    )


@pytest.mark.spec(
    f"{MOVE}/move-and-release-the-source",
    f"{MOVE}/allocate-an-empty-destination",
    f"{MOVE}#2",
    f"{MOVE}#4",
    f"{MOVE}#5",
    f"{MOVE}#6",
    f"{VERSIONS}/move-into-a-carrier-holding-slots",
    f"{VERSIONS}/move-into-an-empty-carrier",
    f"{VERSIONS}#1",
    f"{VERSIONS}#2",
    f"{VERSIONS}#3",
    f"{VERSIONS}#5",
)
@pytest.mark.parametrize("direction", DIRECTIONS)
@KIT_SETTINGS
@given(layout=S.layouts(), offset=st.integers(0, 3), sized=st.booleans())
def test_move_any_layout(make: Make, numeric, allocates, direction, layout, offset, sized):
    """Any layout (nested, holes, broadcasts, extents 0 and 1) moves with its values and
    layout, into an empty destination or one with slots to spare."""
    sized = sized or (direction == "from CPU" and not allocates)
    t, destination = source_and_destination(make, direction, numeric, layout, offset, sized)
    check_moved(t, destination, sized)


@pytest.mark.spec(f"{MOVE}/move-a-broadcast-view-without-materializing-it", f"{MOVE}#4")
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_move_a_broadcast_view_without_materializing_it(make: Make, numeric, allocates, direction):
    layout = sw.Layout((3, 4), (0, 1))  # 12 coordinates over 4 slots
    sized = direction == "from CPU" and not allocates
    t, destination = source_and_destination(make, direction, numeric, layout, 0, sized)
    check_moved(t, destination, sized)
    expect(destination.slots <= 6, f"{MOVE}#4", f"a broadcast view took {destination.slots}")


@pytest.mark.spec(f"{ROUTES}#3", f"{ROUTES}#4")
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_route_serves_each_direction(make: Make, carrier_class, numeric, allocates, direction):
    """Both pairs with CPU resolve a route: a registered or fallback move operation for a
    class without a definition, a declared route (or the permitted fallback) for a class
    with one."""
    pair = (carrier_class, sw.CPU) if direction == "to CPU" else (sw.CPU, carrier_class)
    if carrier_class.carrier_class.definition_state != "definition-backed":
        operation = sw.carriers.move.dispatch_move(*pair)
        expect(
            isinstance(operation, type) and issubclass(operation, sw.MoveOperation),
            f"{ROUTES}#4",
            f"dispatch_move{tuple(c.__name__ for c in pair)} gave {operation!r}",
        )
    sized = direction == "from CPU" and not allocates
    t, destination = source_and_destination(make, direction, numeric, HOLES, 1, sized)
    handle = sw.move_async(t, destination)
    expect(handle.wait().carrier is destination, f"{ROUTES}#3", "the move published elsewhere")


@pytest.mark.spec(
    f"{TERMINAL}/fail-one-asynchronous-move", f"{TERMINAL}#1", f"{TERMINAL}#3", f"{VERSIONS}#4"
)
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("stage", STAGES)
def test_a_fault_at_every_move_stage(make: Make, numeric, allocates, stage, direction):
    """A fault at any stage fails the move with that very exception; the source stays live,
    unpinned, with its values and version; nothing is published; the destination is left
    unpinned and mutable, having received no move; the same move then succeeds."""
    sized = direction == "from CPU" and not allocates
    t, destination = source_and_destination(make, direction, numeric, HOLES, 1, sized)
    source, values = t.carrier, t.tolist()
    version = source.version
    fault = InjectedFault(f"injected at {stage}")
    _testing.inject_move_fault(stage, fault)
    if stage in RAISED_DIRECTLY:
        raised = expect_raises(
            InjectedFault, f"{TERMINAL}#3", lambda: sw.move_async(t, destination)
        )
    else:
        handle = sw.move_async(t, destination)
        raised = expect_raises(InjectedFault, f"{TERMINAL}#3", handle.wait)
    expect(raised is fault, f"{TERMINAL}#3", f"the move raised {raised!r}, not the fault")
    expect(
        not source.is_released and source.pinned_by is None and source.version == version,
        f"{TERMINAL}#1",
        f"after a fault at {stage}: released {source.is_released}, pinned by "
        f"{source.pinned_by!r}, version {version} -> {source.version}",
    )
    expect(t.tolist() == values, f"{TERMINAL}#3", f"the source reads {t.tolist()}")
    expect(
        destination.pinned_by is None
        and destination.is_mutable()
        and destination.moves_received == 0,
        f"{TERMINAL}#3",
        f"the destination is pinned by {destination.pinned_by!r} or counts a move",
    )
    check_moved(t, destination, destination.slots != 0)


@pytest.mark.spec(f"{AUTOGRAD}/move-a-gradient-back-to-the-source-carrier-class", f"{AUTOGRAD}#8")
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_move_a_gradient_back_to_the_source_carrier_class(make: Make, dtypes, allocates, direction):
    """A move's backward takes the reverse route: the gradient is in fresh storage of the
    source's exact class, with the cotangent's values under the source layout."""
    if sw.Float32 not in dtypes:
        pytest.skip("gradients need Float32, which the carrier class does not hold")
    sized = direction == "from CPU" and not allocates
    x, destination = source_and_destination(make, direction, sw.Float32, HOLES, 1, sized)
    x.requires_grad = True
    source_class = type(x.carrier)
    y = sw.move(x, destination)
    cotangent = sw.Tensor(sw.arange(1.0, 7.0, dtype=sw.Float32).carrier, sw.Layout((2, 3)))
    y.backward(cotangent)
    grad = x.grad
    if grad is None:
        raise violation(f"{AUTOGRAD}#8", "backward left no gradient")
    expect(
        type(grad.carrier) is source_class and grad.carrier is not x.carrier,
        f"{AUTOGRAD}#8",
        f"the gradient is in a {type(grad.carrier).__name__}, not fresh {source_class.__name__}",
    )
    expect(
        grad.layout == HOLES and grad.tolist() == cotangent.tolist(),
        f"{AUTOGRAD}#8",
        f"the gradient {grad.tolist()} under {grad.layout}",
    )
