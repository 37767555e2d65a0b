"""interop-movement: carriers opt into DLPack through their dlpack_info() hook."""

import numpy as np
import pytest

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.refusals import live_exports, refused

REQ = "interop-movement/a-carrier-opts-into-dlpack-through-dlpack-info"
HOOK = "carrier-storage/carriers-opt-into-dlpack-through-the-dlpack-info-hook"


class Reporting(sw.CPU):
    """A CPU whose hook returns whatever the test sets in ``report``."""

    report = None

    def dlpack_info(self):
        return self.report


def reporting(report) -> sw.Tensor:
    carrier = Reporting(sw.Float32, values=[1.0, 2.0, 3.0, 4.0])
    carrier.report = report
    return sw.Tensor(carrier, sw.Layout(3), 1)


def both_calls(t: sw.Tensor):
    return (lambda: t.__dlpack__(max_version=(1, 0)), t.__dlpack_device__)


@pytest.mark.spec(f"{REQ}/export-a-cpu-tensor", f"{REQ}#1", f"{REQ}#8", f"{HOOK}#3")
def test_export_a_cpu_tensor():
    """CPU reports its pointer on device (1, 0) and the consumer aliases that memory."""
    t = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    c = t.carrier
    assert c.dlpack_info() == {"pointer": c.pointer(), "device_type": 1, "device_id": 0}
    assert t.__dlpack_device__() == (1, 0)
    assert R.inspect(t.__dlpack__(max_version=(1, 0))).device == (1, 0)
    array = np.from_dlpack(t)
    assert array.__array_interface__["data"][0] == c.pointer()
    array[2] = 9.0
    assert c.read(2) == 9.0


def evictable_over_cpu(dtype: sw.DType, values: list, evicted: bool) -> sw.Evictable:
    e = sw.Evictable(sw.CPU(dtype, values=values), sw.FileBacked(dtype))
    if evicted:
        e.evict()
    return e


# The non-exporting carriers of the scenario: Generic, FileBacked, and Evictable (over a
# CPU fast tier, resident and evicted: it refuses even when its values are in host memory).
NON_EXPORTING = {
    "Generic": lambda dtype, values: sw.Generic(dtype, values=values),
    "FileBacked": lambda dtype, values: sw.FileBacked(dtype, values=values),
    "Evictable-resident": lambda dtype, values: evictable_over_cpu(dtype, values, False),
    "Evictable-evicted": lambda dtype, values: evictable_over_cpu(dtype, values, True),
}


@pytest.mark.spec(f"{REQ}/reject-a-non-exporting-carrier", f"{REQ}#2", f"{REQ}#8", f"{HOOK}#2")
@pytest.mark.spec("carrier-composition/evictable-refuses-dlpack-export#1")
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32])
@pytest.mark.parametrize("kind", sorted(NON_EXPORTING))
def test_reject_a_non_exporting_carrier(kind, dtype):
    """Generic, FileBacked and Evictable fail every call with the same BufferError naming
    the class; nothing changed (FileBacked: its file neither; Evictable: its tiers neither).
    """
    carrier = NON_EXPORTING[kind](dtype, [1, 2, 3])
    name = carrier.carrier_class.name
    t = sw.Tensor(carrier, sw.Layout(3))
    content = t.carrier.tolist()
    watched = [carrier, carrier.fast, carrier.slow] if kind.startswith("Evictable") else [carrier]
    messages = []
    for call in (t.__dlpack__, *both_calls(t)):
        with refused(BufferError, name, carriers=watched) as info:
            call()
        messages.append(str(info.value))
    assert len(set(messages)) == 1
    with refused(BufferError, name, carriers=watched):
        np.from_dlpack(t)
    assert t.carrier.tolist() == content
    if type(carrier) is sw.FileBacked:
        np_dtype = np.float32 if dtype == sw.Float32 else np.int32
        assert np.fromfile(t.carrier.path, np_dtype).tolist() == content


