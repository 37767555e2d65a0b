"""Benchmark: zero-copy DLPack export of StrideWeave tensors against NumPy and PyTorch.

For each shape, one run times four pairs of calls, StrideWeave first, anchor second:

* ``np.from_dlpack(t)`` vs ``np.from_dlpack(a)`` for a NumPy array ``a`` of the same shape;
* ``torch.from_dlpack(t)`` vs ``torch.from_dlpack(x)`` for a torch tensor ``x``;
* ``t.__dlpack__(max_version=(1, 0))`` vs ``a.__dlpack__(max_version=(1, 0))``;
* ``t.__dlpack__()`` (legacy) vs ``a.__dlpack__()``;
* ``np.from_dlpack(t)`` vs a ``memcpy`` of the tensor's bytes (``ctypes.memmove`` into a
  preallocated buffer): what the zero-copy export saves over copying the data.

Anchors use the same strides as the StrideWeave layout (column-major), so both sides
describe the same buffer. Every timed call also drops its result, so freeing the capsule
or array is included. Figures are the median over ``--repeat`` runs of ``--number`` calls
(StrideWeave and anchor in alternating runs, see benchlib),
after a warm-up; ratios are StrideWeave / anchor (1.0 = as fast as the anchor). Nothing
here asserts a time.

    PYTHONPATH=build/dev python bench/dlpack_export.py [--json PATH] [--repeat R] [--number N]
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import torch
from benchlib import parse_options, ratio_table, timed_row, write_result

import strideweave as sw


def column_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, running = [], 1
    for extent in shape:
        strides.append(running)
        running *= extent
    return tuple(strides)


def cases() -> list[tuple[str, sw.Layout]]:
    """Name and layout of every benchmarked tensor."""
    return [
        ("1-D 1e6", sw.Layout(1_000_000)),
        ("2-D 1000x1000", sw.Layout((1000, 1000))),
        ("hierarchical (64,(32,16))", sw.Layout((64, (32, 16)), (1, (64, 2048)))),
        ("rank-0", sw.Layout(())),
    ]


def operands(layout: sw.Layout) -> tuple[sw.Tensor, np.ndarray, torch.Tensor]:
    """A Float32 StrideWeave tensor and NumPy / torch anchors with its leaf shape and strides."""
    t = sw.Tensor(sw.CPU(sw.Float32, layout.cosize), layout)
    extents = tuple(e for e, _ in layout.leaf_modes)
    strides = tuple(d for _, d in layout.leaf_modes)
    assert strides == column_major(extents)
    a = np.zeros(extents, dtype=np.float32, order="F")
    x = torch.from_numpy(np.zeros(extents, dtype=np.float32, order="F"))
    assert a.strides == tuple(4 * d for d in strides) and x.stride() == strides
    return t, a, x


def calls(t: sw.Tensor, a: np.ndarray, x: torch.Tensor) -> dict[str, tuple]:
    """Operation name -> (StrideWeave call, anchor call)."""
    nbytes = 4 * t.layout.cosize
    destination = ctypes.create_string_buffer(max(nbytes, 1))
    source = t.carrier.pointer()
    return {
        "np.from_dlpack": (lambda: np.from_dlpack(t), lambda: np.from_dlpack(a)),
        "torch.from_dlpack": (lambda: torch.from_dlpack(t), lambda: torch.from_dlpack(x)),
        "__dlpack__ versioned": (
            lambda: t.__dlpack__(max_version=(1, 0)),
            lambda: a.__dlpack__(max_version=(1, 0)),
        ),
        "__dlpack__ legacy": (lambda: t.__dlpack__(), lambda: a.__dlpack__()),
        "vs memcpy of the bytes": (
            lambda: np.from_dlpack(t),
            lambda: ctypes.memmove(destination, source, nbytes),
        ),
    }


def measure(repeat: int, number: int) -> list[dict]:
    rows = []
    for name, layout in cases():
        for operation, (ours, anchor) in calls(*operands(layout)).items():
            rows.append(
                timed_row(
                    ours,
                    anchor,
                    repeat,
                    number,
                    case=name,
                    shape=[e for e, _ in layout.leaf_modes],
                    strides=[d for _, d in layout.leaf_modes],
                    operation=operation,
                )
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "dlpack_export", repeat=15, number=2000, argv=argv)
    rows = measure(args.repeat, args.number)
    print(ratio_table(rows, ("case", "operation")))
    write_result(args.json, "dlpack_export", rows, repeat=args.repeat, number=args.number)
    return 0


if __name__ == "__main__":
    sys.exit(main())
