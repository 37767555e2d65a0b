"""core-tensor-representation: logical dtypes."""

import pytest

import strideweave as sw

REQ = (
    "core-tensor-representation/"
    "logical-dtypes-are-concrete-scalars-abstract-families-or-compound-records"
)


@pytest.mark.spec(f"{REQ}/describe-the-scalar-dtypes", f"{REQ}#1", f"{REQ}#4")
def test_describe_the_scalar_dtypes():
    concrete = [(sw.Bool, 1), (sw.Int32, 4), (sw.Float32, 4)]
    for dtype, size in concrete:
        assert dtype.is_concrete and not dtype.is_abstract and not dtype.is_compound
        assert dtype.itemsize == size
        assert dtype.fields == []
    for dtype in (sw.Floating, sw.Any):
        assert dtype.is_abstract and not dtype.is_concrete
        assert dtype.itemsize is None
    names = [d.name for d in (sw.Bool, sw.Int32, sw.Float32, sw.Floating, sw.Any)]
    assert names == ["Bool", "Int32", "Float32", "Floating", "Any"]
    assert len({sw.Bool, sw.Int32, sw.Float32, sw.Floating, sw.Any}) == 5
    assert repr(sw.Float32) == "Float32"


@pytest.mark.spec(f"{REQ}/build-a-compound-dtype", f"{REQ}#2", f"{REQ}#3", f"{REQ}#4")
def test_build_a_compound_dtype():
    d = sw.compound(x=sw.Float32, n=sw.Int32)
    assert d.is_compound and not d.is_concrete and not d.is_abstract
    assert d.fields == [("x", sw.Float32), ("n", sw.Int32)]
    assert d.itemsize == 8
    same = sw.compound([("x", sw.Float32), ("n", sw.Int32)])
    assert d == same and hash(d) == hash(same)
    assert d != sw.compound(n=sw.Int32, x=sw.Float32)
    assert d.name == "compound(x=Float32, n=Int32)"


@pytest.mark.spec(f"{REQ}/reject-a-malformed-compound-dtype", f"{REQ}#2")
@pytest.mark.parametrize(
    ("args", "kwargs", "error", "subject"),
    [
        ((), {"x": sw.Floating}, TypeError, "'x'"),
        ((), {"x": sw.compound(y=sw.Int32)}, TypeError, "'x'"),
        ((), {"x": "float"}, TypeError, "'x'"),
        ((), {}, ValueError, "at least one field"),
        (([("x", sw.Int32), ("x", sw.Bool)],), {}, ValueError, "'x'"),
        (([("", sw.Int32)],), {}, ValueError, "empty"),
    ],
)
def test_reject_a_malformed_compound_dtype(args, kwargs, error, subject):
    with pytest.raises(error) as info:
        sw.compound(*args, **kwargs)
    assert subject in str(info.value)
