"""``check`` and the report over a synthetic 300-scenario spec and the real 62-scenario one.

Both run end to end (pytest collection, coverage, every report format); compare their
durations with ``pytest conformance/harness/tests/test_scaling.py --durations=0``.
"""

import json
import textwrap

import pytest

from strideweave._harness.catalog import Catalog
from strideweave._harness.openspec import load_specs
from strideweave._harness.pins import write_lock

from .conftest import REPO_ROOT, SCENARIO_MODULE, run, write
from .test_cli import cli
from .test_html_report import Elements


def synthetic_spec(requirements: int, scenarios: int) -> str:
    """A spec of ``requirements`` requirements with ``scenarios`` scenarios and two clauses."""
    parts = ["# synthetic\n\n## Purpose\n\nScale test.\n\n## Requirements\n"]
    for r in range(requirements):
        parts.append(
            f"\n### Requirement: Rule {r}\n\nRule {r} SHALL hold. It MUST hold for n = {r}.\n"
        )
        parts += [
            f"\n#### Scenario: Case {r} {s}\n\n- **WHEN** case {s}\n- **THEN** rule {r} holds\n"
            for s in range(scenarios)
        ]
    return "".join(parts)


def lay_out(pytester: pytest.Pytester, capability: str, spec: str) -> Catalog:
    """A strict project holding one spec and one passing test per scenario and clause."""
    pytester.makefile(
        ".toml",
        pyproject="[tool.pytest.ini_options]\n\n"
        f'[tool.strideweave.conformance]\ncomplete = ["{capability}"]\n',
    )
    write(pytester, f"spec/{capability}/spec.md", spec)
    write(pytester, "conformance/test_spec_scenarios.py", SCENARIO_MODULE.read_text())
    catalog = Catalog(load_specs(pytester.path / "spec"))
    write_lock(pytester.path / "spec" / "clauses.lock", catalog)
    targets = [*catalog.scenario_ids()]
    targets += [r.clauses[0].id for spec in catalog.specs for r in spec.requirements]
    tests = [
        f"@pytest.mark.spec({target!r})\ndef test_{n}():\n    pass\n"
        for n, target in enumerate(targets)
    ]
    write(pytester, "conformance/test_bound.py", "import pytest\n\n" + "\n".join(tests))
    return catalog


@pytest.mark.parametrize(
    ("capability", "spec", "count"),
    [
        pytest.param("synthetic", synthetic_spec(60, 5), 300, id="synthetic-300"),
        pytest.param(
            "interop-movement",
            (REPO_ROOT / "spec" / "interop-movement" / "spec.md").read_text(),
            62,
            id="interop-movement-62",
        ),
    ],
)
def test_check_and_report(pytester, monkeypatch, capability, spec, count):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    catalog = lay_out(pytester, capability, textwrap.dedent(spec))
    assert len(catalog.scenario_ids()) == count

    status, text = cli("check", "--root", str(pytester.path))
    assert status == 0, text
    assert f"{count} scenarios, {count} bound, 0 missing" in text

    result = run(pytester, "--spec-report", "reports", "-q")
    assert result.ret == 0
    reports = pytester.path / "reports"
    data = json.loads((reports / "spec-coverage.json").read_text())
    assert data["capabilities"][0]["counts"]["scenarios"]["passing"] == count
    shown = Elements((reports / "spec-coverage.html").read_text()).kinds("scenario")
    assert sorted(shown) == sorted((sid, "pass") for sid in catalog.scenario_ids())
