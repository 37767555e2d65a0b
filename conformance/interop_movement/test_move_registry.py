"""interop-movement: the legacy move registry (strideweave.carriers.move).

The registry is process-global: every test registers pairs of classes it defines itself
(so no test can collide with another's entries) and leaves the built-in entries as it
found them. "Nothing changed" is checked on every pair of the classes involved and of
the built-in carrier classes.

"Reject registration for a defined carrier" and clauses #16 to #18 are bound in
test_move_routes.py, with the definitions they need.
"""

import subprocess
import sys
import textwrap
import threading

import pytest

import strideweave as sw
from strideweave.carriers.move import (
    dispatch_move,
    register_move_operation,
    registered_move_operation,
    unregister_move_operation,
)

REQ = "interop-movement/move-registration-is-explicit-validated-and-process-global"
DESCRIPTORS = "carrier-storage/every-carrier-class-has-an-exact-runtime-class-descriptor"
BUILTIN_CARRIERS = (sw.CPU, sw.Generic, sw.FileBacked)
BUILTIN_ENTRIES = {
    (sw.CPU, sw.FileBacked): sw.CpuToFileBackedMoveOperation,
    (sw.FileBacked, sw.CPU): sw.FileBackedToCpuMoveOperation,
}


def entries(*classes: type) -> dict:
    """dispatch_move over every ordered pair of ``classes`` and the built-in carriers."""
    every = (*BUILTIN_CARRIERS, *classes)
    return {(s, d): dispatch_move(s, d) for s in every for d in every}


def carrier_classes():
    """Two fresh definition-free carrier classes and a subclass of each."""

    class Source(sw.Generic):
        pass

    class Destination(sw.CPU):
        pass

    class SubSource(Source):
        pass

    class SubDestination(Destination):
        pass

    return Source, Destination, SubSource, SubDestination


def operation_classes():
    class Custom(sw.MoveOperation):
        pass

    class Other(sw.ElementwiseMoveOperation):
        pass

    return Custom, Other


@pytest.mark.spec(f"{REQ}/register-and-dispatch-an-exact-legacy-pair", f"{REQ}#1", f"{REQ}#5")
def test_register_and_dispatch_an_exact_legacy_pair():
    source, destination, sub_source, sub_destination = carrier_classes()
    custom, _ = operation_classes()
    before = entries(source, destination, sub_source, sub_destination)
    assert register_move_operation(source, destination, custom) is None
    try:
        after = entries(source, destination, sub_source, sub_destination)
        assert after[(source, destination)] is custom
        # Only that exact pair changed.
        assert {k: v for k, v in after.items() if k != (source, destination)} == {
            k: v for k, v in before.items() if k != (source, destination)
        }
        assert dispatch_move(destination, source) is sw.ElementwiseMoveOperation
    finally:
        unregister_move_operation(source, destination)
    assert entries(source, destination, sub_source, sub_destination) == before


@pytest.mark.spec(f"{REQ}#5", f"{DESCRIPTORS}#3")
def test_dispatch_selects_by_class_identity_not_name():
    """Two classes of the same name are two keys."""

    def make():
        class Twin(sw.Generic):
            pass

        return Twin

    first, second = make(), make()
    custom, _ = operation_classes()
    register_move_operation(first, sw.CPU, custom)
    try:
        assert dispatch_move(first, sw.CPU) is custom
        assert dispatch_move(second, sw.CPU) is sw.ElementwiseMoveOperation
    finally:
        unregister_move_operation(first, sw.CPU)


@pytest.mark.spec(f"{REQ}/refuse-to-overwrite-a-registration", f"{REQ}#4")
def test_refuse_to_overwrite_a_registration():
    source, destination, *_ = carrier_classes()
    custom, other = operation_classes()
    register_move_operation(source, destination, custom)
    try:
        before = entries(source, destination)
        for replacement in (other, custom):
            with pytest.raises(ValueError) as raised:
                register_move_operation(source, destination, replacement)
            assert "(Source, Destination)" in str(raised.value).replace(
                "carrier_classes.<locals>.", ""
            )
            assert entries(source, destination) == before
        assert dispatch_move(source, destination) is custom
    finally:
        unregister_move_operation(source, destination)


