"""Gradients against PyTorch autograd as the oracle (spec/autograd).

Hypothesis builds small random graphs (one to six operations) of add, sub, mul, neg,
sum (over every mode and over given top-level modes), broadcast_to, indexing
(``t[...]``) and Python-scalar operands (both orders), over Float32 leaves of any
layout (nested, holes, stride zero, offsets, extents 0 and 1) on CPU, Generic and
FileBacked carriers, some requiring grad and some not; in a second test, moves
between those carriers too. It runs the graph and its backward in StrideWeave (an
optional cotangent, once or twice with ``retain_graph``), replays the same graph in
PyTorch (CPU), and compares every node's forward values and shape and every leaf's
gradient (None where PyTorch's is None).

The replay. A StrideWeave tensor whose shape has the top-level modes m_0 .. m_{k-1} is,
for PyTorch, a tensor of dims (size(m_0), .., size(m_{k-1})) (one dim for an integral
shape, none for ``()``) holding the logical values in flat colexicographic order:
element [c_0, .., c_{k-1}] is flat index c_0 + size(m_0) * (c_1 + size(m_1) * ..). A
mode's inner tree only orders the elements inside its dim (colexicographically again),
and none of these operations looks inside a top-level mode: elementwise operations
need equal shapes, sum removes whole top-level modes, broadcast_to widens whole
extent-1 modes and appends modes, and an index fixes or slices whole top-level modes
(an integer for a tuple mode is its colexicographic position: its PyTorch index). A
PyTorch leaf holds the values with its dims reversed (row-major, so the first mode
varies fastest) and enters the graph permuted; its ``.grad`` flattened is the gradient
in flat colexicographic order. A move is the identity.

The tolerance. Leaf values are exact multiples of 1/4 near zero (strategies'
``small_float_values``), so most results are exact in single precision; where rounding
enters, each float32 addition or multiplication rounds once with relative error at most
u = 2**-24, and a sum of n terms in any order errs by at most (n - 1) u times the sum
of the terms' magnitudes. So for a graph with K rounding steps on any path (its nodes,
the terms its sums and broadcast backwards add up, leaf accumulation, counted on the
forward and the backward side with margin), any float32 evaluation differs from the
exact value by at most gamma_K * M, gamma_K = K u / (1 - K u), where M is the same
quantity computed over magnitudes: the graph replayed in float64 on |values| with sub
as add and neg as the identity (and |cotangent|). StrideWeave and PyTorch float32 both
lie within that of the exact value, hence within 2 gamma_K M of each other: that is
the bound each value is checked against (exact equality where M is 0).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from hypothesis import given, settings

import strideweave as sw
from strideweave.kit import strategies as S

MOVE_CARRIERS = (sw.CPU, sw.Generic, sw.FileBacked)
MAX_OPERATIONS = 6
LEAF_SIZE = 48  # the first leaf's size bound; broadcasts grow a graph to BROADCAST_SIZE
BROADCAST_SIZE = 192
SCALARS = st.sampled_from([2, -1, 0.5, 3, -1.5, 0, 0.25, 1])
UNIT_ROUNDOFF = 2.0**-24
# The operations returning views, whose nodes save no input values: a carrier viewed
# only through them may be released (moved) before backward.
VIEWS = ("broadcast_to", "index")

# Per-test example counts: three quarters of the loaded profile's (ci: 200, about 60 ms
# an example), so the module stays well within a minute on CI's two cores; the thorough
# profile scales them up.
EXAMPLES = max(10, settings.default.max_examples * 3 // 4)

BINARY: dict[str, tuple[Callable, Callable]] = {
    # name: (operator form, module function)
    "add": (operator.add, sw.add),
    "sub": (operator.sub, sw.sub),
    "mul": (operator.mul, sw.mul),
}


@dataclass(frozen=True)
class Scalar:
    """A Python scalar operand of a binary operation."""

    value: int | float


@dataclass
class Node:
    """One node of a generated graph and what StrideWeave produced for it.

    ``op``: "leaf", "neg", "add", "sub", "mul", "sum", "broadcast_to", "index" or "move".
    ``inputs``: node indices, and a Scalar in a binary operation's scalar operand.
    ``arg``: whether a leaf requires grad, the modes of a sum (None: every mode), the
    target shape of broadcast_to, the items of an index, the destination class of a
    move. ``values``: the node's logical values in flat colexicographic order, read as
    soon as StrideWeave produced them.
    """

    op: str
    inputs: tuple
    arg: object
    tensor: sw.Tensor
    values: list[float]
    consumers: int = 0
    dead: bool = False  # moved away, or sharing a moved carrier: no longer an operand


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    rounding_steps: int = 0  # summed terms of sums and broadcasts (see the tolerance)

    def live(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if not n.dead]


def dims(shape: S.IntTuple) -> tuple[int, ...]:
    """The PyTorch dims of a StrideWeave shape: its top-level modes' sizes."""
    if isinstance(shape, int):
        return (shape,)
    return tuple(S.shape_size(mode) for mode in shape)


