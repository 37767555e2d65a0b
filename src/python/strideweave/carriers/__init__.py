"""Carriers: storage instances for tensors (spec/carrier-storage), and the move-operation
classes that move values between them (spec/interop-movement; the legacy move registry
is ``strideweave.carriers.move``; the composite TiledEvictable and its completion handles
are ``strideweave.carriers.tiled_evictable``)."""

from strideweave._core import (
    CPU,
    Carrier,
    CarrierDefinition,
    ClassDescriptor,
    CpuToFileBackedMoveOperation,
    ElementwiseMoveOperation,
    FileBacked,
    FileBackedToCpuMoveOperation,
    Generic,
    MoveOperation,
    TransferProvider,
    TransferRequest,
    TransferRoute,
    VersionToken,
    define_carrier,
)
from strideweave.carriers.tiled_evictable import TiledEvictable

__all__ = [
    "CPU",
    "Carrier",
    "CarrierDefinition",
    "ClassDescriptor",
    "CpuToFileBackedMoveOperation",
    "ElementwiseMoveOperation",
    "FileBacked",
    "FileBackedToCpuMoveOperation",
    "Generic",
    "MoveOperation",
    "TiledEvictable",
    "TransferProvider",
    "TransferRequest",
    "TransferRoute",
    "VersionToken",
    "define_carrier",
]
