"""Prepares `tox -e wheel`: proves the installed strideweave is the repaired wheel, then
copies the test tree (without the Python package) to where the suites run.

Usage: python .ci/wheel_tree.py SOURCE_ROOT DESTINATION

It fails unless
* the installed distribution's WHEEL file carries only manylinux tags (auditwheel's
  repair, not the plain linux_x86_64 build);
* ``strideweave`` and ``strideweave._core`` are imported from this environment's
  site-packages, outside the source tree;
* the wheel ships the spec files the carrier kit reads (``strideweave/spec/<capability>/
  spec.md``, identical to the source tree's);
* the package's ``__all__`` lists exactly the capability modules' public names and the
  movement names the spec puts at the top level (the literal list type checkers read
  cannot drift from the modules).

The copy holds what the conformance harness reads (``pyproject.toml``, ``spec/`` and the
Python tests), ``bench/`` (conformance/test_bench_page.py tests ``bench.page``; the
scripts import ``strideweave`` and hold no copy of it), ``docs/`` (test_kit.py runs the
carrier docs/carrier-kit.md shows) and no ``src/``, so nothing in it can shadow the
installed package.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pathlib
import shutil
import sys
import sysconfig

COPIED = ("pyproject.toml", "spec", "conformance", "property_tests", "bench", "docs")
IGNORED = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache")


def fail(message: str) -> None:
    print(f"wheel_tree: {message}", file=sys.stderr)
    sys.exit(1)


def check_installed(source: pathlib.Path) -> None:
    site = {pathlib.Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    for name in ("strideweave", "strideweave._core"):
        module = importlib.import_module(name)
        where = pathlib.Path(module.__file__ or "").resolve()
        if not any(where.is_relative_to(s) for s in site):
            fail(f"{name} imported from {where}, not from site-packages {sorted(map(str, site))}")
        if where.is_relative_to((source / "src").resolve()):
            fail(f"{name} imported from the source tree: {where}")
        print(f"wheel_tree: {name} from {where}")

    wheel = importlib.metadata.distribution("strideweave").read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    if not tags or not all("-manylinux_" in tag for tag in tags):
        fail(f"the installed wheel is not a repaired manylinux wheel: tags {tags}")
    print(f"wheel_tree: installed wheel tags {', '.join(tags)}")

    import strideweave as sw
    from strideweave import kit

    # The carrier kit reads the spec files the wheel ships (CMakeLists.txt installs them).
    for capability in kit.CAPABILITIES:
        shipped = pathlib.Path(sw.__file__).resolve().parent / "spec" / capability / "spec.md"
        source_spec = source / "spec" / capability / "spec.md"
        if not shipped.is_file() or shipped.read_bytes() != source_spec.read_bytes():
            fail(f"the wheel does not ship {source_spec} as {shipped}")
        print(f"wheel_tree: ships {shipped}")

    modules = (sw.autograd, sw.carriers, sw.dtypes, sw.layout, sw.ops, sw.profiling, sw.tensors)
    # spec/interop-movement: these are importable from the top level and from
    # strideweave.carriers.move; the registry functions only from the latter.
    movement = {"AwaitMove", "AwaitResult", "move", "move_async"}
    if not movement <= set(sw.carriers.move.__all__):
        fail(f"strideweave.carriers.move.__all__ lacks {sorted(movement)}")
    # spec/interop-movement: AwaitProjection and AwaitResidency are importable from
    # strideweave.carriers.tiled_evictable (TiledEvictable also from the top level).
    tiled = {"AwaitProjection", "AwaitResidency", "TiledEvictable"}
    if set(sw.carriers.tiled_evictable.__all__) != tiled:
        fail(f"strideweave.carriers.tiled_evictable.__all__ is not {sorted(tiled)}")
    expected = sorted({name for m in modules for name in m.__all__} | movement)
    if sorted(sw.__all__) != expected:
        fail(f"strideweave.__all__ {sorted(sw.__all__)} != the modules' names {expected}")


def copy_tree(source: pathlib.Path, destination: pathlib.Path) -> None:
    if destination.exists():
        shutil.rmtree(destination)
    for relative in COPIED:
        src, dst = source / relative, destination / relative
        if src.is_dir():
            shutil.copytree(src, dst, ignore=IGNORED)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    if (destination / "src").exists() or (destination / "strideweave").exists():
        fail(f"{destination} holds a copy of the Python package")
    shadows = [*destination.rglob("strideweave"), *destination.rglob("strideweave.py")]
    shadows += destination.rglob("_core*.so")
    if shadows:
        fail(f"{destination} holds what could shadow the installed package: {shadows}")
    print(f"wheel_tree: tests copied to {destination}")


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        fail("usage: wheel_tree.py SOURCE_ROOT DESTINATION")
    source, destination = map(pathlib.Path, argv)
    check_installed(source)
    copy_tree(source, destination)


if __name__ == "__main__":
    main(sys.argv[1:])