@pytest.mark.spec(f"{REQ}/refuse-to-overwrite-a-registration", f"{REQ}#4", f"{REQ}#14")
@pytest.mark.parametrize("pair", list(BUILTIN_ENTRIES))
def test_refuse_to_overwrite_a_built_in_entry(pair):
    custom, _ = operation_classes()
    before = entries()
    with pytest.raises(ValueError) as raised:
        register_move_operation(*pair, custom)
    message = str(raised.value)
    assert f"({pair[0].__name__}, {pair[1].__name__})" in message
    assert entries() == before
    assert dispatch_move(*pair) is BUILTIN_ENTRIES[pair]


@pytest.mark.spec(f"{REQ}/remove-a-registration", f"{REQ}#7", f"{REQ}#8")
def test_remove_a_registration():
    source, destination, *_ = carrier_classes()
    custom, _ = operation_classes()
    before = entries(source, destination)
    register_move_operation(source, destination, custom)
    assert unregister_move_operation(source, destination) is custom
    assert entries(source, destination) == before
    with pytest.raises(KeyError) as raised:
        unregister_move_operation(source, destination)
    message = str(raised.value).replace("carrier_classes.<locals>.", "")
    assert "(Source, Destination)" in message
    assert entries(source, destination) == before


@pytest.mark.spec(f"{REQ}#7")
def test_unregister_a_built_in_entry_and_restore_it():
    """A built-in entry is an ordinary entry: removable (returning its class), then
    dispatch falls back; registering it again restores it."""
    pair = (sw.FileBacked, sw.CPU)
    before = entries()
    try:
        assert unregister_move_operation(*pair) is sw.FileBackedToCpuMoveOperation
        assert dispatch_move(*pair) is sw.ElementwiseMoveOperation
    finally:
        register_move_operation(*pair, sw.FileBackedToCpuMoveOperation)
    assert entries() == before


@pytest.mark.spec(f"{REQ}/do-not-match-a-different-exact-pair", f"{REQ}#6", f"{REQ}#8")
def test_do_not_match_a_different_exact_pair():
    source, destination, sub_source, sub_destination = carrier_classes()
    custom, _ = operation_classes()
    register_move_operation(source, destination, custom)
    try:
        before = entries(source, destination, sub_source, sub_destination)
        different = [
            (sub_source, destination),  # source replaced by a subclass
            (source, sub_destination),  # destination replaced by a subclass
            (sub_source, sub_destination),
            (destination, source),  # neither exact class has a registration as given
            (sw.Generic, sw.CPU),  # the registered classes' parents
        ]
        for pair in different:
            assert dispatch_move(*pair) is sw.ElementwiseMoveOperation, pair
            with pytest.raises(KeyError) as raised:
                unregister_move_operation(*pair)
            assert all(cls.__name__ in str(raised.value) for cls in pair)
        assert entries(source, destination, sub_source, sub_destination) == before
    finally:
        unregister_move_operation(source, destination)


@pytest.mark.spec(f"{REQ}#6")
def test_a_parent_registration_does_not_match_its_subclasses():
    source, destination, sub_source, sub_destination = carrier_classes()
    custom, _ = operation_classes()
    register_move_operation(sub_source, sub_destination, custom)
    try:
        assert dispatch_move(sub_source, sub_destination) is custom
        assert dispatch_move(source, destination) is sw.ElementwiseMoveOperation
    finally:
        unregister_move_operation(sub_source, sub_destination)


@pytest.mark.spec(f"{REQ}#9")
def test_dispatch_and_unregister_accept_every_carrier_subclass():
    source, destination, *_ = carrier_classes()
    for pair in [(sw.Carrier, sw.Carrier), (sw.Carrier, source), (destination, sw.FileBacked)]:
        assert dispatch_move(*pair) is sw.ElementwiseMoveOperation
        with pytest.raises(KeyError):
            unregister_move_operation(*pair)


