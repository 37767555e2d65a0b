"""core-tensor-representation: logical dtypes, dtype arguments and the narrowing warning."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

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


# -- dtype arguments and the narrowing warning ---------------------------------------------

ARGS = "core-tensor-representation/dtype-arguments-name-a-strideweave-dtype"
NARROW = "core-tensor-representation/narrowing-numpy-or-pytorch-data-warns"

# Every other name of Float32, Int32 and Bool a dtype parameter accepts.
OTHER_NAMES = [
    (np.float32, sw.Float32),
    (np.dtype("float32"), sw.Float32),
    (np.dtype(">f4"), sw.Float32),  # the logical dtype; byte order is the buffer's business
    (np.int32, sw.Int32),
    (np.intc, sw.Int32),
    (np.dtype("int32"), sw.Int32),
    (np.bool_, sw.Bool),
    (np.dtype(bool), sw.Bool),
    (torch.float32, sw.Float32),
    (torch.int32, sw.Int32),
    (torch.bool, sw.Bool),
    ("float32", sw.Float32),
    ("int32", sw.Int32),
    ("bool", sw.Bool),
]

# Objects no dtype parameter accepts.
NOT_DTYPES = [
    np.float64,
    np.dtype("int64"),
    np.int64,
    np.floating,  # abstract: NumPy itself refuses it as a dtype
    np.float32(1.0),  # a value, not a dtype
    torch.float64,
    torch.int64,
    "float64",
    "Float32",
    "",
    3,
    float,
    object(),
]


def one(dtype) -> object:
    """A value every dtype holds: True for Bool (which takes no integer), 1 otherwise."""
    return True if dtype in (sw.Bool, np.bool_, np.dtype(bool), torch.bool, "bool") else 1


# Every dtype parameter, called with a dtype; each returns the object whose dtype it set.
DTYPE_PARAMETERS = {
    "tensor": lambda d: sw.tensor([one(d)], dtype=d),
    "zeros": lambda d: sw.zeros(2, dtype=d),
    "full": lambda d: sw.full(2, one(d), dtype=d),
    "arange": lambda d: sw.arange(2, dtype=d),
    "Generic": lambda d: sw.Generic(d, 1),
    "CPU": lambda d: sw.CPU(d, 1),
    "Metal": lambda d: sw.Metal(d, 1),
    "FileBacked": lambda d: sw.FileBacked(d, 1),
    "BlockDeviceCarrier": lambda d: sw.BlockDeviceCarrier(d, 1),
    "TiledEvictable": lambda d: sw.TiledEvictable(d, 4, 2),
    "compound": lambda d: sw.compound(x=d).fields[0][1],
}


def carrier_number() -> int:
    """The number the next carrier made takes, less one (carriers are numbered in order)."""
    return int(repr(sw.Generic(sw.Int32)).split("#")[1].split()[0])


def dtype_of(made):
    return made if isinstance(made, sw.DType) else made.dtype


@pytest.mark.spec(f"{ARGS}/name-a-dtype-the-numpy-or-pytorch-way", f"{ARGS}#1")
@pytest.mark.parametrize("parameter", sorted(DTYPE_PARAMETERS))
def test_name_a_dtype_the_numpy_or_pytorch_way(parameter):
    make = DTYPE_PARAMETERS[parameter]
    for name, dtype in OTHER_NAMES:
        if parameter in ("TiledEvictable", "arange") and dtype == sw.Bool:
            continue  # tiles hold Float32 and Int32 only (carrier-composition); no Bool range
        made = make(name)
        assert dtype_of(made) == dtype, (parameter, name)
        if isinstance(made, sw.Tensor):
            assert made.tolist() == make(dtype).tolist()


@pytest.mark.spec(f"{ARGS}#1")
def test_other_dtype_parameters_accept_the_same_names():
    """from_planes's dtype and compound's (name, dtype) pairs convert the same way."""
    pairs = sw.compound([("x", np.float32), ("n", torch.int32), ("b", "bool")])
    assert pairs == sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool)
    xs, ns = sw.tensor([0.5, 1.5]), sw.tensor([1, 2])
    planar = sw.Tensor.from_planes(sw.compound(x="float32", n=np.int32), [xs, ns])
    assert planar.dtype == sw.compound(x=sw.Float32, n=sw.Int32)
    assert planar.tolist() == [(0.5, 1), (1.5, 2)]
    with pytest.raises(TypeError, match="from_planes dtype 'float64'"):
        sw.Tensor.from_planes("float64", [xs])


@pytest.mark.spec(f"{ARGS}/refuse-a-dtype-with-no-strideweave-equivalent", f"{ARGS}#3")
@pytest.mark.parametrize("parameter", sorted(DTYPE_PARAMETERS))
def test_refuse_a_dtype_with_no_strideweave_equivalent(parameter):
    make = DTYPE_PARAMETERS[parameter]
    subject = "compound field 'x': dtype" if parameter == "compound" else f"{parameter}: dtype"
    for obj in NOT_DTYPES:
        before = carrier_number()
        with pytest.raises(TypeError) as info:
            make(obj)
        message = str(info.value)
        assert message.startswith(f"{subject} {obj!r}"[:200]), message
        assert "Float32, Int32, Bool" in message
        assert "'float32', 'int32' or 'bool'" in message
        assert carrier_number() == before + 1  # no carrier was made in between


@pytest.mark.spec(f"{ARGS}#2")
def test_recognizing_a_dtype_imports_neither_numpy_nor_pytorch():
    """In a fresh interpreter: strings convert and refusals run without importing either."""
    code = (
        "import sys, strideweave as sw\n"
        "assert sw.tensor([1], dtype='float32').dtype == sw.Float32\n"
        "assert sw.CPU('bool', 1).dtype == sw.Bool\n"
        "try:\n"
        "    sw.zeros(1, dtype='float64')\n"
        "except TypeError:\n"
        "    pass\n"
        "print(sorted(m for m in ('numpy', 'torch') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


def narrowed(call):
    """call()'s result and the UserWarnings it emitted, every other warning left alone."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.spec(f"{NARROW}/warn-on-float64-and-int64-data", f"{NARROW}#1", f"{NARROW}#2")
