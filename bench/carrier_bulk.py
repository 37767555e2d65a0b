"""Benchmark: carrier bulk access (spec/carrier-storage ranges, the span walker) against anchors.

One run times three pairs, StrideWeave first, anchor second:

* ``range copy``: 64 MiB of Float32 copied CPU to CPU through the range path,
  ``dst.write_range(0, view)`` where ``view`` is the zero-copy NumPy view of the source
  carrier (one lock, one version increment, one memcpy), and ``src.read_range(0, n,
  out=array)`` into a preallocated NumPy array, each vs ``memcpy`` of the same bytes
  (``ctypes.memmove`` between two carriers' buffers). Target: at least 0.8x memcpy's
  throughput, i.e. ratio <= 1.25.
* ``file round trip``: 64 MiB of Float32 written and read back through a temporary
  FileBacked, ``f.write_range(0, array)`` then ``f.read_range(0, n, out=array)`` (one
  ``pwrite`` and one ``pread``), vs ``array.tofile(path)`` then ``np.fromfile(path)`` of the
  same bytes in the same directory. Target: at least 0.8x NumPy's throughput, i.e. ratio
  <= 1.25.
* ``tolist``: ``t.tolist()`` of a 1e6-element Float32 tensor vs ``np.ndarray.tolist()`` of
  the same values. Target: ratio <= 1.5.
* ``strided gather``: ``sw.tensor(t)`` of the transposed view ``(1024,1024):(1024,1)`` (one
  strided copy into a new compact CPU carrier, its allocation included) vs
  ``np.copyto(c, a.T)`` into a preallocated C-contiguous array. Target: at least NumPy's
  throughput, i.e. ratio <= 1.0.

Timing and ratios follow benchlib (ratio = StrideWeave / anchor); each row also states its
target and whether this run met it. Nothing here asserts a time.

    python bench/carrier_bulk.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import atexit
import ctypes
import os
import sys
import tempfile

import numpy as np
from benchlib import calls_for, parse_options, ratio_table, timed_row, with_target, write_result

import strideweave as sw

COPY_BYTES = 64 * 2**20
TOLIST_ELEMENTS = 1_000_000
GATHER_EXTENT = 1024


def range_copy_cases() -> list[tuple[str, object, object, float]]:
    n = COPY_BYTES // 4
    src = sw.CPU(sw.Float32, n)
    src.write_range(0, np.arange(n, dtype=np.float32))
    dst = sw.CPU(sw.Float32, n)
    view = np.from_dlpack(sw.Tensor(src, sw.Layout(n)))
    out = np.empty(n, dtype=np.float32)
    src_ptr, dst_ptr = src.pointer(), dst.pointer()

    def memcpy() -> None:
        ctypes.memmove(dst_ptr, src_ptr, COPY_BYTES)

    return [
        (
            "range copy 64 MiB: dst.write_range(0, view)",
            lambda: dst.write_range(0, view),
            memcpy,
            1.25,
        ),
        (
            "range copy 64 MiB: src.read_range(out=...)",
            lambda: src.read_range(0, n, out=out),
            memcpy,
            1.25,
        ),
    ]


def file_round_trip_case() -> tuple[str, object, object, float]:
    n = COPY_BYTES // 4
    values = np.arange(n, dtype=np.float32)
    out = np.empty(n, dtype=np.float32)
    carrier = sw.FileBacked(sw.Float32, n)
    fd, name = tempfile.mkstemp(dir=carrier.path.parent, suffix=".numpy")
    os.close(fd)
    atexit.register(os.unlink, name)

    def ours() -> None:
        carrier.write_range(0, values)
        carrier.read_range(0, n, out=out)

    def numpy() -> None:
        values.tofile(name)
        np.fromfile(name, dtype=np.float32)

    ours()
    assert np.array_equal(out, values)
    return ("file round trip 64 MiB: FileBacked write+read", ours, numpy, 1.25)


def tolist_case() -> tuple[str, object, object, float]:
    values = np.random.default_rng(0).random(TOLIST_ELEMENTS, dtype=np.float32)
    t = sw.tensor(values)
    return ("tolist 1e6 Float32", t.tolist, values.tolist, 1.5)


def gather_case() -> tuple[str, object, object, float]:
    e = GATHER_EXTENT
    carrier = sw.CPU(sw.Float32, e * e)
    carrier.write_range(0, np.arange(e * e, dtype=np.float32))
    t = sw.Tensor(carrier, sw.Layout((e, e), (e, 1)))
    a = np.arange(e * e, dtype=np.float32).reshape(e, e)
    c = np.empty((e, e), dtype=np.float32)
    assert sw.tensor(t).tolist() == a.tolist()
    return (
        "strided gather (1024,1024):(1024,1)",
        lambda: sw.tensor(t),
        lambda: np.copyto(c, a.T),
        1.0,
    )


def measure(repeat: int) -> list[dict]:
    rows = []
    cases = [*range_copy_cases(), file_round_trip_case(), tolist_case(), gather_case()]
    for case, ours, anchor, target in cases:
        row = timed_row(ours, anchor, repeat, calls_for(anchor), case=case)
        rows.append(with_target(row, target))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "carrier_bulk", repeat=7, argv=argv)
    rows = measure(args.repeat)
    print(ratio_table(rows, ["case", "target", "met"]))
    write_result(args.json, "carrier_bulk", rows, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
