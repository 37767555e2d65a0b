"""The ``isolated`` marker (conformance/isolation.py): a crash fails only its own test."""

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

CRASHING_MODULE = """
import ctypes

import pytest


@pytest.fixture(scope="module")
def resource():
    return [1]


@pytest.mark.isolated
def test_segfaults(resource):
    ctypes.string_at(0)


@pytest.mark.isolated
def test_fails_in_the_child(resource):
    print("child output")
    assert resource == [2]


@pytest.mark.isolated
def test_passes_in_the_child(resource):
    assert resource == [1]


def test_runs_after_the_crash(resource):
    assert resource == [1]
"""


def test_a_segfault_is_that_tests_failure(pytester: pytest.Pytester, monkeypatch):
    """The segfaulting test fails naming SIGSEGV; the other tests report their own outcomes."""
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    pytester.makepyfile(test_crashing=CRASHING_MODULE)
    result = pytester.runpytest_subprocess(
        "-p", "conformance.isolation", "-p", "no:cacheprovider", "-v"
    )
    result.assert_outcomes(passed=2, failed=2)
    output = result.stdout.str()
    # AddressSanitizer (tox -e sanitize) catches the SEGV itself and exits with status 1.
    assert re.search(
        r"isolated test test_crashing.py::test_segfaults "
        r"(crashed with signal SIGSEGV|exited with status 1 before reporting)",
        output,
    )
    assert "test_crashing.py::test_segfaults FAILED" in output
    assert "assert [1] == [2]" in output and "child output" in output
    assert "test_crashing.py::test_passes_in_the_child PASSED" in output
    assert "test_crashing.py::test_runs_after_the_crash PASSED" in output
