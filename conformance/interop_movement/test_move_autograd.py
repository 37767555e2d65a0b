"""interop-movement: move participates in autograd across the carrier boundary.

A differentiable move captures its reverse route at initiation, publishes one visible
"move" node, and its backward moves the cotangent back through that route into fresh
storage of the source's exact class. Classes with definitions are created per test (a
definition is permanent for its class).
"""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

import strideweave as sw
from conformance.interop_movement.movement import refused, snapshot
from strideweave.carriers import (
    CarrierDefinition,
    TransferProvider,
    TransferRequest,
    TransferRoute,
    define_carrier,
)
from strideweave.carriers.move import register_move_operation, unregister_move_operation

REQ = "interop-movement/move-participates-in-autograd-across-the-carrier-boundary"
HOLES = sw.Layout((2, 3), (2, 4))  # six coordinates over cosize 11, holes between


def leaf(cls: type[sw.Carrier] = sw.CPU, layout: sw.Layout = HOLES, offset: int = 1) -> sw.Tensor:
    """A Float32 leaf requiring grad: slot s holds s / 2, so every value differs."""
    slots = offset + layout.cosize + 1
    carrier = cls(sw.Float32, values=[s / 2 for s in range(slots)])
    t = sw.Tensor(carrier, layout, offset)
    t.requires_grad = True
    return t


def cotangent(shape, start: float = 1.0) -> sw.Tensor:
    """A fresh CPU cotangent of ``shape`` whose flat values are start, start + 1, ..."""
    size = 1
    for extent in sw.Layout(shape).leaf_modes:
        size *= extent[0]
    values = sw.arange(start, start + size, dtype=sw.Float32)
    return sw.Tensor(values.carrier, sw.Layout(shape))


class LoggingProvider(TransferProvider):
    """Copies the source's physical span through the public entry points on the worker
    running it and reports completion later from a thread of its own (as a device or I/O
    completion does); logs every prepare and every completion."""

    def __init__(self, log: list, *, delay: float = 0.0, error: Exception | None = None):
        super().__init__()
        self.log, self.delay, self.error = log, delay, error

    def prepare(self, request: TransferRequest):
        self.log.append(("prepare", request.route_id))

        def run(output: sw.Tensor):
            span = request.source.read_range(request.offset, request.element_count)
            request.destination.write_range(0, span)
            future: concurrent.futures.Future = concurrent.futures.Future()

            def complete() -> None:
                self.log.append(("complete", request.route_id))
                if self.error is None:
                    future.set_result(None)
                else:
                    future.set_exception(self.error)

            threading.Timer(self.delay, complete).start()
            return future

        return run


def defined_round_trip(log: list, *, reverse: bool = True, **reverse_options):
    """Fresh CPU subclasses Source and Sink; Source's definition routes Source -> Sink,
    Sink's routes Sink -> Source when ``reverse``; neither permits the fallback."""

    class Source(sw.CPU):
        pass

    class Sink(sw.CPU):
        pass

    define_carrier(
        CarrierDefinition(Source, routes=[TransferRoute(Source, Sink, "out", LoggingProvider(log))])
    )
    back = [TransferRoute(Sink, Source, "back", LoggingProvider(log, **reverse_options))]
    define_carrier(CarrierDefinition(Sink, routes=back if reverse else []))
    return Source, Sink


# -- initiation: the reverse route is captured first ---------------------------------------


@pytest.mark.spec(f"{REQ}/reject-a-differentiable-one-way-route-early", f"{REQ}#1", f"{REQ}#2")
def test_reject_a_differentiable_one_way_route_early():
    log: list = []
    source, sink = defined_round_trip(log, reverse=False)
    x = leaf(source)
    destination = sink(sw.Float32)
    with refused(
        NotImplementedError, source.__name__, sink.__name__, carriers=[x.carrier, destination]
    ):
        sw.move_async(x, destination)
    assert log == []  # the forward route was not even prepared
    assert x.autograd_ctx is None and x.grad is None and x.requires_grad


@pytest.mark.spec(f"{REQ}#1")
@pytest.mark.parametrize("differentiable", ["no_grad", "requires_grad=False"])
def test_a_one_way_route_moves_what_builds_no_graph(differentiable):
    log: list = []
    source, sink = defined_round_trip(log, reverse=False)
    x = leaf(source)
    expected = x.tolist()
    if differentiable == "no_grad":
        with sw.no_grad():
            y = sw.move(x, sink(sw.Float32))
    else:
        x.requires_grad = False
        y = sw.move(x, sink(sw.Float32))
    assert y.tolist() == expected
    assert y.autograd_ctx is None and not y.requires_grad
    assert [entry[0] for entry in log] == ["prepare", "complete"]


# -- the published node ------------------------------------------------------------------


