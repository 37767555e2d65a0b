"""The spec model and report writers of the conformance harness, shipped in the wheel.

The carrier kit (``strideweave.kit``) and the repository's harness (``conformance.harness``)
share these modules; nothing here imports the rest of ``strideweave``.

* ``openspec``  - parser and frozen data model (Spec, Requirement, Clause, Scenario).
* ``ids``       - slugs and id shapes; ``clauses`` - normative sentence extraction;
  ``markdown`` - fences, headings and tables.
* ``catalog``   - index of citable ids; ``pins`` - the clause lock (``spec/clauses.lock``).
* ``citations`` - the evidence model; ``outcomes`` - pytest/gtest outcome names.
* ``coverage``  - statuses and scenario verdicts.
* ``report``    - Markdown/JSON/JUnit output and terminal lines; ``html_report`` - HTML.
* ``config``    - project layout and ``[tool.strideweave.conformance]``.
"""
