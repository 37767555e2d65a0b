"""Benchmark: ``sw.move`` between carriers (spec/interop-movement) against memcpy, NumPy, PyTorch.

One run times these pairs (Float32), StrideWeave first, anchor second, on the same bytes;
the target is on the ratio StrideWeave / anchor:

| case                        | StrideWeave              | anchor                      | target  |
|-----------------------------|--------------------------|-----------------------------|---------|
| contiguous 64 MiB           | ``sw.move(t, dst)``, CPU | ``ctypes.memmove`` (0)      | <= 1.25 |
| transposed 1024x1024 (1)    | ``sw.move(t, dst)``, CPU | ``np.copyto(d, s)`` (2)     | <= 1.0  |
| hierarchical (3)            | ``sw.move(t, dst)``, CPU | ``np.copyto(d, s)`` (2)     | <= 1.0  |
| CPU to FileBacked 64 MiB    | ``sw.move(t, f)``        | ``a.tofile(path)``          | <= 1.0  |
| FileBacked to CPU 64 MiB    | ``sw.move(t, new)`` (4)  | ``np.fromfile(path)``       | <= 1.0  |
| 8 elements, CPU to CPU      | ``sw.move(t, new)``      | ``torch.empty(8).copy_(x)`` | <= 1.0  |
| 8 threads, 8 elements (5)   | 8 threads moving at once | one thread, the same moves  | <= 1.0  |
| 8 threads, 8 el., NumPy (6) | 8 threads, ``np.copyto`` | one thread, the same copies | none    |
| 8 threads, 1 MiB (5)        | 8 threads moving at once | one thread, the same moves  | <= 1.0  |
| 8 threads, 1 MiB, NumPy (6) | 8 threads, ``np.copyto`` | one thread, the same copies | none    |

(0) memcpy between two buffers; the target is 0.8x its throughput.
(1) ``t`` over ``(1024,1024):(1024,1)``. (2) On NumPy views with the layout's leaf
extents and strides. (3) ``t`` over ``(256,(64,32)):(1,(512,32768))``: runs of 256 slots
with holes between. (4) ``t`` over a FileBacked opened on a named file, which
``np.fromfile`` reads too; ``new`` is an empty ``sw.CPU(sw.Float32)``, made in the call.
(5) Two rows: 8 tasks of 256 moves of 8 elements, and 8 tasks of 4 moves of 1 MiB, each
task moving into its own destination. (6) The work of the row before, done by NumPy: 8
tasks of 256 ``np.copyto`` of 8 elements, or of 4 of 1 MiB, each task into its own
preallocated array, on the same thread pool, against one thread making the same copies;
figures without a target, beside the StrideWeave rows, so that StrideWeave's scaling
reads against NumPy's on the same machine (for 8 elements the work is a few microseconds
per call under the GIL, and NumPy loses throughput with threads too).

The targets of the 8-element move (<= 1.0; it was <= 2.0) and of the two StrideWeave
thread rows (<= 1.0: threads never lose throughput; they had none) are issue 24's.

What a timed call includes. A move releases its source, so each StrideWeave call moves a
fresh source: the sources of a timed run are built before it, outside the timed region
(``benchlib.consuming_row``), and each call drops its input, so the StrideWeave side times
the whole ``sw.move``: validation, route, pins, the copy, the terminal commit that
releases the source (freeing its buffer), and the result Tensor. The anchors get fresh
sources the same way and free them inside the timed call too (the FileBacked-to-CPU case
reads one named file, which neither side removes). The destination is a carrier reused
by every call (its slots already allocated) in the CPU-to-CPU and CPU-to-FileBacked
cases, as the anchors write preallocated buffers and ``tofile`` an existing path; in the
FileBacked-to-CPU and 8-element cases it is an empty CPU carrier, so the move allocates
it, as ``np.fromfile`` and ``torch.empty`` allocate their results. The thread rows time
the same moves with 8 threads and with one; their ratio is (8-thread time) / (one-thread
time), and ``1 / ratio`` is the throughput gained on this machine's cores (at most its
core count, whatever the 8 threads); the script prints ``1 / ratio`` for each of the four
thread rows. The NumPy row times fresh sources and the release of its sources inside the
timed call too, as the move rows do.

Timing and ratios follow benchlib (ratio = StrideWeave / anchor, medians of alternating
runs); each row states its target and whether this run met it. Nothing here asserts a
time.

    python bench/move.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import atexit
import ctypes
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch
from benchlib import Consuming, consuming_row, parse_options, ratio_table, with_target, write_result

import strideweave as sw

SPAN_BYTES = 64 * 2**20
SPAN = SPAN_BYTES // 4
TRANSPOSED = ((1024, 1024), (1024, 1))
HIERARCHICAL = ((256, (64, 32)), (1, (512, 32768)))
THREADS = 8

# (name, StrideWeave side, anchor side, target ratio or None, calls per timed run)
Case = tuple[str, Consuming, Consuming, float | None, int]
# One task's work in the thread rows.
W = TypeVar("W")


def leaves(tree: object) -> list[int]:
    """The leaves of an int or nested tuple of ints, in tree order."""
    if isinstance(tree, int):
        return [tree]
    return [leaf for child in tree for leaf in leaves(child)]  # type: ignore[attr-defined]


def cpu_tensor(values: np.ndarray, layout: sw.Layout) -> sw.Tensor:
    """A Tensor over a new CPU carrier holding ``values``."""
    carrier = sw.CPU(sw.Float32, values.size)
    carrier.write_range(0, values)
    return sw.Tensor(carrier, layout)


def strided_view(array: np.ndarray, layout: tuple[object, object]) -> np.ndarray:
    """The NumPy view of ``array`` with the layout's leaf extents and strides."""
    shape, stride = layout
    return np.lib.stride_tricks.as_strided(
        array, shape=leaves(shape), strides=[s * array.itemsize for s in leaves(stride)]
    )


