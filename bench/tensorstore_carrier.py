"""Benchmark: CPU -> TensorStoreCarrier -> CPU against TensorStore on the NumPy array itself.

One run times these pairs (Float32, 64 MiB), StrideWeave first, anchor second, in
alternating runs; the target is on the ratio StrideWeave / anchor:

| case                              | StrideWeave               | anchor                  | target |
|-----------------------------------|---------------------------|-------------------------|--------|
| CPU to TensorStore to CPU, file   | two ``sw.move`` calls (1) | ``write``, ``read`` (2) | <= 1.1 |
| CPU to TensorStore to CPU, memory | as above, ``memory`` (3)  | as above, ``memory``    | none   |

(1) ``sw.move(t, TensorStoreCarrier(sw.Float32))`` of a CPU tensor over the array, then
``sw.move`` of the result to an empty ``sw.CPU(sw.Float32)``: the default carrier, a zarr3
array in a ``file`` kvstore in a new temporary directory, created by the first move and
removed by the second (which releases its source). The empty carrier and the CPU tensor
are built outside the timed region. (2) The same NumPy array written by TensorStore to a
new zarr3 array in a new temporary directory with the carrier's chunking
(``DEFAULT_CHUNK``), read back into a new NumPy array, and the directory removed, all
inside the timed call (the directory's name is made outside it, as the carrier's is). (3)
A ``memory`` kvstore on both sides: no file system, so the row shows what the carrier adds
to TensorStore's own copies.

What the carrier adds: CPU -> TensorStoreCarrier has no declared route (CPU is sealed
definition-free) and goes by the elementwise fallback, which stages the CPU span in a
buffer (one 64 MiB copy) before ``_write_range`` hands it to TensorStore; the route back
lets TensorStore copy straight into the CPU destination. The script prints the staging
copy's own time (``np.copyto`` of 64 MiB) beside the rows.

Timing and ratios follow benchlib. Nothing here asserts a time.

    python bench/tensorstore_carrier.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import importlib.metadata
import shutil
import sys
import tempfile
import timeit
from pathlib import Path

import numpy as np
import tensorstore as ts
from benchlib import Consuming, consuming_row, parse_options, ratio_table, with_target, write_result

import strideweave as sw
from strideweave.contrib.tensorstore import DEFAULT_CHUNK, TensorStoreCarrier

SPAN_BYTES = 64 << 20
SPAN = SPAN_BYTES // 4
MEMORY = {"driver": "zarr3", "kvstore": {"driver": "memory"}}


def cpu_tensor(values: np.ndarray) -> sw.Tensor:
    carrier = sw.CPU(sw.Float32, values.size)
    carrier.write_range(0, values)
    return sw.Tensor(carrier, sw.Layout(values.size))


def through_carrier(values: np.ndarray, memory: bool) -> Consuming:
    """Both moves: CPU -> a new TensorStoreCarrier -> a new CPU carrier."""

    def prepare(n: int) -> list[tuple[sw.Tensor, TensorStoreCarrier]]:
        return [
            (
                cpu_tensor(values),
                TensorStoreCarrier(sw.Float32, spec=MEMORY if memory else None),
            )
            for _ in range(n)
        ]

    def call(pair: tuple[sw.Tensor, TensorStoreCarrier]) -> sw.Tensor:
        inside = sw.move(pair[0], pair[1])
        return sw.move(inside, sw.CPU(sw.Float32))

    return prepare, call


def through_tensorstore(values: np.ndarray, memory: bool) -> Consuming:
    """TensorStore writes the array to a new zarr3 array and reads it back."""

    def prepare(n: int) -> list[Path | None]:
        if memory:
            return [None] * n
        return [Path(tempfile.mkdtemp(prefix="sw-bench-ts-")) for _ in range(n)]

    def call(directory: Path | None) -> np.ndarray:
        spec = (
            MEMORY
            if directory is None
            else {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(directory)}}
        )
        store = ts.open(
            spec,
            create=True,
            delete_existing=directory is not None,
            dtype=ts.float32,
            shape=[values.size],
            chunk_layout=ts.ChunkLayout(chunk_shape=[min(values.size, DEFAULT_CHUNK)]),
        ).result()
        store.write(values).result()
        back = store.read().result()
        del store
        if directory is not None:
            shutil.rmtree(directory)
        return back

    return prepare, call


def check(values: np.ndarray) -> None:
    """Both sides give the values back (outside the timing)."""
    for memory in (False, True):
        for prepare, call in (through_carrier(values, memory), through_tensorstore(values, memory)):
            back = call(prepare(1)[0])
            array = np.asarray(back.tolist() if isinstance(back, sw.Tensor) else back)
            if not np.array_equal(array, values):
                raise AssertionError(f"a round trip (memory={memory}) changed the values")


def main() -> None:
    options = parse_options(__doc__, "tensorstore_carrier", repeat=5)
    values = np.arange(SPAN, dtype=np.float32)
    check(values[:4096])
    rows = []
    for name, memory, target in (
        ("CPU to TensorStore to CPU, file", False, 1.1),
        ("CPU to TensorStore to CPU, memory", True, None),
    ):
        row = consuming_row(
            through_carrier(values, memory),
            through_tensorstore(values, memory),
            options.repeat,
            1,
            case=name,
        )
        rows.append(with_target(row, target))
        print(f"{name}: {rows[-1]['ratio']:.2f}", file=sys.stderr)
    staging = np.empty_like(values)
    staging_us = min(timeit.repeat(lambda: np.copyto(staging, values), number=1, repeat=5)) * 1e6
    version = importlib.metadata.version("tensorstore")
    print(ratio_table(rows, ["case", "target", "met"]))
    print(
        f"\nThe fallback's staging copy (np.copyto of {SPAN_BYTES >> 20} MiB): "
        f"{staging_us / 1e3:.1f} ms; tensorstore {version}, chunk {DEFAULT_CHUNK} slots"
    )
    write_result(
        options.json,
        "tensorstore_carrier",
        rows,
        repeat=options.repeat,
        staging_copy_us=staging_us,
        tensorstore=version,
        chunk=DEFAULT_CHUNK,
    )


if __name__ == "__main__":
    main()
