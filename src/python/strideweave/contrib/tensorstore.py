"""TensorStoreCarrier: slots in a TensorStore array (docs/tensorstore.md).

The slots live in a one-dimensional zarr3 array of the slot dtype (Bool, Int32 or
Float32). With no ``spec`` the array lives in a ``file`` kvstore in a temporary directory
that the carrier removes at release (or at garbage collection or exit); a ``spec`` names
any kvstore TensorStore supports (``memory``, ``file``, object stores, HTTP) and, when an
array already exists there, opens it.

Moves: the class is definition-backed. Its route TensorStoreCarrier -> CPU
(``"tensorstore->cpu"``) is performed by :class:`TensorStoreTransfer`, which starts
TensorStore's asynchronous copy into the CPU destination and returns a
``concurrent.futures.Future`` completed from TensorStore's own future, so no worker thread
waits on I/O. CPU -> TensorStoreCarrier cannot be a declared route: a route lives in the
definition of its source class, and CPU is a built-in, sealed definition-free class. The
definition therefore permits the elementwise fallback, which the engine performs for a
Python storage carrier as one copy: the CPU span goes to one ``_write_range``, which starts
TensorStore's write and returns a ``concurrent.futures.Future`` completed from
TensorStore's own future; the move reports when it completes, so in this direction too no
worker waits on I/O (docs/tensorstore.md, "Moves").

Importing this module imports ``tensorstore`` (``pip install 'strideweave[tensorstore]'``).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as _np  # private: no public name reaches a from_dlpack (dlpack-is-export-only)
import tensorstore as ts

import strideweave as sw
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier

__all__ = ["DEFAULT_CHUNK", "TensorStoreCarrier", "TensorStoreTransfer"]

#: Slots per zarr3 chunk when the array holds more (4 MiB of Int32 or Float32): large
#: enough that a bulk read or write of a big carrier touches few keys (one request per
#: chunk on an object store), small enough that a single-slot write rewrites 4 MiB at
#: most. An array of fewer slots is one chunk of exactly its size.
DEFAULT_CHUNK = 1 << 20

_NUMPY_DTYPES: dict[str, _np.dtype] = {
    "Bool": _np.dtype(_np.bool_),
    "Int32": _np.dtype(_np.int32),
    "Float32": _np.dtype(_np.float32),
}


def _coerce(dtype: Any) -> sw.DType | None:
    """The strideweave dtype ``dtype`` names, or None when it names none (the base class
    then refuses it with its own TypeError)."""
    if isinstance(dtype, sw.DType):
        return dtype
    try:
        return sw.Generic(dtype, 0).dtype
    except (TypeError, ValueError):
        return None


def _numpy_dtype(dtype: sw.DType) -> _np.dtype:
    """The NumPy dtype of a slot, or TypeError naming a dtype TensorStoreCarrier refuses."""
    found = _NUMPY_DTYPES.get(dtype.name)
    if found is None:
        raise TypeError(
            f"TensorStoreCarrier stores Bool, Int32 and Float32 slots, not {dtype.name}: "
            "a compound dtype has no zarr3 data type (store each field in its own carrier)"
        )
    return found


class TensorStoreCarrier(sw.PythonStorageCarrier):
    """Slots in a one-dimensional zarr3 TensorStore array.

    Parameters
    ----------
    dtype : DType or numpy.dtype or torch.dtype or str
        Bool, Int32 or Float32.
    n : int, optional
        The slot count of new storage, or the count an existing array holds.
    spec : dict or tensorstore.Spec, optional
        A TensorStore spec of the zarr3 driver naming where the array lives (any kvstore:
        ``{"driver": "zarr3", "kvstore": {"driver": "memory"}}``, ``file``, ``gcs``, ``s3``,
        ``http``). An array already there is opened and its length is the slot count; else
        one is created there at allocation. None (the default): a ``file`` kvstore in a new
        temporary directory, removed when the carrier is released or collected.
    values : iterable, optional
        The initial values.
    mutable : bool, optional
        False makes the carrier refuse public writes.
    context : tensorstore.Context, optional
        The TensorStore context (caches, concurrency, the ``memory`` kvstore's contents).
        Two carriers see the same ``memory`` array only through the same context.

    Raises
    ------
    TypeError
        When ``dtype`` is compound (no zarr3 data type holds it), names no dtype, or an
        existing array's data type is not the dtype's.
    ValueError
        When an existing array is not one-dimensional, ``n`` disagrees with it, or a
        TensorStore open fails.
    """

    def __init__(
        self,
        dtype: Any,
        n: int | None = None,
        *,
        spec: dict[str, Any] | ts.Spec | None = None,
        values: Iterable[Any] | None = None,
        mutable: bool = True,
        context: ts.Context | None = None,
    ) -> None:
        self._store: ts.TensorStore | None = None
        self._temporary: str | None = None
        self._cleanup: weakref.finalize | None = None
        self._context = context if context is not None else ts.Context()
        coerced = _coerce(dtype)
        self._numpy = None if coerced is None else _numpy_dtype(coerced)
        if spec is None:
            self._temporary = tempfile.mkdtemp(prefix="strideweave-tensorstore-")
            self._cleanup = weakref.finalize(
                self, shutil.rmtree, self._temporary, ignore_errors=True
            )
            self._spec: dict[str, Any] = {
                "driver": "zarr3",
                "kvstore": {"driver": "file", "path": self._temporary},
            }
        else:
            self._spec = spec.to_json() if isinstance(spec, ts.Spec) else dict(spec)
            self._store = self._open_existing()
        super().__init__(dtype, n, values=values, mutable=mutable)

    @property
    def spec(self) -> dict[str, Any]:
        """The TensorStore spec (JSON) of where the slots live."""
        return dict(self._spec)

    @property
    def store(self) -> ts.TensorStore | None:
        """The open TensorStore array, or None while the carrier is empty or released."""
        return self._store

    def _open_existing(self) -> ts.TensorStore | None:
        """Opens the array the spec names, or None where none exists yet."""
        try:
            store = ts.open(self._spec, open=True, context=self._context).result()
        except ValueError as error:
            if str(error).startswith("NOT_FOUND"):
                return None
            raise
        if store.rank != 1:
            raise ValueError(
                f"TensorStoreCarrier needs a one-dimensional array; the spec names one of "
                f"shape {tuple(store.shape)}"
            )
        if self._numpy is not None and store.dtype.numpy_dtype != self._numpy:
            raise TypeError(
                f"TensorStoreCarrier of {self._numpy} slots: the spec names an array of "
                f"{store.dtype.numpy_dtype}"
            )
        return store

    def _array(self) -> tuple[ts.TensorStore, _np.dtype]:
        """The open array and the slots' NumPy dtype, for a storage method the library
        calls only while the carrier holds slots (so both exist)."""
        if self._store is None or self._numpy is None:
            raise RuntimeError(f"{self!r} has no TensorStore array")
        return self._store, self._numpy

    def _slot_count(self) -> int:
        if self._store is None:
            return 0
        return int(self._store.shape[0])

    def _read_range(self, first: int, count: int, out: memoryview) -> None:
        store, numpy_dtype = self._array()
        target = ts.array(_np.frombuffer(out, numpy_dtype), copy=False, write=True)
        target.write(store[first : first + count]).result()

    def _write_range(self, first: int, count: int, data: memoryview) -> concurrent.futures.Future:
        store, numpy_dtype = self._array()
        source = _np.frombuffer(data, numpy_dtype)
        write = store[first : first + count].write(source)
        future: concurrent.futures.Future = concurrent.futures.Future()
        write.commit.add_done_callback(lambda done: _settle(future, done, (source, write)))
        return future

    def _allocate(self, n: int) -> None:
        if self._numpy is None:
            raise RuntimeError(f"{self!r} has no NumPy dtype")
        chunk = max(1, min(n, DEFAULT_CHUNK))
        self._store = ts.open(
            self._spec,
            create=True,
            delete_existing=self._temporary is not None,
            dtype=ts.dtype(self._numpy.name),
            shape=[n],
            chunk_layout=ts.ChunkLayout(chunk_shape=[chunk]),
            context=self._context,
        ).result()

    def _release(self) -> None:
        self._store = None
        if self._cleanup is not None:
            self._cleanup()


def _pointer_array(carrier: sw.CPU, count: int, dtype: _np.dtype) -> _np.ndarray:
    """A writable NumPy array over the first ``count`` slots of a CPU carrier's buffer.

    The address is ``CPU.pointer()``: writes through it bypass the carrier's entry points,
    which is what a route's provider does to a destination the move holds pinned (the
    library publishes it only once the transfer's Future completes)."""
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(carrier.pointer())
    return _np.frombuffer(memoryview(buffer), dtype, count)


def _settle(future: concurrent.futures.Future, done: ts.Future, keep: tuple) -> None:
    """Completes ``future`` with the outcome of TensorStore's future ``done``; ``keep``
    holds the arrays TensorStore writes into alive until then."""
    del keep
    try:
        done.result()
    except BaseException as error:  # the transfer's outcome, whatever it is
        future.set_exception(error)
    else:
        future.set_result(None)


class TensorStoreTransfer(TransferProvider):
    """The route TensorStoreCarrier -> CPU: TensorStore copies the source's span straight
    into the CPU destination's buffer, asynchronously.

    ``prepare`` runs on the thread initiating the move; the callable it returns runs once
    on a worker, starts the copy and returns a ``concurrent.futures.Future`` that
    TensorStore's completion callback resolves: the worker never waits on I/O."""

    def prepare(self, request: Any) -> Callable[[sw.Tensor], concurrent.futures.Future | None]:
        source: TensorStoreCarrier = request.source
        first, count = request.offset, request.element_count

        def run(output: sw.Tensor) -> concurrent.futures.Future | None:
            if count == 0:
                return None
            store, numpy_dtype = source._array()
            destination = output.carrier
            if not isinstance(destination, sw.CPU):  # the route's destination class is CPU
                raise TypeError(f"tensorstore->cpu moves into a CPU carrier, not {destination!r}")
            target = _pointer_array(destination, count, numpy_dtype)
            target_store = ts.array(target, copy=False, write=True)
            copy = target_store.write(store[first : first + count])
            future: concurrent.futures.Future = concurrent.futures.Future()
            keep = (target, target_store, copy)
            copy.commit.add_done_callback(lambda done: _settle(future, done, keep))
            return future

        return run


define_carrier(
    CarrierDefinition(
        TensorStoreCarrier,
        routes=[
            TransferRoute(TensorStoreCarrier, sw.CPU, "tensorstore->cpu", TensorStoreTransfer())
        ],
        elementwise_fallback=True,
    )
)
