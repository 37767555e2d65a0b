"""Fails unless every expected suite wrote a JUnit/gtest XML with tests that ran.

pytest exits 5 when it collects nothing, which tox already reports as a
failure; this check also catches a suite that silently skipped everything.
"""

import pathlib
import sys
import xml.etree.ElementTree as ET

EXPECTED = [
    "cpp/strideweave_unit_tests.xml",
    "cpp/strideweave_property_tests.xml",
    "wheel.xml",
    "sanitize-cpp/strideweave_unit_tests.xml",
    "sanitize-cpp/strideweave_property_tests.xml",
    "sanitize.xml",
    "tsan-cpp/strideweave_unit_tests.xml",
    "tsan-cpp/strideweave_property_tests.xml",
]


def counts(path: pathlib.Path) -> tuple[int, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(s.get("tests", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) + int(s.get("disabled", 0)) for s in suites)
    return tests, skipped


# A file of one pytest run over several suites: each must have run tests (JUnit
# classnames are dotted node ids, e.g. conformance.core_layout.test_algebra).
SUITES = {
    "wheel.xml": ("conformance", "property_tests"),
    "sanitize.xml": ("conformance", "property_tests"),
}


def suites_without_tests(path: pathlib.Path, suites: tuple[str, ...]) -> list[str]:
    ran = set()
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("skipped") is None:
            ran.add((case.get("classname") or "").split(".", 1)[0])
    return [suite for suite in suites if suite not in ran]


def main(results: pathlib.Path) -> int:
    problems = []
    for name in EXPECTED:
        path = results / name
        if not path.exists():
            problems.append(f"{name}: missing (the suite did not run)")
            continue
        tests, skipped = counts(path)
        ran = tests - skipped
        print(f"{name}: {tests} tests, {skipped} skipped")
        if ran <= 0:
            problems.append(f"{name}: no test ran")
        for suite in suites_without_tests(path, SUITES.get(name, ())):
            problems.append(f"{name}: no {suite}/ test ran")
    for p in problems:
        print(f"check_results: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
