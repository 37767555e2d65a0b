"""interop-movement: the exported buffer is the layout's leaf modes over the tensor's window."""

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.consumers import CONSUMERS, JAX_STRIDES_REFUSED
from conformance.interop_movement.refusals import live_exports

REQ = "interop-movement/the-exported-buffer-describes-the-layouts-flattened-leaf-modes"
HOOK = "interop-movement/a-carrier-opts-into-dlpack-through-dlpack-info"


def over(values, layout, offset=0, dtype=sw.Int32) -> sw.Tensor:
    return sw.Tensor(sw.CPU(dtype, values=values), layout, offset)


@pytest.mark.isolated
@pytest.mark.spec(f"{REQ}/flatten-a-hierarchical-layout", f"{REQ}#1", f"{REQ}#2")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_flatten_a_hierarchical_layout(max_version):
    """(2,(3,4)):(1,(2,6)) exports as three dimensions with the leaf strides in elements."""
    t = over(list(range(24)), sw.Layout((2, (3, 4)), (1, (2, 6))))
    info = R.inspect(t.__dlpack__(max_version=max_version))
    assert (info.ndim, info.shape, info.strides) == (3, (2, 3, 4), (1, 2, 6))
    array = np.from_dlpack(t)
    assert array.shape == (2, 3, 4) and array.strides == (4, 8, 24)
    assert array.tolist() == t.tolist()
    assert all(array[i, j, k] == i + 2 * j + 6 * k for i, j, k in np.ndindex(2, 3, 4))
    x = torch.from_dlpack(t)
    assert (tuple(x.shape), x.stride()) == ((2, 3, 4), (1, 2, 6))
    assert x.tolist() == t.tolist()
    # A compact layout at an aligned offset: JAX aliases it too, whatever the mode order.
    j = jnp.from_dlpack(t)
    assert j.shape == (2, 3, 4) and j.tolist() == t.tolist()
    assert j.unsafe_buffer_pointer() == t.carrier.pointer()


