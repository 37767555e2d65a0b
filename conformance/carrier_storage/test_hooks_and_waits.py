"""carrier-storage: a caller's hooks never starve the worker threads, and a wait for a
move can be interrupted (docs/threading.md, "Caller hooks on worker threads" and
"Interrupting a wait").

Each scenario runs in a fresh interpreter with one worker thread
(STRIDEWEAVE_NUM_THREADS=1), so that a single hook holding the only worker is
enough to show starvation, and with a subprocess timeout, so that a regression
fails the test instead of hanging the suite."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

HOOKS = "carrier-storage/a-callers-hooks-never-starve-the-workers"
INTERRUPT = "carrier-storage/a-wait-for-a-move-can-be-interrupted"
PENDING = "interrupt-a-wait-on-a-pending-move"

ONE_WORKER = {"STRIDEWEAVE_NUM_THREADS": "1"}


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_python(*parts: str, timeout: float = 60, sigint_ignored: bool = False) -> list[str]:
    """Runs the code ``parts`` (each dedented) in a fresh interpreter with one worker
    thread; returns its stdout lines. A hang fails the test with the lines printed so
    far (unbuffered), as does a non-zero exit. ``sigint_ignored`` starts the interpreter
    with SIGINT ignored, as a command started with '&' by a non-interactive shell is."""
    try:
        result = subprocess.run(
            [sys.executable, "-u", "-c", "\n".join(textwrap.dedent(part) for part in parts)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **ONE_WORKER},
            preexec_fn=ignore_sigint if sigint_ignored else None,
        )
    except subprocess.TimeoutExpired as hung:
        pytest.fail(
            f"timed out after {timeout} s; stdout so far {hung.stdout!r}, stderr {hung.stderr!r}"
        )
    assert result.returncode == 0, (result.returncode, result.stderr)
    return result.stdout.splitlines()


PRELUDE = """
    import threading
    import strideweave as sw
    from strideweave import _core
    from strideweave.carriers.move import register_move_operation

    assert _core._testing.pool_threads() == 1

    class Source(sw.CPU):
        pass

    def source(values):
        carrier = Source(sw.Int32, values=values)
        return sw.Tensor(carrier, sw.Layout((len(values),), (1,)), 0)

    def copy_span(tensor, destination, element_count):
        destination.write_range(0, tensor.carrier.read_range(tensor.offset, element_count))
"""


@pytest.mark.spec(f"{HOOKS}/move-from-inside-a-hook-nested", f"{HOOKS}#1")
def test_a_hook_moves_and_waits_16_levels_deep_with_one_worker():
    lines = run_python(
        PRELUDE,
        """
        DEPTH = 16
        levels = []

        class Nesting(sw.MoveOperation):
            def _copy(self, tensor, destination, output, element_count):
                level = len(levels)
                levels.append(threading.get_ident())
                if level < DEPTH:
                    inner = sw.move(source([level, level + 1]), sw.CPU(sw.Int32))
                    assert inner.tolist() == [level, level + 1], inner.tolist()
                copy_span(tensor, destination, element_count)

        register_move_operation(Source, sw.CPU, Nesting)
        out = sw.move(source([7, 8, 9]), sw.CPU(sw.Int32))
        print(len(levels), len(set(levels)), out.tolist())
        """,
    )
    levels, threads, values = lines[0].split(" ", 2)
    assert (levels, values) == ("17", "[7, 8, 9]"), lines
    # Each level waited on its own thread: 17 hooks were in progress at once.
    assert threads == "17", lines


@pytest.mark.spec(f"{HOOKS}/block-in-a-hook-while-other-moves-run", f"{HOOKS}#2")
def test_hooks_blocked_on_every_worker_never_stop_a_builtin_move():
    lines = run_python(
        PRELUDE,
        """
        import time
        BLOCKED = 3
        released = threading.Event()
        entered = threading.Semaphore(0)

        class Blocking(sw.MoveOperation):
            def _copy(self, tensor, destination, output, element_count):
                entered.release()
                assert released.wait(60), "never released"
                copy_span(tensor, destination, element_count)

        register_move_operation(Source, sw.CPU, Blocking)
        handles = [sw.move_async(source([i, -i]), sw.CPU(sw.Int32)) for i in range(BLOCKED)]
        # All of them block at once: one worker, and an extra one per blocked hook.
        print("all entered", all(entered.acquire(timeout=60) for _ in range(BLOCKED)))
        moved = sw.move(sw.tensor([1.0, 2.0, 3.0]), sw.FileBacked(sw.Float32))
        print("file move", moved.tolist(), "while blocked", not any(h.done for h in handles))
        released.set()
        print("blocked moves", [h.wait().tolist() for h in handles])
        # The extra workers end once the hooks returned (they look when woken).
        deadline = time.monotonic() + 30
        while _core._testing.live_pool_threads() > 1 and time.monotonic() < deadline:
            sw.move(sw.tensor([0.0]), sw.FileBacked(sw.Float32))
            time.sleep(0.01)
        print("workers left", _core._testing.live_pool_threads())
        """,
    )
    assert lines == [
        "all entered True",
        "file move [1.0, 2.0, 3.0] while blocked True",
        "blocked moves [[0, 0], [1, -1], [2, -2]]",
        "workers left 1",
    ], lines


PENDING_PROVIDER = """
    import os
    import signal
    import threading
    import time
    from concurrent.futures import Future
    import strideweave as sw
    from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute
    from strideweave.carriers import define_carrier

    # CPython raises KeyboardInterrupt for SIGINT only when it started with SIGINT at
    # SIG_DFL: a test run started with '&' by a non-interactive shell (a script, a job
    # runner) passes it on ignored, and the interrupt would never come.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    class Source(sw.CPU):
        pass

    class Destination(sw.CPU):
        pass

    pending = []

    class Provider(TransferProvider):
        def prepare(self, request):
            def transfer(output):
                span = request.source.read_range(request.offset, request.element_count)
                output.carrier.write_range(0, span)
                future = Future()
                pending.append(future)
                return future

            return transfer

    define_carrier(
        CarrierDefinition(Source, routes=[TransferRoute(Source, Destination, "s->d", Provider())])
    )

    def source(values):
        return sw.Tensor(Source(sw.Int32, values=values), sw.Layout((len(values),), (1,)), 0)

    def interrupt_soon():
        sent = []

        def send():
            # After the transfer returned its Future: on a loaded machine the worker
            # may not have run it within the timer's 0.2 s.
            while not pending:
                time.sleep(0.01)
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

        threading.Timer(0.2, send).start()
        return sent
