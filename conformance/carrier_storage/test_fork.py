"""carrier-storage: a process forked while StrideWeave's threads are busy never waits on
a thread it does not have (docs/threading.md, "fork()").

Each scenario runs in a fresh interpreter that forks; the child reports what it saw on
a pipe and exits, and the parent reaps it with a deadline. A child stuck on a lock of the
parent's threads fails the scenario (the child is killed at the deadline) instead of
hanging the suite; so does the interpreter itself, with the subprocess timeout."""

import os
import subprocess
import sys
import textwrap

import pytest

FORK = "carrier-storage/a-forked-child-never-waits-on-its-parents-threads"

PRELUDE = """
    import os
    import signal
    import sys
    import threading
    import time
    import strideweave as sw
    from strideweave.carriers.move import register_move_operation

    CHILD_DEADLINE = 20.0

    def in_child(body):
        '''Forks; the child runs body() and writes its lines to a pipe. Returns those
        lines, or ["stuck"] when the child did not finish before the deadline.'''
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            try:
                lines = body()
            except BaseException as error:
                lines = [f"raised {type(error).__name__}: {error}"]
            os.write(write_end, "\\n".join(lines).encode())
            os._exit(0)
        os.close(write_end)
        deadline = time.monotonic() + CHILD_DEADLINE
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                with os.fdopen(read_end) as pipe:
                    return pipe.read().splitlines()
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read_end)
        return ["stuck"]
"""


def run_python(*parts: str, timeout: float = 120) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", "\n".join(textwrap.dedent(part) for part in parts)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "STRIDEWEAVE_NUM_THREADS": "2"},
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    return result.stdout.splitlines()


@pytest.mark.spec(f"{FORK}/fork-while-a-move-is-pending", f"{FORK}#2", f"{FORK}#3")
def test_a_move_pending_at_the_fork_fails_in_the_child_and_completes_in_the_parent():
    lines = run_python(
        PRELUDE,
        """
        entered, released = threading.Event(), threading.Event()

        class Source(sw.CPU):
            pass

        class Held(sw.MoveOperation):
            def _copy(self, tensor, destination, output, element_count):
                entered.set()
                released.wait(60)
                destination.write_range(0, tensor.carrier.read_range(tensor.offset, element_count))

        register_move_operation(Source, sw.CPU, Held)
        source = Source(sw.Int32, values=[1, 2, 3])
        destination = sw.CPU(sw.Int32)
        handle = sw.move_async(sw.Tensor(source, sw.Layout(3)), destination)
        assert entered.wait(60)

        def child():
            out = []
            try:
                handle.wait()
                out.append("wait returned")
            except RuntimeError as error:
                out.append("wait: RuntimeError " + ("forked" in str(error)) * "naming the fork")
            out.append(f"source {source.tolist()} pinned {source.pinned_by}")
            out.append(f"destination pinned {destination.pinned_by}")
            source.write(0, 7)  # the source is the child's own again
            moved = sw.move(sw.Tensor(source, sw.Layout(3)), sw.FileBacked(sw.Int32))
            out.append(f"new move {moved.tolist()}")
            return out

        for line in in_child(child):
            print("child", line)
        released.set()
        print("parent", handle.wait().tolist(), source.is_released)
        """,
    )
    assert lines == [
        "child wait: RuntimeError naming the fork",
        "child source [1, 2, 3] pinned None",
        "child destination pinned None",
        "child new move [7, 2, 3]",
        "parent [1, 2, 3] True",
    ], lines


@pytest.mark.spec(f"{FORK}/fork-while-another-thread-holds-a-carriers-lock", f"{FORK}#1")
def test_a_carrier_another_thread_was_copying_is_usable_in_the_child():
    # A thread copies a 32 MiB range out of one carrier over and over, holding its lock
    # most of the time; every fork must wait for the copy, so every child can read it.
    lines = run_python(
        PRELUDE,
        """
        n = 1 << 23
        carrier = sw.CPU(sw.Float32, values=[0.0] * 16)
        big = sw.zeros((n,)).carrier
        stop = threading.Event()

        def copier():
            while not stop.is_set():
                big.read_range(0, n)

        thread = threading.Thread(target=copier)
        thread.start()
        outcomes = set()
        for _ in range(12):
            time.sleep(0.003)
            outcomes.update(in_child(lambda: [f"read {big.read_range(n - 2, 2)}"]))
        stop.set()
        thread.join()
        print(sorted(outcomes))
        """,
    )
    assert lines == ["['read [0.0, 0.0]']"], lines


@pytest.mark.spec(f"{FORK}/fork-while-the-device-is-busy", f"{FORK}#4")
def test_the_parents_metal_device_fails_clearly_in_the_child():
    lines = run_python(
        PRELUDE,
        """
        from strideweave import _core
        _core._testing.set_metal_latency(300_000)  # every command buffer 0.3 s
        metal = sw.Metal(sw.Float32, values=[1.0, 2.0])
        metal.write_range(0, [3.0, 4.0])
        pending = sw.move_async(sw.tensor([5.0, 6.0]), sw.Metal(sw.Float32))

        def child():
            out = []
            for name, call in [
                ("read", lambda: metal.tolist()),
                ("new carrier", lambda: sw.Metal(sw.Float32, values=[1.0])),
                ("move", lambda: pending.wait()),
            ]:
                try:
                    call()
                    out.append(f"{name} worked")
                except RuntimeError as error:
                    out.append(f"{name}: RuntimeError " + ("fork" in str(error)) * "naming fork")
            return out

        for line in in_child(child):
            print("child", line)
        print("parent", metal.tolist(), pending.wait().tolist())
        _core._testing.set_metal_latency(0)
        """,
    )
    assert lines[-1] == "parent [3.0, 4.0] [5.0, 6.0]", lines
    child = lines[:-1]
    assert "stuck" not in " ".join(child), lines
    # Work the device finished before the fork reads normally; anything else fails
    # with RuntimeError naming the fork.
    assert child[0] in ("child read worked", "child read: RuntimeError naming fork"), lines
    assert child[1] == "child new carrier: RuntimeError naming fork", lines
    assert child[2] in ("child move worked", "child move: RuntimeError naming fork"), lines
