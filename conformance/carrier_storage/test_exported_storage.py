"""carrier-storage: memory an outstanding DLPack export addresses never becomes another
allocation's memory, and a composite's part is never exported around its owner.

A stale view (an array whose carrier was released or moved from) is read or written here
only where the spec bounds the result: a small buffer keeps its bytes; a large one traps,
which is shown in a child process, never in the test process.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.interop_movement.refusals import live_exports, refused
from strideweave._core import _testing

RELEASE = "carrier-storage/release-relinquishes-storage-once"
HOOK = "carrier-storage/carriers-opt-into-dlpack-through-the-dlpack-info-hook"

# Float32 elements: the reproducer (16 MiB, an anonymous mapping) and a heap buffer.
LARGE = 4 << 20
SMALL = 16
SIZES = {"mapped": LARGE, "heap": SMALL}

# The ways a tensor's carrier lets go of its buffer while an export of it is outstanding.
LET_GO = {
    "release": "t.carrier.release()",
    "move-to-filebacked": "sw.move(t, sw.FileBacked(sw.Float32))",
    "move-to-cpu": "sw.move(t, sw.CPU(sw.Float32))",
}


def let_go(t: sw.Tensor, how: str) -> None:
    exec(LET_GO[how], {"sw": sw, "t": t})


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def permissions_at(address_: int) -> str | None:
    """The permissions ("rw-p", "---p") of the mapping holding an address, or None."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        span, permissions = line.split()[:2]
        first, end = (int(part, 16) for part in span.split("-"))
        if first <= address_ < end:
            return permissions
    return None


def label(c: sw.Carrier) -> str:
    """How messages name a carrier: "CPU carrier #7" (the start of its repr)."""
    return " ".join(repr(c).lstrip("<").split()[:3])


@pytest.mark.spec(f"{RELEASE}/release-exported-storage", f"{RELEASE}#7", f"{RELEASE}#8")
@pytest.mark.isolated
@pytest.mark.parametrize("how", sorted(LET_GO))
@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_fresh_tensor_never_takes_the_memory_of_a_stale_export(size, how):
    """After release or a move with an array outstanding, fresh tensors of the same size
    get other addresses; a small stale array keeps its values and writing it changes none
    of them, a large one is inaccessible."""
    n = SIZES[size]
    t = sw.full((n,), 2.0)
    stale = np.from_dlpack(t)
    at = address(stale)
    let_go(t, how)
    assert t.carrier.is_released
    fresh = [sw.zeros((n,)) for _ in range(4 if n == LARGE else 16)]
    views = [np.from_dlpack(f) for f in fresh]
    assert at not in {address(v) for v in views}
    if n == SMALL:
        assert stale.tolist() == [2.0] * n
        stale[5] = 1.0
        assert stale[5] == 1.0
    else:
        assert permissions_at(at) == "---p"
    assert not any(v.any() for v in views)


