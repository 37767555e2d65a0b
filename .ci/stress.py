"""Reruns every test that depends on threads, timing or the GIL N times under load.

Usage: python .ci/stress.py [--runs N] [--load K] [--gtest-binary PATH]... [--only py|cpp]

The subset is found, not listed, so a new threaded test joins it by itself:

* Python: every test function under conformance/ and property_tests/ whose body names a
  threading or timing primitive (THREAD_NAMES), or a function or class of the suites
  that does, directly or through another (``thread_helpers``);
* C++: every gtest TEST in src/cpp/**/*_test.cc and property_tests/cpp/*.cc whose body
  names a thread, a sleep, a clock or a condition variable (CPP_THREAD_TOKENS).

K busy processes (default 2) load the machine for the whole run. Each Python
repetition is one pytest process over the subset (JUnit XML per run); each C++
repetition is one run of each binary filtered to the subset. The script prints one
line per test with its pass count, and exits 1 unless every test passed every run.

`tox -e stress` runs it against the wheel and the C++ tests of build/cpp.
"""

from __future__ import annotations

import argparse
import ast
import collections
import multiprocessing
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
THREAD_NAMES = frozenset(
    {
        # primitives
        "threading", "Thread", "Barrier", "Event", "Condition", "ThreadPoolExecutor",
        "concurrent", "time", "sleep", "monotonic", "perf_counter",
        # the suites' helpers that start threads, wait for them or gate a worker
        "wait_from_threads", "wait_until", "Pending", "Gate", "gated_copy",
        "metal_latency", "set_metal_latency",
    }
)  # fmt: skip
CPP_THREAD_TOKENS = re.compile(
    r"std::thread|std::jthread|std::async|sleep_for|sleep_until|steady_clock|"
    r"condition_variable|std::latch|std::barrier|ThreadPool|parallel_for|set_latency"
)
CPP_TEST = re.compile(r"^(?:TEST|TEST_F|TEST_P|RC_GTEST_PROP)\(\s*(\w+)\s*,\s*(\w+)", re.M)


