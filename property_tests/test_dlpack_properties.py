"""interop-movement: for any layout, offset and exportable dtype, consumers see tolist()."""

import numpy as np
import pytest
import torch
from hypothesis import event, given
from hypothesis import strategies as st

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.consumers import (
    CONSUMERS,
    JAX_STRIDES_REFUSED,
    is_compact_permutation,
)
from strideweave.kit import strategies as S

LEAVES = "interop-movement/the-exported-buffer-describes-the-layouts-flattened-leaf-modes"
DTYPES = "interop-movement/only-float32-and-int32-logical-dtypes-are-exportable"
FLAGS = "interop-movement/versioned-exports-advertise-mutability-as-an-advisory-read-only-flag"
ALIAS = "interop-movement/export-is-zero-copy-same-device-and-stream-agnostic"


def leaf_extents(t: sw.Tensor) -> tuple[int, ...]:
    return tuple(e for e, _ in t.layout.leaf_modes)


def assert_reads_like_tolist(array, t: sw.Tensor) -> None:
    """The consumer's array has the leaf extents and, when non-empty, tolist()'s values."""
    assert tuple(array.shape) == leaf_extents(t)
    if t.layout.size > 0:
        assert array.tolist() == t.tolist()


@pytest.mark.spec(f"{LEAVES}#1", f"{LEAVES}#2", f"{LEAVES}#3", f"{DTYPES}#1")
@given(S.cpu_tensors(), st.sampled_from([None, (1, 0)]))
def test_the_managed_tensor_is_the_leaf_modes_over_the_window(t, max_version):
    """shape/strides are the leaf extents/strides, data the pointer, byte_offset offset * 4."""
    info = R.inspect(t.__dlpack__(max_version=max_version))
    modes = t.layout.leaf_modes
    assert info.ndim == len(modes)
    assert info.shape == tuple(e for e, _ in modes)
    assert info.strides == tuple(d for _, d in modes) or (info.ndim == 0 and info.strides is None)
    assert info.data == t.carrier.pointer()
    assert info.byte_offset == t.offset * 4
    assert info.device == (1, 0)
    code = R.CODE_FLOAT if t.dtype == sw.Float32 else R.CODE_INT
    assert (info.code, info.bits, info.lanes) == (code, 32, 1)


@pytest.mark.spec(f"{LEAVES}#1", f"{LEAVES}#3", f"{ALIAS}#1")
@given(S.cpu_tensors())
def test_numpy_reads_the_logical_values(t):
    """np.from_dlpack(t) equals t.tolist() element for element and aliases the window."""
    array = np.from_dlpack(t)
    assert_reads_like_tolist(array, t)
    if t.layout.size > 0:
        assert array.__array_interface__["data"][0] == t.carrier.pointer() + 4 * t.offset


@pytest.mark.spec(f"{LEAVES}#1", f"{LEAVES}#3", f"{ALIAS}#1")
@given(S.cpu_tensors())
def test_torch_reads_the_logical_values(t):
    """torch.from_dlpack(t) equals t.tolist() with storage_offset equal to the tensor's offset."""
    x = torch.from_dlpack(t)
    assert x.stride() == tuple(d for _, d in t.layout.leaf_modes)
    assert_reads_like_tolist(x, t)
    if t.layout.size > 0:
        assert x.storage_offset() == t.offset
        assert x.data_ptr() == t.carrier.pointer() + 4 * t.offset


@pytest.mark.isolated
@pytest.mark.spec(f"{LEAVES}#1", f"{LEAVES}#2", f"{LEAVES}#3", f"{ALIAS}#1")
@given(S.cpu_tensors())
def test_jax_reads_compact_layouts_and_refuses_the_rest(t):
    """jax.numpy.from_dlpack(t) reads tolist()'s values from any permutation of a compact
    layout, aliasing the window exactly when it starts 64-byte aligned (a copy
    otherwise), and refuses every other layout with RuntimeError: the export's strides
    are the layout's, never made compact for a consumer."""
    jax = CONSUMERS["jax"]
    compact = is_compact_permutation(t.layout.leaf_modes)
    event(f"compact: {compact}, aligned: {4 * t.offset % jax.alignment == 0}")
    if not compact:
        with pytest.raises(RuntimeError, match=JAX_STRIDES_REFUSED):
            jax.from_dlpack(t)
        return
    array = jax.from_dlpack(t)
    assert array.dtype == jax.dtypes[t.dtype]
    assert_reads_like_tolist(array, t)
    if t.layout.size > 0:
        aliased = jax.address(array) == t.carrier.pointer() + 4 * t.offset
        assert aliased == (4 * t.offset % jax.alignment == 0)


@pytest.mark.spec(f"{FLAGS}#1", f"{FLAGS}#2")
@given(S.cpu_tensors(mutable=st.booleans()))
def test_the_flags_word_follows_public_mutability(t):
    """READ_ONLY is set exactly when the tensor is not publicly mutable; NumPy agrees."""
    info = R.inspect(t.__dlpack__(max_version=(1, 0)))
    assert info.flags == (0 if t.is_mutable() else R.READ_ONLY)
    assert np.from_dlpack(t).flags.writeable == t.is_mutable()
