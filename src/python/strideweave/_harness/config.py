"""Project layout and the ``[tool.strideweave.conformance]`` table of ``pyproject.toml``.

Guarantees:

* Specs are ``<root>/spec/<capability>/spec.md`` and clause pins ``<root>/spec/clauses.lock``;
  Python tests live in ``conformance/`` and ``property_tests/`` (all relative to the
  project root, i.e. the pytest rootdir).
* ``complete`` (default: empty) lists capabilities claimed complete and
  ``complete_requirements`` (default: empty) requirement ids claimed complete in capabilities
  not claimed as a whole. A missing ``pyproject.toml`` or table means nothing is claimed.
* ``machine_skips`` (default: empty) declares the tests that skip on machines lacking
  something (no O_DIRECT, no tmpfs): an array of tables with ``test`` (a Python node id,
  optionally with one parameter id ``[p]``, or a C++ ``Suite.Name``), ``needs`` (what such
  a machine lacks) and
  ``fallback`` (the test that covers the same ids there); ``evidence.failures`` checks
  that both exist and that the fallback cites every id the test cites.
* ``every_clause_cited`` (default: false): every SHALL clause of a strict requirement must
  be cited; the plugin then adds one item per requirement (``test_clauses_cited``) and
  ``check`` reports each uncited clause.
* Strict mode ``auto`` makes exactly the claimed capabilities and requirements strict,
  ``all`` every capability, ``none`` nothing. In every mode, naming an unknown capability or
  requirement, or a requirement of a capability listed in ``complete``, is a ``ConfigError``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .catalog import suggestion

SPEC_DIR = "spec"
PYTHON_TEST_DIRS = ("conformance", "property_tests")
LOCK_NAME = "clauses.lock"
STRICT_MODES = ("auto", "all", "none")
TABLE = "[tool.strideweave.conformance]"


class ConfigError(ValueError):
    """The conformance configuration is invalid."""


@dataclass(frozen=True)
class MachineSkip:
    """A test that skips on machines lacking ``needs``; ``fallback`` covers its ids there."""

    test: str
    needs: str
    fallback: str

    def matches(self, test: str) -> bool:
        """Whether ``test`` (a node id, perhaps parametrized, or a C++ label) is this one."""
        return selects(self.test, test)


def selects(pattern: str, test: str) -> bool:
    """Whether ``test`` is the test ``pattern`` names: the same node id or C++ label with
    any parameters, or, when ``pattern`` ends in ``[p]``, only the instances whose
    parameter id has ``p`` among its ``-``-separated parts."""
    base, _, params = test.partition("[")
    wanted_base, _, wanted = pattern.partition("[")
    if base != wanted_base:
        return False
    return not wanted or wanted.rstrip("]") in params.rstrip("]").split("-")


@dataclass(frozen=True)
class ProjectConfig:
    """Where a project keeps specs and tests, what it claims complete, and which tests
    may skip on some machines."""

    root: Path
    complete: tuple[str, ...] = ()
    complete_requirements: tuple[str, ...] = ()
    python_test_dirs: tuple[str, ...] = PYTHON_TEST_DIRS
    machine_skips: tuple[MachineSkip, ...] = ()
    every_clause_cited: bool = False

    def machine_skip(self, test: str) -> MachineSkip | None:
        """The declaration ``test`` falls under, if any."""
        return next((skip for skip in self.machine_skips if skip.matches(test)), None)

    @property
    def spec_root(self) -> Path:
        return self.root / SPEC_DIR

    @property
    def test_dirs(self) -> list[Path]:
        return [self.root / directory for directory in self.python_test_dirs]

    @property
    def lock_path(self) -> Path:
        return self.spec_root / LOCK_NAME


def load_project_config(root: Path) -> ProjectConfig:
    """Read ``<root>/pyproject.toml``; raise ``ConfigError`` on invalid content."""
    root = Path(root)
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return ProjectConfig(root)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: {error}") from error
    table = data.get("tool", {}).get("strideweave", {}).get("conformance", {})
    claims = {}
    for key in ("complete", "complete_requirements"):
        names = table.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{pyproject}: {TABLE} {key} must be a list of strings")
        claims[key] = tuple(names)
    every_clause_cited = table.get("every_clause_cited", False)
    if not isinstance(every_clause_cited, bool):
        raise ConfigError(f"{pyproject}: {TABLE} every_clause_cited must be true or false")
    return ProjectConfig(
        root,
        **claims,
        machine_skips=_machine_skips(table, pyproject),
        every_clause_cited=every_clause_cited,
    )


def _machine_skips(table: Mapping, pyproject: Path) -> tuple[MachineSkip, ...]:
    entries = table.get("machine_skips", [])
    keys = ("test", "needs", "fallback")
    if not isinstance(entries, list):
        raise ConfigError(f"{pyproject}: {TABLE} machine_skips must be an array of tables")
    skips = []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or sorted(entry) != sorted(keys)
            or not all(isinstance(entry[k], str) and entry[k] for k in keys)
        ):
            raise ConfigError(
                f"{pyproject}: {TABLE} machine_skips entries need exactly the non-empty "
                f"strings {', '.join(keys)}: {entry!r}"
            )
        skips.append(MachineSkip(entry["test"], entry["needs"], entry["fallback"]))
    return tuple(skips)


def strict_ids(
    mode: str,
    complete: Iterable[str],
    complete_requirements: Iterable[str],
    requirements: Mapping[str, Iterable[str]],
) -> frozenset[str]:
    """Capability names and requirement ids whose unbound scenarios fail, for strict ``mode``.

    ``requirements`` maps every capability to its requirement ids.
    """
    if mode not in STRICT_MODES:
        raise ConfigError(f"strict mode must be one of {', '.join(STRICT_MODES)}, not {mode!r}")
    claimed = frozenset(complete)
    unknown = sorted(claimed - requirements.keys())
    if unknown:
        raise ConfigError(f"{TABLE} complete names unknown capabilities: {', '.join(unknown)}")
    owner = {rid: capability for capability, ids in requirements.items() for rid in ids}
    claimed_requirements = frozenset(complete_requirements)
    unknown = sorted(claimed_requirements - owner.keys())
    if unknown:
        raise ConfigError(
            f"{TABLE} complete_requirements names unknown requirements: "
            + ", ".join(f"{rid}{suggestion(rid, owner)}" for rid in unknown)
        )
    covered = sorted(rid for rid in claimed_requirements if owner[rid] in claimed)
    if covered:
        raise ConfigError(
            f"{TABLE} complete_requirements names requirements of capabilities listed in "
            f"complete: {', '.join(covered)}"
        )
    if mode == "all":
        return frozenset(requirements)
    return claimed | claimed_requirements if mode == "auto" else frozenset()
