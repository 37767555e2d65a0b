"""carrier-storage: entry points, ranges, versions and tokens; allocation, release, pins and
ownership; mutability; dtype coercion and its refusals, for the carrier factory under test.
"""

from __future__ import annotations

import struct
from functools import partial
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import expect, expect_raises
from strideweave.kit.checks.support import (
    HOLDS,
    KIT_SETTINGS,
    Make,
    allocatable,
    sample,
    zero,
)

ENTRY = "carrier-storage/entry-points-read-and-write-slots-and-count-mutations"
TOKENS = "carrier-storage/version-tokens-compare-equal-while-nothing-changed"
ALLOCATE = "carrier-storage/an-empty-carrier-can-be-allocated-once"
RELEASE = "carrier-storage/release-relinquishes-storage-once"
MUTABLE = "carrier-storage/public-mutability-follows-construction-and-ownership"
LIKE = "carrier-storage/new-like-creates-an-empty-carrier-of-the-same-exact-class"
RANGES = "carrier-storage/range-entry-points-read-and-write-consecutive-slots"
PIN = "carrier-storage/an-operation-in-progress-can-pin-a-carrier"
OWNER_PATH = "carrier-storage/an-owner-writes-its-owned-carriers-through-an-owner-path"
OPERATION = "strideweave-kit check"
# Per dtype, values of the wrong kind (entry points #3).
WRONG_KIND: dict[sw.DType, list[Any]] = {
    sw.Int32: [1.5, True],
    sw.Float32: [True, "x"],
    sw.Bool: [1, 0.0],
}


def state(c: sw.Carrier) -> tuple:
    """What a refused call must leave unchanged."""
    return (c.tolist(), c.version, c.is_released, c.owner, c.slots)


# -- construction and dtype coercion --------------------------------------------------


@pytest.mark.spec(f"{HOLDS}/allocate-slots-at-construction", f"{HOLDS}#1", f"{HOLDS}#2")
def test_allocate_slots_at_construction(make: Make, dtypes):
    for dtype in dtypes:
        c = make(dtype, 6)
        observed = f"{dtype} carrier of 6: dtype {c.dtype}, slots {c.slots}, len {len(c)}"
        expect(c.dtype == dtype and c.slots == 6 and len(c) == 6, f"{HOLDS}#1", observed)
        values = c.read_range(0, 6)
        expect(values == [zero(dtype)] * 6, f"{HOLDS}#2", f"{dtype} slots read {values}")
        expect(c.version == 0, f"{ENTRY}#4", f"a new carrier has version {c.version}")
        empty = make(dtype)
        expect(empty.slots == 0, f"{HOLDS}#2", f"{dtype} carrier of no n has {empty.slots}")


@pytest.mark.spec(f"{HOLDS}/construct-from-values", f"{HOLDS}#2")
def test_construct_from_values(make: Make, dtypes):
    for dtype in dtypes:
        values = [sample(dtype, k) for k in range(3)]
        c = make(dtype, values=values)
        expect(
            c.slots == 3 and c.tolist() == values,
            f"{HOLDS}#2",
            f"values={values} made {c.slots} slots reading {c.tolist()}",
        )


@pytest.mark.spec(f"{HOLDS}/reject-a-malformed-construction", f"{HOLDS}#3")
def test_reject_a_malformed_construction(make: Make, numeric):
    expect_raises(TypeError, f"{HOLDS}#3", lambda: make("no such dtype", 2))
    expect_raises(TypeError, f"{HOLDS}#3", lambda: make(object(), 2))
    expect_raises(ValueError, f"{HOLDS}#3", lambda: make(numeric, -1))
    expect_raises(ValueError, f"{HOLDS}#3", lambda: make(numeric, 2, values=[1, 1, 1]))


@pytest.mark.spec(f"{HOLDS}#3")
def test_dtype_names_coerce_to_the_dtype(make: Make, dtypes):
    """Another name of a dtype (its string) makes a carrier of that dtype."""
    for dtype in dtypes:
        name = str(dtype).lower()
        c = make(name, 1)
        expect(c.dtype == dtype, f"{HOLDS}#3", f"dtype {name!r} made a {c.dtype} carrier")


