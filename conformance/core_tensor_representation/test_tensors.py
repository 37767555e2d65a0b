"""core-tensor-representation: Tensor windows, tolist and mutability."""

import gc

import pytest

import strideweave as sw

WINDOW = "core-tensor-representation/a-tensor-addresses-a-window-of-one-carrier"
TOLIST = "core-tensor-representation/tolist-reads-logical-values-through-any-layout"
MUTABLE = "core-tensor-representation/public-mutability-of-a-tensor-is-its-carriers"


def iota(n, dtype=sw.Int32):
    return sw.CPU(dtype, values=[float(i) if dtype == sw.Float32 else i for i in range(n)])


@pytest.mark.spec(f"{WINDOW}/wrap-a-carrier-window", f"{WINDOW}#1", f"{WINDOW}#3")
def test_wrap_a_carrier_window():
    carrier = iota(11, sw.Float32)
    layout = sw.Layout((2, 3), (1, 4))
    t = sw.Tensor(carrier, layout, offset=1)
    assert t.dtype == sw.Float32
    assert t.shape == (2, 3)
    assert t.offset == 1 and t.layout == layout and t.carrier is carrier
    assert t.tolist() == [[carrier.read(1 + i + 4 * j) for j in range(3)] for i in range(2)]


@pytest.mark.spec(f"{WINDOW}/reject-a-window-beyond-the-carrier", f"{WINDOW}#2")
def test_reject_a_window_beyond_the_carrier():
    carrier = iota(10)
    with pytest.raises(ValueError) as info:
        sw.Tensor(carrier, sw.Layout((2, 3), (1, 4)), offset=1)
    message = str(info.value)
    assert "[1, 1 + 10)" in message and "10 slots" in message
    with pytest.raises(ValueError, match="offset -1"):
        sw.Tensor(carrier, sw.Layout(2), offset=-1)
    assert sw.Tensor(carrier, sw.Layout(0), offset=50).tolist() == []
    assert carrier.version == 0


@pytest.mark.spec(f"{WINDOW}#2")
@pytest.mark.parametrize(
    ("carrier", "layout", "subject"),
    [
        ([1, 2], sw.Layout(2), "carrier"),
        (sw.CPU(sw.Int32, 2), (2,), "layout"),
        (sw.CPU(sw.Int32, 2), None, "layout"),
    ],
)
def test_reject_arguments_of_the_wrong_type(carrier, layout, subject):
    with pytest.raises(TypeError, match=subject):
        sw.Tensor(carrier, layout)


@pytest.mark.spec(f"{WINDOW}/reject-a-released-carrier", f"{WINDOW}#2")
def test_reject_a_released_carrier():
    carrier = iota(4)
    carrier.release()
    with pytest.raises(RuntimeError) as info:
        sw.Tensor(carrier, sw.Layout(2))
    assert "CPU carrier" in str(info.value) and "released" in str(info.value)


@pytest.mark.spec(f"{TOLIST}/read-a-hierarchical-layout", f"{TOLIST}#1", f"{TOLIST}#4")
def test_read_a_hierarchical_layout():
    carrier = sw.CPU(sw.Int32, values=range(24))
    t = sw.Tensor(carrier, sw.Layout((2, (3, 4)), (1, (2, 6))))
    values = t.tolist()
    assert len(values) == 2 and len(values[0]) == 3 and len(values[0][0]) == 4
    for i in range(2):
        for j in range(3):
            for k in range(4):
                assert values[i][j][k] == i + 2 * j + 6 * k
    assert carrier.version == 0


@pytest.mark.spec(f"{TOLIST}/read-a-broadcast-view", f"{TOLIST}#1")
def test_read_a_broadcast_view():
    t = sw.Tensor(sw.CPU(sw.Int32, values=[5, 9]), sw.Layout((2, 3), (1, 0)))
    assert t.tolist() == [[5, 5, 5], [9, 9, 9]]


