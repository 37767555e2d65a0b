"""The one strategies module: hypothesis strategies shared by every Python test.

Conformance and property tests draw layouts (and, as later capabilities land,
dtypes, carriers and tensors) from here, so "for any layout" means the same
families everywhere: nested shapes with extents 0 and 1, compact strides,
permuted modes, holes, stride-zero broadcast modes and arbitrary strides.
The C++ RapidCheck generators in ``property_tests/cpp/layout_generators.h``
mirror these families. It ships in the wheel, in the carrier kit, whose checks draw
their layouts from here too.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable, Sequence
from typing import cast

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


def collapse(coord: IntTuple, shape: IntTuple) -> int:
    """The integer standing for ``coord`` within ``shape``: its colexicographic index."""
    if isinstance(shape, int):
        assert isinstance(coord, int)
        return coord
    assert not isinstance(coord, int)
    index, weight = 0, 1
    for c, s in zip(coord, shape, strict=True):
        index += collapse(c, s) * weight
        weight *= shape_size(s)
    return index


def single_collapses(coord: IntTuple, shape: IntTuple) -> list[IntTuple]:
    """``coord`` with one tuple-shaped sub-coordinate below the root replaced by its integer.

    One form per tuple-shaped node of ``shape`` other than the root (whose integer is the
    flat index): each mixes integer and tuple positions as a caller may.
    """
    if isinstance(shape, int):
        return []
    assert not isinstance(coord, int)
    forms: list[IntTuple] = []
    for k, (c, s) in enumerate(zip(coord, shape, strict=True)):
        if isinstance(s, int):
            continue
        for replacement in [collapse(c, s), *single_collapses(c, s)]:
            forms.append((*coord[:k], replacement, *coord[k + 1 :]))
    return forms


@st.composite
def mixed_coordinates(draw: st.DrawFn, coord: IntTuple, shape: IntTuple) -> IntTuple:
    """``coord`` with any set of its tuple-shaped sub-coordinates below the root collapsed."""

    def build(c: IntTuple, s: IntTuple) -> IntTuple:
        if isinstance(s, int):
            return c
        assert not isinstance(c, int)
        return tuple(
            collapse(x, y) if not isinstance(y, int) and draw(st.booleans()) else build(x, y)
            for x, y in zip(c, s, strict=True)
        )

    return build(coord, shape)


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


def shapes(
    extents: st.SearchStrategy[int] = EXTENTS, max_size: int = MAX_SIZE
) -> st.SearchStrategy[IntTuple]:
    """Shape trees of depth <= 3, at most MAX_LEAVES leaves and size <= ``max_size``."""
    trees = st.recursive(
        extents,
        lambda children: st.lists(children, max_size=3).map(tuple),
        max_leaves=MAX_LEAVES,
    )
    return trees.filter(
        lambda s: len(flatten(s)) <= MAX_LEAVES and shape_size(s) <= max_size and _depth(s) <= 3
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
    return draw(layouts_of_shape(draw(shapes(extents)), families))


@st.composite
def layouts_of_shape(
    draw: st.DrawFn, shape: IntTuple, families: Sequence[str] = STRIDE_FAMILIES
) -> sw.Layout:
    """A layout of exactly ``shape`` with leaf strides from one of ``families``."""
    family = draw(st.sampled_from(families))
    strides = draw(strides_for(flatten(shape), family))
    return sw.Layout(shape, unflatten(strides, shape))


INJECTIVE_FAMILIES = ("compact", "permuted", "holes")


def injective_layouts() -> st.SearchStrategy[sw.Layout]:
    """Layouts whose families guarantee injectivity (compact, permuted, holes)."""
    return layouts(families=INJECTIVE_FAMILIES)


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


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors + ([n] if n > 1 else [])


@st.composite
def shapes_of_size(draw: st.DrawFn, size: int) -> IntTuple:
    """A shape tree of depth <= 2 and size ``size``, to reshape to: the prime factors of
    ``size`` shuffled and grouped into leaves, extent-1 leaves mixed in, consecutive
    leaves grouped into tuple modes; for size 0, small extents with at least one 0."""
    if size == 0:
        leaves = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
        leaves[draw(st.integers(0, len(leaves) - 1))] = 0
    else:
        factors = draw(st.permutations(_prime_factors(size)))
        cuts = sorted(draw(st.sets(st.integers(1, max(len(factors) - 1, 1)), max_size=4)))
        bounds = [0, *(c for c in cuts if c < len(factors)), len(factors)]
        leaves = [math.prod(factors[a:b]) for a, b in itertools.pairwise(bounds)]
        leaves = [leaf for leaf in leaves if leaf > 1]
        for _ in range(draw(st.integers(0, 2))):
            leaves.insert(draw(st.integers(0, len(leaves))), 1)
    if len(leaves) == 1 and draw(st.booleans()):
        return leaves[0]
    modes: list[IntTuple] = []
    k = 0
    while k < len(leaves):
        width = draw(st.integers(1, len(leaves) - k))
        group = tuple(leaves[k : k + width])
        modes.append(group if width > 1 or draw(st.booleans()) else group[0])
        k += width
    return tuple(modes)


# Slice parts as Python accepts them: None, small and negative bounds, and integers
# far beyond int64 (which clamp, as Python's slice.indices does).
HUGE_INTEGERS = st.sampled_from([2**63 - 1, 2**63, 2**64, 2**70, -(2**63), -(2**63) - 1, -(2**70)])


def slice_bounds() -> st.SearchStrategy[int | None]:
    """Slice start or stop: None, near the extents drawn here, negative, or huge."""
    return st.none() | st.integers(-10, 10) | HUGE_INTEGERS | st.integers(-(2**80), 2**80)


def slice_steps() -> st.SearchStrategy[int | None]:
    """A positive slice step (or None): small, or huge enough to select one element."""
    return (
        st.none()
        | st.integers(1, 7)
        | HUGE_INTEGERS.filter(lambda n: n > 0)
        | st.integers(1, 2**80)
    )


def coordinates(layout: sw.Layout) -> st.SearchStrategy[int]:
    """Flat indices of ``layout`` (requires size > 0)."""
    return st.integers(0, layout.size - 1)


# -- dtypes, carriers and tensors ----------------------------------------------

CONCRETE_DTYPES = st.sampled_from([sw.Bool, sw.Int32, sw.Float32])
EXPORTABLE_DTYPES = st.sampled_from([sw.Float32, sw.Int32])
BUILTIN_CARRIERS = st.sampled_from([sw.CPU, sw.Generic])
# The built-ins, FileBacked and BlockDeviceCarrier (each over a temporary file, removed
# when it is released or collected) and Metal (device memory, which holds every concrete
# dtype): for properties of every storage the span walker reads.
STORING_CARRIERS = st.sampled_from(
    [sw.CPU, sw.Generic, sw.FileBacked, sw.BlockDeviceCarrier, sw.Metal]
)
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
    values: list[object]
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
def small_float_values(draw: st.DrawFn, dtype: sw.DType, n: int) -> list[float]:
    """``n`` distinct Float32 values near zero (multiples of 1/4, |v| <= n/8 + 2), shuffled.

    For arithmetic oracles: every value is exact in single precision and sums and
    products of a few of them stay small, so rounding rarely enters and a wrong slot
    read still shows (the values are pairwise distinct). ``dtype`` must be Float32.
    """
    assert dtype == sw.Float32
    shift = draw(st.integers(-8, 8))
    values = [(k - n // 2 + shift) / 4 for k in range(n)]
    draw(st.randoms(use_true_random=False)).shuffle(values)
    return values


# Hypothesis cannot draw a list of more than a few thousand elements; a carrier's slot
# count (offset + cosize + spare slots) can exceed that. Values for more slots repeat a
# drawn cycle of at most this many.
MAX_DRAWN_VALUES = 512


def _cycled(draw: st.DrawFn, element: st.SearchStrategy, n: int) -> list:
    """``n`` values: a drawn list of ``min(n, MAX_DRAWN_VALUES)`` repeated."""
    cycle = draw(
        st.lists(element, min_size=min(n, MAX_DRAWN_VALUES), max_size=min(n, MAX_DRAWN_VALUES))
    )
    return [cycle[i % len(cycle)] for i in range(n)] if cycle else []


@st.composite
def comparable_values(draw: st.DrawFn, dtype: sw.DType, n: int) -> list:
    """``n`` values of ``dtype`` drawn from a small pool, so that two tensors over them
    hold equal elements as often as ordered ones: for comparison oracles. Float32 pools
    hold exact quarters, signed zeros and, sometimes, NaN and the infinities; Int32 pools
    hold negatives and both extremes (a wrong, unsigned order shows); Bool pools both
    truths."""
    if dtype == sw.Bool:
        pool: list = [False, True]
    elif dtype == sw.Int32:
        pool = [-(2**31), -3, -1, 0, 1, 2, 2**31 - 1]
    else:
        pool = [-1.5, -0.25, -0.0, 0.0, 0.25, 1.0, 2.0]
        if draw(st.booleans()):
            pool += [math.nan, math.inf, -math.inf]
    return _cycled(draw, st.sampled_from(pool), n)


@st.composite
def nonzero_float_values(draw: st.DrawFn, dtype: sw.DType, n: int) -> list[float]:
    """``n`` Float32 values that are exact quarters with 0.5 <= |v| <= 4: divisors for
    division oracles (no zero, quotients and their gradients stay small). ``dtype`` must
    be Float32."""
    assert dtype == sw.Float32
    magnitudes = st.integers(2, 16).map(lambda k: k / 4)
    signs = st.sampled_from([1.0, -1.0])
    return _cycled(draw, st.tuples(signs, magnitudes).map(lambda p: p[0] * p[1]), n)


@st.composite
def tensors(
    draw: st.DrawFn,
    dtypes: st.SearchStrategy[sw.DType] = CONCRETE_DTYPES,
    layouts: st.SearchStrategy[sw.Layout] = ANY_LAYOUTS,
    carrier_classes: st.SearchStrategy[type] = BUILTIN_CARRIERS,
    offsets: st.SearchStrategy[int] = OFFSETS,
    mutable: st.SearchStrategy[bool] = MUTABLE,
    extra_slots: st.SearchStrategy[int] = EXTRA_SLOTS,
    values_for: Callable[[sw.DType, int], st.SearchStrategy[list]] = slot_values,
) -> sw.Tensor:
    """A tensor at a random offset of a fresh carrier of offset + cosize + extra slots.

    Every slot holds a distinct value (where the dtype allows), so reading a wrong slot
    (a hole, the region before the offset or the spare slots after the window) shows.
    Abstract dtypes need carrier classes that store them (Generic, not CPU). ``values_for``
    draws the carrier's slot values from the dtype and the slot count.
    """
    dtype = draw(dtypes)
    layout = draw(layouts)
    offset = draw(offsets)
    carrier_class = draw(carrier_classes)
    n = offset + layout.cosize + draw(extra_slots)
    values = draw(values_for(dtype, n))
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


# -- adversarial arguments (the fuzz suite, property_tests/fuzz.py) -------------------
#
# Values of every kind a caller can pass where the binding expects an integer, a tree,
# a dtype, a carrier, a layout or a value: None, bools, boundary and huge integers,
# non-finite floats, strings, mixed nested tuples and lists (very deep ones too), NumPy
# scalars and arrays, strideweave objects, and objects whose __index__, __len__,
# __iter__, __float__ or __bool__ raise or mutate the container that holds them. Every
# value repr()s as a Python expression (see ``describe``) so a crash report is a
# reproducer.


class HostileError(Exception):
    """Raised by the hostile objects below; the binding must let it propagate."""


class RaisingIndex:
    """An integer-like whose ``__index__`` raises."""

    def __index__(self) -> int:
        raise HostileError("__index__")

    def __repr__(self) -> str:
        return "RaisingIndex()"


class WrongIndex:
    """An integer-like whose ``__index__`` returns a non-integer."""

    def __index__(self):  # type: ignore[no-untyped-def]
        return 1.5

    def __repr__(self) -> str:
        return "WrongIndex()"


class IndexOf:
    """An integer-like whose ``__index__`` returns ``value`` (any Python int)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"IndexOf({self.value!r})"


