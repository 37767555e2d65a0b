"""Clause pins: a clause citation keeps pointing at the sentence it was written against."""

import pytest

from strideweave._harness.catalog import Catalog
from strideweave._harness.citations import CPP, PYTHON, Citation
from strideweave._harness.config import ConfigError
from strideweave._harness.openspec import parse_spec
from strideweave._harness.pins import (
    REPIN_COMMAND,
    fingerprint,
    pin_problems,
    read_lock,
    render_lock,
    write_lock,
)

from .conftest import COUNTED, DEMO_SPEC, pin, run, write
from .test_cli import cli, make_project

FIRST = "The counter SHALL count widgets."
SECOND = "It MUST never go negative."
INSERTED = "Counts SHALL be integers."
CITES_SECOND = [
    Citation(f"{COUNTED}#2", "conformance/test_a.py::test_floor", PYTHON),
    Citation(f"{COUNTED}#2", "demo__widgets_are_counted.clause2", CPP),
]


def catalog_of(text, tmp_path):
    return Catalog([parse_spec(tmp_path / "demo" / "spec.md", text)])


def problems_after(edit, tmp_path, citations=CITES_SECOND):
    """Pin the demo spec, apply ``edit`` to its text, check ``citations`` against it."""
    lock = tmp_path / "clauses.lock"
    write_lock(lock, catalog_of(DEMO_SPEC, tmp_path))
    edited = edit(DEMO_SPEC)
    assert edited != DEMO_SPEC
    return pin_problems(citations, catalog_of(edited, tmp_path), read_lock(lock))


def test_the_lock_pins_every_clause(tmp_path):
    text = render_lock(catalog_of(DEMO_SPEC, tmp_path))
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == [
        f"{COUNTED}#1 {fingerprint(FIRST)} {FIRST}",
        f"{COUNTED}#2 {fingerprint(SECOND)} {SECOND}",
        f"demo/widgets-are-named#1 {fingerprint('Every widget SHALL have a name.')} "
        "Every widget SHALL have a name.",
    ]
    assert REPIN_COMMAND in text


def test_inserting_before_a_cited_clause_is_caught(tmp_path):
    (problem,) = problems_after(lambda t: t.replace(FIRST, f"{FIRST} {INSERTED}"), tmp_path)
    assert problem.splitlines() == [
        f"{COUNTED}#2: changed since pinned",
        f"    pinned: {SECOND}",
        f"    now:    {INSERTED}",
        f"    the pinned text is now {COUNTED}#3",
        "    cited by conformance/test_a.py::test_floor [python]",
        "    cited by demo__widgets_are_counted.clause2 [cpp]",
    ]


def test_rewording_a_cited_clause_is_caught(tmp_path):
    reworded = "It MUST never drop below zero."
    (problem,) = problems_after(lambda t: t.replace(SECOND, reworded), tmp_path)
    assert f"    pinned: {SECOND}" in problem.splitlines()
    assert f"    now:    {reworded}" in problem.splitlines()
    assert "the pinned text is now" not in problem


def test_deleting_a_cited_clause_is_caught(tmp_path):
    (problem,) = problems_after(lambda t: t.replace(f" {SECOND}", ""), tmp_path)
    assert problem.splitlines()[:3] == [
        f"{COUNTED}#2: changed since pinned",
        f"    pinned: {SECOND}",
        "    now:    (no such clause any more)",
    ]


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda t: t.replace(FIRST, "The counter SHALL tally widgets."), id="reword"),
        pytest.param(lambda t: t.replace(SECOND, f"{SECOND} Counts SHALL be shown."), id="append"),
        pytest.param(lambda t: t.replace("the count is 1", "the count is one"), id="scenario"),
        pytest.param(lambda t: t.replace(f"{FIRST} ", f"{FIRST}\n"), id="reflow"),
    ],
)
def test_unrelated_edits_are_not_flagged(tmp_path, edit):
    assert problems_after(edit, tmp_path) == []


def test_a_citation_of_an_unpinned_clause_is_flagged(tmp_path):
    catalog = catalog_of(DEMO_SPEC, tmp_path)
    (problem,) = pin_problems(CITES_SECOND[:1], catalog, {})
    assert problem.splitlines()[:2] == [f"{COUNTED}#2: not pinned", f"    now:    {SECOND}"]
    assert pin_problems([Citation(f"{COUNTED}#7", "t", PYTHON)], catalog, {}) == []


def test_a_malformed_lock_is_a_config_error(tmp_path):
    lock = tmp_path / "clauses.lock"
    lock.write_text("demo/widgets-are-counted#1 not-a-fingerprint\n")
    with pytest.raises(ConfigError, match=f"clauses.lock:1: malformed pin; .*{REPIN_COMMAND}"):
        read_lock(lock)
    assert read_lock(tmp_path / "absent.lock") == {}


CITING_TEST = f"""
    import pytest

    @pytest.mark.spec("{COUNTED}#2")
    def test_floor():
        pass
"""


def test_the_run_fails_until_re_pinned(project):
    pytester = project()
    write(pytester, "conformance/test_floor.py", CITING_TEST)
    pin(pytester)
    assert run(pytester).ret == pytest.ExitCode.OK
    spec = pytester.path / "spec" / "demo" / "spec.md"
    spec.write_text(DEMO_SPEC.replace(FIRST, f"{FIRST} {INSERTED}"))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    stderr = "\n".join(result.stderr.lines)
    assert f"  {COUNTED}#2: changed since pinned\n      pinned: {SECOND}" in stderr
    assert "      cited by conformance/test_floor.py::test_floor [python]" in stderr
    assert stderr.rstrip().endswith(REPIN_COMMAND)
    assert cli("pin", "--root", str(pytester.path)) == (
        0,
        f"changed: {COUNTED}#2\nadded: {COUNTED}#3\n"
        f"pinned 4 clauses in {pytester.path / 'spec' / 'clauses.lock'}\n",
    )
    assert run(pytester).ret == pytest.ExitCode.OK


def test_check_reports_pin_problems(tmp_path):
    make_project(tmp_path, complete=())
    write_lock(tmp_path / "spec" / "clauses.lock", catalog_of(DEMO_SPEC, tmp_path))
    spec = tmp_path / "spec" / "demo" / "spec.md"
    spec.write_text(DEMO_SPEC.replace(SECOND, "It MUST stay positive."))
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "test_floor.py").write_text(CITING_TEST.replace("\n    ", "\n"))
    status, text = cli("check", "--root", str(tmp_path))
    assert status == 1
    assert f"{COUNTED}#2: changed since pinned" in text
    assert f"re-pin {tmp_path / 'spec' / 'clauses.lock'} with:\n    {REPIN_COMMAND}" in text
