"""carrier-storage: BlockDeviceCarrier stores slots in aligned blocks, and transfer requests
report the carriers' I/O alignment."""

import errno
import gc
import os
import pathlib
import shutil
import tempfile

import numpy as np
import pytest

import strideweave as sw
from conformance.carrier_storage.test_file_backed import open_descriptors, run_python
from strideweave import _core
from strideweave.carriers.move import dispatch_move

REQ = "carrier-storage/blockdevicecarrier-stores-slots-in-aligned-blocks"
ALIGN = "carrier-storage/transfer-requests-report-the-carriers-i-o-alignment"
SLOTS = "carrier-storage/a-carrier-holds-slots-of-one-dtype"
RECORD = sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool)
RECORD_NP = np.dtype([("x", "<f4"), ("n", "<i4"), ("b", "?")])


def accepts_o_direct(directory: pathlib.Path) -> bool:
    """Whether the file system of ``directory`` opens files with O_DIRECT."""
    probe = directory / ".o-direct-probe"
    try:
        fd = os.open(probe, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise
    os.close(fd)
    probe.unlink()
    return True


@pytest.fixture
def refused():
    """O_DIRECT treated as refused (EINVAL) for the carriers constructed meanwhile."""
    _core._testing.refuse_direct_io(True)
    yield
    _core._testing.refuse_direct_io(False)


@pytest.fixture(params=["disk", "tmpfs", "refused"])
def where(request, tmp_path) -> tuple[pathlib.Path, bool]:
    """A directory and whether BlockDeviceCarrier uses direct I/O there: tmp_path (a disk
    file system here), a directory on tmpfs (/dev/shm), and tmp_path with O_DIRECT
    refused (the buffered fallback wherever the kernel accepts O_DIRECT)."""
    if request.param == "tmpfs":
        if not pathlib.Path("/dev/shm").is_dir():
            pytest.skip("no tmpfs at /dev/shm")
        directory = pathlib.Path(tempfile.mkdtemp(dir="/dev/shm"))
        request.addfinalizer(
            lambda: [p.unlink() for p in directory.iterdir()] + [directory.rmdir()]
        )
        return directory, accepts_o_direct(directory)
    if request.param == "refused":
        request.getfixturevalue("refused")
        return tmp_path, False
    return tmp_path, accepts_o_direct(tmp_path)


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch) -> pathlib.Path:
    """A fresh directory that is $TMPDIR for this test (and its subprocesses)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    return temp


def descriptor_flags(path: pathlib.Path) -> int:
    """The open flags of this process's one descriptor on ``path``."""
    (fd,) = open_descriptors(path)
    with open(f"/proc/self/fdinfo/{fd}") as info:
        for line in info:
            if line.startswith("flags:"):
                return int(line.split()[1], 8)
    raise AssertionError(f"no flags for descriptor {fd}")


# -- the file format and the I/O path ---------------------------------------------------


@pytest.mark.spec(f"{REQ}/read-a-blockdevicecarriers-file-with-numpy", f"{REQ}#1", f"{REQ}#6")
def test_read_a_blockdevicecarriers_file_with_numpy(where):
    directory, _ = where
    path = directory / "values.f32"
    c = sw.BlockDeviceCarrier(sw.Float32, 1000, path)
    values = np.arange(1000, dtype=np.float32) * 0.5
    c.write_range(0, values)
    assert np.array_equal(np.fromfile(path, np.float32, count=1000), values)
    assert path.stat().st_size % c.block_size == 0
    assert path.stat().st_size >= 4000
    assert c.tolist() == values.tolist()


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#8")
@pytest.mark.parametrize(
    ("dtype", "np_dtype", "values"),
    [
        (sw.Bool, np.bool_, [True, False, True]),
        (sw.Int32, np.int32, [-(2**31), 0, 2**31 - 1]),
        (RECORD, RECORD_NP, [(0.5, 1, True), (1.5, -2, False)]),
    ],
)
def test_every_dtype_with_an_item_size_is_raw_in_the_file(tmp_path, dtype, np_dtype, values):
    path = tmp_path / "items.bin"
    c = sw.BlockDeviceCarrier(dtype, len(values), str(path))
    c.write_range(0, values)
    assert np.fromfile(path, np_dtype, count=len(values)).tolist() == values
    assert path.stat().st_size == c.block_size
    assert c.tolist() == values


