"""The fuzz suite's targets: every public entry point of strideweave, with its arguments
and the only exception types it may raise.

``ENTRY_POINTS`` maps each entry point ("zeros", "Layout.__init__", "Tensor.__getitem__",
...) to a ``Target``: the exception types the specs allow it (besides ``HostileError``,
which the hostile arguments raise themselves and which must propagate), the objects it is
called on (for methods), and its plausible arguments. A call draws, three times in four,
a receiver of the method's class and plausible arguments (the right structure, hostile
leaves), and otherwise anything (any values, any keywords); properties are read on every
receiver of their class. ``public_entry_points()`` enumerates the package, so
``test_fuzz.py::test_every_public_name_has_a_fuzz_target`` fails when a name lands
without a target here.

Run targets in this process (what ``test_fuzz.py`` does in a subprocess, so a crash is
a failure naming the target and its last call, left in REPORT_DIR; see ``main``):

    python -m property_tests.fuzz REPORT_DIR TARGET...

The number of examples comes from the hypothesis profile (HYPOTHESIS_PROFILE: ``ci``
by default, ``thorough`` for long local runs).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import inspect
import os
import pathlib
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

import strideweave as sw
import strideweave.carriers.move
import strideweave.carriers.tiled_evictable
from strideweave.kit import strategies as S

# Each target runs the profile's max_examples divided by this (ci: 100, thorough: 1000):
# there are some seventy targets, and each call draws from large strategies.
EXAMPLES_DIVISOR = 2
# A target still running after this many seconds is reported as hung.
WATCHDOG_SECONDS = 240

# Names of the package that are not entry points, each with its reason.
NEEDS_NO_TARGET = {
    "Any": "a dtype constant; its methods are DType's",
    "Bool": "a dtype constant; its methods are DType's",
    "Float32": "a dtype constant; its methods are DType's",
    "Floating": "a dtype constant; its methods are DType's",
    "Int32": "a dtype constant; its methods are DType's",
    "carriers": "a module re-exported by the package; its names are the package's",
    "dtypes": "a module re-exported by the package; its names are the package's",
    "layout": "a module re-exported by the package; its names are the package's",
    "profiling": "a module re-exported by the package; its names are the package's",
    "tensors": "a module re-exported by the package; its names are the package's",
    "ops": "a module re-exported by the package; its names are the package's",
    "autograd": "a module re-exported by the package; its names are the package's",
}
# Subpackages that are attributes of the package only once something imported them: not
# entry points of the library, each with its reason.
ON_DEMAND_SUBPACKAGES = {
    "kit": "the conformance kit: its CLI and plugin run tests, they take no library arguments",
    "contrib": "optional carriers over other packages (tensorstore), tested on their own",
}

# Class attributes that are not entry points: Python's bookkeeping and pybind11's.
CLASS_BOOKKEEPING = {
    "__doc__",
    "__module__",
    "__dict__",
    "__weakref__",
    "_pybind11_conduit_v1_",
    "__orig_bases__",
}
# Class attributes of the move operation classes that are data, each with its reason.
CLASS_DATA = {
    "source_class": "a move operation class's pin: a carrier class or None",
    "destination_class": "a move operation class's pin: a carrier class or None",
}
# Modules below the package whose public functions are entry points too, named
# "<module path>.<function>" ("carriers.move.dispatch_move").
SUBMODULES = ("carriers.move", "carriers.tiled_evictable")


def resolve(path: str) -> Any:
    """The object at the dotted ``path`` below the package ("carriers.move", "Layout")."""
    obj: Any = sw
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def public_entry_points() -> set[str]:
    """Every public function of strideweave and of its SUBMODULES, and every attribute its
    classes define."""
    names = {f"{module}.{name}" for module in SUBMODULES for name in resolve(module).__all__}
    for name in dir(sw):
        if name.startswith("_") or name in NEEDS_NO_TARGET or name in ON_DEMAND_SUBPACKAGES:
            continue
        obj = getattr(sw, name)
        if not inspect.isclass(obj):
            names.add(name)
            continue
        data = CLASS_DATA if issubclass(obj, sw.MoveOperation) else {}
        for member in vars(obj):
            if member not in CLASS_BOOKKEEPING and member not in data:
                names.add(f"{name}.{member}")
    return names


# -- receivers and arguments -------------------------------------------------------

ANY = S.fuzz_values()
RECORD = sw.compound(x=sw.Float32, n=sw.Int32)
INTS = st.one_of(S.FUZZ_INTS, ANY)
NUMBERS = st.one_of(INTS, S.FUZZ_FLOATS)
TREES = st.one_of(S.fuzz_int_trees(), ANY)
LAYOUT_OBJECTS = S.fuzz_layouts()
LAYOUTS = st.one_of(LAYOUT_OBJECTS, LAYOUT_OBJECTS, ANY)
DTYPE_OBJECTS = st.sampled_from([sw.Bool, sw.Int32, sw.Float32, sw.Floating, sw.Any, RECORD])
DTYPES = st.one_of(DTYPE_OBJECTS, st.none(), ANY)


def _released(carrier: sw.Carrier) -> sw.Carrier:
    carrier.release()
    return carrier


def _owned(carrier: sw.Carrier) -> sw.Carrier:
    sw.Generic(carrier.dtype).take_ownership(carrier)
    return carrier


class _FuzzPythonStorage(sw.PythonStorageCarrier):
    """Slots in a bytearray: the Carrier targets reach a Python carrier's storage methods."""

    def __init__(self, dtype, n=None, *, values=None, mutable=True):
        self.storage = bytearray()
        super().__init__(dtype, n, values=values, mutable=mutable)

    def _span(self, first: int, count: int) -> slice:
        return slice(first * self.dtype.itemsize, (first + count) * self.dtype.itemsize)

    def _slot_count(self):
        return len(self.storage) // self.dtype.itemsize

    def _read_range(self, first, count, out):
        out[:] = self.storage[self._span(first, count)]

    def _write_range(self, first, count, data):
        self.storage[self._span(first, count)] = data

    def _allocate(self, n):
        self.storage = bytearray(n * self.dtype.itemsize)

    def _release(self):
        self.storage = bytearray()


_FRESH_CARRIERS = st.builds(
    lambda cls, dtype, n, mutable: cls(dtype, n, mutable=mutable),
    st.one_of(S.STORING_CARRIERS, st.just(_FuzzPythonStorage)),
    S.CONCRETE_DTYPES,
    st.integers(0, 6),
    st.booleans(),
)


def _evictable(tiers: tuple[type, type], dtype, n: int, evicted: bool, released: bool):
    """An Evictable over fresh tiers, resident or evicted, maybe released."""
    fast_class, slow_class = tiers
    e = sw.Evictable(fast_class(dtype, n), slow_class(dtype))
    if evicted:
        e.evict()
    if released:
        e.release()
    return e


EVICTABLES = st.builds(
    _evictable,
    st.tuples(S.STORING_CARRIERS, S.STORING_CARRIERS),
    S.CONCRETE_DTYPES,
    st.integers(0, 6),
    st.booleans(),
    st.booleans(),
)


def _tiled(dtype: sw.DType, n: int, tile_slots: int, limit: int | None, resident: list) -> object:
    """A TiledEvictable over CPU and FileBacked tiles, some of them made resident."""
    tiled = sw.TiledEvictable(dtype, n, tile_slots, resident_limit=limit)
    tiled.make_resident([t for t in resident if t < tiled.tile_count][: limit or 3]).wait()
    return tiled