@pytest.mark.spec(f"{TOLIST}/read-an-offset-window", f"{TOLIST}#1")
def test_read_an_offset_window():
    t = sw.Tensor(iota(10), sw.Layout(4, 2), offset=3)
    assert t.tolist()[0] == 3
    assert t.tolist() == [3, 5, 7, 9]


@pytest.mark.spec(f"{TOLIST}#2", f"{TOLIST}#3")
def test_integral_and_rank_zero_shapes_and_value_types():
    assert sw.Tensor(iota(3), sw.Layout(3)).tolist() == [0, 1, 2]
    assert sw.Tensor(iota(3), sw.Layout(()), offset=2).tolist() == 2
    flags = sw.Tensor(sw.CPU(sw.Bool, values=[True, False]), sw.Layout(2)).tolist()
    assert flags == [True, False] and all(type(v) is bool for v in flags)
    floats = sw.Tensor(sw.CPU(sw.Float32, values=[1, 2]), sw.Layout(2)).tolist()
    assert all(type(v) is float for v in floats)
    anything = sw.Tensor(sw.Generic(sw.Any, values=[True, 3, 0.5]), sw.Layout(3)).tolist()
    assert [type(v) for v in anything] == [bool, int, float]
    record = sw.compound(x=sw.Float32, n=sw.Int32)
    assert sw.Tensor(sw.CPU(record, values=[(0.5, 1)]), sw.Layout(1)).tolist() == [(0.5, 1)]


@pytest.mark.spec(f"{MUTABLE}/follow-the-carriers-mutability", f"{MUTABLE}#1")
def test_follow_the_carriers_mutability():
    mutable = sw.Tensor(iota(2), sw.Layout(2))
    immutable = sw.Tensor(sw.CPU(sw.Int32, values=[1, 2], mutable=False), sw.Layout(2))
    owner, owned_carrier = sw.Generic(sw.Int32, 1), iota(2)
    owned = sw.Tensor(owned_carrier, sw.Layout(2))
    owner.take_ownership(owned_carrier)
    assert (mutable.is_mutable(), immutable.is_mutable(), owned.is_mutable()) == (
        True,
        False,
        False,
    )
    owner.relinquish(owned_carrier)
    assert owned.is_mutable()
    mutable.carrier.release()
    assert not mutable.is_mutable()


@pytest.mark.spec(f"{WINDOW}#1")
def test_a_tensor_keeps_its_carrier_alive():
    t = sw.Tensor(sw.CPU(sw.Int32, values=[4, 5]), sw.Layout(2))
    gc.collect()
    assert t.tolist() == [4, 5]


def _nested(depth: int):
    x = None
    for _ in range(depth):
        x = [x]
    return x


class _UnprintableArgument:
    def __repr__(self):
        raise ZeroDivisionError("__repr__ failed")


@pytest.mark.spec(
    "core-tensor-representation/a-tensor-addresses-a-window-of-one-carrier#2",
    "carrier-storage/a-carrier-holds-slots-of-one-dtype#3",
)
@pytest.mark.parametrize("argument", [_nested(5000), _UnprintableArgument()], ids=["deep", "repr"])
@pytest.mark.parametrize(
    "call",
    [
        lambda x: sw.Tensor(x, sw.Layout(2)),
        lambda x: sw.Tensor(sw.CPU(sw.Int32, 2), x),
        lambda x: sw.zeros(2, x),
        lambda x: sw.CPU(x),
        lambda x: sw.tensor([1], x),
        lambda x: sw.Layout(4).mode(x),
    ],
    ids=["carrier", "layout", "zeros-dtype", "cpu-dtype", "tensor-dtype", "mode"],
)
def test_a_wrong_argument_is_named_even_when_it_cannot_be_printed(call, argument):
    """The TypeError stands whatever repr() of the argument does (recurse too deep, raise).

    Pins a bug: messages called repr() on the argument, so a deeply nested list raised
    RecursionError and a failing __repr__ replaced the TypeError with its own exception.
    """
    with pytest.raises(TypeError) as info:
        call(argument)
    assert f"<{type(argument).__name__} object>" in str(info.value)