@pytest.mark.spec(f"{REQ}#3")
def test_one_visible_move_node_saves_what_backward_needs():
    x = leaf()
    version = x.carrier.version
    y = sw.move(x, sw.FileBacked(sw.Float32))
    node = y.autograd_ctx
    assert node.name == "move" and y.requires_grad and not y.is_leaf
    (accumulate,) = node.next_nodes
    assert accumulate.name == "accumulate_grad" and accumulate.variable is x
    assert node.source_class is sw.CPU
    assert node.source_layout == HOLES
    assert node.source_version == version
    assert node.route == "FileBackedToCpuMoveOperation"
    z = sw.move(y, sw.Generic(sw.Float32))
    assert z.autograd_ctx.name == "move" and z.autograd_ctx.next_nodes == (node,)
    assert z.autograd_ctx.source_class is sw.FileBacked
    assert z.autograd_ctx.route == "ElementwiseMoveOperation"


@pytest.mark.spec(f"{REQ}#3")
def test_a_definition_route_is_saved_by_its_id():
    log: list = []
    source, sink = defined_round_trip(log)
    y = sw.move(leaf(source), sink(sw.Float32))
    assert y.autograd_ctx.route == "back"
    assert y.autograd_ctx.source_class is source


@pytest.mark.spec(f"{REQ}#4")
def test_provider_transfers_create_no_nested_node():
    seen: list = []
    weight = sw.tensor([2.0, 3.0], dtype=sw.Float32)
    weight.requires_grad = True

    class Computing(TransferProvider):
        """Runs operations on a differentiable tensor inside prepare and inside the
        transfer: neither may record a node."""

        def prepare(self, request):
            seen.append(("prepare", sw.is_grad_enabled(), (weight * weight).autograd_ctx))

            def run(output):
                seen.append(("run", sw.is_grad_enabled(), (weight + weight).autograd_ctx))
                span = request.source.read_range(request.offset, request.element_count)
                request.destination.write_range(0, span)

            return run

    class Source(sw.CPU):
        pass

    class Sink(sw.CPU):
        pass

    define_carrier(
        CarrierDefinition(Source, routes=[TransferRoute(Source, Sink, "c", Computing())])
    )
    define_carrier(CarrierDefinition(Sink, routes=[TransferRoute(Sink, Source, "r", Computing())]))
    x = leaf(Source)
    y = sw.move(x, Sink(sw.Float32))
    assert seen == [("prepare", False, None), ("run", False, None)]
    assert y.autograd_ctx.name == "move"
    assert [n.name for n in y.autograd_ctx.next_nodes] == ["accumulate_grad"]
    assert weight.grad is None and sw.is_grad_enabled()


# -- backward ------------------------------------------------------------------------------


@pytest.mark.spec(f"{REQ}/move-a-gradient-back-to-the-source-carrier-class", f"{REQ}#8")
def test_move_a_gradient_back_to_the_source_carrier_class():
    x = leaf()
    source_carrier = x.carrier
    y = sw.move(x, sw.FileBacked(sw.Float32))
    assert source_carrier.is_released
    g = cotangent((2, 3))
    y.backward(g)
    grad = x.grad
    assert type(grad.carrier) is sw.CPU
    assert grad.carrier is not source_carrier and grad.carrier is not g.carrier
    assert not grad.carrier.is_released and grad.carrier.is_mutable()
    assert grad.layout == HOLES and grad.offset == 0  # the injective source layout
    assert grad.tolist() == g.tolist()
    assert grad.autograd_ctx is None and not grad.requires_grad


@pytest.mark.spec(f"{REQ}#7", f"{REQ}#8")
def test_backward_waits_for_the_captured_reverse_route():
    log: list = []
    source, sink = defined_round_trip(log, delay=0.05)
    x = leaf(source)
    y = sw.move(x, sink(sw.Float32))
    log.clear()
    g = cotangent((2, 3))
    y.backward(g)
    # The reverse provider reported completion from its timer thread before backward
    # returned, and the gradient is in fresh storage of the exact source class.
    assert log == [("prepare", "back"), ("complete", "back")]
    assert type(x.grad.carrier) is source and x.grad.tolist() == g.tolist()


@pytest.mark.spec(f"{REQ}#7")
def test_backward_uses_the_route_captured_at_initiation():
    copies: list = []

    class Left(sw.CPU):
        pass

    class Right(sw.CPU):
        pass

    def operation(tag: str):
        class Logged(sw.ElementwiseMoveOperation):
            def _copy(self, tensor, destination, output, element_count):
                copies.append(tag)
                super()._copy(tensor, destination, output, element_count)

        Logged.__name__ = f"Logged{tag}"
        return Logged

    first, second = operation("first"), operation("second")
    register_move_operation(Right, Left, first)
    try:
        x = leaf(Left)
        y = sw.move(x, Right(sw.Float32))
        unregister_move_operation(Right, Left)
        register_move_operation(Right, Left, second)
        y.backward(cotangent((2, 3)))
    finally:
        unregister_move_operation(Right, Left)
    assert copies == ["first"]
    assert type(x.grad.carrier) is Left