TILED_CARRIERS = st.builds(
    _tiled,
    S.CONCRETE_DTYPES,
    st.integers(0, 9),
    st.integers(1, 4),
    st.one_of(st.none(), st.integers(1, 3)),
    st.lists(st.integers(0, 8), max_size=3),
)
TILED_CARRIERS = st.one_of(TILED_CARRIERS, TILED_CARRIERS.map(_released))
CARRIERS = st.one_of(
    _FRESH_CARRIERS,
    TILED_CARRIERS,
    _FRESH_CARRIERS.map(_released),
    _FRESH_CARRIERS.map(_owned),
    st.builds(lambda dtype: sw.Generic(dtype), st.sampled_from([sw.Floating, sw.Any])),
    EVICTABLES,
)
CPU_CARRIERS = st.one_of(
    st.builds(lambda dtype, n: sw.CPU(dtype, n), S.CONCRETE_DTYPES, st.integers(0, 6)),
    st.builds(lambda dtype, n: _released(sw.CPU(dtype, n)), S.CONCRETE_DTYPES, st.integers(0, 6)),
)


@st.composite
def _multi_subtensor(draw: st.DrawFn) -> sw.Tensor:
    shape = draw(st.sampled_from([3, (2, 2), 0]))
    return sw.Tensor.from_planes(
        RECORD, [sw.zeros(shape, dtype=sw.Float32), sw.zeros(shape, dtype=sw.Int32)]
    )


@st.composite
def _over_released(draw: st.DrawFn) -> sw.Tensor:
    t = draw(S.tensors())
    t.carrier.release()
    return t


TENSORS = st.one_of(
    S.tensors(),
    S.cpu_tensors(),
    _multi_subtensor(),
    _over_released(),
    st.builds(lambda: sw.arange(0, 6, dtype=sw.Int32)[1::2]),
)
TOKENS = CARRIERS.map(lambda c: c.version_token())
FILE_BACKED_CARRIERS = st.one_of(
    st.builds(lambda dtype, n: sw.FileBacked(dtype, n), S.CONCRETE_DTYPES, st.integers(0, 6)),
    st.builds(
        lambda dtype, n: _released(sw.FileBacked(dtype, n)), S.CONCRETE_DTYPES, st.integers(0, 6)
    ),
)
BLOCK_DEVICE_CARRIERS = st.one_of(
    st.builds(
        lambda dtype, n: sw.BlockDeviceCarrier(dtype, n), S.CONCRETE_DTYPES, st.integers(0, 6)
    ),
    st.builds(
        lambda dtype, n: _released(sw.BlockDeviceCarrier(dtype, n)),
        S.CONCRETE_DTYPES,
        st.integers(0, 6),
    ),
)
CARRIER_CLASSES = st.sampled_from(
    [sw.CPU.carrier_class, sw.Generic.carrier_class, sw.FileBacked.carrier_class]
)
# FileBacked's path: None, names in the fuzz child's scratch directory (main() makes it
# the working directory), and anything that is not a path. Never a path that could
# reach outside the scratch directory: the constructor creates and resizes files.
FILE_PATHS = st.one_of(
    st.none(),
    st.text(st.characters(exclude_characters="/\x00"), max_size=6),
    st.binary(max_size=6).filter(lambda b: b"/" not in b and b"\x00" not in b),
    ANY.filter(lambda v: not isinstance(v, (str, bytes, os.PathLike))),
)

# (major, minor) and (device_type, device_id): pairs, wrong lengths, and lists that an
# item's __index__ mutates while the binding reads them.
VERSION_PAIRS = st.sampled_from(
    [
        st.tuples(S.FUZZ_INTS, S.FUZZ_INTS),
        st.lists(S.FUZZ_INTS, min_size=0, max_size=3),
        S.mutating_lists(),
        S.hostile_objects(),
        st.none(),
        ANY,
    ]
).flatmap(lambda kind: kind)  # each kind alike (st.one_of would weigh its branches' branches)
NUMPY_DTYPES = st.sampled_from(["float32", "int32", "float64", "bool", "int8", "complex64"])
SLICES = st.builds(
    slice, st.one_of(st.none(), INTS), st.one_of(st.none(), INTS), st.one_of(st.none(), INTS)
)
KEYS = st.one_of(
    INTS,
    SLICES,
    st.lists(st.one_of(INTS, SLICES), max_size=4).map(tuple),
    ANY,
)


def args(*positional: st.SearchStrategy[Any], **keywords: st.SearchStrategy[Any]):
    """Plausible arguments: each positional from its strategy, each keyword maybe given."""
    kwargs = st.fixed_dictionaries({}, optional=keywords) if keywords else st.just({})
    return st.tuples(st.tuples(*positional), kwargs)


def arbitrary_args(keywords: tuple[str, ...]) -> st.SearchStrategy[tuple[tuple, dict]]:
    """Any values in any number of positions, under real and bogus keywords."""
    return st.tuples(
        st.lists(ANY, max_size=4).map(tuple),
        st.dictionaries(st.sampled_from((*keywords, "bogus")), ANY, max_size=2),
    )


@dataclass(frozen=True)
class Target:
    """One entry point: what it may raise, what it is called on, its plausible arguments."""

    accepted: tuple[type[BaseException], ...]
    plausible: st.SearchStrategy[tuple[tuple, dict]] = field(default_factory=lambda: args())
    receivers: st.SearchStrategy[Any] | None = None
    keywords: tuple[str, ...] = ()
    # Methods written in Python (strideweave/tensors.py) fail on a receiver of another
    # type as any Python function does (AttributeError): they get receivers only.
    foreign_receivers: bool = True
    # False for an entry point that acts on the file system wherever its arguments point
    # (FileBacked's constructor): it gets plausible arguments only, their paths confined.
    arbitrary_arguments: bool = True


# The exception types, abbreviated to keep the table readable.
T, V, R, M, OS = TypeError, ValueError, RuntimeError, MemoryError, OSError
IX, B, N, K = IndexError, BufferError, NotImplementedError, KeyError


# The legacy move registry is process-global: registry targets name carrier classes only
# they use, so the entries they add collide with no one's, and unregistration gets
# plausible arguments only (never a built-in entry's pair).
class _FuzzSource(sw.Generic):
    pass


class _FuzzDestination(sw.CPU):
    pass


class _FuzzMove(sw.MoveOperation):
    pass


OPERATION_CLASSES = st.sampled_from(
    [
        sw.MoveOperation,
        sw.ElementwiseMoveOperation,
        sw.CpuToFileBackedMoveOperation,
        sw.FileBackedToCpuMoveOperation,
        _FuzzMove,
    ]
)
OPERATIONS = OPERATION_CLASSES.map(lambda cls: cls())
_OWN_CARRIER_CLASSES = st.sampled_from([_FuzzSource, _FuzzDestination])
_ANY_CLASSES = st.one_of(
    st.sampled_from([sw.Carrier, sw.CPU, sw.Generic, sw.FileBacked, _FuzzSource]),
    OPERATION_CLASSES,
    ANY,
)
# (source_class, destination_class): at least one of them the targets' own, either side.
OWN_PAIRS = st.tuples(_OWN_CARRIER_CLASSES, _ANY_CLASSES, st.booleans()).map(
    lambda drawn: drawn[:2] if drawn[2] else drawn[1::-1]
)
REGISTRATIONS = st.tuples(OWN_PAIRS, st.one_of(OPERATION_CLASSES, _ANY_CLASSES)).map(
    lambda drawn: ((*drawn[0], drawn[1]), {})
)


class _FuzzFailingSource(sw.Generic):
    pass


class _FuzzHookError(Exception):
    """What the fuzz suite's failing copy hook raises: a failed handle's recorded error."""


class _FuzzFailingMove(sw.MoveOperation):
    def _copy(self, tensor, destination, output, element_count):
        raise _FuzzHookError("the fuzz suite's copy hook fails")


def _failed_handle(n: int) -> sw.AwaitMove:
    """A handle whose move failed in its copy hook (the registration is scoped to the call,
    and the failed move unpins both carriers)."""
    source = _FuzzFailingSource(sw.Int32, values=list(range(n)))
    with strideweave.carriers.move.registered_move_operation(
        _FuzzFailingSource, sw.Generic, _FuzzFailingMove
    ):
        return sw.move_async(sw.Tensor(source, sw.Layout(n)), sw.Generic(sw.Int32))


