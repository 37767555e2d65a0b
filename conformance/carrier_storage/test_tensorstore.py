"""carrier-storage: TensorStoreCarrier (strideweave.contrib.tensorstore), slots in a zarr3
TensorStore array: the temporary file kvstore and its cleanup, a memory kvstore and an
existing array by spec, the moves with CPU (the provider's Future one way, the fallback the
other), the compound refusal, and the kit. Skips only where tensorstore is not installed."""

from __future__ import annotations

import concurrent.futures
import gc
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

ts = pytest.importorskip(
    "tensorstore", reason="tensorstore is not installed (pip install 'strideweave[tensorstore]')"
)

import strideweave as sw  # noqa: E402
from strideweave.contrib import tensorstore as contrib  # noqa: E402
from strideweave.contrib.tensorstore import TensorStoreCarrier  # noqa: E402

REQ = "carrier-storage/tensorstorecarrier-stores-slots-in-a-tensorstore-array"
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 600
VALUES = {
    sw.Bool: [True, False, True, True, False],
    sw.Int32: [3, -1, 2**31 - 1, -(2**31), 0],
    sw.Float32: [1.5, -2.25, 0.0, 2.0**100, -0.5],
}


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd`` with this interpreter's import path and the repository."""
    path = [str(REPO), *(p for p in sys.path if p)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def zarr_array(path: Path, values: np.ndarray, chunk: int = 2) -> ts.TensorStore:
    """A zarr3 array written by TensorStore itself at ``path``."""
    store = ts.open(
        {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}},
        create=True,
        dtype=ts.dtype(values.dtype.name),
        shape=list(values.shape),
        chunk_layout=ts.ChunkLayout(chunk_shape=[chunk] * values.ndim),
    ).result()
    store.write(values).result()
    return store


def file_spec(path: Path) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


@pytest.mark.spec(f"{REQ}/round-trip-through-a-temporary-file-kvstore", f"{REQ}#1", f"{REQ}#3")
@pytest.mark.parametrize("dtype", list(VALUES), ids=lambda d: d.name)
def test_round_trip_through_a_temporary_file_kvstore(dtype):
    values = VALUES[dtype]
    carrier = TensorStoreCarrier(dtype, values=values)
    directory = Path(carrier.spec["kvstore"]["path"])
    assert carrier.spec["driver"] == "zarr3" and carrier.spec["kvstore"]["driver"] == "file"
    assert (directory / "zarr.json").is_file()
    assert carrier.store.rank == 1 and carrier.store.shape == (5,)
    assert carrier.store.dtype.numpy_dtype == np.dtype(dtype.name.lower())
    assert carrier.tolist() == values and carrier.version == 0
    carrier.write_range(1, values[2:4])
    assert carrier.read_range(1, 2) == values[2:4]
    assert carrier.tolist() == [values[0], *values[2:4], *values[3:]] and carrier.version == 1
    # The slots are in the array, as TensorStore reads them.
    assert carrier.store.read().result().tolist() == carrier.tolist()
    carrier.release()
    assert carrier.is_released and carrier.store is None
    assert not directory.exists()
    carrier.release()  # twice: nothing more to remove


@pytest.mark.spec(f"{REQ}#3")
def test_collecting_an_unreleased_carrier_removes_its_directory():
    carrier = TensorStoreCarrier(sw.Int32, 3)
    directory = Path(carrier.spec["kvstore"]["path"])
    assert directory.is_dir()
    del carrier
    gc.collect()
    assert not directory.exists()


@pytest.mark.spec(f"{REQ}/keep-slots-in-a-memory-kvstore-by-spec", f"{REQ}#1")
def test_keep_slots_in_a_memory_kvstore_by_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    spec = {"driver": "zarr3", "kvstore": {"driver": "memory", "path": "slots/"}}
    context = ts.Context()
    first = TensorStoreCarrier(sw.Float32, spec=spec, values=[1.0, 2.0, 3.0], context=context)
    second = TensorStoreCarrier(sw.Float32, spec=spec, context=context)
    assert second.slots == 3 and second.tolist() == [1.0, 2.0, 3.0]
    first.write(0, 9.0)
    assert second.read(0) == 9.0
    # Another context is another memory kvstore: empty.
    assert TensorStoreCarrier(sw.Float32, spec=spec).slots == 0
    assert list(tmp_path.iterdir()) == []
    first.release()
    assert second.tolist() == [9.0, 2.0, 3.0]  # release never deletes a spec's storage