@pytest.mark.spec(f"{REQ}#1")
def test_path_is_a_pathlib_path_also_after_release(tmp_path):
    class Where:
        def __fspath__(self):
            return str(tmp_path / "fspath.i32")

    for given in (str(tmp_path / "str.i32"), tmp_path / "path.i32", Where()):
        c = sw.BlockDeviceCarrier(sw.Int32, 1, given)
        assert isinstance(c.path, pathlib.Path) and c.path == pathlib.Path(os.fspath(given))
        c.release()
        assert c.path == pathlib.Path(os.fspath(given))


@pytest.mark.spec(f"{SLOTS}#7")
def test_path_and_block_size_sit_between_n_and_the_keyword_only_values(tmp_path):
    c = sw.BlockDeviceCarrier(sw.Int32, 2, tmp_path / "positional.i32", 8192)
    assert c.path == tmp_path / "positional.i32" and c.slots == 2 and c.block_size == 8192
    with pytest.raises(TypeError):
        sw.BlockDeviceCarrier(sw.Int32, 2, tmp_path / "values.i32", 4096, [1, 2])
    assert not (tmp_path / "values.i32").exists()
    keywords = sw.BlockDeviceCarrier(
        dtype=sw.Int32, n=1, path=tmp_path / "k.i32", block_size=None, values=[7], mutable=False
    )
    assert keywords.tolist() == [7] and not keywords.is_mutable()


@pytest.mark.spec(f"{REQ}/write-part-of-a-block", f"{REQ}#6")
def test_write_part_of_a_block(where):
    directory, _ = where
    c = sw.BlockDeviceCarrier(sw.Int32, 5000, directory / "rmw.i32", 4096)
    expected = np.arange(5000, dtype=np.int32)
    c.write_range(0, expected)
    c.write(1500, -1)
    expected[1500] = -1
    patch = -np.arange(1100, dtype=np.int32) - 7
    c.write_range(1000, patch)  # starts in block 0 and ends in block 2
    expected[1000:2100] = patch
    assert np.array_equal(c.read_range(0, 5000, out=np.empty(5000, np.int32)), expected)
    assert np.array_equal(np.fromfile(c.path, np.int32, count=5000), expected)
    assert c.read(999) == 999 and c.read(2100) == 2100 and c.version == 3


@pytest.mark.spec(f"{REQ}#6")
@pytest.mark.parametrize("shift", [1, 4, 64])
def test_unaligned_caller_memory_goes_through_the_bounce_buffer(where, shift):
    directory, _ = where
    c = sw.BlockDeviceCarrier(sw.Int32, 3 * 1024 + 5, directory / "bounce.i32")
    raw = bytearray(4 * c.slots + shift)
    values = np.frombuffer(raw, np.int32, count=c.slots, offset=shift)
    values[:] = np.arange(c.slots, dtype=np.int32) * 3
    c.write_range(0, values)
    out_raw = bytearray(4 * c.slots + shift)
    out = np.frombuffer(out_raw, np.int32, count=c.slots, offset=shift)
    c.read_range(0, c.slots, out=out)
    assert np.array_equal(out, values)


@pytest.mark.spec(f"{REQ}/use-direct-i-o-on-a-disk-file-system", f"{REQ}#5")
def test_use_direct_io_on_a_disk_file_system(tmp_path):
    if not accepts_o_direct(tmp_path):
        pytest.skip(f"{tmp_path}'s file system refuses O_DIRECT")
    c = sw.BlockDeviceCarrier(sw.Int32, 8, tmp_path / "direct.i32")
    assert c.direct_io is True
    assert descriptor_flags(c.path) & os.O_DIRECT


