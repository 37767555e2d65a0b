"""Fails when a C++ file of ours is not clang-format clean."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = [
    p
    for top in ("src", "property_tests", "docs")
    for p in sorted((ROOT / top).rglob("*"))
    if p.suffix in {".h", ".cc"}
]

result = subprocess.run(["clang-format", "--dry-run", "--Werror", *map(str, SOURCES)], check=False)
sys.exit(result.returncode)