@pytest.mark.spec(f"{REQ}/open-an-existing-array-by-spec", f"{REQ}#2", f"{REQ}#3")
def test_open_an_existing_array_by_spec(tmp_path):
    path = tmp_path / "existing"
    values = np.arange(5, dtype=np.int32) * 7
    zarr_array(path, values)
    carrier = TensorStoreCarrier(sw.Int32, spec=file_spec(path))
    assert carrier.slots == 5 and carrier.tolist() == values.tolist()
    assert TensorStoreCarrier(sw.Int32, 5, spec=file_spec(path)).slots == 5
    with pytest.raises(ValueError, match=r"n=6.*5 slots") as refused:
        TensorStoreCarrier(sw.Int32, 6, spec=file_spec(path))
    assert "TensorStoreCarrier" in str(refused.value)
    # Nothing changed: the array keeps its shape and values.
    reopened = ts.open(file_spec(path), open=True).result()
    assert reopened.shape == (5,) and reopened.read().result().tolist() == values.tolist()
    carrier.write(4, -1)
    carrier.release()
    assert (path / "zarr.json").is_file()
    after = ts.open(file_spec(path), open=True).result().read().result().tolist()
    assert after == [*values.tolist()[:4], -1]


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#2")
@pytest.mark.parametrize(
    ("values", "error", "subject"),
    [
        (np.zeros((2, 3), np.int32), ValueError, r"one-dimensional.*\(2, 3\)"),
        (np.zeros(4, np.float32), TypeError, r"int32.*float32"),
    ],
    ids=["two-dimensional", "other-dtype"],
)
def test_refuse_an_existing_array_it_cannot_hold(tmp_path, values, error, subject):
    path = tmp_path / "other"
    zarr_array(path, values)
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    with pytest.raises(error, match=subject):
        TensorStoreCarrier(sw.Int32, spec=file_spec(path))
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before
    reopened = ts.open(file_spec(path), open=True).result()
    assert reopened.shape == values.shape and reopened.dtype.numpy_dtype == values.dtype