@pytest.mark.spec(f"{REQ}/use-direct-i-o-on-a-disk-file-system", f"{REQ}#5")
def test_use_direct_io_in_any_directory_that_accepts_it(tmp_path):
    """The fallback of test_use_direct_io_on_a_disk_file_system on machines whose temporary
    directory refuses O_DIRECT (pyproject.toml, machine_skips): a scratch directory under
    the working directory, the home directory or /var/tmp may be on a disk file system."""
    for base in (tmp_path, pathlib.Path.cwd(), pathlib.Path.home(), pathlib.Path("/var/tmp")):
        try:
            directory = pathlib.Path(tempfile.mkdtemp(dir=base))
        except OSError:
            continue
        try:
            if accepts_o_direct(directory):
                c = sw.BlockDeviceCarrier(sw.Int32, 8, directory / "direct.i32")
                assert c.direct_io is True
                assert descriptor_flags(c.path) & os.O_DIRECT
                c.release()
                return
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    pytest.skip("no candidate directory's file system accepts O_DIRECT")


@pytest.mark.spec(f"{REQ}/fall-back-to-buffered-i-o", f"{REQ}#5", f"{REQ}#7")
def test_fall_back_to_buffered_io(tmp_path, refused):
    c = sw.BlockDeviceCarrier(sw.Int32, 2000, tmp_path / "buffered.i32")
    assert c.direct_io is False and c.alignment == 1
    assert not descriptor_flags(c.path) & os.O_DIRECT
    c.write_range(0, np.arange(2000, dtype=np.int32))
    c.write_range(10, [-1, -2, -3])
    assert c.read_range(8, 6) == [8, 9, -1, -2, -3, 13]
    assert np.fromfile(c.path, np.int32, count=2000)[1999] == 1999


@pytest.mark.spec(f"{REQ}#5")
def test_tmpfs_reports_what_the_kernel_does_with_o_direct():
    if not pathlib.Path("/dev/shm").is_dir():
        pytest.skip("no tmpfs at /dev/shm")
    directory = pathlib.Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        c = sw.BlockDeviceCarrier(sw.Float32, 4, directory / "shm.f32")
        assert c.direct_io is accepts_o_direct(directory)
        assert bool(descriptor_flags(c.path) & os.O_DIRECT) is c.direct_io
        c.release()
    finally:
        for p in directory.iterdir():
            p.unlink()
        directory.rmdir()


@pytest.mark.spec(f"{REQ}#7")
def test_alignment_and_the_default_block_size(where):
    directory, direct = where
    c = sw.BlockDeviceCarrier(sw.Float32, 4, directory / "a.f32")
    assert c.direct_io is direct
    assert c.block_size >= 4096 and c.block_size & (c.block_size - 1) == 0
    if direct:
        assert c.alignment >= 512 and c.block_size % c.alignment == 0
    else:
        assert c.alignment == 1


@pytest.mark.spec(f"{REQ}/reject-a-bad-block-size", f"{REQ}#7")
@pytest.mark.parametrize("block_size", [1000, 0, -4096, 1 << 24])
def test_reject_a_bad_block_size(tmp_path, tmpdir_env, block_size):
    path = tmp_path / "bad.f32"
    with pytest.raises(ValueError, match=f"block_size={block_size}"):
        sw.BlockDeviceCarrier(sw.Float32, 4, path, block_size=block_size)
    assert not path.exists()
    with pytest.raises(ValueError, match="block_size"):
        sw.BlockDeviceCarrier(sw.Float32, 4, block_size=block_size)
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.spec(f"{REQ}#7")
@pytest.mark.parametrize(
    ("block_size", "error"),
    [(True, TypeError), (4096.0, TypeError), ("4096", TypeError), (2**70, ValueError)],
)
def test_block_size_is_an_integer(tmp_path, block_size, error):
    path = tmp_path / "typed.f32"
    with pytest.raises(error, match="BlockDeviceCarrier: block_size"):
        sw.BlockDeviceCarrier(sw.Float32, 4, path, block_size)
    assert not path.exists()