def _names(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
        elif isinstance(n, ast.arg):
            found.add(n.arg)
    return found


def thread_helpers(trees: list[ast.Module]) -> frozenset[str]:
    """THREAD_NAMES and every top-level function or class of the suites whose body names
    one of them (``other_thread_ran_during``, ``wait_from_threads``, ...), repeated until
    no new helper appears, so a helper calling a helper counts too."""
    names = set(THREAD_NAMES)
    while True:
        found = {
            node.name
            for tree in trees
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
            and not node.name.startswith(("test", "Test"))
            and _names(node) & names
        }
        if found <= names:
            return frozenset(names)
        names |= found


def python_subset() -> list[str]:
    """Node ids (module::function, or module::Class::function) of the threaded tests."""
    files = [
        path
        for path in [*ROOT.glob("conformance/**/*.py"), *ROOT.glob("property_tests/*.py")]
        if "harness" not in path.parts
    ]
    trees = {path: ast.parse(path.read_text()) for path in sorted(files)}
    threaded = thread_helpers(list(trees.values()))
    subset = []
    for path, tree in trees.items():
        if not path.name.startswith("test_"):
            continue
        module = path.relative_to(ROOT).as_posix()
        for node in tree.body:
            tests = []
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                tests = [(node.name, node)]
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                tests = [
                    (f"{node.name}::{m.name}", m)
                    for m in node.body
                    if isinstance(m, ast.FunctionDef) and m.name.startswith("test")
                ]
            subset += [f"{module}::{name}" for name, fn in tests if _names(fn) & threaded]
    return subset


def cpp_subset() -> list[str]:
    """gtest names (Suite.Name) of the threaded C++ tests."""
    files = [*ROOT.glob("src/cpp/**/*_test.cc"), *ROOT.glob("property_tests/cpp/*.cc")]
    subset = []
    for path in sorted(files):
        text = path.read_text()
        starts = list(CPP_TEST.finditer(text))
        for i, match in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            if CPP_THREAD_TOKENS.search(text, match.end(), end):
                subset.append(f"{match.group(1)}.{match.group(2)}")
    return subset


def junit_outcomes(path: pathlib.Path) -> dict[str, bool]:
    """test name -> passed, for every test case of a JUnit/gtest XML file (skips excluded)."""
    outcomes: dict[str, bool] = {}
    if not path.exists():
        return outcomes
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("skipped") is not None or case.get("result") == "suppressed":
            continue
        if case.get("status") == "notrun":
            continue
        name = f"{case.get('classname')}.{case.get('name')}"
        failed = case.find("failure") is not None or case.find("error") is not None
        outcomes[name] = outcomes.get(name, True) and not failed
    return outcomes


def busy() -> None:  # a load process: one core's worth of work until killed
    while True:
        pass


def run_python(subset: list[str], runs: int, scratch: pathlib.Path) -> dict[str, list[bool]]:
    results: dict[str, list[bool]] = collections.defaultdict(list)
    for run in range(runs):
        xml = scratch / f"py-{run}.xml"
        command = [
            sys.executable, "-m", "pytest", *subset, "-q", "-p", "no:cacheprovider",
            f"--junitxml={xml}",
        ]  # fmt: skip
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        outcomes = junit_outcomes(xml)
        if not outcomes:
            sys.exit(f"stress: pytest ran nothing (exit {proc.returncode}):\n{proc.stdout[-3000:]}")
        for name, passed in outcomes.items():
            results[name].append(passed)
        print(f"python run {run + 1}/{runs}: {sum(outcomes.values())}/{len(outcomes)} passed")
        sys.stdout.flush()
    return results


def run_cpp(
    binaries: list[pathlib.Path], subset: list[str], runs: int, scratch: pathlib.Path
) -> dict[str, list[bool]]:
    results: dict[str, list[bool]] = collections.defaultdict(list)
    selection = "--gtest_filter=" + ":".join(subset)
    env = dict(os.environ)
    env.setdefault("RC_PARAMS", "max_success=100")
    # A TSan binary (build/tsan) reports with the project's suppressions, and stops at the
    # first report; other binaries ignore the variable.
    env.setdefault("TSAN_OPTIONS", f"halt_on_error=1:suppressions={ROOT / '.ci/tsan.supp'}")
    for binary in binaries:
        label = f"{binary.parent.name}/{binary.name}"
        for run in range(runs):
            xml = scratch / f"{binary.parent.name}-{binary.name}-{run}.xml"
            proc = subprocess.run(
                [str(binary), selection, f"--gtest_output=xml:{xml}"],
                capture_output=True,
                text=True,
                env=env,
            )
            outcomes = junit_outcomes(xml)
            # A sanitizer report or a crash fails the run even where every test passed.
            results[f"{label}: exit status 0"].append(proc.returncode == 0)
            if proc.returncode != 0:
                print(f"{label} run {run + 1}: exit {proc.returncode}\n{proc.stdout[-2000:]}")
            for name, passed in outcomes.items():
                results[f"{label}:{name}"].append(passed and proc.returncode == 0)
        print(f"c++ {label}: {runs} runs of the selected tests it holds")
        sys.stdout.flush()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--load", type=int, default=2, help="busy processes (default 2)")
    parser.add_argument("--gtest-binary", type=pathlib.Path, action="append", default=[])
    parser.add_argument("--only", choices=("py", "cpp"))
    parser.add_argument("--list", action="store_true", help="print the subset and exit")
    args = parser.parse_args(argv)
    binaries = args.gtest_binary or [
        ROOT / "build/cpp/strideweave_unit_tests",
        ROOT / "build/cpp/strideweave_property_tests",
    ]
    python_tests, cpp_tests = python_subset(), cpp_subset()
    if args.list:
        print("\n".join([*python_tests, *cpp_tests]))
        return 0
    print(f"stress: {len(python_tests)} Python tests, {len(cpp_tests)} C++ tests, "
          f"{args.runs} runs each, {args.load} busy processes")  # fmt: skip
    load = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.load)]
    for process in load:
        process.start()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            results: dict[str, list[bool]] = {}
            if args.only != "cpp":
                results |= run_python(python_tests, args.runs, pathlib.Path(scratch))
            if args.only != "py":
                missing = [b for b in binaries if not b.exists()]
                if missing:
                    sys.exit(f"stress: no C++ test binary at {', '.join(map(str, missing))}")
                results |= run_cpp(binaries, cpp_tests, args.runs, pathlib.Path(scratch))
    finally:
        for process in load:
            process.kill()
    flaky = 0
    for name in sorted(results):
        passes, total = sum(results[name]), len(results[name])
        flaky += passes != total or total != args.runs
        mark = "" if passes == total == args.runs else "   <- FLAKY"
        print(f"{passes:>3}/{args.runs}  {name}{mark}")
    print(f"stress: {len(results)} tests, {flaky} not passing {args.runs}/{args.runs}")
    return 1 if flaky else 0


if __name__ == "__main__":
    sys.exit(main())
