"""Spec conformance harness: binds tests to OpenSpec ids and reports coverage.

Modules:

* ``openspec``  - parser and frozen data model (Spec, Requirement, Clause, Scenario).
* ``ids``       - slugs and id shapes; ``clauses`` - normative sentence extraction.
* ``catalog``   - index of citable ids; ``pins`` - the clause lock (``spec/clauses.lock``).
* ``evidence``  - citations from pytest collection and C++ tests; ``citations`` - the model.
* ``cpp``       - C++ test-name citations, gtest XML results and test lists.
* ``coverage``  - statuses and scenario verdicts.
* ``report``    - Markdown/JSON/JUnit output and terminal lines; ``html_report`` - HTML.
* ``config``    - project layout and ``[tool.strideweave.conformance]``.
* ``plugin``    - the pytest plugin; ``cli`` - ``python -m conformance.harness``.

Nothing here imports ``strideweave``.
"""