@pytest.mark.spec(f"{REQ}#2", f"{HOOK}#2")
def test_a_subclass_that_keeps_the_default_hook_is_refused_by_name():
    """A Python subclass of Generic without an override is refused naming its own class."""

    class Plain(sw.Generic):
        pass

    t = sw.Tensor(Plain(sw.Float32, 2), sw.Layout(2))
    for call in both_calls(t):
        with refused(BufferError, "Plain", carriers=[t.carrier]):
            call()


@pytest.mark.spec(f"{REQ}#3", f"{REQ}#4")
@pytest.mark.parametrize("report", [5, None, 2.5, [1, 2, 3], ["abc"], object()])
def test_a_value_not_convertible_to_a_dict_fails_with_type_error(report):
    """Both calls fail with TypeError naming dlpack_info when dict(value) is impossible."""
    t = reporting(report)
    for call in both_calls(t):
        with refused(TypeError, "dlpack_info", carriers=[t.carrier]):
            call()


class PointerMapping:
    """A mapping that is not a dict: dict() converts it through keys() and __getitem__."""

    def __init__(self, pointer):
        self.entries = {"pointer": pointer, "device_type": 1, "device_id": 0}

    def keys(self):
        return self.entries.keys()

    def __getitem__(self, key):
        return self.entries[key]


@pytest.mark.spec(f"{REQ}#3")
@pytest.mark.parametrize("form", ["pairs", "mapping"])
def test_a_value_convertible_to_a_dict_is_accepted(form):
    """A sequence of pairs or a mapping reporting the CPU pointer exports that storage."""
    t = reporting(None)
    pointer = t.carrier.pointer()
    pairs = [("pointer", pointer), ("device_type", 1), ("device_id", 0)]
    t.carrier.report = pairs if form == "pairs" else PointerMapping(pointer)
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert (info.data, info.byte_offset, info.device) == (pointer, 4, (1, 0))
    assert np.from_dlpack(t).tolist() == [2.0, 3.0, 4.0]


@pytest.mark.spec(f"{REQ}#4")
@pytest.mark.parametrize("missing", ["pointer", "device_type", "device_id"])
def test_a_missing_key_fails_with_key_error(missing):
    """A converted value without one of the keys fails with KeyError naming that key."""
    t = reporting(None)
    report = {"pointer": t.carrier.pointer(), "device_type": 1, "device_id": 0}
    del report[missing]
    t.carrier.report = report
    for call in both_calls(t):
        with refused(KeyError, missing, carriers=[t.carrier]):
            call()


@pytest.mark.spec(f"{REQ}#5")
def test_additional_keys_are_ignored():
    """Extra keys change neither the device nor the managed tensor."""
    t = reporting(None)
    plain = {"pointer": t.carrier.pointer(), "device_type": 1, "device_id": 0}
    t.carrier.report = plain
    expected = R.inspect(t.__dlpack__(max_version=(1, 0))).fields()
    t.carrier.report = {**plain, "device": (2, 0), "byte_offset": 64, "readonly": True}
    assert t.__dlpack_device__() == (1, 0)
    assert R.inspect(t.__dlpack__(max_version=(1, 0))).fields() == expected


class HookFailure(Exception):
    pass


@pytest.mark.spec(f"{REQ}#5")
@pytest.mark.parametrize(
    "error",
    [HookFailure("no export today"), BufferError("busy"), KeyError("pointer"), TypeError("odd")],
)
def test_an_exception_the_hook_raises_propagates_unchanged(error):
    """The very exception object the hook raised reaches the caller of both calls."""

    class Raising(sw.CPU):
        def dlpack_info(self):
            raise error

    t = sw.Tensor(Raising(sw.Float32, 2), sw.Layout(2))
    for call in both_calls(t):
        with refused(type(error), carriers=[t.carrier]) as info:
            call()
        assert info.value is error


