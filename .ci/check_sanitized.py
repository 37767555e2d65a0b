"""Fails unless the importable strideweave extension links the ASan runtime.

The sanitize env runs this before its Python suite, so a clean run cannot come
from an uninstrumented extension.
"""

import subprocess
import sys

import strideweave._core as core

linked = subprocess.run(["ldd", core.__file__], capture_output=True, text=True, check=True).stdout
if "libasan" not in linked:
    sys.exit(f"{core.__file__} is not built with AddressSanitizer")
print(f"{core.__file__}: sanitized")