def check(result: sw.Tensor, expected: np.ndarray) -> None:
    """Fails unless ``result`` holds ``expected`` (a benchmark of a wrong move is void)."""
    if not np.array_equal(np.from_dlpack(result), expected):
        raise AssertionError(f"the move produced other values than {expected}")


def cpu_cases(name: str, layout: tuple[object, object] | None, target: float) -> list[Case]:
    """A CPU-to-CPU move into a reused destination; ``layout`` None: 64 MiB compact."""
    sw_layout = sw.Layout(SPAN) if layout is None else sw.Layout(*layout)
    values = np.arange(sw_layout.cosize, dtype=np.float32)
    destination = sw.CPU(sw.Float32, values.size)
    expected = values if layout is None else strided_view(values, layout)
    check(sw.move(cpu_tensor(values, sw_layout), destination), expected)
    ours: Consuming = (
        lambda n: [cpu_tensor(values, sw_layout) for _ in range(n)],
        lambda t: sw.move(t, destination),
    )
    buffer = np.zeros_like(values)
    if layout is None:

        def memcpy(source: np.ndarray) -> None:
            ctypes.memmove(buffer.ctypes.data, source.ctypes.data, values.nbytes)

        anchor: Consuming = (lambda n: [values.copy() for _ in range(n)], memcpy)
    else:
        target_view = strided_view(buffer, layout)
        anchor = (
            lambda n: [strided_view(values.copy(), layout) for _ in range(n)],
            lambda view: np.copyto(target_view, view),
        )
    number = 1 if values.nbytes >= SPAN_BYTES else 8
    return [(name, ours, anchor, target, number)]


def file_cases(directory: Path) -> list[Case]:
    """CPU to FileBacked and back, 64 MiB, in ``directory``."""
    values = np.arange(SPAN, dtype=np.float32)
    layout = sw.Layout(SPAN)
    written = sw.FileBacked(sw.Float32, SPAN, path=directory / "destination.f32")
    sw.move(cpu_tensor(values, layout), written)
    if not np.array_equal(np.fromfile(written.path, dtype=np.float32), values):
        raise AssertionError(f"the move to {written} produced other values")
    numpy_written = directory / "numpy.f32"
    to_file = (
        "CPU to FileBacked 64 MiB",
        (lambda n: [cpu_tensor(values, layout) for _ in range(n)], lambda t: sw.move(t, written)),
        (lambda n: [values.copy() for _ in range(n)], lambda a: a.tofile(numpy_written)),
        1.0,
        1,
    )
    source = directory / "source.f32"
    values.tofile(source)

    def file_tensor() -> sw.Tensor:
        return sw.Tensor(sw.FileBacked(sw.Float32, path=source), layout)

    check(sw.move(file_tensor(), sw.CPU(sw.Float32)), values)
    from_file = (
        "FileBacked to CPU 64 MiB",
        (
            lambda n: [file_tensor() for _ in range(n)],
            lambda t: sw.move(t, sw.CPU(sw.Float32)),
        ),
        (lambda n: [source] * n, lambda path: np.fromfile(path, dtype=np.float32)),
        1.0,
        1,
    )
    return [to_file, from_file]


