"""carrier-storage: release, public mutability, ownership and new_like."""

import gc
import itertools
import os

import pytest

import strideweave as sw

RELEASE = "carrier-storage/release-relinquishes-storage-once"
MUTABLE = "carrier-storage/public-mutability-follows-construction-and-ownership"
LIKE = "carrier-storage/new-like-creates-an-empty-carrier-of-the-same-exact-class"

BUILTINS = [sw.CPU, sw.Generic]


@pytest.mark.spec(f"{RELEASE}/release-a-carrier", f"{RELEASE}#1", f"{RELEASE}#3", f"{RELEASE}#4")
@pytest.mark.parametrize("cls", BUILTINS)
def test_release_a_carrier(cls):
    c = cls(sw.Float32, values=[1.0, 2.0])
    c.write(0, 3.0)
    c.release()
    assert c.is_released
    assert c.slots == 0
    assert c.version == 1
    for call in (lambda: c.read(0), lambda: c.write(0, 1.0), lambda: c.allocate(1)):
        with pytest.raises(RuntimeError) as info:
            call()
        assert "released" in str(info.value)
        assert cls.carrier_class.name in str(info.value)


@pytest.mark.spec(f"{RELEASE}#3")
def test_pointer_of_a_released_cpu_carrier_fails():
    c = sw.CPU(sw.Int32, 2)
    c.release()
    with pytest.raises(RuntimeError, match="released"):
        c.pointer()


@pytest.mark.spec(f"{RELEASE}#6")
@pytest.mark.parametrize("cls", BUILTINS)
def test_tolist_of_a_released_carrier_fails(cls):
    c = cls(sw.Int32, values=[1, 2])
    c.release()
    with pytest.raises(RuntimeError) as info:
        c.tolist()
    assert "released" in str(info.value) and cls.carrier_class.name in str(info.value)
    with pytest.raises(RuntimeError, match="released"):
        sw.tensor(c)
    assert c.is_released and c.version == 0


@pytest.mark.spec(f"{RELEASE}/release-twice", f"{RELEASE}#2")
@pytest.mark.parametrize("cls", BUILTINS)
def test_release_twice(cls):
    c = cls(sw.Int32, 2)
    c.release()
    assert c.release() is None
    assert c.is_released and c.version == 0


@pytest.mark.spec(
    f"{MUTABLE}/refuse-a-write-to-an-immutable-carrier", f"{MUTABLE}#1", f"{MUTABLE}#2"
)
@pytest.mark.parametrize("cls", BUILTINS)
def test_refuse_a_write_to_an_immutable_carrier(cls):
    c = cls(sw.Float32, values=[1.0], mutable=False)
    assert not c.is_mutable()
    with pytest.raises(RuntimeError) as info:
        c.write(0, 2.0)
    assert "constructed immutable" in str(info.value)
    assert cls.carrier_class.name in str(info.value)
    assert c.read(0) == 1.0 and c.version == 0
    empty = cls(sw.Float32, mutable=False)
    with pytest.raises(RuntimeError, match="immutable"):
        empty.allocate(2)
    assert empty.slots == 0


@pytest.mark.spec(f"{MUTABLE}#1")
def test_a_released_carrier_is_not_publicly_mutable():
    c = sw.CPU(sw.Int32, 1)
    assert c.is_mutable()
    c.release()
    assert not c.is_mutable()


@pytest.mark.spec(f"{MUTABLE}/own-and-relinquish-a-carrier", f"{MUTABLE}#3", f"{MUTABLE}#4")
def test_own_and_relinquish_a_carrier():
    owner, owned = sw.Generic(sw.Int32, 1), sw.CPU(sw.Int32, 1)
    assert owned.owner is None and owned.is_mutable()
    owner.take_ownership(owned)
    assert owned.owner is owner
    assert not owned.is_mutable()
    with pytest.raises(RuntimeError) as info:
        owned.write(0, 5)
    assert "owned by" in str(info.value)
    assert owned.read(0) == 0 and owned.version == 0
    owner.relinquish(owned)
    assert owned.owner is None and owned.is_mutable()
    owned.write(0, 5)
    assert owned.read(0) == 5


@pytest.mark.spec(f"{MUTABLE}/refuse-an-invalid-ownership-transfer", f"{MUTABLE}#3", f"{MUTABLE}#4")
def test_refuse_an_invalid_ownership_transfer():
    a, b, c = sw.CPU(sw.Int32, 1), sw.CPU(sw.Int32, 1), sw.CPU(sw.Int32, 1)
    with pytest.raises(ValueError, match="itself"):
        a.take_ownership(a)
    assert a.owner is None
    b.take_ownership(c)
    with pytest.raises(RuntimeError, match="owned by"):
        a.take_ownership(c)
    assert c.owner is b
    released = sw.CPU(sw.Int32, 1)
    released.release()
    with pytest.raises(RuntimeError, match="released"):
        a.take_ownership(released)
    assert released.owner is None
    with pytest.raises(ValueError, match="does not own"):
        a.relinquish(c)
    assert c.owner is b


def label(carrier) -> str:
    """How messages name a carrier: its repr without the brackets, dtype and slots."""
    return repr(carrier)[1:].split(" Int32")[0]


@pytest.mark.spec(f"{MUTABLE}#6")
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_refuse_an_ownership_cycle(depth):
    """The carrier at the top of an ownership chain cannot be taken by the one at its
    bottom: nothing changes, and every carrier of the chain stays reclaimable (its
    temporary file is removed once it is dropped)."""
    chain = [sw.FileBacked(sw.Int32, n=1) for _ in range(depth + 1)]
    paths = [c.path for c in chain]
    for owner, owned in itertools.pairwise(chain):
        owner.take_ownership(owned)
    top, bottom = chain[0], chain[-1]
    versions = [c.version for c in chain]
    with pytest.raises(ValueError, match="cycle") as info:
        bottom.take_ownership(top)
    message = str(info.value)
    assert f"{label(bottom)} cannot take ownership of {label(top)}, which owns" in message
    assert top.owner is None
    assert [c.owner for c in chain[1:]] == chain[:-1]
    assert [c.version for c in chain] == versions
    del chain, top, bottom, owner, owned
    gc.collect()
    assert [p for p in paths if os.path.exists(p)] == []


