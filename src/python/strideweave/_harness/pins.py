"""Clause pins: ``spec/clauses.lock`` holds the text every clause id had when last reviewed.

One line per clause of every spec, sorted: ``<clause-id> <fingerprint> <text>``; the
fingerprint is the first 12 hex digits of the SHA-256 of the whitespace-normalised text.
``write_lock`` pins every clause, so pinning never depends on which tests are visible.
``pin_problems`` flags each cited clause that is not pinned, whose text no longer matches
its pin, or whose pinned clause is gone, naming the citing tests, the pinned and current
text and where the pinned text moved; edits to uncited clauses are never flagged. A missing
lock pins nothing; a malformed line raises ``ConfigError``.
"""

from __future__ import annotations

import hashlib
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .catalog import Catalog
from .citations import Citation
from .config import ConfigError

REPIN_COMMAND = "python -m conformance.harness pin"
_HEADER = (
    "# Clause pins: <clause-id> <fingerprint> <text>. Generated; after reviewing the tests\n"
    f"# that cite a changed clause, regenerate with `{REPIN_COMMAND}`.\n"
)


@dataclass(frozen=True)
class Pin:
    fingerprint: str
    text: str


def fingerprint(text: str) -> str:
    """The fingerprint of a clause text (whitespace-insensitive)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]


def render_lock(catalog: Catalog) -> str:
    """The lock file content pinning every clause of ``catalog``."""
    clauses = sorted(catalog.clauses(), key=lambda clause: clause.id)
    lines = [f"{c.id} {fingerprint(c.text)} {' '.join(c.text.split())}\n" for c in clauses]
    return _HEADER + "".join(lines)


def read_lock(path: Path) -> dict[str, Pin]:
    """The pins recorded in ``path`` by clause id; an absent file pins nothing."""
    if not path.is_file():
        return {}
    pins = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(" ", 2)
        if len(parts) != 3 or "#" not in parts[0] or len(parts[1]) != 12:
            raise ConfigError(f"{path}:{number}: malformed pin; regenerate: {REPIN_COMMAND}")
        pins[parts[0]] = Pin(parts[1], parts[2])
    return pins


def pin_problems(
    citations: Iterable[Citation], catalog: Catalog, pins: Mapping[str, Pin]
) -> list[str]:
    """One message per cited clause whose pin does not match the spec (see module doc)."""
    citing: dict[str, list[str]] = {}
    for citation in citations:
        if "#" in citation.target:
            citing.setdefault(citation.target, []).append(f"{citation.test} [{citation.kind}]")
    texts = {clause.id: clause.text for clause in catalog.clauses()}
    problems = []
    for clause_id in sorted(citing):
        pin = pins.get(clause_id)
        now = texts.get(clause_id)
        if pin is not None and now is not None and pin.fingerprint == fingerprint(now):
            continue
        if pin is None and now is None:
            continue  # an unknown id: reported as drift
        lines = [f"{clause_id}: " + ("not pinned" if pin is None else "changed since pinned")]
        if pin is not None:
            lines.append(f"    pinned: {pin.text}")
        lines.append(f"    now:    {now if now is not None else '(no such clause any more)'}")
        if pin is not None:
            moved = [c for c, text in texts.items() if fingerprint(text) == pin.fingerprint]
            if moved:
                lines.append(f"    the pinned text is now {', '.join(sorted(moved))}")
        lines += [f"    cited by {test}" for test in sorted(set(citing[clause_id]))]
        problems.append("\n".join(lines))
    return problems


def pin_failure(problems: list[str], lock: Path) -> str:
    """The message that fails a run on ``problems``."""
    return (
        "spec clause pins do not match (a cited SHALL/MUST sentence was added, reworded, "
        "moved or deleted):\n"
        + "\n".join(textwrap.indent(problem, "  ") for problem in problems)
        + f"\nReview each citing test against the current text and fix its citation, then "
        f"re-pin {lock} with:\n    {REPIN_COMMAND}"
    )


def write_lock(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_lock(catalog), encoding="utf-8")
