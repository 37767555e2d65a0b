"""carrier-storage: FileBacked stores slots in a file and reports failed I/O as OSError."""

import errno
import gc
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import strideweave as sw

REQ = "carrier-storage/filebacked-stores-slots-in-a-file"
IO = "carrier-storage/filebacked-reports-failed-i-o-as-oserror"
SLOTS = "carrier-storage/a-carrier-holds-slots-of-one-dtype"
RECORD = sw.compound(x=sw.Float32, n=sw.Int32, b=sw.Bool)
RECORD_NP = np.dtype([("x", "<f4"), ("n", "<i4"), ("b", "?")])


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch) -> pathlib.Path:
    """A fresh directory that is $TMPDIR for this test (and its subprocesses)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    return temp


def open_descriptors(path: pathlib.Path) -> list[int]:
    """The descriptors of this process open on ``path``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                found.append(int(fd))
        except OSError:
            pass
    return found


def run_python(script: str, *, check_output: bool = True) -> subprocess.CompletedProcess:
    """Runs ``script`` in a fresh interpreter that imports this strideweave."""
    package_root = str(pathlib.Path(sw.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, os.getcwd()])}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if check_output:
        assert "Traceback" not in result.stderr, result.stderr
    return result


# -- the file format ---------------------------------------------------------------


@pytest.mark.spec(f"{REQ}/read-the-file-with-numpy", f"{REQ}#1", f"{REQ}#13")
def test_read_the_file_with_numpy(tmp_path):
    path = tmp_path / "values.f32"
    c = sw.FileBacked(sw.Float32, 4, path)
    c.write_range(0, [1.5, -2.0, 3.25, 0.5])
    assert np.fromfile(path, np.float32).tolist() == [1.5, -2.0, 3.25, 0.5]
    assert np.memmap(path, np.float32, mode="r").tolist() == [1.5, -2.0, 3.25, 0.5]
    version = c.version
    mapped = np.memmap(path, np.float32, mode="r+")
    mapped[2] = 9.0
    mapped.flush()
    del mapped
    assert c.read(2) == 9.0
    assert c.version == version


@pytest.mark.spec(f"{REQ}#1", f"{REQ}#7")
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
    c = sw.FileBacked(dtype, len(values), str(path))
    c.write_range(0, values)
    assert np.fromfile(path, np_dtype).tolist() == values
    assert path.stat().st_size == len(values) * np.dtype(np_dtype).itemsize
    assert c.tolist() == values


@pytest.mark.spec(f"{REQ}#1")
def test_path_is_a_pathlib_path_from_str_or_pathlike(tmp_path):
    class Where:
        def __fspath__(self):
            return str(tmp_path / "fspath.i32")

    for given in (str(tmp_path / "str.i32"), tmp_path / "path.i32", Where()):
        c = sw.FileBacked(sw.Int32, 1, given)
        assert c.path == pathlib.Path(os.fspath(given))
        assert isinstance(c.path, pathlib.Path)
        c.release()
        assert c.path == pathlib.Path(os.fspath(given))


@pytest.mark.spec(f"{REQ}#1")
def test_numpy_buffers_cross_the_range_entry_points(tmp_path):
    c = sw.FileBacked(sw.Float32, 6, tmp_path / "buffers.f32")
    source = np.arange(6, dtype=np.float32)
    c.write_range(0, source)
    source[0] = 42.0
    out = np.zeros(4, dtype=np.float32)
    assert c.read_range(1, 4, out=out) is out
    assert out.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert c.read(0) == 0.0
    assert c.version == 1


@pytest.mark.spec(f"{SLOTS}#6")
def test_path_sits_between_n_and_the_keyword_only_values(tmp_path, tmpdir_env):
    path = tmp_path / "positional.i32"
    c = sw.FileBacked(sw.Int32, 2, path)
    assert c.path == path and c.slots == 2
    with pytest.raises(TypeError):
        sw.FileBacked(sw.Int32, 2, tmp_path / "values.i32", [1, 2])
    assert not (tmp_path / "values.i32").exists()
    keywords = sw.FileBacked(dtype=sw.Int32, n=1, path=None, values=[7], mutable=False)
    assert keywords.tolist() == [7] and not keywords.is_mutable()


