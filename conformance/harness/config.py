"""Project layout and the ``[tool.strideweave.conformance]`` table of ``pyproject.toml``.

Guarantees:

* Specs are ``<root>/spec/<capability>/spec.md`` and clause pins ``<root>/spec/clauses.lock``;
  Python tests live in ``conformance/`` and ``property_tests/`` (all relative to the
  project root, i.e. the pytest rootdir).
* ``complete`` (default: empty) lists capabilities claimed complete. A missing
  ``pyproject.toml`` or table means nothing is claimed complete.
* Strict mode ``auto`` makes exactly the complete capabilities strict, ``all`` every
  capability, ``none`` no capability. Naming an unknown capability in ``complete`` is a
  ``ConfigError``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SPEC_DIR = "spec"
PYTHON_TEST_DIRS = ("conformance", "property_tests")
LOCK_NAME = "clauses.lock"
STRICT_MODES = ("auto", "all", "none")


class ConfigError(ValueError):
    """The conformance configuration is invalid."""


@dataclass(frozen=True)
class ProjectConfig:
    """Where a project keeps specs and tests, and what it claims complete."""

    root: Path
    complete: tuple[str, ...] = ()
    python_test_dirs: tuple[str, ...] = PYTHON_TEST_DIRS

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
    complete = table.get("complete", [])
    if not isinstance(complete, list) or not all(isinstance(c, str) for c in complete):
        raise ConfigError(
            f"{pyproject}: [tool.strideweave.conformance] complete must be a list of strings"
        )
    return ProjectConfig(root, tuple(complete))


def strict_capabilities(
    mode: str, complete: Iterable[str], capabilities: Iterable[str]
) -> frozenset[str]:
    """Capabilities whose unbound scenarios fail, for strict ``mode``."""
    known = frozenset(capabilities)
    if mode == "all":
        return known
    if mode == "none":
        return frozenset()
    if mode != "auto":
        raise ConfigError(f"strict mode must be one of {', '.join(STRICT_MODES)}, not {mode!r}")
    claimed = frozenset(complete)
    unknown = sorted(claimed - known)
    if unknown:
        raise ConfigError(
            "[tool.strideweave.conformance] complete names unknown capabilities: "
            + ", ".join(unknown)
        )
    return claimed