def logical_values(t: sw.Tensor) -> list[float]:
    """``t``'s values in flat colexicographic order, through its carrier's element reads."""
    return [t.carrier.read(t.offset + t.layout(i)) for i in range(t.layout.size)]


def torch_flat(t: torch.Tensor) -> list[float]:
    """A replayed tensor's values in flat colexicographic order (first dim fastest)."""
    return t.detach().permute(tuple(reversed(range(t.dim())))).flatten().tolist()


def torch_leaf(values: list[float], shape: S.IntTuple, dtype: torch.dtype, requires_grad: bool):
    """(PyTorch leaf holding ``values`` with dims reversed, its logical-order view)."""
    d = dims(shape)
    base = torch.tensor(values, dtype=dtype).reshape(d[::-1]).requires_grad_(requires_grad)
    return base, base.permute(tuple(reversed(range(len(d)))))


# -- building a graph (StrideWeave runs each operation as it is drawn) -----------------


def draw_leaf(data: st.DataObject, graph: Graph, shape: S.IntTuple, requires_grad: bool) -> int:
    """A new Float32 leaf of ``shape``: any layout family, offset and storing carrier."""
    t = data.draw(
        S.tensors(
            dtypes=st.just(sw.Float32),
            layouts=S.layouts_of_shape(shape),
            carrier_classes=S.STORING_CARRIERS,
            values_for=S.small_float_values,
        ),
        label="leaf",
    )
    t.requires_grad = requires_grad
    assert t.is_leaf and t.requires_grad is requires_grad and t.autograd_ctx is None
    graph.nodes.append(Node("leaf", (), requires_grad, t, logical_values(t)))
    return len(graph.nodes) - 1


def add_result(graph: Graph, op: str, inputs: tuple, arg: object, result: sw.Tensor) -> int:
    """Appends the node of ``result``; checks a math result is fresh, publicly mutable
    storage under the canonical layout at offset 0, on Metal when every tensor operand is
    on Metal and on CPU otherwise (checked now: a later move releases it)."""
    for i in inputs:
        if not isinstance(i, Scalar):
            graph.nodes[i].consumers += 1
            assert result.carrier is not graph.nodes[i].tensor.carrier or op in (*VIEWS, "move")
    if op not in (*VIEWS, "move"):
        operands = [graph.nodes[i].tensor for i in inputs if not isinstance(i, Scalar)]
        on_metal = all(type(t.carrier) is sw.Metal for t in operands)
        assert type(result.carrier) is (sw.Metal if on_metal else sw.CPU), op
        assert result.carrier.is_mutable(), op
        assert result.offset == 0 and result.layout == sw.Layout(result.shape), op
    graph.nodes.append(Node(op, inputs, arg, result, logical_values(result)))
    return len(graph.nodes) - 1


def pick(data: st.DataObject, graph: Graph, label: str) -> int:
    """A live node, the most recent first (chains shrink towards the last result)."""
    return data.draw(st.sampled_from(graph.live()[::-1]), label=label)


def draw_binary(data: st.DataObject, graph: Graph, op: str, x: int) -> int:
    xt = graph.nodes[x].tensor
    kind = data.draw(st.sampled_from(["node", "leaf", "scalar right", "scalar left"]), label=op)
    function = data.draw(st.booleans(), label="module function")
    apply = BINARY[op][1] if function else BINARY[op][0]
    if kind.startswith("scalar"):
        c = data.draw(SCALARS, label="scalar")
        if kind == "scalar right":
            return add_result(graph, op, (x, Scalar(c)), None, apply(xt, c))
        return add_result(graph, op, (Scalar(c), x), None, apply(c, xt))
    if kind == "node":
        same = [i for i in graph.live() if graph.nodes[i].tensor.shape == xt.shape]
        y = data.draw(st.sampled_from(same[::-1]), label="operand")
    else:
        y = draw_leaf(data, graph, xt.shape, data.draw(st.booleans(), label="requires_grad"))
    lhs, rhs = (x, y) if data.draw(st.booleans(), label="x first") else (y, x)
    result = apply(graph.nodes[lhs].tensor, graph.nodes[rhs].tensor)
    return add_result(graph, op, (lhs, rhs), None, result)


