"""Runs a command, streaming its output, and prints a line whenever it has been quiet.

Usage:
  python .ci/heartbeat.py CMD [ARG...]
  python .ci/heartbeat.py --install-extras NAME [NAME...]

The first form runs CMD with its output passed through line by line; after every
QUIET_SECONDS without output it prints ``heartbeat: <what> still running (N s)``, so a
long compile, link or install never leaves a log silent for more than a minute. It exits
with CMD's status.

The second form pip-installs the optional dependencies NAME of pyproject.toml (the
``test`` extra: NumPy, PyTorch, hypothesis, pytest) the same way: tox's own dependency
install prints nothing while PyTorch unpacks. pyproject.toml stays their one list.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import threading
import time
import tomllib

QUIET_SECONDS = 30
ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(command: list[str], what: str) -> int:
    started = last = time.monotonic()
    lock = threading.Lock()
    done = threading.Event()

    def beat() -> None:
        nonlocal last
        while not done.wait(5):
            with lock:
                now = time.monotonic()
                if now - last >= QUIET_SECONDS:
                    print(f"heartbeat: {what} still running ({now - started:.0f} s)", flush=True)
                    last = now

    ticker = threading.Thread(target=beat, daemon=True)
    ticker.start()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    )
    assert process.stdout is not None
    for line in process.stdout:
        with lock:
            sys.stdout.write(line)
            sys.stdout.flush()
            last = time.monotonic()
    status = process.wait()
    done.set()
    ticker.join()
    print(f"heartbeat: {what} finished in {time.monotonic() - started:.0f} s", flush=True)
    return status


def extras(names: list[str]) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    missing = [name for name in names if name not in optional]
    if missing:
        sys.exit(f"heartbeat: pyproject.toml has no optional dependencies {missing}")
    return [requirement for name in names for requirement in optional[name]]


def main(argv: list[str]) -> int:
    if not argv:
        sys.exit(__doc__)
    if argv[0] == "--install-extras":
        requirements = extras(argv[1:])
        command = [sys.executable, "-m", "pip", "install", "--progress-bar", "off", *requirements]
        return run(command, f"installing {' '.join(argv[1:])} dependencies")
    return run(argv, " ".join([pathlib.Path(argv[0]).name, *argv[1:4]]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