@pytest.mark.spec(f"{LIKE}/create-a-like-carrier-from-a-released-carrier", f"{LIKE}#1")
@pytest.mark.parametrize("cls", BUILTINS)
def test_create_a_like_carrier_from_a_released_carrier(cls):
    c = cls(sw.Int32, values=[1, 2], mutable=False)
    c.release()
    like = c.new_like()
    assert type(like) is cls
    assert like.dtype == sw.Int32
    assert like.slots == 0 and not like.is_released
    assert like.is_mutable() and like.owner is None


@pytest.mark.spec(f"{LIKE}#1")
def test_new_like_of_an_owned_carrier_is_unowned():
    owner, owned = sw.CPU(sw.Int32, 1), sw.CPU(sw.Float32, 3)
    owner.take_ownership(owned)
    like = owned.new_like()
    assert like.owner is None and like.is_mutable() and like.dtype == sw.Float32


@pytest.mark.spec(f"{LIKE}/preserve-a-python-subclass", f"{LIKE}#2")
def test_preserve_a_python_subclass():
    class Pinned(sw.CPU):
        pass

    p = Pinned(sw.Float32, 2)
    like = p.new_like()
    assert type(like) is Pinned
    assert like.carrier_class is Pinned.carrier_class
    assert like.dtype == sw.Float32 and like.slots == 0


@pytest.mark.spec(f"{LIKE}#2")
def test_a_subclass_with_another_constructor_overrides_new_like():
    class Sized(sw.Generic):
        def __init__(self, dtype, label):
            super().__init__(dtype, 1)
            self.label = label

        def new_like(self):
            return Sized(self.dtype, self.label)

    like = Sized(sw.Int32, "x").new_like()
    assert type(like) is Sized and like.label == "x"


OWNER_PATH = "carrier-storage/an-owner-writes-its-owned-carriers-through-an-owner-path"


@pytest.mark.spec(f"{OWNER_PATH}#4")
@pytest.mark.parametrize("cls", [sw.CPU, sw.Generic, sw.FileBacked])
def test_public_release_of_an_owned_carrier_is_refused_naming_the_owner(cls):
    """Only the owner releases what it owns; after relinquishing, release works again."""
    owner, owned = sw.Generic(sw.Int32, 1), cls(sw.Int32, values=[4, 5])
    owner.take_ownership(owned)
    before = (owned.tolist(), owned.version, owned.is_released, owned.slots)
    with pytest.raises(RuntimeError) as info:
        owned.release()
    message = str(info.value)
    assert f"{cls.carrier_class.name} carrier" in message and "owned by Generic carrier" in message
    assert (owned.tolist(), owned.version, owned.is_released, owned.slots) == before
    assert owned.owner is owner
    owner.relinquish(owned)
    owned.release()
    assert owned.is_released and owned.owner is None


def odd_new_like(kind: str):
    """A CPU subclass whose new_like returns what `kind` names instead of a fresh one."""

    class Odd(sw.CPU):
        def new_like(self):
            return {
                "None": None,
                "a plain CPU": sw.CPU(self.dtype),
                "another dtype": Odd(sw.Int32),
                "a sized carrier": Odd(self.dtype, 3),
                "a released carrier": released(Odd(self.dtype)),
                "an int": 5,
            }[kind]

    return Odd


def released(carrier):
    carrier.release()
    return carrier


NEW_LIKE_RESULTS = [
    ("None", "returned None"),
    ("a plain CPU", "(CPU of Float32)"),
    ("another dtype", "Odd of Int32)"),
    ("a sized carrier", "holding 3 slots"),
    ("a released carrier", "which is released"),
    ("an int", "returned 5 (int), not a Carrier"),
]
NEW_LIKE_IDS = [kind for kind, _ in NEW_LIKE_RESULTS]


@pytest.mark.spec(f"{LIKE}#3")
@pytest.mark.parametrize(("kind", "subject"), NEW_LIKE_RESULTS, ids=NEW_LIKE_IDS)
def test_backward_refuses_what_a_new_like_override_returned(kind, subject):
    """A move's backward stages the gradient in new_like() of the source's class: a result
    that is no empty carrier of that class fails with TypeError before it is used, and no
    gradient is stored."""
    odd = odd_new_like(kind)
    x = sw.Tensor(odd(sw.Float32, values=[1.0, 2.0]), sw.Layout(2))
    x.requires_grad = True
    y = sw.move(x, sw.Generic(sw.Float32))
    with pytest.raises(TypeError, match="new_like") as info:
        y.sum().backward()
    assert subject in str(info.value)
    assert x.grad is None


@pytest.mark.spec(f"{LIKE}#3")
@pytest.mark.parametrize(("kind", "subject"), NEW_LIKE_RESULTS, ids=NEW_LIKE_IDS)
def test_an_evictable_refuses_what_a_new_like_override_returned(kind, subject):
    """An Evictable's eviction replaces its fast tier with new_like() of it."""
    fast = odd_new_like(kind)(sw.Float32, values=[1.0, 2.0])
    evictable = sw.Evictable(fast, sw.Generic(sw.Float32, 2))
    with pytest.raises(TypeError, match="new_like") as info:
        evictable.evict()
    assert subject in str(info.value)
    assert evictable.tolist() == [1.0, 2.0]
