"""carrier-storage: pins of operations in progress, their leases, and release while pinned."""

import threading

import numpy as np
import pytest

import strideweave as sw

PIN = "carrier-storage/an-operation-in-progress-can-pin-a-carrier"
RELEASE = "carrier-storage/release-relinquishes-storage-once"
MUTABLE = "carrier-storage/public-mutability-follows-construction-and-ownership"

BUILTINS = [sw.CPU, sw.Generic]
OPERATION = "move to CPU carrier #0"


def state(c):
    return (c.tolist(), c.version, c.is_released, c.owner, c.slots)


REFUSED = {
    "write": lambda c: c.write(0, 5),
    "write_range": lambda c: c.write_range(0, [5, 6]),
    "write_range buffer": lambda c: c.write_range(0, np.array([5], dtype=np.int32)),
    "release": lambda c: c.release(),
    "take_ownership": lambda c: sw.Generic(sw.Int32, 1).take_ownership(c),
}


@pytest.mark.spec(f"{PIN}/refuse-mutation-of-a-pinned-carrier", f"{PIN}#1", f"{PIN}#2")
@pytest.mark.parametrize("cls", BUILTINS)
@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_refuse_mutation_of_a_pinned_carrier(cls, call):
    c = cls(sw.Int32, values=[1, 2, 3])
    token = c.version_token()
    with c._pin(OPERATION):
        before = state(c)
        with pytest.raises(RuntimeError) as info:
            call(c)
        message = str(info.value)
        assert cls.carrier_class.name + " carrier #" in message
        assert f"pinned by {OPERATION}" in message
        assert state(c) == before
        assert c.read(1) == 2 and c.read_range(0, 3) == [1, 2, 3]
        assert sw.Tensor(c, sw.Layout(3)).tolist() == [1, 2, 3]
        assert token.is_current()


@pytest.mark.spec(f"{PIN}/refuse-mutation-of-a-pinned-carrier", f"{PIN}#2")
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_allocating_a_pinned_empty_carrier(cls):
    c = cls(sw.Int32)
    with c._pin(OPERATION):
        with pytest.raises(RuntimeError) as info:
            c.allocate(2)
        assert f"pinned by {OPERATION}" in str(info.value)
        assert c.slots == 0 and c.version == 0


@pytest.mark.spec(f"{PIN}#2", f"{MUTABLE}#1")
@pytest.mark.parametrize("cls", BUILTINS)
def test_a_pinned_carrier_is_not_publicly_mutable(cls):
    c = cls(sw.Int32, 2)
    assert c.pinned_by is None and c.is_mutable()
    with c._pin(OPERATION):
        assert c.pinned_by == OPERATION
        assert not c.is_mutable()
        assert not sw.Tensor(c, sw.Layout(2)).is_mutable()
    assert c.pinned_by is None and c.is_mutable()


@pytest.mark.spec(f"{PIN}#2")
def test_a_pinned_cpu_carrier_exports_read_only():
    c = sw.CPU(sw.Float32, values=[1.0, 2.0])
    with c._pin(OPERATION):
        array = np.from_dlpack(sw.Tensor(c, sw.Layout(2)))
        assert not array.flags.writeable
        assert array.tolist() == [1.0, 2.0]
    assert c.version == 0


@pytest.mark.spec(f"{PIN}#3")
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_to_pin_a_pinned_or_released_carrier(cls):
    c = cls(sw.Int32, 1)
    with c._pin(OPERATION):
        with pytest.raises(RuntimeError) as info:
            c._pin("evict")
        assert "evict" in str(info.value) and f"pinned by {OPERATION}" in str(info.value)
        assert c.pinned_by == OPERATION
    c.release()
    with pytest.raises(RuntimeError) as info:
        c._pin("evict")
    assert "released" in str(info.value) and cls.carrier_class.name in str(info.value)
    assert c.pinned_by is None and c.is_released


@pytest.mark.spec(f"{PIN}/write-through-the-lease", f"{PIN}#4", f"{PIN}#5", f"{PIN}#6")
@pytest.mark.parametrize("cls", BUILTINS)
def test_write_through_the_lease(cls):
    c = cls(sw.Int32, 4)
    with c._pin(OPERATION) as lease:
        assert lease.operation == OPERATION and lease.active
        lease.write_range(1, [7, 8])
        assert c.tolist() == [0, 7, 8, 0] and c.version == 0
        lease.write_range(0, np.array([6], dtype=np.int32))
        lease.write(3, 9)
        assert c.tolist() == [6, 7, 8, 9] and c.version == 0
    assert not lease.active
    assert c.version == 1  # the pin's writes count once, when it ends
    c.write(0, 1)
    assert c.version == 2
    c.release()
    assert c.is_released


@pytest.mark.spec(f"{PIN}#4", f"{PIN}#6")
@pytest.mark.parametrize("cls", BUILTINS)
def test_the_lease_follows_the_entry_points_rules(cls):
    c = cls(sw.Int32, 2)
    with c._pin(OPERATION) as lease:
        with pytest.raises(IndexError, match="2 slots"):
            lease.write_range(1, [1, 2])
        with pytest.raises(TypeError, match=r"2\.5"):
            lease.write_range(0, [1, 2.5])
        assert c.tolist() == [0, 0] and c.version == 0
    empty = cls(sw.Int32)
    with empty._pin(OPERATION) as lease:
        lease.allocate(3)
        assert empty.slots == 3 and empty.version == 0
    assert empty.version == 1
    with c._pin(OPERATION) as lease:
        with pytest.raises(IndexError):
            lease.write(5, 1)
    assert c.version == 0  # a pin whose writes all failed changed nothing


