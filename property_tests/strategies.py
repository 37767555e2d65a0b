"""The one strategies module: hypothesis strategies shared by every Python test.

Conformance and property tests draw layouts (and, as later capabilities land,
dtypes, carriers and tensors) from here, so "for any layout" means the same
families everywhere: nested shapes with extents 0 and 1, compact strides,
permuted modes, holes, stride-zero broadcast modes and arbitrary strides.
The C++ RapidCheck generators in ``property_tests/cpp/layout_generators.h``
mirror these families.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings

import strideweave as sw

# Profiles for every suite that draws from here: `ci` (default) and `thorough`.
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MAX_SIZE = 512
MAX_LEAVES = 8

IntTuple = int | tuple["IntTuple", ...]

# Extents 0..6 with 0 rare and 1, 2 common (sampled_from shrinks to the front).
EXTENTS = st.sampled_from([1, 2, 1, 2, 3, 4, 5, 6, 0])
POW2_EXTENTS = st.sampled_from([1, 2, 4, 8])
POSITIVE_EXTENTS = st.integers(1, 4)
STRIDE_FAMILIES = ("compact", "permuted", "holes", "broadcast", "arbitrary")


# -- IntTuple helpers ---------------------------------------------------------


def flatten(t: IntTuple) -> list[int]:
    """The leaves of ``t`` in depth-first order."""
    if isinstance(t, int):
        return [t]
    return [leaf for e in t for leaf in flatten(e)]


def unflatten(leaves: Sequence[int], like: IntTuple) -> IntTuple:
    """A tree shaped like ``like`` holding ``leaves`` in depth-first order."""
    it = iter(leaves)

    def build(node: IntTuple) -> IntTuple:
        return next(it) if isinstance(node, int) else tuple(build(e) for e in node)

    return build(like)


def shape_size(shape: IntTuple) -> int:
    return math.prod(flatten(shape))


def all_indices(layout: sw.Layout) -> list[int]:
    """Every index of ``layout`` in flat-index order."""
    return [layout(i) for i in range(layout.size)]


def colex_coordinate(index: int, extents: Sequence[int]) -> list[int]:
    """The flat leaf coordinate of flat index ``index`` (first leaf fastest)."""
    coord = []
    for e in extents:
        coord.append(index % e)
        index //= e
    return coord


def evaluate_extended(layout: sw.Layout, i: int) -> int:
    """``layout`` at flat index ``i`` with the last coalesced mode unbounded (CuTe's extension)."""
    modes = sw.coalesce(layout).leaf_modes
    index = 0
    for k, (extent, stride) in enumerate(modes):
        if k + 1 == len(modes):
            return index + i * stride
        index += (i % extent) * stride
        i //= extent
    return index


def compatible(b: IntTuple, r: IntTuple) -> bool:
    """CuTe's compatible(B, R): R refines B's shape tree with equal sizes."""
    if isinstance(b, int):
        return shape_size(r) == b
    if isinstance(r, int) or len(r) != len(b):
        return False
    return all(compatible(x, y) for x, y in zip(b, r, strict=True))


def without_broadcast_modes(layout: sw.Layout) -> sw.Layout:
    """``layout`` with every stride-zero leaf mode shrunk to extent 1."""
    extents = [1 if d == 0 else e for e, d in layout.leaf_modes]
    return sw.Layout(unflatten(extents, layout.shape), layout.stride)


def parse_int_tuple(text: str) -> IntTuple:
    """Reads CuTe notation (``6``, ``(6)``, ``(2,(3,4))``, ``()``) back into an IntTuple."""
    tokens = re.findall(r"\d+|[(),]", text)
    if "".join(tokens) != text:
        raise ValueError(f"not CuTe notation: {text!r}")
    pos = 0

    def parse() -> IntTuple:
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token != "(":
            return int(token)
        elements: list[IntTuple] = []
        while tokens[pos] != ")":
            elements.append(parse())
            if tokens[pos] == ",":
                pos += 1
        pos += 1
        return tuple(elements)

    result = parse()
    if pos != len(tokens):
        raise ValueError(f"trailing text in {text!r}")
    return result


# -- strategies -----------------------------------------------------------------


def shapes(extents: st.SearchStrategy[int] = EXTENTS) -> st.SearchStrategy[IntTuple]:
    """Shape trees of depth <= 3, at most MAX_LEAVES leaves and size <= MAX_SIZE."""
    trees = st.recursive(
        extents,
        lambda children: st.lists(children, max_size=3).map(tuple),
        max_leaves=MAX_LEAVES,
    )
    return trees.filter(
        lambda s: len(flatten(s)) <= MAX_LEAVES and shape_size(s) <= MAX_SIZE and _depth(s) <= 3
    )


def _depth(t: IntTuple) -> int:
    return 0 if isinstance(t, int) else 1 + max((_depth(e) for e in t), default=0)


@st.composite
def strides_for(draw: st.DrawFn, extents: Sequence[int], family: str) -> list[int]:
    """Leaf strides for ``extents`` from one stride family."""
    n = len(extents)
    if family == "arbitrary":
        return draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    order = list(range(n))
    if family != "compact":
        order = draw(st.permutations(order))
    strides = [0] * n
    running = 1
    for k in order:
        strides[k] = running
        hole = draw(st.integers(0, 2)) if family == "holes" else 0
        running *= max(extents[k], 1) + hole
    if family == "broadcast":
        zeroed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        strides = [0 if z else d for d, z in zip(strides, zeroed, strict=True)]
    return strides


@st.composite
def layouts(
    draw: st.DrawFn,
    extents: st.SearchStrategy[int] = EXTENTS,
    families: Sequence[str] = STRIDE_FAMILIES,
) -> sw.Layout:
    """Any layout: nested, with holes, stride zero, extents 0 and 1."""
    shape = draw(shapes(extents))
    family = draw(st.sampled_from(families))
    strides = draw(strides_for(flatten(shape), family))
    return sw.Layout(shape, unflatten(strides, shape))


def injective_layouts() -> st.SearchStrategy[sw.Layout]:
    """Layouts whose families guarantee injectivity (compact, permuted, holes)."""
    return layouts(families=("compact", "permuted", "holes"))


@st.composite
def complementable_layouts(
    draw: st.DrawFn, extents: st.SearchStrategy[int] = POSITIVE_EXTENTS
) -> sw.Layout:
    """Layouts whose sorted modes chain with divisible strides, so complement exists."""
    shape = draw(shapes(extents))
    leaves = flatten(shape)
    order = draw(st.permutations(range(len(leaves))))
    strides = [0] * len(leaves)
    span = 1
    for k in order:
        strides[k] = span * draw(st.integers(1, 2))
        span = strides[k] * leaves[k]
    return sw.Layout(shape, unflatten(strides, shape))


@st.composite
def pow2_layouts(draw: st.DrawFn) -> sw.Layout:
    """Power-of-two extents and strides: every composition among them is admissible."""
    shape = draw(shapes(POW2_EXTENTS))
    n = len(flatten(shape))
    strides = draw(st.lists(st.sampled_from([0, 1, 2, 4, 8, 16]), min_size=n, max_size=n))
    return sw.Layout(shape, unflatten(strides, shape))


def coordinates(layout: sw.Layout) -> st.SearchStrategy[int]:
    """Flat indices of ``layout`` (requires size > 0)."""
    return st.integers(0, layout.size - 1)


# -- dtypes, carriers and tensors ----------------------------------------------

CONCRETE_DTYPES = st.sampled_from([sw.Bool, sw.Int32, sw.Float32])
EXPORTABLE_DTYPES = st.sampled_from([sw.Float32, sw.Int32])
BUILTIN_CARRIERS = st.sampled_from([sw.CPU, sw.Generic])
ANY_LAYOUTS = layouts()
OFFSETS = st.integers(0, 16)
EXTRA_SLOTS = st.integers(0, 8)
MUTABLE = st.just(True)


def concrete_dtypes() -> st.SearchStrategy[sw.DType]:
    """Bool, Int32 and Float32: the scalar dtypes every built-in carrier stores."""
    return CONCRETE_DTYPES


def exportable_dtypes() -> st.SearchStrategy[sw.DType]:
    """The logical dtypes DLPack export maps: Float32 and Int32 (interop-movement)."""
    return EXPORTABLE_DTYPES


def _scalar_value(dtype: sw.DType, base: int, k: int) -> object:
    """The k-th of a family of values of ``dtype`` distinct in k (cycling for Bool)."""
    if dtype == sw.Bool:
        return (base + k) % 2 == 1
    if dtype == sw.Int32:
        return base + k
    if dtype == sw.Any:
        return (base + k, float(base + k) + 0.5)[k % 2]
    return float(base) + k / 4  # Float32 and Floating: exact in single precision


@st.composite
def slot_values(draw: st.DrawFn, dtype: sw.DType, n: int) -> list:
    """``n`` values of ``dtype`` in random order, pairwise distinct where the dtype allows."""
    base = draw(st.integers(-(2**20), 2**20))
    if dtype.is_compound:
        values = [
            tuple(_scalar_value(f, base + i, k) for i, (_, f) in enumerate(dtype.fields))
            for k in range(n)
        ]
    else:
        values = [_scalar_value(dtype, base, k) for k in range(n)]
    draw(st.randoms(use_true_random=False)).shuffle(values)
    return values


@st.composite
def tensors(
    draw: st.DrawFn,
    dtypes: st.SearchStrategy[sw.DType] = CONCRETE_DTYPES,
    layouts: st.SearchStrategy[sw.Layout] = ANY_LAYOUTS,
    carrier_classes: st.SearchStrategy[type] = BUILTIN_CARRIERS,
    offsets: st.SearchStrategy[int] = OFFSETS,
    mutable: st.SearchStrategy[bool] = MUTABLE,
    extra_slots: st.SearchStrategy[int] = EXTRA_SLOTS,
) -> sw.Tensor:
    """A tensor at a random offset of a fresh carrier of offset + cosize + extra slots.

    Every slot holds a distinct value (where the dtype allows), so reading a wrong slot
    (a hole, the region before the offset or the spare slots after the window) shows.
    Abstract dtypes need carrier classes that store them (Generic, not CPU).
    """
    dtype = draw(dtypes)
    layout = draw(layouts)
    offset = draw(offsets)
    carrier_class = draw(carrier_classes)
    n = offset + layout.cosize + draw(extra_slots)
    values = draw(slot_values(dtype, n))
    carrier = carrier_class(dtype, values=values, mutable=draw(mutable))
    return sw.Tensor(carrier, layout, offset)


def cpu_tensors(
    dtypes: st.SearchStrategy[sw.DType] = EXPORTABLE_DTYPES,
    layouts: st.SearchStrategy[sw.Layout] = ANY_LAYOUTS,
    offsets: st.SearchStrategy[int] = OFFSETS,
    mutable: st.SearchStrategy[bool] = MUTABLE,
    extra_slots: st.SearchStrategy[int] = EXTRA_SLOTS,
) -> st.SearchStrategy[sw.Tensor]:
    """Tensors over CPU carriers, by default of an exportable dtype (see ``tensors``)."""
    return tensors(dtypes, layouts, st.just(sw.CPU), offsets, mutable, extra_slots)


@st.composite
def filled_carriers(
    draw: st.DrawFn,
    dtypes: st.SearchStrategy[sw.DType] = CONCRETE_DTYPES,
    carrier_classes: st.SearchStrategy[type] = BUILTIN_CARRIERS,
    max_slots: int = 32,
) -> sw.Carrier:
    """A fresh, publicly mutable carrier of 0..max_slots distinct values (see ``slot_values``)."""
    dtype = draw(dtypes)
    values = draw(slot_values(dtype, draw(st.integers(0, max_slots))))
    return draw(carrier_classes)(dtype, values=values)


@st.composite
def slot_ranges(draw: st.DrawFn, slots: int) -> tuple[int, int]:
    """(first, count) with 0 <= first <= first + count <= slots: a valid range of a carrier."""
    first = draw(st.integers(0, slots))
    return first, draw(st.integers(0, slots - first))
