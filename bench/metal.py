"""Benchmark: moves through the Metal carrier (the emulated device queue) against memcpy,
and the asynchrony of a chain of Metal operations.

| case                                 | StrideWeave                | anchor         | target  |
|--------------------------------------|----------------------------|----------------|---------|
| CPU to Metal to CPU, 64 MiB (1)      | ``sw.move`` to Metal, back | two memmoves   | <= 1.25 |
| the same, into sized carriers (1)    | ``sw.move`` to Metal, back | two memmoves   | none    |
| 100 Metal operations (2)             | submission of the chain    | its completion | none    |

(1) Zero emulated latency. Both moves are the registered bulk operations
(CpuToMetalMoveOperation, MetalToCpuMoveOperation): one upload and one download of the
whole span, each a memcpy on the emulated device thread, into fresh storage the move
stages its value in (docs/metal.md). The anchor copies the same bytes twice between
preallocated buffers. Each StrideWeave call moves a fresh CPU source into a Metal
carrier, then the result into a CPU carrier; both commits (the device synchronized
before each) and both releases are timed. In the first row both destinations are empty:
each move allocates fresh storage of the span, as spec/interop-movement's Metal
movement does, and installs it in the destination at its commit. Freed 64 MiB buffers
go to the cache of freed mappings, so the fresh storage takes no page faults. Target:
0.8x memcpy's throughput, a time ratio <= 1.25. In the second row the destinations are
sized carriers allocated outside the timed region (a Metal carrier per call, built
with the source: ``benchlib.consuming_row``; one CPU carrier reused by every call). The
Metal one takes the staged buffer as well, but the CPU one, whose buffer may be
aliased by ``CPU.pointer()`` or a DLPack export, receives the staged span with one more
memcpy: the price of a failed move leaving a sized destination unchanged. No target.
(2) With ``STRIDEWEAVE_METAL_LATENCY_US``-style latency set to 1 ms per command buffer, a
chain of 100 additions on 256-element Metal tensors: the time until the last submission
returned, and the time until the result's ``tolist()`` returned (which waits for the
device). The ratio is submission / completion; a small ratio shows that submission
returns long before the device finishes. No target.

Timing and ratios follow benchlib (medians of alternating runs). Nothing asserts a time.

    python bench/metal.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import ctypes
import sys
import time

import numpy as np
from benchlib import consuming_row, parse_options, ratio_table, with_target, write_result

import strideweave as sw
from strideweave._core import _testing

SPAN_BYTES = 64 * 2**20
SPAN = SPAN_BYTES // 4
CHAIN = 100
CHAIN_LATENCY_US = 1000


def cpu_tensor(values: np.ndarray) -> sw.Tensor:
    carrier = sw.CPU(sw.Float32, values.size)
    carrier.write_range(0, values)
    return sw.Tensor(carrier, sw.Layout(values.size))


def round_trip_rows(repeat: int) -> list[dict]:
    _testing.set_metal_latency(0)
    values = np.arange(SPAN, dtype=np.float32)
    last = sw.CPU(sw.Float32, SPAN)

    def sized(t: sw.Tensor) -> tuple[sw.Tensor, sw.Metal]:
        return t, sw.Metal(sw.Float32, SPAN)

    def preallocated(work: tuple[sw.Tensor, sw.Metal]) -> sw.Tensor:
        t, metal = work
        return sw.move(sw.move(t, metal), last)

    def allocating(t: sw.Tensor) -> sw.Tensor:
        return sw.move(sw.move(t, sw.Metal(sw.Float32)), sw.CPU(sw.Float32))

    for result in (preallocated(sized(cpu_tensor(values))), allocating(cpu_tensor(values))):
        if not np.array_equal(np.from_dlpack(result), values):
            raise AssertionError("the round trip through Metal produced other values")
    middle = np.empty_like(values)
    target = np.empty_like(values)

    def memcpy_twice(source: np.ndarray) -> None:
        ctypes.memmove(middle.ctypes.data, source.ctypes.data, values.nbytes)
        ctypes.memmove(target.ctypes.data, middle.ctypes.data, values.nbytes)

    anchor = (lambda n: [values.copy() for _ in range(n)], memcpy_twice)
    rows = []
    for case, ours, goal in (
        (
            "CPU to Metal to CPU 64 MiB",
            (lambda n: [cpu_tensor(values) for _ in range(n)], allocating),
            1.25,
        ),
        (
            "CPU to Metal to CPU 64 MiB, into sized carriers",
            (lambda n: [sized(cpu_tensor(values)) for _ in range(n)], preallocated),
            None,
        ),
    ):
        rows.append(with_target(consuming_row(ours, anchor, repeat, 1, case=case), goal))
    return rows


def chain_row(repeat: int) -> dict:
    """Submission and completion times of CHAIN additions with latency on (medians)."""
    _testing.set_metal_latency(CHAIN_LATENCY_US)
    try:
        one = sw.Tensor(sw.Metal(sw.Float32, values=[1.0] * 256), sw.Layout(256))
        submit_us, complete_us = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            x = one
            for _ in range(CHAIN):
                x = sw.add(x, one)
            submitted = time.perf_counter()
            values = x.tolist()
            completed = time.perf_counter()
            if values != [float(CHAIN + 1)] * 256:
                raise AssertionError("the chain of Metal operations computed other values")
            submit_us.append((submitted - start) * 1e6)
            complete_us.append((completed - start) * 1e6)
    finally:
        _testing.set_metal_latency(0)
    ours, anchor = float(np.median(submit_us)), float(np.median(complete_us))
    return with_target(
        {
            "case": f"{CHAIN} Metal additions, {CHAIN_LATENCY_US} us latency: submit vs complete",
            "strideweave_us": ours,
            "anchor_us": anchor,
            "ratio": ours / anchor,
        },
        None,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "metal", repeat=7, argv=argv)
    rows = [*round_trip_rows(args.repeat), chain_row(args.repeat)]
    print(ratio_table(rows, ["case", "target", "met"]))
    chain = rows[-1]
    print(
        f"chain: submission returned after {chain['strideweave_us'] / 1000:.2f} ms, "
        f"the device completed after {chain['anchor_us'] / 1000:.2f} ms"
    )
    write_result(args.json, "metal", rows, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
