"""core-tensor-representation: validated planes and the per-plane boundary."""

import pytest

import strideweave as sw

PLANES = "core-tensor-representation/multi-subtensor-tensors-are-validated-planes"
BOUNDARY = (
    "core-tensor-representation/"
    "operations-without-per-plane-semantics-reject-multi-subtensor-tensors"
)

RECORD = sw.compound(x=sw.Float32, n=sw.Int32)


def planes():
    xs = sw.tensor([0.5, 1.5, 2.5])
    ns = sw.Tensor(sw.CPU(sw.Int32, values=[0, 10, 20, 30, 40]), sw.Layout(3, 2))
    return xs, ns


@pytest.mark.spec(f"{PLANES}/build-planes-for-a-compound-dtype", f"{PLANES}#1", f"{PLANES}#3")
def test_build_planes_for_a_compound_dtype():
    xs, ns = planes()
    t = sw.Tensor.from_planes(RECORD, [xs, ns])
    assert t.is_multi_subtensor
    assert t.dtype == RECORD
    assert t.shape == 3
    assert [p.tolist() for p in t.planes] == [xs.tolist(), ns.tolist()]
    assert t.tolist() == [(0.5, 0), (1.5, 20), (2.5, 40)]
    assert not xs.is_multi_subtensor


@pytest.mark.spec(f"{PLANES}/reject-mismatched-planes", f"{PLANES}#2")
def test_reject_mismatched_planes():
    xs, ns = planes()
    with pytest.raises(ValueError, match="2 fields but 1 planes"):
        sw.Tensor.from_planes(RECORD, [xs])
    with pytest.raises(ValueError, match=r"plane 1 \('n'\) has dtype Float32"):
        sw.Tensor.from_planes(RECORD, [xs, xs])
    with pytest.raises(ValueError, match=r"plane 1 \('n'\) has shape 2"):
        sw.Tensor.from_planes(RECORD, [xs, ns[0:2]])
    nested = sw.Tensor.from_planes(RECORD, [xs, ns])
    with pytest.raises(ValueError, match="itself multi-subtensor"):
        sw.Tensor.from_planes(sw.compound(a=sw.Float32, b=sw.Int32), [xs, nested])


@pytest.mark.spec(f"{PLANES}#2")
def test_reject_planes_of_the_wrong_type():
    xs, ns = planes()
    with pytest.raises(TypeError, match="compound"):
        sw.Tensor.from_planes(sw.Int32, [xs, ns])
    with pytest.raises(TypeError, match="not a Tensor"):
        sw.Tensor.from_planes(RECORD, [xs, [1, 2, 3]])
    with pytest.raises(TypeError, match="dtype"):
        sw.Tensor.from_planes("record", [xs, ns])


@pytest.mark.spec(f"{BOUNDARY}/refuse-a-single-carrier-operation", f"{BOUNDARY}#1", f"{BOUNDARY}#2")
@pytest.mark.parametrize(
    ("operation", "name"),
    [
        (lambda t: t.carrier, "carrier"),
        (lambda t: t.layout, "layout"),
        (lambda t: t.offset, "offset"),
        (lambda t: t[0], "indexing"),
        (lambda t: t.relayout(sw.Layout(3)), "relayout"),
        (lambda t: t.broadcast_to((3, 2)), "broadcast_to"),
        (lambda t: t.__dlpack__(), "DLPack"),
        (lambda t: t.__dlpack_device__(), "DLPack"),
    ],
)
def test_refuse_a_single_carrier_operation(operation, name):
    xs, ns = planes()
    t = sw.Tensor.from_planes(RECORD, [xs, ns])
    before = [(p.carrier.version, p.carrier.is_released) for p in (xs, ns)]
    with pytest.raises(NotImplementedError) as info:
        operation(t)
    assert name in str(info.value)
    assert "multi-subtensor" in str(info.value)
    assert [(p.carrier.version, p.carrier.is_released) for p in (xs, ns)] == before
