"""carrier-storage: a move pins its carriers before it runs a caller's hook, checks what
each hook returns, and hands each exception a hook raises to the caller unchanged."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager

import pytest

import strideweave as sw
from conformance.interop_movement.movement import snapshot
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.carriers.move import registered_move_operation

SHIELD = (
    "carrier-storage/a-move-shields-its-carriers-from-the-hooks-it-runs-and-checks-what-they-return"
)

VALUES = [5, 6, 7]

HOOKS = ["instantiation", "prepare", "prepared callable", "_copy"]


class Abort(BaseException):
    """Derives from BaseException only, as KeyboardInterrupt and SystemExit do."""


def label(carrier: sw.Carrier) -> str:
    """How messages name ``carrier``: its class and number ("Source carrier #12")."""
    number = re.search(r"carrier #\d+", repr(carrier))
    assert number is not None, repr(carrier)
    return f"{type(carrier).__name__} {number.group()}"


def span(tensor: sw.Tensor, destination: sw.Carrier, element_count: int) -> None:
    destination.write_range(0, tensor.carrier.read_range(tensor.offset, element_count))


def hostile_actions(tensor: sw.Tensor, destination: sw.Carrier) -> dict[str, Callable[[], object]]:
    """What a hook might do to the move's own carriers, each a call the pins refuse."""
    source = tensor.carrier
    return {
        "release the source": source.release,
        "write the source": lambda: source.write(0, 99),
        "write a range of the source": lambda: source.write_range(0, [1, 1, 1]),
        "move the source": lambda: sw.move(tensor, type(destination)(sw.Int32)),
        "own the source": lambda: sw.CPU(sw.Int32).take_ownership(source),
        "release the destination": destination.release,
        "allocate the destination": lambda: destination.allocate(1),
        "own the destination": lambda: sw.CPU(sw.Int32).take_ownership(destination),
    }


@contextmanager
def move_with_hook(hook: str, body: Callable[..., object]) -> Iterator[tuple]:
    """Fresh carrier classes whose move runs ``body(tensor, destination, output)`` in the
    named hook; the hook then completes the transfer itself. Yields (tensor, destination)."""

    class Source(sw.CPU):
        pass

    class Destination(sw.CPU):
        pass

    tensor = sw.Tensor(Source(sw.Int32, values=VALUES), sw.Layout((3,), (1,)), 0)
    destination = Destination(sw.Int32)

    if hook in ("instantiation", "_copy"):

        class Operation(sw.MoveOperation):
            def __init__(self) -> None:
                super().__init__()
                if hook == "instantiation":
                    body(tensor, destination, None)

            def _copy(self, moved, into, output, element_count):
                if hook == "_copy":
                    returned = body(moved, into, output)
                    span(moved, into, element_count)
                    return returned
                span(moved, into, element_count)
                return None

        with registered_move_operation(Source, Destination, Operation):
            yield tensor, destination
        return

    class Provider(TransferProvider):
        def prepare(self, request):
            if hook == "prepare":
                body(request.tensor, request.destination, None)

            def transfer(output):
                returned = None
                if hook == "prepared callable":
                    returned = body(request.tensor, request.destination, output)
                span(request.tensor, output.carrier, request.element_count)
                return returned

            return transfer

    define_carrier(
        CarrierDefinition(Source, routes=[TransferRoute(Source, Destination, "hook", Provider())])
    )
    yield tensor, destination


@pytest.mark.spec(f"{SHIELD}/misbehave-inside-a-hook", f"{SHIELD}#1", f"{SHIELD}#2")
@pytest.mark.parametrize("hook", HOOKS)
def test_a_hook_cannot_touch_the_moves_carriers(hook):
    refusals: dict[str, BaseException | None] = {}
    carriers: list[sw.Carrier] = []

    def misbehave(tensor, destination, output):
        carriers[:] = [tensor.carrier, destination]
        for name, action in hostile_actions(tensor, destination).items():
            try:
                action()
                refusals[name] = None
            except Exception as refusal:  # recorded, checked below
                refusals[name] = refusal

    with move_with_hook(hook, misbehave) as (tensor, destination):
        moved = sw.move(tensor, destination)
        assert moved.tolist() == VALUES
        assert destination.tolist() == VALUES and destination.slots == 3
        assert destination.owner is None and destination.is_mutable()
        assert tensor.carrier.is_released  # by the move itself, once it committed
    assert set(refusals) == set(hostile_actions(tensor, destination))
    for name, refusal in refusals.items():
        assert isinstance(refusal, RuntimeError), (name, refusal)
        message = str(refusal)
        carrier = tensor.carrier if "source" in name else destination
        assert label(carrier) in message, (name, message)
        if name == "allocate the destination" and hook in ("prepared callable", "_copy"):
            # These hooks run where the move's lease admits them to write the
            # destination (their job), which the move allocated before running them.
            assert "already holds 3 slots" in message, (name, message)
        else:
            assert "pinned by move #" in message, (name, message)


