"""Tensors, views and the friendly factories (spec/core-tensor-representation).

The factories copy into fresh CPU storage. There is deliberately no
``from_dlpack``: DLPack is export-only (interop-movement).

This module also gives Tensor the sequence and NumPy protocols users expect at
the prompt: ``iter(t)`` over the first mode, ``bool(t)`` as NumPy decides it,
``item()``, ``float(t)`` and ``int(t)`` for one-element tensors, and
``__array__`` for ``np.asarray(t)``: a zero-copy view through DLPack export
where export is allowed, otherwise a copy read through the carriers in bulk.
``t.numpy()`` is that zero-copy view, or TypeError where none exists. NumPy is
imported only when ``__array__`` or ``numpy()`` runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from strideweave._core import Tensor, arange, full, tensor, zeros

__all__ = ["Tensor", "arange", "full", "tensor", "zeros"]

_NUMPY_SCALARS = {"Bool": "bool", "Int32": "int32", "Float32": "float32", "Floating": "float64"}


def _numpy_dtype(np: Any, dtype: Any) -> Any:
    """The NumPy dtype holding values of a strideweave dtype: packed records for
    a compound dtype, float64 for Floating and object for Any."""
    if dtype.is_compound:
        return np.dtype([(name, _numpy_dtype(np, field)) for name, field in dtype.fields])
    return np.dtype(_NUMPY_SCALARS.get(dtype.name, "object"))


def _leaf_shape(t: Tensor) -> tuple[int, ...]:
    """The extents of the leaf modes: the shape of the NumPy array."""
    base = t.planes[0] if t.is_multi_subtensor else t
    return tuple(extent for extent, _ in base.layout.leaf_modes)


def _exported(np: Any, t: Tensor) -> tuple[Any, str]:
    """The zero-copy array over t's carrier (read-only exactly when the export
    is), or None and the reason no view exists. Export itself refuses (with
    BufferError) every dtype but Float32 and Int32 and every carrier that does
    not opt in; this runs on every np.asarray(t), so it checks nothing twice."""
    if t.is_multi_subtensor:
        return None, f"a multi-subtensor tensor of dtype {t.dtype.name} has no single buffer"
    try:
        device = t.__dlpack_device__()
        if device != (1, 0):
            return None, f"the carrier's DLPack device {device} is not the host (1, 0)"
        return np.from_dlpack(t), ""
    except BufferError as refusal:
        return None, str(refusal)


def _copied(np: Any, t: Tensor) -> Any:
    """A new writable array of t's values in its leaf shape (Fortran order,
    the flat colexicographic order of the tensor's values)."""
    out = t._copy_to_numpy()  # Bool, Int32 and Float32 in one call; None for the rest
    if out is not None:
        return out
    logical = t.dtype
    dtype = _numpy_dtype(np, logical)
    shape = _leaf_shape(t)
    if logical.is_abstract:  # Generic values of an abstract dtype have no encoding
        return np.array(t.tolist(), dtype=dtype).reshape(shape)
    out = np.empty(shape, dtype=dtype, order="F")
    t._read_encoded_into(out)
    return out


def _numpy() -> Any:
    """NumPy, imported on first use (later calls find it in sys.modules): it is
    not a dependency of strideweave."""
    import numpy

    return numpy


def _array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> Any:
    """NumPy's ``__array__`` protocol: ``np.asarray(t)`` and ``np.array(t)``.

    The array has the tensor's leaf extents as its shape. Without a copy it is a
    zero-copy view of the carrier through DLPack export (read-only exactly when
    the tensor is not publicly mutable); otherwise the values are copied into a
    new writable array read through the carriers in bulk. NumPy is imported on
    first use.

    Parameters
    ----------
    dtype : numpy.dtype, optional
        The array's dtype; converting to another dtype copies.
    copy : bool, optional
        None views where export is allowed and copies otherwise; True always
        copies; False demands a view.

    Returns
    -------
    numpy.ndarray
        The view or the copy.

    Raises
    ------
    ValueError
        When ``copy`` is False and no zero-copy view exists, or the dtype
        conversion needs a copy.
    RuntimeError
        When a carrier is released.
    """
    np = _numpy()
    if copy is not True:
        view, reason = _exported(np, self)
        if view is not None:
            if dtype is None:
                return view
            target = np.dtype(dtype)
            if target == view.dtype:
                return view
            if copy is False:
                raise ValueError(
                    f"__array__(copy=False): converting {self.dtype.name} to {target} needs a copy"
                )
            return view.astype(target)
        if copy is False:
            raise ValueError(f"__array__(copy=False): no zero-copy view exists: {reason}")
    values = _copied(np, self)
    return values if dtype is None else values.astype(dtype, copy=False)