# -- entry points ----------------------------------------------------------------------


@pytest.mark.spec(f"{ENTRY}/count-a-write", f"{ENTRY}#1", f"{ENTRY}#4")
def test_count_a_write(make: Make, dtypes):
    for dtype in dtypes:
        c = make(dtype, 3)
        c.write(1, sample(dtype, 0))
        expect(c.version == 1, f"{ENTRY}#4", f"one write took version 0 to {c.version}")
        got = c.read(1)
        expect(got == sample(dtype, 0), f"{ENTRY}#1", f"read(1) {got!r} after a write")
        c.read(0)
        c.tolist()
        expect(c.version == 1, f"{ENTRY}#4", f"reads took version 1 to {c.version}")


@pytest.mark.spec(f"{ENTRY}/keep-the-version-on-a-failed-write", f"{ENTRY}#2", f"{ENTRY}#3")
def test_keep_the_version_on_a_failed_write(make: Make, dtypes):
    for dtype in dtypes:
        c = make(dtype, values=[sample(dtype, k) for k in range(3)])
        before = state(c)
        expect_raises(
            IndexError, f"{ENTRY}#2", partial(c.write, 3, sample(dtype, 0)), naming=("3",)
        )
        expect_raises(IndexError, f"{ENTRY}#2", partial(c.read, -4), naming=("3",))
        for value in WRONG_KIND[dtype]:
            expect_raises(TypeError, f"{ENTRY}#3", partial(c.write, 0, value))
        if dtype == sw.Int32:
            expect_raises(ValueError, f"{ENTRY}#3", partial(c.write, 0, 2**31))
        expect(state(c) == before, f"{ENTRY}#4", f"refused writes changed {before} to {state(c)}")


@pytest.mark.spec(f"{ENTRY}/round-a-float32-value", f"{ENTRY}#5")
def test_round_a_float32_value(make: Make, dtypes):
    if sw.Float32 not in dtypes:
        pytest.skip("the carrier class holds no Float32")
    c = make(sw.Float32, 1)
    c.write(0, 0.1)
    nearest = struct.unpack("f", struct.pack("f", 0.1))[0]
    expect(c.read(0) == nearest, f"{ENTRY}#5", f"0.1 reads back as {c.read(0)!r}, not {nearest!r}")


# -- version tokens --------------------------------------------------------------------


@pytest.mark.spec(f"{TOKENS}/compare-tokens-across-a-write", f"{TOKENS}#1", f"{TOKENS}#2")
def test_compare_tokens_across_a_write(make: Make, numeric):
    c = make(numeric, 2)
    first = c.version_token()
    c.read(0)
    second = c.version_token()
    expect(
        first == second and first.is_current() and second.is_current(),
        f"{TOKENS}#2",
        "two tokens taken around a read are not equal and current",
    )
    c.write(0, sample(numeric, 0))
    third = c.version_token()
    expect(
        not first.is_current() and first != third and third.version == c.version,
        f"{TOKENS}#2",
        f"after a write: old token current={first.is_current()}, equal to new={first == third}",
    )


@pytest.mark.spec(f"{TOKENS}/tell-carriers-apart", f"{TOKENS}#2")
def test_tell_carriers_apart(make: Make, numeric):
    a, b = make(numeric, 1), make(numeric, 1)
    expect(a.version_token() != b.version_token(), f"{TOKENS}#2", "tokens of two carriers equal")


# -- allocation --------------------------------------------------------------------------


@pytest.mark.spec(f"{ALLOCATE}/allocate-an-empty-carrier", f"{ALLOCATE}#1")
def test_allocate_an_empty_carrier(make: Make, numeric):
    c = make(numeric)
    if not allocatable(c, 4):
        pytest.skip("the carrier class offers no allocation")
    expect(
        c.tolist() == [zero(numeric)] * 4 and c.version == 1,
        f"{ALLOCATE}#1",
        f"allocate(4) gave {c.tolist()} at version {c.version}",
    )