"""


@pytest.mark.spec(f"{INTERRUPT}/{PENDING}", f"{INTERRUPT}#1", f"{INTERRUPT}#2")
def test_ctrl_c_interrupts_a_wait_and_the_handle_stays_valid():
    lines = run_python(
        PENDING_PROVIDER,
        """
        handle = sw.move_async(source([4, 5, 6]), Destination(sw.Int32))
        sent = interrupt_soon()
        try:
            handle.wait()
            print("wait returned")
        except KeyboardInterrupt:
            latency = time.monotonic() - sent[0]
            print("interrupted while pending", not pending[0].done(), "done", handle.done)
            print(f"latency {latency:.4f}", file=__import__("sys").stderr)
        pending[0].set_result(None)
        print("then", handle.wait().tolist(), handle.wait().tolist())
        """,
    )
    assert lines == ["interrupted while pending True done False", "then [4, 5, 6] [4, 5, 6]"]


@pytest.mark.spec(f"{INTERRUPT}#1", f"{INTERRUPT}#2")
def test_ctrl_c_interrupts_a_wait_in_an_interpreter_started_with_sigint_ignored():
    # A run started in the background passes SIGINT ignored to the interpreters the
    # tests start; the scenarios above must not depend on how the run was started.
    lines = run_python(
        PENDING_PROVIDER,
        """
        handle = sw.move_async(source([4, 5, 6]), Destination(sw.Int32))
        interrupt_soon()
        try:
            handle.wait()
            print("wait returned")
        except KeyboardInterrupt:
            print("interrupted while pending", not pending[0].done())
        pending[0].set_result(None)
        print("then", handle.wait().tolist())
        """,
        timeout=20,
        sigint_ignored=True,
    )
    assert lines == ["interrupted while pending True", "then [4, 5, 6]"]


@pytest.mark.spec(f"{INTERRUPT}/{PENDING}", f"{INTERRUPT}#1", f"{INTERRUPT}#2")
def test_ctrl_c_interrupts_move_and_the_move_goes_on():
    lines = run_python(
        PENDING_PROVIDER,
        """
        destination = Destination(sw.Int32)
        interrupt_soon()
        try:
            sw.move(source([1, 2]), destination)
            print("move returned")
        except KeyboardInterrupt:
            print("interrupted while pending", not pending[0].done())
        pending[0].set_result(None)
        # The move was not cancelled: it publishes into the destination.
        deadline = time.monotonic() + 30
        while destination.pinned_by is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        print("destination", destination.tolist())
        """,
    )
    assert lines == ["interrupted while pending True", "destination [1, 2]"]


@pytest.mark.spec(f"{INTERRUPT}#1")
def test_a_signal_handlers_own_exception_propagates_from_the_wait():
    lines = run_python(
        PENDING_PROVIDER,
        """
        class Stop(Exception):
            pass

        def handler(signum, frame):
            raise Stop(signum)

        signal.signal(signal.SIGINT, handler)
        handle = sw.move_async(source([3]), Destination(sw.Int32))
        interrupt_soon()
        try:
            handle.wait()
        except Stop as stop:
            print("raised", type(stop).__name__, stop.args == (signal.SIGINT,))
        pending[0].set_result(None)
        print("then", handle.wait().tolist())
        """,
    )
    assert lines == ["raised Stop True", "then [3]"]
