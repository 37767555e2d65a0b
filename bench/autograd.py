"""Benchmark: forward + backward through StrideWeave's autograd (spec/autograd) against PyTorch.

One run times these pairs (Float32, CPU), StrideWeave first, PyTorch second, on the
same values; the target is on the ratio StrideWeave / PyTorch:

| case                                           | StrideWeave   | PyTorch              | target |
|------------------------------------------------|---------------|----------------------|--------|
| chain of 100 ops, 8 elements                   | fwd + bwd (1) | the same graph       | <= 1.0 |
| chain of 100 ops, 8 elements, no_grad          | forward (2)   | ``torch.no_grad``    | none   |
| chain of 100 ops, 1e6 elements, same threads   | fwd + bwd     | the same threads (3) | <= 1.0 |
| chain of 100 ops, 1e6 elements, torch 1 thread | fwd + bwd     | one thread (4)       | none   |

(1) Forward and backward: ``y = x`` for a leaf ``x`` requiring grad, then 100
operations cycling through ``y * w``, ``y + w``, ``y - w`` and ``-y`` (``w`` a constant
of the same shape, not requiring grad), then ``y.sum().backward()``: 101 recorded nodes
and their backward, and the accumulation of ``x.grad`` (reset to None before each call
on both sides). At 8 elements the arithmetic is negligible, so the ratio is the
per-node overhead of recording and traversing the graph; at 1e6 elements it is the bulk
kernels' throughput.
(2) The same 100 operations under ``sw.no_grad()``: the operations' own fixed cost,
without recording, for reading the first row. (3) The 1e6-element chain with PyTorch
limited (``torch.set_num_threads``) to as many intra-op threads as StrideWeave's process
pool has workers, so that neither side has more threads to use; the target, <= 1.0, is
issue 24's (this row was against PyTorch's default thread count, target <= 1.5). The
binding has no public reading of the pool's size, so the script reads it as the library
sizes the pool: ``STRIDEWEAVE_NUM_THREADS`` when set, else ``min(os.cpu_count(), 8)``
(the hardware's thread count, at most 8). The JSON records it as
``strideweave_threads``, with ``strideweave_threads_source`` saying which of the two gave
it, and PyTorch's default thread count as ``torch_threads``. (4) The 1e6-element chain
again with PyTorch limited to one intra-op thread (``torch.set_num_threads(1)``):
PyTorch's kernels on one thread, StrideWeave's as in (3). The 8-element rows use
PyTorch's default thread count.

The per-operation overhead of profiling when it is off is measured by
``bench/profiling.py`` (operation profiling), not here.

Each result is checked against PyTorch's before timing (a benchmark of a wrong gradient
is void). Timing is benchlib's (ratio = StrideWeave / anchor, medians of alternating
runs); each row states its target and whether this run met it. Nothing here asserts a
time.

    python bench/autograd.py [--json PATH] [--repeat R]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import numpy as np
import torch
from benchlib import calls_for, parse_options, ratio_table, timed_row, with_target, write_result

import strideweave as sw

CHAIN = 100


def chain(y, w):  # type: ignore[no-untyped-def]
    """The 100 operations of the chain on ``y``, with the constant ``w`` (either library)."""
    for k in range(CHAIN):
        step = k % 4
        if step == 0:
            y = y * w
        elif step == 1:
            y = y + w
        elif step == 2:
            y = y - w
        else:
            y = -y
    return y


def cpu_tensor(values: np.ndarray) -> sw.Tensor:
    """A Tensor over a new CPU carrier holding ``values`` (compact)."""
    carrier = sw.CPU(sw.Float32, values.size)
    carrier.write_range(0, values)
    return sw.Tensor(carrier, sw.Layout(values.size))


def sides(elements: int) -> tuple[Callable[[], object], Callable[[], object], Callable, Callable]:
    """(StrideWeave forward + backward, PyTorch's, the no_grad forwards) over ``elements``."""
    rng = np.random.default_rng(0)
    values = rng.uniform(0.5, 1.5, elements).astype(np.float32)
    constant = rng.uniform(0.9, 1.1, elements).astype(np.float32)
    x, w = cpu_tensor(values), cpu_tensor(constant)
    x.requires_grad = True
    tx = torch.from_numpy(values.copy()).requires_grad_(True)
    tw = torch.from_numpy(constant.copy())

    def ours() -> None:
        x.grad = None
        chain(x, w).sum().backward()

    def anchor() -> None:
        tx.grad = None
        chain(tx, tw).sum().backward()

    def ours_forward() -> object:
        with sw.no_grad():
            return chain(x, w)

    def anchor_forward() -> object:
        with torch.no_grad():
            return chain(tx, tw)

    ours()
    anchor()
    got = np.from_dlpack(x.grad)
    if not np.allclose(got, tx.grad.numpy(), rtol=1e-5, atol=1e-6):
        raise AssertionError(f"the gradient differs from PyTorch's: {got} vs {tx.grad}")
    if not np.allclose(np.from_dlpack(ours_forward()), anchor_forward().numpy(), rtol=1e-5):
        raise AssertionError("the no_grad forward differs from PyTorch's")
    return ours, anchor, ours_forward, anchor_forward


def strideweave_threads() -> tuple[int, str]:
    """The number of workers of StrideWeave's process pool, and where that number comes from.

    The binding exposes no public reading of the pool's size, so this applies the
    library's rule (spec/carrier-storage): ``STRIDEWEAVE_NUM_THREADS`` when set, else the
    hardware's thread count, at most 8.
    """
    text = os.environ.get("STRIDEWEAVE_NUM_THREADS")
    if text is not None:
        try:
            threads = int(text.strip())
        except ValueError:
            threads = 0
        if threads < 1:
            raise SystemExit(f"STRIDEWEAVE_NUM_THREADS={text!r} is not a thread count")
        return threads, "STRIDEWEAVE_NUM_THREADS"
    return min(os.cpu_count() or 1, 8), "default: min(os.cpu_count(), 8)"


def with_torch_threads(threads: int, call: Callable[[], dict]) -> dict:
    """``call()`` with PyTorch limited to ``threads`` intra-op threads (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return call()
    finally:
        torch.set_num_threads(before)


def measure(repeat: int, threads: int) -> list[dict]:
    rows = []
    small, small_anchor, small_forward, small_forward_anchor = sides(8)
    number = calls_for(small_anchor)
    rows.append(
        with_target(
            timed_row(small, small_anchor, repeat, number, case="chain of 100 ops, 8 elements"),
            1.0,
        )
    )
    rows.append(
        with_target(
            timed_row(
                small_forward,
                small_forward_anchor,
                repeat,
                calls_for(small_forward_anchor),
                case="chain of 100 ops, 8 elements, no_grad",
            ),
            None,
        )
    )
    large, large_anchor, _, _ = sides(10**6)
    row = with_torch_threads(
        threads,
        lambda: timed_row(
            large, large_anchor, repeat, 1, case="chain of 100 ops, 1e6 elements, same threads"
        ),
    )
    rows.append(with_target(row, 1.0))
    row = with_torch_threads(
        1,
        lambda: timed_row(
            large, large_anchor, repeat, 1, case="chain of 100 ops, 1e6 elements, torch 1 thread"
        ),
    )
    rows.append(with_target(row, None))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_options(__doc__, "autograd", repeat=7, argv=argv)
    threads, source = strideweave_threads()
    rows = measure(args.repeat, threads)
    print(ratio_table(rows, ["case", "target", "met"]))
    print(
        f"same threads: {threads} (StrideWeave's process pool, from {source}); "
        f"PyTorch's default: {torch.get_num_threads()}"
    )
    per_node = rows[0]
    print(
        f"per node, 8 elements: {per_node['strideweave_us'] / (CHAIN + 1):.2f} us StrideWeave, "
        f"{per_node['anchor_us'] / (CHAIN + 1):.2f} us PyTorch (forward + backward)"
    )
    write_result(
        args.json,
        "autograd",
        rows,
        repeat=args.repeat,
        torch_threads=torch.get_num_threads(),
        strideweave_threads=threads,
        strideweave_threads_source=source,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
