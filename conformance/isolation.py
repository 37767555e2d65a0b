"""A pytest plugin: ``@pytest.mark.isolated`` tests run in a forked child process.

A crash-prone test (DLPack lifetime, fuzzing) that segfaults or aborts takes only its
child down: the parent reports that test as failed, naming the signal, and the run
goes on. The child runs the whole protocol (setup, call, teardown) with no later item,
so fixtures it sets up are torn down in the child; its reports travel back through a
pipe in pytest's serializable form, so every reporter and the conformance harness see
them as if the test had run in the parent. Where ``os.fork`` does not exist the marker
has no effect.

Loaded from ``pyproject.toml`` (``-p conformance.isolation``).
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from _pytest.runner import runtestprotocol

MARKER = "isolated"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: run the test in a forked child process, so a crash fails only that test",
    )


def _run_child(item: pytest.Item, write_fd: int) -> None:
    """Runs ``item`` and writes its serialized reports to ``write_fd``; never returns."""
    status = 0
    try:
        reports = runtestprotocol(item, log=False, nextitem=None)
        payload = [
            item.config.hook.pytest_report_to_serializable(config=item.config, report=r)
            for r in reports
        ]
        with os.fdopen(write_fd, "w") as pipe:
            json.dump(payload, pipe)
    except BaseException:  # the parent reports a child that wrote nothing
        status = 1
    finally:
        os._exit(status)


def _crash_report(item: pytest.Item, status: int, duration: float) -> pytest.TestReport:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        why = f"crashed with signal {signal.Signals(number).name} ({number})"
    else:
        why = f"exited with status {os.WEXITSTATUS(status)} before reporting"
    return pytest.TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords=dict.fromkeys(item.keywords, 1),
        outcome="failed",
        longrepr=f"isolated test {item.nodeid} {why}",
        when="call",
        sections=[],
        duration=duration,
    )


def _run_forked(item: pytest.Item) -> list[pytest.TestReport]:
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _run_child(item, write_fd)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    duration = time.monotonic() - started
    if not data:
        return [_crash_report(item, status, duration)]
    return [
        item.config.hook.pytest_report_from_serializable(config=item.config, data=entry)
        for entry in json.loads(data)
    ]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if item.get_closest_marker(MARKER) is None or not hasattr(os, "fork"):
        return None
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in _run_forked(item):
        ihook.pytest_runtest_logreport(report=report)
    # The child tore down its own fixtures; the parent drops the collectors of
    # earlier items that the next item does not share.
    item.session._setupstate.teardown_exact(nextitem)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
