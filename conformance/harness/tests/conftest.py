"""Shared fixtures for the harness tests.

The ``pytester`` fixture comes from ``conformance.harness.plugin``, which loads pytest's
pytester plugin (pytest rejects ``pytest_plugins`` in non-root conftest files).
"""

from __future__ import annotations

import stat
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from strideweave._harness.catalog import Catalog
from strideweave._harness.openspec import load_specs, parse_spec
from strideweave._harness.pins import write_lock

REPO_ROOT = Path(__file__).resolve().parents[3]
SCENARIO_MODULE = REPO_ROOT / "conformance" / "test_spec_scenarios.py"

DEMO_SPEC = textwrap.dedent(
    """\
    # demo Specification

    ## Purpose

    A demo capability used by the harness tests.

    ## Requirements

    ### Requirement: Widgets are counted

    The counter SHALL count widgets. It MUST never go negative.

    #### Scenario: Count one widget

    - **WHEN** one widget is added
    - **THEN** the count is 1

    #### Scenario: Count none

    - **WHEN** nothing is added
    - **THEN** the count is 0

    ### Requirement: Widgets are named

    Every widget SHALL have a name.

    #### Scenario: Name a widget

    - **WHEN** a widget is created
    - **THEN** it has a name
    """
)

COUNT_ONE = "demo/widgets-are-counted/count-one-widget"
COUNT_NONE = "demo/widgets-are-counted/count-none"
NAME_ONE = "demo/widgets-are-named/name-a-widget"
COUNTED = "demo/widgets-are-counted"
NAMED = "demo/widgets-are-named"


def spec_document(requirements: str, purpose: str = "Purpose text.") -> str:
    """A spec whose Requirements section holds ``requirements`` (dedented)."""
    body = textwrap.dedent(requirements).strip()
    return f"# demo\n\n## Purpose\n\n{purpose}\n\n## Requirements\n\n{body}\n"


@pytest.fixture
def demo_catalog(tmp_path: Path) -> Catalog:
    """A catalog holding only the demo spec."""
    return Catalog([parse_spec(tmp_path / "demo" / "spec.md", DEMO_SPEC)])


@pytest.fixture
def project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., pytest.Pytester]:
    """Lay out a miniature project in the pytester directory and return the pytester.

    The project has ``pyproject.toml`` (making the directory the rootdir, with the given
    ``complete`` and ``complete_requirements`` lists), ``spec/demo/spec.md`` and a copy of the real
    ``conformance/test_spec_scenarios.py``. Inner runs load no third-party plugins.
    """
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    def make(
        complete: tuple[str, ...] = (),
        spec: str = DEMO_SPEC,
        requirements: tuple[str, ...] = (),
    ) -> pytest.Pytester:
        pytester.makefile(
            ".toml", pyproject=f"[tool.pytest.ini_options]\n\n{claims(complete, requirements)}"
        )
        (pytester.path / "spec" / "demo").mkdir(parents=True)
        (pytester.path / "spec" / "demo" / "spec.md").write_text(spec, encoding="utf-8")
        write(pytester, "conformance/test_spec_scenarios.py", SCENARIO_MODULE.read_text())
        return pytester

    return make


def claims(complete: tuple[str, ...], requirements: tuple[str, ...] = ()) -> str:
    """The ``[tool.strideweave.conformance]`` table claiming ``complete`` capabilities and
    ``requirements``."""

    def listed(names: tuple[str, ...]) -> str:
        return ", ".join(f'"{name}"' for name in names)

    return (
        f"[tool.strideweave.conformance]\ncomplete = [{listed(complete)}]\n"
        f"complete_requirements = [{listed(requirements)}]\n"
    )


def write(pytester: pytest.Pytester, relpath: str, text: str) -> Path:
    """Write ``text`` (dedented) to ``relpath`` under the pytester directory."""
    path = pytester.path / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run pytest in-process with the harness plugin, as the project's addopts do."""
    return pytester.runpytest(
        "-p",
        "conformance.harness.plugin",
        "--strict-markers",
        "-ra",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        *args,
    )


def pin(pytester: pytest.Pytester) -> None:
    """Pin the miniature project's clauses, as ``python -m conformance.harness pin`` does."""
    write_lock(pytester.path / "spec" / "clauses.lock", Catalog(load_specs(pytester.path / "spec")))


def fake_binary(directory: Path, listing: str, status: int = 0) -> Path:
    """An executable that prints ``listing`` for --gtest_list_tests and exits ``status``."""
    path = directory / "fake_tests"
    script = '#!/bin/sh\n[ "$1" = --gtest_list_tests ] || exit 9\n'
    path.write_text(f"{script}cat <<'EOF'\n{listing}EOF\nexit {status}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
