"""carrier-storage: PythonStorageCarrier, a carrier whose storage a Python subclass
implements in spans (docs/threading.md, "Python storage")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from conformance.carrier_storage.python_carriers import (
    BytesCarrier,
    DeferredCarrier,
    Failing,
    FailingCarrier,
    OtherBytesCarrier,
)
from strideweave import _core
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.kit import strategies as S

SPANS = "carrier-storage/python-subclasses-of-pythonstoragecarrier-implement-storage-in-spans"
CHECKED = "carrier-storage/a-python-carriers-storage-methods-are-checked-and-shielded"
GIL = (
    "carrier-storage/a-python-carriers-storage-methods-run-with-the-gil-and-never-under-a-lock-"
    "others-wait-for-with-it"
)
ROUTES = "carrier-storage/python-carriers-take-part-in-definitions-routes-and-autograd"
ASYNC = "carrier-storage/a-python-carriers-write-may-finish-asynchronously"

DEADLINE = 60.0


def label(carrier: sw.Carrier) -> str:
    """How messages name ``carrier`` ("BytesCarrier carrier #12")."""
    return f"{type(carrier).__name__} carrier #{repr(carrier).split('#')[1].split()[0]}"


# -- storage in spans ---------------------------------------------------------------


@pytest.mark.spec(f"{SPANS}/store-slots-in-python", f"{SPANS}#1", f"{SPANS}#4", f"{SPANS}#6")
def test_store_slots_in_python():
    carrier = BytesCarrier(sw.Int32, values=[1, 2, 3, 4, 5])
    assert carrier.version == 0 and carrier.slots == 5
    assert carrier.calls == [("allocate", 5), ("write", 0, 5)]
    assert carrier.tolist() == [1, 2, 3, 4, 5]
    assert [carrier.read(i) for i in range(5)] == [1, 2, 3, 4, 5]
    carrier.write(1, 20)
    assert carrier.version == 1 and carrier.read(1) == 20
    carrier.write_range(2, [30, 40])
    assert carrier.version == 2 and carrier.tolist() == [1, 20, 30, 40, 5]
    assert carrier.read_range(0, 5) == [1, 20, 30, 40, 5]
    out = np.zeros(5, np.int32)
    carrier.read_range(0, 5, out=out)
    assert out.tolist() == [1, 20, 30, 40, 5]
    # Conversion and its refusals are the base class's: the storage sees encoded items.
    with pytest.raises(TypeError):
        carrier.write(0, 1.5)
    with pytest.raises(IndexError):
        carrier.read(5)
    assert carrier.version == 2
    token = carrier.version_token()
    carrier.write(0, 7)
    assert not token.is_current()
    carrier.release()
    carrier.release()
    assert carrier.released == 1 and carrier.is_released and carrier.slots == 0
    with pytest.raises(RuntimeError, match="released"):
        carrier.read(0)
    flags = BytesCarrier(sw.Bool, 3)
    assert flags.tolist() == [False, False, False] and flags.version == 0
    empty = BytesCarrier(sw.Float32)
    assert empty.slots == 0 and empty.calls == []
    empty.allocate(4)
    assert empty.version == 1 and empty.tolist() == [0.0] * 4


@pytest.mark.spec(f"{SPANS}#2", f"{SPANS}#3")
def test_storage_methods_see_python_owned_buffers_for_ranges_inside_the_slots():
    seen: list[tuple] = []

    class Watching(BytesCarrier):
        def _read_range(self, first, count, out):
            seen.append(("read", first, count, type(out), out.readonly, out.nbytes))
            self.kept = out  # kept past the call: a Python buffer, not the library's memory
            super()._read_range(first, count, out)

        def _write_range(self, first, count, data):
            seen.append(("write", first, count, type(data), data.readonly, data.nbytes))
            super()._write_range(first, count, data)

    carrier = Watching(sw.Float32, values=[1.0, 2.0, 3.0, 4.0])
    carrier.write_range(1, [])  # an empty range: no storage call
    carrier.read_range(4, 0)
    assert carrier.tolist() == [1.0, 2.0, 3.0, 4.0]
    carrier.write_range(2, [5.0, 6.0])
    carrier.kept[:] = bytes(16)  # writing a kept buffer changes no slot
    assert carrier.tolist() == [1.0, 2.0, 5.0, 6.0]
    with pytest.raises(IndexError):
        carrier.write_range(3, [1.0, 2.0])
    assert seen == [
        ("write", 0, 4, memoryview, True, 16),
        ("read", 0, 4, memoryview, False, 16),
        ("write", 2, 2, memoryview, True, 8),
        ("read", 0, 4, memoryview, False, 16),
    ]
    assert carrier.version == 2


def _window(kind: str, source: sw.CPU) -> sw.Tensor:
    if kind == "contiguous":
        return sw.Tensor(source, sw.Layout(8), 0)
    if kind == "transposed":
        return sw.Tensor(source, sw.Layout((64, 64), (64, 1)), 0)
    if kind == "holes":
        return sw.Tensor(source, sw.Layout((4, 3), (3, 16)), 2)
    return sw.Tensor(source, sw.Layout((5, 4), (0, 2)), 1)  # a broadcast mode


@pytest.mark.spec(
    f"{SPANS}/move-to-and-from-a-python-carrier-with-holes-and-broadcasts", f"{SPANS}#5"
)
@pytest.mark.parametrize("kind", ["contiguous", "transposed", "holes", "broadcast"])
def test_move_to_and_from_a_python_carrier(kind):
    source = sw.CPU(sw.Float32, values=[float(i) for i in range(4096 + 64)])
    tensor = _window(kind, source)
    expected = tensor.tolist()
    cosize = tensor.layout.cosize
    destination = BytesCarrier(sw.Float32, values=[-1.0] * cosize)
    destination.calls.clear()
    moved = sw.move(tensor, destination)
    assert destination.range_calls() <= 2, destination.calls
    reached = {tensor.layout(i) for i in range(tensor.layout.size)}
    stored = destination.tolist()
    assert all(stored[s] == -1.0 for s in range(cosize) if s not in reached)
    for read in (lambda: moved.tolist(), lambda: np.array(moved).tolist()):
        destination.calls.clear()
        assert read() == expected
        assert destination.range_calls() <= 2, destination.calls
    destination.calls.clear()
    back = sw.move(moved, sw.CPU(sw.Float32))
    assert back.tolist() == expected and destination.range_calls() <= 2
    assert destination.is_released


@pytest.mark.spec(
    f"{SPANS}/move-to-and-from-a-python-carrier-with-holes-and-broadcasts", f"{SPANS}#5"
)
@given(tensor=S.tensors(carrier_classes=st.just(sw.CPU)), between=st.booleans())
def test_any_layout_moves_through_a_python_carrier_in_a_bounded_number_of_calls(tensor, between):
    """For any layout: the values, and at most two storage calls per move and per read.
    ``between`` moves from one Python carrier class to another on the way."""
    expected = tensor.tolist()
    destination = BytesCarrier(tensor.dtype)
    moved = sw.move(tensor, destination)
    assert destination.range_calls() <= 2
    if between:
        other = OtherBytesCarrier(tensor.dtype)
        moved = sw.move(moved, other)
        assert other.range_calls() <= 2 and destination.range_calls() <= 3
        destination = other
    destination.calls.clear()
    assert moved.tolist() == expected and destination.range_calls() <= 1
    back = sw.move(moved, sw.CPU(tensor.dtype))
    assert back.tolist() == expected and destination.range_calls() <= 2


@pytest.mark.spec(
    f"{SPANS}/refuse-the-abstract-class-and-a-dtype-without-an-item-size", f"{SPANS}#7"
)
def test_refuse_the_abstract_class_and_a_dtype_without_an_item_size():
    with pytest.raises(TypeError, match="PythonStorageCarrier is abstract"):
        sw.PythonStorageCarrier(sw.Float32)
    with pytest.raises(TypeError, match="dtype Any has no item size"):
        BytesCarrier(sw.Any)


# -- checked and shielded -----------------------------------------------------------


def _failing_calls():
    """(method, context, call(carrier) -> None) for each way a storage method is reached."""
    return [
        ("_read_range", "read", lambda c: c.read(0)),
        ("_read_range", "tolist", lambda c: c.tolist()),
        (
            "_read_range",
            "move from",
            lambda c: sw.move(sw.Tensor(c, sw.Layout(3), 0), sw.CPU(sw.Int32)),
        ),
        ("_write_range", "write", lambda c: c.write(1, 9)),
        ("_write_range", "write_range", lambda c: c.write_range(0, [7, 8])),
        (
            "_write_range",
            "move into",
            lambda c: sw.move(sw.tensor([4, 5, 6], dtype=sw.Int32), c),
        ),
    ]


@pytest.mark.spec(f"{CHECKED}/raise-from-a-storage-method", f"{CHECKED}#1")
@pytest.mark.parametrize(
    ("method", "context", "call"),
    _failing_calls(),
    ids=[f"{method}-{context}" for method, context, _ in _failing_calls()],
)
def test_raise_from_a_storage_method(method, context, call):
    carrier = FailingCarrier(sw.Int32, values=[1, 2, 3])
    carrier.fail = method
    before = (carrier.version, carrier.slots, bytes(carrier.storage), carrier.is_released)
    with pytest.raises(Exception) as raised:
        call(carrier)
    assert raised.value is carrier.error
    notes = "\n".join(getattr(raised.value, "__notes__", []))
    assert f"FailingCarrier.{method}" in notes and label(carrier) in notes
    carrier.error.__notes__ = []
    after = (carrier.version, carrier.slots, bytes(carrier.storage), carrier.is_released)
    if context == "move into":
        # A failed move that wrote its destination adds one to its version ("A successful
        # move changes neither carrier's version"); the failed write changed no byte.
        before = (before[0] + 1, *before[1:])
    assert after == before
    carrier.fail = None
    assert carrier.pinned_by is None and carrier.tolist() == [1, 2, 3]


@pytest.mark.spec(f"{CHECKED}/raise-from-a-storage-method", f"{CHECKED}#1")
def test_raise_from_allocate():
    carrier = FailingCarrier(sw.Int32)
    carrier.fail = "_allocate"
    with pytest.raises(Exception) as raised:
        carrier.allocate(4)
    assert raised.value is carrier.error
    assert carrier.slots == 0 and carrier.version == 0
    with pytest.raises(Exception) as raised:
        sw.move(sw.tensor([1, 2], dtype=sw.Int32), carrier)
    assert raised.value is carrier.error and carrier.slots == 0 and carrier.version == 0


class _Returns(BytesCarrier):
    """Returns ``returned`` from the storage method named ``method``."""

    method = ""
    returned: object = None

    def _call(self, name, result):
        return self.returned if name == type(self).method else result

    def _slot_count(self):
        return self._call("_slot_count", super()._slot_count())

    def _read_range(self, first, count, out):
        super()._read_range(first, count, out)
        if type(self).method == "bool byte":
            out[0] = 7
        return self._call("_read_range", None)

    def _write_range(self, first, count, data):
        return self._call("_write_range", super()._write_range(first, count, data))

    def _allocate(self, n):
        super()._allocate(n + (1 if type(self).method == "short allocate" else 0))
        return self._call("_allocate", None)


@pytest.mark.spec(
    f"{CHECKED}/return-the-wrong-thing-from-a-storage-method",
    f"{CHECKED}#2",
    f"{CHECKED}#3",
    f"{CHECKED}#4",
)
@pytest.mark.parametrize(
    ("method", "returned", "error", "named"),
    [
        ("_read_range", 0, TypeError, "_read_range"),
        ("_write_range", "done", TypeError, "_write_range"),
        ("_slot_count", "3", TypeError, "_slot_count"),
        ("_slot_count", -1, ValueError, "_slot_count"),
        ("bool byte", None, ValueError, "_read_range"),
        ("_allocate", 1, TypeError, "_allocate"),
        ("short allocate", None, RuntimeError, "_allocate"),
    ],
)
def test_return_the_wrong_thing_from_a_storage_method(method, returned, error, named):
    dtype = sw.Bool if method == "bool byte" else sw.Int32

    class Wrong(_Returns):
        pass

    carrier = (
        Wrong(dtype, 2)
        if method not in ("_slot_count", "_allocate", "short allocate")
        else Wrong(dtype)
    )
    Wrong.method, Wrong.returned = method, returned
    before = (carrier.version, carrier.slots)
    out = bytearray(b"\x05" * 2 * dtype.itemsize)
    calls = {
        "_read_range": lambda: carrier.read_range(0, 2, out=out),
        "bool byte": lambda: carrier.read_range(0, 2, out=out),
        "_write_range": lambda: carrier.write_range(0, [1, 2]),
        "_slot_count": lambda: carrier.allocate(2),
        "_allocate": lambda: carrier.allocate(2),
        "short allocate": lambda: carrier.allocate(2),
    }
    with pytest.raises(error, match=f"Wrong\\.{named}") as raised:
        calls[method]()
    assert label(carrier) in str(raised.value)
    assert (carrier.version, carrier.slots) == before
    if method == "bool byte":
        # The reader's buffer is left as it was.
        assert out == bytearray(b"\x05" * 2 * dtype.itemsize)


@pytest.mark.spec(f"{CHECKED}/return-the-wrong-thing-from-a-storage-method", f"{CHECKED}#2")
def test_a_slot_count_that_is_not_an_int_fails_construction():
    class Wrong(BytesCarrier):
        def _slot_count(self):
            return 2.0

    with pytest.raises(TypeError, match=r"Wrong\._slot_count .* returned 2\.0"):
        Wrong(sw.Int32)


@pytest.mark.spec(f"{CHECKED}/call-back-into-the-carrier-from-its-storage-method", f"{CHECKED}#5")
def test_call_back_into_the_carrier_from_its_storage_method():
    class Reentrant(BytesCarrier):
        def _read_range(self, first, count, out):
            if self.storage is not None and count > 1:
                self.read(0)
            super()._read_range(first, count, out)

    carrier = Reentrant(sw.Int32, values=[1, 2, 3])
    with pytest.raises(RuntimeError, match=f"{label(carrier)} is used by its own storage hook"):
        carrier.tolist()
    assert carrier.read(1) == 2  # one slot: no call back; the gate is free again


@pytest.mark.spec(f"{CHECKED}/refuse-a-python-carrier-as-a-composites-part", f"{CHECKED}#6")
def test_refuse_a_python_carrier_as_a_composites_part():
    tier = BytesCarrier(sw.Float32, 4)
    with pytest.raises(TypeError, match=f"Evictable: the fast tier {label(tier)} has foreign"):
        sw.Evictable(tier, sw.CPU(sw.Float32))
    other = BytesCarrier(sw.Float32)
    with pytest.raises(TypeError, match=f"Evictable: the slow tier {label(other)} has foreign"):
        sw.Evictable(sw.CPU(sw.Float32, 4), other)
    with pytest.raises(
        TypeError, match=r"the slow prototype BytesCarrier carrier #\d+ has foreign"
    ):
        sw.TiledEvictable(sw.Float32, 8, 4, slow_class=BytesCarrier)
    assert tier.owner is None and other.owner is None and tier.is_mutable()


# -- asynchronous writes ------------------------------------------------------------


def _notes(error: BaseException) -> str:
    return "\n".join(getattr(error, "__notes__", []))


def _settled_pool_threads(workers: int) -> int:
    """The live pool threads once the extra workers that blocking regions needed (a
    storage method waiting for the GIL, a hook) have ended, which idle extras do: the
    count, after at most DEADLINE."""
    deadline = time.monotonic() + DEADLINE
    while _core._testing.live_pool_threads() > workers and time.monotonic() < deadline:
        time.sleep(0.001)
    return _core._testing.live_pool_threads()


@pytest.mark.spec(
    f"{ASYNC}/finish-moves-into-python-carriers-when-their-writes-futures-complete",
    f"{ASYNC}#1",
    f"{ASYNC}#2",
    f"{ASYNC}#6",
)
def test_finish_moves_into_python_carriers_when_their_writes_futures_complete(tmp_path):
    workers = _core._testing.pool_threads()
    count = workers + 2  # more pending writes than workers
    assert _settled_pool_threads(workers) <= workers
    values = [[float(k * 100 + i) for i in range(64)] for k in range(count)]
    sources = [sw.CPU(sw.Float32, values=v) for v in values]
    destinations = [DeferredCarrier(sw.Float32, 64) for _ in range(count)]
    before = [(d.version, d.moves_received) for d in destinations]
    handles = [
        sw.move_async(sw.Tensor(s, sw.Layout(64), 0), d)
        for s, d in zip(sources, destinations, strict=True)
    ]
    for destination in destinations:
        assert destination.started.wait(DEADLINE), "a move never started its write"
    assert not any(handle.done for handle in handles)
    # No worker waits for a pending write: each waiting one would sit in a blocking
    # region, for which the pool keeps an extra worker alive, so the pool would stay at
    # `count` threads or more. (Extras started while workers took the GIL end when idle.)
    assert _settled_pool_threads(workers) <= workers
    assert not any(handle.done for handle in handles)
    for destination in destinations:
        with pytest.raises(RuntimeError, match="move #") as refused:
            destination.tolist()
        assert label(destination) in str(refused.value)
    # And a move that needs a worker completes meanwhile.
    side = sw.move_async(sw.tensor([1.0, 2.0, 3.0], dtype=sw.Float32), sw.FileBacked(sw.Float32))
    deadline = time.monotonic() + DEADLINE
    while not side.done and time.monotonic() < deadline:
        time.sleep(0.001)
    assert side.done, "a CPU -> FileBacked move waited for the pending writes"
    assert side.wait().tolist() == [1.0, 2.0, 3.0]
    assert not any(handle.done for handle in handles)
    for destination in destinations:
        assert destination.finish() == 1
    for handle, destination, expected, (version, received), source in zip(
        handles, destinations, values, before, sources, strict=True
    ):
        moved = handle.wait()
        assert destination.calls == [("allocate", 64), ("write", 0, 64)]  # one span write
        assert moved.tolist() == expected and moved.carrier is destination
        assert destination.version == version and destination.moves_received == received + 1
        assert source.is_released


class _DroppingCarrier(DeferredCarrier):
    """Its deferred writes return a Future that nothing keeps: dropped at once."""

    def _write_range(self, first, count, data):
        future = super()._write_range(first, count, data)
        if self.deferring:
            with self._pending_lock:
                self.pending.clear()
        return future


@pytest.mark.spec(f"{ASYNC}/fail-a-move-through-its-writes-future", f"{ASYNC}#3", f"{ASYNC}#4")
@pytest.mark.parametrize("how", ["raises", "dropped"])
def test_fail_a_move_through_its_writes_future(how):
    source = sw.CPU(sw.Int32, values=[1, 2, 3, 4])
    destination = (DeferredCarrier if how == "raises" else _DroppingCarrier)(sw.Int32, 4)
    version = destination.version
    handle = sw.move_async(sw.Tensor(source, sw.Layout(4), 0), destination)
    assert destination.started.wait(DEADLINE)
    hook = f"{type(destination).__name__}._write_range(first=0, count=4)"
    if how == "raises":
        error = Failing("the write failed")
        assert destination.finish(error) == 1
        with pytest.raises(Failing) as raised:
            handle.wait()
        assert raised.value is error
        notes = _notes(error)
        assert hook in notes and label(destination) in notes, notes
    else:
        with pytest.raises(RuntimeError, match="dropped without completing") as refused:
            handle.wait()
        assert hook in str(refused.value) and label(destination) in str(refused.value)
    assert destination.version == version + 1 and destination.moves_received == 0
    assert destination.pinned_by is None and source.pinned_by is None
    assert not source.is_released and source.tolist() == [1, 2, 3, 4]


@pytest.mark.spec(f"{ASYNC}/wait-for-the-writes-future-outside-a-move", f"{ASYNC}#5")
def test_wait_for_the_writes_future_outside_a_move():
    carrier = DeferredCarrier(sw.Int32, values=[0, 0, 0, 0])
    completed: list[float] = []

    def complete(error=None):
        # Runs Python while the writer waits: the wait released the GIL.
        assert carrier.started.wait(DEADLINE)
        carrier.started.clear()
        time.sleep(0.02)
        completed.append(time.monotonic())
        carrier.finish(error)

    finisher = threading.Thread(target=complete)
    finisher.start()
    carrier.write_range(1, [5, 6])
    returned = time.monotonic()
    finisher.join(DEADLINE)
    assert completed and returned >= completed[0]
    assert carrier.tolist() == [0, 5, 6, 0] and carrier.version == 1

    error = Failing("late failure")
    finisher = threading.Thread(target=complete, args=(error,))
    finisher.start()
    with pytest.raises(Failing) as raised:
        carrier.write(0, 9)
    finisher.join(DEADLINE)
    assert raised.value is error
    assert "DeferredCarrier._write_range(first=0, count=1)" in _notes(error)
    assert carrier.tolist() == [0, 5, 6, 0] and carrier.version == 1


# -- the GIL and threads ------------------------------------------------------------


def _run_threads(targets) -> None:
    errors: list[BaseException] = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # reported below, with the thread's traceback
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck: deadlock"
    if errors:
        raise errors[0]


@pytest.mark.spec(f"{GIL}/use-one-python-carrier-from-8-threads", f"{GIL}#1", f"{GIL}#2")
def test_use_one_python_carrier_from_8_threads():
    n, rounds = 256, 100
    carrier = BytesCarrier(sw.Int32, n)
    carrier.pause = True
    torn: list[list[int]] = []

    def writer(k):
        def run():
            for _ in range(rounds):
                carrier.write_range(0, [k] * n)

        return run

    def reader():
        for _ in range(rounds):
            values = carrier.tolist()
            if len(set(values)) != 1:
                torn.append(values)
            carrier.read(n - 1)

    _run_threads([writer(k) for k in range(1, 7)] + [reader, reader])
    assert torn == []
    assert carrier.version == 6 * rounds


@pytest.mark.spec(
    f"{GIL}/move-between-two-python-carriers-in-both-directions-from-8-threads",
    f"{GIL}#1",
    f"{GIL}#2",
)
def test_move_between_two_python_carriers_in_both_directions_from_8_threads():
    rounds = 40
    shared = [
        BytesCarrier(sw.Float32, values=[1.0, 2.0]),
        OtherBytesCarrier(sw.Float32, values=[3.0]),
    ]
    for carrier in shared:
        carrier.pause = True

    def mover(start, k):
        def run():
            classes = [BytesCarrier, OtherBytesCarrier]
            if start:
                classes.reverse()
            values = [float(k * 100 + i) for i in range(64)]
            source = classes[0](sw.Float32, values=values)
            source.pause = True
            tensor = sw.Tensor(source, sw.Layout((8, 8), (8, 1)), 0)
            expected = tensor.tolist()
            for r in range(rounds):
                destination = classes[(r + 1) % 2](sw.Float32)
                destination.pause = True
                tensor = sw.move(tensor, destination)
                assert tensor.tolist() == expected

        return run

    def poke():
        for _ in range(rounds * 4):
            shared[0].read(1)
            shared[1].tolist()

    _run_threads([mover(k % 2, k) for k in range(8)] + [poke, poke])


FORK_CHILD = """
    import os, signal, sys, threading, time
    sys.path.insert(0, {root!r})
    import strideweave as sw
    from conformance.carrier_storage.python_carriers import BlockingCarrier, BytesCarrier

    busy = BlockingCarrier(sw.Int32, values=[1, 2, 3])
    busy.block = True
    reader = threading.Thread(target=lambda: print("parent read", busy.tolist(), flush=True))
    reader.start()
    assert busy.entered.wait(20)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        lines = []
        try:
            busy.read(0)
            lines.append("child read the busy carrier")
        except RuntimeError as error:
            lines.append("child refused: " + str(error))
        lines.append("child other " + str(BytesCarrier(sw.Int32, values=[7]).tolist()))
        os.write(write_end, "\\n".join(lines).encode())
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
        time.sleep(0.01)
    else:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    with os.fdopen(read_end) as pipe:
        print(pipe.read() or "child stuck", flush=True)
    busy.proceed.set()
    reader.join(20)
