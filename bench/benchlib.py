"""What every benchmark in bench/ shares: options, the timing rule, the ratio table and the JSON.

Timing: a warm-up, then the median over ``repeat`` runs of ``number`` calls. A
StrideWeave call and its anchor are timed in alternating runs, so load on the machine
that drifts during a benchmark weighs on both sides alike. Each run starts after a pause
of SETTLE_SECONDS, so that threads the other side left spinning have gone to sleep:
PyTorch's OpenMP workers spin for about 12 ms after its last parallel loop on the 2-core
development machine (CPU time burnt while the interpreter slept), and a run started in
that window shares its cores with them. Then an untimed warm-up of at least
WARM_SECONDS brings back up what the pause let go cold: on that machine (a VM) a
two-thread copy of 4 MB took 140 us a call for the first 2 ms after a 50 ms pause, then
75 us, and 57 us from about 3.5 ms on, while a one-thread anchor went from 108 to 102 us
(docs/performance.md, "The bench's warm-up"). Ratios are
StrideWeave / anchor (1.0 = as fast as the anchor). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import strideweave as sw


def parse_options(
    doc: str,
    benchmark: str,
    repeat: int,
    number: int | None = None,
    argv: Sequence[str] | None = None,
) -> argparse.Namespace:
    """The options every benchmark takes, parsed from ``argv``.

    ``--json PATH`` (default ``build/bench/<benchmark>.json``) and ``--repeat R`` (default
    ``repeat``); ``--number N`` too when ``number`` gives its default. The description is
    the first line of the script's docstring ``doc``.
    """
    parser = argparse.ArgumentParser(description=doc.split("\n", 1)[0])
    parser.add_argument(
        "--json",
        type=Path,
        default=Path("build/bench") / f"{benchmark}.json",
        help="where to write results",
    )
    parser.add_argument("--repeat", type=int, default=repeat, help="timed runs per call (median)")
    if number is not None:
        parser.add_argument("--number", type=int, default=number, help="calls per timed run")
    return parser.parse_args(argv)


# The untimed pause before each run of an alternating pair, and the least time the
# warm-up after it lasts (see the module's docstring).
SETTLE_SECONDS = 0.05
WARM_SECONDS = 0.01


def _settled_run(run: Callable[[int], float], number: int) -> float:
    """``run(number)``: the seconds of one timed run, after the pause SETTLE_SECONDS and an
    untimed warm-up that brings the threads and caches the pause let go cold back up
    before the timing starts: runs of ``number // 10`` calls (at least one), repeated
    until WARM_SECONDS have passed."""
    time.sleep(SETTLE_SECONDS)
    warm_up = max(1, number // 10)
    deadline = time.perf_counter() + WARM_SECONDS
    run(warm_up)
    while time.perf_counter() < deadline:
        run(warm_up)
    return run(number)


def median_us(call: Callable[[], object], repeat: int, number: int) -> float:
    """Median microseconds per call over ``repeat`` runs of ``number`` calls, after warm-up."""
    timeit.repeat(call, repeat=2, number=max(1, number // 10))
    runs = timeit.repeat(call, repeat=repeat, number=number)
    return statistics.median(runs) / number * 1e6


def paired_median_us(
    ours: Callable[[], object], anchor: Callable[[], object], repeat: int, number: int
) -> tuple[float, float]:
    """Median microseconds per call of ``ours`` and of ``anchor``, timed in alternating runs."""
    for call in (ours, anchor):
        timeit.repeat(call, repeat=2, number=max(1, number // 10))
    runs: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for times, call in zip(runs, (ours, anchor), strict=True):
            times.append(_settled_run(lambda k, call=call: timeit.timeit(call, number=k), number))
    return tuple(statistics.median(times) / number * 1e6 for times in runs)  # type: ignore[return-value]


# A call that consumes what it times (a move releases its source): ``prepare(n)`` builds
# the inputs of ``n`` calls, ``call(input)`` is one timed call.
Consuming = tuple[Callable[[int], list[Any]], Callable[[Any], object]]


def _consuming_run_us(side: Consuming, number: int) -> float:
    prepare, call = side
    inputs = prepare(number)
    inputs.reverse()
    return timeit.timeit(lambda: call(inputs.pop()), number=number)


def paired_consuming_us(
    ours: Consuming, anchor: Consuming, repeat: int, number: int
) -> tuple[float, float]:
    """paired_median_us for calls that consume their inputs.

    Before each run (warm-up included), ``prepare(number)`` builds that run's inputs
    outside the timed region; the run times ``call(input)`` for each of them, taking each
    input out of the list, so its last reference (and what freeing it costs) drops inside
    the timed call. A run holds at most ``number`` inputs at once.
    """
    for side in (ours, anchor):
        _consuming_run_us(side, max(1, number // 10))
    runs: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for times, side in zip(runs, (ours, anchor), strict=True):
            times.append(_settled_run(lambda k, side=side: _consuming_run_us(side, k), number))
    return tuple(statistics.median(times) / number * 1e6 for times in runs)  # type: ignore[return-value]


def _row(ours_us: float, anchor_us: float, labels: dict[str, object]) -> dict:
    ratio = ours_us / anchor_us
    return {**labels, "strideweave_us": ours_us, "anchor_us": anchor_us, "ratio": ratio}


def timed_row(
    ours: Callable[[], object],
    anchor: Callable[[], object],
    repeat: int,
    number: int,
    **labels: object,
) -> dict:
    """One result row: ``labels``, both medians (timed in alternating runs) and the ratio."""
    return _row(*paired_median_us(ours, anchor, repeat, number), labels)


def consuming_row(
    ours: Consuming, anchor: Consuming, repeat: int, number: int, **labels: object
) -> dict:
    """timed_row for calls that consume their inputs (see paired_consuming_us)."""
    return _row(*paired_consuming_us(ours, anchor, repeat, number), labels)


def with_target(row: dict, target: float | None) -> dict:
    """``row`` with its target ratio (``<= target``) and whether this run met it.

    ``target`` None: a figure reported without a target (``-`` in both columns).
    """
    if target is None:
        return {**row, "target": "-", "met": "-"}
    return {**row, "target": f"<= {target}", "met": row["ratio"] <= target}


def calls_for(call: Callable[[], object], seconds: float = 0.02) -> int:
    """How many calls one timed run needs to last about ``seconds``."""
    number = 1
    while timeit.timeit(call, number=number) < seconds:
        number *= 2
    return number


def ratio_table(rows: Sequence[dict], keys: Sequence[str]) -> str:
    """A text table of ``rows``: the ``keys`` columns, then StrideWeave, anchor and ratio."""
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    header = " ".join(f"{k:<{w}}" for k, w in zip(keys, widths, strict=True))
    header += f" {'StrideWeave us':>14} {'anchor us':>10} {'ratio':>6}"
    lines = [header, "-" * len(header)]
    for r in rows:
        left = " ".join(f"{r[k]!s:<{w}}" for k, w in zip(keys, widths, strict=True))
        lines.append(
            f"{left} {r['strideweave_us']:>14.3f} {r['anchor_us']:>10.3f} {r['ratio']:>6.2f}"
        )
    return "\n".join(lines)


def write_result(path: Path, benchmark: str, rows: list[dict], **settings: object) -> None:
    """Writes the rows and what produced them (versions, platform, settings) as JSON."""
    result: dict[str, object] = {
        "benchmark": benchmark,
        "unit": "microseconds per call (median)",
        "ratio": "strideweave_us / anchor_us",
        **settings,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "strideweave": sw.__version__,
        "extension": sw._core.__file__,
    }
    for library in ("numpy", "torch"):
        if library in sys.modules:
            result[library] = sys.modules[library].__version__
    result["rows"] = rows
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {path}")
