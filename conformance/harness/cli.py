"""Command line: ``python -m conformance.harness {list,check,pin}``.

* ``list [--json] [--root DIR]`` prints every capability, requirement, scenario and clause
  id (indented by level), or with ``--json`` the full structure with names and clause text.
* ``check [--root DIR] [--strict auto|all|none] [--cpp-results DIR] [--gtest-binary PATH]``
  validates every spec and every citation: Python ones from pytest's collection of the
  project's test folders (in-process, nothing runs), C++ ones from the given result files
  and binaries (without either, C++ tests are not seen, and a line says so). Exit status:
  0 clean, 1 on a malformed spec or lock, invalid configuration, unreadable C++ evidence, a
  module that fails to collect, a citation of an unknown id, a clause pin mismatch, or an
  unbound scenario in a strict capability.
* ``pin [--root DIR]`` rewrites ``spec/clauses.lock`` from the current specs (see ``pins``)
  and prints each clause id whose pin it added, changed or dropped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .catalog import Catalog
from .config import STRICT_MODES, ConfigError, load_project_config
from .coverage import MISSING, Evidence, build_coverage
from .cpp import ResultsError
from .evidence import collect_python, failures, load_project
from .openspec import Spec, SpecError, load_specs
from .pins import read_lock, write_lock


def _spec_json(spec: Spec) -> dict[str, Any]:
    return {
        "capability": spec.capability,
        "path": spec.path.as_posix(),
        "requirements": [
            {
                "id": req.id,
                "name": req.name,
                "line": req.line,
                "scenarios": [
                    {"id": sc.id, "name": sc.name, "line": sc.line} for sc in req.scenarios
                ],
                "clauses": [
                    {"id": cl.id, "number": cl.number, "text": cl.text} for cl in req.clauses
                ],
            }
            for req in spec.requirements
        ],
    }


def _list(catalog: Catalog, as_json: bool, out: TextIO) -> int:
    if as_json:
        json.dump({"capabilities": [_spec_json(s) for s in catalog.specs]}, out, indent=2)
        out.write("\n")
        return 0
    for spec in catalog.specs:
        out.write(f"{spec.capability}\n")
        for req in spec.requirements:
            out.write(f"  {req.id}\n")
            for sc in req.scenarios:
                out.write(f"    {sc.id}\n")
            for cl in req.clauses:
                out.write(f"    {cl.id}\n")
    return 0


def _check(args: argparse.Namespace, out: TextIO) -> int:
    binaries = [Path(binary) for binary in args.gtest_binary]
    project = load_project(args.root, args.strict, args.cpp_results, binaries)
    if args.cpp_results is None and not binaries:
        out.write("C++ tests not seen: pass --gtest-binary (built tests) or --cpp-results\n")
    test_dirs = [args.root / directory for directory in project.config.python_test_dirs]
    python, drift = collect_python(args.root, test_dirs, project.catalog, project.pins)
    messages = failures(project, python, drift)
    evidence = Evidence((*python, *project.cpp.citations))
    for cap in build_coverage(project.catalog, evidence, project.strict).capabilities:
        missing = [s for r in cap.requirements for s in r.scenarios if s.status == MISSING]
        counts = cap.counts.scenarios
        out.write(
            f"{cap.capability} ({'strict' if cap.strict else 'not strict'}): "
            f"{len(cap.requirements)} requirements, {counts['total']} scenarios, "
            f"{counts['bound']} bound, {len(missing)} missing\n"
        )
        if cap.strict:
            messages += [f"missing: no test cites {s.scenario.id}" for s in missing]
    out.write("".join(f"{message}\n" for message in messages))
    out.write("check failed\n" if messages else "check passed\n")
    return 1 if messages else 0


def _pin(root: Path, catalog: Catalog, out: TextIO) -> int:
    lock = load_project_config(root).lock_path
    before = read_lock(lock)
    write_lock(lock, catalog)
    after = read_lock(lock)
    for clause_id in sorted(before.keys() | after.keys()):
        old, new = before.get(clause_id), after.get(clause_id)
        if old != new:
            change = "added" if old is None else "dropped" if new is None else "changed"
            out.write(f"{change}: {clause_id}\n")
    out.write(f"pinned {len(after)} clauses in {lock}\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.harness", description="StrideWeave spec conformance tools"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    list_cmd = commands.add_parser("list", help="print every spec id")
    list_cmd.add_argument("--json", action="store_true", help="print JSON with names and text")
    check_cmd = commands.add_parser("check", help="validate specs and citations statically")
    check_cmd.add_argument("--strict", choices=STRICT_MODES, default="auto")
    check_cmd.add_argument("--cpp-results", metavar="DIR", type=Path, default=None)
    check_cmd.add_argument("--gtest-binary", metavar="PATH", action="append", default=[])
    pin_cmd = commands.add_parser("pin", help="re-pin every clause's text in spec/clauses.lock")
    for command in (list_cmd, check_cmd, pin_cmd):
        command.add_argument(
            "--root", type=Path, default=Path("."), help="project root (default: .)"
        )
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; return the exit status."""
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    root = args.root.resolve()
    args.root = root
    try:
        catalog = Catalog(load_specs(root / "spec", relative_to=root))
        if args.command == "list":
            return _list(catalog, args.json, out)
        if args.command == "pin":
            return _pin(root, catalog, out)
        return _check(args, out)
    except SpecError as error:
        out.write(f"malformed spec:\n{error}\n")
    except (ConfigError, ResultsError) as error:
        out.write(f"error: {error}\n")
    return 1