@pytest.mark.spec(f"{REQ}#3")
def test_values_create_or_replace_the_file(tmp_path):
    path = tmp_path / "replaced.i32"
    np.arange(5, dtype=np.int32).tofile(path)
    c = sw.FileBacked(sw.Int32, path=path, values=[7, 8])
    assert c.slots == 2 and c.tolist() == [7, 8]
    assert np.fromfile(path, np.int32).tolist() == [7, 8]
    fresh = sw.FileBacked(sw.Int32, 2, tmp_path / "fresh.i32", values=[1, 2], mutable=False)
    assert np.fromfile(fresh.path, np.int32).tolist() == [1, 2]
    assert not fresh.is_mutable()


@pytest.mark.spec(f"{REQ}/take-the-slot-count-from-an-existing-file", f"{REQ}#4")
def test_take_the_slot_count_from_an_existing_file(tmp_path):
    path = tmp_path / "existing.i32"
    np.array([4, -5, 6], dtype=np.int32).tofile(path)
    c = sw.FileBacked(sw.Int32, path=path)
    assert c.slots == 3 and c.tolist() == [4, -5, 6] and c.version == 0


@pytest.mark.spec(f"{REQ}/refuse-a-file-of-partial-items", f"{REQ}#4", f"{REQ}#8")
def test_refuse_a_file_of_partial_items(tmp_path):
    path = tmp_path / "partial.f32"
    path.write_bytes(bytes(range(10)))
    with pytest.raises(ValueError, match=r"partial\.f32") as info:
        sw.FileBacked(sw.Float32, path=path)
    assert str(path) in str(info.value) and "Float32" in str(info.value)
    assert path.read_bytes() == bytes(range(10))
    assert open_descriptors(path) == []


@pytest.mark.spec(f"{REQ}/resize-a-file-to-n-slots", f"{REQ}#5")
def test_resize_a_file_to_n_slots(tmp_path):
    short, long = tmp_path / "short.i32", tmp_path / "long.i32"
    np.array([1, 2], dtype=np.int32).tofile(short)
    np.arange(1, 7, dtype=np.int32).tofile(long)
    grown, cut = sw.FileBacked(sw.Int32, 4, short), sw.FileBacked(sw.Int32, 4, long)
    assert np.fromfile(short, np.int32).tolist() == [1, 2, 0, 0] == grown.tolist()
    assert np.fromfile(long, np.int32).tolist() == [1, 2, 3, 4] == cut.tolist()
    created = sw.FileBacked(sw.Int32, 2, tmp_path / "created.i32")
    assert np.fromfile(created.path, np.int32).tolist() == [0, 0]


@pytest.mark.spec(f"{REQ}#6", f"{REQ}#8")
def test_an_immutable_filebacked_opens_read_only_and_never_resizes(tmp_path):
    path = tmp_path / "frozen.i32"
    np.array([1, 2], dtype=np.int32).tofile(path)
    with pytest.raises(ValueError, match=r"frozen\.i32"):
        sw.FileBacked(sw.Int32, 3, path, mutable=False)
    assert np.fromfile(path, np.int32).tolist() == [1, 2]
    c = sw.FileBacked(sw.Int32, 2, path, mutable=False)
    (fd,) = open_descriptors(path)
    fdinfo = pathlib.Path(f"/proc/self/fdinfo/{fd}").read_text()
    flags = int(fdinfo.split("flags:")[1].split()[0], 8)
    assert flags & os.O_ACCMODE == os.O_RDONLY
    with pytest.raises(RuntimeError, match="immutable"):
        c.write(0, 5)
    assert c.tolist() == [1, 2] and c.version == 0