@pytest.mark.spec(f"{REQ}#7")
def test_a_direct_block_size_below_the_offset_alignment_is_refused(tmp_path):
    if not accepts_o_direct(tmp_path):
        pytest.skip(f"{tmp_path}'s file system refuses O_DIRECT")
    with pytest.raises(ValueError, match="block_size=256 is not a multiple of the direct-I/O"):
        sw.BlockDeviceCarrier(sw.Int32, 1, tmp_path / "small.i32", 256)
    assert not (tmp_path / "small.i32").exists()


@pytest.mark.spec(f"{REQ}#7")
def test_buffered_io_takes_any_power_of_two_block_size(tmp_path, refused):
    c = sw.BlockDeviceCarrier(sw.Int32, 5, tmp_path / "tiny.i32", 1)
    c.write_range(0, [1, 2, 3, 4, 5])
    c.write(2, -3)
    assert c.block_size == 1 and c.tolist() == [1, 2, -3, 4, 5]
    assert c.path.stat().st_size == 20


@pytest.mark.spec(f"{REQ}#3")
def test_a_given_file_is_created_and_sized_to_whole_blocks(tmp_path):
    path = tmp_path / "sized.i32"
    np.arange(5, dtype=np.int32).tofile(path)
    grown = sw.BlockDeviceCarrier(sw.Int32, 8, path)
    assert grown.tolist() == [0, 1, 2, 3, 4, 0, 0, 0]
    assert path.stat().st_size == grown.block_size
    grown.release()
    cut = sw.BlockDeviceCarrier(sw.Int32, 3, path)
    assert cut.tolist() == [0, 1, 2]
    missing = tmp_path / "missing.i32"
    created = sw.BlockDeviceCarrier(sw.Int32, 2000, missing)
    assert created.tolist() == [0] * 2000 and missing.stat().st_size == 2 * created.block_size
    empty = sw.BlockDeviceCarrier(sw.Int32, path=tmp_path / "empty.i32")
    assert empty.slots == 0
    replaced = sw.BlockDeviceCarrier(sw.Int32, path=path, values=[9, 8])
    assert replaced.tolist() == [9, 8] and np.fromfile(path, np.int32, count=3).tolist() == [
        9,
        8,
        0,
    ]


@pytest.mark.spec(f"{REQ}#4")
def test_an_immutable_blockdevicecarrier_opens_read_only_and_never_resizes(tmp_path):
    path = tmp_path / "ro.i32"
    np.arange(6, dtype=np.int32).tofile(path)
    os.chmod(path, 0o444)
    c = sw.BlockDeviceCarrier(sw.Int32, 4, path, mutable=False)
    assert c.tolist() == [0, 1, 2, 3] and not c.is_mutable()
    assert descriptor_flags(path) & os.O_ACCMODE == os.O_RDONLY
    assert path.stat().st_size == 24
    with pytest.raises(ValueError, match=str(path)):
        sw.BlockDeviceCarrier(sw.Int32, 7, path, mutable=False)
    assert path.stat().st_size == 24
    assert np.fromfile(path, np.int32).tolist() == list(range(6))


