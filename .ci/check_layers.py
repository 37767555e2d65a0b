"""Hold the C++ includes to the layer table of docs/architecture.md.

The table (section "Layers") lists every folder of src/cpp and src/bindings,
one row each, lowest first. A file of the library may include headers of its
own folder and of folders listed before it; an include of a folder listed
after it runs up the table and fails the check. So does a folder that is on
disk but not in the table, or in the table but not on disk: the table is the
map a reader trusts, and it stays true.

What counts: every #include "..." line of every .h and .cc of the library
and the binding under the listed folders. A gtest source (*_test.cc) is not
part of the library: it is compiled into a test executable that links the
whole library, and may test its folder together with the folders above it
(an operation's gradient through backward/, a profiler event through move/).

Usage: python .ci/check_layers.py [--root DIR] [--self-test]
Exit 0 with one summary line when the tree conforms; 1 with one line per
violation otherwise. --self-test first proves, on a generated tree, that the
check fails on an upward include, an unlisted folder and a stale row.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

TABLE_HEADING = "## Layers"
ROW = re.compile(r"^\|\s*`(?P<folder>src/[^`]+?)/?`\s*\|")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(?P<path>[^"]+)"', re.MULTILINE)
# The trees whose folders the table must cover, and how an include names a
# folder in each: core headers are included as "strideweave/<folder>/...",
# the test support as "testing/...", binding headers by bare file name.
TREES = ("src/cpp/strideweave", "src/cpp", "src/bindings")


def read_table(doc: Path) -> list[str]:
    """The folders of the layer table, lowest first."""
    text = doc.read_text(encoding="utf-8")
    start = text.find(TABLE_HEADING + "\n")
    if start < 0:
        raise SystemExit(f"check_layers: {doc} has no '{TABLE_HEADING}' section")
    folders: list[str] = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        match = ROW.match(line)
        if match:
            folders.append(match["folder"].rstrip("/"))
    if not folders:
        raise SystemExit(f"check_layers: the '{TABLE_HEADING}' section of {doc} lists no folder")
    return folders


def folders_on_disk(root: Path) -> set[str]:
    """Every folder that holds C++ sources directly, under the checked trees."""
    found = set()
    for tree in TREES:
        base = root / tree
        if not base.is_dir():
            continue
        for child in sorted(base.iterdir()):
            if child.is_dir() and any(child.glob("*.h")) | any(child.glob("*.cc")):
                found.add(child.relative_to(root).as_posix())
        if any(base.glob("*.h")) or any(base.glob("*.cc")):
            found.add(base.relative_to(root).as_posix())
    return found


def included_folder(include: str, including: str) -> str | None:
    """The table folder an include names, or None for a system/third-party one."""
    if include.startswith("strideweave/"):
        parts = include.split("/")
        return "src/cpp/strideweave/" + parts[1] if len(parts) > 2 else None
    if include.startswith("testing/"):
        return "src/cpp/testing"
    if "/" not in include:
        return including  # a header beside the including file
    return None


def check(root: Path) -> list[str]:
    """One line per violation; empty when the tree conforms."""
    folders = read_table(root / "docs" / "architecture.md")
    rank = {folder: index for index, folder in enumerate(folders)}
    problems = []
    for folder in sorted(set(folders) - folders_on_disk(root)):
        problems.append(f"docs/architecture.md lists {folder}/, which holds no C++ source")
    for folder in sorted(folders_on_disk(root) - set(folders)):
        problems.append(f"{folder}/ is missing from the layer table of docs/architecture.md")
    if len(rank) != len(folders):
        problems.append("docs/architecture.md lists a folder twice in its layer table")
    for folder in folders:
        for path in sorted((root / folder).glob("*")):
            if path.suffix not in (".h", ".cc") or path.stem.endswith("_test"):
                continue
            text = path.read_text(encoding="utf-8")
            for match in INCLUDE.finditer(text):
                target = included_folder(match["path"], folder)
                if target is None or target == folder:
                    continue
                if target not in rank:
                    problems.append(
                        f"{path.relative_to(root)}: includes {match['path']} "
                        f"from {target}/, which the layer table does not list"
                    )
                elif rank[target] > rank[folder]:
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(
                        f"{path.relative_to(root)}:{line}: includes {match['path']}: "
                        f"{target}/ is a higher layer than {folder}/ (listed after it)"
                    )
    return problems


def self_test() -> None:
    """The check fails on each kind of violation it claims to catch."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folder, text in {
            "src/cpp/strideweave/low": '#include "strideweave/high/b.h"\n',
            "src/cpp/strideweave/high": '#include "strideweave/low/a.h"\n',
            "src/cpp/strideweave/unlisted": "",
            "src/bindings": '#include "strideweave/high/b.h"\n#include "x.h"\n',
        }.items():
            (root / folder).mkdir(parents=True)
            (root / folder / "a.h").write_text(text)
        (root / "docs").mkdir()
        (root / "docs" / "architecture.md").write_text(
            "# x\n\n## Layers\n\n| folder | holds |\n|---|---|\n"
            "| `src/cpp/strideweave/low/` | a |\n| `src/cpp/strideweave/high/` | b |\n"
            "| `src/cpp/strideweave/gone/` | c |\n| `src/bindings/` | d |\n\n## Next\n"
        )
        found = check(root)
        expected = [
            "docs/architecture.md lists src/cpp/strideweave/gone/, which holds no C++ source",
            "src/cpp/strideweave/unlisted/ is missing from the layer table of docs/architecture.md",
            "src/cpp/strideweave/low/a.h:1: includes strideweave/high/b.h: "
            "src/cpp/strideweave/high/ is a higher layer than src/cpp/strideweave/low/ "
            "(listed after it)",
        ]
        if found != expected:
            raise SystemExit(
                "check_layers --self-test: expected\n  "
                + "\n  ".join(expected)
                + "\nfound\n  "
                + "\n  ".join(found)
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        print(
            "check_layers: self-test passed (an upward include, an unlisted folder and a "
            "stale row each fail the check)"
        )
    problems = check(args.root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layers: {len(problems)} violation(s) of the layer table")
        return 1
    folders = read_table(args.root / "docs" / "architecture.md")
    print(f"check_layers: {len(folders)} folders, 0 includes running up the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