TRAP_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import strideweave as sw

    t = sw.full(({n},), 2.0)
    stale = np.from_dlpack(t)
    {let_go}
    fresh = np.from_dlpack(sw.zeros(({n},)))
    print("distinct", fresh.__array_interface__["data"][0] != stale.__array_interface__["data"][0],
          flush=True)
    {access}
    print("reached through the stale array:", fresh[5], flush=True)
    """
)


@pytest.mark.spec(f"{RELEASE}/release-exported-storage", f"{RELEASE}#8")
@pytest.mark.parametrize("access", ["value = float(stale[5])", "stale[5] = 1.0"])
@pytest.mark.parametrize("how", ["release", "move-to-filebacked"])
def test_a_large_stale_export_traps(how, access):
    """Reading or writing a retired mapping through the stale array kills the process
    with SIGSEGV (a child process: never this one) instead of reaching a fresh tensor."""
    script = TRAP_SCRIPT.format(n=LARGE, let_go=LET_GO[how], access=access)
    package_root = str(Path(sw.__file__).resolve().parent.parent)
    paths = [package_root, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    result = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "distinct True" in result.stdout, result.stderr
    assert "reached through the stale array" not in result.stdout
    # AddressSanitizer (tox -e sanitize) catches the SEGV itself and exits with status 1.
    if "AddressSanitizer: SEGV" in result.stderr:
        assert result.returncode == 1
    else:
        assert result.returncode == -signal.SIGSEGV, (result.returncode, result.stderr)


@pytest.mark.spec(f"{RELEASE}#8", f"{RELEASE}#9")
@pytest.mark.isolated
def test_the_last_export_unmaps_a_retired_buffer():
    """A retired mapping stays reserved while any export of it lives, and is unmapped,
    not cached, when the last one ends."""
    t = sw.zeros((LARGE,))
    gc.collect()
    retired, cached, exports = (
        _testing.retired_host_bytes(),
        _testing.host_cache_bytes(),
        live_exports(),
    )
    array = np.from_dlpack(t)
    tensor = torch.from_dlpack(t)
    at = address(array)
    t.carrier.release()
    assert _testing.retired_host_bytes() == retired + 4 * LARGE
    assert _testing.host_cache_bytes() == cached
    del array
    assert live_exports() == exports + 1
    assert _testing.retired_host_bytes() == retired + 4 * LARGE
    assert permissions_at(at) == "---p"
    del tensor
    assert live_exports() == exports
    assert _testing.retired_host_bytes() == retired
    assert _testing.host_cache_bytes() == cached
    assert permissions_at(at) != "---p"


@pytest.mark.spec(f"{RELEASE}#7")
@pytest.mark.isolated
def test_a_buffer_no_export_addresses_is_reused():
    """An export that ended before the release leaves the buffer to the cache, as usual."""
    if _testing.host_cache_budget() < 4 * LARGE:
        pytest.skip("the cache of freed mappings is smaller than the buffer")
    _testing.empty_host_cache()
    retired = _testing.retired_host_bytes()
    t = sw.zeros((LARGE,))
    at = address(np.from_dlpack(t))  # the array is dropped at once
    t.carrier.release()
    assert _testing.retired_host_bytes() == retired
    assert _testing.host_cache_bytes() == 4 * LARGE
    assert address(np.from_dlpack(sw.zeros((LARGE,)))) == at
    _testing.empty_host_cache()


def evictable() -> sw.Evictable:
    return sw.Evictable(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.FileBacked(sw.Float32))


@pytest.mark.spec(f"{HOOK}/refuse-to-export-a-part-of-a-composite", f"{HOOK}#8")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_refuse_to_export_a_tier_of_an_evictable(max_version):
    """A Tensor over an Evictable's fast tier is refused, naming the tier and the
    Evictable (a composite); nothing changes, and np.asarray copies instead of aliasing."""
    e = evictable()
    tier = e.fast
    t = sw.Tensor(tier, sw.Layout(3))
    with refused(BufferError, label(tier), f"owned by {label(e)}", carriers=[tier, e]):
        t.__dlpack__(max_version=max_version)
    with refused(BufferError, label(tier), label(e), carriers=[tier, e]):
        np.from_dlpack(t)
    assert tier.owner is e and e.fast is tier and not tier.is_released
    copied = np.asarray(t)
    assert copied.tolist() == [1.0, 2.0, 3.0]
    assert address(copied) != tier.pointer()


class Capturing(sw.CPU):
    """A CPU whose new_like keeps what it returns, so a caller can reach a tile."""

    made: ClassVar[list[sw.CPU]] = []

    def new_like(self):
        made = Capturing(self.dtype)
        Capturing.made.append(made)
        return made


@pytest.mark.spec(f"{HOOK}#8")
def test_refuse_to_export_a_tile_of_a_tiled_evictable():
    """A fast tile reached through its class's new_like is refused, naming the tile and
    the TiledEvictable; the tile keeps its values, version and owner."""
    Capturing.made.clear()
    te = sw.TiledEvictable(sw.Float32, 8, 4, fast_class=Capturing, values=list(range(8)))
    te.make_resident([1]).wait()
    (tile,) = [c for c in Capturing.made if c.owner is te]
    t = sw.Tensor(tile, sw.Layout(4))
    with refused(BufferError, label(tile), f"owned by {label(te)}", carriers=[tile, te]):
        t.__dlpack__(max_version=(1, 0))
    assert tile.owner is te and tile.tolist() == [4.0, 5.0, 6.0, 7.0]
    assert te.residency == ("evicted", "resident")


@pytest.mark.spec(f"{HOOK}#8")
def test_a_former_tier_exports_once_its_owner_is_gone():
    """The refusal follows ownership, not the class: once the Evictable is gone, its
    former tier is unowned and exports again."""
    e = evictable()
    tier = e.fast
    t = sw.Tensor(tier, sw.Layout(3))
    with refused(BufferError, "owned by", carriers=[tier]):
        t.__dlpack__()
    del e
    gc.collect()
    assert tier.owner is None
    assert np.from_dlpack(t).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.spec(f"{HOOK}#8")
def test_a_carrier_owned_by_a_plain_carrier_still_exports():
    """Only a composite's parts are refused: a CPU owned by another CPU exports read-only."""
    t = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    owner = sw.CPU(sw.Float32, 1)
    owner.take_ownership(t.carrier)
    array = np.from_dlpack(t)
    assert array.tolist() == [1.0, 2.0, 3.0] and not array.flags.writeable
    assert address(array) == t.carrier.pointer()
    assert t.carrier.owner is owner


class AllocatingHook(sw.CPU):
    """A CPU whose dlpack_info() hook gives its empty carrier slots."""

    def dlpack_info(self):
        if self.slots == 0:
            self.allocate(4)
        return super().dlpack_info()


@pytest.mark.spec(f"{HOOK}#7")
def test_refuse_storage_the_hook_replaced():
    """The hook's allocate replaced the buffer the export held: no capsule is made."""
    c = AllocatingHook(sw.Float32)
    t = sw.Tensor(c, sw.Layout(0))
    exports = live_exports()
    with pytest.raises(BufferError) as info:
        t.__dlpack__()
    assert label(c) in str(info.value) and "replaced" in str(info.value)
    assert live_exports() == exports
    assert c.slots == 4
