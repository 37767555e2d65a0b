"""The real DLPack consumers the suite imports through, and what each copies and shares.

Each record states, for the pinned version the ``test`` extra installs, what the
consumer does with a StrideWeave export; the DLPack tests parametrise over
``CONSUMERS`` and check every field (docs/dlpack-export.md, "What the consumers copy and
what they share", keeps the prose):

* NumPy 2.x ``np.from_dlpack``: asks for a versioned capsule, aliases any strides
  (gapped, stride 0) at any alignment, honours READ_ONLY (a read-only array), and its
  arrays write through to the carrier.
* PyTorch 2.13 ``torch.from_dlpack``: asks for a versioned capsule, aliases any strides
  at any alignment, ignores READ_ONLY (it has no read-only tensors), and its tensors
  write through to the carrier.
* JAX 0.10 ``jax.numpy.from_dlpack`` (CPU): calls ``__dlpack_device__()`` then
  ``__dlpack__(stream=None)``, so it takes the legacy capsule and never sees READ_ONLY;
  its arrays are immutable (item assignment is a TypeError), yet an aliased array shows
  later writes through the carrier. It aliases only "compact" strides, a permutation of
  a compact layout (column-major, row-major, hierarchical compact), and only when
  ``data + byte_offset`` is 64-byte aligned (CPU carriers' buffers are; offset * 4 must
  be a multiple of 64); an unaligned compact window is copied, and the capsule is
  released at once. Gapped and stride-0 layouts are refused with JaxRuntimeError (a
  RuntimeError: "Only DLPack tensors with trivial (compact) striding are supported"),
  not copied. ``copy=True`` still aliases an aligned window (0.10.2);
  ``copy=False`` on an unaligned one raises ValueError.

JAX starts its threads on first use, and warns that a process forked after that may
deadlock: every test that imports through JAX is ``@pytest.mark.isolated``, so that
only forked children ever start them and the suite's other isolated tests fork from a
parent without them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
import torch

import strideweave as sw


@dataclasses.dataclass(frozen=True)
class Consumer:
    """One consumer's import function and the facts the suite checks about it."""

    name: str
    from_dlpack: Callable[..., Any]
    address: Callable[[Any], int]  # the address of the imported array's first element
    dtypes: dict[sw.DType, Any]  # the consumer's dtype for each exportable dtype
    writable: bool  # item assignment writes through to the carrier
    any_strides: bool  # imports gapped and stride-0 layouts (else refuses them)
    alignment: int  # data + byte_offset alignment it aliases (1: any); copies otherwise
    honours_read_only: bool  # a READ_ONLY export gives a read-only array


CONSUMERS = {
    "numpy": Consumer(
        name="numpy",
        from_dlpack=np.from_dlpack,
        address=lambda a: a.__array_interface__["data"][0],
        dtypes={sw.Float32: np.float32, sw.Int32: np.int32},
        writable=True,
        any_strides=True,
        alignment=1,
        honours_read_only=True,
    ),
    "torch": Consumer(
        name="torch",
        from_dlpack=torch.from_dlpack,
        address=lambda x: x.data_ptr(),
        dtypes={sw.Float32: torch.float32, sw.Int32: torch.int32},
        writable=True,
        any_strides=True,
        alignment=1,
        honours_read_only=False,
    ),
    "jax": Consumer(
        name="jax",
        from_dlpack=jnp.from_dlpack,
        address=lambda a: a.unsafe_buffer_pointer(),
        dtypes={sw.Float32: jnp.float32, sw.Int32: jnp.int32},
        writable=False,
        any_strides=False,
        alignment=64,
        honours_read_only=False,
    ),
}

# JAX's refusal of a layout that is not a permutation of a compact one.
JAX_STRIDES_REFUSED = "trivial \\(compact\\) striding"


def is_compact_permutation(leaf_modes: list[tuple[int, int]]) -> bool:
    """Whether the leaf modes, ordered by stride, are a compact layout: the strides of the
    modes of extent above one, sorted, are 1, e0, e0 * e1, ... (modes of extent 0 or 1
    have no stride that matters, and a layout with an extent 0 has no element)."""
    if any(extent == 0 for extent, _ in leaf_modes):
        return True
    expected = 1
    for stride, extent in sorted((d, e) for e, d in leaf_modes if e > 1):
        if stride != expected:
            return False
        expected *= extent
    return True