@pytest.mark.spec(f"{REQ}/reject-an-abstract-dtype-for-a-file", f"{REQ}#7", f"{REQ}#8")
def test_reject_an_abstract_dtype_for_a_file(tmp_path, tmpdir_env):
    path = tmp_path / "abstract.bin"
    for make in (lambda: sw.FileBacked(sw.Floating, 2, path), lambda: sw.FileBacked(sw.Any)):
        with pytest.raises(TypeError, match="FileBacked") as info:
            make()
        assert "Floating" in str(info.value) or "Any" in str(info.value)
    assert not path.exists()
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.spec(f"{REQ}#8", f"{SLOTS}#3")
def test_a_malformed_construction_touches_no_file(tmp_path, tmpdir_env):
    path = tmp_path / "kept.i32"
    np.array([1, 2, 3], dtype=np.int32).tofile(path)
    with pytest.raises(TypeError, match=r"2\.5"):
        sw.FileBacked(sw.Int32, path=path, values=[1, 2.5])
    with pytest.raises(ValueError, match="n=3"):
        sw.FileBacked(sw.Int32, 3, path, values=[1])
    with pytest.raises(ValueError, match="negative"):
        sw.FileBacked(sw.Int32, -1)
    with pytest.raises(TypeError, match="dtype"):
        sw.FileBacked("float64", 1, path)
    assert np.fromfile(path, np.int32).tolist() == [1, 2, 3]
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.spec(f"{REQ}#10")
def test_allocate_extends_an_empty_file(tmp_path):
    c = sw.FileBacked(sw.Int32, 0, tmp_path / "empty.i32")
    c.allocate(3)
    assert c.slots == 3 and c.version == 1
    assert np.fromfile(c.path, np.int32).tolist() == [0, 0, 0]
    with pytest.raises(RuntimeError, match="already holds"):
        c.allocate(2)
    assert c.slots == 3 and c.version == 1


@pytest.mark.spec(f"{REQ}#11")
def test_filebacked_keeps_the_default_dlpack_hook_and_no_pointer(tmpdir_env):
    c = sw.FileBacked(sw.Float32, 2)
    with pytest.raises(BufferError, match="FileBacked"):
        c.dlpack_info()
    assert not hasattr(c, "pointer")
    assert sw.FileBacked.carrier_class.name == "FileBacked"
    assert sw.FileBacked.carrier_class.parent == sw.Carrier.carrier_class
    assert sw.carriers.FileBacked is sw.FileBacked
    assert c.version == 0 and not c.is_released


# -- temporary files and release ---------------------------------------------------------


@pytest.mark.spec(f"{REQ}/remove-a-temporary-file-at-release", f"{REQ}#2")
def test_remove_a_temporary_file_at_release(tmp_path, tmpdir_env):
    temp = sw.FileBacked(sw.Float32, 3)
    assert temp.path.parent == tmpdir_env and temp.path.stat().st_size == 12
    given = sw.FileBacked(sw.Float32, 3, tmp_path / "given.f32")
    given.write(1, 2.0)
    temp.release()
    given.release()
    assert not temp.path.exists()
    assert np.fromfile(given.path, np.float32).tolist() == [0.0, 2.0, 0.0]


@pytest.mark.spec(f"{REQ}#2")
def test_a_collected_carrier_removes_its_temporary_file(tmpdir_env):
    c = sw.FileBacked(sw.Int32, 2)
    path = c.path
    del c
    gc.collect()
    assert not path.exists()
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.spec(f"{REQ}/remove-a-temporary-file-at-interpreter-exit", f"{REQ}#2")
@pytest.mark.parametrize("ending", ["", "import sys; sys.exit(3)"])
def test_remove_a_temporary_file_at_interpreter_exit(tmpdir_env, ending):
    result = run_python(
        f"""
        import ctypes
        import strideweave as sw
        kept = sw.FileBacked(sw.Float32, 3)
        cycle = [sw.FileBacked(sw.Int32, 2)]
        cycle.append(cycle)
        leaked = sw.FileBacked(sw.Bool, 1)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(leaked))  # never destroyed: atexit only
        print(kept.path)
        print(cycle[0].path)
        print(leaked.path)
        {ending}
        """
    )
    paths = [pathlib.Path(p) for p in result.stdout.split()]
    assert len(paths) == 3 and all(p.parent == tmpdir_env for p in paths)
    assert not any(p.exists() for p in paths)


