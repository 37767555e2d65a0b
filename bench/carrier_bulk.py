"""Benchmark: carrier bulk access (spec/carrier-storage ranges, the span walker) against anchors.

One run measures three pairs, StrideWeave first, anchor second:

* ``range copy``: 64 MiB of Float32 copied CPU to CPU through the range path,
  ``dst.write_range(0, view)`` where ``view`` is the zero-copy NumPy view of the source
  carrier (one lock, one version increment, one memcpy), vs ``memcpy`` of the same bytes
  (``ctypes.memmove`` between the two carriers' buffers). Also ``src.read_range(0, n,
  out=array)`` into a preallocated NumPy array vs the same memcpy. Ratios here are
  throughput ratios: anchor time / StrideWeave time (target >= 0.8).
* ``tolist``: ``t.tolist()`` of a 1e6-element Float32 tensor vs ``np.ndarray.tolist()``
  of the same values. Ratio: StrideWeave time / anchor time (target <= 1.5).
* ``strided gather``: ``sw.tensor(t)`` of the transposed view ``(1024,1024):(1024,1)`` (one
  strided copy into a new compact CPU carrier, its allocation included) vs
  ``np.copyto(c, a.T)`` into a preallocated C-contiguous array. Ratio: anchor time /
  StrideWeave time, a throughput ratio (target >= 1.0).

Figures are the median over ``--repeat`` runs of ``--number`` calls after a warm-up.
Nothing here asserts a time.

    python bench/carrier_bulk.py [--json PATH] [--repeat R] [--number N]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import platform
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

import strideweave as sw

DEFAULT_JSON = Path("build/bench/carrier_bulk.json")
COPY_BYTES = 64 * 2**20
TOLIST_ELEMENTS = 1_000_000
GATHER_EXTENT = 1024


def median_s(call, repeat: int, number: int) -> float:
    """Median seconds per call over ``repeat`` runs of ``number`` calls, after warm-up."""
    timeit.repeat(call, repeat=1, number=max(1, number // 4))
    return statistics.median(timeit.repeat(call, repeat=repeat, number=number)) / number


def range_copy_cases() -> list[tuple[str, object, object]]:
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
        ("range copy: dst.write_range(0, view)", lambda: dst.write_range(0, view), memcpy),
        ("range copy: src.read_range(out=...)", lambda: src.read_range(0, n, out=out), memcpy),
    ]


def tolist_case() -> tuple[str, object, object]:
    values = np.random.default_rng(0).random(TOLIST_ELEMENTS, dtype=np.float32)
    t = sw.tensor(values)
    return ("tolist 1e6 Float32", t.tolist, values.tolist)


def gather_case() -> tuple[str, object, object]:
    e = GATHER_EXTENT
    carrier = sw.CPU(sw.Float32, e * e)
    carrier.write_range(0, np.arange(e * e, dtype=np.float32))
    t = sw.Tensor(carrier, sw.Layout((e, e), (e, 1)))
    a = np.arange(e * e, dtype=np.float32).reshape(e, e)
    c = np.empty((e, e), dtype=np.float32)
    assert sw.tensor(t).tolist() == a.tolist()
    return ("strided gather (1024,1024):(1024,1)", lambda: sw.tensor(t), lambda: np.copyto(c, a.T))


def measure(repeat: int, number: int) -> list[dict]:
    rows = []
    plan = [(*case, "throughput", 0.8) for case in range_copy_cases()]
    plan.append((*tolist_case(), "time", 1.5))
    plan.append((*gather_case(), "throughput", 1.0))
    for name, ours, anchor, kind, target in plan:
        ours_s = median_s(ours, repeat, number)
        anchor_s = median_s(anchor, repeat, number)
        ratio = anchor_s / ours_s if kind == "throughput" else ours_s / anchor_s
        meets = ratio >= target if kind == "throughput" else ratio <= target
        rows.append(
            {
                "case": name,
                "strideweave_ms": ours_s * 1e3,
                "anchor_ms": anchor_s * 1e3,
                "ratio_kind": kind,
                "ratio": ratio,
                "target": target,
                "meets_target": meets,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    header = (
        f"{'case':<38} {'StrideWeave ms':>14} {'anchor ms':>10} {'ratio':>6} "
        f"{'kind':>10} {'target':>7}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        bound = ">=" if r["ratio_kind"] == "throughput" else "<="
        lines.append(
            f"{r['case']:<38} {r['strideweave_ms']:>14.3f} {r['anchor_ms']:>10.3f} "
            f"{r['ratio']:>6.2f} {r['ratio_kind']:>10} {bound + str(r['target']):>7}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per call (median)")
    parser.add_argument("--number", type=int, default=10, help="calls per timed run")
    args = parser.parse_args(argv)
    rows = measure(args.repeat, args.number)
    print(table(rows))
    result = {
        "benchmark": "carrier_bulk",
        "unit": "milliseconds per call (median)",
        "ratio": "throughput: anchor_ms / strideweave_ms; time: strideweave_ms / anchor_ms",
        "repeat": args.repeat,
        "number": args.number,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": np.__version__,
        "strideweave": sw.__version__,
        "extension": sw._core.__file__,
        "rows": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
