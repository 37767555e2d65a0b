"""interop-movement and carrier-storage: many threads each run many moves whose caller
hooks (a MoveOperation's _copy, a provider's prepared callable and its Future) block,
start nested moves, raise an Exception or a bare BaseException, return garbage or try to
release the move's own carriers. Every move reaches exactly one terminal outcome, the one
its hook's behaviour dictates, every carrier ends unpinned, and the extra worker threads
the blocked hooks needed end afterwards."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import Future

import pytest

import strideweave as sw
from conformance.interop_movement.movement import TERMINAL_TIMEOUT, HookError, wait_until
from strideweave import _core
from strideweave.carriers import CarrierDefinition, TransferProvider, TransferRoute, define_carrier
from strideweave.carriers.move import registered_move_operation

TERMINAL = "interop-movement/one-asynchronous-move-publishes-at-one-terminal-boundary"
AWAIT = "interop-movement/await-results-share-one-completion-contract"
HOOKS = "carrier-storage/a-callers-hooks-never-starve-the-workers"
SHIELD = (
    "carrier-storage/a-move-shields-its-carriers-from-the-hooks-it-runs-and-checks-what-they-return"
)

THREADS = 6
MOVES_PER_THREAD = 25
NEST_DEPTH = 2

# What a hook does; the move's first value selects it (behaviour index * 1000 + ...).
BEHAVIOURS = ["copy", "block", "nest", "raise", "abort", "garbage", "hostile"]


class Abort(BaseException):
    """A hook's bare BaseException, as KeyboardInterrupt is."""


def expected_failure(behaviour: str) -> type[BaseException] | None:
    return {"raise": HookError, "abort": Abort, "garbage": TypeError}.get(behaviour)