@pytest.mark.spec(f"{REQ}#8")
@pytest.mark.parametrize("dtype", [sw.Floating, sw.Any])
def test_reject_an_abstract_dtype(tmp_path, tmpdir_env, dtype):
    path = tmp_path / "abstract"
    with pytest.raises(TypeError, match="BlockDeviceCarrier") as info:
        sw.BlockDeviceCarrier(dtype, 2, path)
    assert dtype.name in str(info.value)
    assert not path.exists()
    with pytest.raises(TypeError, match="BlockDeviceCarrier"):
        sw.BlockDeviceCarrier(dtype)
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.spec(f"{REQ}#9")
def test_allocate_extends_an_empty_file(tmp_path):
    c = sw.BlockDeviceCarrier(sw.Int32, 0, tmp_path / "empty.i32")
    c.allocate(3)
    assert c.slots == 3 and c.version == 1
    assert np.fromfile(c.path, np.int32, count=3).tolist() == [0, 0, 0]
    assert c.path.stat().st_size == c.block_size
    with pytest.raises(RuntimeError, match="already holds"):
        c.allocate(2)
    assert c.slots == 3 and c.version == 1


@pytest.mark.spec(f"{REQ}#10")
def test_blockdevicecarrier_keeps_the_default_dlpack_hook_and_no_pointer(tmpdir_env):
    c = sw.BlockDeviceCarrier(sw.Float32, 2)
    with pytest.raises(BufferError, match="BlockDeviceCarrier"):
        c.dlpack_info()
    with pytest.raises(BufferError, match="BlockDeviceCarrier"):
        np.from_dlpack(sw.Tensor(c, sw.Layout(2)))
    assert not hasattr(c, "pointer")
    assert sw.BlockDeviceCarrier.carrier_class.name == "BlockDeviceCarrier"
    assert sw.BlockDeviceCarrier.carrier_class.parent == sw.Carrier.carrier_class
    sw.move(sw.Tensor(c, sw.Layout(2)), sw.CPU(sw.Float32))  # seals the class
    assert sw.BlockDeviceCarrier.carrier_class.definition_state == "definition-free"
    assert sw.carriers.BlockDeviceCarrier is sw.BlockDeviceCarrier
    assert c.version == 0 and c.is_released  # released by the move


# -- temporary files and release --------------------------------------------------------


@pytest.mark.spec(f"{REQ}#2")
def test_remove_a_temporary_file_at_release_and_collection(tmp_path, tmpdir_env):
    temp = sw.BlockDeviceCarrier(sw.Float32, 3)
    assert temp.path.parent == tmpdir_env and temp.path.stat().st_size == temp.block_size
    given = sw.BlockDeviceCarrier(sw.Float32, 3, tmp_path / "given.f32")
    given.write(1, 2.0)
    temp.release()
    given.release()
    assert not temp.path.exists()
    assert np.fromfile(given.path, np.float32, count=3).tolist() == [0.0, 2.0, 0.0]
    collected = sw.BlockDeviceCarrier(sw.Int32, 2)
    path = collected.path
    del collected
    gc.collect()
    assert not path.exists() and list(tmpdir_env.iterdir()) == []


@pytest.mark.spec(f"{REQ}#2")
def test_remove_a_temporary_file_at_interpreter_exit(tmpdir_env):
    result = run_python(
        """
        import ctypes
        import strideweave as sw
        kept = sw.BlockDeviceCarrier(sw.Float32, 3)
        leaked = sw.BlockDeviceCarrier(sw.Bool, 1)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(leaked))  # never destroyed: atexit only
        print(kept.path)
        print(leaked.path)
        """
    )
    paths = [pathlib.Path(p) for p in result.stdout.split()]
    assert len(paths) == 2 and all(p.parent == tmpdir_env for p in paths)
    assert not any(p.exists() for p in paths)


@pytest.mark.spec(f"{REQ}#11")
def test_close_the_storage_at_release_and_new_like_beside_it(tmp_path):
    path = tmp_path / "closed.i32"
    c = sw.BlockDeviceCarrier(sw.Int32, 2, path, 8192)
    assert len(open_descriptors(path)) == 1
    like = c.new_like()
    assert type(like) is sw.BlockDeviceCarrier and like.slots == 0
    assert like.dtype == sw.Int32 and like.block_size == 8192
    assert like.path.parent == tmp_path and like.path.exists()
    c.release()
    assert open_descriptors(path) == [] and path.exists()
    with pytest.raises(RuntimeError, match="released"):
        c.read(0)
    again = c.new_like()
    assert again.slots == 0 and again.path.parent == tmp_path
    like_path = like.path
    like.release()
    assert not like_path.exists()


