"""Benchmark: ``np.asarray(t)`` / ``np.array(t, copy=True)`` and ``repr(t)`` against NumPy.

Each row times one StrideWeave call and its anchor on an array of the same leaf shape
and strides (so both sides read the same memory pattern):

* ``view``: ``np.asarray(t)`` (zero-copy through DLPack export) vs ``np.asarray(x)`` for
  a PyTorch tensor ``x`` over the same memory (another library's ``__array__``);
* ``copy``: ``np.array(t, copy=True)`` (``Carrier::gather``) vs ``a.copy(order="K")``,
  for a compact layout, a layout with holes (every other slot) and a Bool tensor
  (which export refuses, so ``np.asarray`` copies);
* ``repr``: ``repr(t)`` vs ``repr(a)`` of a summarized 1000x1000 tensor.

The target is on the ratio StrideWeave / anchor:

| case                    | operation | target |
|-------------------------|-----------|--------|
| Float32 8x8             | view      | none   |
| Float32 1000x1000       | view      | none   |
| Float32 1000x1000       | copy      | <= 1.0 |
| Float32 1000x1000 holes | copy      | <= 1.0 |
| Bool 1000x1000          | copy      | <= 1.0 |
| Float32 1000x1000       | repr      | none   |

The copy rows' target, <= 1.0 (as fast as NumPy's own copy), is issue 24's.

Figures are the median over ``--repeat`` runs of ``--number`` calls after a warm-up;
ratios are StrideWeave / anchor. Each row states its target and whether this run met it.
Nothing here asserts a time.

    python bench/array_protocol.py [--json PATH] [--repeat R] [--number N]
"""

from __future__ import annotations

import sys

import numpy as np
import torch
from benchlib import parse_options, ratio_table, timed_row, with_target, write_result

import strideweave as sw


def operands(layout: sw.Layout, dtype: sw.DType) -> tuple[sw.Tensor, np.ndarray]:
    """A tensor over a fresh CPU carrier and a NumPy array with its leaf shape and strides."""
    t = sw.Tensor(sw.CPU(dtype, layout.cosize), layout)
    np_dtype = np.bool_ if dtype == sw.Bool else np.float32
    itemsize = np.dtype(np_dtype).itemsize
    storage = np.zeros(max(layout.cosize, 1), dtype=np_dtype)
    a = np.lib.stride_tricks.as_strided(
        storage,
        shape=tuple(e for e, _ in layout.leaf_modes),
        strides=tuple(d * itemsize for _, d in layout.leaf_modes),
    )
    return t, a


def cases() -> list[tuple[str, str, sw.Tensor, np.ndarray, int]]:
    """(case, operation, tensor, anchor, relative call count) for every row."""
    compact = operands(sw.Layout((1000, 1000)), sw.Float32)
    holes = operands(sw.Layout((1000, 1000), (2, 2000)), sw.Float32)
    flags = operands(sw.Layout((1000, 1000)), sw.Bool)
    small = operands(sw.Layout((8, 8)), sw.Float32)
    return [
        ("Float32 8x8", "view", *small, 100),
        ("Float32 1000x1000", "view", *compact, 100),
        ("Float32 1000x1000", "copy", *compact, 1),
        ("Float32 1000x1000 holes", "copy", *holes, 1),
        ("Bool 1000x1000", "copy", *flags, 1),
        ("Float32 1000x1000", "repr", *compact, 1),
    ]


# Operation -> its target ratio (None: a figure without a target).
TARGETS: dict[str, float | None] = {"view": None, "copy": 1.0, "repr": None}


def pair(operation: str, t: sw.Tensor, a: np.ndarray) -> tuple:
    if operation == "view":
        x = torch.from_numpy(a)
        return (lambda: np.asarray(t), lambda: np.asarray(x))
    if operation == "copy":
        return (lambda: np.array(t, copy=True), lambda: a.copy(order="K"))
    return (lambda: repr(t), lambda: repr(a))


def measure(repeat: int, number: int) -> list[dict]:
    rows = []
    for case, operation, t, a, weight in cases():
        ours, anchor = pair(operation, t, a)
        calls = max(1, number * weight // 100)
        row = timed_row(ours, anchor, repeat, calls, case=case, operation=operation)
        rows.append(with_target(row, TARGETS[operation]))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "array_protocol", repeat=9, number=2000, argv=argv)
    rows = measure(args.repeat, args.number)
    print(ratio_table(rows, ("case", "operation", "target", "met")))
    write_result(args.json, "array_protocol", rows, repeat=args.repeat, number=args.number)
    return 0


if __name__ == "__main__":
    sys.exit(main())