@pytest.mark.isolated
@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2", f"{REQ}#3")
@pytest.mark.parametrize(
    "layout",
    [
        sw.Layout((4, 4)),
        sw.Layout((4, 4), (4, 1)),
        sw.Layout((2, (3, 4)), (1, (2, 6))),
        sw.Layout(((2, 2), 6), ((12, 6), 1)),
        sw.Layout((3, 1, 2), (1, 99, 3)),
    ],
)
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32])
def test_jax_aliases_a_compact_window_at_its_alignment(layout, dtype):
    """JAX imports any permutation of a compact layout without copying when the window
    starts 64-byte aligned (offset 16 of a CPU carrier); unaligned, it copies.

    Finding (jax 0.10.2, CPU): jnp.from_dlpack aliases only compact strides whose data +
    byte_offset is a multiple of 64 bytes; otherwise it copies and releases the capsule
    at once (copy=False then raises ValueError naming the alignment).
    """
    jax = CONSUMERS["jax"]
    values = list(range(16 + layout.cosize + 1))
    carrier = sw.CPU(dtype, values=[float(v) for v in values] if dtype == sw.Float32 else values)
    aligned = sw.Tensor(carrier, layout, jax.alignment // 4)
    array = jax.from_dlpack(aligned)
    assert array.dtype == jax.dtypes[dtype]
    assert array.shape == tuple(e for e, _ in layout.leaf_modes)
    assert array.tolist() == aligned.tolist()
    assert jax.address(array) == carrier.pointer() + jax.alignment
    unaligned = sw.Tensor(carrier, layout, 1)
    live = live_exports()
    copied = jax.from_dlpack(unaligned)
    assert copied.tolist() == unaligned.tolist()
    assert jax.address(copied) != carrier.pointer() + 4
    assert live_exports() == live  # the copy released the capsule
    with pytest.raises(ValueError, match="aligned to 64 bytes"):
        jax.from_dlpack(unaligned, copy=False)
    assert carrier.version == 0


@pytest.mark.isolated
@pytest.mark.spec(f"{REQ}#2")
@pytest.mark.parametrize(
    "layout",
    [sw.Layout((2, 3), (1, 4)), sw.Layout((2, 3), (1, 0)), sw.Layout(8, 2)],
    ids=["gapped", "broadcast", "stride-2"],
)
def test_jax_refuses_strides_that_are_not_compact(layout):
    """The export describes gapped and stride-0 modes as they are; JAX refuses them (it
    neither copies nor reinterprets them), and the refused capsule is freed.

    Finding (jax 0.10.2): JaxRuntimeError, a RuntimeError, "UNIMPLEMENTED: Only DLPack
    tensors with trivial (compact) striding are supported". jnp.asarray(t) reads such a
    tensor through __array__ instead, as a copy.
    """
    t = sw.Tensor(sw.CPU(sw.Float32, values=[float(i) for i in range(24)]), layout)
    info = R.inspect(t.__dlpack__())
    assert info.strides == tuple(d for _, d in layout.leaf_modes)
    live = live_exports()
    with pytest.raises(RuntimeError, match=JAX_STRIDES_REFUSED) as caught:
        jnp.from_dlpack(t)
    del caught  # its traceback holds JAX's frame, which holds the capsule
    assert live_exports() == live
    assert t.carrier.version == 0
    copy = jnp.asarray(t)
    assert copy.tolist() == t.tolist()
    assert copy.unsafe_buffer_pointer() != t.carrier.pointer()


@pytest.mark.spec(f"{REQ}/flatten-a-hierarchical-layout", f"{REQ}#1")
def test_flatten_nested_modes_with_unit_and_empty_subtrees():
    """Unit extents stay dimensions; an empty tuple mode contributes no dimension."""
    layout = sw.Layout(((2, 1), (), (3,)), ((3, 7), (), (1,)))
    t = over(list(range(6)), layout)
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert (info.ndim, info.shape, info.strides) == (3, (2, 1, 3), (3, 7, 1))
    assert np.from_dlpack(t).tolist() == t.tolist() == [[[0, 1, 2]], [[3, 4, 5]]]


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2")
def test_gapped_layout_keeps_its_holes():
    """A (2,3):(1,4) layout exports strides (1, 4) and the consumer skips the holes."""
    t = over([10 * i for i in range(10)], sw.Layout((2, 3), (1, 4)))
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert (info.shape, info.strides) == ((2, 3), (1, 4))
    assert np.from_dlpack(t).tolist() == t.tolist() == [[0, 40, 80], [10, 50, 90]]
    assert torch.from_dlpack(t).tolist() == t.tolist()


@pytest.mark.spec(f"{REQ}/preserve-broadcast-strides", f"{REQ}#2")
def test_preserve_broadcast_strides():
    """A stride-zero mode exports stride 0 and every coordinate on it reads one element."""
    t = sw.tensor([[1.0], [2.0]]).broadcast_to((2, 3))
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert (info.shape, info.strides) == ((2, 3), (1, 0))
    array = np.from_dlpack(t)
    x = torch.from_dlpack(t)
    assert array.strides == (4, 0) and x.stride() == (1, 0)
    t.carrier.write(1, 5.5)
    assert array.tolist() == x.tolist() == t.tolist() == [[1.0, 1.0, 1.0], [5.5, 5.5, 5.5]]


@pytest.mark.spec(f"{REQ}/preserve-broadcast-strides", f"{REQ}#2")
def test_preserve_a_nested_stride_zero_mode():
    """Stride zero inside a nested mode is exported unchanged, not materialized."""
    t = over(list(range(4)), sw.Layout((2, (3, 2)), (1, (0, 2))))
    info = R.inspect(t.__dlpack__())
    assert (info.shape, info.strides) == ((2, 3, 2), (1, 0, 2))
    array = np.from_dlpack(t)
    assert array.strides == (4, 0, 8)
    assert array.tolist() == t.tolist()
    assert all(array[1, j, 1] == 3 for j in range(3))


@pytest.mark.spec(f"{REQ}/address-the-tensors-window", f"{REQ}#3")
@pytest.mark.parametrize("dtype", [sw.Float32, sw.Int32])
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_address_the_tensors_window(dtype, max_version):
    """data is the carrier pointer, byte_offset is offset * 4, element 0 is slot offset."""
    values = [float(i) for i in range(16)] if dtype == sw.Float32 else list(range(16))
    t = over(values, sw.Layout((3, 2), (2, 5)), offset=3, dtype=dtype)
    info = R.inspect(t.__dlpack__(max_version=max_version))
    assert info.data == t.carrier.pointer() == t.carrier.dlpack_info()["pointer"]
    assert info.byte_offset == 3 * 4
    array = np.from_dlpack(t)
    assert array.__array_interface__["data"][0] == t.carrier.pointer() + 12
    assert array[0, 0] == t.tolist()[0][0] == 3
    assert array.tolist() == t.tolist()


@pytest.mark.spec(f"{REQ}/address-the-tensors-window", f"{REQ}#3")
@pytest.mark.parametrize("offset", [1, 5, 7])
def test_torch_reads_the_window_of_a_strided_export(offset):
    """torch 2.13 honours byte_offset: storage_offset is byte_offset / itemsize.

    Finding: pytorch#168177 reported released versions ignoring byte_offset. torch 2.13.0's
    fromDLPack passes byte_offset / itemsize as the storage offset whenever the producer
    supplies strides, so x.data_ptr() == pointer + 4 * offset and values are the window's.
    (With NULL strides it instead demands byte_offset == 0; see the rank-0 test below.)
    """
    t = over(list(range(20)), sw.Layout((2, 3), (1, 4)), offset)
    x = torch.from_dlpack(t)
    assert x.storage_offset() == offset
    assert x.data_ptr() == t.carrier.pointer() + 4 * offset
    assert x.tolist() == t.tolist()
    assert x[0, 0].item() == offset


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#3")
@pytest.mark.parametrize("offset", [0, 5])
def test_export_a_rank_0_tensor(offset):
    """Layout(()) exports ndim 0 and the one element at the offset."""
    t = over(list(range(8)), sw.Layout(()), offset)
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert (info.ndim, info.shape, info.byte_offset) == (0, (), 4 * offset)
    assert info.strides == ()  # the arrays are never NULL, even for ndim 0
    array = np.from_dlpack(t)
    assert array.shape == () and array.item() == t.tolist() == offset


@pytest.mark.spec(f"{REQ}/address-the-tensors-window")
def test_torch_reads_the_window_of_a_rank_0_export():
    """torch reads the element at a rank-0 tensor's offset.

    torch 2.13 rejects a non-zero byte_offset when strides is NULL ('Expected zero
    byte_offset'), which DLPack 1.0 allows for ndim 0; StrideWeave therefore always
    exports non-null shape and stride arrays, so this consumer reads the window too.
    """
    t = over(list(range(8)), sw.Layout(()), 5)
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert info.strides == () and info.byte_offset == 20
    assert torch.from_dlpack(t).item() == 5


@pytest.mark.spec(f"{REQ}#1", f"{HOOK}#6")
@pytest.mark.parametrize(
    "layout", [sw.Layout(0), sw.Layout((3, 0), (1, 3)), sw.Layout((0, (2, 4)), (5, (1, 2)))]
)
def test_export_a_zero_size_tensor(layout):
    """A layout with an extent 0 exports its shape; a zero-size view of released storage too."""
    t = over(list(range(4)), layout, offset=2)
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    expected = tuple(e for e, _ in layout.leaf_modes)
    assert info.shape == expected
    assert info.strides == tuple(d for _, d in layout.leaf_modes)
    assert np.from_dlpack(t).shape == expected
    assert tuple(torch.from_dlpack(t).shape) == expected
    t.carrier.release()
    released = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert (released.data, released.shape) == (0, expected)


@pytest.mark.spec(f"{REQ}#4")
def test_each_managed_tensor_owns_its_shape_and_strides():
    """Two exports point at distinct arrays; deleting one leaves the other's intact."""
    t = over(list(range(24)), sw.Layout((2, (3, 4)), (1, (2, 6))))
    first = R.consume(t.__dlpack__(max_version=(1, 0)))
    second = R.consume(t.__dlpack__())
    addresses = {first.info.shape_address, first.info.strides_address}
    addresses |= {second.info.shape_address, second.info.strides_address}
    assert len(addresses) == 4 and 0 not in addresses
    first.delete()
    again = R.decode(second.address, second.name)
    assert (again.shape, again.strides) == ((2, 3, 4), (1, 2, 6))
    second.delete()
