"""core-tensor-representation: __array__, numpy(), repr, len, iteration, truth and Python
scalars at the prompt."""

import operator
import re
import warnings

import numpy as np
import pytest

import strideweave as sw

ARRAY = "core-tensor-representation/numpy-reads-a-tensor-through-the-array-protocol"
TEXT = "core-tensor-representation/a-tensors-text-shows-its-values-and-its-representation"
LEN = "core-tensor-representation/len-and-iteration-follow-the-first-mode"

COMPOUND = sw.compound(x=sw.Float32, n=sw.Int32)


def window(dtype=sw.Float32, carrier_class=sw.CPU, mutable=True):
    """A (2, 3) window at offset 1 of 11 slots holding their indices."""
    values = [(i % 2 == 1) if dtype == sw.Bool else i for i in range(11)]
    carrier = carrier_class(dtype, values=values, mutable=mutable)
    return sw.Tensor(carrier, sw.Layout((2, 3), (1, 4)), offset=1)


def planes():
    return sw.Tensor.from_planes(COMPOUND, [sw.tensor([0.5, 1.5, 2.5]), sw.tensor([7, 8, 9])])


def strict(call, *args, **kwargs):
    """call(*args, **kwargs) with every warning (NumPy's copy-keyword one included) an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call(*args, **kwargs)


def label_of(carrier) -> str:
    """The carrier's label ("CPU carrier #7"), as messages name it."""
    return repr(carrier)[1:].split(f" {carrier.dtype.name}")[0]


def data_address(array) -> int:
    return array.__array_interface__["data"][0]


# -- __array__ ---------------------------------------------------------------------------


@pytest.mark.spec(f"{ARRAY}/view-an-exportable-tensor-without-copying", f"{ARRAY}#1", f"{ARRAY}#3")
def test_view_an_exportable_tensor_without_copying():
    t = window()
    array = strict(np.asarray, t)
    assert array.shape == (2, 3) and array.dtype == np.float32
    assert array.tolist() == t.tolist()
    assert data_address(array) == t.carrier.pointer() + 4 * t.offset
    assert array.flags.writeable
    array[1, 2] = 99.0
    assert t.tolist()[1][2] == 99.0 and t.carrier.read(1 + 1 + 4 * 2) == 99.0
    assert t.carrier.version == 0  # writes through the buffer bypass the entry points
    assert strict(np.asarray, sw.full((), 3, dtype=sw.Int32)).shape == ()


@pytest.mark.spec(f"{ARRAY}#3")
@pytest.mark.parametrize("make_immutable", ["constructed", "owned"])
def test_the_view_is_read_only_exactly_when_the_tensor_is_immutable(make_immutable):
    t = window(mutable=make_immutable != "constructed")
    owner = sw.CPU(sw.Float32, 1)
    if make_immutable == "owned":
        owner.take_ownership(t.carrier)
    array = strict(np.asarray, t)
    assert not array.flags.writeable
    assert data_address(array) == t.carrier.pointer() + 4
    with pytest.raises(ValueError, match="read-only"):
        array[0, 0] = 1.0
    if make_immutable == "owned":
        owner.relinquish(t.carrier)
        assert strict(np.asarray, t).flags.writeable


@pytest.mark.spec(f"{ARRAY}/copy-what-export-refuses", f"{ARRAY}#1", f"{ARRAY}#2", f"{ARRAY}#3")
def test_copy_what_export_refuses():
    for t, dtype in [
        (window(sw.Bool), np.bool_),
        (window(sw.Int32, sw.Generic), np.int32),
        (window(sw.Float32, sw.CPU), np.float32),
    ]:
        copied = strict(np.asarray, t) if t.dtype != sw.Float32 else strict(np.array, t, copy=True)
        assert copied.dtype == dtype and copied.shape == (2, 3)
        assert copied.tolist() == t.tolist()
        assert copied.flags.writeable
        before = t.tolist()
        copied[0, 0] = not copied[0, 0] if dtype is np.bool_ else 55
        assert t.tolist() == before
        assert t.carrier.version == 0
    compound = strict(np.asarray, planes())
    assert compound.dtype == np.dtype([("x", np.float32), ("n", np.int32)])
    assert compound.shape == (3,) and compound.flags.writeable
    assert compound.tolist() == planes().tolist() == [(0.5, 7), (1.5, 8), (2.5, 9)]
    assert compound["x"].tolist() == [0.5, 1.5, 2.5]


