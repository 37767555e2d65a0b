"""Benchmark: the cost of the layout algebra on deeply nested and very wide layouts.

The algebra's cost must grow linearly with the number of modes, and nesting is bounded
at 64 levels (spec/core-layout), so no input makes it quadratic. For each operation
(coalesce, composition, complement, right_inverse, logical_divide, logical_product) this
times:

* ``depth 63``: a chain of one-element tuples 63 levels deep (logical_product nests its
  operand one level deeper, reaching the limit of 64);
* ``wide 1,600`` and ``wide 5,000``: that many top-level modes (one of extent 6 at
  stride 1, the rest of extent 1, so the size stays small);

and the refusal of a chain nested 1,600 and 5,000 levels deep (which once took seconds in
composition and now fails with ValueError at the 65th level). The ``5,000 / 1,600`` column
is the ratio of the two wide timings: about 3.1 (5,000 / 1,600) for a linear cost, about
9.8 for a quadratic one. Nothing here asserts a time.

    python bench/layout_algebra.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from benchlib import calls_for, median_us, parse_options, write_result

import strideweave as sw


def chain(levels: int, leaf: int) -> object:
    """``leaf`` wrapped in ``levels`` one-element tuples."""
    for _ in range(levels):
        leaf = (leaf,)
    return leaf


def deep() -> sw.Layout:
    return sw.Layout(chain(63, 8), chain(63, 2))


def wide(modes: int) -> sw.Layout:
    return sw.Layout((6,) + (1,) * (modes - 1), (1,) + (0,) * (modes - 1))


OPERATIONS: dict[str, Callable[[sw.Layout], object]] = {
    "coalesce": sw.coalesce,
    "composition(L, L)": lambda layout: sw.composition(layout, layout),
    "complement(L, 96)": lambda layout: sw.complement(layout, 96),
    "right_inverse": sw.right_inverse,
    "logical_divide(L, 2:1)": lambda layout: sw.logical_divide(layout, sw.Layout(2, 1)),
    "logical_product(L, 2:1)": lambda layout: sw.logical_product(layout, sw.Layout(2, 1)),
}


def timed_us(call: Callable[[], object], repeat: int) -> float:
    """Median microseconds per call, each run lasting about 20 ms."""
    return median_us(call, repeat, calls_for(call))


def refuse(levels: int) -> None:
    try:
        sw.Layout(chain(levels, 2))
    except ValueError:
        return
    raise AssertionError(f"a layout nested {levels} levels deep was accepted")


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "layout_algebra", repeat=7, argv=argv)

    operands = {"depth 63": deep(), "wide 1,600": wide(1600), "wide 5,000": wide(5000)}
    rows = []
    header = "".join(f"{name:>14}" for name in operands)
    print(f"{'operation':<26}{header}{'5,000/1,600':>13}")
    for name, operation in OPERATIONS.items():
        micros = {
            case: timed_us(lambda op=operation, layout=layout: op(layout), args.repeat)
            for case, layout in operands.items()
        }
        ratio = micros["wide 5,000"] / micros["wide 1,600"]
        rows.append({"operation": name, "microseconds": micros, "wide_ratio": ratio})
        print(
            f"{name:<26}"
            + "".join(f"{micros[case]:>12.1f}us" for case in operands)
            + f"{ratio:>13.2f}"
        )
    refusals = {}
    for levels in (1600, 5000):
        refusals[levels] = timed_us(lambda n=levels: refuse(n), args.repeat)
        print(f"refuse a chain {levels:,} deep: {refusals[levels]:.1f}us (ValueError at level 65)")

    write_result(args.json, "layout_algebra", rows, refusal_microseconds=refusals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