class Spy:
    """Wraps TensorStoreTransfer.prepare and TensorStoreCarrier._write_range: records what
    each prepared callable returned, on which thread it ran, and the _write_range calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.returned: list[object] = []
        self.threads: list[int] = []
        self.writes: list[tuple[int, int]] = []
        self.write_returned: list[object] = []
        prepare = contrib.TensorStoreTransfer.prepare
        write_range = TensorStoreCarrier._write_range
        spy = self

        def spied_prepare(provider, request):
            run = prepare(provider, request)

            def spied_run(output):
                spy.threads.append(threading.get_ident())
                returned = run(output)
                spy.returned.append(returned)
                return returned

            return spied_run

        def spied_write_range(carrier, first, count, data):
            spy.writes.append((first, count))
            returned = write_range(carrier, first, count, data)
            spy.write_returned.append(returned)
            return returned

        monkeypatch.setattr(contrib.TensorStoreTransfer, "prepare", spied_prepare)
        monkeypatch.setattr(TensorStoreCarrier, "_write_range", spied_write_range)


@pytest.mark.spec(f"{REQ}/move-both-ways-with-cpu", f"{REQ}#5")
@pytest.mark.parametrize("asynchronous", [False, True], ids=["move", "move_async"])
def test_move_both_ways_with_cpu(monkeypatch, asynchronous):
    spy = Spy(monkeypatch)

    def move(tensor, destination):
        if asynchronous:
            return sw.move_async(tensor, destination).wait()
        return sw.move(tensor, destination)

    values = [float(i) / 4 for i in range(40)]
    source = sw.Tensor(sw.CPU(sw.Float32, values=values), sw.Layout((4, 5), (10, 1)), 3)
    expected = source.tolist()
    inside = move(source, TensorStoreCarrier(sw.Float32))
    assert type(inside.carrier) is TensorStoreCarrier and inside.tolist() == expected
    # From CPU: the elementwise fallback, staged: one _write_range of the whole span, which
    # returned a Future that TensorStore's completion resolved (no worker waited for it).
    assert spy.writes == [(0, inside.carrier.slots)] and spy.returned == []
    (written,) = spy.write_returned
    assert isinstance(written, concurrent.futures.Future)
    assert written.done() and written.exception() is None
    back = move(inside, sw.CPU(sw.Float32))
    assert type(back.carrier) is sw.CPU and back.tolist() == expected
    # To CPU: the declared route; its callable ran on a worker and returned a Future that
    # TensorStore's completion resolved.
    assert len(spy.returned) == 1 and spy.threads != [threading.get_ident()]
    future = spy.returned[0]
    assert isinstance(future, concurrent.futures.Future)
    assert future.done() and future.exception() is None
    assert inside.carrier.is_released


@pytest.mark.spec(f"{REQ}#5")
def test_the_definition_declares_the_route_to_cpu_and_permits_the_fallback():
    assert TensorStoreCarrier.carrier_class.definition_state == "definition-backed"
    with pytest.raises(RuntimeError, match="CPU"):
        sw.carriers.define_carrier(sw.carriers.CarrierDefinition(sw.CPU))
    source = sw.Tensor(TensorStoreCarrier(sw.Int32, values=[4, 5, 6, 7]), sw.Layout(2), 1)
    moved = sw.move(source, sw.FileBacked(sw.Int32))  # a pair without a route: the fallback
    assert moved.tolist() == [5, 6]


@pytest.mark.spec(f"{REQ}#5")
def test_a_failed_transfer_fails_the_move_and_leaves_the_source(monkeypatch):
    """TensorStore's failure reaches the move through the Future; the source stays live."""
    carrier = TensorStoreCarrier(sw.Int32, values=[1, 2, 3])
    tensor = sw.Tensor(carrier, sw.Layout(3))

    class Broken(contrib.TensorStoreTransfer):
        def prepare(self, request):
            def run(output):
                # TensorStore's own future, failing: no array in an empty memory kvstore.
                missing = ts.open({"driver": "zarr3", "kvstore": {"driver": "memory"}}, open=True)
                future: concurrent.futures.Future = concurrent.futures.Future()
                missing.add_done_callback(lambda done: contrib._settle(future, done, ()))
                return future

            return run

    monkeypatch.setattr(contrib.TensorStoreTransfer, "prepare", Broken.prepare)
    destination = sw.CPU(sw.Int32)
    with pytest.raises(ValueError, match="NOT_FOUND"):
        sw.move_async(tensor, destination).wait()
    assert not carrier.is_released and carrier.pinned_by is None and carrier.tolist() == [1, 2, 3]
    assert destination.pinned_by is None and destination.moves_received == 0


@pytest.mark.spec(f"{REQ}/refuse-a-compound-dtype", f"{REQ}#4")
def test_refuse_a_compound_dtype(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dtype = sw.compound(x=sw.Float32, y=sw.Int32)
    with pytest.raises(TypeError, match=r"compound\(x=Float32, y=Int32\)"):
        TensorStoreCarrier(dtype, 2)
    with pytest.raises(TypeError, match=r"compound"):
        TensorStoreCarrier(dtype, spec={"driver": "zarr3", "kvstore": {"driver": "memory"}})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spec(f"{REQ}#6")
def test_importing_strideweave_does_not_import_tensorstore(tmp_path):
    code = "import sys, strideweave, strideweave.contrib; print('tensorstore' in sys.modules)"
    result = run(["-c", code], tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr


@pytest.mark.spec(f"{REQ}#6")
def test_the_tests_skip_naming_tensorstore_where_it_is_absent(tmp_path):
    code = (
        "import sys, pytest; sys.modules['tensorstore'] = None; "
        f"sys.exit(pytest.main([{str(Path(__file__))!r}, '-q', '-rs', '-p', 'no:cacheprovider', "
        "'-o', 'addopts=', '-W', 'ignore::pytest.PytestUnknownMarkWarning']))"
    )
    result = run(["-c", code], tmp_path)
    output = result.stdout + result.stderr
    # A module skipped whole runs no test: pytest's exit status 5, not a failure (1).
    assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, output
    assert "1 skipped" in output and "tensorstore is not installed" in output, output


@pytest.mark.spec(f"{REQ}/kit-passes-on-tensorstorecarrier", f"{REQ}#7")
def test_kit_passes_on_tensorstorecarrier(tmp_path):
    reference = "strideweave.contrib.tensorstore:TensorStoreCarrier"
    result = run(["-m", "strideweave.kit", reference], tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert " failed" not in output and " passed" in output