def _iterate(self: Tensor) -> Iterator[Tensor]:
    """``iter(t)``: the views ``t[0], t[1], ...`` of the first mode's items.

    As iterating a PyTorch tensor, a rank-1 tensor yields rank-0 tensors, not
    Python scalars; each item shares the carrier.

    Returns
    -------
    Iterator[Tensor]
        The views, in order.

    Raises
    ------
    TypeError
        For a rank-0 tensor.
    NotImplementedError
        For a multi-subtensor tensor.
    """
    if self.shape == ():
        raise TypeError("iteration over a 0-d tensor")
    if self.is_multi_subtensor:
        raise NotImplementedError(
            "iteration is not implemented for a multi-subtensor tensor of dtype " + self.dtype.name
        )
    return map(self.__getitem__, range(len(self)))


def _size(t: Tensor) -> int:
    """The number of elements: the product of the leaf extents."""
    size = 1
    for extent in _leaf_shape(t):
        size *= extent
    return size


def _only_value(t: Tensor) -> Any:
    """The value of a one-element tensor, as tolist() reads it (read only once the size
    is known to be one)."""
    value = t.tolist()
    while isinstance(value, list):
        value = value[0]
    return value


def _truth(self: Tensor) -> bool:
    """``bool(t)``: the truth of a one-element tensor's value, as NumPy decides it.

    Returns
    -------
    bool
        ``bool(t.item())``.

    Raises
    ------
    ValueError
        When the tensor does not have exactly one element.
    """
    size = _size(self)
    if size != 1:
        raise ValueError(
            f"the truth value of a tensor with {size} elements is ambiguous; "
            "use t.tolist() or compare its values"
        )
    return bool(_only_value(self))


def _item(self: Tensor) -> Any:
    """The value of a one-element tensor of any shape and layout, as tolist() reads it.

    Returns
    -------
    bool or int or float or tuple or Any
        A bool, int or float for Bool, Int32 and Float32, the stored value for an
        abstract dtype, a tuple of field values for a compound dtype.

    Raises
    ------
    ValueError
        When the tensor does not have exactly one element (naming the count).
    RuntimeError
        When the carrier is released.
    """
    size = _size(self)
    if size != 1:
        raise ValueError(
            "only a one-element tensor converts to a Python scalar; "
            f"this tensor has {size} elements (shape {self.shape!r})"
        )
    return _only_value(self)


def _scalar(self: Tensor, convert: type, name: str) -> Any:
    """convert(t.item()) for a scalar dtype; TypeError naming a compound dtype."""
    if self.dtype.is_compound:
        raise TypeError(
            f"{name}() of a tensor of the compound dtype {self.dtype.name}: "
            "its value is a record; use t.item()"
        )
    return convert(_item(self))


def _float(self: Tensor) -> float:
    """``float(t)``: ``float(t.item())`` for a one-element tensor of a scalar dtype.

    Returns
    -------
    float
        The value.

    Raises
    ------
    TypeError
        For a compound dtype (naming it; use ``t.item()``).
    ValueError
        When the tensor does not have exactly one element.
    """
    return _scalar(self, float, "float")


def _int(self: Tensor) -> int:
    """``int(t)``: ``int(t.item())`` for a one-element tensor of a scalar dtype.

    A float value truncates toward zero, as ``int()`` does. Tensor defines no
    ``__index__``, so a tensor is never taken as a sequence index.

    Returns
    -------
    int
        The value.

    Raises
    ------
    TypeError
        For a compound dtype (naming it; use ``t.item()``).
    ValueError
        When the tensor does not have exactly one element.
    """
    return _scalar(self, int, "int")


def _to_numpy(self: Tensor) -> Any:
    """The zero-copy NumPy view of the tensor, the array ``np.asarray(t)`` gives.

    It aliases the carrier's slots, has the leaf extents as its shape and is
    read-only exactly when the tensor is not publicly mutable. Only a
    single-subtensor Float32 or Int32 tensor over a carrier that exports to the
    host has one; ``np.array(t)`` copies any tensor.

    Returns
    -------
    numpy.ndarray
        The view.

    Raises
    ------
    TypeError
        When no zero-copy view exists (saying why).
    RuntimeError
        When the tensor has elements over a released carrier.
    """
    view, reason = _exported(_numpy(), self)
    if view is None and not self.is_multi_subtensor and self.carrier.is_released:
        raise RuntimeError(f"numpy() of a tensor over a released carrier: {reason}")
    if view is None:
        raise TypeError(
            f"numpy() returns a zero-copy view and this tensor has none ({reason}); "
            "np.array(t) copies it"
        )
    return view


Tensor.__array__ = _array  # type: ignore[method-assign]
Tensor.__iter__ = _iterate  # type: ignore[method-assign]
Tensor.__bool__ = _truth  # type: ignore[method-assign]
Tensor.item = _item  # type: ignore[method-assign]
Tensor.__float__ = _float  # type: ignore[method-assign]
Tensor.__int__ = _int  # type: ignore[method-assign]
Tensor.numpy = _to_numpy  # type: ignore[method-assign]
