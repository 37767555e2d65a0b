"""The repository's own specs parse under the harness rules."""

from strideweave._harness.catalog import Catalog
from strideweave._harness.openspec import load_specs

from .conftest import REPO_ROOT


def test_repository_specs_parse():
    specs = {s.capability: s for s in load_specs(REPO_ROOT / "spec", relative_to=REPO_ROOT)}
    assert {"core-layout", "interop-movement"} <= specs.keys()
    interop = specs["interop-movement"]
    assert len(interop.requirements) == 27
    assert sum(len(r.scenarios) for r in interop.requirements) == 62
    assert all(r.clauses for spec in specs.values() for r in spec.requirements)
    catalog = Catalog(list(specs.values()))
    scenario_ids = catalog.scenario_ids()
    assert len(scenario_ids) == len(set(scenario_ids))
