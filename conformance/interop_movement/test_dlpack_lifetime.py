"""interop-movement: a capsule keeps its Tensor alive, frees once, and never pins storage."""

import gc
import os
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
import torch

import strideweave as sw
from conformance.interop_movement import dlpack_reader as R
from conformance.interop_movement.refusals import live_exports, refused

REQ = "interop-movement/a-capsule-keeps-its-producer-alive-but-not-released-storage"

# A lifetime defect crashes the interpreter: each test runs in its own child process.
pytestmark = pytest.mark.isolated

CONSUMERS = {"numpy": np.from_dlpack, "torch": torch.from_dlpack}


def fresh() -> tuple[sw.Tensor, weakref.ref, sw.VersionToken]:
    """A tensor, a weak reference to it, and a token (current only while its carrier lives)."""
    t = sw.Tensor(sw.CPU(sw.Float32, values=[1.5, 2.5, 3.5, 4.5]), sw.Layout((2, 2)))
    return t, weakref.ref(t), t.carrier.version_token()


@pytest.mark.spec(f"{REQ}/outlive-the-producing-expression", f"{REQ}#1")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_outlive_the_producing_expression(consumer):
    """An array imported from temporaries still reads the original values after gc."""
    from_dlpack = CONSUMERS[consumer]
    baseline = live_exports()
    from_factory = from_dlpack(sw.tensor([[1.0, 2.0], [3.0, 4.0]]))
    from_carrier = from_dlpack(sw.Tensor(sw.CPU(sw.Int32, values=[5, 6, 7, 8]), sw.Layout(3), 1))
    gc.collect()
    sw.tensor([[-1.0, -1.0], [-1.0, -1.0]])  # reuse freed memory, were it freed
    assert from_factory.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert from_carrier.tolist() == [6, 7, 8]
    assert live_exports() == baseline + 2
    del from_factory, from_carrier
    assert live_exports() == baseline


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#5")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_a_capsule_holds_a_strong_reference_to_the_tensor(max_version):
    """The Tensor and its carrier live exactly as long as the capsule."""
    t, tensor_ref, token = fresh()
    capsule = t.__dlpack__(max_version=max_version)
    del t
    gc.collect()
    assert tensor_ref() is not None and token.is_current()
    del capsule
    gc.collect()
    assert tensor_ref() is None and not token.is_current()


@pytest.mark.spec(f"{REQ}/free-once-for-an-unconsumed-capsule", f"{REQ}#3")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_free_once_for_an_unconsumed_capsule(max_version):
    """Collecting a never-consumed capsule runs its deleter once and drops the Tensor."""
    baseline = live_exports()
    t, tensor_ref, _ = fresh()
    capsules = [t.__dlpack__(max_version=max_version) for _ in range(3)]
    del t
    assert live_exports() == baseline + 3
    capsules.pop()
    assert live_exports() == baseline + 2
    assert tensor_ref() is not None
    capsules.clear()
    assert live_exports() == baseline
    assert tensor_ref() is None


@pytest.mark.spec(f"{REQ}#2", f"{REQ}#3")
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_a_consumed_capsule_leaves_deletion_to_the_consumer(max_version):
    """After renaming, the capsule's destructor does nothing; the consumer's delete frees once."""
    baseline = live_exports()
    t, tensor_ref, _ = fresh()
    capsule = t.__dlpack__(max_version=max_version)
    consumed = R.consume(capsule)
    assert R.capsule_name(capsule) == "used_" + consumed.name
    del capsule, t
    assert live_exports() == baseline + 1
    assert tensor_ref() is not None
    assert R.decode(consumed.address, consumed.name).shape == (2, 2)
    consumed.delete()
    assert live_exports() == baseline
    assert tensor_ref() is None


@pytest.mark.spec(f"{REQ}#2", f"{REQ}#3")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_a_real_consumer_frees_once(consumer):
    """NumPy and PyTorch take the capsule; dropping their array frees it exactly once."""
    baseline = live_exports()
    t, tensor_ref, _ = fresh()
    array = CONSUMERS[consumer](t)
    view = array[1:]
    del t
    assert live_exports() == baseline + 1
    del array
    assert live_exports() == baseline + 1
    assert view.tolist() == [[2.5, 4.5]]
    del view
    assert live_exports() == baseline
    assert tensor_ref() is None


@pytest.mark.spec(f"{REQ}#2", f"{REQ}#3")
def test_the_deleter_runs_on_another_thread():
    """A consumer calling the deleter from another thread, without the GIL, frees once."""
    baseline = live_exports()
    t, tensor_ref, _ = fresh()
    consumed = [R.consume(t.__dlpack__(max_version=(1, 0))), R.consume(t.__dlpack__())]
    del t
    threads = [threading.Thread(target=c.delete) for c in consumed]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(c.deleted for c in consumed)
    assert live_exports() == baseline
    assert tensor_ref() is None


FINALIZATION_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import strideweave as sw
    import torch

    from conformance.interop_movement import dlpack_reader as R

    held = sw.Tensor(sw.CPU(sw.Float32, values=[1.0, 2.0, 3.0]), sw.Layout(3))
    capsule = held.__dlpack__(max_version=(1, 0))
    legacy = sw.tensor([4, 5]).__dlpack__()
    array = np.from_dlpack(sw.tensor([1.0, 2.0]))
    tensor = torch.from_dlpack(sw.tensor([[1, 2], [3, 4]]))
    consumed = R.consume(sw.tensor([6.0]).__dlpack__(max_version=(1, 0)))
    cycle = [sw.tensor([7.0])]
    cycle.extend([cycle, cycle[0].__dlpack__(max_version=(1, 0))])
    assert array.tolist() == [1.0, 2.0] and tensor.tolist() == [[1, 2], [3, 4]]
    print("exiting with", sw._core._live_dlpack_exports(), "live exports")
    """
)


@pytest.mark.spec(f"{REQ}#4")
def test_exit_while_holding_exports():
    """An interpreter exiting with capsules, arrays and a consumed export exits cleanly."""
    package_root = str(Path(sw.__file__).resolve().parent.parent)
    repo_root = str(Path(__file__).resolve().parents[2])
    paths = [package_root, repo_root, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    result = subprocess.run(
        [sys.executable, "-c", FINALIZATION_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "exiting with 6 live exports" in result.stdout
    for crash in (
        "Fatal Python error",
        "Segmentation fault",
        "AddressSanitizer",
        "Traceback",
        "Exception ignored",
        "core dumped",
    ):
        assert crash not in result.stderr


@pytest.mark.spec(f"{REQ}/do-not-outlive-released-storage", f"{REQ}#5", f"{REQ}#6")
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_do_not_outlive_released_storage(consumer):
    """release() succeeds with a capsule and an array outstanding and drops the storage.

    move does not exist yet, so only the release path is exercised. The outstanding
    buffer now addresses freed memory: it is never read here (the suite runs under ASan).
    """
    baseline = live_exports()
    t, tensor_ref, _ = fresh()
    carrier = t.carrier
    version = carrier.version
    capsule = t.__dlpack__(max_version=(1, 0))
    exported = R.inspect(capsule).data
    array = CONSUMERS[consumer](t)
    assert exported == carrier.pointer()
    assert carrier.release() is None
    assert carrier.is_released and carrier.slots == 0
    assert carrier.dlpack_info()["pointer"] == 0 != exported
    assert carrier.version == version
    with refused(BufferError, "null", carriers=[carrier]):
        t.__dlpack__(max_version=(1, 0))
    del t, array, capsule
    assert live_exports() == baseline
    assert tensor_ref() is None
