"""autograd: grad mode, leaves, recorded nodes, backward, cotangents, saved inputs."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

VIEWS = "autograd/broadcast-and-indexing-are-recorded-views"
MODE = "autograd/grad-mode-is-per-thread-and-on-by-default"
LEAVES = "autograd/leaves-opt-in-to-gradients"
RECORD = "autograd/operations-record-the-producing-node"
BACKWARD = "autograd/backward-accumulates-gradients-into-leaves"
COTANGENT = "autograd/a-cotangent-must-stand-for-the-result"
SAVED = "autograd/saved-inputs-are-checked-against-their-versions"
FREED = "autograd/graphs-are-freed-after-backward-unless-retained"


def leaf(values):
    t = sw.tensor(values, dtype=sw.Float32)
    t.requires_grad = True
    return t


def is_detached(t):
    return t.autograd_ctx is None and not t.requires_grad and t.is_leaf


@pytest.mark.spec(f"{VIEWS}/sum-the-gradient-over-broadcast-modes", f"{VIEWS}#1", f"{VIEWS}#2")
def test_sum_the_gradient_over_broadcast_modes():
    x = leaf([[1.0], [2.0]])
    view = x.broadcast_to((2, 3, 4))
    assert view.carrier is x.carrier
    assert view.autograd_ctx.name == "broadcast_to"
    view.sum().backward()
    assert x.grad.shape == (2, 1)
    assert x.grad.tolist() == [[12.0], [12.0]]
    integral = leaf([5.0])
    (integral.broadcast_to(3) * sw.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert integral.grad.tolist() == [6.0]


@pytest.mark.spec(f"{VIEWS}/scatter-the-gradient-of-an-index", f"{VIEWS}#1", f"{VIEWS}#2")
def test_scatter_the_gradient_of_an_index():
    t = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    picked = t[1, 0:2]
    assert picked.carrier is t.carrier
    assert picked.autograd_ctx.name == "index"
    picked.sum().backward()
    assert t.grad.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    (t[:, 2] * sw.tensor([10.0, 20.0]).broadcast_to((2,))).sum().backward()
    assert t.grad.tolist() == [[0.0, 0.0, 10.0], [1.0, 1.0, 20.0]]


@pytest.mark.spec(f"{VIEWS}/refuse-to-relayout-a-tensor-that-requires-grad", f"{VIEWS}#3")
def test_refuse_to_relayout_a_tensor_that_requires_grad():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    version = x.carrier.version
    with pytest.raises(RuntimeError, match="relayout"):
        x.relayout(sw.Layout((2, 2)))
    assert x.carrier.version == version and x.grad is None and x.autograd_ctx is None
    view = x.detach().relayout(sw.Layout((2, 2)))
    assert view.tolist() == [[1.0, 3.0], [2.0, 4.0]] and view.autograd_ctx is None
    with sw.no_grad():
        assert x.relayout(sw.Layout(2), 2).tolist() == [3.0, 4.0]


@pytest.mark.spec(f"{MODE}/turn-recording-off-for-a-block", f"{MODE}#2", f"{MODE}#3")
def test_turn_recording_off_for_a_block():
    x = leaf([1.0, 2.0])
    assert sw.is_grad_enabled()
    with sw.no_grad():
        assert not sw.is_grad_enabled()
        y = x * x
        with sw.enable_grad():
            assert sw.is_grad_enabled()
            assert (x * x).autograd_ctx is not None
        assert not sw.is_grad_enabled()
    assert y.autograd_ctx is None and not y.requires_grad
    assert sw.is_grad_enabled()
    with pytest.raises(KeyError), sw.no_grad():
        raise KeyError("restored on an exception too")
    assert sw.is_grad_enabled()

    @sw.no_grad()
    def square(t):
        return t * t

    assert square(x).autograd_ctx is None and sw.is_grad_enabled()
    assert sw.autograd.no_grad is sw.no_grad


@pytest.mark.spec(f"{MODE}/keep-grad-mode-per-thread", f"{MODE}#1")
def test_keep_grad_mode_per_thread():
    seen = {}
    inside = threading.Event()
    done = threading.Event()

    def other():
        inside.wait()
        seen["enabled"] = sw.is_grad_enabled()
        seen["recorded"] = (leaf([1.0]) * 2).autograd_ctx is not None
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with sw.no_grad():
        inside.set()
        done.wait()
        assert not sw.is_grad_enabled()
    thread.join()
    assert seen == {"enabled": True, "recorded": True}


@pytest.mark.spec(f"{LEAVES}/mark-a-leaf", f"{LEAVES}#1", f"{LEAVES}#3")
def test_mark_a_leaf():
    t = sw.tensor([1.0, 2.0])
    assert not t.requires_grad and t.is_leaf and t.autograd_ctx is None and t.grad is None
    t.requires_grad = True
    assert t.requires_grad and t.is_leaf and t.autograd_ctx is None
    t.requires_grad = False
    assert not t.requires_grad
    y = leaf([1.0]) * 2
    assert not y.is_leaf and y.autograd_ctx is not None


@pytest.mark.spec(
    f"{LEAVES}/refuse-requires-grad-where-it-cannot-hold", f"{LEAVES}#1", f"{LEAVES}#2"
)
def test_refuse_requires_grad_where_it_cannot_hold():
    y = leaf([1.0, 2.0]) * 2
    node = y.autograd_ctx
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    assert y.requires_grad and y.autograd_ctx is node
    for dtype, values in [(sw.Int32, [1, 2]), (sw.Bool, [True, False])]:
        t = sw.tensor(values, dtype=dtype)
        with pytest.raises(RuntimeError, match=dtype.name):
            t.requires_grad = True
        assert not t.requires_grad and t.carrier.version == 0
    point = sw.compound([("x", sw.Float32), ("y", sw.Float32)])
    planar = sw.Tensor.from_planes(point, [sw.tensor([1.0]), sw.tensor([2.0])])
    with pytest.raises(NotImplementedError, match="requires_grad"):
        planar.requires_grad = True
    assert not planar.requires_grad
    with pytest.raises(TypeError, match="bool"):
        sw.tensor([1.0]).requires_grad = 1


@pytest.mark.spec(f"{LEAVES}/detach-a-result", f"{LEAVES}#4")
def test_detach_a_result():
    y = (leaf([1.0, 2.0, 3.0]) * 2)[1:]
    d = y.detach()
    assert (d.carrier, d.offset, d.layout) == (y.carrier, y.offset, y.layout)
    assert is_detached(d)
    assert d.tolist() == y.tolist()
    assert y.autograd_ctx is not None


@pytest.mark.spec(f"{RECORD}/link-a-node-to-its-inputs", f"{RECORD}#1", f"{RECORD}#3")
def test_link_a_node_to_its_inputs():
    x = leaf([1.0, 2.0])
    c = sw.tensor([3.0, 4.0])
    y = x * c
    assert y.requires_grad and y.autograd_ctx.name == "mul"
    accumulate, none = y.autograd_ctx.next_nodes
    assert none is None
    assert isinstance(accumulate, sw.AccumulateGrad) and accumulate.name == "accumulate_grad"
    assert accumulate.variable is x
    z = y + x
    assert z.autograd_ctx.next_nodes[0] is y.autograd_ctx
    assert z.autograd_ctx.next_nodes[1] is accumulate
    assert y.autograd_ctx is y.autograd_ctx


@pytest.mark.spec(f"{RECORD}/record-nothing-without-a-differentiable-input", f"{RECORD}#2")
def test_record_nothing_without_a_differentiable_input():
    a = sw.tensor([1.0, 2.0])
    for result in (a + a, a * 2, -a, a.sum(), a.broadcast_to((2, 2)), a[0]):
        assert result.autograd_ctx is None and not result.requires_grad and result.is_leaf


@pytest.mark.spec(
    f"{BACKWARD}/compute-the-gradient-of-a-small-graph",
    f"{BACKWARD}#1",
    f"{BACKWARD}#3",
    f"{BACKWARD}#4",
)
def test_compute_the_gradient_of_a_small_graph():
    x = leaf([1.0, 2.0, 3.0])
    y = leaf([4.0, 5.0, 6.0])
    product = x * y
    z = (product + x - (-y)).sum()
    z.backward()
    assert x.grad.tolist() == [5.0, 6.0, 7.0]
    assert y.grad.tolist() == [2.0, 3.0, 4.0]
    assert is_detached(x.grad) and is_detached(y.grad)
    assert product.grad is None and z.grad is None
    exported = np.from_dlpack(x.grad)
    assert exported.tolist() == [5.0, 6.0, 7.0]


@pytest.mark.spec(f"{BACKWARD}/compute-the-gradient-of-a-small-graph", f"{BACKWARD}#1")
@settings(max_examples=40, deadline=None)
@given(S.tensors(dtypes=st.just(sw.Float32)), st.data())
def test_gradients_through_any_layout(a, data):
    """d/da sum(a * b + a) = b + 1 and d/db = a, for operands of any layout and carrier."""
    b = data.draw(S.tensors(dtypes=st.just(sw.Float32), layouts=st.just(a.layout)))
    x, y = a.detach(), b.detach()
    x.requires_grad = True
    y.requires_grad = True
    (x * y + x).sum().backward()
    assert x.grad.tolist() == (b + 1).tolist()
    assert y.grad.tolist() == a.tolist()
    assert x.grad.shape == a.shape


@pytest.mark.spec(f"{BACKWARD}/accumulate-across-two-backward-calls", f"{BACKWARD}#2")
def test_accumulate_across_two_backward_calls():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    first = x.grad
    assert first.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    assert x.grad.carrier is not first.carrier
    assert first.tolist() == [2.0, 4.0]
    both = leaf([1.0])
    (both + both).backward()
    assert both.grad.tolist() == [2.0]


@pytest.mark.spec(
    f"{BACKWARD}/require-a-cotangent-for-a-result-of-several-elements", f"{BACKWARD}#5"
)
def test_require_a_cotangent_for_a_result_of_several_elements():
    x = leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match=r"shape 2 \(2 elements\)"):
        y.backward()
    assert x.grad is None and y.autograd_ctx.name == "mul"
    (x * 2)[0].backward()
    assert x.grad.tolist() == [2.0, 0.0]


@pytest.mark.spec(f"{BACKWARD}/refuse-a-tensor-that-does-not-require-grad", f"{BACKWARD}#6")
def test_refuse_a_tensor_that_does_not_require_grad():
    t = sw.tensor([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        t.backward()
    assert t.grad is None and t.carrier.version == 0


@pytest.mark.spec(f"{BACKWARD}#7")
def test_gradients_are_computed_with_grad_mode_off():
    x = leaf([1.0, 2.0])
    y = x * x
    y.backward(sw.tensor([1.0, 1.0]))
    assert is_detached(x.grad) and sw.is_grad_enabled()


def refused_cotangents():
    released = sw.tensor([1.0, 1.0])
    released.carrier.release()
    return [
        ([1.0, 1.0], TypeError, r"backward: cotangent \[1\.0, 1\.0\].* is not a Tensor"),
        (sw.tensor([1.0, 1.0, 1.0]), ValueError, r"shape 3, the result has shape 2"),
        (sw.tensor([1.0]).broadcast_to(2), ValueError, "an injective gradient Layout is required"),
        (released, RuntimeError, r"CPU carrier #\d+, which is released"),
        (sw.tensor([1, 1], dtype=sw.Int32), TypeError, "dtype Int32, the result has dtype Float32"),
    ]


@pytest.mark.spec(
    f"{COTANGENT}/refuse-a-cotangent-that-is-not-a-fitting-tensor",
    f"{COTANGENT}#1",
    f"{COTANGENT}#2",
    f"{COTANGENT}#3",
)
@pytest.mark.parametrize("case", range(5))
def test_refuse_a_cotangent_that_is_not_a_fitting_tensor(case):
    x = leaf([1.0, 2.0])
    y = x * x
    cotangent, error, message = refused_cotangents()[case]
    with pytest.raises(error, match=message):
        y.backward(cotangent)
    assert x.grad is None and x.carrier.version == 0
    y.backward(sw.tensor([1.0, 1.0]))  # the graph was not freed
    assert x.grad.tolist() == [2.0, 4.0]


@pytest.mark.spec(f"{COTANGENT}/use-a-given-cotangent", f"{COTANGENT}#1", f"{COTANGENT}#4")
def test_use_a_given_cotangent():
    x = leaf([1.0, 2.0])
    y = 3 * x
    strided = sw.Tensor(sw.Generic(sw.Float32, values=[1.0, 0.0, 10.0]), sw.Layout(2, 2))
    y.backward(strided)
    assert x.grad.tolist() == [3.0, 30.0]
    assert x.grad.carrier is not strided.carrier
    direct = leaf([1.0, 2.0])
    cotangent = sw.tensor([4.0, 5.0])
    direct.backward(cotangent)
    assert direct.grad.tolist() == [4.0, 5.0] and direct.grad.carrier is not cotangent.carrier


@pytest.mark.spec(
    f"{SAVED}/detect-a-modified-saved-input", f"{SAVED}#1", f"{SAVED}#2", f"{SAVED}#3"
)
def test_detect_a_modified_saved_input():
    x = leaf([1.0, 2.0])
    c = sw.tensor([3.0, 4.0])
    y = (x + 1) * x  # a node without saved inputs runs before mul in a traversal
    z = (x * c).sum() + y.sum()
    c.carrier.write(0, 9.0)
    message = r"mul: saved input 1 in CPU carrier #\d+ .*version 0 when saved, now 1"
    with pytest.raises(RuntimeError, match=message):
        z.backward()
    assert x.grad is None and c.carrier.version == 1 and z.autograd_ctx is not None


@pytest.mark.spec(f"{SAVED}#4")
def test_a_write_through_an_exported_buffer_is_not_detected():
    x = leaf([1.0, 2.0])
    c = sw.tensor([3.0, 4.0])
    y = (x * c).sum()
    np.from_dlpack(c)[0] = 9.0
    y.backward()
    assert x.grad.tolist() == [9.0, 4.0]


@pytest.mark.spec(f"{SAVED}/detect-a-released-saved-input", f"{SAVED}#2", f"{SAVED}#3")
def test_detect_a_released_saved_input():
    x = leaf([1.0, 2.0])
    c = sw.Tensor(sw.Generic(sw.Float32, values=[3.0, 4.0]), sw.Layout(2))
    y = (x * c).sum()
    c.carrier.release()
    message = r"mul: saved input 1 lives in Generic carrier #\d+, which was released"
    with pytest.raises(RuntimeError, match=message):
        y.backward()
    assert x.grad is None


@pytest.mark.spec(f"{FREED}/backward-twice-with-a-retained-graph", f"{FREED}#2")
def test_backward_twice_with_a_retained_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


@pytest.mark.spec(f"{FREED}/refuse-a-second-backward-through-a-freed-graph", f"{FREED}#1")
def test_refuse_a_second_backward_through_a_freed_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    grad = x.grad
    with pytest.raises(RuntimeError, match=r"mul: .*second time.*retain_graph=True"):
        y.backward()
    assert x.grad is grad and grad.tolist() == [2.0, 4.0]
