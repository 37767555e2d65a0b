"""Carriers: storage instances for tensors (spec/carrier-storage), the composite
Evictable over two tiers (spec/carrier-composition), and the move-operation classes that
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
    ElementwiseMoveOperation,
    Evictable,
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

__all__ = [
    "CPU",
    "BlockDeviceCarrier",
    "BlockDeviceToCpuMoveOperation",
    "Carrier",
    "CarrierDefinition",
    "ClassDescriptor",
    "CpuToBlockDeviceMoveOperation",
    "CpuToFileBackedMoveOperation",
    "ElementwiseMoveOperation",
    "Evictable",
    "FileBacked",
    "FileBackedToCpuMoveOperation",
    "Generic",
    "MoveOperation",
    "TransferProvider",
    "TransferRequest",
    "TransferRoute",
    "VersionToken",
    "define_carrier",
]
