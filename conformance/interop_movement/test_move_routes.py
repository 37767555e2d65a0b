"""interop-movement: definition-owned routes (CarrierDefinition, TransferRoute,
TransferProvider, define_carrier) and how a move resolves the route of its exact pair.

Every test defines fresh carrier classes: a definition is permanent for its class (sealing
is final), so no test can see another's definitions. "Nothing changed" is checked with
``movement.snapshot`` on both carriers, and on the provider's log (no prepare, no run).
"""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

import strideweave as sw
from conformance.interop_movement.movement import TERMINAL_TIMEOUT, copy_span, refused, snapshot
from strideweave.carriers import (
    CarrierDefinition,
    TransferProvider,
    TransferRequest,
    TransferRoute,
    define_carrier,
)
from strideweave.carriers.move import (
    dispatch_move,
    register_move_operation,
    registered_move_operation,
    unregister_move_operation,
)

ROUTES = "interop-movement/move-routes-are-exact-and-definition-owned"
DISPATCH = "interop-movement/move-dispatches-on-the-exact-carrier-class-pair"
REGISTRY = "interop-movement/move-registration-is-explicit-validated-and-process-global"
EAGER = "interop-movement/move-submission-is-eager-but-does-not-force-host-synchronization"
LIFETIME = "interop-movement/pending-movement-preserves-lifetime-through-completion"


class SpanProvider(TransferProvider):
    """Copies the source's physical span into the destination through the public entry
    points; logs every prepare (route id and the request) and every run (the output and
    the thread)."""

    def __init__(self, log: list) -> None:
        super().__init__()
        self.log = log

    def prepare(self, request: TransferRequest):
        self.log.append(("prepare", request.route_id, request))

        def run(output: sw.Tensor) -> None:
            self.log.append(("run", request.route_id, output, threading.get_ident()))
            span = request.source.read_range(request.offset, request.element_count)
            request.destination.write_range(0, span)

        return run


def classes():
    """Fresh classes: Parent and its subclass Tiled as sources; Sink, its subclass SubSink
    and the unrelated Sibling as destinations."""

    class Parent(sw.CPU):
        pass

    class Tiled(Parent):
        pass

    class Sink(sw.CPU):
        pass

    class SubSink(Sink):
        pass

    class Sibling(sw.CPU):
        pass

    return Parent, Tiled, Sink, SubSink, Sibling


def tensor_on(cls: type[sw.Carrier]) -> sw.Tensor:
    """Six coordinates with holes, at offset 1: cosize 11 of 13 slots."""
    carrier = cls(sw.Int32, values=[100 + i for i in range(13)])
    return sw.Tensor(carrier, sw.Layout((2, 3), (2, 4)), 1)


def defined_pair(log: list, *, fallback: bool = False):
    """Parent and Tiled defined with routes of their own (Parent also to SubSink)."""
    parent, tiled, sink, sub_sink, sibling = classes()
    define_carrier(
        CarrierDefinition(
            parent,
            routes=[
                TransferRoute(parent, sink, "parent->sink", SpanProvider(log)),
                TransferRoute(parent, sub_sink, "parent->subsink", SpanProvider(log)),
            ],
        )
    )
    define_carrier(
        CarrierDefinition(
            tiled,
            routes=[
                TransferRoute(tiled, sink, "tiled->sink", SpanProvider(log)),
                TransferRoute(tiled, sibling, "tiled->sibling", SpanProvider(log)),
            ],
            elementwise_fallback=fallback,
        )
    )
    return parent, tiled, sink, sub_sink, sibling