def _move_handle(tensor: sw.Tensor, destination_class: type) -> sw.AwaitMove:
    """A handle of a move of ``tensor`` into an empty ``destination_class`` carrier: done
    or pending (the bulk FileBacked routes run on the process pool)."""
    return sw.move_async(tensor, destination_class(tensor.dtype))


class _FuzzProvider(sw.TransferProvider):
    """Prepares every request with a transfer that writes nothing (the fuzz suite's routes
    move into destinations whose values it never reads)."""

    def prepare(self, request):
        return lambda output: None


def _fresh_class(base: type) -> type:
    """A new carrier class per draw: definitions are permanent, so none is shared."""
    return type("_FuzzDefined", (base,), {})


PROVIDERS = st.sampled_from([sw.TransferProvider(), _FuzzProvider()])
TRANSFER_ROUTES = st.builds(
    lambda source, destination, route_id, provider: sw.TransferRoute(
        source, destination, route_id, provider
    ),
    st.builds(_fresh_class, st.sampled_from([sw.CPU, sw.Generic])),
    st.sampled_from([sw.CPU, sw.Generic, sw.FileBacked]),
    st.text(min_size=1, max_size=8),
    PROVIDERS,
)
DEFINITIONS = st.builds(
    lambda route, fallback: sw.CarrierDefinition(
        route.source_class, routes=[route], elementwise_fallback=fallback
    ),
    TRANSFER_ROUTES,
    st.booleans(),
)


def _captured_request(n: int) -> sw.TransferRequest:
    """The request a provider's prepare() received for a move of n elements over a fresh
    definition-backed pair."""
    source_class, destination_class = _fresh_class(sw.CPU), _fresh_class(sw.CPU)
    seen: list = []

    class Capturing(sw.TransferProvider):
        def prepare(self, request):
            seen.append(request)
            return lambda output: None

    sw.define_carrier(
        sw.CarrierDefinition(
            source_class,
            routes=[sw.TransferRoute(source_class, destination_class, "fuzz", Capturing())],
        )
    )
    source = source_class(sw.Int32, values=list(range(n)))
    sw.move(sw.Tensor(source, sw.Layout(n)), destination_class(sw.Int32))
    return seen[0]


TRANSFER_REQUESTS = st.builds(_captured_request, st.integers(0, 4))


def _profiled(moves: int) -> sw.Profile:
    """A profile that was entered and exited around ``moves`` moves (CPU to FileBacked)."""
    with sw.profile() as prof:
        for _ in range(moves):
            sw.move(sw.Tensor(sw.CPU(sw.Float32, 3), sw.Layout(3)), sw.FileBacked(sw.Float32))
    return prof


# Profiles: fresh ones (entering one leaves a session active in the fuzz child, which only
# records more events) and exited ones holding events.
PROFILES = st.one_of(st.builds(sw.profile), st.builds(_profiled, st.integers(0, 2)))
PROFILE_EVENTS = st.builds(_profiled, st.integers(1, 2)).flatmap(
    lambda prof: st.sampled_from(prof.events)
)
KEY_AVERAGES = PROFILES.map(lambda prof: prof.key_averages())
KEY_AVERAGE_ROWS = st.builds(_profiled, st.integers(1, 2)).flatmap(
    lambda prof: st.sampled_from(prof.key_averages())
)

HANDLES = st.one_of(
    st.builds(_move_handle, S.tensors(carrier_classes=S.STORING_CARRIERS), S.STORING_CARRIERS),
    st.builds(_failed_handle, st.integers(0, 4)),
    st.builds(lambda n: sw.TiledEvictable(sw.Int32, n, 2).project(sw.Layout(n)), st.integers(0, 4)),
    st.builds(lambda n: sw.TiledEvictable(sw.Int32, n, 2).make_resident([0]), st.integers(1, 4)),
)


def _move_node(n: int, destination_class: type) -> sw.MoveNode:
    """The autograd node of a differentiable move of n Float32 values out of CPU."""
    source = sw.Tensor(sw.CPU(sw.Float32, values=[float(v) for v in range(n)]), sw.Layout(n))
    source.requires_grad = True
    return sw.move(source, destination_class(sw.Float32)).autograd_ctx


MOVE_NODES = st.builds(_move_node, st.integers(0, 4), S.STORING_CARRIERS)
# move and move_async: live, released and owned carriers of every kind, tensors of every
# kind (multi-subtensor ones: NotImplementedError), sequences of either. Each call moves
# fresh carriers, so a successful move releases only what the call drew.
MOVE_ARGUMENTS = args(
    st.one_of(TENSORS, st.lists(TENSORS, max_size=2), ANY),
    st.one_of(CARRIERS, st.lists(CARRIERS, max_size=2).map(tuple), ANY),
)
# A failed copy hook's error reaches wait(); a destination file that cannot grow is OSError.
MOVE_ACCEPTED = (T, V, R, N, M, OS)

TILED_INIT = Target(
    (T, V, M, OS),
    args(
        DTYPES,
        st.one_of(st.none(), st.integers(-2, 12)),
        st.one_of(st.integers(-1, 5), ANY),
        fast_class=st.one_of(S.STORING_CARRIERS, ANY),
        slow_class=st.one_of(S.STORING_CARRIERS, ANY),
        resident_limit=st.one_of(st.none(), st.integers(-1, 3), ANY),
        values=st.one_of(st.none(), TREES),
    ),
    keywords=("dtype", "n", "tile_slots", "fast_class", "slow_class", "resident_limit", "values"),
    arbitrary_arguments=False,
)