@pytest.mark.spec(f"{ARRAY}#2")
def test_every_dtype_maps_to_its_numpy_dtype():
    cases = [
        (sw.Generic(sw.Floating, values=[0.1, 2]), np.float64, [0.1, 2.0]),
        (sw.Generic(sw.Any, values=[1, 2.5, True]), np.object_, [1, 2.5, True]),
        (sw.Generic(sw.Bool, values=[True, False]), np.bool_, [True, False]),
        (sw.CPU(COMPOUND, values=[(1.5, 2), (3.5, 4)]), None, [(1.5, 2), (3.5, 4)]),
        (sw.Generic(COMPOUND, values=[(1.5, 2), (3.5, 4)]), None, [(1.5, 2), (3.5, 4)]),
    ]
    for carrier, dtype, expected in cases:
        array = strict(np.asarray, sw.Tensor(carrier, sw.Layout(len(expected))))
        if dtype is None:
            assert array.dtype == np.dtype([("x", np.float32), ("n", np.int32)])
        else:
            assert array.dtype == dtype
        assert array.tolist() == expected
        assert [type(v) for v in array.tolist()] == [type(v) for v in expected]


@pytest.mark.spec(f"{ARRAY}/honour-copy-and-dtype", f"{ARRAY}#4", f"{ARRAY}#5", f"{ARRAY}#6")
def test_honour_copy_and_dtype():
    t = window()
    view = strict(np.asarray, t, copy=False)
    assert data_address(view) == t.carrier.pointer() + 4
    copied = strict(np.array, t, copy=True)
    assert not np.shares_memory(copied, view) and copied.tolist() == t.tolist()
    widened = strict(np.asarray, t, dtype=np.float64)
    assert widened.dtype == np.float64 and not np.shares_memory(widened, view)
    assert widened.tolist() == t.tolist()
    same = strict(np.asarray, t, dtype=np.float32, copy=False)
    assert data_address(same) == data_address(view)
    copied[0, 0] = widened[0, 0] = 42.0
    assert t.tolist()[0][0] == 1.0
    with pytest.raises(ValueError, match=r"float64.*copy"):
        strict(np.asarray, t, dtype=np.float64, copy=False)
    immutable = window(mutable=False)
    assert strict(np.array, immutable, copy=True).flags.writeable
    assert t.carrier.version == 0 and immutable.carrier.version == 0


@pytest.mark.spec(f"{ARRAY}/honour-copy-and-dtype", f"{ARRAY}#5")
@pytest.mark.parametrize(
    ("make", "subject"),
    [
        (lambda: window(sw.Int32, sw.Generic), "Generic"),
        (lambda: window(sw.Bool), "Bool"),
        (planes, "multi-subtensor"),
    ],
)
def test_copy_false_refuses_what_has_no_view(make, subject):
    t = make()
    carriers = [p.carrier for p in t.planes] if t.is_multi_subtensor else [t.carrier]
    with pytest.raises(ValueError, match=subject):
        strict(np.asarray, t, copy=False)
    assert [c.version for c in carriers] == [0] * len(carriers)
    assert not any(c.is_released for c in carriers)


