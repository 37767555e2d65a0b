"""Test outcome vocabulary shared by Python and C++ results.

* ``PASSED``  - the test ran and passed.
* ``FAILED``  - some phase (setup, call, teardown) failed, or a C++ test reported a failure.
* ``SKIPPED`` - skipped, disabled or not run by the test binary.
* ``XFAILED`` - an expected failure; never counts as failing, never as passing.
* ``XPASSED`` - an unexpected pass of a non-strict xfail; treated like ``XFAILED``.

A test that did not run in the session has no outcome (None).
"""

from __future__ import annotations

from collections.abc import Iterable

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"
XFAILED = "xfailed"
XPASSED = "xpassed"

# When one test reports several phases, the most severe phase decides.
_PHASE_SEVERITY = {PASSED: 0, SKIPPED: 1, XFAILED: 2, XPASSED: 3, FAILED: 4}
# When one test has several instances (e.g. gtest parameters), any failure fails it and
# otherwise any pass passes it.
_INSTANCE_RANK = {FAILED: 4, PASSED: 3, XPASSED: 2, XFAILED: 1, SKIPPED: 0}


def merge_phases(previous: str | None, phase: str) -> str:
    """Combine the outcome recorded so far for a test with one more phase outcome."""
    if previous is None:
        return phase
    return max(previous, phase, key=_PHASE_SEVERITY.__getitem__)


def merge_instances(outcomes: Iterable[str]) -> str | None:
    """Aggregate the outcomes of several instances of one test (None if there are none)."""
    return max(outcomes, key=_INSTANCE_RANK.__getitem__, default=None)


def phase_outcome(report: object) -> str | None:
    """The outcome one pytest report (setup, call or teardown) contributes: ``failed``,
    ``skipped``/``xfailed``, ``passed``/``xpassed`` for the call, None for a passing setup
    or teardown. ``report`` is a pytest ``TestReport`` (read by attribute only)."""
    xfail = hasattr(report, "wasxfail")
    if getattr(report, "failed", False):
        return FAILED
    if getattr(report, "skipped", False):
        return XFAILED if xfail else SKIPPED
    if getattr(report, "when", None) != "call":
        return None
    return XPASSED if xfail else PASSED