class MutatingIndex:
    """An integer-like whose ``__index__`` mutates the list holding it, then returns 1.

    ``how`` is ``clear`` (the list empties), ``grow`` (1,000 items appended) or
    ``replace`` (every item becomes None), so a binding that checked the length before
    reading items, or kept a borrowed item, reads past the end or a freed object.
    """

    def __init__(self, how: str) -> None:
        self.how = how
        self.owner: list = []

    def __index__(self) -> int:
        if self.how == "clear":
            self.owner.clear()
        elif self.how == "grow":
            self.owner.extend(range(1000))
        else:
            self.owner[:] = [None] * len(self.owner)
        return 1

    def __repr__(self) -> str:
        return f"MutatingIndex({self.how!r})"


class HostileSequence:
    """A sequence that is not a list or tuple, with a chosen misbehaviour.

    ``raising_len``: ``__len__`` raises; ``lying_len``: ``__len__`` says 5 but only 2
    items exist; ``huge_len``: ``__len__`` is ``sys.maxsize``; ``raising_iter``:
    ``__iter__`` raises; ``raising_getitem``: every item raises.
    """

    def __init__(self, how: str, items: Sequence[object] = (1, 2)) -> None:
        self.how = how
        self.items = list(items)

    def __len__(self) -> int:
        if self.how == "raising_len":
            raise HostileError("__len__")
        if self.how == "lying_len":
            return 5
        if self.how == "huge_len":
            return 2**63 - 1
        return len(self.items)

    def __getitem__(self, i: int) -> object:
        if self.how == "raising_getitem":
            raise HostileError("__getitem__")
        return self.items[i]

    def __iter__(self):  # type: ignore[no-untyped-def]
        if self.how == "raising_iter":
            raise HostileError("__iter__")
        return iter(self.items)

    def __repr__(self) -> str:
        return f"HostileSequence({self.how!r}, {self.items!r})"