# -- durability and failed I/O ----------------------------------------------------------


@pytest.mark.spec(f"{REQ}/make-a-move-into-a-blockdevicecarrier-durable", f"{REQ}#12")
@pytest.mark.parametrize("source_class", [sw.CPU, sw.Generic])
def test_make_a_move_into_a_blockdevicecarrier_durable(tmp_path, source_class):
    source = source_class(sw.Int32, values=list(range(10)))
    t = sw.Tensor(source, sw.Layout((2, 3), (3, 1)), 1)
    values = t.tolist()
    destination = sw.BlockDeviceCarrier(sw.Int32, path=tmp_path / "durable.i32")
    before = _core._testing.block_device_syncs()
    result = sw.move(t, destination)
    assert _core._testing.block_device_syncs() == before + 1
    assert result.tolist() == values
    assert result.carrier is destination and source.is_released

    source = source_class(sw.Int32, values=list(range(10)))
    t = sw.Tensor(source, sw.Layout((2, 3), (3, 1)), 1)
    failing = sw.BlockDeviceCarrier(sw.Int32, path=tmp_path / "failing.i32")
    _core._testing.fail_next_sync(errno.EIO)
    handle = sw.move_async(t, failing)
    with pytest.raises(OSError) as info:
        handle.wait()
    assert info.value.errno == errno.EIO
    assert info.value.filename == str(tmp_path / "failing.i32")
    assert "fdatasync" in str(info.value)
    assert _core._testing.block_device_syncs() == before + 1
    assert not source.is_released and source.version == 0 and t.tolist() == values
    assert failing.pinned_by is None and not failing.is_released


DISK_FULL_SCRIPT = """
    import errno, resource, signal
    import numpy as np
    import strideweave as sw
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    path = {path!r}
    c = sw.BlockDeviceCarrier(sw.Int32, 2048, path)
    empty = sw.BlockDeviceCarrier(sw.Int32, 0, path + ".empty")
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        c.write_range(1024, np.ones(20, dtype=np.int32))
    except OSError as e:
        print("write", type(e).__name__, e.errno == errno.EFBIG, e.filename == path, path in str(e))
    print("state", c.version, c.is_released, c.slots, c.read_range(1024, 20) == [0] * 20)
    try:
        empty.allocate(2000)
    except OSError as e:
        print("allocate", type(e).__name__, e.errno == errno.EFBIG, path in str(e))
    print("empty", empty.version, empty.slots)
    c.write_range(0, [5, 6, 7, 8])
    print("after", c.read_range(0, 4), c.version)
    """


@pytest.mark.spec(f"{REQ}#13")
def test_report_a_failed_write_as_oserror(tmp_path):
    path = str(tmp_path / "full.i32")
    lines = run_python(DISK_FULL_SCRIPT.format(path=path)).stdout.splitlines()
    assert lines == [
        "write OSError True True True",
        "state 0 False 2048 True",
        "allocate OSError True True",
        "empty 0 0",
        "after [5, 6, 7, 8] 1",
    ]


@pytest.mark.spec(f"{REQ}#13")
def test_report_a_missing_directory(tmp_path):
    path = tmp_path / "no-such-dir" / "x.f32"
    with pytest.raises(FileNotFoundError) as info:
        sw.BlockDeviceCarrier(sw.Float32, 2, path)
    assert info.value.errno == errno.ENOENT
    assert info.value.filename == str(path) and str(path) in info.value.strerror
    assert not path.parent.exists()


# -- alignment in transfer requests and the built-in operations -------------------------