class Hooks:
    """The hooks' shared behaviour: ``act`` runs before the span is copied and returns
    what the hook returns; nested moves go through ``route`` again, one level shallower."""

    def __init__(self) -> None:
        self.route: tuple[type, type] | None = None
        self.refusals: list[BaseException] = []
        self.lock = threading.Lock()

    def act(self, tensor: sw.Tensor) -> object:
        code = tensor.carrier.read(tensor.offset)
        behaviour, depth = BEHAVIOURS[code // 1000 % 10], code // 10000
        if behaviour == "block":
            time.sleep(random.uniform(0, 0.003))
        elif behaviour == "nest" and depth < NEST_DEPTH:
            source_class, destination_class = self.route
            inner_code = (depth + 1) * 10000 + BEHAVIOURS.index("nest") * 1000
            inner = source_class(sw.Int32, values=[inner_code, 1, 2])
            moved = sw.move(sw.Tensor(inner, sw.Layout(3)), destination_class(sw.Int32))
            assert moved.tolist() == [inner_code, 1, 2]
        elif behaviour == "raise":
            raise HookError(f"hook {code}")
        elif behaviour == "abort":
            raise Abort(code)
        elif behaviour == "garbage":
            return code
        elif behaviour == "hostile":
            try:
                tensor.carrier.release()
            except RuntimeError as refusal:
                with self.lock:
                    self.refusals.append(refusal)
        return None


def copy_span(tensor: sw.Tensor, destination: sw.Carrier, element_count: int) -> None:
    destination.write_range(0, tensor.carrier.read_range(tensor.offset, element_count))


def python_copy_route(hooks: Hooks):
    class Source(sw.CPU):
        pass

    class Destination(sw.Generic):
        pass

    class Copy(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            returned = hooks.act(tensor)
            copy_span(tensor, destination, element_count)
            return returned

    return Source, Destination, registered_move_operation(Source, Destination, Copy)


def provider_route(hooks: Hooks):
    """A definition route whose prepared callable acts, then reports through a Future
    a timer thread completes (or fails, for a raising behaviour)."""

    class Source(sw.CPU):
        pass

    class Destination(sw.CPU):
        pass

    class Provider(TransferProvider):
        def prepare(self, request):
            def transfer(output):
                try:
                    returned = hooks.act(request.tensor)
                except HookError as error:
                    future: Future = Future()
                    threading.Timer(0.001, future.set_exception, (error,)).start()
                    return future
                copy_span(request.tensor, output.carrier, request.element_count)
                if returned is not None:
                    return returned
                future = Future()
                threading.Timer(random.uniform(0, 0.002), future.set_result, (None,)).start()
                return future

            return transfer

    define_carrier(
        CarrierDefinition(Source, routes=[TransferRoute(Source, Destination, "h", Provider())])
    )
    return Source, Destination


@pytest.mark.spec(
    f"{TERMINAL}#2", f"{AWAIT}#5", f"{HOOKS}#1", f"{HOOKS}#2", f"{SHIELD}#2", f"{SHIELD}#4"
)
@pytest.mark.parametrize("route_kind", ["python _copy", "provider"])
def test_hostile_hooks_from_many_threads_each_reach_one_outcome(route_kind):
    hooks = Hooks()
    if route_kind == "python _copy":
        source_class, destination_class, registration = python_copy_route(hooks)
    else:
        source_class, destination_class = provider_route(hooks)
        registration = None
    hooks.route = (source_class, destination_class)
    records: list[tuple] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def mover(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for k in range(MOVES_PER_THREAD):
                behaviour = rng.choice(BEHAVIOURS)
                n = rng.randint(1, 16)
                code = BEHAVIOURS.index(behaviour) * 1000 + seed * 50 + k
                values = [code] + [seed * 100 + i for i in range(1, n)]
                source = source_class(sw.Int32, values=values)
                destination = destination_class(sw.Int32)
                handle = sw.move_async(sw.Tensor(source, sw.Layout(n)), destination)
                outcomes: list[object] = []
                for _ in range(rng.choice([0, 1, 2])):  # dropped, waited once or twice
                    try:
                        outcomes.append(handle.wait())
                    except (HookError, Abort, TypeError) as error:
                        outcomes.append(error)
                if len(outcomes) == 2:
                    assert outcomes[0] is outcomes[1]
                failure = expected_failure(behaviour)
                if outcomes:
                    if failure is None:
                        assert isinstance(outcomes[0], sw.Tensor), (behaviour, outcomes[0])
                        assert outcomes[0].tolist() == values
                    else:
                        assert isinstance(outcomes[0], failure), (behaviour, outcomes[0])
                with lock:
                    records.append((source, destination, values, failure))
        except BaseException as error:  # a failed assertion on this thread
            failures.append(error)

    start_threads = _core._testing.live_pool_threads()
    if registration is not None:
        registration.__enter__()
    try:
        threads = [threading.Thread(target=mover, args=(seed,)) for seed in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TERMINAL_TIMEOUT * 4)
            assert not thread.is_alive(), "a mover never finished"
        assert failures == []
        assert len(records) == THREADS * MOVES_PER_THREAD
        for source, destination, values, failure in records:
            # Dropped handles too: each move reaches its outcome and unpins both carriers.
            wait_until(
                lambda s=source, d=destination: s.pinned_by is None and d.pinned_by is None,
                "every move unpins its carriers",
            )
            assert destination.is_mutable()
            if failure is None:
                assert source.is_released
                assert destination.tolist()[: len(values)] == values
            else:
                assert not source.is_released and source.is_mutable()
                assert source.tolist() == values
    finally:
        if registration is not None:
            registration.__exit__(None, None, None)
    # Every hostile release was refused by the move's pin.
    assert all("pinned by move #" in str(refusal) for refusal in hooks.refusals)
    # The extra workers that blocked and nesting hooks needed end once they are idle.
    wait_until(
        lambda: _settled_pool(start_threads),
        "the extra worker threads end",
    )


def _settled_pool(start_threads: int) -> bool:
    """Whether the pool is back to at most its size before the test (an idle surplus
    worker ends when it next looks for work: a move through the pool wakes one)."""
    if _core._testing.live_pool_threads() <= max(start_threads, _core._testing.pool_threads()):
        return True
    sw.move(sw.tensor([0.0]), sw.FileBacked(sw.Float32))
    return False
