"""``python -m strideweave.kit MODULE:NAME [--html PATH] [--markdown PATH] [-- PYTEST ARGS]``.

Runs the kit's checks against one carrier factory, prints the requirement-coverage summary
and, for each failed check, the clauses it cites and what was observed; writes the HTML
and Markdown reports when asked. Exits with pytest's status: 0 when every check passed (or
was skipped), non-zero on any failure.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from strideweave._harness.html_report import to_html
from strideweave._harness.report import to_markdown
from strideweave.kit import FactoryError, load_factory

CHECKS = Path(__file__).resolve().parent / "checks"


class _Capture:
    """Keeps the session's recorder (pytest imports the plugin module itself)."""

    def __init__(self) -> None:
        self.recorders: list[Any] = []

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from strideweave.kit.plugin import recorder_of

        self.recorders.append(recorder_of(config))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the kit; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m strideweave.kit",
        description="Check a carrier class against the carrier-storage and movement contracts.",
    )
    parser.add_argument("factory", metavar="MODULE:NAME", help="the carrier factory to check")
    parser.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="write the Markdown report")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args(argv)
    try:
        load_factory(args.factory)
    except FactoryError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    capture = _Capture()
    with tempfile.TemporaryDirectory() as scratch:
        # An empty configuration: the caller's pytest.ini/pyproject.toml plays no part.
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n")
        # Hypothesis keeps its files in the scratch directory, not where the kit runs (set
        # through its environment variable: importing it here would keep pytest from
        # loading its plugin first).
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(Path(scratch) / "hypothesis")
        status = pytest.main(
            [
                str(CHECKS),
                "-c",
                str(ini),
                "--rootdir",
                str(CHECKS.parent),
                "-p",
                "no:cacheprovider",
                "-p",
                "strideweave.kit.plugin",
                "--strideweave-carrier",
                args.factory,
                "-q",
                "--tb=short",
                *args.pytest_args,
            ],
            plugins=[capture],
        )
    if capture.recorders:
        coverage = capture.recorders[0].coverage()
        if args.markdown:
            args.markdown.parent.mkdir(parents=True, exist_ok=True)
            args.markdown.write_text(to_markdown(coverage))
            print(f"strideweave.kit: wrote {args.markdown}")
        if args.html:
            args.html.parent.mkdir(parents=True, exist_ok=True)
            args.html.write_text(to_html(coverage))
            print(f"strideweave.kit: wrote {args.html}")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