@pytest.mark.spec(f"{ALLOCATE}/refuse-to-reallocate", f"{ALLOCATE}#2")
def test_refuse_to_reallocate(make: Make, numeric):
    c = make(numeric)
    if not allocatable(c, 2):
        pytest.skip("the carrier class offers no allocation")
    before = state(c)
    expect_raises(RuntimeError, f"{ALLOCATE}#2", lambda: c.allocate(3))
    expect_raises(ValueError, f"{ALLOCATE}#2", lambda: make(numeric).allocate(-1))
    expect(state(c) == before, f"{ALLOCATE}#2", f"a refused allocate changed {before}")


# -- release ---------------------------------------------------------------------------


@pytest.mark.spec(f"{RELEASE}/release-a-carrier", f"{RELEASE}#1", f"{RELEASE}#3", f"{RELEASE}#6")
def test_release_a_carrier(make: Make, numeric):
    c = make(numeric, values=[sample(numeric, 0)] * 3)
    c.write(0, sample(numeric, 1))
    version = c.version
    c.release()
    expect(c.is_released and c.slots == 0, f"{RELEASE}#3", f"released: slots {c.slots}")
    expect(c.version == version, f"{RELEASE}#4", f"release changed version to {c.version}")
    expect(not c.is_mutable(), f"{MUTABLE}#1", "a released carrier is publicly mutable")
    for call in (
        lambda: c.read(0),
        lambda: c.write(0, sample(numeric, 0)),
        lambda: c.read_range(0, 0),
        lambda: c.tolist(),
    ):
        expect_raises(RuntimeError, f"{RELEASE}#3", call, naming=("released",))


@pytest.mark.spec(f"{RELEASE}/release-twice", f"{RELEASE}#2", f"{RELEASE}#4")
def test_release_twice(make: Make, numeric):
    c = make(numeric, 2)
    c.release()
    c.release()
    expect(c.is_released and c.version == 0, f"{RELEASE}#2", f"version {c.version}")


@pytest.mark.spec(f"{RELEASE}/refuse-to-release-a-pinned-carrier", f"{RELEASE}#5")
def test_refuse_to_release_a_pinned_carrier(make: Make, numeric):
    c = make(numeric, 2)
    with c._pin(OPERATION):
        before = state(c)
        expect_raises(RuntimeError, f"{RELEASE}#5", c.release, naming=(OPERATION,))
        expect(state(c) == before, f"{RELEASE}#5", "a refused release changed the carrier")
    c.release()
    expect(c.is_released, f"{RELEASE}#1", "release after the pin ended left it live")


# -- ownership and mutability ------------------------------------------------------------


@pytest.mark.spec(f"{MUTABLE}/own-and-relinquish-a-carrier", f"{MUTABLE}#1", f"{MUTABLE}#2")
@pytest.mark.spec(f"{MUTABLE}#3", f"{MUTABLE}#4", f"{OWNER_PATH}#4")
def test_own_and_relinquish_a_carrier(make: Make, numeric):
    for owner, owned in (
        (sw.Generic(numeric, 1), make(numeric, 2)),
        (make(numeric, 1), make(numeric, 2)),
    ):
        owner.take_ownership(owned)
        expect(owned.owner is owner, f"{MUTABLE}#3", f"owner reported {owned.owner!r}")
        expect(not owned.is_mutable(), f"{MUTABLE}#1", "an owned carrier is publicly mutable")
        before = state(owned)
        expect_raises(RuntimeError, f"{MUTABLE}#2", partial(owned.write, 0, sample(numeric, 0)))
        expect_raises(RuntimeError, f"{OWNER_PATH}#4", owned.release)
        expect(state(owned) == before, f"{MUTABLE}#2", "a refused write changed the carrier")
        owner.relinquish(owned)
        expect(
            owned.owner is None and owned.is_mutable(),
            f"{MUTABLE}#4",
            "relinquishing left the carrier owned or immutable",
        )
        expect_raises(ValueError, f"{MUTABLE}#4", partial(owner.relinquish, owned))