class HostileScalar:
    """A value whose ``__float__``, ``__int__``, ``__bool__``, ``__eq__`` and ``__hash__`` raise."""

    def __float__(self) -> float:
        raise HostileError("__float__")

    def __int__(self) -> int:
        raise HostileError("__int__")

    def __bool__(self) -> bool:
        raise HostileError("__bool__")

    def __eq__(self, other: object) -> bool:
        raise HostileError("__eq__")

    def __hash__(self) -> int:
        raise HostileError("__hash__")

    def __repr__(self) -> str:
        return "HostileScalar()"


class RaisingToList:
    """An array-like whose ``tolist`` raises (``tensor`` reads array-likes through it)."""

    def tolist(self) -> list:
        raise HostileError("tolist")

    def __repr__(self) -> str:
        return "RaisingToList()"


def nest(value: object, depth: int, container: type = tuple) -> object:
    """``value`` wrapped ``depth`` times in one-element ``container``s."""
    for _ in range(depth):
        value = container([value])
    return value


def describe(value: object) -> str:
    """A Python expression for ``value``, short even for very deep one-element nesting.

    Uses the names of this module (``nest``, ``IndexOf``, ...) and ``np``, ``sw``.
    """
    chain, inner = 0, value
    while (
        isinstance(inner, tuple | list)
        and type(inner) in (tuple, list)
        and len(inner) == 1
        and type(inner[0]) is type(inner)
    ):
        chain, inner = chain + 1, inner[0]
    if chain >= 8:
        return f"nest({describe(inner)}, {chain}, {type(value).__name__})"
    if type(value) is tuple:
        items = ", ".join(describe(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if type(value) is list:
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if type(value) is dict:
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value.items()) + "}"
    if type(value) is slice:  # its repr recurses into a deeply nested bound
        return f"slice({describe(value.start)}, {describe(value.stop)}, {describe(value.step)})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if type(value).__module__ == "numpy":
        return _describe_numpy(value)
    if isinstance(value, MutatingIndex):
        return f"<{value!r} in a list of {len(value.owner)}>"
    if isinstance(value, sw.Layout | sw.DType | sw.Carrier | sw.Tensor):
        return _describe_strideweave(value)
    return repr(value)


def _describe_strideweave(value: sw.Layout | sw.DType | sw.Carrier | sw.Tensor) -> str:
    if isinstance(value, sw.Layout):
        return f"sw.Layout({describe(value.shape)}, {describe(value.stride)})"
    if isinstance(value, sw.DType):
        if not value.is_compound:
            return f"sw.{value.name}"
        fields = ", ".join(f"{name}={describe(f)}" for name, f in value.fields)
        return f"sw.compound({fields})"
    if isinstance(value, sw.Carrier):
        kind = f"sw.{type(value).__name__}"
        if value.is_released:
            return f"<released {kind}({describe(value.dtype)})>"
        mutable = "" if value.is_mutable() else ", mutable=False"
        return f"{kind}({describe(value.dtype)}, values={value.tolist()!r}{mutable})"
    if value.is_multi_subtensor:
        planes = ", ".join(describe(p) for p in value.planes)
        return f"sw.Tensor.from_planes({describe(value.dtype)}, [{planes}])"
    return f"sw.Tensor({describe(value.carrier)}, {describe(value.layout)}, {value.offset})"


def _describe_numpy(value: object) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype})"
    assert isinstance(value, np.generic)
    return f"np.{type(value).__name__}({value.item()!r})"