"""


@pytest.mark.spec(f"{GIL}/fork-while-another-thread-runs-a-storage-method", f"{GIL}#3")
def test_fork_while_another_thread_runs_a_storage_method():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FORK_CHILD.format(root=root))],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "STRIDEWEAVE_NUM_THREADS": "2"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    refused = [line for line in lines if line.startswith("child refused: ")]
    assert refused and "fork()" in refused[0] and "BlockingCarrier carrier #" in refused[0], lines
    assert "child other [7]" in lines
    assert "parent read [1, 2, 3]" in lines


# -- definitions, routes and autograd -------------------------------------------------


@pytest.mark.spec(f"{ROUTES}/route-cpu-to-a-python-carrier-through-a-provider", f"{ROUTES}#1")
def test_route_cpu_to_a_python_carrier_through_a_provider():
    used: list[str] = []

    class Copy(TransferProvider):
        def prepare(self, request):
            def run(output):
                used.append(request.route_id)
                span = request.source.read_range(request.offset, request.element_count)
                request.destination.write_range(0, span)

            return run

    class Host(sw.CPU):
        pass

    class Stored(BytesCarrier):
        pass

    define_carrier(
        CarrierDefinition(Stored, routes=[TransferRoute(Stored, Host, "stored->host", Copy())])
    )
    define_carrier(
        CarrierDefinition(Host, routes=[TransferRoute(Host, Stored, "host->stored", Copy())])
    )
    tensor = sw.Tensor(Host(sw.Int32, values=[1, 2, 3, 4, 5, 6]), sw.Layout((2, 3), (3, 1)), 0)
    expected = tensor.tolist()
    there = sw.move(tensor, Stored(sw.Int32))
    assert there.tolist() == expected and used == ["host->stored"]
    back = sw.move(there, Host(sw.Int32))
    assert back.tolist() == expected and used == ["host->stored", "stored->host"]


@pytest.mark.spec(f"{ROUTES}/backward-across-a-python-carrier", f"{ROUTES}#2")
def test_backward_across_a_python_carrier():
    x = sw.tensor([1.0, 2.0, 3.0], dtype=sw.Float32)
    x.requires_grad = True
    there = sw.move(x, BytesCarrier(sw.Float32))
    assert isinstance(there.carrier, BytesCarrier)
    sw.sum(there * there).backward()
    assert x.grad is not None and x.grad.tolist() == [2.0, 4.0, 6.0]
    assert isinstance(x.grad.carrier, sw.CPU)
