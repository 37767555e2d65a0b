"""Benchmark: what operation profiling (spec/operation-profiling) costs, off and on.

One run measures:

| case                     | StrideWeave                      | anchor                   |
|--------------------------|----------------------------------|--------------------------|
| scope, profiling off (1) | C++ loop opening OperationScope  | the same loop without it |
| scope, profiling on (1)  | the scoped loop inside a profile | the same loop without it |
| 8-element add, profiled (2)  | ``a + b`` inside a profile   | ``a + b`` outside one    |
| 8-element move, profiled (3) | ``sw.move`` inside a profile | ``sw.move`` outside one  |

No row has a target: the figures are reported as measured.

(1) ``_testing.time_operation_scopes``: a C++ loop whose every iteration opens and closes
an ``OperationScope`` over two 8-element CPU Tensors (the hook every operation runs), or
only stores to a volatile sink. With profiling off the scope is one relaxed atomic load
and a predictable branch; the run prints that overhead in nanoseconds per operation and
as a share of an unprofiled 8-element add. With profiling on it records one event per
iteration. (2) Two 8-element Float32 CPU tensors; a profiled add records one operation
event. (3) CPU to CPU, 8 Float32 elements; a profiled move records its submission and
completion events. Each profiled run enters a fresh profile, so the events of earlier
runs do not accumulate.

Timing and ratios follow benchlib (ratio = StrideWeave / anchor, medians); nothing here
asserts a time.

    python bench/profiling.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import statistics
import sys

from benchlib import (
    Consuming,
    calls_for,
    consuming_row,
    parse_options,
    ratio_table,
    timed_row,
    with_target,
    write_result,
)

import strideweave as sw
from strideweave._core import _testing

SCOPES = 200_000


def _scope_row(case: str, repeat: int, profiled: bool) -> dict:
    tensor = sw.Tensor(sw.CPU(sw.Float32, 8), sw.Layout(8))
    ours: list[float] = []
    anchor: list[float] = []
    for _ in range(repeat):
        if profiled:
            with sw.profile():
                ours.append(_testing.time_operation_scopes(tensor, SCOPES, True))
        else:
            ours.append(_testing.time_operation_scopes(tensor, SCOPES, True))
        anchor.append(_testing.time_operation_scopes(tensor, SCOPES, False))
    ours_us, anchor_us = statistics.median(ours) / 1e3, statistics.median(anchor) / 1e3
    row = {"case": case, "strideweave_us": ours_us, "anchor_us": anchor_us}
    return with_target({**row, "ratio": ours_us / anchor_us}, None)


def _moves(n: int) -> list:
    return [(sw.Tensor(sw.CPU(sw.Float32, 8), sw.Layout(8)), sw.CPU(sw.Float32)) for _ in range(n)]


def _move(pair) -> object:
    return sw.move(*pair)


class _Profiled:
    """A profile entered afresh before each timed run, so its events do not pile up."""

    def __init__(self) -> None:
        self.profile: sw.Profile | None = None

    def renew(self) -> None:
        self.stop()
        self.profile = sw.profile().__enter__()

    def stop(self) -> None:
        if self.profile is not None:
            self.profile.__exit__(None, None, None)
            self.profile = None

    def prepare(self, n: int) -> list:
        self.renew()
        return _moves(n)


def _add_row(repeat: int) -> dict:
    a = sw.Tensor(sw.CPU(sw.Float32, 8), sw.Layout(8))
    b = sw.Tensor(sw.CPU(sw.Float32, 8), sw.Layout(8))
    number = calls_for(lambda: a + b)
    profiled = _Profiled()
    calls = [0]

    def profiled_add() -> object:
        if calls[0] % number == 0:  # a fresh profile per timed run
            profiled.renew()
        calls[0] += 1
        return a + b

    row = timed_row(profiled_add, lambda: a + b, repeat, number, case="8-element add, profiled")
    profiled.stop()
    return with_target(row, None)


def measure(repeat: int) -> list[dict]:
    rows = [
        _scope_row("scope, profiling off", repeat, profiled=False),
        _scope_row("scope, profiling on", repeat, profiled=True),
    ]
    rows.append(_add_row(repeat))
    profiled = _Profiled()
    ours: Consuming = (profiled.prepare, _move)
    anchor: Consuming = (_moves, _move)
    row = consuming_row(ours, anchor, repeat, 2000, case="8-element move, profiled")
    profiled.stop()
    rows.append(with_target(row, None))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "profiling", repeat=7, argv=argv)
    rows = measure(args.repeat)
    print(ratio_table(rows, ["case", "target", "met"]))
    off, on, add, _ = rows
    overhead_ns = (off["strideweave_us"] - off["anchor_us"]) * 1e3
    add_ns = add["anchor_us"] * 1e3
    print(
        f"profiling off: {overhead_ns:.2f} ns per operation "
        f"({100 * overhead_ns / add_ns:.3f}% of an unprofiled 8-element add, {add_ns:.0f} ns)"
    )
    print(f"profiling on: {(on['strideweave_us'] - on['anchor_us']) * 1e3:.0f} ns per event")
    write_result(args.json, "profiling", rows, repeat=args.repeat, scopes=SCOPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
