"""spec/carrier-composition's Evictable for any generated layout and offset: Tensors over
an Evictable read and receive the values a CPU oracle holds, resident and evicted."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import strideweave as sw
from strideweave.kit import strategies as S

SPEC = "carrier-composition"
ACCESS = f"{SPEC}/evictable-reads-and-writes-in-either-residency"
MOVES = f"{SPEC}/evictable-moves-its-values-between-tiers-without-a-public-move"
PUBLIC = f"{SPEC}/a-public-move-from-an-evictable-moves-its-current-values"

TIER_PAIRS = st.sampled_from(
    [(sw.CPU, sw.FileBacked), (sw.CPU, sw.Generic), (sw.Generic, sw.FileBacked)]
)


def over_evictable(oracle: sw.Tensor, pair: tuple[type, type], evicted: bool) -> sw.Tensor:
    """The oracle's view (layout and offset) over an Evictable holding its carrier's values."""
    fast_class, slow_class = pair
    carrier = oracle.carrier
    e = sw.Evictable(fast_class(carrier.dtype, values=carrier.tolist()), slow_class(carrier.dtype))
    if evicted:
        e.evict()
    return sw.Tensor(e, oracle.layout, oracle.offset)


@pytest.mark.spec(f"{ACCESS}#1", f"{MOVES}#5")
@given(S.tensors(carrier_classes=st.just(sw.CPU)), TIER_PAIRS, st.booleans())
def test_tensor_reads_equal_the_oracle_in_both_residencies(oracle, pair, evicted):
    """tolist() of any view over an Evictable equals the CPU oracle's, before and after a
    transition, and the transition changes no version."""
    t = over_evictable(oracle, pair, evicted)
    expected = oracle.tolist()
    assert t.tolist() == expected
    version = t.carrier.version
    if evicted:
        t.carrier.promote()
    else:
        t.carrier.evict()
    assert t.tolist() == expected
    assert t.carrier.version == version


@pytest.mark.spec(f"{ACCESS}#1")
@given(S.tensors(carrier_classes=st.just(sw.CPU)), TIER_PAIRS, st.booleans(), st.data())
def test_range_writes_equal_the_oracle_in_both_residencies(oracle, pair, evicted, data):
    """A range written into an Evictable and into the oracle's carrier leaves every view
    reading the same values, with one version increment."""
    t = over_evictable(oracle, pair, evicted)
    first, count = data.draw(S.slot_ranges(oracle.carrier.slots))
    values = data.draw(S.slot_values(oracle.dtype, count))
    version = t.carrier.version
    t.carrier.write_range(first, values)
    oracle.carrier.write_range(first, values)
    assert t.carrier.version == version + 1
    assert t.tolist() == oracle.tolist()
    assert t.carrier.tolist() == oracle.carrier.tolist()


@pytest.mark.spec(f"{PUBLIC}#1", f"{PUBLIC}#2")
@given(S.tensors(carrier_classes=st.just(sw.CPU)), TIER_PAIRS, st.booleans())
def test_moves_into_and_out_of_an_evictable_equal_the_oracle(oracle, pair, evicted):
    """Moving any view into an empty Evictable, then out of it (resident or evicted), keeps
    the view's logical values."""
    fast_class, slow_class = pair
    expected = oracle.tolist()
    e = sw.Evictable(fast_class(oracle.dtype), slow_class(oracle.dtype))
    landed = sw.move(oracle, e)
    assert landed.carrier is e and landed.tolist() == expected
    if evicted:
        e.evict()
    assert landed.tolist() == expected
    back = sw.move(landed, sw.CPU(oracle.dtype))
    assert back.tolist() == expected
    assert e.is_released