@pytest.mark.spec(f"{ARRAY}#5")
def test_copy_false_refuses_a_carrier_on_another_device():
    class Remote(sw.CPU):
        def dlpack_info(self):
            return {"pointer": self.pointer(), "device_type": 2, "device_id": 0}

    t = sw.Tensor(Remote(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    with pytest.raises(ValueError, match=r"device \(2, 0\)"):
        strict(np.asarray, t, copy=False)
    assert strict(np.asarray, t).tolist() == [1.0, 2.0]  # copied through the entry points


@pytest.mark.spec(f"{ARRAY}#10")
def test_a_failing_hook_propagates_unchanged():
    class Broken(sw.CPU):
        def dlpack_info(self):
            raise KeyError("hook failed")

    t = sw.Tensor(Broken(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    with pytest.raises(KeyError, match="hook failed"):
        strict(np.asarray, t)
    assert strict(np.array, t, copy=True).tolist() == [1.0, 2.0]  # copies never ask the hook
    assert t.carrier.version == 0


@pytest.mark.spec(f"{ARRAY}#7")
def test_copies_never_read_element_by_element_in_python(monkeypatch):
    """The copy path reads the carrier in bulk: tolist() (the per-element path) is never used."""

    def refuse(self):
        raise AssertionError("the copy read values through tolist()")

    monkeypatch.setattr(sw.Tensor, "tolist", refuse)
    big = sw.Tensor(sw.CPU(sw.Bool, 1 << 16), sw.Layout((256, 256), (256, 1)))
    assert strict(np.asarray, big).shape == (256, 256)
    assert strict(np.array, window(), copy=True).shape == (2, 3)
    assert strict(np.asarray, window(sw.Int32, sw.Generic)).shape == (2, 3)
    assert strict(np.asarray, planes()).shape == (3,)


@pytest.mark.spec(f"{ARRAY}#7")
def test_the_bulk_read_checks_its_destination():
    t = window()
    with pytest.raises(ValueError, match="holds 20 bytes; the tensor's encoded values need 24"):
        t._read_encoded_into(bytearray(20))
    with pytest.raises(BufferError):
        t._read_encoded_into(bytes(24))
    out = bytearray(24)
    t._read_encoded_into(out)
    assert np.frombuffer(out, dtype=np.float32).tolist() == [1, 2, 5, 6, 9, 10]
    assert t.carrier.version == 0


@pytest.mark.spec(f"{ARRAY}#8", f"{ARRAY}#9")
@pytest.mark.parametrize("carrier_class", [sw.CPU, sw.Generic])
def test_a_released_carrier_fails_naming_it(carrier_class):
    t = window(sw.Float32, carrier_class)
    t.carrier.release()
    with pytest.raises(RuntimeError) as info:
        strict(np.asarray, t)
    label = label_of(t.carrier)
    assert label in str(info.value) and "released" in str(info.value)
    with pytest.raises(ValueError):
        strict(np.asarray, t, copy=False)
    assert t.carrier.is_released and t.carrier.version == 0


@pytest.mark.spec(f"{ARRAY}#9")
def test_array_changes_no_version():
    tensors = [window(), window(sw.Bool), window(sw.Int32, sw.Generic)]
    for t in tensors:
        for copy in (None, True):
            strict(np.array, t, copy=copy)
    strict(np.asarray, planes())
    assert [t.carrier.version for t in tensors] == [0, 0, 0]


# -- repr --------------------------------------------------------------------------------


def shown_values(text: str) -> list[str]:
    """The value texts a repr shows (numbers, True/False, inf, nan), in order."""
    body = text[len("Tensor(") : text.index(", dtype=")]
    return [token for token in re.findall(r"-?[\w.+]+", body) if token != "..."]


@pytest.mark.spec(
    f"{TEXT}/show-a-small-tensors-values-and-representation", f"{TEXT}#1", f"{TEXT}#2"
)
def test_show_a_small_tensors_values_and_representation():
    t = sw.tensor([[1, 2, 3], [4, 5, 6]])
    assert repr(t) == (
        "Tensor([[1, 2, 3],\n        [4, 5, 6]], dtype=Int32, layout=(2,3):(1,2), offset=0, "
        f"carrier={label_of(t.carrier)})"
    )
    w = window()
    assert repr(w) == (
        "Tensor([[ 1.0,  5.0,  9.0],\n        [ 2.0,  6.0, 10.0]], dtype=Float32, "
        f"layout=(2,3):(1,4), offset=1, carrier={label_of(w.carrier)})"
    )
    assert repr(w).count("\n") == 1


@pytest.mark.spec(f"{TEXT}#1", f"{TEXT}#2")
def test_every_kind_of_value_reads_as_specified():
    f = sw.tensor([0.1, 1.0, -2.5, float("inf"), float("-inf"), float("nan"), 1e20, 1 / 3])
    assert shown_values(repr(f)) == [
        "0.1", "1.0", "-2.5", "inf", "-inf", "nan", "1e+20", "0.33333334",
    ]  # fmt: skip
    g = sw.Tensor(sw.Generic(sw.Floating, values=[0.1, 1 / 3]), sw.Layout(2))
    assert shown_values(repr(g)) == ["0.1", "0.3333333333333333"]
    b = sw.tensor([True, False])
    assert repr(b).startswith("Tensor([ True, False], dtype=Bool")
    a = sw.Tensor(sw.Generic(sw.Any, values=[1, 2.0, False]), sw.Layout(3))
    assert repr(a).startswith("Tensor([    1,   2.0, False], dtype=Any")
    scalar = sw.full((), -7, dtype=sw.Int32)
    assert repr(scalar).startswith("Tensor(-7, dtype=Int32, layout=():(), offset=0")
    assert repr(sw.zeros(0)).startswith("Tensor([], dtype=Float32, layout=0:1, offset=0")
    assert repr(sw.zeros((2, 0))).startswith("Tensor([[],\n        []], dtype=Float32")
    p = planes()
    labels = [label_of(q.carrier) for q in p.planes]
    assert repr(p) == (
        "Tensor([(0.5, 7), (1.5, 8), (2.5, 9)], dtype=compound(x=Float32, n=Int32), "
        f"planes=[x: layout=3:1, offset=0, carrier={labels[0]}; "
        f"n: layout=3:1, offset=0, carrier={labels[1]}])"
    )


@pytest.mark.spec(f"{TEXT}#2")
def test_a_third_leaf_mode_separates_blocks_with_a_blank_line():
    t = sw.arange(0, 8, dtype=sw.Int32).relayout(sw.Layout((2, 2, 2)))
    assert repr(t).startswith(
        "Tensor([[[0, 4],\n         [2, 6]],\n\n        [[1, 5],\n         [3, 7]]], dtype=Int32"
    )
    assert t.tolist() == [[[0, 4], [2, 6]], [[1, 5], [3, 7]]]


@pytest.mark.spec(f"{TEXT}/summarize-a-large-tensor", f"{TEXT}#3")
def test_summarize_a_large_tensor():
    base = sw.arange(0, 10_000, dtype=sw.Float32)
    huge = base.broadcast_to((10_000, 10**8))  # 10^12 elements: reading them all never ends
    text = repr(huge)
    values = shown_values(text)
    assert len(values) == 36 and set(values) == {"0.0", "1.0", "2.0", "9997.0", "9998.0", "9999.0"}
    assert text.startswith("Tensor([[   0.0,    0.0,    0.0, ...,    0.0,    0.0,    0.0],\n")
    assert "\n        ...,\n" in text
    assert text.endswith(
        f"layout=(10000,100000000):(1,0), offset=0, carrier={label_of(base.carrier)})"
    )


@pytest.mark.spec(f"{TEXT}#3")
def test_the_threshold_is_a_thousand_elements():
    assert "..." not in repr(sw.arange(0, 1000, dtype=sw.Int32))
    assert len(shown_values(repr(sw.arange(0, 1000, dtype=sw.Int32)))) == 1000
    summarized = repr(sw.arange(0, 1001, dtype=sw.Int32))
    assert summarized.startswith("Tensor([   0,    1,    2, ...,  998,  999, 1000], dtype=Int32")
    short_modes = sw.zeros((6, 200))  # 1200 elements: only the long mode is cut
    assert len(shown_values(repr(short_modes))) == 36


@pytest.mark.spec(f"{TEXT}#3")
def test_many_short_modes_shrink_until_a_thousand_values_remain():
    t = sw.full(1, 5, dtype=sw.Int32).broadcast_to((2,) * 40)  # 2^40 elements, all modes short
    values = shown_values(repr(t))
    assert 0 < len(values) <= 1000 and set(values) == {"5"}
    three = sw.arange(0, 20, dtype=sw.Int32).broadcast_to((20, 10**3, 10**3))
    shown = shown_values(repr(three))
    assert len(shown) == 6 * 6 * 6


@pytest.mark.spec(f"{TEXT}/show-a-released-carrier", f"{TEXT}#4")
def test_show_a_released_carrier():
    t = window(sw.Float32, sw.Generic)
    label = label_of(t.carrier)
    t.carrier.release()
    assert repr(t) == (
        "Tensor(<released>, dtype=Float32, layout=(2,3):(1,4), offset=1, "
        f"carrier={label} (released))"
    )
    p = planes()
    p.planes[1].carrier.release()
    text = repr(p)
    assert text.startswith("Tensor(<released>, dtype=compound(x=Float32, n=Int32), planes=[x: ")
    assert text.endswith(f"carrier={label_of(p.planes[1].carrier)} (released)])")
    assert "(released)" not in text.split(";")[0]


@pytest.mark.spec(f"{TEXT}#5")
def test_repr_changes_no_version():
    tensors = [window(), window(sw.Bool, sw.Generic), sw.arange(0, 5000, dtype=sw.Int32)]
    for t in tensors:
        repr(t)
    repr(planes())
    assert [t.carrier.version for t in tensors] == [0, 0, 0]


# -- len, iteration and truth ----------------------------------------------------------------


@pytest.mark.spec(f"{LEN}/iterate-the-first-mode", f"{LEN}#1", f"{LEN}#2")
def test_iterate_the_first_mode():
    t = window()
    assert len(t) == 2
    rows = list(t)
    assert len(rows) == 2
    for i, row in enumerate(rows):
        assert isinstance(row, sw.Tensor) and row.carrier is t.carrier
        assert row.shape == (3,) and row.tolist() == t.tolist()[i]
    items = list(rows[1])
    assert [item.shape for item in items] == [(), (), ()]
    assert [item.tolist() for item in items] == t.tolist()[1]
    assert all(item.carrier is t.carrier for item in items)


@pytest.mark.spec(f"{LEN}#1", f"{LEN}#2")
def test_a_tuple_shaped_first_mode_counts_its_size():
    t = sw.Tensor(sw.CPU(sw.Int32, values=range(24)), sw.Layout(((2, 3), 4)))
    assert len(t) == 6
    assert [row.tolist() for row in t] == [[i + 6 * k for k in range(4)] for i in range(6)]
    assert len(sw.zeros(0)) == 0 and list(sw.zeros(0)) == []
    assert len(sw.zeros((0, 3))) == 0


@pytest.mark.spec(f"{LEN}/refuse-len-and-iteration-of-a-rank-0-tensor", f"{LEN}#1", f"{LEN}#3")
def test_refuse_len_and_iteration_of_a_rank_0_tensor():
    t = sw.full((), 1.5)
    with pytest.raises(TypeError, match=r"len\(\) of a 0-d tensor"):
        len(t)
    with pytest.raises(TypeError, match="0-d tensor"):
        iter(t)
    assert t.carrier.version == 0


@pytest.mark.spec(f"{LEN}#3")
def test_iterating_a_multi_subtensor_tensor_is_not_implemented():
    p = planes()
    assert len(p) == 3
    with pytest.raises(NotImplementedError, match="iteration"):
        iter(p)
    assert [q.carrier.version for q in p.planes] == [0, 0]


@pytest.mark.spec(f"{LEN}#4")
def test_truth_is_numpys():
    assert bool(sw.tensor([3])) is True
    assert bool(sw.full((), 0.0)) is False
    assert bool(sw.tensor([[False]])) is False
    for ambiguous in (sw.tensor([1, 2]), sw.zeros(0), sw.zeros((2, 0))):
        with pytest.raises(ValueError, match="ambiguous"):
            bool(ambiguous)


# -- Python scalars and numpy() ------------------------------------------------------------

SCALAR = "core-tensor-representation/a-one-element-tensor-converts-to-a-python-scalar"
NUMPY = "core-tensor-representation/numpy-is-the-zero-copy-numpy-view"


def one_element(dtype, value, carrier_class=sw.CPU):
    """A (1, (1, 1)) tensor over a gapped layout at offset 3, whose one element is value."""
    fill = {sw.Bool: False, sw.Int32: 0}.get(dtype, 0.0)
    values = [fill] * 8
    values[3] = value
    layout = sw.Layout((1, (1, 1)), (5, (7, 2)))
    return sw.Tensor(carrier_class(dtype, values=values), layout, offset=3)


@pytest.mark.spec(f"{SCALAR}/convert-a-one-element-tensor", f"{SCALAR}#1", f"{SCALAR}#2")
def test_convert_a_one_element_tensor():
    t = one_element(sw.Float32, -2.75)
    assert t.shape == (1, (1, 1))
    for got, expected in ((t.item(), -2.75), (float(t), -2.75), (int(t), -2)):
        assert got == expected and type(got) is type(expected)
    i = sw.full((), 7, dtype=sw.Int32)
    b = sw.full((), True)
    assert (i.item(), type(i.item())) == (7, int)
    assert (b.item(), type(b.item())) == (True, bool)
    assert (float(i), int(b), float(b)) == (7.0, 1, 1.0)


@pytest.mark.spec(f"{SCALAR}#1")
@pytest.mark.parametrize("carrier_class", [sw.Generic, sw.FileBacked, sw.Metal])
def test_any_readable_carrier_converts(carrier_class):
    t = one_element(sw.Int32, -9, carrier_class)
    assert (t.item(), float(t), int(t), bool(t)) == (-9, -9.0, -9, True)


@pytest.mark.spec(f"{SCALAR}#1", f"{SCALAR}#2")
def test_abstract_and_compound_values():
    floating = sw.Tensor(sw.Generic(sw.Floating, values=[1.5]), sw.Layout(1))
    assert floating.item() == 1.5 and float(floating) == 1.5 and int(floating) == 1
    record = sw.Tensor.from_planes(COMPOUND, [sw.tensor([0.5]), sw.tensor([4])])
    assert record.item() == (0.5, 4)
    for convert in (float, int):
        with pytest.raises(TypeError, match=r"compound\(x=Float32, n=Int32\)"):
            convert(record)


@pytest.mark.spec(f"{SCALAR}/refuse-a-tensor-of-several-elements", f"{SCALAR}#3", f"{SCALAR}#6")
@pytest.mark.parametrize(
    ("make", "size"),
    [
        (lambda: sw.tensor([1.0, 2.0]), 2),
        (lambda: sw.zeros((1, 2), dtype=sw.Int32), 2),
        (lambda: sw.zeros(0), 0),
        (lambda: sw.zeros((3, 0)), 0),
    ],
)
def test_refuse_a_tensor_of_several_elements(make, size):
    t = make()
    for convert in (lambda t: t.item(), float, int):
        with pytest.raises(ValueError) as info:
            convert(t)
        message = str(info.value)
        assert "only a one-element tensor converts to a Python scalar" in message
        assert f"{size} elements" in message
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    assert t.carrier.version == 0


@pytest.mark.spec(f"{SCALAR}#4", f"{SCALAR}#6")
def test_a_released_carrier_fails_to_convert():
    t = one_element(sw.Float32, 1.0)
    t.carrier.release()
    for convert in (lambda t: t.item(), float, int, bool):
        with pytest.raises(RuntimeError) as info:
            convert(t)
        assert label_of(t.carrier) in str(info.value)
    assert t.carrier.version == 0


@pytest.mark.spec(f"{SCALAR}#5")
def test_a_tensor_is_no_index_and_no_element_value():
    t = sw.full((), 2, dtype=sw.Int32)
    assert not hasattr(t, "__index__")
    with pytest.raises(TypeError):
        operator.index(t)
    with pytest.raises(TypeError):
        [10, 20, 30][t]
    for make in (
        lambda: sw.tensor([t, t]),
        lambda: sw.full(2, t),
        lambda: sw.arange(t),
        lambda: sw.CPU(sw.Int32, values=[t]),
    ):
        with pytest.raises(TypeError, match="is not a bool, an integer, a float"):
            make()
    assert t.carrier.version == 0


@pytest.mark.spec(f"{SCALAR}#6")
def test_conversions_change_no_version():
    t = one_element(sw.Int32, 5)
    assert (t.item(), float(t), int(t), bool(t)) == (5, 5.0, 5, True)
    assert t.carrier.version == 0


@pytest.mark.spec(f"{NUMPY}/view-an-exportable-tensor", f"{NUMPY}#1")
def test_numpy_views_an_exportable_tensor():
    carrier = sw.CPU(sw.Int32, values=list(range(40)))
    t = sw.Tensor(carrier, sw.Layout((2, (3, 4)), (1, (2, 6))), offset=5)
    array = t.numpy()
    assert array.shape == (2, 3, 4) and array.dtype == np.int32
    assert array.tolist() == t.tolist()
    assert data_address(array) == carrier.pointer() + 4 * 5
    assert data_address(np.asarray(t)) == data_address(array)
    array[1, 2, 3] = -1
    assert t.tolist()[1][2][3] == -1
    assert carrier.version == 0


@pytest.mark.spec(f"{NUMPY}#1")
def test_numpy_is_read_only_exactly_when_the_tensor_is_immutable():
    frozen = window(mutable=False)
    assert not frozen.numpy().flags.writeable
    assert window().numpy().flags.writeable


@pytest.mark.spec(f"{NUMPY}/refuse-a-tensor-without-a-view", f"{NUMPY}#2")
@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: window(sw.Bool), "Bool"),
        (lambda: window(sw.Float32, sw.FileBacked), "FileBacked"),
        (lambda: window(sw.Int32, sw.Generic), "Generic"),
        (lambda: window(sw.Float32, sw.Metal), "Metal"),
        (planes, "multi-subtensor"),
    ],
)
def test_refuse_a_tensor_without_a_view(make, reason):
    t = make()
    carriers = [p.carrier for p in t.planes] if t.is_multi_subtensor else [t.carrier]
    with pytest.raises(TypeError) as info:
        t.numpy()
    message = str(info.value)
    assert "np.array(t)" in message and reason in message
    assert [c.version for c in carriers] == [0] * len(carriers)
    assert strict(np.array, t).tolist() == t.tolist()  # the copy the message names


@pytest.mark.spec(f"{NUMPY}#3")
def test_numpy_of_a_released_carrier_fails_naming_it():
    t = window()
    t.carrier.release()
    with pytest.raises(RuntimeError) as info:
        t.numpy()
    assert label_of(t.carrier) in str(info.value) and "released" in str(info.value)
    assert t.carrier.version == 0
    empty = sw.Tensor(sw.CPU(sw.Float32, 2), sw.Layout(0))
    empty.carrier.release()
    assert empty.numpy().shape == (0,)  # no element to read: the empty view exports
