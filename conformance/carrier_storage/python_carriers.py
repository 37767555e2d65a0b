"""Python storage carriers for the tests of spec/carrier-storage's PythonStorageCarrier
requirements: BytesCarrier keeps its slots in a bytearray and records every storage call;
its subclasses misbehave in one way each."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import strideweave as sw


class BytesCarrier(sw.PythonStorageCarrier):
    """Slots in a bytearray, in native encoding. ``calls`` records each storage call as
    (method, first, count); with ``pause`` set, each range call sleeps midway, letting
    other threads take the GIL between its two halves."""

    def __init__(self, dtype, n=None, *, values=None, mutable=True):
        self.storage: bytearray | None = None
        self.calls: list[tuple] = []
        self.pause = False
        self.released = 0
        super().__init__(dtype, n, values=values, mutable=mutable)

    def _bytes(self, first: int, count: int) -> slice:
        size = self.dtype.itemsize
        return slice(first * size, (first + count) * size)

    def _slot_count(self):
        return 0 if self.storage is None else len(self.storage) // self.dtype.itemsize

    def _read_range(self, first, count, out):
        self.calls.append(("read", first, count))
        where = self._bytes(first, count)
        half = len(out) // 2
        out[:half] = self.storage[where][:half]
        if self.pause:
            time.sleep(0.0001)
        out[half:] = self.storage[where][half:]

    def _write_range(self, first, count, data):
        self.calls.append(("write", first, count))
        where = self._bytes(first, count)
        half = len(data) // 2
        start = where.start
        self.storage[start : start + half] = data[:half]
        if self.pause:
            time.sleep(0.0001)
        self.storage[start + half : where.stop] = data[half:]

    def _allocate(self, n):
        self.calls.append(("allocate", n))
        self.storage = bytearray(n * self.dtype.itemsize)

    def _release(self):
        self.calls.append(("release",))
        self.released += 1
        self.storage = None

    def range_calls(self) -> int:
        """How many _read_range and _write_range calls it received."""
        return sum(1 for call in self.calls if call[0] in ("read", "write"))


class OtherBytesCarrier(BytesCarrier):
    """A second exact class, for moves between two Python carrier classes."""


class Failing(Exception):
    """What a failing storage method raises."""


class FailingCarrier(BytesCarrier):
    """Raises ``error`` from the storage method named ``fail`` (set after construction)."""

    def __init__(self, dtype, n=None, *, values=None, mutable=True):
        self.fail: str | None = None
        self.error = Failing("storage failed")
        super().__init__(dtype, n, values=values, mutable=mutable)

    def _read_range(self, first, count, out):
        if self.fail == "_read_range":
            raise self.error
        super()._read_range(first, count, out)

    def _write_range(self, first, count, data):
        if self.fail == "_write_range":
            raise self.error
        super()._write_range(first, count, data)

    def _allocate(self, n):
        if self.fail == "_allocate":
            raise self.error
        super()._allocate(n)


class BlockingCarrier(BytesCarrier):
    """Its _read_range waits for ``proceed`` once ``block`` is set, after setting
    ``entered``: a storage method another thread is inside of."""

    def __init__(self, dtype, n=None, *, values=None, mutable=True):
        self.block = False
        self.entered = threading.Event()
        self.proceed = threading.Event()
        super().__init__(dtype, n, values=values, mutable=mutable)

    def _read_range(self, first, count, out):
        if self.block:
            self.entered.set()
            self.proceed.wait(30)
        super()._read_range(first, count, out)


class DeferredCarrier(BytesCarrier):
    """Once constructed, its _write_range starts the write and returns a
    ``concurrent.futures.Future``: the bytes land, and the Future completes, when the test
    calls ``finish()`` (or ``finish(error)``, which fails every pending write). ``started``
    is set by each deferred write."""

    def __init__(self, dtype, n=None, *, values=None, mutable=True):
        self.deferring = False
        self.pending: list[tuple[concurrent.futures.Future, int, int, memoryview]] = []
        self.started = threading.Event()
        self._pending_lock = threading.Lock()
        super().__init__(dtype, n, values=values, mutable=mutable)
        self.deferring = True

    def _write_range(self, first, count, data):
        if not self.deferring:
            return super()._write_range(first, count, data)
        self.calls.append(("write", first, count))
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._pending_lock:
            self.pending.append((future, first, count, data))  # data stays valid while kept
        self.started.set()
        return future

    def finish(self, error: BaseException | None = None) -> int:
        """Completes the pending writes (landing their bytes unless ``error`` is given);
        returns how many there were."""
        with self._pending_lock:
            pending, self.pending = self.pending, []
        for future, first, count, data in pending:
            if error is None:
                self.storage[self._bytes(first, count)] = data
                future.set_result(None)
            else:
                future.set_exception(error)
        return len(pending)


_WRITER = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="async-bytes")


class AsyncBytesCarrier(BytesCarrier):
    """Its _write_range hands the write to a thread of its own and returns that
    ``concurrent.futures.Future`` (spec/carrier-storage, "A Python carrier's write may
    finish asynchronously"): the kit's contracts must hold for it as for BytesCarrier."""

    def _write_range(self, first, count, data):
        return _WRITER.submit(BytesCarrier._write_range, self, first, count, data)