ENTRY_POINTS: dict[str, Target] = {
    # core-layout
    "Layout.__init__": Target((T, V), args(TREES, TREES), keywords=("shape", "stride")),
    "Layout.__call__": Target((T, V, IX), args(TREES), LAYOUT_OBJECTS),
    "Layout.idx2crd": Target((T, V, IX), args(INTS), LAYOUT_OBJECTS),
    "Layout.mode": Target((T, IX), args(INTS), LAYOUT_OBJECTS),
    "Layout.is_injective": Target((T,), receivers=LAYOUT_OBJECTS),
    "Layout.__eq__": Target((T,), args(ANY), LAYOUT_OBJECTS),
    "Layout.__ne__": Target((T,), args(ANY), LAYOUT_OBJECTS),
    "Layout.__hash__": Target((T,), receivers=LAYOUT_OBJECTS),
    "Layout.__repr__": Target((T,), receivers=LAYOUT_OBJECTS),
    "Layout.__getstate__": Target((T,), receivers=LAYOUT_OBJECTS),
    "Layout.__setstate__": Target((T, V), args(st.tuples(TREES, TREES)), LAYOUT_OBJECTS),
    "compact_col_major": Target((T, V), args(TREES)),
    "idx2crd": Target((T, V, IX), args(INTS, TREES)),
    "coalesce": Target((T,), args(LAYOUTS)),
    "composition": Target(
        (T, V), args(LAYOUTS, st.one_of(LAYOUTS, st.lists(LAYOUTS, max_size=3).map(tuple)))
    ),
    "complement": Target((T, V), args(LAYOUTS, INTS)),
    "right_inverse": Target((T,), args(LAYOUTS)),
    "logical_divide": Target(
        (T, V), args(LAYOUTS, st.one_of(LAYOUTS, st.lists(LAYOUTS, max_size=3)))
    ),
    "zipped_divide": Target(
        (T, V), args(LAYOUTS, st.one_of(LAYOUTS, st.lists(LAYOUTS, max_size=3)))
    ),
    "tiled_divide": Target(
        (T, V), args(LAYOUTS, st.one_of(LAYOUTS, st.lists(LAYOUTS, max_size=3)))
    ),
    "logical_product": Target((T, V), args(LAYOUTS, LAYOUTS)),
    # dtypes
    "compound": Target(
        (T, V),
        args(st.lists(st.tuples(st.one_of(st.text(max_size=3), ANY), DTYPES), max_size=3)),
        keywords=("x", "y"),
    ),
    "DType.__init__": Target((T,)),
    "DType.__eq__": Target((T,), args(ANY), DTYPE_OBJECTS),
    "DType.__ne__": Target((T,), args(ANY), DTYPE_OBJECTS),
    "DType.__hash__": Target((T,), receivers=DTYPE_OBJECTS),
    "DType.__repr__": Target((T,), receivers=DTYPE_OBJECTS),
    # carrier-storage
    "ClassDescriptor.__init__": Target((T,)),
    "ClassDescriptor.__eq__": Target((T,), args(ANY), CARRIER_CLASSES),
    "ClassDescriptor.__hash__": Target((T,), receivers=CARRIER_CLASSES),
    "ClassDescriptor.__repr__": Target((T,), receivers=CARRIER_CLASSES),
    "VersionToken.__init__": Target((T,)),
    "VersionToken.is_current": Target((T,), receivers=TOKENS),
    "VersionToken.__eq__": Target((T,), args(ANY), TOKENS),
    "VersionToken.__hash__": Target((T,), receivers=TOKENS),
    "VersionToken.__repr__": Target((T,), receivers=TOKENS),
    "Carrier.__init__": Target((T,)),
    # A classmethod: called on Carrier itself (object.__init_subclass__ refuses keywords).
    "Carrier.__init_subclass__": Target((T,)),
    "Carrier.__len__": Target((T,), receivers=CARRIERS),
    "Carrier.__repr__": Target((T,), receivers=CARRIERS),
    "Carrier.read": Target((T, IX, R), args(INTS), CARRIERS),
    "Carrier.write": Target((T, V, IX, R), args(INTS, ANY), CARRIERS),
    "Carrier.tolist": Target((T, R), receivers=CARRIERS),
    "Carrier.read_range": Target(
        (T, V, IX, R),
        args(INTS, INTS, out=st.one_of(st.none(), S.writable_buffers(), ANY)),
        CARRIERS,
        ("out",),
    ),
    "Carrier.write_range": Target(
        (T, V, IX, R),
        args(INTS, st.one_of(S.writable_buffers(), S.mutating_lists(), ANY)),
        CARRIERS,
    ),
    "Carrier._pin": Target((T, R), args(st.one_of(st.text(max_size=8), ANY)), CARRIERS),
    # A FileBacked's file cannot grow past the file system's limit (OSError).
    "Carrier.allocate": Target((T, V, R, M, OS), args(INTS), CARRIERS),
    "Carrier.version_token": Target((T,), receivers=CARRIERS),
    "Carrier.release": Target((T,), receivers=CARRIERS),
    "Carrier.is_mutable": Target((T,), receivers=CARRIERS),
    "Carrier.take_ownership": Target((T, V, R), args(st.one_of(CARRIERS, ANY)), CARRIERS),
    "Carrier.relinquish": Target((T, V), args(st.one_of(CARRIERS, ANY)), CARRIERS),
    "Carrier.new_like": Target((T,), receivers=CARRIERS),
    "Carrier.dlpack_info": Target((T, B), receivers=CARRIERS),
    "CPU.__init__": Target(
        (T, V, M),
        args(DTYPES, st.one_of(st.none(), INTS), values=st.one_of(TREES, ANY), mutable=ANY),
        keywords=("dtype", "n", "values", "mutable"),
    ),
    "CPU.pointer": Target((T, R), receivers=CPU_CARRIERS),
    # Abstract: every call is TypeError (a subclass's storage is fuzzed through CARRIERS).
    "PythonStorageCarrier.__init__": Target((T,)),
    "Generic.__init__": Target(
        (T, V, M),
        args(DTYPES, st.one_of(st.none(), INTS), values=st.one_of(TREES, ANY), mutable=ANY),
        keywords=("dtype", "n", "values", "mutable"),
    ),
    # A dtype the device does not hold is TypeError (carrier-storage, Metal).
    "Metal.__init__": Target(
        (T, V, M),
        args(DTYPES, st.one_of(st.none(), INTS), values=st.one_of(TREES, ANY), mutable=ANY),
        keywords=("dtype", "n", "values", "mutable"),
    ),
    # Files beyond the file system's limits, and paths naming directories or missing
    # files, are OSError (carrier-storage).
    "FileBacked.__init__": Target(
        (T, V, M, OS),
        args(
            DTYPES,
            st.one_of(st.none(), INTS),
            FILE_PATHS,
            values=st.one_of(TREES, ANY),
            mutable=ANY,
        ),
        keywords=("dtype", "n", "path", "values", "mutable"),
        arbitrary_arguments=False,
    ),
    # The same, and block sizes that are not powers of two up to 2**23 (ValueError).
    "BlockDeviceCarrier.__init__": Target(
        (T, V, M, OS),
        args(
            DTYPES,
            st.one_of(st.none(), INTS),
            FILE_PATHS,
            st.one_of(st.none(), INTS, st.sampled_from([1, 512, 4096, 1 << 23, 1 << 24]), ANY),
            values=st.one_of(TREES, ANY),
            mutable=ANY,
        ),
        keywords=("dtype", "n", "path", "block_size", "values", "mutable"),
        arbitrary_arguments=False,
    ),
    # carrier-composition: a tier that is released, owned, pinned or immutable is
    # RuntimeError, a slow tier of another size ValueError, another dtype TypeError.
    "Evictable.__init__": Target(
        (T, V, R),
        args(st.one_of(CARRIERS, ANY), st.one_of(CARRIERS, ANY)),
        keywords=("fast", "slow"),
    ),
    # A released or pinned Evictable is RuntimeError; a slow FileBacked that cannot grow
    # is OSError, a fast tier that cannot be allocated MemoryError.
    "Evictable.evict": Target((T, R, M, OS), receivers=EVICTABLES),
    "Evictable.promote": Target((T, R, M, OS), receivers=EVICTABLES),
    # carrier-composition: TiledEvictable makes temporary files (its slow tiles), so its
    # constructor gets plausible arguments only. A fast or slow class that is not a
    # concrete carrier class, or whose edge the legacy path refuses, is TypeError.
    "TiledEvictable.__init__": TILED_INIT,
    "carriers.tiled_evictable.TiledEvictable": TILED_INIT,
    "carriers.tiled_evictable.AwaitProjection": Target((T,)),
    "carriers.tiled_evictable.AwaitResidency": Target((T,)),
    # A window outside the slots IndexError, a negative offset or too many tiles for the
    # limit ValueError, a released or otherwise pinned TiledEvictable RuntimeError.
    "TiledEvictable.project": Target(
        (T, V, IX, R), args(LAYOUTS, INTS), TILED_CARRIERS, ("layout", "offset")
    ),
    "TiledEvictable.make_resident": Target(
        (T, V, IX, R), args(st.one_of(st.lists(INTS, max_size=4), ANY)), TILED_CARRIERS, ("tiles",)
    ),
    "TiledEvictable.evict": Target(
        (T, V, IX, R), args(st.one_of(st.lists(INTS, max_size=4), ANY)), TILED_CARRIERS, ("tiles",)
    ),
    # interop-movement: move operation classes and the legacy move registry
    "MoveOperation.__init__": Target((T,)),
    # A classmethod: called on MoveOperation itself (object.__init_subclass__ refuses keywords).
    "MoveOperation.__init_subclass__": Target((T,)),
    # Outside a move, _copy has no transfer to run (RuntimeError); the base's is not
    # implemented (NotImplementedError).
    "MoveOperation._copy": Target(
        (T, N, R),
        args(st.one_of(TENSORS, ANY), st.one_of(CARRIERS, ANY), st.one_of(TENSORS, ANY), INTS),
        OPERATIONS,
        ("tensor", "destination", "output", "element_count"),
    ),
    "ElementwiseMoveOperation.__init__": Target((T,)),
    "CpuToFileBackedMoveOperation.__init__": Target((T,)),
    "FileBackedToCpuMoveOperation.__init__": Target((T,)),
    "CpuToBlockDeviceMoveOperation.__init__": Target((T,)),
    "BlockDeviceToCpuMoveOperation.__init__": Target((T,)),
    "CpuToMetalMoveOperation.__init__": Target((T,)),
    "MetalToCpuMoveOperation.__init__": Target((T,)),
    "MetalToMetalMoveOperation.__init__": Target((T,)),
    # A definition-backed carrier class is RuntimeError, a registered pair ValueError, an
    # unregistered one KeyError (interop-movement).
    "carriers.move.register_move_operation": Target(
        (T, V, R), REGISTRATIONS, keywords=("source_class", "destination_class", "operation_class")
    ),
    "carriers.move.registered_move_operation": Target(
        (T, V, R), REGISTRATIONS, keywords=("source_class", "destination_class", "operation_class")
    ),
    "carriers.move.unregister_move_operation": Target(
        (T, K, R),
        OWN_PAIRS.map(lambda pair: (pair, {})),
        keywords=("source_class", "destination_class"),
        arbitrary_arguments=False,
    ),
    "carriers.move.dispatch_move": Target(
        (T, R),
        OWN_PAIRS.map(lambda pair: (pair, {})),
        keywords=("source_class", "destination_class"),
    ),
    # interop-movement: the request path. A handle's class has no constructor.
    "move": Target(MOVE_ACCEPTED, MOVE_ARGUMENTS, keywords=("tensor", "destination")),
    "move_async": Target(MOVE_ACCEPTED, MOVE_ARGUMENTS, keywords=("tensor", "destination")),
    "carriers.move.move": Target(MOVE_ACCEPTED, MOVE_ARGUMENTS, keywords=("tensor", "destination")),
    "carriers.move.move_async": Target(
        MOVE_ACCEPTED, MOVE_ARGUMENTS, keywords=("tensor", "destination")
    ),
    # Definitions: constructing validates (TypeError, ValueError); define_carrier seals a
    # fresh class, and refuses a sealed one (RuntimeError).
    "CarrierDefinition.__init__": Target(
        (T, V),
        args(
            st.one_of(st.builds(_fresh_class, st.sampled_from([sw.CPU, sw.Generic])), _ANY_CLASSES),
            routes=st.one_of(st.lists(TRANSFER_ROUTES, max_size=2), ANY),
            elementwise_fallback=st.one_of(st.booleans(), ANY),
        ),
        keywords=("carrier_class", "routes", "elementwise_fallback"),
    ),
    "TransferRoute.__init__": Target(
        (T, V),
        args(
            st.one_of(st.builds(_fresh_class, st.sampled_from([sw.CPU, sw.Generic])), _ANY_CLASSES),
            st.one_of(st.sampled_from([sw.CPU, sw.Generic]), _ANY_CLASSES),
            st.one_of(st.text(max_size=8), ANY),
            st.one_of(PROVIDERS, ANY),
        ),
        keywords=("source_class", "destination_class", "route_id", "provider"),
    ),
    "TransferRoute.__repr__": Target((T,), receivers=TRANSFER_ROUTES),
    "TransferProvider.__init__": Target((T,)),
    # The base class's prepare is not implemented; a non-request argument is TypeError.
    "TransferProvider.prepare": Target(
        (T, N), args(st.one_of(TRANSFER_REQUESTS, ANY)), PROVIDERS, ("request",)
    ),
    "TransferRequest.__init__": Target((T,)),
    "define_carrier": Target((T, R), args(st.one_of(DEFINITIONS, ANY)), keywords=("definition",)),
    "AwaitResult.__init__": Target((T,)),
    "AwaitMove.__init__": Target((T,)),
    "carriers.move.AwaitResult": Target((T,)),
    "carriers.move.AwaitMove": Target((T,)),
    # A failed move's wait() raises the hook's error.
    "AwaitResult.wait": Target((T, _FuzzHookError), receivers=HANDLES),
    # The cotangent contract: a non-Tensor or another dtype TypeError, another shape or a
    # non-injective layout ValueError, a released carrier RuntimeError, a multi-subtensor
    # tensor NotImplementedError.
    "MoveNode.__init__": Target((T,)),
    "MoveNode.apply": Target(
        (T, V, R, N), args(st.one_of(TENSORS, ANY)), MOVE_NODES, ("cotangent",)
    ),
    # operation-profiling: entering a Profile twice is RuntimeError; the Chrome trace is
    # written wherever its path points (confined to the scratch directory: a directory or
    # an unwritable name is OSError, a non-path TypeError).
    "profile": Target((T,)),
    "Profile.__init__": Target((T,)),
    "Profile.__enter__": Target((T, R), receivers=PROFILES, foreign_receivers=False),
    "Profile.__exit__": Target((T,), args(ANY, ANY, ANY), PROFILES, foreign_receivers=False),
    "Profile.export_chrome_trace": Target(
        (T, V, OS),
        args(FILE_PATHS),
        PROFILES,
        ("path",),
        foreign_receivers=False,
        arbitrary_arguments=False,
    ),
    "Profile.key_averages": Target((T,), receivers=PROFILES, foreign_receivers=False),
    "KeyAverages.table": Target((T,), receivers=KEY_AVERAGES, foreign_receivers=False),
    "ProfileEvent.__init__": Target((T,)),
    "ProfileEvent.__repr__": Target((T,), receivers=PROFILE_EVENTS),
    "KeyAverage.__init__": Target((T,)),
    # core-tensor-representation
    # A released carrier is RuntimeError (core-tensor-representation).
    "Tensor.__init__": Target(
        (T, V, R), args(st.one_of(CARRIERS, ANY), LAYOUTS, INTS), keywords=("offset",)
    ),
    "Tensor.from_planes": Target(
        (T, V), args(DTYPES, st.lists(st.one_of(TENSORS, ANY), max_size=3))
    ),
    "Tensor.tolist": Target((T, R), receivers=TENSORS),
    "Tensor.is_mutable": Target((T,), receivers=TENSORS),
    # Views of a multi-subtensor tensor are NotImplementedError, views over a released
    # carrier RuntimeError (a Tensor cannot be built over it).
    "Tensor.relayout": Target((T, V, R, N), args(LAYOUTS, INTS), TENSORS, ("offset",)),
    "Tensor.broadcast_to": Target((T, V, R, N), args(TREES), TENSORS),
    "Tensor.__getitem__": Target((T, V, IX, R, N), args(KEYS), TENSORS),
    "Tensor.__repr__": Target((T,), receivers=TENSORS),
    "Tensor.__dlpack__": Target(
        (T, V, B, N),
        args(stream=ANY, max_version=VERSION_PAIRS, dl_device=VERSION_PAIRS, copy=ANY),
        st.one_of(S.cpu_tensors(), TENSORS),
        ("stream", "max_version", "dl_device", "copy"),
    ),
    "Tensor.__dlpack_device__": Target((T, B, N), receivers=TENSORS),
    # NumPy's protocol and the sequence protocol (core-tensor-representation).
    "Tensor.__array__": Target(
        (T, V, R),
        args(dtype=st.one_of(st.none(), NUMPY_DTYPES, ANY), copy=st.one_of(st.none(), ANY)),
        TENSORS,
        ("dtype", "copy"),
        foreign_receivers=False,
    ),
    "Tensor._read_encoded_into": Target(
        (T, V, R, B), args(st.one_of(S.writable_buffers(), ANY)), TENSORS
    ),
    # None for a compound, abstract or multi-subtensor tensor; RuntimeError when released.
    "Tensor._copy_to_numpy": Target((T, R), receivers=TENSORS, foreign_receivers=False),
    "Tensor.__len__": Target((T,), receivers=TENSORS),
    "Tensor.__iter__": Target((T, N), receivers=TENSORS, foreign_receivers=False),
    "Tensor.__bool__": Target((T, V, R), receivers=TENSORS, foreign_receivers=False),
    # Python scalars: ValueError unless one element, TypeError for a compound float()/int().
    "Tensor.item": Target((T, V, R), receivers=TENSORS, foreign_receivers=False),
    "Tensor.__float__": Target((T, V, R), receivers=TENSORS, foreign_receivers=False),
    "Tensor.__int__": Target((T, V, R), receivers=TENSORS, foreign_receivers=False),
    # TypeError where no zero-copy view exists, RuntimeError over a released carrier.
    "Tensor.numpy": Target((T, R), receivers=TENSORS, foreign_receivers=False),
    # A released carrier's tolist() raises RuntimeError (carrier-storage), and tensor()
    # reads any object with tolist() through it.
    "tensor": Target((T, V, R, M), args(st.one_of(TREES, ANY), DTYPES), keywords=("dtype",)),
    "zeros": Target((T, V, M), args(TREES, DTYPES), keywords=("dtype",)),
    "full": Target((T, V, M), args(TREES, ANY, DTYPES), keywords=("dtype",)),
    "arange": Target(
        (T, V, M),
        args(NUMBERS, NUMBERS, NUMBERS, DTYPES),
        keywords=("stop", "step", "dtype"),
    ),
}