@pytest.mark.spec(f"{MUTABLE}/refuse-an-invalid-ownership-transfer", f"{MUTABLE}#3", f"{MUTABLE}#6")
def test_refuse_an_invalid_ownership_transfer(make: Make, numeric):
    a, b, c = make(numeric, 1), make(numeric, 1), make(numeric, 1)
    expect_raises(ValueError, f"{MUTABLE}#3", lambda: a.take_ownership(a))
    a.take_ownership(b)
    expect_raises(RuntimeError, f"{MUTABLE}#3", lambda: c.take_ownership(b))
    expect_raises(ValueError, f"{MUTABLE}#6", lambda: b.take_ownership(a))
    dead = make(numeric, 1)
    dead.release()
    expect_raises(RuntimeError, f"{MUTABLE}#3", lambda: a.take_ownership(dead))
    expect(
        b.owner is a and a.owner is None and c.owner is None and dead.owner is None,
        f"{MUTABLE}#3",
        "a refused ownership transfer changed an owner",
    )


# -- new_like ------------------------------------------------------------------------------


@pytest.mark.spec(f"{LIKE}/create-a-like-carrier-from-a-released-carrier", f"{LIKE}#1")
def test_create_a_like_carrier_from_a_released_carrier(make: Make, dtypes):
    for dtype in dtypes:
        c = make(dtype, 2)
        for released in (False, True):
            if released:
                c.release()
            like = c.new_like()
            expect(
                type(like) is type(c)
                and like.dtype == dtype
                and like.slots == 0
                and like.is_mutable()
                and like.owner is None
                and not like.is_released
                and like is not c,
                f"{LIKE}#1",
                f"new_like gave {type(like).__name__}({like.dtype}) with {like.slots} slots",
            )


# -- ranges --------------------------------------------------------------------------------


@pytest.mark.spec(f"{RANGES}/write-and-read-a-range", f"{RANGES}#1", f"{RANGES}#8")
def test_write_and_read_a_range(make: Make, dtypes):
    for dtype in dtypes:
        c = make(dtype, 6)
        values = [sample(dtype, k) for k in range(3)]
        c.write_range(1, values)
        expected = [zero(dtype), *values, zero(dtype), zero(dtype)]
        got = c.read_range(0, 6)
        expect(got == expected, f"{RANGES}#1", f"read_range(0, 6) {got}, expected {expected}")
        expect(c.version == 1, f"{RANGES}#8", f"write_range took version 0 to {c.version}")
        c.write_range(6, [])
        expect(c.version == 2, f"{RANGES}#8", "an empty write_range was not counted once")


@pytest.mark.spec(f"{RANGES}/copy-through-numpy-buffers", f"{RANGES}#2", f"{RANGES}#4")
def test_copy_through_numpy_buffers(make: Make, dtypes):
    np = pytest.importorskip("numpy")
    for dtype in dtypes:
        code = {sw.Float32: np.float32, sw.Int32: np.int32, sw.Bool: np.bool_}[dtype]
        source = np.array([sample(dtype, k) for k in range(4)], dtype=code)
        c = make(dtype, 4)
        c.write_range(0, source)
        out = np.zeros(4, dtype=code)
        c.read_range(0, 4, out=out)
        expect(out.tolist() == source.tolist(), f"{RANGES}#2", f"out holds {out.tolist()}")
        source[:] = source[::-1]
        expect(c.tolist() == out.tolist(), f"{RANGES}#4", "the carrier kept the source buffer")


@pytest.mark.spec(f"{RANGES}/refuse-a-range-out-of-bounds", f"{RANGES}#5")
def test_refuse_a_range_out_of_bounds(make: Make, numeric):
    c = make(numeric, 6)
    before = state(c)
    values = [sample(numeric, k) for k in range(3)]
    expect_raises(IndexError, f"{RANGES}#5", lambda: c.read_range(4, 3), naming=("6",))
    expect_raises(IndexError, f"{RANGES}#5", lambda: c.write_range(4, values), naming=("6",))
    expect_raises(ValueError, f"{RANGES}#5", lambda: c.read_range(0, -1))
    expect(state(c) == before, f"{RANGES}#7", "a refused range call changed the carrier")


