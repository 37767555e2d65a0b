"""Layouts and the layout algebra (spec/core-layout)."""

from strideweave._core import (
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

__all__ = [
    "Layout",
    "coalesce",
    "compact_col_major",
    "complement",
    "composition",
    "idx2crd",
    "logical_divide",
    "logical_product",
    "right_inverse",
    "tiled_divide",
    "zipped_divide",
]