# autograd: operands, graphs and nodes.
def _requiring_grad(t: sw.Tensor) -> sw.Tensor:
    leaf = t.detach()
    leaf.requires_grad = True
    return leaf


GRAD_LEAVES = S.tensors(dtypes=st.just(sw.Float32)).map(_requiring_grad)
# Results with a graph: a one-element sum (backward needs no cotangent) or a product.
GRAPHS = st.one_of(
    GRAD_LEAVES.map(lambda t: (t * t).sum()),
    GRAD_LEAVES.map(lambda t: t * 2 - t),
    GRAD_LEAVES.map(lambda t: t.broadcast_to(t.shape)),
)
GRAPH_TENSORS = st.one_of(TENSORS, GRAD_LEAVES, GRAPHS)
OPERANDS = st.one_of(GRAPH_TENSORS, S.FUZZ_INTS, S.FUZZ_FLOATS, ANY)
NODES = GRAPHS.map(lambda t: t.autograd_ctx)
ACCUMULATORS = GRAD_LEAVES.map(lambda t: (t * 1).autograd_ctx.next_nodes[0])
MODES = st.one_of(st.none(), INTS, st.lists(INTS, max_size=3), ANY)
# Operations: TypeError (dtypes, operand kinds), ValueError (shapes, modes, constants out
# of range), RuntimeError (released carriers), NotImplementedError (multi-subtensor).
OPERATION_ACCEPTED = (T, V, R, N)
AUTOGRAD_TARGETS = {
    "add": Target(OPERATION_ACCEPTED, args(OPERANDS, OPERANDS), keywords=("a", "b")),
    "sub": Target(OPERATION_ACCEPTED, args(OPERANDS, OPERANDS), keywords=("a", "b")),
    "mul": Target(OPERATION_ACCEPTED, args(OPERANDS, OPERANDS), keywords=("a", "b")),
    "div": Target(OPERATION_ACCEPTED, args(OPERANDS, OPERANDS), keywords=("a", "b")),
    "neg": Target(OPERATION_ACCEPTED, args(st.one_of(GRAPH_TENSORS, ANY)), keywords=("t",)),
    "sum": Target(
        OPERATION_ACCEPTED, args(st.one_of(GRAPH_TENSORS, ANY), MODES), keywords=("t", "modes")
    ),
    "Tensor.sum": Target(OPERATION_ACCEPTED, args(MODES), GRAPH_TENSORS, ("modes",)),
    "Tensor.__neg__": Target(OPERATION_ACCEPTED, receivers=GRAPH_TENSORS),
    "Tensor.detach": Target((T,), receivers=GRAPH_TENSORS),
    # RuntimeError: no grad required, a cotangent needed, a saved input changed or a graph
    # freed; the cotangent contract's TypeError, ValueError and RuntimeError.
    "Tensor.backward": Target(
        OPERATION_ACCEPTED,
        args(cotangent=st.one_of(GRAPH_TENSORS, ANY), retain_graph=st.one_of(st.booleans(), ANY)),
        GRAPH_TENSORS,
        ("cotangent", "retain_graph"),
    ),
    "is_grad_enabled": Target((T,)),
    "no_grad": Target((T,)),
    "enable_grad": Target((T,)),
    "Node.__init__": Target((T,)),
    "Node.__repr__": Target((T,), receivers=NODES),
    "AccumulateGrad.__init__": Target((T,)),
}
for _operator in ("add", "sub", "mul", "truediv"):
    for _name in (f"__{_operator}__", f"__r{_operator}__"):
        AUTOGRAD_TARGETS[f"Tensor.{_name}"] = Target(
            OPERATION_ACCEPTED, args(OPERANDS), GRAPH_TENSORS
        )