@pytest.mark.spec(f"{RANGES}/refuse-values-without-changing-a-slot", f"{RANGES}#7")
def test_refuse_values_without_changing_a_slot(make: Make, dtypes):
    for dtype in dtypes:
        c = make(dtype, 3)
        before = state(c)
        bad = {sw.Int32: 1.5, sw.Float32: "x", sw.Bool: 2}[dtype]
        values = [sample(dtype, 0), sample(dtype, 1), bad]
        expect_raises((TypeError, ValueError), f"{RANGES}#7", partial(c.write_range, 0, values))
        expect(state(c) == before, f"{RANGES}#7", f"a refused write_range left {c.tolist()}")


@pytest.mark.spec(f"{RANGES}#1", f"{RANGES}#8")
@KIT_SETTINGS
@given(data=st.data())
def test_range_writes_read_back_as_a_list_would(make: Make, numeric, data):
    """Any sequence of range writes: the slots read as the same writes on a list read, and
    each write counts exactly once."""
    n = data.draw(st.integers(0, 12), label="slots")
    c, model = make(numeric, n), [zero(numeric)] * n
    for k in range(data.draw(st.integers(1, 5), label="writes")):
        first = data.draw(st.integers(0, n), label="first")
        count = data.draw(st.integers(0, n - first), label="count")
        values = [sample(numeric, k + j) for j in range(count)]
        c.write_range(first, values)
        model[first : first + count] = values
        expect(c.version == k + 1, f"{RANGES}#8", f"{k + 1} writes, version {c.version}")
        got = c.read_range(first, count)
        expect(got == values, f"{RANGES}#1", f"wrote {values} at {first}, read {got}")
    expect(c.tolist() == model, f"{RANGES}#1", f"slots {c.tolist()}, expected {model}")


# -- pins ----------------------------------------------------------------------------------


@pytest.mark.spec(f"{PIN}/refuse-mutation-of-a-pinned-carrier", f"{PIN}#1", f"{PIN}#2")
def test_refuse_mutation_of_a_pinned_carrier(make: Make, numeric):
    c = make(numeric, values=[sample(numeric, 0), sample(numeric, 1)])
    owner = sw.Generic(numeric, 1)
    with c._pin(OPERATION):
        expect(c.pinned_by == OPERATION, f"{PIN}#2", f"pinned_by is {c.pinned_by!r}")
        expect(not c.is_mutable(), f"{PIN}#2", "a pinned carrier is publicly mutable")
        before = state(c)
        for call in (
            lambda: c.write(0, sample(numeric, 2)),
            lambda: c.write_range(0, [sample(numeric, 2)]),
            c.release,
            lambda: owner.take_ownership(c),
        ):
            expect_raises(RuntimeError, f"{PIN}#2", call, naming=(OPERATION,))
        expect(state(c) == before, f"{PIN}#2", "a refused call changed the pinned carrier")
    expect(c.pinned_by is None and c.is_mutable(), f"{PIN}#5", "the pin did not end")


@pytest.mark.spec(f"{PIN}/write-through-the-lease", f"{PIN}#4", f"{PIN}#6")
def test_write_through_the_lease(make: Make, numeric):
    c = make(numeric, 3)
    values = [sample(numeric, 0), sample(numeric, 1)]
    with c._pin(OPERATION) as lease:
        lease.write_range(1, values)
        expect(c.version == 0, f"{PIN}#6", f"a lease write changed the version to {c.version}")
    expect(
        c.tolist() == [zero(numeric), *values] and c.version == 1,
        f"{PIN}#6",
        f"after the pin: {c.tolist()} at version {c.version}",
    )
    c.write(0, values[0])
    expect(c.version == 2, f"{PIN}#5", "a public write after the pin was not counted")


@pytest.mark.spec(f"{PIN}/end-a-pin-exactly-once", f"{PIN}#5")
def test_end_a_pin_exactly_once(make: Make, numeric):
    c = make(numeric, 1)
    with c._pin(OPERATION) as lease:
        pass
    lease.end()
    expect(c.pinned_by is None and c.version == 0, f"{PIN}#5", f"pinned_by {c.pinned_by!r}")
    expect_raises(
        RuntimeError,
        f"{PIN}#5",
        lambda: lease.write_range(0, [sample(numeric, 0)]),
        naming=(OPERATION,),
    )
    c.release()
    expect_raises(RuntimeError, f"{PIN}#3", lambda: c._pin(OPERATION))