class LoggingProvider(sw.TransferProvider):
    """Logs each request and copies the source's physical span through the entry points."""

    def __init__(self, log: list) -> None:
        super().__init__()
        self.log = log

    def prepare(self, request: sw.TransferRequest):
        self.log.append(request)

        def run(output: sw.Tensor) -> None:
            span = request.source.read_range(request.offset, request.element_count)
            request.destination.write_range(0, span)

        return run


@pytest.mark.spec(f"{ALIGN}/read-a-block-devices-alignment-in-prepare", f"{ALIGN}#1")
@pytest.mark.parametrize("direct", [True, False])
def test_read_a_block_devices_alignment_in_prepare(tmp_path, direct):
    class Tiles(sw.CPU):
        pass

    class BlockSink(sw.BlockDeviceCarrier):
        pass

    class BlockSource(sw.BlockDeviceCarrier):
        pass

    class Sink(sw.CPU):
        pass

    log: list = []
    sw.define_carrier(
        sw.CarrierDefinition(
            Tiles, routes=[sw.TransferRoute(Tiles, BlockSink, "to-block", LoggingProvider(log))]
        )
    )
    sw.define_carrier(
        sw.CarrierDefinition(
            BlockSource,
            routes=[sw.TransferRoute(BlockSource, Sink, "from-block", LoggingProvider(log))],
        )
    )
    _core._testing.refuse_direct_io(not direct)
    try:
        sink = BlockSink(sw.Int32, path=tmp_path / "sink.i32", block_size=8192)
        source = BlockSource(sw.Int32, path=tmp_path / "source.i32", values=list(range(7)))
    finally:
        _core._testing.refuse_direct_io(False)
    moved = sw.move(sw.Tensor(Tiles(sw.Int32, values=list(range(7))), sw.Layout(7)), sink)
    back = sw.move(sw.Tensor(source, sw.Layout(7)), Sink(sw.Int32))
    assert moved.tolist() == back.tolist() == list(range(7))
    to_block, from_block = log
    assert (to_block.source_alignment, to_block.source_block_size) == (1, 1)
    assert (to_block.destination_alignment, to_block.destination_block_size) == (
        sink.alignment,
        8192,
    )
    assert (from_block.source_alignment, from_block.source_block_size) == (
        source.alignment,
        source.block_size,
    )
    assert (from_block.destination_alignment, from_block.destination_block_size) == (1, 1)
    assert (sink.alignment > 1) is (direct and sink.direct_io)


@pytest.mark.spec(
    f"{ALIGN}/move-cpu-to-a-blockdevicecarrier-and-back-with-the-built-in-operations",
    f"{ALIGN}#2",
)
def test_move_cpu_to_a_blockdevicecarrier_and_back_with_the_built_in_operations(tmp_path):
    assert dispatch_move(sw.CPU, sw.BlockDeviceCarrier) is sw.CpuToBlockDeviceMoveOperation
    assert dispatch_move(sw.BlockDeviceCarrier, sw.CPU) is sw.BlockDeviceToCpuMoveOperation
    for name in ("CpuToBlockDeviceMoveOperation", "BlockDeviceToCpuMoveOperation"):
        assert getattr(sw, name) is getattr(sw.carriers, name)
        assert name in sw.__all__ and name in sw.carriers.__all__
    source = sw.CPU(sw.Int32, values=[100 + i for i in range(13)])
    t = sw.Tensor(source, sw.Layout((2, 3), (2, 4)), 1)  # holes; cosize 11 from offset 1
    values = t.tolist()
    block = sw.BlockDeviceCarrier(sw.Int32, path=tmp_path / "span.i32")
    on_block = sw.move(t, block)
    assert on_block.tolist() == values
    assert block.tolist() == [101 + i for i in range(11)]  # the holes too
    back = sw.move(on_block, sw.CPU(sw.Int32))
    assert back.tolist() == values
    assert back.carrier.tolist() == [101 + i for i in range(11)]
    assert block.is_released
