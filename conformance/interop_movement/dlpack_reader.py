"""A small ctypes reader of DLPack capsules: what a consumer sees, decoded into plain values.

The structures are written from the DLPack 1.0 field lists (dmlc/dlpack ``dlpack.h``).
``inspect`` decodes a capsule without taking it; ``consume`` takes it the way a consumer
does: it renames the capsule ``used_*`` and returns a handle whose ``delete()`` calls the
managed tensor's deleter through ctypes. ctypes releases the GIL around that foreign call,
so the producer's deleter must take the GIL itself.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

LEGACY = "dltensor"
VERSIONED = "dltensor_versioned"
READ_ONLY = 1 << 0
IS_COPIED = 1 << 1
DEVICE_CPU = 1
CODE_INT = 0
CODE_FLOAT = 2


class DLPackVersion(ctypes.Structure):
    _fields_ = (("major", ctypes.c_uint32), ("minor", ctypes.c_uint32))


class DLDevice(ctypes.Structure):
    _fields_ = (("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32))


class DLDataType(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16))


class DLTensor(ctypes.Structure):
    _fields_ = (
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    )


# Both deleters take the managed tensor's own address; CFUNCTYPE calls drop the GIL.
Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = (("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter))


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = (
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", Deleter),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    )


if ctypes.sizeof(ctypes.c_void_p) == 8:  # the x86-64 / aarch64 ABI sizes of dlpack.h
    assert ctypes.sizeof(DLTensor) == 48
    assert ctypes.sizeof(DLManagedTensor) == 64
    assert ctypes.sizeof(DLManagedTensorVersioned) == 80
    assert DLManagedTensorVersioned.flags.offset == 24
    assert DLManagedTensorVersioned.dl_tensor.offset == 32

_STRUCTURES = {LEGACY: DLManagedTensor, VERSIONED: DLManagedTensorVersioned}

# Capsule names must outlive the capsule: module-level buffers live as long as the process.
_USED_NAMES = {
    LEGACY: ctypes.create_string_buffer(b"used_dltensor"),
    VERSIONED: ctypes.create_string_buffer(b"used_dltensor_versioned"),
}

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = (ctypes.py_object,)
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = (ctypes.py_object, ctypes.c_void_p)
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = (ctypes.py_object, ctypes.c_char_p)


@dataclass(frozen=True)
class ManagedTensor:
    """One managed tensor as plain values; ``version`` and ``flags`` are None for legacy."""

    name: str
    address: int
    version: tuple[int, int] | None
    flags: int | None
    data: int
    device: tuple[int, int]
    ndim: int
    code: int
    bits: int
    lanes: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    byte_offset: int
    shape_address: int
    strides_address: int
    has_deleter: bool

    @property
    def read_only(self) -> bool:
        return self.flags is not None and bool(self.flags & READ_ONLY)

    def fields(self) -> dict[str, object]:
        """Everything a consumer reads, without the addresses of the producer's structures."""
        skip = {"address", "shape_address", "strides_address"}
        return {k: v for k, v in self.__dict__.items() if k not in skip}


def capsule_name(capsule: object) -> str | None:
    """The capsule's current name (``used_*`` once consumed)."""
    name = _api.PyCapsule_GetName(capsule)
    return None if name is None else name.decode()


def _pointer(capsule: object, name: str) -> int:
    if not _api.PyCapsule_IsValid(capsule, name.encode()):
        raise ValueError(f"not an unconsumed {name!r} capsule: {capsule!r}")
    return _api.PyCapsule_GetPointer(capsule, name.encode())


def _array(pointer, n: int) -> tuple[int, ...] | None:
    return None if not pointer else tuple(pointer[i] for i in range(n))


def decode(address: int, name: str) -> ManagedTensor:
    """Decodes the managed tensor at ``address`` of the structure ``name`` selects."""
    managed = _STRUCTURES[name].from_address(address)
    dl = managed.dl_tensor
    versioned = name == VERSIONED
    return ManagedTensor(
        name=name,
        address=address,
        version=(managed.version.major, managed.version.minor) if versioned else None,
        flags=managed.flags if versioned else None,
        data=dl.data or 0,
        device=(dl.device.device_type, dl.device.device_id),
        ndim=dl.ndim,
        code=dl.dtype.code,
        bits=dl.dtype.bits,
        lanes=dl.dtype.lanes,
        shape=_array(dl.shape, dl.ndim) or (),
        strides=_array(dl.strides, dl.ndim),
        byte_offset=dl.byte_offset,
        shape_address=ctypes.cast(dl.shape, ctypes.c_void_p).value or 0,
        strides_address=ctypes.cast(dl.strides, ctypes.c_void_p).value or 0,
        has_deleter=bool(managed.deleter),
    )


def inspect(capsule: object) -> ManagedTensor:
    """Decodes an unconsumed capsule without taking ownership of it."""
    name = capsule_name(capsule)
    if name not in _STRUCTURES:
        raise ValueError(f"not an unconsumed DLPack capsule: {name!r}")
    return decode(_pointer(capsule, name), name)


class Consumed:
    """A managed tensor taken out of its capsule; the holder must call ``delete()`` once."""

    def __init__(self, address: int, name: str) -> None:
        self.address = address
        self.name = name
        self.info = decode(address, name)
        self.deleted = False

    def delete(self) -> None:
        """Calls the managed tensor's deleter (GIL released); at most once."""
        if self.deleted:
            raise RuntimeError("the managed tensor was already deleted")
        self.deleted = True
        managed = _STRUCTURES[self.name].from_address(self.address)
        managed.deleter(self.address)


def consume(capsule: object) -> Consumed:
    """Takes the capsule as a consumer does: renames it ``used_*`` and owns its deleter."""
    name = capsule_name(capsule)
    if name not in _STRUCTURES:
        raise ValueError(f"not an unconsumed DLPack capsule: {name!r}")
    address = _pointer(capsule, name)
    consumed = Consumed(address, name)
    if _api.PyCapsule_SetName(capsule, ctypes.addressof(_USED_NAMES[name])) != 0:
        raise RuntimeError("PyCapsule_SetName failed")
    return consumed
