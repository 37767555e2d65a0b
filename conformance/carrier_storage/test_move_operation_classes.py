"""carrier-storage: move-operation class descriptors, their pins, and the sealing of
carrier classes that the legacy move registry observes."""

import pytest

import strideweave as sw
from strideweave._core import _testing
from strideweave.carriers.move import (
    dispatch_move,
    register_move_operation,
    registered_move_operation,
    unregister_move_operation,
)

REQ = "carrier-storage/move-operation-classes-and-registry-calls-use-class-descriptors"
DESCRIPTORS = "carrier-storage/every-carrier-class-has-an-exact-runtime-class-descriptor"
BUILTIN_PINS = {
    sw.MoveOperation: (None, None),
    sw.ElementwiseMoveOperation: (None, None),
    sw.CpuToFileBackedMoveOperation: (sw.CPU, sw.FileBacked),
    sw.FileBackedToCpuMoveOperation: (sw.FileBacked, sw.CPU),
    sw.CpuToBlockDeviceMoveOperation: (sw.CPU, sw.BlockDeviceCarrier),
    sw.BlockDeviceToCpuMoveOperation: (sw.BlockDeviceCarrier, sw.CPU),
}


def descriptor_of(cls):
    return None if cls is None else cls.carrier_class


@pytest.mark.spec(f"{REQ}/pin-a-python-move-operation", f"{REQ}#1", f"{DESCRIPTORS}#4")
def test_pin_a_python_move_operation():
    class ToCPU(sw.MoveOperation):
        source_class = sw.Generic
        destination_class = sw.CPU

    class Inherits(ToCPU):
        pass

    for cls in (ToCPU, Inherits):
        descriptor = cls.operation_class
        assert descriptor.kind == "move operation"
        assert descriptor.pinned_source is sw.Generic.carrier_class
        assert descriptor.pinned_destination is sw.CPU.carrier_class
        assert descriptor.definition_state == "definition-free"
    assert ToCPU.operation_class.name == "test_pin_a_python_move_operation.<locals>.ToCPU"
    assert Inherits.operation_class.parent is ToCPU.operation_class
    assert ToCPU.operation_class.parent is sw.MoveOperation.operation_class
    assert Inherits.operation_class != ToCPU.operation_class


@pytest.mark.spec(f"{REQ}#1", f"{DESCRIPTORS}#4")
def test_pins_follow_python_inheritance_and_none_unpins():
    class FromCPU(sw.CpuToFileBackedMoveOperation):
        destination_class = None

    class ToPython(FromCPU):
        class Target(sw.Generic):
            pass

        destination_class = Target

    class Loose(sw.MoveOperation):
        pass

    assert FromCPU.operation_class.pinned_source is sw.CPU.carrier_class
    assert FromCPU.operation_class.pinned_destination is None
    assert ToPython.operation_class.pinned_source is sw.CPU.carrier_class
    assert ToPython.operation_class.pinned_destination is ToPython.Target.carrier_class
    assert Loose.operation_class.pinned_source is None
    assert Loose.operation_class.pinned_destination is None


@pytest.mark.spec(f"{REQ}#1")
def test_pins_are_read_when_the_class_statement_completes():
    class Pinned(sw.MoveOperation):
        source_class = sw.CPU

    descriptor = Pinned.operation_class
    Pinned.source_class = sw.Generic
    assert Pinned.operation_class is descriptor
    assert descriptor.pinned_source is sw.CPU.carrier_class


@pytest.mark.spec(f"{REQ}/refuse-a-pin-that-is-not-a-carrier-class", f"{REQ}#2")
@pytest.mark.parametrize("attribute", ["source_class", "destination_class"])
@pytest.mark.parametrize(
    "value", [3, "CPU", int, sw.MoveOperation, sw.CpuToFileBackedMoveOperation, sw.CPU(sw.Int32)]
)
def test_refuse_a_pin_that_is_not_a_carrier_class(attribute, value):
    with pytest.raises(TypeError) as raised:

        class Mispinned(sw.MoveOperation):
            locals()[attribute] = value

    message = str(raised.value)
    assert "Mispinned" in message and f"{attribute} " in message, message


@pytest.mark.spec(f"{REQ}#3", f"{DESCRIPTORS}#4")
@pytest.mark.parametrize("cls", list(BUILTIN_PINS))
def test_built_in_operations_expose_their_pins(cls):
    source, destination = BUILTIN_PINS[cls]
    assert cls.source_class is source
    assert cls.destination_class is destination
    descriptor = cls.operation_class
    assert descriptor.name == cls.__name__
    assert descriptor.kind == "move operation"
    assert descriptor.pinned_source is descriptor_of(source)
    assert descriptor.pinned_destination is descriptor_of(destination)
    assert descriptor.parent is (
        None if cls is sw.MoveOperation else sw.MoveOperation.operation_class
    )
    assert cls().operation_class is descriptor
    assert _testing.operation_class_of(cls()) is descriptor