@pytest.mark.spec(f"{SHIELD}/return-the-wrong-thing-from-a-hook", f"{SHIELD}#3")
@pytest.mark.parametrize("returned", [42, "done", sw.CPU(sw.Int32), False])
def test_a_copy_hook_returning_a_value_fails_the_move(returned):
    with move_with_hook("_copy", lambda tensor, destination, output: returned) as (
        tensor,
        destination,
    ):
        before = snapshot(tensor.carrier)
        with pytest.raises(TypeError) as info:
            sw.move(tensor, destination)
    message = str(info.value)
    assert "._copy returned" in message and repr(returned)[:20] in message, message
    assert snapshot(tensor.carrier) == before
    assert destination.pinned_by is None


class LyingFuture(Future):
    """A Future whose exception() reports something that is not an exception."""

    def __init__(self, reported: object) -> None:
        super().__init__()
        self.reported = reported

    def exception(self, timeout=None):
        return self.reported


@pytest.mark.spec(f"{SHIELD}/return-the-wrong-thing-from-a-hook", f"{SHIELD}#3")
@pytest.mark.parametrize("reported", [5, "failed", ValueError])
def test_a_future_reporting_a_non_exception_fails_the_move(reported):
    def lying(tensor, destination, output):
        future = LyingFuture(reported)
        future.set_result(None)
        return future

    with move_with_hook("prepared callable", lying) as (tensor, destination):
        before = snapshot(tensor.carrier)
        handle = sw.move_async(tensor, destination)
        with pytest.raises(TypeError) as info:
            handle.wait()
    message = str(info.value)
    assert "Future" in message and "exception()" in message and repr(reported) in message
    assert snapshot(tensor.carrier) == before
    assert destination.pinned_by is None


@pytest.mark.spec(f"{SHIELD}/raise-a-baseexception-from-a-hook", f"{SHIELD}#4")
@pytest.mark.parametrize("hook", HOOKS)
def test_a_base_exception_from_a_hook_reaches_the_caller_as_itself(hook):
    raised = Abort("stop here")

    def abort(tensor, destination, output):
        raise raised

    with move_with_hook(hook, abort) as (tensor, destination):
        before = snapshot(tensor.carrier)
        with pytest.raises(Abort) as direct:
            sw.move(tensor, destination)
        assert direct.value is raised
        with pytest.raises(Abort) as later:
            handle = sw.move_async(tensor, destination)
            handle.wait()
        assert later.value is raised
    assert snapshot(tensor.carrier) == before
    assert destination.pinned_by is None


class LyingList(list):
    """A list whose __len__ and __getitem__ disagree with its items."""

    def __len__(self) -> int:
        return 1 << 40

    def __getitem__(self, index):
        return [0] * 5


class LyingTuple(tuple):
    def __len__(self) -> int:
        return 1 << 40

    def __iter__(self):
        return iter(range(9))


@pytest.mark.spec("core-tensor-representation/factories-copy-into-fresh-cpu-storage")
def test_tensor_reads_a_list_subclass_by_its_items_not_its_len():
    assert sw.tensor(LyingList([1.0, 2.0, 3.0])).tolist() == [1.0, 2.0, 3.0]
    assert sw.tensor([LyingList([1, 2]), LyingList([3, 4])]).tolist() == [[1, 2], [3, 4]]
    assert sw.tensor(LyingTuple((1, 2))).tolist() == [1, 2]


@pytest.mark.spec(
    "core-layout/layouts-pair-congruent-shape-and-stride-trees-of-non-negative-integers"
)
def test_a_layout_reads_a_sequence_subclass_by_its_items_not_its_len():
    layout = sw.Layout(LyingTuple((2, LyingList([3, 4]))), LyingList([1, (2, 6)]))
    assert layout == sw.Layout((2, (3, 4)), (1, (2, 6)))
