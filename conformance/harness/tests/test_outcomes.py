"""Outcome merging."""

from strideweave._harness import outcomes as o


def test_merge_phases_takes_the_most_severe():
    assert o.merge_phases(None, o.PASSED) == o.PASSED
    assert o.merge_phases(o.PASSED, o.FAILED) == o.FAILED
    assert o.merge_phases(o.FAILED, o.PASSED) == o.FAILED
    assert o.merge_phases(o.SKIPPED, o.PASSED) == o.SKIPPED
    assert o.merge_phases(o.XFAILED, o.FAILED) == o.FAILED


def test_merge_instances():
    assert o.merge_instances([]) is None
    assert o.merge_instances([o.SKIPPED, o.PASSED]) == o.PASSED
    assert o.merge_instances([o.PASSED, o.FAILED, o.SKIPPED]) == o.FAILED
    assert o.merge_instances([o.SKIPPED, o.SKIPPED]) == o.SKIPPED
