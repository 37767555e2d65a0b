"""Prints one table of each tox env's wall time from tox's --result-json file.

Usage: python .ci/env_times.py RESULT_JSON [TOTAL_SECONDS]

The `(.pkg_external, within)` row is the wheel build (the plain C++ build of the run):
tox times it apart, but it runs inside the first env that installs the wheel (cpp), and
that env's time includes it.
"""

from __future__ import annotations

import json
import pathlib
import sys


def seconds(env: dict) -> float:
    duration = env.get("result", {}).get("duration")
    if duration is not None:
        return float(duration)
    steps = [*env.get("setup", []), *env.get("test", [])]
    return sum(float(step.get("elapsed", 0.0)) for step in steps)


def outcome(env: dict) -> str:
    result = env.get("result", {})
    if result.get("skipped"):
        return "skipped"
    if "success" not in result:
        return "built" if env.get("setup") else "-"
    return "OK" if result["success"] else f"FAIL (exit {result.get('exit_code')})"


def main(path: pathlib.Path, total: float | None) -> int:
    if not path.exists():
        print(f"env_times: {path} missing (tox did not start)", file=sys.stderr)
        return 1
    envs = json.loads(path.read_text()).get("testenvs", {})
    ran = {name: env for name, env in envs.items() if env.get("result") or env.get("setup")}
    # A packaging env runs inside the first env that installs its package: its row is
    # part of that env's time, not added to the total.
    rows = [
        (f"  ({name}, within)" if name.startswith(".pkg") else name, outcome(env), seconds(env))
        for name, env in ran.items()
    ]
    width = max([len("env"), *(len(name) for name, _, _ in rows)])
    print(f"{'env':<{width}}  {'result':<16}  {'wall s':>7}")
    for name, result, wall in rows:
        print(f"{name:<{width}}  {result:<16}  {wall:>7.0f}")
    if total is not None:
        print(f"{'.ci/run total':<{width}}  {'':<16}  {total:>7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else None))
