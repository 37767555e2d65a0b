"""Helpers of the movement tests: carrier snapshots, refusals that change nothing, and
move operations whose copy hook waits on a gate or raises."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

import pytest

import strideweave as sw
from strideweave._core import _testing

# Generous bounds for a move to reach its terminal outcome: a test fails (instead of
# hanging) when one never does. Never a measure of speed.
TERMINAL_TIMEOUT = 60.0


# The stages of a move at which tests inject faults (_testing.inject_move_fault).
STAGES = _testing.move_stages
# Faults up to submission raise from move_async; later ones fail the handle.
RAISED_DIRECTLY = STAGES[: STAGES.index("copy")]
# A fault from submission on finds an empty destination allocated (zeroed, version 1).
ALLOCATED = STAGES[STAGES.index("submission") :]
# A fault from completion on comes after the transfer wrote the destination.
WRITTEN = STAGES[STAGES.index("completion") :]


class InjectedFault(Exception):
    """The exception class of every injected fault."""


def snapshot(carrier: object) -> tuple:
    """Everything a move may change about ``carrier``: version, release state, pin,
    ownership, mutability, slot count and values."""
    if not isinstance(carrier, sw.Carrier):
        return (carrier,)
    values = None if carrier.is_released else _values(carrier)
    return (
        carrier.version,
        carrier.is_released,
        carrier.pinned_by,
        carrier.owner,
        carrier.is_mutable(),
        carrier.slots,
        values,
    )


def _values(carrier: sw.Carrier) -> list | str:
    """The carrier's values, or "being written" while a pending move's pin refuses reads
    of its destination (spec/carrier-storage pins)."""
    try:
        return carrier.tolist()
    except RuntimeError as refusal:
        if "while it writes the carrier" not in str(refusal):
            raise
        return "being written"


@contextlib.contextmanager
def refused(exc_type: type[BaseException], *subjects: str, carriers=()) -> Iterator:
    """Expects ``exc_type`` naming every subject, with every carrier in ``carriers`` unchanged."""
    before = [snapshot(c) for c in carriers]
    with pytest.raises(exc_type) as info:
        yield info
    message = str(info.value)
    for subject in subjects:
        assert subject in message, f"{subject!r} not named in {message!r}"
    assert [snapshot(c) for c in carriers] == before


def wait_until(predicate: Callable[[], bool], what: str) -> None:
    """Polls ``predicate`` until it holds; fails after TERMINAL_TIMEOUT seconds."""
    deadline = time.monotonic() + TERMINAL_TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.001)


def wait_from_threads(
    wait: Callable[[], object], count: int, release: Callable[[], None]
) -> tuple[list, list[BaseException]]:
    """Calls ``wait`` on ``count`` threads started before ``release()`` runs (so they
    may block on a pending handle); checks that every thread returns within
    TERMINAL_TIMEOUT and returns what the calls returned and what they raised."""
    results: list = []
    raised: list[BaseException] = []
    lock = threading.Lock()

    def waiter() -> None:
        try:
            result = wait()
        except BaseException as error:
            with lock:
                raised.append(error)
        else:
            with lock:
                results.append(result)

    threads = [threading.Thread(target=waiter) for _ in range(count)]
    for thread in threads:
        thread.start()
    release()
    for thread in threads:
        thread.join(TERMINAL_TIMEOUT)
        assert not thread.is_alive(), "a waiter never returned"
    return results, raised


class HookError(Exception):
    """Raised by the failing copy hooks below."""


class Gate:
    """A copy hook's rendezvous: ``entered`` is set when a hook starts, and the hook
    proceeds once ``opened``; ``calls`` records each call's arguments and thread."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.calls: list[tuple] = []

    def pass_through(self, *arguments: object) -> None:
        self.calls.append((*arguments, threading.get_ident()))
        self.entered.set()
        assert self.opened.wait(TERMINAL_TIMEOUT), "the gate was never opened"

    def open(self) -> None:
        self.opened.set()


def copy_span(tensor: sw.Tensor, destination: sw.Carrier, element_count: int) -> None:
    """A copy hook's body: the complete physical span, slot by slot, through the public
    entry points."""
    for slot in range(element_count):
        destination.write(slot, tensor.carrier.read(tensor.offset + slot))


def gated_copy(gate: Gate, error: BaseException | None = None) -> type[sw.MoveOperation]:
    """A MoveOperation subclass whose _copy waits at ``gate``, then raises ``error``
    (when given) or copies the span (``copy_span``)."""

    class GatedCopy(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            gate.pass_through(tensor, destination, output, element_count)
            if error is not None:
                raise error
            copy_span(tensor, destination, element_count)

    return GatedCopy


def carrier_pair() -> tuple[type[sw.Carrier], type[sw.Carrier]]:
    """Two fresh carrier classes, so a registration for their pair collides with no one's."""

    class Source(sw.Generic):
        pass

    class Destination(sw.CPU):
        pass

    return Source, Destination


def source_tensor(cls: type[sw.Carrier] = sw.CPU, offset: int = 1) -> sw.Tensor:
    """Six coordinates with a hole between every two, at ``offset`` in distinct slots."""
    carrier = cls(sw.Int32, values=[100 + i for i in range(offset + 12)])
    return sw.Tensor(carrier, sw.Layout((2, 3), (2, 4)), offset)
