"""Benchmark: ``sw.move`` to and from BlockDeviceCarrier (spec/carrier-storage) against NumPy.

One run times these pairs (Float32, 256 MiB), StrideWeave first, anchor second, on the
same bytes in one new directory in ``$TMPDIR`` (else ``/tmp``); the target is on the
ratio StrideWeave / anchor:

| case                         | StrideWeave              | anchor                        | target |
|------------------------------|--------------------------|-------------------------------|--------|
| CPU to BlockDevice           | ``sw.move(t, b)`` (1)    | ``a.tofile(f)``, ``os.fsync`` | <= 1.0 |
| BlockDevice to CPU (2)       | ``sw.move(t, new)`` (3)  | O_DIRECT ``os.preadv`` (4)    | <= 1.0 |
| the same, warm-cache anchor  | as above                 | ``np.fromfile(path)`` (5)     | none   |
| round trip (6)               | both moves above         | both anchors above            | <= 1.0 |
| CPU to BlockDevice buffered  | as above (7)             | ``a.tofile(f)``, ``os.fsync`` | none   |
| BlockDevice buffered to CPU  | as above (7)             | ``np.fromfile(path)``         | none   |
| CPU to FileBacked            | ``sw.move(t, f)``        | ``a.tofile(f)``, ``os.fsync`` | none   |
| FileBacked to CPU            | ``sw.move(t, new)`` (3)  | ``np.fromfile(path)``         | none   |

The results name the second to fourth rows "BlockDevice to CPU, O_DIRECT anchor",
"BlockDevice to CPU, warm-cache anchor" and "CPU to BlockDevice to CPU, round trip".

(1) ``b`` a BlockDeviceCarrier reused by every call (its slots allocated), as ``tofile``
writes an existing path; the move ends with fdatasync (the durability the spec requires),
the anchor with ``os.fsync`` of the file it wrote. (2) Direct I/O bypasses the page
cache, so a BlockDevice read goes to the device every time; its anchor reads the same
bytes from the device the same way. (3) ``t`` over a fresh carrier opened on one named
file (outside the timed region), which the anchor reads too; ``new`` is an empty
``sw.CPU(sw.Float32)``, which the move allocates. (4) The same file read by NumPy through
O_DIRECT: a descriptor opened with ``os.O_RDONLY | os.O_DIRECT`` (outside the timed
region, as the carrier is opened) and, inside the timed call, a new NumPy buffer (allocated with
4096 extra bytes and sliced at a 4096-aligned offset; its length a multiple of 4096) that
``os.preadv`` fills; the call closes the descriptor, as the move releases its source. (5)
``np.fromfile`` of a file that is in the page cache (the bench wrote it and reads it
again): a read from memory against one from the device, kept as a figure without a
target. (6) ``sw.move`` CPU to BlockDevice and then BlockDevice to CPU, against
``tofile`` + ``os.fsync`` and then the O_DIRECT read of (4); the destination
BlockDeviceCarrier is opened on its file before each call, as the anchor's descriptor is
(the move out releases it). (7) The first two rows' moves on the buffered fallback
(``direct_io`` False, forced by the private test hook ``_testing.refuse_direct_io``).
The FileBacked rows put the buffered carrier beside the block one on the same anchors
(FileBacked's move does not sync).

The targets are issue 24's. Before it, the read row's anchor was ``np.fromfile`` of a
file that the bench's own ``tofile`` had just put in the page cache (a comparison with
memory, not the device; that row is now the warm-cache one), and a "cold" row read with
``np.fromfile`` a file whose pages ``os.posix_fadvise(..., POSIX_FADV_DONTNEED)`` had
dropped. The O_DIRECT anchor supersedes the cold row, which is gone: it reads the device
through the same path as the carrier, where the cold row depended on the kernel honouring
advice and measured a buffered read with readahead.

Where the directory refuses O_DIRECT (tmpfs before Linux 6.6, for instance), the script
says so, the BlockDeviceCarrier itself takes its buffered fallback, and the rows with
the O_DIRECT anchor read through an ordinary descriptor instead, are named for it
("BlockDevice to CPU, buffered-read anchor (O_DIRECT refused)", "CPU to BlockDevice to
CPU, round trip (O_DIRECT refused)") and have no target; set ``TMPDIR`` to a directory on
ext4, xfs or btrfs to measure them.

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
from collections.abc import Callable
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
# The alignment of the O_DIRECT anchor's buffer and length (a page: at least any
# direct-I/O memory alignment the kernel asks for on these file systems).
ALIGN = 4096

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


def direct_io_refusal(path: Path) -> str | None:
    """None when ``path`` opens and reads with O_DIRECT, else why it does not."""
    flag = getattr(os, "O_DIRECT", None)
    if flag is None:
        return "this platform has no O_DIRECT"
    try:
        fd = os.open(path, os.O_RDONLY | flag)
    except OSError as error:
        return f"open(O_DIRECT) failed: {error}"
    try:
        read_into_new(fd, ALIGN)
    except OSError as error:
        return f"a read through O_DIRECT failed: {error}"
    return None


def read_into_new(fd: int, nbytes: int) -> np.ndarray:
    """The first ``nbytes`` read from ``fd`` into a new ALIGN-aligned array; closes ``fd``.

    The buffer is a NumPy array of ``nbytes`` rounded up to ALIGN, plus ALIGN bytes to
    slice an aligned start from, as O_DIRECT requires of the memory and the length.
    """
    try:
        length = -(-nbytes // ALIGN) * ALIGN
        raw = np.empty(length + ALIGN, dtype=np.uint8)
        start = -raw.ctypes.data % ALIGN
        buffer = raw[start : start + length]
        done = 0
        while done < nbytes:
            got = os.preadv(fd, [buffer[done:]], done)
            if got == 0:
                raise OSError(f"end of file after {done} of {nbytes} bytes")
            done += got
        return buffer[:nbytes]
    finally:
        os.close(fd)


def direct_read(fd: int) -> np.ndarray:
    """The 256 MiB of Float32 read from ``fd`` (read_into_new; closes ``fd``)."""
    return read_into_new(fd, SPAN_BYTES).view(np.float32)


def from_page_cache(source: Path) -> Consuming:
    """``np.fromfile`` of ``source``, which the bench wrote: from the page cache."""
    return (lambda n: [source] * n, lambda path: np.fromfile(path, np.float32))


def moved_to_cpu(
    make: Callable[[sw.DType, int, Path], sw.Carrier], name: str, source: Path, values: np.ndarray
) -> Consuming:
    """``sw.move`` to a new CPU of a fresh carrier ``make`` opens on ``source``."""

    def opened(n: int) -> list[sw.Tensor]:
        return [sw.Tensor(make(sw.Float32, SPAN, source), sw.Layout(SPAN)) for _ in range(n)]

    moved = sw.move(opened(1)[0], sw.CPU(sw.Float32))
    if not np.array_equal(moved.carrier.read_range(0, SPAN, out=np.empty_like(values)), values):
        raise AssertionError(f"the move from {name} produced other values")
    return (opened, lambda t: sw.move(t, sw.CPU(sw.Float32)))


def round_trip_sides(
    directory: Path, values: np.ndarray, numpy_written: Path, flags: int
) -> tuple[Consuming, Consuming]:
    """CPU to a BlockDeviceCarrier and back to a new CPU; tofile + fsync, then the read."""
    path = directory / "round trip.f32"

    def inputs(n: int) -> list[tuple[sw.Tensor, sw.BlockDeviceCarrier]]:
        # The move out releases the carrier, so each call gets one opened on the file.
        return [
            (cpu_tensor(values), sw.BlockDeviceCarrier(sw.Float32, SPAN, path)) for _ in range(n)
        ]

    def round_trip(work: tuple[sw.Tensor, sw.BlockDeviceCarrier]) -> sw.Tensor:
        t, carrier = work
        return sw.move(sw.move(t, carrier), sw.CPU(sw.Float32))

    def numpy_round_trip(work: tuple[np.ndarray, int]) -> np.ndarray:
        a, fd = work
        tofile_fsync(a, numpy_written)
        return direct_read(fd)

    back = round_trip(inputs(1)[0])
    if not np.array_equal(back.carrier.read_range(0, SPAN, out=np.empty_like(values)), values):
        raise AssertionError("the round trip through BlockDeviceCarrier produced other values")
    anchor: Consuming = (
        lambda n: [(values.copy(), os.open(numpy_written, flags)) for _ in range(n)],
        numpy_round_trip,
    )
    if not np.array_equal(numpy_round_trip(anchor[0](1)[0]), values):
        raise AssertionError("NumPy's round trip produced other values")
    return (inputs, round_trip), anchor


def cases(directory: Path, values: np.ndarray, direct: str | None) -> list[Case]:
    """The rows; ``direct``: why O_DIRECT is refused in ``directory``, None if it is not."""
    numpy_written = directory / "numpy.f32"
    source = directory / "source.f32"
    values.tofile(source)
    tofile_fsync(values, numpy_written)
    # The O_DIRECT anchor's descriptors, or ordinary ones where O_DIRECT is refused.
    flags = os.O_RDONLY if direct else os.O_RDONLY | os.O_DIRECT
    device_target = None if direct else 1.0
    refused = " (O_DIRECT refused)" if direct else ""
    read_anchor = "buffered-read anchor" if direct else "O_DIRECT anchor"
    if not np.array_equal(direct_read(os.open(source, flags)), values):
        raise AssertionError(f"the O_DIRECT read of {source} produced other values")
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
        ours = moved_to_cpu(make, name, source, values)
        if make is not sw.BlockDeviceCarrier:
            out.append((f"{name} to CPU", ours, from_page_cache(source), None))
            continue
        from_device: Consuming = (
            lambda n: [os.open(source, flags) for _ in range(n)],
            direct_read,
        )
        out.append((f"{name} to CPU, {read_anchor}{refused}", ours, from_device, device_target))
        out.append((f"{name} to CPU, warm-cache anchor", ours, from_page_cache(source), None))
        out.append(
            (
                f"CPU to {name} to CPU, round trip{refused}",
                *round_trip_sides(directory, values, numpy_written, flags),
                device_target,
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
        direct = direct_io_refusal(probe.path)
        if direct:
            print(
                f"{directory} refuses O_DIRECT ({direct}); BlockDeviceCarrier takes its "
                "buffered fallback there, and the rows with the O_DIRECT anchor read through "
                "an ordinary descriptor and have no target. Set TMPDIR to a directory on "
                "ext4, xfs or btrfs to measure them.",
                file=sys.stderr,
            )
        values = np.arange(SPAN, dtype=np.float32)
        rows = []
        for name, ours, anchor, target in cases(directory, values, direct):
            rows.append(
                with_target(consuming_row(ours, anchor, options.repeat, 1, case=name), target)
            )
            print(f"{name}: {rows[-1]['ratio']:.2f}", file=sys.stderr)
        print(ratio_table(rows, ["case", "target", "met"]))
        print(
            f"\n{directory}: direct_io={probe.direct_io} alignment={probe.alignment} "
            f"block_size={probe.block_size}; NumPy's O_DIRECT anchor: "
            + ("yes" if direct is None else f"refused ({direct})")
        )
        write_result(
            options.json,
            "block_device",
            rows,
            repeat=options.repeat,
            directory=str(directory.parent),
            direct_io=probe.direct_io,
            block_size=probe.block_size,
            numpy_o_direct=direct is None,
            numpy_o_direct_refusal=direct,
        )
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
