"""interop-movement: __dlpack__'s signature and its copy, dl_device and stream arguments."""

import ctypes

import pytest

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.refusals import refused

VERSIONS = "interop-movement/dlpack-export-produces-version-1-0-or-the-legacy-structure-on-request"
REQ = "interop-movement/export-is-zero-copy-same-device-and-stream-agnostic"


def int_tensor(offset: int = 1) -> sw.Tensor:
    carrier = sw.CPU(sw.Int32, values=list(range(12)))
    return sw.Tensor(carrier, sw.Layout((2, 3), (1, 3)), offset)


def aliases(t: sw.Tensor, info: R.ManagedTensor) -> bool:
    return info.data == t.carrier.pointer() and info.byte_offset == t.offset * 4


@pytest.mark.spec(f"{VERSIONS}#1", f"{VERSIONS}#2")
def test_signature_defaults_and_argument_kinds():
    """All inputs default to None; stream is positional or keyword, the others keyword-only."""
    t = int_tensor()
    omitted = R.inspect(t.__dlpack__()).fields()
    for capsule in (
        t.__dlpack__(None),
        t.__dlpack__(stream=None),
        t.__dlpack__(None, max_version=None, dl_device=None, copy=None),
    ):
        assert R.inspect(capsule).fields() == omitted
    assert R.inspect(t.__dlpack__(None, max_version=(1, 0))).name == R.VERSIONED
    for call in (
        lambda: t.__dlpack__(None, (1, 0)),
        lambda: t.__dlpack__(None, None, None),
        lambda: t.__dlpack__(None, None, None, None),
        lambda: t.__dlpack__(max_version=(1, 0), unknown=1),
    ):
        with refused(TypeError, carriers=[t.carrier]):
            call()


@pytest.mark.spec(f"{REQ}/refuse-a-copy-export", f"{REQ}#3")
@pytest.mark.parametrize("copy", [True, 1, "yes", [0], 2.5])
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_refuse_a_copy_export(copy, max_version):
    """A truthy copy fails with BufferError naming copy; no capsule, nothing changed."""
    t = int_tensor()
    with refused(BufferError, "copy", carriers=[t.carrier]):
        t.__dlpack__(max_version=max_version, copy=copy)


@pytest.mark.spec(f"{REQ}#3", f"{REQ}#1")
@pytest.mark.parametrize("copy", [False, 0, None, "", [], 0.0])
def test_every_falsy_copy_produces_the_alias(copy):
    """A falsy copy exports the carrier's own storage, exactly as omitting it does."""
    t = int_tensor()
    info = R.inspect(t.__dlpack__(max_version=(1, 0), copy=copy))
    assert aliases(t, info)
    assert info.fields() == R.inspect(t.__dlpack__(max_version=(1, 0))).fields()
    assert info.flags & R.IS_COPIED == 0


@pytest.mark.spec(f"{REQ}/accept-the-tensors-own-device", f"{REQ}#6")
@pytest.mark.parametrize("device", ["reported", (1, 0), [1, 0]])
def test_accept_the_tensors_own_device(device):
    """dl_device equal to __dlpack_device__() exports the same storage."""
    t = int_tensor()
    requested = t.__dlpack_device__() if device == "reported" else device
    info = R.inspect(t.__dlpack__(max_version=(1, 0), dl_device=requested))
    assert aliases(t, info)
    assert info.device == (1, 0)


@pytest.mark.spec(f"{REQ}/refuse-a-cross-device-export", f"{REQ}#6")
@pytest.mark.parametrize("device", [(2, 0), (1, 1), (0, 0), [8, 0], (-1, 0), (1, -1), (3, 0)])
def test_refuse_a_cross_device_export(device):
    """Any other device fails with BufferError naming dl_device; nothing changed."""
    t = int_tensor()
    with refused(BufferError, "dl_device", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0), dl_device=device)


@pytest.mark.spec(f"{REQ}/refuse-a-cross-device-export", f"{REQ}#6")
@pytest.mark.parametrize("device", [(2**64, 0), (1, 2**63), (-(2**70), 0)])
def test_refuse_a_cross_device_export_beyond_64_bits(device):
    """An integer device outside 64 bits is still another device: BufferError.

    Pins a bug: the binding's int64 conversion fails first, with RuntimeError.
    """
    t = int_tensor()
    with refused(BufferError, "dl_device", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0), dl_device=device)


@pytest.mark.spec(f"{REQ}#4")
@pytest.mark.parametrize("device", ["cpu", 1, {1: 0}, range(2), 1.0, object()])
def test_reject_a_device_that_is_not_a_tuple_or_list(device):
    """dl_device other than None, a tuple or a list fails with TypeError naming dl_device."""
    t = int_tensor()
    with refused(TypeError, "dl_device", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0), dl_device=device)


@pytest.mark.spec(f"{REQ}#5")
@pytest.mark.parametrize("device", [(), (1,), [1], (1, 0, 0), [1, 0, 0]])
def test_reject_a_device_of_the_wrong_length(device):
    """dl_device with other than two elements fails with ValueError naming dl_device."""
    t = int_tensor()
    with refused(ValueError, "dl_device", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0), dl_device=device)


