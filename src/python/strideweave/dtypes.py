"""Logical dtypes (spec/core-tensor-representation)."""

from __future__ import annotations

from strideweave._core import Any, Bool, DType, Float32, Floating, Int32, compound

__all__ = ["Any", "Bool", "DType", "Float32", "Floating", "Int32", "compound"]

_INSTANCE_DOCS = {
    "Bool": "Bool: the concrete dtype of truth values, one byte each (NumPy's bool, PyTorch's "
    "torch.bool); tolist() reads them as Python bools.",
    "Int32": "Int32: the concrete dtype of 32-bit signed integers, four bytes each (NumPy's "
    "int32, PyTorch's torch.int32); tolist() reads them as Python ints.",
    "Float32": "Float32: the concrete dtype of IEEE 754 single-precision floats, four bytes "
    "each (NumPy's float32, PyTorch's torch.float32); the default dtype of zeros.",
    "Floating": "Floating: the abstract dtype of real numbers of any precision, with no "
    "encoding or item size; a Generic carrier holds its values as Python floats.",
    "Any": "Any: the abstract dtype of values of any scalar kind (bools, ints and floats, "
    "mixed), with no encoding or item size; a Generic carrier holds its values as given.",
}


class _DocByInstance:
    """``DType.__doc__``: the class's docstring read from the class (and from a compound
    dtype), each named instance's own sentence read from that instance. Python reads a
    heap type's ``__doc__`` through ``__get__(None, type)``, so ``DType.__doc__`` stays the
    class's docstring."""

    def __init__(self, class_doc: str) -> None:
        self._class_doc = class_doc

    def __get__(self, instance: DType | None, owner: type | None = None) -> str:
        if instance is None:
            return self._class_doc
        return _INSTANCE_DOCS.get(instance.name, self._class_doc)


if not isinstance(DType.__dict__["__doc__"], _DocByInstance):
    DType.__doc__ = _DocByInstance(DType.__doc__ or "")  # type: ignore[assignment]
