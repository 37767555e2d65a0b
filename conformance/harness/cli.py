"""Command line: ``python -m conformance.harness {list,check,pin}`` (see docs/conformance.md).

* ``list [--json]`` prints every id (indented by level), or the report's JSON document
  for no evidence (names, lines and clause text; every status ``missing``).
* ``check [--strict MODE] [--cpp-results DIR] [--gtest-binary PATH]...`` validates specs,
  citations (pytest collection in-process, C++ results and binaries), clause pins and
  strict capabilities' and requirements' scenarios; exit status 1 on any problem.
* ``pin`` rewrites ``spec/clauses.lock`` and prints each clause id it added, changed or
  dropped. Every command takes ``--root DIR`` (default: the current directory).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from strideweave._harness.catalog import Catalog
from strideweave._harness.config import STRICT_MODES, ConfigError, load_project_config
from strideweave._harness.coverage import MISSING, Evidence, build_coverage
from strideweave._harness.openspec import SpecError, load_specs
from strideweave._harness.pins import read_lock, write_lock
from strideweave._harness.report import to_json

from .cpp import ResultsError
from .evidence import collect_python, failures, load_project


def _list(catalog: Catalog, as_json: bool, out: TextIO) -> int:
    if as_json:
        json.dump(to_json(build_coverage(catalog, Evidence(), ())), out, indent=2)
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


# Where `tox` builds the C++ tests (tox.ini: the plain tree .pkg configures). `check` binds
# them from there when neither --gtest-binary nor --cpp-results is given.
DEFAULT_BINARIES = (
    Path("build/cpp/strideweave_unit_tests"),
    Path("build/cpp/strideweave_property_tests"),
)


def _default_binaries(root: Path) -> list[Path]:
    return [root / path for path in DEFAULT_BINARIES if (root / path).is_file()]


def _reason(problems: Sequence[str], missing: int, cpp_seen: bool) -> str:
    """The one-line reason a check failed."""
    parts = list(problems)
    if missing:
        scenarios = "scenario" if missing == 1 else "scenarios"
        unseen = " (C++ tests not seen, so scenarios bound only in C++ count as missing)"
        parts.append(f"{missing} strict {scenarios} bound by no test{'' if cpp_seen else unseen}")
    return "; ".join(parts)


def _check(args: argparse.Namespace, out: TextIO) -> int:
    binaries = [Path(binary) for binary in args.gtest_binary]
    found = _default_binaries(args.root) if args.cpp_results is None and not binaries else []
    cpp_seen = args.cpp_results is not None or bool(binaries) or bool(found)
    project = load_project(args.root, args.strict, args.cpp_results, binaries or found)
    if found:
        out.write(f"C++ tests: {', '.join(str(p.relative_to(args.root)) for p in found)}\n")
    elif not cpp_seen:
        out.write(
            "C++ tests not seen: pass --gtest-binary (built tests) or --cpp-results, "
            "or build them in build/cpp (tox -e cpp)\n"
        )
    python, drift = collect_python(
        args.root, project.config.test_dirs, project.catalog, project.pins
    )
    messages = failures(project, python, drift)
    problems = [message.split("\n", 1)[0].rstrip(":") for message in messages]
    broken = [d for d in drift if d.message.startswith("collection failed")]
    if broken:
        # Usually the extension is not importable here: say so first, in the reason line.
        modules = "module" if len(broken) == 1 else "modules"
        problems.insert(0, f"{len(broken)} test {modules} failed to collect (first: {broken[0]})")
    evidence = Evidence((*python, *project.cpp.citations))
    missing = clauses = 0
    for cap in build_coverage(project.catalog, evidence, project.strict).capabilities:
        unbound = [(r, s) for r in cap.requirements for s in r.scenarios if s.status == MISSING]
        counts = cap.counts.scenarios
        out.write(
            f"{cap.capability} ({cap.mode}): "
            f"{len(cap.requirements)} requirements, {counts['total']} scenarios, "
            f"{counts['bound']} bound, {len(unbound)} missing\n"
        )
        strict_unbound = [s.scenario.id for r, s in unbound if r.strict]
        missing += len(strict_unbound)
        messages += [f"missing: no test cites {scenario}" for scenario in strict_unbound]
        if project.config.every_clause_cited:
            uncited = [
                c.clause.id
                for r in cap.requirements
                if r.strict
                for c in r.clauses
                if c.status == MISSING
            ]
            clauses += len(uncited)
            messages += [f"missing: no test cites clause {clause}" for clause in uncited]
    out.write("".join(f"{message}\n" for message in messages))
    if clauses:
        problems.append(
            f"{clauses} clause{'s' if clauses != 1 else ''} of strict requirements cited by no test"
        )
    if messages:
        out.write(f"check failed: {_reason(problems, missing, cpp_seen)}\n")
        return 1
    out.write("check passed\n")
    return 0


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
