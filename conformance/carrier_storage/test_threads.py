"""carrier-storage: the GIL around carrier calls, Python under carrier locks, and
worker threads calling into Python while the interpreter exits (docs/threading.md)."""

import os
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial

import numpy as np
import pytest

import strideweave as sw
from strideweave import _core

GIL = "carrier-storage/carriers-cooperate-with-the-gil-and-interpreter-exit"

N = 1 << 23  # 32 MiB of Float32: a copy long enough for a waiting thread to run


def other_thread_ran_during(prepare, attempts=10):
    """Whether another Python thread ran while a call ran, in any of ``attempts``
    calls, each made by ``prepare()`` just before it runs.

    A spinner thread counts and yields the GIL (``time.sleep(0)``) on every round;
    with a switch interval far longer than the test, the calling thread only gives
    the GIL away when something it calls releases it. So the count can change across
    a call only if the call released the GIL: no timing threshold is involved, and a
    call that keeps the GIL never passes. (A released GIL can still go unnoticed when
    the OS does not schedule the spinner during a short call: hence the attempts.)
    """
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    spinner = threading.Thread(target=spin)
    interval = sys.getswitchinterval()
    spinner.start()
    try:
        while count[0] == 0:
            time.sleep(0.001)
        sys.setswitchinterval(1000.0)
        time.sleep(0.02)  # the spinner's next waits for the GIL use the long interval
        for _ in range(attempts):
            call = prepare()
            before = count[0]
            call()
            if count[0] != before:
                return True
        return False
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        spinner.join()


def test_the_measurement_sees_a_call_that_keeps_the_gil():
    # The control: a long call that never releases the GIL.
    assert not other_thread_ran_during(lambda: partial(bytes, 1 << 26))