@pytest.mark.spec(f"{REQ}#2")
def test_a_forked_child_keeps_its_parents_temporary_files_and_os_exit_skips_removal(tmpdir_env):
    result = run_python(
        """
        import os
        import sys
        import strideweave as sw
        c = sw.FileBacked(sw.Float32, 3)
        pid = os.fork()
        if pid == 0:
            sys.exit(0)
        os.waitpid(pid, 0)
        print(c.path.exists())
        print(c.path, flush=True)  # os._exit does not flush stdout
        os._exit(0)
        """
    )
    exists, path = result.stdout.split()
    assert exists == "True"
    assert pathlib.Path(path).exists()
    pathlib.Path(path).unlink()


@pytest.mark.spec(f"{REQ}/close-the-file-at-release", f"{REQ}#12")
def test_close_the_file_at_release(tmp_path):
    path = tmp_path / "closed.f32"
    c = sw.FileBacked(sw.Float32, 2, path)
    c.write(1, 3.0)
    assert len(open_descriptors(path)) == 1
    assert c.release() is None
    assert c.release() is None
    assert open_descriptors(path) == []
    assert c.is_released and c.slots == 0 and c.version == 1
    label = repr(c).split()[1:3]
    for call in (lambda: c.read(0), c.tolist, lambda: c.write(0, 1.0), lambda: c.read_range(0, 1)):
        with pytest.raises(RuntimeError, match="released") as info:
            call()
        assert " ".join(label) in str(info.value)
    assert c.version == 1
    assert np.fromfile(path, np.float32).tolist() == [0.0, 3.0]


@pytest.mark.spec(f"{REQ}/create-an-empty-temporary-filebacked-like-another", f"{REQ}#12")
def test_create_an_empty_temporary_filebacked_like_another(tmp_path, tmpdir_env):
    c = sw.FileBacked(sw.Int32, 2, tmp_path / "like.i32")
    live_like = c.new_like()
    c.release()
    released_like = c.new_like()
    for like in (live_like, released_like):
        assert type(like) is sw.FileBacked
        assert like.dtype == sw.Int32 and like.slots == 0 and like.is_mutable()
        assert like.path.parent == tmpdir_env and like.path.stat().st_size == 0
        assert like.owner is None
    assert live_like.path != released_like.path


@pytest.mark.spec(f"{REQ}#12")
def test_a_python_subclass_keeps_its_class_through_new_like(tmpdir_env):
    class Spool(sw.FileBacked):
        pass

    like = Spool(sw.Float32, 2).new_like()
    assert type(like) is Spool and like.slots == 0
    assert Spool.carrier_class.parent == sw.FileBacked.carrier_class


# -- failed I/O --------------------------------------------------------------------------


@pytest.mark.spec(f"{IO}/report-a-missing-file", f"{IO}#1")
def test_report_a_missing_file(tmp_path):
    missing = tmp_path / "missing.f32"
    no_dir = tmp_path / "no-such-dir" / "x.f32"
    for make, path in (
        (lambda: sw.FileBacked(sw.Float32, path=missing), missing),
        (lambda: sw.FileBacked(sw.Float32, 2, no_dir), no_dir),
    ):
        with pytest.raises(FileNotFoundError) as info:
            make()
        assert info.value.errno == errno.ENOENT
        assert info.value.filename == str(path)
        assert str(path) in info.value.strerror
        assert not path.exists()