def draw_sum(data: st.DataObject, graph: Graph, x: int) -> int:
    """A sum over every mode, or over given top-level modes (negative ones too, or none)."""
    xt = graph.nodes[x].tensor
    rank = xt.layout.rank
    form = data.draw(st.sampled_from(["method", "function"]), label="sum form")
    modes = None
    if rank and data.draw(st.booleans(), label="over given modes"):
        given = data.draw(st.lists(st.integers(0, rank - 1), unique=True), label="modes")
        negative = data.draw(st.lists(st.booleans(), min_size=len(given), max_size=len(given)))
        modes = tuple(m - rank if n else m for m, n in zip(given, negative, strict=True))
    if form == "method":
        result = xt.sum() if modes is None else xt.sum(modes=modes)
    else:
        result = sw.sum(xt) if modes is None else sw.sum(xt, modes=modes)
    top = [xt.shape] if isinstance(xt.shape, int) else list(xt.shape)
    if modes == ():
        assert result.shape == xt.shape
    else:
        summed = {m % rank for m in modes} if modes is not None else set(range(rank))
        assert result.shape == tuple(m for k, m in enumerate(top) if k not in summed)
    kept = math.prod(dims(result.shape)) or 1
    graph.rounding_steps += xt.layout.size // kept
    return add_result(graph, "sum", (x,), modes, result)


