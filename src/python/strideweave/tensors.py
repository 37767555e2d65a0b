"""Tensors, views and the friendly factories (spec/core-tensor-representation).

The factories copy into fresh CPU storage. There is deliberately no
``from_dlpack``: DLPack is export-only (interop-movement).
"""

from strideweave._core import Tensor, arange, full, tensor, zeros

__all__ = ["Tensor", "arange", "full", "tensor", "zeros"]