@pytest.mark.spec(f"{REQ}#8")
def test_the_gradient_is_in_the_exact_class_of_a_python_subclass_source():
    class Pinned(sw.CPU):
        pass

    x = leaf(Pinned)
    y = sw.move(x, sw.Generic(sw.Float32))
    y.backward(cotangent((2, 3), start=-3.0))
    assert type(x.grad.carrier) is Pinned
    assert x.grad.tolist() == cotangent((2, 3), start=-3.0).tolist()


@pytest.mark.spec(f"{REQ}#8", f"{REQ}#9")
def test_a_moved_broadcast_view_hands_an_injective_gradient_to_the_broadcast_node():
    x = sw.tensor([1.0, 2.0, 3.0], dtype=sw.Float32)
    x.requires_grad = True
    view = x.broadcast_to((3, 4))
    assert not view.layout.is_injective()
    y = sw.move(view, sw.FileBacked(sw.Float32))
    assert y.layout == view.layout
    move_node = y.autograd_ctx
    assert [n.name for n in move_node.next_nodes] == ["broadcast_to"]
    g = cotangent((3, 4))
    (handed,) = move_node.apply(g)
    assert type(handed.carrier) is sw.CPU
    assert handed.layout == sw.Layout((3, 4)) and handed.layout.is_injective()
    assert handed.tolist() == g.tolist()
    y.backward(g)
    # x.grad[i] sums row i of the cotangent: i+1, i+4, i+7, i+10 (flat values 1..12)
    assert x.grad.tolist() == [sum(1.0 + i + 3 * j for j in range(4)) for i in range(3)]


@pytest.mark.spec(f"{REQ}#7")
def test_a_failed_reverse_transfer_raises_and_substitutes_nothing():
    log: list = []
    error = RuntimeError("the reverse device was lost")
    source, sink = defined_round_trip(log, error=error)
    x = leaf(source)
    y = sw.move(x, sink(sw.Float32))
    with pytest.raises(RuntimeError) as info:
        y.backward(cotangent((2, 3)))
    assert info.value is error
    assert x.grad is None


@pytest.mark.spec(f"{REQ}#8")
def test_a_gradient_flows_through_operations_on_both_sides():
    x = leaf(sw.FileBacked)
    values = x.tolist()
    y = sw.move(x, sw.CPU(sw.Float32))
    (y * y).sum().backward()
    assert type(x.grad.carrier) is sw.FileBacked and x.grad.layout == HOLES
    assert x.grad.tolist() == [[2 * v for v in row] for row in values]


# -- the cotangent contract ----------------------------------------------------------------


def moved() -> tuple[sw.Tensor, sw.Tensor]:
    x = leaf()
    return x, sw.move(x, sw.FileBacked(sw.Float32))


@pytest.mark.spec(f"{REQ}/reject-a-non-injective-cotangent", f"{REQ}#5", f"{REQ}#6")
@pytest.mark.parametrize("entry", ["backward", "node"])
def test_reject_a_non_injective_cotangent(entry):
    x, y = moved()
    g = sw.tensor([[1.0], [2.0]], dtype=sw.Float32).broadcast_to((2, 3))
    assert g.shape == (2, 3) and not g.layout.is_injective()
    node = y.autograd_ctx
    call = y.backward if entry == "backward" else node.apply
    with refused(ValueError, "injective gradient Layout", carriers=[g.carrier]):
        call(g)
    assert x.grad is None and y.autograd_ctx is node


@pytest.mark.spec(f"{REQ}#6")
@pytest.mark.parametrize("entry", ["backward", "node"])
@pytest.mark.parametrize(
    ("case", "error", "subject"),
    [
        ("non-Tensor", TypeError, "list"),
        ("released", RuntimeError, "released"),
        ("shape", ValueError, "(3,2)"),
    ],
)
def test_move_backward_refuses_a_cotangent_outside_the_contract(entry, case, error, subject):
    x, y = moved()
    if case == "non-Tensor":
        g = [[1.0] * 3] * 2
    elif case == "released":
        g = cotangent((2, 3))
        g.carrier.release()
    else:
        g = cotangent((3, 2))
    node = y.autograd_ctx
    call = y.backward if entry == "backward" else node.apply
    carriers = [g.carrier] if isinstance(g, sw.Tensor) else []
    with refused(error, subject, carriers=carriers):
        call(g)
    assert x.grad is None and y.autograd_ctx is node
    y.backward(cotangent((2, 3)))  # the graph is intact after a refusal
    assert x.grad.tolist() == cotangent((2, 3)).tolist()


@pytest.mark.spec(f"{REQ}#6")
def test_move_backward_accepts_an_injective_cotangent_on_any_carrier():
    x, y = moved()
    values = [float(v) for v in range(20)]
    g = sw.Tensor(sw.Generic(sw.Float32, values=values), sw.Layout((2, 3), (3, 1)), 2)
    before = snapshot(g.carrier)
    y.backward(g)
    assert x.grad.tolist() == g.tolist() and x.grad.layout == HOLES
    assert snapshot(g.carrier) == before
