"""Spec conformance harness: binds tests to OpenSpec ids and reports coverage.

Modules:

* ``openspec``  - parser and frozen data model (Spec, Requirement, Clause, Scenario).
* ``ids``       - slugs and id shapes; ``clauses`` - normative sentence extraction.
* ``catalog``   - index of citable ids; ``citations`` - citation model, static Python scan.
* ``cpp``       - C++ test-name citations; ``gtest_xml`` - gtest XML results.
* ``coverage``  - statuses and scenario verdicts; ``report`` - Markdown/JSON/JUnit output.
* ``config``    - project layout and ``[tool.strideweave.conformance]``.
* ``plugin``    - the pytest plugin; ``cli`` - ``python -m conformance.harness``.

Nothing here imports ``strideweave``.
"""

from .ids import clause_id, requirement_id, scenario_id, slug
from .openspec import Clause, Requirement, Scenario, Spec, SpecError, load_specs, parse_spec

__all__ = [
    "Clause",
    "Requirement",
    "Scenario",
    "Spec",
    "SpecError",
    "clause_id",
    "load_specs",
    "parse_spec",
    "requirement_id",
    "scenario_id",
    "slug",
]