@pytest.mark.spec(
    f"{ROUTES}/resolve-an-exact-custom-route",
    f"{DISPATCH}/select-a-registered-bulk-operation",
    f"{ROUTES}#1",
    f"{ROUTES}#3",
    f"{DISPATCH}#1",
)
def test_resolve_an_exact_custom_route():
    log: list = []
    _, tiled, sink, _, _ = defined_pair(log)
    tensor = tensor_on(tiled)
    expected = tensor.tolist()
    destination = sink(sw.Int32)
    result = sw.move(tensor, destination)
    assert [entry[:2] for entry in log] == [("prepare", "tiled->sink"), ("run", "tiled->sink")]
    request = log[0][2]
    assert request.tensor is tensor
    assert request.source is tensor.carrier
    assert request.destination is destination
    assert request.dtype == sw.Int32
    assert request.layout == tensor.layout
    assert (request.offset, request.element_count) == (1, tensor.layout.cosize)
    assert log[1][2] is not None and log[1][3] != threading.get_ident()  # run on a worker
    assert result.tolist() == expected
    assert result.carrier is destination and result.offset == 0
    assert result.layout == tensor.layout
    assert tensor.carrier.is_released


@pytest.mark.spec(
    f"{ROUTES}/refuse-inherited-transfer-support",
    f"{DISPATCH}/do-not-inherit-a-registration",
    f"{ROUTES}#2",
    f"{ROUTES}#4",
    f"{DISPATCH}#4",
    f"{DISPATCH}#5",
)
def test_refuse_inherited_transfer_support():
    log: list = []
    _, tiled, _, sub_sink, _ = defined_pair(log)
    # Tiled declares no route to SubSink (its parent does, to Sink and SubSink) and does
    # not permit the fallback: refused before any pin, allocation or provider call.
    tensor = tensor_on(tiled)
    destination = sub_sink(sw.Int32)
    for call in (sw.move_async, sw.move):
        with refused(
            NotImplementedError, "Tiled", "SubSink", carriers=(tensor.carrier, destination)
        ):
            call(tensor, destination)
    assert destination.slots == 0
    assert log == []


@pytest.mark.spec(f"{ROUTES}#2", f"{DISPATCH}#5", f"{DISPATCH}#2")
def test_a_subclass_source_does_not_inherit_its_parents_definition():
    log: list = []
    _, tiled, sink, _, _ = defined_pair(log)

    class SubTiled(tiled):
        pass

    # SubTiled has no definition of its own: its first move seals it definition-free and
    # the legacy contract's elementwise fallback serves it, never Tiled's route.
    tensor = tensor_on(SubTiled)
    expected = tensor.tolist()
    assert sw.move(tensor, sink(sw.Int32)).tolist() == expected
    assert log == []
    assert SubTiled.carrier_class.definition_state == "definition-free"
    assert dispatch_move(SubTiled, sink) is sw.ElementwiseMoveOperation


@pytest.mark.spec(f"{DISPATCH}/fall-back-for-an-unregistered-pair", f"{DISPATCH}#3", f"{ROUTES}#4")
def test_fall_back_for_an_unregistered_pair():
    log: list = []
    _, tiled, sink, sub_sink, _ = classes()
    define_carrier(CarrierDefinition(tiled, elementwise_fallback=True))
    define_carrier(CarrierDefinition(sink, elementwise_fallback=True))
    tensor = tensor_on(tiled)
    expected = tensor.tolist()
    # A destination already holding the span, filled with a sentinel: the elementwise
    # fallback writes the addressed slots and leaves the holes (a bulk copy would not).
    destination = sink(sw.Int32, values=[-7] * tensor.layout.cosize)
    result = sw.move(tensor, destination)
    assert result.tolist() == expected
    addressed = {tensor.layout(i) for i in range(tensor.layout.size)}
    holes = [s for s in range(tensor.layout.cosize) if s not in addressed]
    assert holes and all(destination.read(s) == -7 for s in holes)
    assert log == []
    # A definition-free destination permits the fallback (the legacy contract).
    other = tensor_on(tiled)
    assert sw.move(other, sub_sink(sw.Int32)).tolist() == expected


@pytest.mark.spec(f"{ROUTES}#4")
@pytest.mark.parametrize("permits", [(False, True), (True, False), (False, False)])
def test_the_fallback_needs_both_definitions_to_permit_it(permits):
    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, elementwise_fallback=permits[0]))
    define_carrier(CarrierDefinition(sink, elementwise_fallback=permits[1]))
    tensor = tensor_on(tiled)
    destination = sink(sw.Int32)
    with refused(NotImplementedError, "Tiled", "Sink", carriers=(tensor.carrier, destination)):
        sw.move_async(tensor, destination)