@pytest.mark.parametrize(
    ("make", "narrowing", "expected"),
    [
        (lambda: sw.tensor(np.array([0.1, 2.0])), "float64 -> Float32", [0.1, 2.0]),
        (lambda: sw.tensor(np.array([[1, 2]])), "int64 -> Int32", [[1, 2]]),
        (lambda: sw.tensor(np.float64(0.5)), "float64 -> Float32", 0.5),
        (lambda: sw.tensor(torch.tensor([1, 2])), "int64 -> Int32", [1, 2]),
        (lambda: sw.tensor(torch.tensor([0.25], dtype=torch.double)), "float64 -> Float32", [0.25]),
        (lambda: sw.full(2, np.float64(0.5)), "float64 -> Float32", [0.5, 0.5]),
        (lambda: sw.full(2, np.int64(3)), "int64 -> Int32", [3, 3]),
        (lambda: sw.arange(np.int64(3)), "int64 -> Int32", [0, 1, 2]),
        (lambda: sw.arange(0, 1, np.float64(0.5)), "float64 -> Float32", [0.0, 0.5]),
    ],
)
def test_warn_on_float64_and_int64_data(make, narrowing, expected):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        t = make()
    assert [w.category for w in caught] == [UserWarning]
    warning = caught[0]
    message = str(warning.message)
    assert narrowing in message
    to = narrowing.split(" -> ")[1]
    assert f"dtype=sw.{to}" in message and f'dtype="{to.lower()}"' in message
    # Attributed to the line that called the factory (here: the lambda's line above).
    assert warning.filename == __file__
    assert warning.lineno < line
    assert t.dtype == sw.Float32 if to == "Float32" else t.dtype == sw.Int32
    single = np.array(expected, dtype=np.float32 if to == "Float32" else np.int32)
    assert t.tolist() == single.tolist()


@pytest.mark.spec(f"{NARROW}#2")
def test_the_warning_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sw.tensor(np.zeros(2))
        line = sys._getframe().f_lineno - 1
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


SILENT = f"{NARROW}/stay-silent-where-nothing-narrows-unasked"


@pytest.mark.spec(SILENT, f"{NARROW}#4")
@pytest.mark.parametrize(
    "make",
    [
        lambda: sw.tensor([0.1]),
        lambda: sw.tensor(0.1),
        lambda: sw.tensor((1, 2**31 - 1)),
        lambda: sw.tensor([np.float64(0.5)]),  # a list: Python's defaults, element by element
        lambda: sw.tensor(np.array([0.1], dtype=np.float32)),
        lambda: sw.tensor(np.array([1], dtype=np.int16)),
        lambda: sw.tensor(np.array([True])),
        lambda: sw.tensor(torch.tensor([0.5])),
        lambda: sw.tensor(np.array([0.1]), dtype="float32"),
        lambda: sw.tensor(np.array([0.1]), dtype=sw.Float32),
        lambda: sw.tensor(torch.tensor([1, 2]), dtype=torch.int32),
        lambda: sw.full(2, np.float64(0.5), dtype=np.float32),
        lambda: sw.full(2, 0.5),
        lambda: sw.arange(np.int64(3), dtype="int32"),
        lambda: sw.arange(3),
    ],
)
def test_stay_silent_where_nothing_narrows_unasked(make):
    t, caught = narrowed(make)
    assert caught == []
    assert isinstance(t, sw.Tensor)


@pytest.mark.spec(f"{NARROW}#3")
def test_the_warned_result_is_the_unwarned_one():
    array = np.array([[0.1, 1e-9], [3.0, -2.5]])
    warned, caught = narrowed(lambda: sw.tensor(array))
    assert len(caught) == 1
    explicit = sw.tensor(array, dtype=sw.Float32)
    assert (warned.dtype, warned.shape, warned.layout) == (
        explicit.dtype,
        explicit.shape,
        explicit.layout,
    )
    assert warned.tolist() == explicit.tolist() == sw.tensor(array.tolist()).tolist()


@pytest.mark.spec(f"{NARROW}#5")
@pytest.mark.parametrize(
    "make",
    [
        lambda: sw.tensor(np.array([0.1])),
        lambda: sw.full(2, np.int64(1)),
        lambda: sw.arange(0, np.int64(3)),
    ],
)
def test_a_warning_made_an_error_creates_nothing(make):
    before = carrier_number()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(UserWarning, match="-> "):
            make()
    assert carrier_number() == before + 1
