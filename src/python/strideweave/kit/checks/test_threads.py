"""carrier-storage: one carrier used from many threads at once."""

from __future__ import annotations

import threading

import pytest

import strideweave as sw
from strideweave.kit import expect
from strideweave.kit.checks.support import Make, sample

SAFE = "carrier-storage/carriers-are-safe-to-use-from-any-thread"
THREADS = 8
WRITES = 60
SLOTS = 16
TIMEOUT = 120.0


def run_threads(targets: list) -> list[BaseException]:
    """Runs every target on a thread of its own, all released at once; returns what they
    raised."""
    start = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def body(target) -> None:
        try:
            start.wait()
            target()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=body, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    expect(
        not any(thread.is_alive() for thread in threads),
        f"{SAFE}#1",
        f"a thread still runs after {TIMEOUT} s (deadlock?)",
    )
    return errors


@pytest.mark.spec(f"{SAFE}/use-one-carrier-from-many-threads", f"{SAFE}#1", f"{SAFE}#2")
def test_use_one_carrier_from_many_threads(make: Make, numeric):
    """Eight threads each write whole ranges of one pattern of their own, read ranges and
    versions: each read sees one pattern (a write entirely or not at all), a thread's own
    write always raises the version, and the final version counts every write."""
    patterns = [[sample(numeric, k)] * SLOTS for k in range(THREADS)]
    if numeric != sw.Bool:
        patterns = [[sample(numeric, k * SLOTS + j) for j in range(SLOTS)] for k in range(THREADS)]
    initial = patterns[0]
    c = make(numeric, values=initial)
    start_version = c.version
    torn: list[str] = []
    backwards: list[str] = []

    def worker(k: int):
        def run() -> None:
            for _ in range(WRITES):
                before = c.version
                c.write_range(0, patterns[k])
                after = c.version_token().version
                if after <= before:
                    backwards.append(f"thread {k}: version {before} -> {after} across a write")
                seen = c.read_range(0, SLOTS)
                if seen not in patterns:
                    torn.append(f"thread {k} read {seen}")

        return run

    errors = run_threads([worker(k) for k in range(THREADS)])
    expect(not errors, f"{SAFE}#1", lambda: f"concurrent calls raised {errors[:3]}")
    expect(not torn, f"{SAFE}#2", lambda: f"a read observed part of a range write: {torn[:2]}")
    expect(not backwards, f"{SAFE}#2", lambda: "; ".join(backwards[:3]))
    total = THREADS * WRITES
    expect(
        c.version == start_version + total,
        f"{SAFE}#2",
        f"{total} concurrent writes took version {start_version} to {c.version}",
    )
    expect(c.tolist() in patterns, f"{SAFE}#2", f"the final slots {c.tolist()} are torn")


@pytest.mark.spec(f"{SAFE}/take-ownership-in-opposite-directions", f"{SAFE}#3")
def test_take_ownership_in_opposite_directions(make: Make, numeric):
    a, b = make(numeric, 1), make(numeric, 1)
    version = b.version
    refused: list[BaseException] = []

    def owning() -> None:
        for _ in range(200):
            a.take_ownership(b)
            a.relinquish(b)

    def asking() -> None:
        for _ in range(200):
            try:
                b.relinquish(a)
            except ValueError as error:
                refused.append(error)

    errors = run_threads([owning, asking])
    expect(not errors, f"{SAFE}#3", lambda: f"ownership calls raised {errors[:3]}")
    expect(len(refused) == 200, f"{SAFE}#3", f"b.relinquish(a) refused {len(refused)}/200 times")
    expect(
        b.owner is None and a.owner is None and b.version == version,
        f"{SAFE}#3",
        f"b ends owned by {b.owner!r} at version {b.version}",
    )