EDGE_INTS = st.sampled_from(
    [
        *(0, 1, 2, 3, -1, -2),
        *(2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**62),
        *(2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**30, -(10**30)),
    ]
)
FUZZ_INTS = st.one_of(st.integers(-4, 16), EDGE_INTS)
FUZZ_FLOATS = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 1e-30, 1e30, -1.5, math.inf, -math.inf, math.nan]),
    st.floats(allow_nan=True, allow_infinity=True),
)
DEEP_NESTING_DEPTHS = st.sampled_from([63, 64, 65, 1000, 30_000])


def _numpy_scalars() -> st.SearchStrategy[object]:
    import numpy as np

    return st.one_of(
        st.integers(-(2**31), 2**31 - 1).map(np.int32),
        st.integers(-(2**63), 2**63 - 1).map(np.int64),
        st.sampled_from([0, 1, 2**64 - 1]).map(np.uint64),
        st.floats(width=32).map(np.float32),
        FUZZ_FLOATS.map(np.float64),
        st.booleans().map(np.bool_),
    )


def _numpy_arrays() -> st.SearchStrategy[object]:
    import numpy as np

    shapes_ = st.sampled_from([(), (0,), (1,), (3,), (2, 3), (2, 0, 2), (1, 1, 1, 1)])
    dtypes_ = st.sampled_from([np.int32, np.int64, np.float32, np.float64, np.bool_, object])
    return st.builds(
        lambda shape, dtype: np.arange(math.prod(shape)).reshape(shape).astype(dtype),
        shapes_,
        dtypes_,
    )