@pytest.mark.spec(f"{REQ}#3", f"{DESCRIPTORS}#2")
def test_instances_report_their_exact_class():
    class Custom(sw.ElementwiseMoveOperation):
        pass

    class Grandchild(Custom):
        pass

    for cls in (Custom, Grandchild):
        op = cls()
        assert op.operation_class is cls.operation_class
        assert _testing.operation_class_of(op) is cls.operation_class
    assert Grandchild.operation_class.parent is Custom.operation_class
    assert Custom.operation_class.parent is sw.ElementwiseMoveOperation.operation_class


@pytest.mark.spec(f"{REQ}#1")
def test_a_subclass_that_does_not_chain_init_subclass_still_gets_its_pins():
    class Quiet(sw.MoveOperation):
        def __init_subclass__(cls, **kwargs):
            pass

    class Silent(Quiet):
        source_class = sw.FileBacked

    assert _testing.registered_descriptor(Silent) is None
    descriptor = Silent.operation_class
    assert descriptor.pinned_source is sw.FileBacked.carrier_class
    assert descriptor.parent is Quiet.operation_class
    assert _testing.operation_class_of(Silent()) is descriptor


@pytest.mark.spec(f"{REQ}#4")
def test_copy_is_not_implemented_on_the_base():
    class Unimplemented(sw.MoveOperation):
        pass

    t = sw.tensor([1, 2], dtype=sw.Int32)
    for cls in (sw.MoveOperation, Unimplemented):
        with pytest.raises(NotImplementedError) as raised:
            cls()._copy(t, sw.CPU(sw.Int32), t, 2)
        assert f"{cls.operation_class.name}._copy" in str(raised.value)


@pytest.mark.spec(f"{REQ}#4")
def test_an_overriding_copy_is_called():
    calls = []

    class Recording(sw.MoveOperation):
        def _copy(self, tensor, destination, output, element_count):
            calls.append((tensor, destination, output, element_count))

    assert Recording()._copy(1, 2, 3, 4) is None
    assert calls == [(1, 2, 3, 4)]


def registry_calls():
    """Every legacy registry API, each given (source, destination) of a fresh pair."""

    class Op(sw.MoveOperation):
        pass

    def scoped(s, d):
        with registered_move_operation(s, d, Op):
            pass

    def refused_unregister(s, d):
        with pytest.raises(KeyError):
            unregister_move_operation(s, d)

    def registered_then_removed(s, d):
        register_move_operation(s, d, Op)
        unregister_move_operation(s, d)

    return {
        "dispatch_move": dispatch_move,
        "unregister_move_operation (no entry)": refused_unregister,
        "register_move_operation": registered_then_removed,
        "registered_move_operation": scoped,
    }


@pytest.mark.spec(f"{REQ}/seal-a-carrier-class-observed-by-the-registry", f"{REQ}#5")
@pytest.mark.parametrize("call", list(registry_calls()))
def test_seal_a_carrier_class_observed_by_the_registry(call):
    class Source(sw.CPU):
        pass

    class Destination(sw.FileBacked):
        pass

    assert Source.carrier_class.definition_state == "open"
    assert Destination.carrier_class.definition_state == "open"
    registry_calls()[call](Source, Destination)
    assert Source.carrier_class.definition_state == "definition-free"
    assert Destination.carrier_class.definition_state == "definition-free"


@pytest.mark.spec(f"{REQ}#5")
def test_a_refused_registration_seals_both_carrier_classes():
    class Source(sw.Generic):
        pass

    class Destination(sw.Generic):
        pass

    class Op(sw.MoveOperation):
        pass

    register_move_operation(Source, sw.CPU, Op)
    try:
        with pytest.raises(ValueError):
            register_move_operation(Source, sw.CPU, Op)
        # A failing lookup and a duplicate both seal what they name.
        with pytest.raises(KeyError):
            unregister_move_operation(Destination, Source)
        assert Destination.carrier_class.definition_state == "definition-free"
    finally:
        unregister_move_operation(Source, sw.CPU)


@pytest.mark.spec(f"{REQ}#5")
def test_a_call_refused_for_its_argument_kinds_seals_nothing():
    class Source(sw.Generic):
        pass

    with pytest.raises(TypeError):
        register_move_operation(Source, sw.CPU, sw.CPU)
    with pytest.raises(TypeError):
        dispatch_move(Source, sw.MoveOperation)
    assert Source.carrier_class.definition_state == "open"