# The comparisons: the operations' errors (== and != with another object: identity).
for _comparison in ("eq", "ne", "lt", "le", "gt", "ge"):
    AUTOGRAD_TARGETS[_comparison] = Target(
        OPERATION_ACCEPTED, args(OPERANDS, OPERANDS), keywords=("a", "b")
    )
    AUTOGRAD_TARGETS[f"Tensor.__{_comparison}__"] = Target(
        OPERATION_ACCEPTED, args(OPERANDS), GRAPH_TENSORS
    )
AUTOGRAD_TARGETS["Tensor.__hash__"] = Target((T,), receivers=GRAPH_TENSORS)
ENTRY_POINTS.update(AUTOGRAD_TARGETS)

# Layout views (core-tensor-representation): IndexError for a mode out of range,
# ValueError for modes that are not a permutation and for a shape without a view,
# RuntimeError over a released carrier, NotImplementedError for a multi-subtensor tensor.
LAYOUT_VIEW_TARGETS = {
    "Tensor.transpose": Target((T, V, IX, R, N), args(INTS, INTS), GRAPH_TENSORS, ("i", "j")),
    "Tensor.permute": Target(
        (T, V, IX, R, N),
        st.tuples(st.one_of(st.lists(INTS, max_size=4).map(tuple), st.tuples(TREES)), st.just({})),
        GRAPH_TENSORS,
    ),
    "Tensor.reshape": Target(
        (T, V, R, N),
        st.tuples(st.one_of(st.tuples(TREES), st.lists(INTS, max_size=4).map(tuple)), st.just({})),
        GRAPH_TENSORS,
    ),
}
ENTRY_POINTS.update(LAYOUT_VIEW_TARGETS)

# Properties take no arguments: one target per class reads them all on every receiver.
PROPERTY_READERS = {
    "Layout": LAYOUT_OBJECTS,
    "DType": DTYPE_OBJECTS,
    "ClassDescriptor": CARRIER_CLASSES,
    "VersionToken": TOKENS,
    "Carrier": CARRIERS,
    "FileBacked": FILE_BACKED_CARRIERS,
    "BlockDeviceCarrier": BLOCK_DEVICE_CARRIERS,
    "TiledEvictable": TILED_CARRIERS,
    "MoveOperation": OPERATIONS,
    "Evictable": EVICTABLES,
    "AwaitResult": HANDLES,
    "MoveNode": MOVE_NODES,
    "Tensor": GRAPH_TENSORS,
    "CarrierDefinition": DEFINITIONS,
    "Node": NODES,
    "AccumulateGrad": ACCUMULATORS,
    "TransferRoute": TRANSFER_ROUTES,
    "TransferRequest": TRANSFER_REQUESTS,
    "Profile": PROFILES,
    "ProfileEvent": PROFILE_EVENTS,
    "KeyAverage": KEY_AVERAGE_ROWS,
}