def writable_buffers() -> st.SearchStrategy[object]:
    """Buffers to copy into: byte arrays of any small size, NumPy arrays, read-only bytes."""
    return st.one_of(
        st.integers(0, 64).map(bytearray),
        _numpy_arrays(),
        st.binary(max_size=16),
    )


@st.composite
def mutating_lists(draw: st.DrawFn) -> list:
    """A list whose first item is a MutatingIndex that mutates that very list.

    One or two items, and ``clear`` half the time: a binding that reads the length,
    converts the first item and then reads the second reads past the end.
    """
    hostile = MutatingIndex(draw(st.sampled_from(["clear", "grow", "clear", "replace"])))
    items: list = [hostile, *draw(st.lists(st.integers(0, 3), max_size=1))]
    hostile.owner = items
    return items


def _one_branch(strategy: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """``strategy`` as one branch of any one_of that includes it.

    st.one_of flattens nested one_ofs and picks among all their branches alike, so a
    one_of of five kinds of value next to one other strategy would draw that other
    strategy a sixth of the time; a mapped strategy is not flattened.
    """
    return strategy.map(lambda value: value)


def hostile_objects() -> st.SearchStrategy[object]:
    """Objects whose protocols raise, lie or mutate their container."""
    return _one_branch(
        st.one_of(
            st.builds(RaisingIndex),
            st.builds(WrongIndex),
            FUZZ_INTS.map(IndexOf),
            mutating_lists(),
            st.builds(
                HostileSequence,
                st.sampled_from(
                    ["raising_len", "lying_len", "huge_len", "raising_iter", "raising_getitem"]
                ),
                st.lists(FUZZ_INTS, max_size=3),
            ),
            st.builds(HostileScalar),
            st.builds(RaisingToList),
        )
    )


def fuzz_scalars() -> st.SearchStrategy[object]:
    """None, bools, integers (boundaries, huge, negative), floats, strings and the like."""
    return st.one_of(
        st.none(),
        st.booleans(),
        FUZZ_INTS,
        FUZZ_FLOATS,
        st.text(max_size=4),
        st.binary(max_size=4),
        st.complex_numbers(max_magnitude=4),
        st.sampled_from([Ellipsis, slice(None), slice(0, 2), object(), int, sw.Float32]),
        _numpy_scalars(),
    )


def fuzz_trees(leaves: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """Nested tuples and lists of mixed depth over ``leaves``, and very deep nesting."""
    trees = st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.lists(children, max_size=4).map(tuple)
        ),
        max_leaves=12,
    )
    deep = st.builds(nest, leaves, DEEP_NESTING_DEPTHS, st.sampled_from([tuple, list]))
    return st.one_of(trees, deep)


