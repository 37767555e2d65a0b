"""interop-movement: move and move_async relocate one Tensor into a caller-supplied carrier.

The validation table of "move relocates values into a caller-supplied carrier" gets a
test per row, a test per pair of rows (the first failing row wins), and a check after
every refusal that neither carrier changed (version, release state, pin, ownership,
mutability, slots) and that no copy hook ran.

Not bound here: the sentences of "Move dispatches on the exact carrier class pair" that
need CarrierDefinition (#1, the definition half of #3, #8 and its scenarios "Select a
registered bulk operation", "Fall back for an unregistered pair" and "Do not inherit a
registration", which are about definition routes), and the Metal pairs of #6.
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

import strideweave as sw
from conformance.interop_movement.movement import (
    Gate,
    carrier_pair,
    gated_copy,
    refused,
    source_tensor,
)
from strideweave._core import _testing
from strideweave.carriers.move import (
    dispatch_move,
    register_move_operation,
    registered_move_operation,
    unregister_move_operation,
)

MOVE = "interop-movement/move-relocates-values-into-a-caller-supplied-carrier"
ASYNC = "interop-movement/move-async-validates-one-movement-request"
DISPATCH = "interop-movement/move-dispatches-on-the-exact-carrier-class-pair"
HOOK = "interop-movement/a-move-operation-performs-its-transfer-through-the-copy-hook"
PIN = "interop-movement/a-move-operation-may-pin-the-carrier-pair-it-supports"
REGISTRY = "interop-movement/move-registration-is-explicit-validated-and-process-global"
CAPSULE = "interop-movement/a-capsule-keeps-its-producer-alive-but-not-released-storage"

MOVES = {"move": sw.move, "move_async": lambda t, d: sw.move_async(t, d).wait()}


def python_carrier_classes():
    class PyCPU(sw.CPU):
        pass

    class PyGeneric(sw.Generic):
        pass

    return PyCPU, PyGeneric


def expect_moved(result, source, destination, values, layout, *, slots, version):
    """``result`` is the published move: destination at offset 0 under ``layout``
    holding ``values``, unpinned, at ``version`` (its version before the move: a move is
    no in-place mutation) with the move counted once; the source released, its version
    unchanged."""
    assert isinstance(result, sw.Tensor)
    assert result.carrier is destination
    assert result.offset == 0
    assert result.layout == layout
    assert result.tolist() == values
    assert destination.slots == slots
    assert destination.pinned_by is None and destination.is_mutable()
    assert destination.version == version and destination.moves_received == 1
    assert source.is_released and source.pinned_by is None


# -- move relocates values into a caller-supplied carrier ------------------------------


@pytest.mark.spec(f"{MOVE}/move-and-release-the-source", f"{MOVE}#2", f"{ASYNC}#1")
@pytest.mark.parametrize("name", sorted(MOVES))
@pytest.mark.parametrize(
    "source_class, destination_class",
    [
        (sw.CPU, sw.Generic),
        (sw.Generic, sw.CPU),
        (sw.CPU, sw.CPU),
        (sw.CPU, sw.FileBacked),
        (sw.FileBacked, sw.CPU),
        (sw.Generic, sw.FileBacked),
        (sw.FileBacked, sw.FileBacked),
        (sw.CPU, sw.BlockDeviceCarrier),
        (sw.BlockDeviceCarrier, sw.CPU),
        (sw.Generic, sw.BlockDeviceCarrier),
        (sw.BlockDeviceCarrier, sw.FileBacked),
    ],
)
def test_move_and_release_the_source(name, source_class, destination_class):
    t = source_tensor(source_class)
    source, values, layout = t.carrier, t.tolist(), t.layout
    version = source.version
    destination = destination_class(sw.Int32, 11)
    result = MOVES[name](t, destination)
    expect_moved(result, source, destination, values, layout, slots=11, version=0)
    assert source.version == version


@pytest.mark.spec(f"{MOVE}/move-and-release-the-source", f"{MOVE}#2")
def test_move_between_python_subclasses():
    py_cpu, py_generic = python_carrier_classes()
    t = source_tensor(py_cpu, offset=3)
    source, values = t.carrier, t.tolist()
    destination = py_generic(sw.Int32)
    result = sw.move(t, destination)
    expect_moved(result, source, destination, values, t.layout, slots=11, version=0)
    again = sw.move(result, sw.FileBacked(sw.Int32))
    assert again.tolist() == values and destination.is_released


@pytest.mark.spec(f"{MOVE}/allocate-an-empty-destination", f"{MOVE}#4", f"{MOVE}#5")
@pytest.mark.parametrize(
    "destination_class", [sw.CPU, sw.Generic, sw.FileBacked, sw.BlockDeviceCarrier]
)
def test_allocate_an_empty_destination(destination_class):
    t = source_tensor(sw.CPU, offset=4)
    source, values = t.carrier, t.tolist()
    destination = destination_class(sw.Int32)
    assert destination.slots == 0
    result = sw.move(t, destination)
    # Exactly the cosize: not the source's slot count (16), nor the logical size (6).
    assert t.layout.cosize == 11
    expect_moved(result, source, destination, values, t.layout, slots=11, version=0)


@pytest.mark.spec(f"{MOVE}#4", f"{MOVE}#5")
def test_a_larger_destination_keeps_its_slot_count():
    t = source_tensor(sw.Generic)
    values = t.tolist()
    destination = sw.CPU(sw.Int32, 20)
    result = sw.move(t, destination)
    assert destination.slots == 20
    assert result.tolist() == values and result.layout == t.layout


@pytest.mark.spec(f"{MOVE}/move-a-broadcast-view-without-materializing-it", f"{MOVE}#4")
@pytest.mark.parametrize("source_class", [sw.CPU, sw.Generic, sw.FileBacked])
@pytest.mark.parametrize("destination_class", [sw.CPU, sw.Generic, sw.FileBacked])
@pytest.mark.parametrize("empty", [True, False])
def test_move_a_broadcast_view_without_materializing_it(source_class, destination_class, empty):
    source = source_class(sw.Float32, values=[1.5, 2.5])
    view = sw.Tensor(source, sw.Layout(2)).broadcast_to((2, 3))
    layout = view.layout
    assert layout.size == 6 and layout.cosize == 2
    assert 0 in [stride for _, stride in layout.leaf_modes]
    values = view.tolist()
    destination = destination_class(sw.Float32, None if empty else 2)
    result = sw.move(view, destination)
    expect_moved(result, source, destination, values, layout, slots=2, version=0)
    assert destination.tolist() == [1.5, 2.5]


@pytest.mark.spec(f"{MOVE}#2", f"{MOVE}#4", f"{MOVE}#6")
def test_move_hierarchical_layouts_with_holes_and_offsets():
    layout = sw.Layout(((2, 2), (1, 3)), ((1, 6), (0, 2)))
    source = sw.Generic(sw.Int32, values=list(range(40)))
    t = sw.Tensor(source, layout, 7)
    values = t.tolist()
    destination = sw.FileBacked(sw.Int32)
    result = sw.move(t, destination)
    expect_moved(result, source, destination, values, layout, slots=layout.cosize, version=0)
    assert result.shape == ((2, 2), (1, 3))


@pytest.mark.spec(f"{MOVE}#6", f"{DISPATCH}#2", f"{DISPATCH}#6")
def test_logical_values_are_identical_whichever_route_runs():
    """The bulk route carries holes, the elementwise fallback leaves them: the logical
    values agree, the holes need not."""
    py_cpu, _ = python_carrier_classes()
    results = {}
    for source_class in (sw.CPU, py_cpu):  # (CPU, FileBacked) is bulk; its subclass is not
        t = source_tensor(source_class)
        destination = sw.FileBacked(sw.Int32)
        results[source_class] = (sw.move(t, destination), destination)
    (bulk, bulk_carrier), (elementwise, elementwise_carrier) = results.values()
    assert bulk.tolist() == elementwise.tolist() == [[101, 105, 109], [103, 107, 111]]
    # The bulk copy carried the complete span [offset, offset + cosize), holes included.
    assert bulk_carrier.tolist() == list(range(101, 112))
    # The elementwise copy left the holes of the fresh (zeroed) file as they were.
    assert elementwise_carrier.tolist() == [101, 0, 103, 0, 105, 0, 107, 0, 109, 0, 111]


@pytest.mark.spec(f"{DISPATCH}#2", f"{DISPATCH}#6")
def test_file_backed_to_cpu_runs_the_bulk_route():
    source = sw.FileBacked(sw.Int32, values=list(range(100, 113)))
    t = sw.Tensor(source, sw.Layout((2, 3), (2, 4)), 1)
    destination = sw.CPU(sw.Int32, values=[-1] * 11)
    result = sw.move(t, destination)
    assert result.tolist() == [[101, 105, 109], [103, 107, 111]]
    assert destination.tolist() == list(range(101, 112))


@pytest.mark.spec(f"{DISPATCH}#3", f"{DISPATCH}#4", f"{DISPATCH}#5", f"{REGISTRY}#9")
def test_subclasses_of_a_bulk_pair_fall_back_to_elementwise():
    """A legacy entry applies to its exact pair alone: subclasses on either side take the
    elementwise fallback (the holes of the destination keep their prior values)."""

    class SubCPU(sw.CPU):
        pass

    class SubFileBacked(sw.FileBacked):
        pass

    pairs = [(SubCPU, sw.FileBacked), (sw.CPU, SubFileBacked), (SubCPU, SubFileBacked)]
    for source_class, destination_class in pairs:
        assert dispatch_move(source_class, destination_class) is sw.ElementwiseMoveOperation
        t = source_tensor(source_class)
        destination = destination_class(sw.Int32, values=[-1] * 11)
        result = sw.move(t, destination)
        assert result.tolist() == [[101, 105, 109], [103, 107, 111]]
        assert destination.tolist()[1::2] == [-1] * 5


@pytest.mark.spec(f"{DISPATCH}#2", f"{DISPATCH}#4", f"{DISPATCH}#5", f"{HOOK}#1")
def test_a_legacy_registration_routes_its_exact_pair_only():
    source_class, destination_class = carrier_pair()

    class Sub(source_class):
        pass

    gate = Gate()
    gate.open()
    with registered_move_operation(source_class, destination_class, gated_copy(gate)):
        sw.move(source_tensor(source_class), destination_class(sw.Int32))
        assert len(gate.calls) == 1
        sw.move(source_tensor(Sub), destination_class(sw.Int32))
        sw.move(source_tensor(source_class), sw.CPU(sw.Int32))
        assert len(gate.calls) == 1
    sw.move(source_tensor(source_class), destination_class(sw.Int32))
    assert len(gate.calls) == 1


@pytest.mark.spec(f"{DISPATCH}#7")
@pytest.mark.parametrize("cls", [sw.Generic, sw.CPU, sw.FileBacked])
def test_shipped_carriers_are_definition_free(cls):
    assert cls.carrier_class.definition_state == "definition-free"


@pytest.mark.spec(f"{REGISTRY}#19", f"{ASYNC}#1")
def test_move_is_importable_from_the_top_level_package():
    import strideweave.carriers.move as move_module

    assert sw.move is move_module.move
    assert sw.move_async is move_module.move_async
    for name in ("MoveOperation", "ElementwiseMoveOperation", "CpuToFileBackedMoveOperation"):
        assert isinstance(getattr(sw, name), type)
    assert isinstance(sw.FileBackedToCpuMoveOperation, type)


# -- the validation table ----------------------------------------------------------

# The rows of the table in order: (name, exception type, words the message names).
ROWS = [
    ("tensor is not a Tensor", TypeError, ("tensor", "not a Tensor")),
    ("source released", RuntimeError, ("source", "released")),
    ("source owned", RuntimeError, ("source", "owned")),
    ("destination is not a Carrier", TypeError, ("destination", "not a Carrier")),
    ("destination is the source carrier", ValueError, ("destination", "own carrier")),
    ("destination released", RuntimeError, ("destination", "released")),
    ("destination not publicly mutable", RuntimeError, ("destination", "mutable")),
    ("dtype differs", TypeError, ("destination", "Float32", "Int32")),
    ("route pins another class", TypeError, ("PinnedToCPU", "CPU")),
    ("destination too small", ValueError, ("destination", "cosize")),
]
SAME, DEST_RELEASED, DTYPE, TOO_SMALL = 4, 5, 7, 9
# Pairs of rows that one request cannot both fail: the source carrier as destination is
# neither released (that is row 2), nor of another dtype, nor too small.
IMPOSSIBLE = {(SAME, DEST_RELEASED), (SAME, DTYPE), (SAME, TOO_SMALL)}


class Request:
    """One move request failing exactly the rows in ``failing`` (indexes into ROWS)."""

    def __init__(
        self, failing: set[int], immutable_by: str = "construction", too_small_slots: int = 4
    ) -> None:
        self.source_class, self.destination_class = carrier_pair()
        gate = Gate()
        gate.open()
        self.gate = gate

        class PinnedToCPU(gated_copy(gate)):
            destination_class = sw.CPU

        self.operation = PinnedToCPU if 8 in failing else gated_copy(gate)
        dtype = sw.Float32 if DTYPE in failing else sw.Int32
        mutable = not (6 in failing and immutable_by == "construction")
        # The source is immutable only when it doubles as the immutable destination.
        self.source = self.source_class(
            sw.Int32, values=list(range(16)), mutable=mutable or SAME not in failing
        )
        self.tensor = sw.Tensor(self.source, sw.Layout((2, 3), (2, 4)), 1)
        if SAME in failing:
            self.destination = self.source
        else:
            n = too_small_slots if TOO_SMALL in failing else 11
            self.destination = self.destination_class(dtype, n, mutable=mutable)
        self.keep = []  # owners and leases, alive while the request is attempted
        if 6 in failing and immutable_by != "construction":
            self._make_immutable(self.destination, immutable_by)
        if 2 in failing:
            owner = sw.Generic(sw.Int32)
            owner.take_ownership(self.source)
            self.keep.append(owner)
        if 1 in failing and 2 in failing:  # only its owner releases an owned carrier
            _testing.release_owned(owner, self.source)
        elif 1 in failing:
            self.source.release()
        if DEST_RELEASED in failing:
            self.destination.release()
        self.tensor_argument = [self.tensor] if 0 in failing else self.tensor
        self.destination_argument = (self.destination,) if 3 in failing else self.destination

    def _make_immutable(self, carrier, how):
        if how == "ownership":
            owner = type(carrier)(carrier.dtype)
            owner.take_ownership(carrier)
            self.keep.append(owner)
        else:
            self.keep.append(carrier._pin("a test's pin"))

    def carriers(self):
        return [self.source, self.destination, *[k for k in self.keep if isinstance(k, sw.Carrier)]]

    def attempt(self, call, exc_type, subjects):
        route = (self.source_class, type(self.destination))
        with registered_move_operation(*route, self.operation):
            with refused(exc_type, *subjects, carriers=self.carriers()):
                call(self.tensor_argument, self.destination_argument)
            assert dispatch_move(*route) is self.operation
        assert self.gate.calls == []
        for lease in self.keep:
            if not isinstance(lease, sw.Carrier):
                lease.end()


CALLS = {"move": sw.move, "move_async": sw.move_async}


@pytest.mark.spec(f"{MOVE}/reject-an-unusable-destination-before-copying", f"{MOVE}#5")
@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_destination_one_slot_short_of_the_cosize_is_refused(call):
    request = Request({TOO_SMALL}, too_small_slots=10)
    assert request.tensor.layout.cosize == 11  # one slot more than the destination holds
    _, exc_type, subjects = ROWS[TOO_SMALL]
    request.attempt(CALLS[call], exc_type, subjects)


@pytest.mark.spec(
    f"{MOVE}/reject-an-unusable-destination-before-copying",
    f"{MOVE}#5",
    f"{MOVE}#8",
    f"{ASYNC}#2",
    f"{ASYNC}#3",
    f"{HOOK}#4",
    "interop-movement/move-submission-is-eager-but-does-not-force-host-synchronization#4",
)
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("row", range(len(ROWS)), ids=[r[0] for r in ROWS])
def test_each_row_of_the_validation_table(call, row):
    _, exc_type, subjects = ROWS[row]
    Request({row}).attempt(CALLS[call], exc_type, subjects)


@pytest.mark.spec(f"{MOVE}/reject-an-unusable-destination-before-copying", f"{ASYNC}#2")
@pytest.mark.parametrize("immutable_by", ["ownership", "pin"])
def test_an_owned_or_pinned_destination_is_not_publicly_mutable(immutable_by):
    _, exc_type, subjects = ROWS[6]
    Request({6}, immutable_by).attempt(sw.move_async, exc_type, subjects)


@pytest.mark.spec(f"{MOVE}#8", f"{PIN}#1")
@pytest.mark.parametrize(
    "rows", [p for p in itertools.combinations(range(len(ROWS)), 2) if p not in IMPOSSIBLE]
)
def test_the_first_failing_row_wins(rows):
    _, exc_type, subjects = ROWS[rows[0]]
    Request(set(rows)).attempt(sw.move_async, exc_type, subjects)


@pytest.mark.spec(f"{MOVE}#8")
def test_every_row_failing_at_once_reports_the_first():
    rows = set(range(len(ROWS))) - {SAME}
    _, exc_type, subjects = ROWS[0]
    Request(rows).attempt(sw.move, exc_type, subjects)


@pytest.mark.spec(f"{MOVE}#7")
@pytest.mark.parametrize("destination", ["live", "released", "not a carrier", "a plane"])
def test_a_multi_subtensor_tensor_is_rejected_first(destination):
    planes = [sw.zeros(3, dtype=sw.Float32), sw.zeros(3, dtype=sw.Int32)]
    t = sw.Tensor.from_planes(sw.compound(x=sw.Float32, n=sw.Int32), planes)
    planes[1].carrier.release()  # a released constituent: still the multi-subtensor error
    target = {
        "live": sw.Generic(sw.Int32),
        "released": sw.Generic(sw.Float32, 3),
        "not a carrier": [sw.Generic(sw.Float32)],
        "a plane": planes[0].carrier,
    }[destination]
    if destination == "released":
        target.release()
    carriers = [p.carrier for p in planes] + ([target] if isinstance(target, sw.Carrier) else [])
    for call in (sw.move, sw.move_async):
        with refused(NotImplementedError, "move", "multi-subtensor", carriers=carriers):
            call(t, target)


# -- move_async rejects sequences ----------------------------------------------------


def sequences_of(item):
    return [[item], (item,), [item, item], [], ()]


@pytest.mark.spec(f"{ASYNC}/reject-batched-movement", f"{ASYNC}#4", f"{ASYNC}#5")
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("position", ["tensor", "destination", "both"])
def test_reject_batched_movement(call, position):
    source_class, destination_class = carrier_pair()
    gate = Gate()
    gate.open()
    with registered_move_operation(source_class, destination_class, gated_copy(gate)):
        t = source_tensor(source_class)
        destination = destination_class(sw.Int32)
        kinds = len(sequences_of(None))
        for k in range(kinds):
            tensor_argument = sequences_of(t)[k] if position != "destination" else t
            destination_argument = (
                sequences_of(destination)[k] if position != "tensor" else destination
            )
            subject = "tensor" if position != "destination" else "destination"
            with refused(TypeError, subject, "sequence", carriers=[t.carrier, destination]):
                CALLS[call](tensor_argument, destination_argument)
        for other in (np.array([1, 2]), iter([t]), (x for x in [t])):
            with refused(TypeError, "tensor", carriers=[t.carrier, destination]):
                CALLS[call](other, destination)
    assert gate.calls == []


# -- the copy hook ------------------------------------------------------------------


@pytest.mark.spec(
    f"{HOOK}/run-a-custom-copy", f"{HOOK}#1", f"{HOOK}#2", f"{HOOK}#3", f"{HOOK}#4", f"{PIN}#2"
)
@pytest.mark.parametrize("name", sorted(MOVES))
def test_run_a_custom_copy(name):
    source_class, destination_class = carrier_pair()
    observed = {}

    class Custom(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            observed.update(
                tensor=tensor,
                destination=destination,
                output=output,
                element_count=element_count,
                source_live=not tensor.carrier.is_released,
                source_pin=tensor.carrier.pinned_by,
                destination_pin=destination.pinned_by,
            )
            for slot in range(element_count):
                destination.write(slot, tensor.carrier.read(tensor.offset + slot) * 2)

    t = source_tensor(source_class)
    values = t.tolist()
    destination = destination_class(sw.Int32)
    with registered_move_operation(source_class, destination_class, Custom):
        result = MOVES[name](t, destination)
    assert observed["tensor"] is t
    assert observed["destination"] is destination
    assert observed["element_count"] == t.layout.cosize == 11
    output = observed["output"]
    assert output.carrier is destination and output.offset == 0 and output.layout == t.layout
    assert result.carrier is destination and result.layout == t.layout
    # The hook ran before the source was released, with both carriers pinned by the move.
    assert observed["source_live"]
    assert observed["source_pin"] == observed["destination_pin"]
    assert observed["source_pin"].startswith("move #")
    assert result.tolist() == [[2 * v for v in row] for row in values]
    assert t.carrier.is_released


@pytest.mark.spec(f"{HOOK}#1", f"{HOOK}#3")
def test_a_subclass_of_a_built_in_runs_its_own_copy():
    """Its _copy runs, sees the output Tensor, and super()._copy runs the built-in copy."""
    source_class, destination_class = carrier_pair()
    seen = []

    class ThroughBase(sw.ElementwiseMoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            seen.append(output.tolist())
            super()._copy(tensor, destination, output, element_count)
            seen.append(output.tolist())

    t = source_tensor(source_class)
    values = t.tolist()
    with registered_move_operation(source_class, destination_class, ThroughBase):
        result = sw.move(t, destination_class(sw.Int32))
    assert seen == [[[0, 0, 0], [0, 0, 0]], values]
    assert result.tolist() == seen[1]


@pytest.mark.spec(f"{HOOK}#3")
def test_the_hook_can_copy_through_a_cpu_pointer():
    source_class, _ = carrier_pair()

    class Target(sw.CPU):
        pass

    class ThroughPointer(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            address = ctypes.cast(destination.pointer(), ctypes.POINTER(ctypes.c_int32))
            buffer = np.ctypeslib.as_array(address, shape=(element_count,))
            buffer[:] = tensor.carrier.read_range(tensor.offset, element_count)

    t = source_tensor(source_class)
    destination = Target(sw.Int32, 11)
    with registered_move_operation(source_class, Target, ThroughPointer):
        result = sw.move(t, destination)
    assert result.tolist() == [[101, 105, 109], [103, 107, 111]]
    assert destination.tolist() == list(range(101, 112))


# -- pinned operations -------------------------------------------------------------


@pytest.mark.spec(f"{PIN}/reject-a-mismatched-carrier-class", f"{PIN}#1")
@pytest.mark.parametrize("call", sorted(CALLS))
def test_reject_a_mismatched_carrier_class(call):
    """CpuToFileBackedMoveOperation (pinned to a CPU source) routed for a Generic source."""
    t = source_tensor(sw.Generic)
    destination = sw.FileBacked(sw.Int32, values=[7] * 11)
    with registered_move_operation(sw.Generic, sw.FileBacked, sw.CpuToFileBackedMoveOperation):
        with refused(
            TypeError,
            "CpuToFileBackedMoveOperation",
            "source",
            "CPU",
            carriers=[t.carrier, destination],
        ):
            CALLS[call](t, destination)
    assert not t.carrier.is_released and destination.tolist() == [7] * 11


@pytest.mark.spec(f"{PIN}#1")
def test_a_pinned_destination_class_is_checked_too():
    source_class, destination_class = carrier_pair()

    class ToFile(sw.MoveOperation):
        destination_class = sw.FileBacked

        def _copy(self, *arguments):
            raise AssertionError("a mismatched operation copied")

    t = source_tensor(source_class)
    destination = destination_class(sw.Int32)
    with registered_move_operation(source_class, destination_class, ToFile):
        with refused(
            TypeError, "ToFile", "destination", "FileBacked", carriers=[t.carrier, destination]
        ):
            sw.move(t, destination)


@pytest.mark.spec(f"{PIN}#2", f"{DISPATCH}#3")
def test_an_unpinned_operation_accepts_any_pair():
    py_cpu, py_generic = python_carrier_classes()
    classes = [sw.CPU, sw.Generic, sw.FileBacked, py_cpu, py_generic]
    for source_class, destination_class in itertools.product(classes, classes):
        t = source_tensor(source_class)
        values = t.tolist()
        result = sw.move(t, destination_class(sw.Int32))
        assert result.tolist() == values, (source_class, destination_class)


# -- the move half of "Do not outlive released storage" -----------------------------


@pytest.mark.spec(f"{CAPSULE}/do-not-outlive-released-storage", f"{CAPSULE}#6")
@pytest.mark.isolated
@pytest.mark.parametrize("destination_class", [sw.Generic, sw.FileBacked, sw.CPU])
def test_move_while_a_capsule_is_outstanding(destination_class):
    """The move succeeds and releases the exporting carrier; the outstanding buffer is
    never read again (it addresses freed memory; the suite runs under ASan)."""
    t = sw.Tensor(sw.CPU(sw.Float32, values=[1.5, 2.5, 3.5, 4.5]), sw.Layout((2, 2)))
    source = t.carrier
    capsule = t.__dlpack__(max_version=(1, 0))
    array = np.from_dlpack(t)
    assert source.dlpack_info()["pointer"] == source.pointer() != 0
    result = sw.move(t, destination_class(sw.Float32))
    assert result.tolist() == [[1.5, 3.5], [2.5, 4.5]]
    assert source.is_released and source.slots == 0
    assert source.dlpack_info()["pointer"] == 0
    del capsule, array


# -- what a move allocates (docs/movement.md, "One request path", step 3) ----------


def test_a_python_copy_that_writes_nothing_leaves_zeros_not_recycled_bytes():
    """A built-in operation that writes every slot lets the move skip zeroing the
    destination it allocates; a Python ``_copy`` promises nothing, so a subclass of such an
    operation gets a zeroed destination: a hook that writes nothing leaves zeros, never the
    bytes of a buffer freed before."""
    n = 1 << 20  # 4 MiB of Int32: a mapped buffer, recycled through the cache of freed ones

    class Source(sw.CPU):
        pass

    class WritesNothing(sw.ElementwiseMoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            pass

    t = sw.Tensor(Source(sw.Int32, n), sw.Layout(n))
    freed = sw.CPU(sw.Int32, n)
    freed.write_range(0, np.full(n, 7, dtype=np.int32))
    del freed  # its mapping, full of 7s, is the one the destination's allocation finds
    register_move_operation(Source, sw.CPU, WritesNothing)
    try:
        result = sw.move(t, sw.CPU(sw.Int32))
    finally:
        unregister_move_operation(Source, sw.CPU)
    read = result.carrier.read_range(0, n, out=np.empty(n, dtype=np.int32))
    assert not read.any(), np.unique(read)
