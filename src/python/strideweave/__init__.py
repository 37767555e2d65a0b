"""StrideWeave: CuTe-style hierarchical layouts over pluggable storage.

The public names are re-exported here; each lives in the module that matches
its capability: ``strideweave.layout`` (core-layout), ``strideweave.dtypes``
and ``strideweave.tensors`` (core-tensor-representation),
``strideweave.carriers`` (carrier-storage), ``strideweave.ops`` and
``strideweave.autograd`` (autograd), and ``strideweave.profiling``
(operation-profiling).
"""

from strideweave.autograd import (
    AccumulateGrad,
    MoveNode,
    Node,
    enable_grad,
    is_grad_enabled,
    no_grad,
)
from strideweave.carriers import (
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
    TiledEvictable,
    TransferProvider,
    TransferRequest,
    TransferRoute,
    VersionToken,
    define_carrier,
)
from strideweave.carriers.move import AwaitMove, AwaitResult, move, move_async
from strideweave.dtypes import Any, Bool, DType, Float32, Floating, Int32, compound
from strideweave.layout import (
    Layout,
    coalesce,
    compact_col_major,
    complement,
    composition,
    idx2crd,
    logical_divide,
    logical_product,
    right_inverse,
    tiled_divide,
    zipped_divide,
)
from strideweave.ops import add, mul, neg, sub, sum
from strideweave.profiling import KeyAverage, KeyAverages, Profile, ProfileEvent, profile
from strideweave.tensors import Tensor, arange, full, tensor, zeros

__version__ = "0.1.0"

# Literal, so that type checkers (and mypy's stubtest) read the names the interpreter
# exports: the union of the capability modules' lists (tox -e wheel checks that).
__all__ = [
    "CPU",
    "AccumulateGrad",
    "Any",
    "AwaitMove",
    "AwaitResult",
    "BlockDeviceCarrier",
    "BlockDeviceToCpuMoveOperation",
    "Bool",
    "Carrier",
    "CarrierDefinition",
    "ClassDescriptor",
    "CpuToBlockDeviceMoveOperation",
    "CpuToFileBackedMoveOperation",
    "CpuToMetalMoveOperation",
    "DType",
    "ElementwiseMoveOperation",
    "Evictable",
    "FileBacked",
    "FileBackedToCpuMoveOperation",
    "Float32",
    "Floating",
    "Generic",
    "Int32",
    "KeyAverage",
    "KeyAverages",
    "Layout",
    "Metal",
    "MetalToCpuMoveOperation",
    "MetalToMetalMoveOperation",
    "MoveNode",
    "MoveOperation",
    "Node",
    "Profile",
    "ProfileEvent",
    "Tensor",
    "TiledEvictable",
    "TransferProvider",
    "TransferRequest",
    "TransferRoute",
    "VersionToken",
    "add",
    "arange",
    "coalesce",
    "compact_col_major",
    "complement",
    "composition",
    "compound",
    "define_carrier",
    "enable_grad",
    "full",
    "idx2crd",
    "is_grad_enabled",
    "logical_divide",
    "logical_product",
    "move",
    "move_async",
    "mul",
    "neg",
    "no_grad",
    "profile",
    "right_inverse",
    "sub",
    "sum",
    "tensor",
    "tiled_divide",
    "zeros",
    "zipped_divide",
]
