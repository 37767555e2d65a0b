"""interop-movement: the produced DLPack structure follows max_version; the device query."""

import numpy as np
import pytest

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.refusals import refused

REQ = "interop-movement/dlpack-export-produces-version-1-0-or-the-legacy-structure-on-request"


def float_tensor() -> sw.Tensor:
    return sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))


@pytest.mark.spec(f"{REQ}/produce-a-versioned-capsule-for-a-1-x-consumer", f"{REQ}#3", f"{REQ}#5")
@pytest.mark.parametrize("ceiling", [(1, 0), (1, 7), (2, 0), (99, 3), [1, 0], [3, 1]])
def test_produce_a_versioned_capsule_for_a_1_x_consumer(ceiling):
    """Every ceiling with major >= 1 yields dltensor_versioned at exactly version 1.0."""
    capsule = float_tensor().__dlpack__(max_version=ceiling)
    assert R.capsule_name(capsule) == R.VERSIONED
    info = R.inspect(capsule)
    assert info.version == (1, 0)
    assert info.shape == (3,)


@pytest.mark.spec(f"{REQ}#6")
@pytest.mark.parametrize("ceiling", [(2**31, 0), (2**32 + 1, 2**32 + 1), (2**62, 2**62)])
def test_cap_any_representable_ceiling_at_1_0(ceiling):
    """Ceilings beyond 32-bit version fields still give a 1.0 versioned capsule."""
    info = R.inspect(float_tensor().__dlpack__(max_version=ceiling))
    assert (info.name, info.version) == (R.VERSIONED, (1, 0))


@pytest.mark.spec(f"{REQ}/produce-a-versioned-capsule-for-a-1-x-consumer", f"{REQ}#6")
@pytest.mark.parametrize("ceiling", [(2**63, 0), (2**64, 0), (1, 2**63), (2**70, 5), (1, 2**100)])
def test_succeed_for_a_ceiling_beyond_64_bits(ceiling):
    """A higher ceiling is still a higher ceiling when it does not fit in 64 bits.

    Pins a bug: the binding converts each component to int64 and fails with RuntimeError
    ("Unable to cast Python instance of type <class 'int'> to C++ type 'long'").
    """
    info = R.inspect(float_tensor().__dlpack__(max_version=ceiling))
    assert (info.name, info.version) == (R.VERSIONED, (1, 0))


@pytest.mark.spec(f"{REQ}/fall-back-to-the-legacy-structure", f"{REQ}#3", f"{REQ}#4")
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_version": None},
        {"max_version": (0, 0)},
        {"max_version": (0, 9)},
        {"max_version": [0, 5]},
    ],
)
def test_fall_back_to_the_legacy_structure(kwargs):
    """No ceiling or major 0 yields a dltensor capsule holding an unversioned managed tensor."""
    t = float_tensor()
    capsule = t.__dlpack__(**kwargs)
    assert R.capsule_name(capsule) == R.LEGACY
    info = R.inspect(capsule)
    assert (info.version, info.flags) == (None, None)
    assert info.data == t.carrier.pointer()
    assert (info.shape, info.strides, info.code, info.bits) == ((3,), (1,), R.CODE_FLOAT, 32)


@pytest.mark.spec(f"{REQ}/reject-a-malformed-version-ceiling", f"{REQ}#7")
@pytest.mark.parametrize("ceiling", ["1.0", "10", 1, 1.0, {1: 0}, range(2), b"\x01\x00", object()])
def test_reject_a_ceiling_that_is_not_a_tuple_or_list(ceiling):
    """Anything but None, a tuple or a list fails with TypeError naming max_version."""
    t = float_tensor()
    with refused(TypeError, "max_version", carriers=[t.carrier]):
        t.__dlpack__(max_version=ceiling)


@pytest.mark.spec(f"{REQ}/reject-a-malformed-version-ceiling", f"{REQ}#8")
@pytest.mark.parametrize(
    "ceiling", [(), (1,), [1], (1, 0, 0), [1, 0, 0], (-1, 0), (1, -1), (0, -1), [-3, -3]]
)
def test_reject_a_wrong_length_or_negative_ceiling(ceiling):
    """A different element count or a negative component fails with ValueError."""
    t = float_tensor()
    with refused(ValueError, "max_version", carriers=[t.carrier]):
        t.__dlpack__(max_version=ceiling)


@pytest.mark.spec(f"{REQ}/reject-a-malformed-version-ceiling", f"{REQ}#8")
@pytest.mark.parametrize("ceiling", [(-(2**63) - 1, 0), (1, -(2**70))])
def test_reject_a_negative_component_beyond_64_bits(ceiling):
    """A negative component is ValueError whatever its magnitude.

    Pins a bug: the binding's int64 conversion fails first, with RuntimeError.
    """
    t = float_tensor()
    with refused(ValueError, "max_version", carriers=[t.carrier]):
        t.__dlpack__(max_version=ceiling)


@pytest.mark.spec(f"{REQ}/report-a-device-for-a-non-exportable-dtype", f"{REQ}#9", f"{REQ}#10")
def test_report_a_device_for_a_non_exportable_dtype():
    """A Bool CPU tensor reports (1, 0) while its export fails on the dtype."""
    t = sw.Tensor(sw.CPU(sw.Bool, values=[True, False]), sw.Layout(2))
    device = t.__dlpack_device__()
    assert type(device) is tuple
    assert device == (1, 0)
    with refused(BufferError, "Bool", "Float32", "Int32", carriers=[t.carrier]):
        t.__dlpack__(max_version=(1, 0))
    with refused(BufferError, "Bool", carriers=[t.carrier]):
        np.from_dlpack(t)


@pytest.mark.spec(f"{REQ}#9")
def test_dlpack_device_takes_no_arguments():
    """__dlpack_device__ rejects any argument and returns a two-element tuple of ints."""
    t = float_tensor()
    for call in (lambda: t.__dlpack_device__(None), lambda: t.__dlpack_device__(stream=None)):
        with refused(TypeError, carriers=[t.carrier]):
            call()
    device = t.__dlpack_device__()
    assert [type(x) for x in device] == [int, int]