def blocking_calls():
    """name -> prepare(), which returns the call, for every call the spec says releases
    the GIL. List-producing calls are shorter: their lists are built with the GIL."""
    values = np.arange(N, dtype=np.float32)
    short = values[: 1 << 18].tolist()

    def written():
        c = sw.CPU(sw.Float32, N)
        c.write_range(0, values)
        return c

    def transposed():
        return sw.Tensor(written(), sw.Layout((1024, N // 1024), (N // 1024, 1)))

    return {
        "read_range out": lambda: partial(written().read_range, 0, N, out=np.empty_like(values)),
        "write_range buffer": lambda: partial(sw.CPU(sw.Float32, N).write_range, 0, values),
        "write_range list": lambda: partial(sw.CPU(sw.Float32, N).write_range, 0, short),
        "lease write_range": lambda: partial(
            sw.CPU(sw.Float32, N)._pin("a test move").write_range, 0, values
        ),
        "read_range list": lambda: partial(written().read_range, 0, N),
        "Carrier.tolist": lambda: written().tolist,
        "Generic tolist": lambda: sw.Generic(sw.Float32, values=short).tolist,
        "Tensor.tolist": lambda: transposed().tolist,
        "tensor(t)": lambda: partial(sw.tensor, transposed()),
        "zeros": lambda: partial(sw.zeros, (N,)),
        "full": lambda: partial(sw.full, (N,), 2.0),
        "arange": lambda: partial(sw.arange, N, dtype=sw.Float32),
        "CPU(dtype, n)": lambda: partial(sw.CPU, sw.Float32, N),
        "allocate": lambda: partial(sw.CPU(sw.Float32).allocate, N),
        "release": lambda: written().release,
    }


@pytest.mark.spec(f"{GIL}/let-other-threads-run-during-a-copy", f"{GIL}#2")
@pytest.mark.parametrize("name", list(blocking_calls()))
def test_let_other_threads_run_during_a_copy(name):
    # A released 32 MiB buffer goes to the cache of freed buffers at once; with the cache
    # off, release unmaps it: the slow work during which other threads must run.
    budget = _core._testing.set_host_cache_budget(0) if name == "release" else None
    try:
        assert other_thread_ran_during(blocking_calls()[name]), name
    finally:
        if budget is not None:
            _core._testing.set_host_cache_budget(budget)


def gil_releases_of(call):
    """How many times ``call()`` released the GIL around a core call (counted by the
    binding on this thread)."""
    before = _core._testing.gil_releases()
    call()
    return _core._testing.gil_releases() - before


def cpu_tensor(n, cls=sw.CPU):
    carrier = cls(sw.Float32, n)
    carrier.write_range(0, np.arange(n, dtype=np.float32))
    return sw.Tensor(carrier, sw.Layout(n))


SMALL_MOVE = (64 << 10) // 4  # Float32 elements in 64 KiB: the largest move that keeps the GIL


@pytest.mark.spec(f"{GIL}#5")
def test_small_cpu_moves_and_empty_carriers_keep_the_gil():
    # Moves of at most 64 KiB between exact CPU carriers, synchronous and asynchronous,
    # into empty and allocated destinations, and the empty constructors.
    sources = [cpu_tensor(n) for n in (1, 8, SMALL_MOVE)]
    full = sw.CPU(sw.Float32, SMALL_MOVE)
    kept = {
        "move into an empty CPU": lambda: sw.move(sources[0], sw.CPU(sw.Float32)),
        "move_async": lambda: sw.move_async(sources[1], sw.CPU(sw.Float32)).wait(),
        "move of 64 KiB": lambda: sw.move(sources[2], full),
        "CPU(dtype)": lambda: sw.CPU(sw.Float32),
        "CPU(dtype, 0)": lambda: sw.CPU(sw.Float32, 0),
        "Generic(dtype)": lambda: sw.Generic(sw.Float32),
        "Metal(dtype)": lambda: sw.Metal(sw.Float32),
    }
    for name, call in kept.items():
        assert gil_releases_of(call) == 0, name
    assert np.array_equal(
        np.from_dlpack(sw.Tensor(full, sw.Layout(SMALL_MOVE))),
        np.arange(SMALL_MOVE, dtype=np.float32),
    )


@pytest.mark.spec(f"{GIL}#5", f"{GIL}#2")
def test_other_moves_and_allocating_constructors_release_the_gil():
    class Subclass(sw.CPU):
        pass

    released = {
        "move of 64 KiB + 4 bytes": lambda: sw.move(cpu_tensor(SMALL_MOVE + 1), sw.CPU(sw.Float32)),
        "move from a CPU subclass": lambda: sw.move(cpu_tensor(8, Subclass), sw.CPU(sw.Float32)),
        "move into a CPU subclass": lambda: sw.move(cpu_tensor(8), Subclass(sw.Float32)),
        "move to FileBacked": lambda: sw.move(cpu_tensor(8), sw.FileBacked(sw.Float32)),
        "move to Metal": lambda: sw.move(cpu_tensor(8), sw.Metal(sw.Float32)),
        "CPU(dtype, 1)": lambda: sw.CPU(sw.Float32, 1),
        "CPU(dtype, values=...)": lambda: sw.CPU(sw.Float32, values=[1.0]),
        "FileBacked(dtype)": lambda: sw.FileBacked(sw.Float32),
    }
    for name, call in released.items():
        assert gil_releases_of(call) >= 1, name


@pytest.mark.spec(f"{GIL}#5", f"{GIL}/let-other-threads-run-during-a-copy")
def test_a_large_move_lets_other_threads_run():
    assert other_thread_ran_during(lambda: partial(sw.move, cpu_tensor(N), sw.CPU(sw.Float32)))


@pytest.mark.spec(f"{GIL}/refuse-a-call-into-python-under-a-carrier-lock", f"{GIL}#1")
@pytest.mark.parametrize("cls", [sw.CPU, sw.Generic])
def test_refuse_a_call_into_python_under_a_carrier_lock(cls):
    c = cls(sw.Float32, 3)
    called = []
    with pytest.raises(RuntimeError) as raised:
        _core._testing.call_under_carrier_lock(c, lambda: called.append(1))
    message = str(raised.value)
    assert "call_under_carrier_lock" in message and "core lock" in message, message
    assert called == []
    # The lock was released on the way out: the carrier is usable at once.
    c.write(0, 1.5)
    assert c.read_range(0, 3) == [1.5, 0.0, 0.0] and c.version == 1


@pytest.mark.spec(f"{GIL}/refuse-a-call-into-python-under-a-carrier-lock")
def test_python_subclass_hooks_run_without_a_carrier_lock():
    # The trampolines take the GIL through the same helper; called normally, no
    # carrier lock is held and they run.
    class Exported(sw.CPU):
        def dlpack_info(self):
            return {"pointer": self.pointer(), "device_type": 1, "device_id": 0}

    c = Exported(sw.Float32, 2)
    assert c.dlpack_info()["pointer"] == c.pointer()
    assert type(c.new_like()) is Exported


def run_python(code, env=None, timeout=30):
    """Runs ``code`` in a fresh interpreter; a hang fails the test (timeout)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def assert_clean_exit(result):
    assert result.returncode == 0, (result.returncode, result.stderr)
    for crash in ("Fatal Python error", "terminate called", "Segmentation fault", "Aborted"):
        assert crash not in result.stderr, result.stderr


EXIT_WHILE_SUBMITTED = """
import sys, time
from strideweave import _core
delay = float(sys.argv[1]) if len(sys.argv) > 1 else {delay}
hits = []
def hit():
    hits.append(1)
def sleeper():
    time.sleep(0.005)  # a call that gives the GIL away inside Python
    hits.append(2)
for i in range(8):
    _core._testing.submit_python(hit, delay + i * 0.0005)
    _core._testing.submit_python(sleeper, delay + i * 0.0005)
"""


@pytest.mark.spec(f"{GIL}/exit-while-a-worker-is-about-to-call-into-python", f"{GIL}#3")
@pytest.mark.parametrize("delay", [0.0, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05])
def test_exit_while_a_worker_is_about_to_call_into_python(delay):
    for _ in range(4):
        started = time.monotonic()
        result = run_python(EXIT_WHILE_SUBMITTED.format(delay=delay))
        assert_clean_exit(result)
        # Prompt: far below the subprocess timeout (the exit hook waits at most 1 s).
        assert time.monotonic() - started < 15


@pytest.mark.spec(f"{GIL}/exit-while-a-worker-is-about-to-call-into-python", f"{GIL}#3")
def test_a_call_after_the_exit_hook_is_skipped_and_reported():
    # atexit runs its functions last registered first: this one, registered before
    # strideweave is imported, runs after the module's exit hook.
    result = run_python(
        """
        import atexit
        def after_the_hook():
            from strideweave import _core
            _core._testing.submit_python(lambda: print("ran after exit"), 0.0)
            _core._testing.wait_pool_idle()
            calls = _core._testing.python_calls()
            print("skipped", calls["skipped"], "ran", calls["ran"])
        atexit.register(after_the_hook)
        from strideweave import _core
        _core._testing.submit_python(lambda: print("ran before exit"), 0.0)
        _core._testing.wait_pool_idle()
        """
    )
    assert_clean_exit(result)
    assert result.stdout.splitlines() == ["ran before exit", "skipped 1 ran 1"], result.stdout


@pytest.mark.spec(f"{GIL}/exit-while-a-worker-is-about-to-call-into-python", f"{GIL}#3")
def test_a_worker_releasing_the_gil_past_the_grace_period_does_not_crash_the_exit():
    # A worker's call into Python outlives the exit hook's 1 s grace, releasing and
    # retaking the GIL around each copy: once the grace has ended it must not take the
    # GIL again (CPython would end the thread with pthread_exit inside the wait, and the
    # unwinding through the library's frames would abort the process).
    result = run_python(
        """
        import time
        import numpy as np
        import strideweave as sw
        from strideweave import _core
        values = np.zeros(1 << 24, dtype=np.int32)
        carrier = sw.CPU(sw.Int32, 1 << 24)
        def copies():
            time.sleep(0.5)
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                carrier.write_range(0, values)  # the GIL is released for the copy
        _core._testing.submit_python(copies, 0.0)
        time.sleep(0.1)
        print("exiting")
        """
    )
    assert_clean_exit(result)
    assert result.stdout.splitlines() == ["exiting"]


@pytest.mark.spec(f"{GIL}#4")
def test_the_worker_count_follows_the_environment():
    code = """
        from strideweave import _core
        print(_core._testing.pool_threads())
        _core._testing.submit_python(lambda: None)
        _core._testing.wait_pool_idle()
        print(_core._testing.pool_threads())
    """
    result = run_python(code, env={"STRIDEWEAVE_NUM_THREADS": "3"})
    assert_clean_exit(result)
    assert result.stdout.split() == ["3", "3"]
    unset = {k: v for k, v in os.environ.items() if k != "STRIDEWEAVE_NUM_THREADS"}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=30,
        env=unset,
    )
    assert_clean_exit(result)
    first, second = result.stdout.split()
    assert first == second and 1 <= int(first) <= 8
    for bad in ("", "0", "many", "2000"):
        result = run_python(code, env={"STRIDEWEAVE_NUM_THREADS": bad})
        assert result.returncode == 1
        assert "ValueError" in result.stderr and f"STRIDEWEAVE_NUM_THREADS='{bad}'" in result.stderr