@pytest.mark.spec(f"{ROUTES}#5", f"{ROUTES}#1")
def test_a_provider_implements_mechanics_only():
    """The provider cannot release or mutate the source, is not consulted for a request
    the validation table refuses, and the move (not the provider) publishes the result
    and releases the source."""
    attempts: list = []

    class Meddling(TransferProvider):
        def prepare(self, request):
            attempts.append("prepare")

            def run(output):
                for attempt in (request.source.release, lambda: request.source.write(0, 1)):
                    with pytest.raises(RuntimeError, match="pinned by move #"):
                        attempt()
                    attempts.append("refused")
                assert not request.source.is_released
                request.destination.write_range(
                    0, request.source.read_range(request.offset, request.element_count)
                )

            return run

    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "m", Meddling())]))
    tensor = tensor_on(tiled)
    expected = tensor.tolist()
    wrong_dtype = sink(sw.Float32)
    with refused(TypeError, "Float32", carriers=(tensor.carrier, wrong_dtype)):
        sw.move(tensor, wrong_dtype)
    assert attempts == []
    result = sw.move(tensor, sink(sw.Int32))
    assert attempts == ["prepare", "refused", "refused"]
    assert result.tolist() == expected and tensor.carrier.is_released


class ProviderError(Exception):
    """Raised by the providers below."""


@pytest.mark.spec(f"{ROUTES}#1", f"{EAGER}#3")
def test_a_provider_refuses_a_request_before_anything_changes():
    error = ProviderError("offset 1 is not aligned to 4 slots")

    class Aligned(TransferProvider):
        def prepare(self, request):
            if request.offset % 4:
                raise error
            raise AssertionError("not reached")

    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "a", Aligned())]))
    tensor = tensor_on(tiled)
    destination = sink(sw.Int32)
    with refused(ProviderError, "not aligned", carriers=(tensor.carrier, destination)) as info:
        sw.move_async(tensor, destination)
    assert info.value is error
    assert destination.slots == 0


@pytest.mark.spec(f"{ROUTES}#1")
@pytest.mark.parametrize("prepared", [None, 42, "run"])
def test_prepare_must_return_a_callable(prepared):
    class Broken(TransferProvider):
        def prepare(self, request):
            return prepared

    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "b", Broken())]))
    tensor = tensor_on(tiled)
    destination = sink(sw.Int32)
    with refused(TypeError, "route 'b'", "prepare", carriers=(tensor.carrier, destination)):
        sw.move_async(tensor, destination)


def test_a_provider_without_prepare_is_refused():
    _, tiled, sink, _, _ = classes()
    define_carrier(
        CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "n", TransferProvider())])
    )
    tensor = tensor_on(tiled)
    destination = sink(sw.Int32)
    with refused(NotImplementedError, "prepare", carriers=(tensor.carrier, destination)):
        sw.move_async(tensor, destination)


@pytest.mark.spec(f"{ROUTES}#1", f"{LIFETIME}#2", f"{LIFETIME}#5")
def test_an_asynchronous_provider_completes_later_from_another_thread():
    release = threading.Event()
    futures: list[concurrent.futures.Future] = []

    class Deferred(TransferProvider):
        """Fills the destination on the worker running it (the thread the move admits),
        then reports completion later from a thread of its own, as a provider waiting for
        a device event or an I/O completion does."""

        def prepare(self, request):
            def run(output):
                span = request.source.read_range(request.offset, request.element_count)
                request.destination.write_range(0, span)
                future: concurrent.futures.Future = concurrent.futures.Future()
                futures.append(future)

                def later():
                    release.wait(TERMINAL_TIMEOUT)
                    future.set_result(None)

                threading.Thread(target=later, daemon=True).start()
                return future

            return run

    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "d", Deferred())]))
    tensor = tensor_on(tiled)
    expected = tensor.tolist()
    destination = sink(sw.Int32)
    handle = sw.move_async(tensor, destination)
    assert not handle.done
    assert tensor.carrier.pinned_by is not None
    with pytest.raises(RuntimeError, match="pinned by"):
        tensor.carrier.release()
    release.set()
    result = handle.wait()
    assert handle.done and result.tolist() == expected
    assert tensor.carrier.is_released and destination.pinned_by is None
    assert futures[0].done()


