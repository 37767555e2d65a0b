"""One collected item per OpenSpec scenario.

``conformance.harness.plugin`` parametrizes ``test_scenario`` with every scenario id of
every ``spec/<capability>/spec.md``, runs these items after all other tests, and judges each
from the tests citing its id: pass if a bound test passed and none failed, fail if a bound
test failed (or, in strict mode, if nothing cites the scenario), skip otherwise.

With ``every_clause_cited = true`` in ``[tool.strideweave.conformance]``, it also
parametrizes ``test_clauses_cited`` with every requirement id: it passes when each SHALL
clause of the requirement is cited, and fails (strict) or skips naming those that are not.
"""


def test_scenario(spec_scenario):
    spec_scenario.verify()


def test_clauses_cited(spec_requirement):
    spec_requirement.verify()
