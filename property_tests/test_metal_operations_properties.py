"""Properties of the math operations on Metal: for any layout (nested, holes, stride 0,
extents 0 and 1) at any offset, a unary and a binary operation on Metal tensors give a
fresh Metal result holding what the same operation gives on CPU copies of the same slots
(the device gathers operands with the strided kernel; the host reads them through the
span walker)."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import strideweave as sw
from strideweave.kit import strategies as S

FRESH = "autograd/operation-results-are-fresh-canonical-cpu-tensors"


@st.composite
def twin_operands(draw: st.DrawFn):
    """Two operands of one shape (each its own layout and offset), each over a Metal
    carrier and over a CPU carrier holding the same slots."""
    dtype = draw(st.sampled_from([sw.Float32, sw.Int32]))
    first = draw(S.ANY_LAYOUTS)
    second = draw(S.layouts_of_shape(first.shape))
    twins = []
    for layout in (first, second):
        offset = draw(S.OFFSETS)
        values = draw(S.slot_values(dtype, offset + layout.cosize + draw(S.EXTRA_SLOTS)))
        twins.append(
            tuple(
                sw.Tensor(cls(dtype, values=values), layout, offset) for cls in (sw.Metal, sw.CPU)
            )
        )
    return twins


def is_fresh_metal(t: sw.Tensor) -> bool:
    return type(t.carrier) is sw.Metal and t.offset == 0 and t.layout == sw.Layout(t.shape)


@pytest.mark.spec(f"{FRESH}/compute-on-metal-without-synchronizing", f"{FRESH}#1", f"{FRESH}#3")
@settings(max_examples=60, deadline=None)
@given(twin_operands(), st.integers(-3, 3))
def test_metal_operations_equal_cpu(twins, constant):
    (a, a_cpu), (b, b_cpu) = twins
    cases = [
        (-a, -a_cpu),
        (a * b, a_cpu * b_cpu),
        (a - b, a_cpu - b_cpu),
        (constant - a, constant - a_cpu),
        (a.sum(), a_cpu.sum()),
    ]
    if b.shape != ():
        cases.append((b.sum(modes=(0,)), b_cpu.sum(modes=(0,))))
    for metal, cpu in cases:
        assert is_fresh_metal(metal)
        assert type(cpu.carrier) is sw.CPU
        assert metal.shape == cpu.shape
        assert metal.tolist() == cpu.tolist()