PERMISSION_SCRIPT = """
    import os
    import strideweave as sw
    path = {path!r}
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)
    else:
        os.chmod(path, 0)
    try:
        sw.FileBacked(sw.Int32, path=path)
    except OSError as e:
        print(type(e).__name__, e.errno, e.filename == path, path in str(e))
    """


@pytest.mark.spec(f"{IO}/report-a-permission-failure", f"{IO}#1")
def test_report_a_permission_failure(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    path = directory / "private.i32"
    np.array([1, 2], dtype=np.int32).tofile(path)
    os.chmod(path, 0o600)
    for p in (tmp_path, directory):
        os.chmod(p, 0o755)
    result = run_python(PERMISSION_SCRIPT.format(path=str(path)))
    assert result.stdout.split() == ["PermissionError", str(errno.EACCES), "True", "True"]
    os.chmod(path, 0o600)
    assert np.fromfile(path, np.int32).tolist() == [1, 2]


DISK_FULL_SCRIPT = """
    import errno, resource, signal
    import numpy as np
    import strideweave as sw
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    path = {path!r}
    c = sw.FileBacked(sw.Int32, 32, path)
    empty = sw.FileBacked(sw.Int32, 0, path + ".empty")
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
    try:
        c.write_range(0, np.ones(20, dtype=np.int32))
    except OSError as e:
        print("write", type(e).__name__, e.errno == errno.EFBIG, e.filename == path, path in str(e))
    print("state", c.version, c.is_released, c.slots, c.tolist()[20:] == [0] * 12)
    try:
        empty.allocate(100)
    except OSError as e:
        print("allocate", type(e).__name__, e.errno == errno.EFBIG, path in str(e))
    print("empty", empty.version, empty.slots)
    c.write_range(0, [5, 6, 7, 8])
    c.write(9, 10)
    print("after", c.read_range(0, 4), c.read(9), c.version)
    """


@pytest.mark.spec(f"{IO}/report-a-full-file-system", f"{IO}#1", f"{IO}#2")
def test_report_a_full_file_system(tmp_path):
    path = str(tmp_path / "full.i32")
    lines = run_python(DISK_FULL_SCRIPT.format(path=path)).stdout.splitlines()
    assert lines == [
        "write OSError True True True",
        "state 0 False 32 True",
        "allocate OSError True True",
        "empty 0 0",
        "after [5, 6, 7, 8] 10 2",
    ]


@pytest.mark.spec(f"{IO}#3")
def test_refuse_a_read_past_a_shortened_file(tmp_path):
    path = tmp_path / "shortened.i32"
    c = sw.FileBacked(sw.Int32, 4, path)
    os.truncate(path, 8)
    with pytest.raises(RuntimeError, match="shortened") as info:
        c.read_range(0, 4)
    assert str(path) in str(info.value) and "FileBacked carrier" in str(info.value)
    assert c.read_range(0, 2) == [0, 0] and c.version == 0 and not c.is_released


@pytest.mark.spec(f"{REQ}#14")
@pytest.mark.parametrize("cls", [sw.FileBacked, sw.BlockDeviceCarrier])
def test_refuse_a_path_that_names_no_file(cls, tmp_path):
    stem = tmp_path / "slots"
    for path in (f"{stem}\0tail", os.fsencode(f"{stem}\0tail"), pathlib.Path(f"{stem}\0tail")):
        with pytest.raises(ValueError, match="NUL byte") as info:
            cls(sw.Int32, 4, path=path)
        assert str(info.value).startswith(f"{cls.__name__}: path ")
    for path in (3, 1.5, ["a"]):
        with pytest.raises(TypeError, match=r"neither a str, bytes nor an os\.PathLike") as info:
            cls(sw.Int32, 4, path=path)
        assert str(info.value).startswith(f"{cls.__name__}: path ")
    assert list(tmp_path.iterdir()) == []