@pytest.mark.spec(f"{ROUTES}#1", f"{LIFETIME}#5")
def test_an_asynchronous_failure_is_the_terminal_failure():
    error = ProviderError("device lost")

    class Failing(TransferProvider):
        def prepare(self, request):
            def run(output):
                future: concurrent.futures.Future = concurrent.futures.Future()
                threading.Timer(0.01, future.set_exception, (error,)).start()
                return future

            return run

    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "f", Failing())]))
    tensor = tensor_on(tiled)
    before = snapshot(tensor.carrier)
    destination = sink(sw.Int32)
    handle = sw.move_async(tensor, destination)
    for _ in range(2):
        with pytest.raises(ProviderError) as info:
            handle.wait()
        assert info.value is error
    assert snapshot(tensor.carrier) == before
    assert destination.pinned_by is None


@pytest.mark.spec(f"{ROUTES}#1")
def test_a_run_returning_anything_else_fails_the_move():
    class Odd(TransferProvider):
        def prepare(self, request):
            return lambda output: 42

    _, tiled, sink, _, _ = classes()
    define_carrier(CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "o", Odd())]))
    tensor = tensor_on(tiled)
    before = snapshot(tensor.carrier)
    handle = sw.move_async(tensor, sink(sw.Int32))
    with pytest.raises(
        TypeError, match=r"route 'o'.*neither None nor a concurrent\.futures\.Future"
    ):
        handle.wait()
    assert snapshot(tensor.carrier) == before


# -- the definition objects ------------------------------------------------------------


@pytest.mark.spec(f"{ROUTES}#1")
def test_definitions_keep_what_they_were_given():
    _, tiled, sink, _, sibling = classes()
    provider = SpanProvider([])
    route = TransferRoute(tiled, sink, "tiled->sink", provider)
    assert (route.source_class, route.destination_class) == (tiled, sink)
    assert route.route_id == "tiled->sink" and route.provider is provider
    assert (
        repr(route) == "TransferRoute(classes.<locals>.Tiled, classes.<locals>.Sink, 'tiled->sink')"
    )
    other = TransferRoute(tiled, sibling, "tiled->sibling", provider)
    definition = CarrierDefinition(tiled, routes=(route, other), elementwise_fallback=True)
    assert definition.carrier_class is tiled
    assert [r.route_id for r in definition.routes] == ["tiled->sink", "tiled->sibling"]
    assert definition.elementwise_fallback is True
    assert (
        CarrierDefinition(tiled).routes == () and not CarrierDefinition(tiled).elementwise_fallback
    )
    assert tiled.carrier_class.definition_state == "open"  # constructing defines nothing
    define_carrier(definition)
    assert tiled.carrier_class.definition_state == "definition-backed"


@pytest.mark.parametrize(
    ("arguments", "subject"),
    [
        (lambda t, s, p: (42, s, "r", p), "source_class"),
        (lambda t, s, p: (t, int, "r", p), "destination_class"),
        (lambda t, s, p: (t, sw.MoveOperation, "r", p), "destination_class"),
        (lambda t, s, p: (t, s, 5, p), "route_id"),
        (lambda t, s, p: (t, s, "r", object()), "provider"),
    ],
)
def test_a_route_refuses_a_non_conforming_argument(arguments, subject):
    _, tiled, sink, _, _ = classes()
    with pytest.raises(TypeError, match=subject):
        TransferRoute(*arguments(tiled, sink, SpanProvider([])))


def test_a_route_needs_a_route_id():
    _, tiled, sink, _, _ = classes()
    with pytest.raises(ValueError, match="empty route_id"):
        TransferRoute(tiled, sink, "", SpanProvider([]))


