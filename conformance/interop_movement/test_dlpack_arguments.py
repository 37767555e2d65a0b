"""interop-movement: __dlpack__'s signature and its copy, dl_device and stream arguments."""

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
