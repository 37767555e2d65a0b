"""Logical dtypes (spec/core-tensor-representation)."""

from strideweave._core import Any, Bool, DType, Float32, Floating, Int32, compound

__all__ = ["Any", "Bool", "DType", "Float32", "Floating", "Int32", "compound"]