def test_a_definition_refuses_malformed_routes():
    _, tiled, sink, sub_sink, _ = classes()
    provider = SpanProvider([])
    with pytest.raises(TypeError, match="carrier_class"):
        CarrierDefinition(sw.MoveOperation)
    with pytest.raises(TypeError, match=r"routes\[1\]"):
        CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "a", provider), 42])
    with pytest.raises(TypeError, match="elementwise_fallback"):
        CarrierDefinition(tiled, elementwise_fallback=1)
    with pytest.raises(ValueError, match=r"starts at classes\.<locals>\.Sink"):
        CarrierDefinition(tiled, routes=[TransferRoute(sink, sub_sink, "backwards", provider)])
    with pytest.raises(ValueError, match="route 'a' is declared twice"):
        CarrierDefinition(
            tiled,
            routes=[
                TransferRoute(tiled, sink, "a", provider),
                TransferRoute(tiled, sub_sink, "a", provider),
            ],
        )
    with pytest.raises(ValueError, match="already serves"):
        CarrierDefinition(
            tiled,
            routes=[
                TransferRoute(tiled, sink, "a", provider),
                TransferRoute(tiled, sink, "b", provider),
            ],
        )
    assert tiled.carrier_class.definition_state == "open"


@pytest.mark.spec(f"{DISPATCH}#7", f"{DISPATCH}#6")
@pytest.mark.parametrize("builtin", [sw.CPU, sw.Generic, sw.FileBacked])
def test_built_in_carriers_stay_definition_free(builtin):
    assert builtin.carrier_class.definition_state == "definition-free"
    with pytest.raises(RuntimeError, match=builtin.__name__):
        define_carrier(CarrierDefinition(builtin))
    assert builtin.carrier_class.definition_state == "definition-free"
    assert dispatch_move(sw.CPU, sw.FileBacked) is sw.CpuToFileBackedMoveOperation
    assert dispatch_move(sw.FileBacked, sw.CPU) is sw.FileBackedToCpuMoveOperation


def test_define_carrier_refuses_a_second_definition_and_a_non_definition():
    _, tiled, sink, _, _ = classes()
    with pytest.raises(TypeError, match="definition"):
        define_carrier(tiled)
    first = CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "first", SpanProvider([]))])
    define_carrier(first)
    with pytest.raises(RuntimeError, match="Tiled"):
        define_carrier(CarrierDefinition(tiled, elementwise_fallback=True))
    log: list = []
    first.routes[0].provider.log = log
    sw.move(tensor_on(tiled), sink(sw.Int32))
    assert [entry[1] for entry in log] == ["first", "first"]  # the first definition still rules


@pytest.mark.spec(f"{REGISTRY}#18")
@pytest.mark.parametrize("observed_by", ["dispatch_move", "move", "register"])
def test_defining_after_the_legacy_pair_was_observed_fails(observed_by):
    _, tiled, sink, _, _ = classes()
    operation = sw.ElementwiseMoveOperation
    if observed_by == "dispatch_move":
        dispatch_move(tiled, sink)
    elif observed_by == "move":
        sw.move(tensor_on(tiled), sink(sw.Int32))
    else:

        class Bulk(sw.MoveOperation):
            def _copy(self, tensor, destination, output, element_count):
                destination.write_range(0, tensor.carrier.read_range(tensor.offset, element_count))

        register_move_operation(tiled, sink, Bulk)
        operation = Bulk
    with pytest.raises(RuntimeError, match="Tiled"):
        define_carrier(
            CarrierDefinition(tiled, routes=[TransferRoute(tiled, sink, "late", SpanProvider([]))])
        )
    assert tiled.carrier_class.definition_state == "definition-free"
    assert dispatch_move(tiled, sink) is operation
    if operation is not sw.ElementwiseMoveOperation:
        unregister_move_operation(tiled, sink)


# -- the legacy registry refuses defined classes ------------------------------------------