@pytest.mark.spec(f"{REQ}#7")
@pytest.mark.parametrize("stream", [None, 0, -1, 1, 2, "x", 1.5, object()])
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_stream_in_any_form_leaves_the_result_identical(stream, max_version):
    """Positional or keyword, any stream gives the same capsule contents as omitting it."""
    t = int_tensor()
    omitted = R.inspect(t.__dlpack__(max_version=max_version))
    for capsule in (
        t.__dlpack__(stream, max_version=max_version),
        t.__dlpack__(stream=stream, max_version=max_version),
    ):
        info = R.inspect(capsule)
        assert info.fields() == omitted.fields()
        assert aliases(t, info)


class _IndexClearing:
    """An integer-like whose __index__ empties the list that holds it."""

    def __init__(self, holder: list, value: int):
        self.holder, self.value = holder, value

    def __index__(self) -> int:
        self.holder.clear()
        self.holder.extend([object()] * 5)
        return self.value


@pytest.mark.spec(f"{VERSIONS}/produce-a-versioned-capsule-for-a-1-x-consumer", f"{VERSIONS}#3")
def test_a_max_version_list_changed_while_it_is_read():
    """The elements are read from a snapshot: the list's own change does not reach the export.

    Pins a crash: the binding read the list's items after an element's __index__ had
    cleared the list, and dereferenced freed memory.
    """
    t = int_tensor()
    ceiling: list = []
    ceiling.extend([_IndexClearing(ceiling, 1), 0])
    info = R.inspect(t.__dlpack__(max_version=ceiling))
    assert (info.name, info.version) == (R.VERSIONED, (1, 0))
    assert len(ceiling) == 5  # the __index__ ran and changed the list


@pytest.mark.spec(f"{REQ}/accept-the-tensors-own-device", f"{REQ}#6")
def test_a_dl_device_list_changed_while_it_is_read():
    """dl_device is read from a snapshot too; (1, 0) as read is the tensor's own device."""
    t = int_tensor()
    device: list = []
    device.extend([_IndexClearing(device, 1), 0])
    info = R.inspect(t.__dlpack__(max_version=(1, 0), dl_device=device))
    assert aliases(t, info)
    assert len(device) == 5


@pytest.mark.spec(f"{REQ}#4", f"{VERSIONS}/reject-a-malformed-version-ceiling")
@pytest.mark.parametrize("argument", ["max_version", "dl_device"])
def test_an_element_whose_index_raises(argument):
    """An exception from an element's __index__ propagates unchanged; nothing is exported."""

    class Failing:
        def __index__(self):
            raise ZeroDivisionError("from __index__")

    t = int_tensor()
    with refused(ZeroDivisionError, "from __index__", carriers=[t.carrier]):
        t.__dlpack__(**{"max_version": (1, 0), argument: [Failing(), 0]})


@pytest.mark.spec(f"{VERSIONS}#1", f"{VERSIONS}#2", f"{REQ}/refuse-a-copy-export")
def test_one_call_site_with_changing_values():
    """A call site passes one keyword-name tuple every time; each call reads its own values."""
    t = int_tensor()
    for copy, max_version in [(False, (1, 0)), (True, (1, 0)), (None, None), (1, None)]:
        if copy:
            with refused(BufferError, "copy", carriers=[t.carrier]):
                t.__dlpack__(copy=copy, max_version=max_version)
        else:
            info = R.inspect(t.__dlpack__(copy=copy, max_version=max_version))
            assert info.name == (R.VERSIONED if max_version else R.LEGACY)
            assert aliases(t, info)
    # The same names in another order, then a stream given twice, through one call site each.
    for _ in range(2):
        assert R.inspect(t.__dlpack__(max_version=(1, 0), copy=False)).name == R.VERSIONED
        with refused(TypeError, "multiple values", "stream", carriers=[t.carrier]):
            t.__dlpack__(None, stream=None)


@pytest.mark.spec(f"{VERSIONS}#1", f"{VERSIONS}#2")
@pytest.mark.parametrize(
    "names", [("copy", "copy"), ("max_version", "copy", "max_version"), ("stream", "stream")]
)
def test_a_keyword_given_twice_in_one_vectorcall(names):
    """A keyword-name tuple that repeats a name (only C callers can build one) is refused."""
    t = int_tensor()
    kwnames = tuple(names)
    values = (ctypes.py_object * len(names))(*([None] * len(names)))
    vectorcall = ctypes.pythonapi.PyObject_Vectorcall
    vectorcall.restype = ctypes.py_object
    vectorcall.argtypes = [
        ctypes.py_object,
        ctypes.POINTER(ctypes.py_object),
        ctypes.c_size_t,
        ctypes.py_object,
    ]
    with refused(TypeError, "multiple values", names[-1], carriers=[t.carrier]):
        vectorcall(t.__dlpack__, values, 0, kwnames)
    # The refused tuple was not remembered: a well-formed call still works.
    assert R.inspect(t.__dlpack__(copy=None, max_version=(1, 0))).name == R.VERSIONED