def draw_broadcast(data: st.DataObject, graph: Graph, x: int) -> int:
    xt = graph.nodes[x].tensor
    shape = xt.shape
    size = xt.layout.size
    budget = BROADCAST_SIZE // max(size, 1)

    def widened() -> S.IntTuple:
        """A new mode within the budget: an extent, or a nested pair of extents."""
        nonlocal budget
        first = data.draw(st.integers(1, min(4, budget)), label="extent")
        mode: S.IntTuple = first
        if budget // first > 1 and data.draw(st.booleans(), label="nested mode"):
            mode = (first, data.draw(st.integers(1, min(3, budget // first)), label="extent"))
        budget //= S.shape_size(mode)
        return mode

    if isinstance(shape, int):
        first: S.IntTuple = shape
        if shape == 1 and budget > 1 and data.draw(st.booleans(), label="widen"):
            first = widened()
        extra = []
        while budget > 1 and data.draw(st.booleans(), label="append a mode"):
            extra.append(widened())
        target: S.IntTuple = (first, *extra) if extra or not isinstance(first, int) else first
    else:
        modes = []
        for mode in shape:
            wide = mode == 1 and budget > 1 and data.draw(st.booleans(), label="widen")
            modes.append(widened() if wide else mode)
        while budget > 1 and data.draw(st.booleans(), label="append a mode"):
            modes.append(widened())
        target = tuple(modes)
    result = xt.broadcast_to(target)
    assert result.carrier is xt.carrier and result.shape == target
    graph.rounding_steps += result.layout.size // max(size, 1)
    return add_result(graph, "broadcast_to", (x,), target, result)


@st.composite
def index_items(draw: st.DrawFn, shape: S.IntTuple) -> tuple:
    """An index of ``shape``'s leading top-level modes: integers (negative ones too) and,
    for integral modes, slices with a positive step (only ':' for a tuple mode)."""
    modes = [shape] if isinstance(shape, int) else list(shape)
    items: list[int | slice] = []
    for mode in modes[: draw(st.integers(0, len(modes)))]:
        extent = S.shape_size(mode)
        if extent and draw(st.booleans()):
            items.append(draw(st.integers(-extent, extent - 1)))
        elif isinstance(mode, int):
            bounds = st.none() | st.integers(-extent - 1, extent + 1)
            items.append(slice(draw(bounds), draw(bounds), draw(st.none() | st.integers(1, 3))))
        else:
            items.append(slice(None))
    return tuple(items)


def draw_index(data: st.DataObject, graph: Graph, x: int) -> int:
    xt = graph.nodes[x].tensor
    items = data.draw(index_items(xt.shape), label="index")
    result = xt[items]
    assert result.carrier is xt.carrier
    return add_result(graph, "index", (x,), items, result)


def movable(graph: Graph, x: int) -> bool:
    """Whether moving node ``x`` (which releases its carrier) leaves the graph sound.

    ``x`` is not an operand yet, and every other live node viewing its carrier (the
    tensors ``x`` is a view of) feeds only views, which save no values.
    """
    if graph.nodes[x].consumers:
        return False
    carrier = graph.nodes[x].tensor.carrier
    for i, n in enumerate(graph.nodes):
        if i == x or n.dead or n.tensor.carrier is not carrier:
            continue
        if any(i in m.inputs and m.op not in VIEWS for m in graph.nodes):
            return False
    return True


def draw_move(data: st.DataObject, graph: Graph) -> int:
    """A move of a movable node (the most recent first) into a new carrier of a drawn
    class; where none is movable, a neg of the last live node keeps the step."""
    candidates = [i for i in graph.live()[::-1] if movable(graph, i)]
    if not candidates:
        x = graph.live()[-1]
        return add_result(graph, "neg", (x,), None, -graph.nodes[x].tensor)
    x = data.draw(st.sampled_from(candidates), label="moved")
    xt = graph.nodes[x].tensor
    carrier = xt.carrier
    destination_class = data.draw(st.sampled_from(MOVE_CARRIERS), label="destination")
    result = sw.move(xt, destination_class(sw.Float32))
    assert carrier.is_released and type(result.carrier) is destination_class
    assert result.layout == xt.layout
    for n in graph.nodes:
        if n.tensor.carrier is carrier:
            n.dead = True
    return add_result(graph, "move", (x,), destination_class, result)


def build_graph(data: st.DataObject, moves: bool) -> Graph:
    graph = Graph()
    shape = data.draw(S.shapes(max_size=LEAF_SIZE), label="shape")
    draw_leaf(data, graph, shape, requires_grad=True)
    ops = ["add", "sub", "mul", "neg", "sum", *VIEWS, *(["move"] * 3 if moves else [])]
    for _ in range(data.draw(st.integers(1, MAX_OPERATIONS), label="operations")):
        op = data.draw(st.sampled_from(ops), label="operation")
        if op == "move":
            draw_move(data, graph)
            continue
        x = pick(data, graph, op)
        if op in BINARY:
            draw_binary(data, graph, op, x)
        elif op == "neg":
            xt = graph.nodes[x].tensor
            result = sw.neg(xt) if data.draw(st.booleans(), label="module function") else -xt
            add_result(graph, "neg", (x,), None, result)
        elif op == "sum":
            draw_sum(data, graph, x)
        elif op == "broadcast_to":
            draw_broadcast(data, graph, x)
        else:
            draw_index(data, graph, x)
    return graph


# -- the replay ------------------------------------------------------------------------


def replay(graph: Graph, dtype: torch.dtype, magnitudes: bool):
    """The graph in PyTorch: (logical tensor per node, leaf base per node or None).

    ``magnitudes``: over |values| and |scalars|, sub as add and neg as the identity
    (the graph whose results bound the rounding error, see the module docstring).
    """
    out: list[torch.Tensor] = []
    bases: list[torch.Tensor | None] = []

    def operand(i: int | Scalar) -> torch.Tensor | int | float:
        if isinstance(i, Scalar):
            return abs(i.value) if magnitudes else i.value
        return out[i]

    for node in graph.nodes:
        base = None
        if node.op == "leaf":
            values = [abs(v) for v in node.values] if magnitudes else node.values
            base, value = torch_leaf(values, node.tensor.shape, dtype, node.arg)
        elif node.op in BINARY:
            op = "add" if magnitudes and node.op == "sub" else node.op
            value = BINARY[op][0](*(operand(i) for i in node.inputs))
        elif node.op == "neg":
            x = out[node.inputs[0]]
            value = x if magnitudes else -x
        elif node.op == "sum":
            x = out[node.inputs[0]]
            if node.arg is None:
                value = x.sum()
            else:  # PyTorch reads dim=() as every dim: an empty list keeps the tensor
                value = x.sum(dim=node.arg) if node.arg else x
        elif node.op == "broadcast_to":
            x = out[node.inputs[0]]
            target = dims(node.arg)
            value = x.reshape((*x.shape, *[1] * (len(target) - x.dim()))).expand(target)
        elif node.op == "index":
            value = out[node.inputs[0]][node.arg]
        else:  # move: the identity
            value = out[node.inputs[0]]
        out.append(value)
        bases.append(base)
    return out, bases


# -- checks ----------------------------------------------------------------------------


def tolerance(graph: Graph) -> float:
    """2 gamma_K for the graph's rounding steps K (see the module docstring)."""
    k = 2 * (len(graph.nodes) + graph.rounding_steps) + 8
    return 2 * k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def assert_close(what: str, got: list[float], expected: list[float], bound: list[float], tol):
    """Each ``got`` within ``tol * bound`` of ``expected`` (exactly equal where bound is 0)."""
    assert len(got) == len(expected) == len(bound), f"{what}: {len(got)} values, {len(expected)}"
    for k, (g, e, m) in enumerate(zip(got, expected, bound, strict=True)):
        assert abs(g - e) <= tol * m, (
            f"{what}: value {k} (flat colexicographic) is {g}, PyTorch's {e} "
            f"(bound {tol * m:.3g}); all: {got} vs {expected}"
        )


def describe(graph: Graph) -> str:
    """The graph in one line per node, for failure reports."""
    lines = []
    for k, n in enumerate(graph.nodes):
        t = n.tensor
        if n.op == "leaf":
            lines.append(
                f"{k}: leaf {S.describe(t) if not t.carrier.is_released else t.layout}"
                f" requires_grad={n.arg}"
            )
        else:
            lines.append(f"{k}: {n.op}{n.inputs} {n.arg if n.arg is not None else ''}")
    return "\n".join(lines)


def check_forward(graph: Graph, ref: list[torch.Tensor], bound: list[torch.Tensor], tol: float):
    """Every node's shape and values against PyTorch's, and its recorded node."""
    accumulate: dict[int, object] = {}  # leaf index: its one accumulate_grad node
    for k, node in enumerate(graph.nodes):
        t = node.tensor
        what = f"node {k} ({node.op})"
        assert dims(t.shape) == tuple(ref[k].shape), f"{what}: shape {t.shape} vs {ref[k].shape}"
        assert t.dtype == sw.Float32
        assert_close(f"{what} forward", node.values, torch_flat(ref[k]), torch_flat(bound[k]), tol)
        if node.op == "leaf":
            continue
        operands = [i for i in node.inputs if not isinstance(i, Scalar)]
        assert t.requires_grad is ref[k].requires_grad, what
        assert t.is_leaf is (not ref[k].requires_grad), what
        ctx = t.autograd_ctx
        if not ref[k].requires_grad:
            assert ctx is None, what
            continue
        assert ctx is not None and ctx.name == node.op, f"{what}: autograd_ctx {ctx}"
        assert len(ctx.next_nodes) == len(operands), f"{what}: next_nodes {ctx.next_nodes}"
        for i, edge in zip(operands, ctx.next_nodes, strict=True):
            source = graph.nodes[i]
            if source.op != "leaf":
                assert edge is source.tensor.autograd_ctx, f"{what}: edge to node {i}"
            elif not source.arg:
                assert edge is None, f"{what}: an edge to leaf {i}, which requires no grad"
            else:
                assert edge.name == "accumulate_grad" and edge.variable is source.tensor, what
                assert accumulate.setdefault(i, edge) is edge, f"{what}: leaf {i}'s node"


def check_gradients(
    graph: Graph, bases: list, bound_bases: list, tol: float, passes: int = 1
) -> None:
    """Every leaf's gradient against PyTorch's; no gradient on a non-leaf.

    A leaf whose one consumer is a move, after one pass, holds move's gradient as is:
    fresh storage of the leaf's exact carrier class, under the leaf's layout when that
    is injective and the canonical one otherwise.
    """
    for k, node in enumerate(graph.nodes):
        grad = node.tensor.grad
        if node.op != "leaf":
            assert grad is None, f"non-leaf node {k} ({node.op}) has a .grad"
            continue
        expected = bases[k].grad
        if expected is None:
            assert grad is None, f"leaf {k}: a gradient where PyTorch has none"
            continue
        assert grad is not None, f"leaf {k}: no gradient; PyTorch's is {expected}"
        assert grad.shape == node.tensor.shape and grad.dtype == sw.Float32, f"leaf {k}"
        assert grad.autograd_ctx is None and not grad.requires_grad, f"leaf {k}: grad attached"
        got = logical_values(grad)
        if type(grad.carrier) is sw.CPU:  # exported, the gradient reads the same
            assert np.from_dlpack(grad).flatten(order="F").tolist() == got, f"leaf {k}"
        assert_close(
            f"leaf {k} gradient",
            got,
            expected.flatten().tolist(),
            bound_bases[k].grad.flatten().tolist(),
            tol,
        )
        consumers = [n for n in graph.nodes if k in n.inputs]
        if passes == 1 and [n.op for n in consumers] == ["move"]:
            leaf = node.tensor
            assert type(grad.carrier) is type(leaf.carrier), f"leaf {k}: grad on {grad.carrier}"
            canonical = sw.Layout(leaf.shape)
            expected_layout = leaf.layout if leaf.layout.is_injective() else canonical
            assert grad.layout == expected_layout, f"leaf {k}: grad layout {grad.layout}"


def run_and_compare(data: st.DataObject, moves: bool) -> None:
    graph = build_graph(data, moves)
    ref, bases = replay(graph, torch.float32, magnitudes=False)
    bound, bound_bases = replay(graph, torch.float64, magnitudes=True)
    tol = tolerance(graph)
    note = describe(graph)
    try:
        check_forward(graph, ref, bound, tol)
        y, y_ref, y_bound = graph.nodes[-1].tensor, ref[-1], bound[-1]
        if not y_ref.requires_grad:  # no leaf that requires grad reaches the result
            with pytest.raises(RuntimeError):
                y.backward()
            check_gradients(graph, bases, bound_bases, tol)
            return
        if y.layout.size == 1 and data.draw(st.booleans(), label="default cotangent"):
            cotangent, values = None, [1.0]
        else:
            cotangent = data.draw(
                S.tensors(
                    dtypes=st.just(sw.Float32),
                    layouts=S.layouts_of_shape(y.shape, S.INJECTIVE_FAMILIES),
                    carrier_classes=S.STORING_CARRIERS,
                    values_for=S.small_float_values,
                ),
                label="cotangent",
            )
            values = logical_values(cotangent)
        _, c_ref = torch_leaf(values, y.shape, torch.float32, False)
        _, c_bound = torch_leaf([abs(v) for v in values], y.shape, torch.float64, False)
        passes = 2 if data.draw(st.booleans(), label="backward twice (retain_graph)") else 1
        for p in range(passes):
            retain = p + 1 < passes
            y.backward(cotangent, retain_graph=retain)
            y_ref.backward(c_ref, retain_graph=retain)
            y_bound.backward(c_bound, retain_graph=retain)
            # PyTorch may hand two leaves one gradient buffer (an add passes the same
            # tensor to both inputs and AccumulateGrad steals it), so a second pass's
            # in-place accumulation would count twice: each leaf gets its own copy.
            for base in (*bases, *bound_bases):
                if base is not None and base.grad is not None:
                    base.grad = base.grad.clone()
        check_gradients(graph, bases, bound_bases, tol, passes)
    except AssertionError as error:
        raise AssertionError(f"{error}\ngraph:\n{note}") from None


AG = "autograd"
OPERATIONS = f"{AG}/elementwise-operations-take-operands-of-equal-shape-and-dtype"
RESULTS = f"{AG}/operation-results-are-fresh-canonical-cpu-tensors"
SUM = f"{AG}/sum-reduces-over-top-level-modes"
VIEWS_REQ = f"{AG}/broadcast-and-indexing-are-recorded-views"
RECORD = f"{AG}/operations-record-the-producing-node"
BACKWARD = f"{AG}/backward-accumulates-gradients-into-leaves"
ORACLE_CLAUSES = (
    f"{AG}/every-operation-is-an-operation-with-a-name#1",
    f"{OPERATIONS}#1",
    f"{RESULTS}#1",
    f"{SUM}#1",
    f"{SUM}#2",
    f"{SUM}#4",
    f"{VIEWS_REQ}#1",
    f"{VIEWS_REQ}#2",
    f"{RECORD}#1",
    f"{RECORD}#2",
    f"{RECORD}#3",
    f"{AG}/leaves-opt-in-to-gradients#3",
    *(f"{BACKWARD}#{n}" for n in range(1, 7)),
    f"{AG}/a-cotangent-must-stand-for-the-result#1",
    f"{AG}/graphs-are-freed-after-backward-unless-retained#2",
)
MOVE_AUTOGRAD = "interop-movement/move-participates-in-autograd-across-the-carrier-boundary"


@pytest.mark.spec(*ORACLE_CLAUSES)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_leaf_gradients_match_pytorch(data):
    run_and_compare(data, moves=False)


@pytest.mark.spec(*ORACLE_CLAUSES, f"{MOVE_AUTOGRAD}#3", f"{MOVE_AUTOGRAD}#8", f"{MOVE_AUTOGRAD}#9")
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_leaf_gradients_match_pytorch_across_moves(data):
    run_and_compare(data, moves=True)