@pytest.mark.spec(f"{REQ}#14", f"{REQ}#15")
def test_built_in_entries_exist_before_the_first_caller():
    """In a fresh interpreter, the first registry call already sees the built-ins."""
    script = textwrap.dedent(
        """
        import strideweave as sw
        from strideweave.carriers.move import dispatch_move
        assert dispatch_move(sw.CPU, sw.FileBacked) is sw.CpuToFileBackedMoveOperation
        assert dispatch_move(sw.FileBacked, sw.CPU) is sw.FileBackedToCpuMoveOperation
        assert dispatch_move(sw.CPU, sw.CPU) is sw.ElementwiseMoveOperation
        print("ok")
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"


@pytest.mark.spec(f"{REQ}#14", f"{REQ}#15")
def test_every_other_pair_uses_the_elementwise_fallback():
    source, destination, *_ = carrier_classes()
    for pair, operation in entries(source, destination).items():
        assert operation is BUILTIN_ENTRIES.get(pair, sw.ElementwiseMoveOperation), pair
    assert dispatch_move(sw.CPU, sw.CPU) is sw.ElementwiseMoveOperation


def not_conforming(role: str):
    """(argument value, text naming it) for objects that are not the role's kind."""
    custom, _ = operation_classes()
    source, *_ = carrier_classes()
    common = [(3, "3"), (None, "None"), ("CPU", "'CPU'"), (int, "int"), (object, "object")]
    if role == "operation_class":
        return [*common, (source, "Source"), (sw.CPU, "CPU"), (custom(), "Custom")]
    return [
        *common,
        (custom, "Custom"),
        (sw.MoveOperation, "MoveOperation"),
        (sw.CPU(sw.Int32, 1), "CPU"),
    ]


def call_with(role: str, value, base: tuple) -> tuple:
    roles = ("source_class", "destination_class", "operation_class")
    return tuple(value if r == role else b for r, b in zip(roles, base, strict=False))


@pytest.mark.spec(f"{REQ}#2", f"{REQ}#3")
@pytest.mark.parametrize("role", ["source_class", "destination_class", "operation_class"])
def test_register_refuses_a_non_conforming_argument(role):
    source, destination, *_ = carrier_classes()
    custom, _ = operation_classes()
    before = entries(source, destination)
    for value, name in not_conforming(role):
        arguments = call_with(role, value, (source, destination, custom))
        with pytest.raises(TypeError) as raised:
            register_move_operation(*arguments)
        message = str(raised.value)
        assert f"{role} " in message and name in message, message
        expected = "MoveOperation" if role == "operation_class" else "Carrier"
        assert f"not a {expected} subclass" in message, message
        assert entries(source, destination) == before


@pytest.mark.spec(f"{REQ}#2", f"{REQ}#3", f"{REQ}#10")
@pytest.mark.parametrize("role", ["source_class", "destination_class", "operation_class"])
def test_registered_move_operation_validates_like_register(role):
    source, destination, *_ = carrier_classes()
    custom, _ = operation_classes()
    before = entries(source, destination)
    for value, name in not_conforming(role):
        with pytest.raises(TypeError) as raised:
            registered_move_operation(*call_with(role, value, (source, destination, custom)))
        assert f"{role} " in str(raised.value) and name in str(raised.value)
        assert entries(source, destination) == before


@pytest.mark.spec(f"{REQ}#3")
@pytest.mark.parametrize("role", ["source_class", "destination_class"])
def test_dispatch_and_unregister_name_a_non_carrier_argument(role):
    """Their behaviour for other arguments is unspecified; they refuse them as register
    does, without touching the registry."""
    source, destination, *_ = carrier_classes()
    before = entries(source, destination)
    for value, name in not_conforming(role):
        for call in (dispatch_move, unregister_move_operation):
            with pytest.raises(TypeError) as raised:
                call(*call_with(role, value, (source, destination)))
            assert f"{role} " in str(raised.value) and name in str(raised.value)
    assert entries(source, destination) == before


@pytest.mark.spec(f"{REQ}/scope-a-registration-to-a-block", f"{REQ}#10", f"{REQ}#11", f"{REQ}#12")
def test_scope_a_registration_to_a_block_that_returns():
    source, destination, *_ = carrier_classes()
    custom, _ = operation_classes()
    before = entries(source, destination)
    manager = registered_move_operation(source, destination, custom)
    assert dispatch_move(source, destination) is sw.ElementwiseMoveOperation  # not yet
    with manager as yielded:
        assert yielded is custom
        assert dispatch_move(source, destination) is custom
    assert entries(source, destination) == before
    with pytest.raises(KeyError):
        unregister_move_operation(source, destination)


@pytest.mark.spec(f"{REQ}/scope-a-registration-to-a-block", f"{REQ}#12", f"{REQ}#13")
def test_scope_a_registration_to_a_block_that_raises():
    source, destination, *_ = carrier_classes()
    custom, _ = operation_classes()
    before = entries(source, destination)
    failure = LookupError("from the block")
    with pytest.raises(LookupError) as raised:
        with registered_move_operation(source, destination, custom):
            assert dispatch_move(source, destination) is custom
            raise failure
    assert raised.value is failure
    assert entries(source, destination) == before


@pytest.mark.spec(f"{REQ}#10", f"{REQ}#4")
def test_registered_move_operation_refuses_a_registered_pair():
    """Refused when created, and again on entering once the pair gained an entry."""
    source, destination, *_ = carrier_classes()
    custom, other = operation_classes()
    with pytest.raises(ValueError) as raised:
        registered_move_operation(sw.CPU, sw.FileBacked, custom)
    assert "(CPU, FileBacked)" in str(raised.value)
    manager = registered_move_operation(source, destination, other)
    register_move_operation(source, destination, custom)
    try:
        before = entries(source, destination)
        with pytest.raises(ValueError):
            with manager:
                pytest.fail("entered a context for a registered pair")
        assert entries(source, destination) == before
        assert dispatch_move(source, destination) is custom
    finally:
        unregister_move_operation(source, destination)


@pytest.mark.spec(f"{REQ}#11", f"{REQ}#12")
def test_a_registration_context_can_be_entered_again():
    source, destination, *_ = carrier_classes()
    custom, _ = operation_classes()
    manager = registered_move_operation(source, destination, custom)
    for _ in range(2):
        with manager:
            assert dispatch_move(source, destination) is custom
        assert dispatch_move(source, destination) is sw.ElementwiseMoveOperation


@pytest.mark.spec(f"{REQ}#20")
def test_registry_functions_are_importable_from_carriers_move():
    import strideweave.carriers.move as move

    assert {
        "dispatch_move",
        "register_move_operation",
        "registered_move_operation",
        "unregister_move_operation",
    } <= set(move.__all__)
    assert all(callable(getattr(move, name)) for name in move.__all__)


@pytest.mark.spec(f"{REQ}#19")
def test_move_and_the_operation_classes_are_importable_from_the_top_level_package():
    assert "move" in sw.__all__ and sw.move is sw.carriers.move.move
    names = [
        "MoveOperation",
        "ElementwiseMoveOperation",
        "CpuToFileBackedMoveOperation",
        "FileBackedToCpuMoveOperation",
    ]
    for name in names:
        assert name in sw.__all__
        cls = getattr(sw, name)
        assert issubclass(cls, sw.MoveOperation)
        assert cls.operation_class.name == name


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#5", f"{REQ}#7")
def test_concurrent_registrations_of_distinct_pairs_stay_consistent():
    threads, rounds = 8, 200
    pairs = [carrier_classes()[:2] for _ in range(threads)]
    operations = [operation_classes()[0] for _ in range(threads)]
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(index: int) -> None:
        source, destination = pairs[index]
        operation = operations[index]
        try:
            start.wait()
            for _ in range(rounds):
                register_move_operation(source, destination, operation)
                assert dispatch_move(source, destination) is operation
                assert unregister_move_operation(source, destination) is operation
                assert dispatch_move(source, destination) is sw.ElementwiseMoveOperation
            register_move_operation(source, destination, operation)
        except BaseException as e:
            errors.append(e)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    try:
        assert errors == []
        for (source, destination), operation in zip(pairs, operations, strict=True):
            assert dispatch_move(source, destination) is operation
        assert dispatch_move(sw.CPU, sw.FileBacked) is sw.CpuToFileBackedMoveOperation
    finally:
        for source, destination in pairs:
            unregister_move_operation(source, destination)


@pytest.mark.spec(f"{REQ}#4")
def test_concurrent_registrations_of_one_pair_admit_exactly_one():
    source, destination, *_ = carrier_classes()
    threads = 8
    operations = [operation_classes()[0] for _ in range(threads)]
    outcomes: list[object] = [None] * threads
    start = threading.Barrier(threads)

    def work(index: int) -> None:
        start.wait()
        try:
            register_move_operation(source, destination, operations[index])
            outcomes[index] = "registered"
        except ValueError as e:
            outcomes[index] = e

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    try:
        winners = [i for i, outcome in enumerate(outcomes) if outcome == "registered"]
        assert len(winners) == 1
        assert all(isinstance(o, ValueError) for i, o in enumerate(outcomes) if i not in winners)
        assert dispatch_move(source, destination) is operations[winners[0]]
    finally:
        unregister_move_operation(source, destination)
