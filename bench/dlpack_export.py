"""Benchmark: zero-copy DLPack export of StrideWeave tensors against NumPy and PyTorch.

For each shape, one run times five pairs of calls, StrideWeave first, anchor second
(``a`` a NumPy array and ``x`` a torch tensor of the same shape); the target is on the
ratio StrideWeave / anchor:

| operation                  | StrideWeave              | anchor                       | target |
|----------------------------|--------------------------|------------------------------|--------|
| ``np.from_dlpack``         | ``np.from_dlpack(t)``    | ``np.from_dlpack(a)``        | <= 1.0 |
| ``torch.from_dlpack``      | ``torch.from_dlpack(t)`` | ``torch.from_dlpack(x)`` (1) | none   |
| ``__dlpack__ versioned``   | ``t.__dlpack__(v)`` (3)  | ``a.__dlpack__(v)``          | <= 1.0 |
| ``__dlpack__ legacy``      | ``t.__dlpack__()``       | ``a.__dlpack__()``           | <= 1.0 |
| ``vs memcpy of the bytes`` | ``np.from_dlpack(t)``    | ``memcpy`` of the bytes (2)  | none   |

(1) PyTorch's generic import path, which its own tensors take too: a figure, not a
target. (2) ``ctypes.memmove`` into a preallocated buffer: what the zero-copy export
saves over copying the data (no target; the ratio falls as the tensor grows).
(3) ``v`` is ``max_version=(1, 0)``. The targets, <= 1.0 (as fast as NumPy's own
export), are issue 24's.

Anchors use the same strides as the StrideWeave layout (column-major), so both sides
describe the same buffer. Every timed call also drops its result, so freeing the capsule
or array is included. Figures are the median over ``--repeat`` runs of ``--number`` calls
(StrideWeave and anchor in alternating runs, see benchlib),
after a warm-up; ratios are StrideWeave / anchor (1.0 = as fast as the anchor). Each row
states its target and whether this run met it. Nothing here asserts a time.

    PYTHONPATH=build/dev python bench/dlpack_export.py [--json PATH] [--repeat R] [--number N]
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import torch
from benchlib import parse_options, ratio_table, timed_row, with_target, write_result

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


# Operation name -> its target ratio (None: a figure without a target).
TARGETS: dict[str, float | None] = {
    "np.from_dlpack": 1.0,
    "torch.from_dlpack": None,
    "__dlpack__ versioned": 1.0,
    "__dlpack__ legacy": 1.0,
    "vs memcpy of the bytes": None,
}


def calls(t: sw.Tensor, a: np.ndarray, x: torch.Tensor) -> dict[str, tuple]:
    """Operation name -> (StrideWeave call, anchor call); the names are TARGETS' keys."""
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
            row = timed_row(
                ours,
                anchor,
                repeat,
                number,
                case=name,
                shape=[e for e, _ in layout.leaf_modes],
                strides=[d for _, d in layout.leaf_modes],
                operation=operation,
            )
            rows.append(with_target(row, TARGETS[operation]))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "dlpack_export", repeat=15, number=2000, argv=argv)
    rows = measure(args.repeat, args.number)
    print(ratio_table(rows, ("case", "operation", "target", "met")))
    write_result(args.json, "dlpack_export", rows, repeat=args.repeat, number=args.number)
    return 0


if __name__ == "__main__":
    sys.exit(main())