@pytest.mark.spec(f"{PIN}#4")
@pytest.mark.parametrize("cls", BUILTINS)
def test_the_lease_bypasses_ownership_but_not_immutability(cls):
    owner, owned = sw.Generic(sw.Int32, 1), cls(sw.Int32, 2)
    owner.take_ownership(owned)
    with owned._pin(OPERATION) as lease:
        lease.write(0, 4)
    assert owned.tolist() == [4, 0] and owned.version == 1 and owned.owner is owner
    frozen = cls(sw.Int32, values=[1, 2], mutable=False)
    with frozen._pin(OPERATION) as lease:
        with pytest.raises(RuntimeError) as info:
            lease.write_range(0, [3])
        assert "constructed immutable" in str(info.value)
    assert frozen.tolist() == [1, 2] and frozen.version == 0


@pytest.mark.spec(f"{PIN}/end-a-pin-exactly-once", f"{PIN}#4", f"{PIN}#5")
@pytest.mark.parametrize("cls", BUILTINS)
def test_end_a_pin_exactly_once(cls):
    c = cls(sw.Int32, 2)
    lease = c._pin(OPERATION)
    lease.end()
    assert c.pinned_by is None and c.is_mutable()
    second = c._pin("evict")
    lease.end()
    assert c.pinned_by == "evict"
    for call in (
        lambda: lease.write(0, 1),
        lambda: lease.write_range(0, [1]),
        lambda: lease.allocate(1),
    ):
        with pytest.raises(RuntimeError) as info:
            call()
        assert OPERATION in str(info.value) and "ended" in str(info.value)
    assert c.tolist() == [0, 0] and c.version == 0
    with second:
        pass
    assert c.pinned_by is None
    with c._pin(OPERATION) as third:
        pass
    assert not third.active and c.pinned_by is None


@pytest.mark.spec(f"{PIN}#5")
def test_dropping_the_lease_ends_the_pin():
    c = sw.CPU(sw.Int32, 1)
    c._pin(OPERATION)
    assert c.pinned_by is None and c.is_mutable()


@pytest.mark.spec(f"{RELEASE}/refuse-to-release-a-pinned-carrier", f"{RELEASE}#5")
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_to_release_a_pinned_carrier(cls):
    c = cls(sw.Float32, values=[1.0, 2.0])
    c.write(0, 3.0)
    with c._pin(OPERATION):
        with pytest.raises(RuntimeError) as info:
            c.release()
        assert f"{cls.carrier_class.name} carrier #" in str(info.value)
        assert f"pinned by {OPERATION}" in str(info.value)
        assert not c.is_released and c.slots == 2 and c.version == 1
        assert c.tolist() == [3.0, 2.0]
    c.release()
    assert c.is_released and c.version == 1
    assert c.release() is None and c.version == 1


@pytest.mark.spec(f"{MUTABLE}#5")
def test_refuse_to_take_ownership_of_a_pinned_carrier():
    owner, c = sw.CPU(sw.Int32, 1), sw.CPU(sw.Int32, 1)
    with c._pin(OPERATION):
        with pytest.raises(RuntimeError) as info:
            owner.take_ownership(c)
        assert f"pinned by {OPERATION}" in str(info.value)
        assert c.owner is None
    owner.take_ownership(c)
    assert c.owner is owner


@pytest.mark.spec(f"{PIN}#7")
@pytest.mark.parametrize("cls", BUILTINS)
def test_a_lease_admits_the_public_entry_points_on_its_thread(cls):
    c = cls(sw.Int32, 3)
    other_thread_errors = []

    def hook():
        c.write(0, 5)
        c.write_range(1, [6, 7])
        worker = threading.Thread(target=lambda: _record_refusal(c, other_thread_errors))
        worker.start()
        worker.join()

    with c._pin(OPERATION) as lease:
        lease._admitted(hook)
        assert c.version == 0
        with pytest.raises(RuntimeError) as info:  # the admission ended with the call
            c.write(0, 1)
        assert f"pinned by {OPERATION}" in str(info.value)
    assert c.tolist() == [5, 6, 7] and c.version == 1
    assert len(other_thread_errors) == 1
    assert f"pinned by {OPERATION}" in other_thread_errors[0]


def _record_refusal(c, errors):
    try:
        c.write(2, 9)
    except RuntimeError as e:
        errors.append(str(e))


@pytest.mark.spec(f"{PIN}#7")
def test_an_admission_fails_in_its_hook_without_writing_another_carrier():
    pinned, other = sw.CPU(sw.Int32, 1), sw.CPU(sw.Int32, 1)
    with other._pin("elsewhere"), pinned._pin(OPERATION) as lease:
        with pytest.raises(RuntimeError) as info:
            lease._admitted(lambda: other.write(0, 1))
        assert "pinned by elsewhere" in str(info.value)
    assert other.tolist() == [0] and other.version == 0 and pinned.version == 0


@pytest.mark.spec(f"{PIN}#8")
@pytest.mark.parametrize("cls", BUILTINS)
def test_release_through_the_lease(cls):
    c = cls(sw.Float32, values=[1.0, 2.0])
    lease = c._pin(OPERATION)
    lease.release()
    assert c.is_released and c.slots == 0 and c.pinned_by is None and c.version == 0
    assert not lease.active
    with pytest.raises(RuntimeError) as info:
        lease.release()
    assert OPERATION in str(info.value) and "ended" in str(info.value)