# Properties that may raise, and what: a multi-subtensor tensor has no one carrier,
# layout or offset (core-tensor-representation). Every other property never raises.
PROPERTY_ACCEPTED = {
    "Tensor.carrier": (N,),
    "Tensor.layout": (N,),
    "Tensor.offset": (N,),
    "Tensor.T": (N, R),
}


def property_names(class_name: str) -> list[str]:
    cls = getattr(sw, class_name)
    return sorted(
        name
        for name, attr in vars(cls).items()
        if isinstance(attr, property) or type(attr).__name__ == "pybind11_static_property"
    )


def covered_entry_points() -> set[str]:
    properties = {f"{c}.{p}" for c in PROPERTY_READERS for p in property_names(c)}
    return set(ENTRY_POINTS) | properties


PROPERTIES = ".<properties>"
# A target that aborts its process: test_fuzz.py checks the crash report with it.
CRASH_PROBE = "<crash probe>"


def target_names() -> list[str]:
    return (
        sorted(ENTRY_POINTS)
        + [f"{c}{PROPERTIES}" for c in sorted(PROPERTY_READERS)]
        + sorted(HOOK_SCENARIOS)
    )


# -- hostile hooks ------------------------------------------------------------------
# Scenario targets, run with the entry-point targets: a move runs through Python hooks
# whose behaviour hypothesis draws (garbage returns, an Exception or a bare
# BaseException, blocking, a re-entrant move, releasing or writing the move's own
# carriers; spec/carrier-storage "A caller's hooks never starve the workers" and "A move
# shields its carriers from the hooks it runs and checks what they return"). Whatever
# the hooks do, the move reaches one outcome, observed identically by every wait(): the
# moved values, or an accepted exception (a hook's own one as the same object); and
# both carriers end unpinned, the source released exactly when the move succeeded.


class _FuzzAbort(BaseException):
    """A hook's bare BaseException (hypothesis stops on KeyboardInterrupt itself)."""


_HOOK_ACTIONS = st.one_of(
    st.just(("nothing",)),
    st.tuples(st.just("return"), ANY),
    st.tuples(st.just("raise"), st.sampled_from([_FuzzHookError, _FuzzAbort])),
    st.tuples(st.just("block"), st.floats(0, 0.002)),
    st.tuples(st.just("nest"), st.sampled_from([sw.CPU, sw.Generic, sw.FileBacked])),
    st.tuples(
        st.sampled_from(["release", "write", "move"]), st.sampled_from(["source", "destination"])
    ),
)
# What a prepared transfer's Future reports: nothing (no Future), success, a failure, or
# garbage from exception().
_FUTURE_REPORTS = st.one_of(
    st.just(None),
    st.just(("succeed",)),
    st.just(("fail",)),
    st.tuples(st.just("exception() returns"), ANY),
)
# What a move through hostile hooks may end with (besides the hooks' own exceptions).
_HOOK_OUTCOMES = (T, V, R, N, S.HostileError)


class _HookPlan:
    """The drawn behaviour of each hook of one move; its repr is the reproducer."""

    def __init__(self, kind: str, actions: dict[str, tuple], report: tuple | None) -> None:
        self.kind, self.actions, self.report = kind, actions, report
        self.raised: list[BaseException] = []

    def __repr__(self) -> str:
        shown = {
            hook: tuple(S.describe(a) for a in action) for hook, action in self.actions.items()
        }
        report = None if self.report is None else tuple(S.describe(r) for r in self.report)
        return f"_HookPlan({self.kind!r}, {shown}, report={report})"

    def act(self, hook: str, tensor: sw.Tensor, destination: sw.Carrier) -> object:
        """Runs ``hook``'s action; returns what the hook returns."""
        action = self.actions.get(hook, ("nothing",))
        verb = action[0]
        if verb == "return":
            return action[1]
        if verb == "raise":
            error = action[1](f"{hook} raised")
            self.raised.append(error)
            raise error
        if verb == "block":
            time.sleep(action[1])
        elif verb == "nest":
            inner = sw.Tensor(sw.CPU(sw.Int32, values=[1, 2, 3]), sw.Layout(3))
            assert sw.move(inner, action[1](sw.Int32)).tolist() == [1, 2, 3]
        elif verb in ("release", "write", "move"):
            carrier = tensor.carrier if action[1] == "source" else destination
            try:
                if verb == "release":
                    carrier.release()
                elif verb == "write":
                    carrier.write(0, 0)
                else:
                    sw.move(sw.Tensor(carrier, sw.Layout(1)), sw.CPU(sw.Int32))
            except (RuntimeError, ValueError):
                pass  # refused: the move's pin, or an empty destination not yet allocated
        return None

    def expected(self) -> str | None:
        """The outcome the plan dictates: "raised" (the first raised object), "TypeError"
        (the first garbage return), "failed" (the Future's failure), "moved", or None
        when a callable returned by prepare makes it unpredictable."""
        order = ("__init__", "_copy") if self.kind == "_copy" else ("prepare", "transfer")
        for hook in order:
            verb, *rest = self.actions[hook]
            if verb == "raise":
                return "raised"
            if verb == "return" and rest[0] is not None:
                return None if hook == "prepare" and callable(rest[0]) else "TypeError"
        if self.report == ("fail",):
            return "failed"
        if self.report is not None and self.report[0] == "exception() returns":
            reported = self.report[1]
            if reported is None:
                return "moved"
            return None if isinstance(reported, BaseException) else "TypeError"
        return "moved"


@st.composite
def _hook_plans(draw: st.DrawFn, kind: str) -> _HookPlan:
    hooks = ("__init__", "_copy") if kind == "_copy" else ("prepare", "transfer")
    actions = {hook: draw(_HOOK_ACTIONS) for hook in hooks}
    report = draw(_FUTURE_REPORTS) if kind == "provider" else None
    return _HookPlan(kind, actions, report)


def _copy_span(tensor: sw.Tensor, destination: sw.Carrier, element_count: int) -> None:
    destination.write_range(0, tensor.carrier.read_range(tensor.offset, element_count))


def _hostile_route(plan: _HookPlan):
    """Fresh (source class, destination class, registration context) running ``plan``."""
    source_class, destination_class = _fresh_class(sw.CPU), _fresh_class(sw.CPU)
    if plan.kind == "_copy":
        holder: list[tuple] = []

        class Hostile(sw.MoveOperation):
            def __init__(self):  # returns what the plan says (Python refuses non-None)
                super().__init__()
                return plan.act("__init__", *holder[0])

            def _copy(self, tensor, destination, output, element_count):
                returned = plan.act("_copy", tensor, destination)
                _copy_span(tensor, destination, element_count)
                return returned

        registration = strideweave.carriers.move.registered_move_operation(
            source_class, destination_class, Hostile
        )
        return source_class, destination_class, registration, holder

    class HostileProvider(sw.TransferProvider):
        def prepare(self, request):
            prepared = plan.act("prepare", request.tensor, request.destination)
            if prepared is not None:
                return prepared

            def transfer(output):
                returned = plan.act("transfer", request.tensor, request.destination)
                _copy_span(request.tensor, output.carrier, request.element_count)
                if returned is not None or plan.report is None:
                    return returned
                future = _ReportingFuture(plan.report)
                threading.Timer(0.0005, future.report).start()
                return future

            return transfer

    sw.define_carrier(
        sw.CarrierDefinition(
            source_class,
            routes=[sw.TransferRoute(source_class, destination_class, "h", HostileProvider())],
        )
    )
    return source_class, destination_class, contextlib.nullcontext(), []