def _legacy_calls(source, destination):
    class Operation(sw.MoveOperation):
        pass

    return {
        "register_move_operation": lambda: register_move_operation(source, destination, Operation),
        "unregister_move_operation": lambda: unregister_move_operation(source, destination),
        "dispatch_move": lambda: dispatch_move(source, destination),
        "registered_move_operation": lambda: registered_move_operation(
            source, destination, Operation
        ),
    }


@pytest.mark.spec(
    f"{REGISTRY}/reject-registration-for-a-defined-carrier", f"{REGISTRY}#16", f"{REGISTRY}#17"
)
@pytest.mark.parametrize("api", list(_legacy_calls(sw.CPU, sw.CPU)))
@pytest.mark.parametrize("defined_side", ["source", "destination"])
def test_reject_registration_for_a_defined_carrier(api, defined_side):
    log: list = []
    _, tiled, sink, _, _ = defined_pair(log)
    pair = (tiled, sink) if defined_side == "source" else (sink, tiled)
    with pytest.raises(RuntimeError, match="TransferRoute") as info:
        _legacy_calls(*pair)[api]()
    assert "Tiled" in str(info.value)
    # The definition's route still serves the pair, and the registry holds nothing for it.
    log.clear()
    sw.move(tensor_on(tiled), sink(sw.Int32))
    assert [entry[:2] for entry in log] == [("prepare", "tiled->sink"), ("run", "tiled->sink")]
    assert tiled.carrier_class.definition_state == "definition-backed"
    with pytest.raises(RuntimeError, match="TransferRoute"):
        dispatch_move(*pair)


@pytest.mark.spec(f"{REGISTRY}#16")
def test_a_non_carrier_argument_is_named_before_the_definition_check():
    _, tiled, _, _, _ = classes()
    define_carrier(CarrierDefinition(tiled))
    with pytest.raises(TypeError, match="destination_class"):
        register_move_operation(tiled, 42, sw.ElementwiseMoveOperation)
    with pytest.raises(TypeError, match="source_class"):
        dispatch_move(42, tiled)


# -- TiledEvictable's internal transfers --------------------------------------------------


def _recording_operation(log: list, direction: str) -> type[sw.MoveOperation]:
    """A MoveOperation logging (direction, source class, destination class), then copying
    the span through the public entry points its pins admit."""

    class Recording(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            log.append((direction, type(tensor.carrier), type(destination)))
            copy_span(tensor, destination, element_count)

    return Recording


@pytest.mark.spec(f"{DISPATCH}#8")
def test_tiled_evictable_moves_its_tiles_through_the_legacy_exact_pair():
    from strideweave.carriers.tiled_evictable import TiledEvictable

    log: list = []

    class Fast(sw.CPU):
        pass

    class Slow(sw.FileBacked):
        pass

    evict, load = _recording_operation(log, "evict"), _recording_operation(log, "load")
    with (
        registered_move_operation(Fast, Slow, evict),
        registered_move_operation(Slow, Fast, load),
    ):
        tiled = TiledEvictable(
            sw.Int32, 8, 4, fast_class=Fast, slow_class=Slow, resident_limit=1, values=range(8)
        )
        tiled.make_resident([0]).wait()
        assert log == [("load", Slow, Fast)]
        tiled.write(1, 41)
        tiled.make_resident([1]).wait()  # evicts the written tile 0, then loads tile 1
        assert sorted(log) == sorted([("load", Slow, Fast)] * 2 + [("evict", Fast, Slow)])
        assert tiled.tolist() == [0, 41, 2, 3, 4, 5, 6, 7]
        # A public move out of the TiledEvictable follows its definition's route, not the
        # legacy registry: its one CPU route serves it, and no other pair is permitted,
        # even one whose classes have legacy registrations.
        window = sw.Tensor(tiled, sw.Layout(3), 1)
        destination = Fast(sw.Int32)
        with refused(NotImplementedError, "TiledEvictable", "Fast", carriers=[destination]):
            sw.move(window, destination)
        with pytest.raises(RuntimeError, match="TransferRoute"):
            dispatch_move(TiledEvictable, Fast)
        result = sw.move(window, sw.CPU(sw.Int32))
        assert result.tolist() == [41, 2, 3] and type(result.carrier) is sw.CPU
