"""Benchmark: ``sw.move`` to and from BlockDeviceCarrier (spec/carrier-storage) against NumPy.

One run times these pairs (Float32, 256 MiB), StrideWeave first, anchor second, on the
same bytes in one new directory in ``$TMPDIR`` (else ``/tmp``); the target is
on the ratio StrideWeave / anchor:

| case                  | StrideWeave                    | anchor                         | target |
|-----------------------|--------------------------------|--------------------------------|--------|
| CPU to BlockDevice    | ``sw.move(t, b)`` (1)          | ``a.tofile(f)``, ``os.fsync``  | <= 1.0 |
| BlockDevice to CPU    | ``sw.move(t, sw.CPU(..))`` (2) | ``np.fromfile(path)``          | <= 1.0 |
| the same, cold (4)    | as above                       | ``np.fromfile``, evicted file  | <= 1.0 |
| same, buffered (3)    | as above                       | as above                       | none   |
| CPU to FileBacked     | ``sw.move(t, f)``              | ``a.tofile(f)``, ``os.fsync``  | none   |
| FileBacked to CPU     | ``sw.move(t, sw.CPU(..))`` (2) | ``np.fromfile(path)``          | none   |

(1) ``b`` a BlockDeviceCarrier reused by every call (its slots allocated), as ``tofile``
writes an existing path; the move ends with fdatasync (the durability the spec requires),
the anchor with ``os.fsync`` of the file it wrote. (2) ``t`` over a fresh carrier opened on
one named file, which ``np.fromfile`` reads too; the move allocates its CPU destination,
as ``np.fromfile`` allocates its result. The FileBacked rows put the buffered carrier
beside the block one on the same anchors (FileBacked's move does not sync). Direct I/O
bypasses the page cache: a BlockDevice read goes to the device every time while
``np.fromfile`` of a file it just read is served from memory, so the read row compares
the device against the page cache. (3) The two block rows again on the buffered fallback
(``direct_io`` False, forced by the private test hook ``_testing.refuse_direct_io``).
(4) The anchor reads a file whose cached pages were dropped before the call
(``os.posix_fadvise(..., POSIX_FADV_DONTNEED)``, outside the timed region), so both sides
read the device.

A move releases its source, so each call moves a fresh source built before the timed run
(``benchlib.consuming_row``); timing and ratios follow benchlib. Nothing here asserts a
time.

    python bench/block_device.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from benchlib import (
    Consuming,
    consuming_row,
    parse_options,
    ratio_table,
    with_target,
    write_result,
)

import strideweave as sw

SPAN_BYTES = 256 << 20
SPAN = SPAN_BYTES // 4

Case = tuple[str, Consuming, Consuming, float | None]


def cpu_tensor(values: np.ndarray) -> sw.Tensor:
    carrier = sw.CPU(sw.Float32, values.size)
    carrier.write_range(0, values)
    return sw.Tensor(carrier, sw.Layout(values.size))


def tofile_fsync(values: np.ndarray, path: Path) -> None:
    with open(path, "r+b" if path.exists() else "wb") as f:
        values.tofile(f)
        f.flush()
        os.fsync(f.fileno())


def evicted(path: Path) -> Path:
    """``path`` after dropping its pages from the page cache (it is clean: synced)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return path


def cases(directory: Path, values: np.ndarray) -> list[Case]:
    numpy_written = directory / "numpy.f32"
    source = directory / "source.f32"
    values.tofile(source)
    out: list[Case] = []
    for name, make, target in (
        ("BlockDevice", sw.BlockDeviceCarrier, 1.0),
        ("BlockDevice buffered", buffered_block_device, None),
        ("FileBacked", sw.FileBacked, None),
    ):
        written = make(sw.Float32, SPAN, directory / f"{name}.f32")
        sw.move(cpu_tensor(values), written)
        if not np.array_equal(np.fromfile(written.path, np.float32, count=SPAN), values):
            raise AssertionError(f"the move to {written} produced other values")
        out.append(
            (
                f"CPU to {name}",
                (
                    lambda n: [cpu_tensor(values) for _ in range(n)],
                    lambda t, written=written: sw.move(t, written),
                ),
                (
                    lambda n: [values.copy() for _ in range(n)],
                    lambda a: tofile_fsync(a, numpy_written),
                ),
                target,
            )
        )

        def opened(n: int, make=make) -> list[sw.Tensor]:
            return [sw.Tensor(make(sw.Float32, SPAN, source), sw.Layout(SPAN)) for _ in range(n)]

        moved = sw.move(opened(1)[0], sw.CPU(sw.Float32))
        if not np.array_equal(moved.carrier.read_range(0, SPAN, out=np.empty_like(values)), values):
            raise AssertionError(f"the move from {name} produced other values")
        out.append(
            (
                f"{name} to CPU",
                (opened, lambda t: sw.move(t, sw.CPU(sw.Float32))),
                (lambda n: [source] * n, lambda path: np.fromfile(path, np.float32)),
                target,
            )
        )
        if make is sw.BlockDeviceCarrier:
            out.append(
                (
                    f"{name} to CPU, cold anchor",
                    (opened, lambda t: sw.move(t, sw.CPU(sw.Float32))),
                    (
                        lambda n: [evicted(source) for _ in range(n)],
                        lambda path: np.fromfile(path, np.float32),
                    ),
                    target,
                )
            )
    return out


def buffered_block_device(dtype: sw.DType, n: int, path: Path) -> sw.BlockDeviceCarrier:
    """A BlockDeviceCarrier on the buffered fallback (O_DIRECT refused by the test hook)."""
    sw._core._testing.refuse_direct_io(True)
    try:
        return sw.BlockDeviceCarrier(dtype, n, path)
    finally:
        sw._core._testing.refuse_direct_io(False)


def main() -> None:
    options = parse_options(__doc__, "block_device", repeat=5)
    directory = Path(tempfile.mkdtemp(prefix="sw-bench-block-"))
    try:
        probe = sw.BlockDeviceCarrier(sw.Float32, 1, directory / "probe.f32")
        values = np.arange(SPAN, dtype=np.float32)
        rows = []
        for name, ours, anchor, target in cases(directory, values):
            rows.append(
                with_target(consuming_row(ours, anchor, options.repeat, 1, case=name), target)
            )
            print(f"{name}: {rows[-1]['ratio']:.2f}", file=sys.stderr)
        print(ratio_table(rows, ["case", "target", "met"]))
        print(
            f"\n{directory}: direct_io={probe.direct_io} alignment={probe.alignment} "
            f"block_size={probe.block_size}"
        )
        write_result(
            options.json,
            "block_device",
            rows,
            repeat=options.repeat,
            directory=str(directory.parent),
            direct_io=probe.direct_io,
            block_size=probe.block_size,
        )
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