@pytest.mark.spec(f"{REQ}#6")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_a_null_pointer_with_elements_fails(max_version):
    """A hook reporting pointer 0 for a tensor with elements fails with BufferError."""
    t = reporting({"pointer": 0, "device_type": 1, "device_id": 0})
    assert t.__dlpack_device__() == (1, 0)
    with refused(BufferError, "null", carriers=[t.carrier]):
        t.__dlpack__(max_version=max_version)


@pytest.mark.spec(f"{REQ}#6", f"{HOOK}#3")
def test_a_released_cpu_carrier_fails_rather_than_export_dangling_storage():
    """Once released, CPU reports pointer 0 and exporting its tensor fails with BufferError."""
    t = sw.Tensor(sw.CPU(sw.Int32, values=[1, 2, 3]), sw.Layout(3))
    t.carrier.release()
    assert t.carrier.dlpack_info() == {"pointer": 0, "device_type": 1, "device_id": 0}
    with refused(BufferError, "null", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0))


class ForeignDevice(sw.Generic):
    """A carrier reporting device (8, 3) (kDLMetal) for memory borrowed from a live CPU carrier."""

    def __init__(self, backing: sw.CPU):
        super().__init__(backing.dtype, backing.slots)
        self.backing = backing

    def dlpack_info(self):
        return {"pointer": self.backing.pointer(), "device_type": 8, "device_id": 3}


@pytest.mark.spec(f"{REQ}/report-a-foreign-device-verbatim", f"{REQ}#7")
def test_report_a_foreign_device_verbatim():
    """The hook's device is reported, carried in the managed tensor and accepted as dl_device."""
    backing = sw.CPU(sw.Float32, 6)
    t = sw.Tensor(ForeignDevice(backing), sw.Layout((2, 2), (1, 3)), 1)
    baseline = live_exports()
    assert t.__dlpack_device__() == (8, 3)
    for requested in (None, (8, 3), [8, 3], t.__dlpack_device__()):
        info = R.inspect(t.__dlpack__(max_version=(1, 0), dl_device=requested))
        assert info.device == (8, 3)
        assert (info.data, info.byte_offset) == (backing.pointer(), 4)
        assert (info.shape, info.strides) == ((2, 2), (1, 3))
    assert R.inspect(t.__dlpack__()).device == (8, 3)
    assert live_exports() == baseline
    for other in ((1, 0), (8, 0), (2, 3)):
        with refused(BufferError, "dl_device", carriers=[t.carrier, backing]):
            t.__dlpack__(max_version=(1, 0), dl_device=other)


@pytest.mark.spec(f"{HOOK}/refuse-an-overrides-malformed-field", f"{HOOK}#5")
@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("pointer", -1, ValueError),
        ("pointer", 2**64, ValueError),
        ("pointer", -(2**70), ValueError),
        ("pointer", "0x10", TypeError),
        ("pointer", 16.0, TypeError),
        ("pointer", True, TypeError),
        ("device_type", 2**40, ValueError),
        ("device_type", -(2**31) - 1, ValueError),
        ("device_type", None, TypeError),
        ("device_id", 2**31, ValueError),
        ("device_id", "0", TypeError),
    ],
)
def test_refuse_an_overrides_malformed_field(key, value, error):
    """A clear error naming the class, the key and the value, never pybind11's cast message."""
    report = {"pointer": 4096, "device_type": 1, "device_id": 0, key: value}
    t = reporting(report)
    with refused(error, "Reporting", key, repr(value), carriers=[t.carrier]) as info:
        t.__dlpack__(max_version=(1, 0))
    assert "cast" not in str(info.value)


@pytest.mark.spec(f"{HOOK}#5")
def test_the_largest_pointer_is_accepted():
    """2**64 - 1 is a valid address for the hook; the pointer it reports reaches the capsule."""
    t = reporting({"pointer": 2**64 - 64, "device_type": 1, "device_id": 0})
    capsule = t.__dlpack__(max_version=(1, 0))
    assert R.inspect(capsule).data == 2**64 - 64