class _ReportingFuture(concurrent.futures.Future):
    """A Future that reports what the plan says, once its timer fires."""

    def __init__(self, report: tuple) -> None:
        super().__init__()
        self.plan_report = report

    def report(self) -> None:
        if self.plan_report[0] == "fail":
            self.set_exception(_FuzzHookError("the Future failed"))
        else:
            self.set_result(None)

    def exception(self, timeout=None):
        if self.plan_report[0] == "exception() returns":
            return self.plan_report[1]
        return super().exception(timeout)


def run_hostile_hooks(plan: _HookPlan) -> None:
    """One move through ``plan``'s hooks, and the checks of the section comment."""
    source_class, destination_class, registration, holder = _hostile_route(plan)
    values = [7, 8, 9]
    tensor = sw.Tensor(source_class(sw.Int32, values=values), sw.Layout(3))
    destination = destination_class(sw.Int32)
    holder.append((tensor, destination))
    accepted = (*_HOOK_OUTCOMES, _FuzzHookError, _FuzzAbort)
    outcomes: list[object] = []
    with registration:
        try:
            handle = sw.move_async(tensor, destination)
        except accepted as refused:
            outcomes.append(refused)
        else:
            for _ in range(2):
                try:
                    outcomes.append(handle.wait())
                except accepted as failed:
                    outcomes.append(failed)
            assert outcomes[0] is outcomes[1], outcomes
    outcome = outcomes[0]
    expected = plan.expected()
    if expected == "raised":
        assert outcome is plan.raised[0], (outcome, plan.raised)
    elif expected == "TypeError":
        assert isinstance(outcome, (TypeError, S.HostileError)), outcome
    elif expected == "failed":
        assert isinstance(outcome, _FuzzHookError), outcome
    elif expected == "moved":
        assert isinstance(outcome, sw.Tensor), outcome
    deadline = time.monotonic() + 30
    while tensor.carrier.pinned_by is not None or destination.pinned_by is not None:
        assert time.monotonic() < deadline, "a carrier stayed pinned"
        time.sleep(0.001)
    if isinstance(outcome, sw.Tensor):
        assert outcome.tolist() == values and tensor.carrier.is_released
    else:
        assert not tensor.carrier.is_released and tensor.carrier.tolist() == values


HOOK_SCENARIOS = {
    "<hostile hooks: _copy>": _hook_plans("_copy"),
    "<hostile hooks: provider>": _hook_plans("provider"),
}


# -- running a target ---------------------------------------------------------------


class Case:
    """One drawn call; its repr is a Python reproducer (names from strategies, np, sw)."""

    def __init__(self, entry: str, receiver: object, call_args: tuple, kwargs: dict) -> None:
        self.entry, self.receiver, self.args, self.kwargs = entry, receiver, call_args, kwargs
        owner, _, self.member = entry.rpartition(".")
        self.owner = resolve(owner) if owner else None
        self.bound = inspect.isclass(self.owner) and self.member != "__init__"
        if self.bound and isinstance(vars(self.owner)[self.member], (staticmethod, classmethod)):
            self.bound = False

    def __repr__(self) -> str:
        parts = [S.describe(a) for a in self.args]
        parts += [f"{k}={S.describe(v)}" for k, v in self.kwargs.items()]
        if not self.bound:
            function = "sw." + self.entry.removesuffix(".__init__")
            return f"{function}({', '.join(parts)})"
        if isinstance(self.receiver, self.owner):
            return f"{S.describe(self.receiver)}.{self.member}({', '.join(parts)})"
        return f"sw.{self.entry}({', '.join([S.describe(self.receiver), *parts])})"

    def run(self) -> object:
        if not inspect.isclass(self.owner):
            return getattr(self.owner or sw, self.member)(*self.args, **self.kwargs)
        if self.member == "__init__":
            return self.owner(*self.args, **self.kwargs)
        function = getattr(self.owner, self.member)
        if not self.bound:
            return function(*self.args, **self.kwargs)
        # Called through the class, so a receiver of another type reaches the binding.
        return function(self.receiver, *self.args, **self.kwargs)


class Receiver:
    """An object whose properties are read; its repr is the object's reproducer."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        return S.describe(self.value)


@st.composite
def _cases(draw: st.DrawFn, entry: str) -> Case:
    """A call of ``entry``; composite, so a failure report shows the Case's reproducer."""
    target = ENTRY_POINTS[entry]
    receiver = None
    if target.receivers is not None:
        # Three calls in four on an object of the entry point's class, the rest on anything.
        foreign = target.foreign_receivers and not draw(st.integers(0, 3))
        receiver = draw(ANY if foreign else target.receivers)
    # Three in four with plausible arguments, the rest with arbitrary ones.
    plausible = not target.arbitrary_arguments or draw(st.integers(0, 3))
    arguments = target.plausible if plausible else arbitrary_args(target.keywords)
    call_args, kwargs = draw(arguments)
    return Case(entry, receiver, call_args, kwargs)


def _record(path: pathlib.Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def run_target(name: str, repro: pathlib.Path) -> None:
    """Runs one target's hypothesis test; an exception outside its accepted set fails it.

    Before each call the call's reproducer is written to ``repro``, so that a crash
    leaves it behind.
    """
    profile = settings()
    fuzz_settings = settings(
        profile,
        max_examples=max(profile.max_examples // EXAMPLES_DIVISOR, 1),
        suppress_health_check=list(HealthCheck),
        deadline=None,
        database=None,
    )
    if name == CRASH_PROBE:
        _record(repro, "os.abort()")
        os.abort()
    if name.endswith(PROPERTIES):
        class_name = name.removesuffix(PROPERTIES)
        names = property_names(class_name)

        @fuzz_settings
        @given(PROPERTY_READERS[class_name].map(Receiver))
        def read_properties(wrapped: Receiver) -> None:
            receiver = wrapped.value
            for prop in names:
                _record(repro, f"{S.describe(receiver)}.{prop}")
                try:
                    getattr(receiver, prop)
                except PROPERTY_ACCEPTED.get(f"{class_name}.{prop}", ()):
                    pass

        read_properties()
        return

    if name in HOOK_SCENARIOS:

        @fuzz_settings
        @given(HOOK_SCENARIOS[name])
        def move_through(plan: _HookPlan) -> None:
            _record(repro, f"run_hostile_hooks({plan!r})")
            run_hostile_hooks(plan)

        move_through()
        return

    accepted = (*ENTRY_POINTS[name].accepted, S.HostileError)

    @fuzz_settings
    @given(_cases(name))
    def call(case: Case) -> None:
        _record(repro, repr(case))
        try:
            result = case.run()
        except accepted:
            return
        repr(result)

    call()


def main(report: pathlib.Path, names: list[str]) -> None:
    """Runs ``names`` in order, appending ``name<TAB>passed|failed`` lines to report/results.

    ``report/current`` names the target running and ``report/repro`` its last call, so
    that after a crash or a hang (the watchdog exits the process) the caller knows both.
    A failing target's report is ``report/<name>.txt``.
    """
    import faulthandler
    import resource
    import traceback

    limit = int(os.environ.get("SW_FUZZ_MEMORY_LIMIT", str(3 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # FileBacked's constructor creates files at the relative paths it is given.
    report = report.resolve()
    scratch = report / "scratch"
    scratch.mkdir(exist_ok=True)
    os.chdir(scratch)
    for name in names:
        _record(report / "current", name)
        faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
        try:
            run_target(name, report / "repro")
            outcome = "passed"
        except BaseException:
            (report / f"{name}.txt").write_text(traceback.format_exc(), encoding="utf-8")
            outcome = "failed"
        faulthandler.cancel_dump_traceback_later()
        with open(report / "results", "a", encoding="utf-8") as results:
            results.write(f"{name}\t{outcome}\n")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), sys.argv[2:])