def fuzz_int_trees() -> st.SearchStrategy[object]:
    """Integer trees (Shape- or coordinate-like) with a few hostile leaves mixed in."""
    leaves = st.one_of(FUZZ_INTS, FUZZ_INTS, FUZZ_INTS, fuzz_scalars(), hostile_objects())
    return fuzz_trees(leaves)


def fuzz_layouts() -> st.SearchStrategy[sw.Layout]:
    """Generated layouts, and layouts with huge or deeply nested extents and strides."""
    return st.one_of(
        layouts(),
        st.builds(sw.Layout, st.sampled_from([2**31, 2**40, 2**62]), st.integers(0, 2)),
        st.builds(lambda d: sw.Layout(cast(IntTuple, nest(2, d))), st.sampled_from([8, 32])),
    )


def fuzz_strideweave_objects() -> st.SearchStrategy[object]:
    """Layouts, dtypes, carrier classes, carriers (live and released) and tensors."""

    def released(carrier: sw.Carrier) -> sw.Carrier:
        carrier.release()
        return carrier

    dtypes = st.sampled_from([sw.Bool, sw.Int32, sw.Float32, sw.Floating, sw.Any])
    carriers = st.builds(
        lambda cls, dtype, n: cls(dtype, n),
        BUILTIN_CARRIERS,
        CONCRETE_DTYPES,
        st.integers(0, 6),
    )
    return st.one_of(
        fuzz_layouts(),
        dtypes,
        st.just(sw.compound(x=sw.Float32, y=sw.Int32)),
        BUILTIN_CARRIERS,
        carriers,
        carriers.map(released),
        tensors(),
    )


def fuzz_values() -> st.SearchStrategy[object]:
    """Anything a caller can pass: scalars, trees, NumPy values, hostile and strideweave objects."""
    return _one_branch(
        st.one_of(
            fuzz_scalars(),
            hostile_objects(),
            fuzz_trees(fuzz_scalars()),
            _numpy_arrays(),
            fuzz_strideweave_objects(),
        )
    )


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
