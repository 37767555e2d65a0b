"""Carriers: storage instances for tensors (spec/carrier-storage), the composites
Evictable and TiledEvictable (spec/carrier-composition; TiledEvictable's completion
handles are ``strideweave.carriers.tiled_evictable``), and the move-operation classes that
move values between them (spec/interop-movement; the legacy move registry is
``strideweave.carriers.move``)."""

from strideweave._core import (
    CPU,
    BlockDeviceCarrier,
    BlockDeviceToCpuMoveOperation,
    Carrier,
    CarrierDefinition,
    ClassDescriptor,
    CpuToBlockDeviceMoveOperation,
    CpuToFileBackedMoveOperation,
    CpuToMetalMoveOperation,
    ElementwiseMoveOperation,
    Evictable,
    FileBacked,
    FileBackedToCpuMoveOperation,
    Generic,
    Metal,
    MetalToCpuMoveOperation,
    MetalToMetalMoveOperation,
    MoveOperation,
    PythonStorageCarrier,
    TransferProvider,
    TransferRequest,
    TransferRoute,
    VersionToken,
    define_carrier,
)
from strideweave.carriers.tiled_evictable import TiledEvictable

__all__ = [
    "CPU",
    "BlockDeviceCarrier",
    "BlockDeviceToCpuMoveOperation",
    "Carrier",
    "CarrierDefinition",
    "ClassDescriptor",
    "CpuToBlockDeviceMoveOperation",
    "CpuToFileBackedMoveOperation",
    "CpuToMetalMoveOperation",
    "ElementwiseMoveOperation",
    "Evictable",
    "FileBacked",
    "FileBackedToCpuMoveOperation",
    "Generic",
    "Metal",
    "MetalToCpuMoveOperation",
    "MetalToMetalMoveOperation",
    "MoveOperation",
    "PythonStorageCarrier",
    "TiledEvictable",
    "TransferProvider",
    "TransferRequest",
    "TransferRoute",
    "VersionToken",
    "define_carrier",
]