def small_cases() -> list[Case]:
    values = np.arange(8, dtype=np.float32)
    layout = sw.Layout(8)
    x = torch.from_numpy(values.copy())
    check(sw.move(cpu_tensor(values, layout), sw.CPU(sw.Float32)), values)
    case = (
        "8 elements",
        (
            lambda n: [cpu_tensor(values, layout) for _ in range(n)],
            lambda t: sw.move(t, sw.CPU(sw.Float32)),
        ),
        (lambda n: [None] * n, lambda _: torch.empty(8).copy_(x)),
        1.0,
        4000,
    )
    return [case]


def pool_case(
    name: str,
    batches: Callable[[int], list[list[W]]],
    task: Callable[[W], None],
    pool: ThreadPoolExecutor,
    target: float | None,
) -> Case:
    """A row: the tasks of a batch run on ``pool`` vs one after another on this thread."""

    def threaded(batch: list[W]) -> None:
        list(pool.map(task, batch))

    def one_thread(batch: list[W]) -> None:
        for work in batch:
            task(work)

    return (name, (batches, threaded), (batches, one_thread), target, 1)


def thread_cases(name: str, elements: int, moves: int, pool: ThreadPoolExecutor) -> list[Case]:
    """THREADS tasks of ``moves`` moves of ``elements`` each: on the pool vs one thread."""
    values = np.arange(elements, dtype=np.float32)
    layout = sw.Layout(elements)
    destinations = [sw.CPU(sw.Float32, elements) for _ in range(THREADS)]

    def batches(n: int) -> list[list[tuple[list[sw.Tensor], sw.CPU]]]:
        return [
            [([cpu_tensor(values, layout) for _ in range(moves)], d) for d in destinations]
            for _ in range(n)
        ]

    def task(work: tuple[Sequence[sw.Tensor], sw.CPU]) -> None:
        sources, destination = work
        for t in sources:
            sw.move(t, destination)

    case = pool_case(name, batches, task, pool, 1.0)
    _, (_, threaded), _, _, _ = case
    threaded(batches(1)[0])
    check(sw.Tensor(destinations[-1], layout), values)
    return [case]


def numpy_thread_cases(
    name: str, elements: int, copies: int, pool: ThreadPoolExecutor
) -> list[Case]:
    """thread_cases' work done by NumPy: ``copies`` ``np.copyto`` per task (no target)."""
    values = np.arange(elements, dtype=np.float32)
    destinations = [np.zeros_like(values) for _ in range(THREADS)]

    def batches(n: int) -> list[list[tuple[list[np.ndarray], np.ndarray]]]:
        return [
            [([values.copy() for _ in range(copies)], d) for d in destinations] for _ in range(n)
        ]

    def task(work: tuple[Sequence[np.ndarray], np.ndarray]) -> None:
        sources, destination = work
        for a in sources:
            np.copyto(destination, a)

    case = pool_case(name, batches, task, pool, None)
    _, (_, threaded), _, _, _ = case
    threaded(batches(1)[0])
    if not all(np.array_equal(d, values) for d in destinations):
        raise AssertionError("np.copyto on the pool produced other values")
    return [case]


def measure(repeat: int) -> list[dict]:
    directory = Path(tempfile.mkdtemp(prefix="strideweave-bench-move-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    pool = ThreadPoolExecutor(THREADS)
    atexit.register(pool.shutdown)
    builders = [
        lambda: cpu_cases("contiguous 64 MiB CPU to CPU", None, 1.25),
        lambda: cpu_cases("transposed (1024,1024):(1024,1)", TRANSPOSED, 1.0),
        lambda: cpu_cases("hierarchical (256,(64,32)):(1,(512,32768))", HIERARCHICAL, 1.0),
        lambda: file_cases(directory),
        small_cases,
        lambda: thread_cases(f"{THREADS} threads x 256 moves of 8 elements", 8, 256, pool),
        lambda: numpy_thread_cases(
            f"{THREADS} threads x 256 copies of 8 elements, np.copyto", 8, 256, pool
        ),
        lambda: thread_cases(f"{THREADS} threads x 4 moves of 1 MiB", 2**18, 4, pool),
        lambda: numpy_thread_cases(
            f"{THREADS} threads x 4 copies of 1 MiB, np.copyto", 2**18, 4, pool
        ),
    ]
    rows = []
    for build in builders:  # one at a time: a case's buffers are freed before the next
        for name, ours, anchor, target, number in build():
            row = consuming_row(ours, anchor, repeat, number, case=name)
            rows.append(with_target(row, target))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "move", repeat=7, argv=argv)
    rows = measure(args.repeat)
    print(ratio_table(rows, ["case", "target", "met"]))
    for row in rows:
        if row["case"].startswith(f"{THREADS} threads"):
            print(f"{row['case']}: {1 / row['ratio']:.2f}x the throughput of one thread")
    write_result(args.json, "move", rows, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
