"""Static Python citation scan, drift checks and scope matching."""

import textwrap

from conformance.harness.citations import (
    PYTHON,
    Citation,
    check_citations,
    covers,
    python_source_citations,
    scan_python_citations,
)

from .conftest import COUNT_NONE, COUNT_ONE, COUNTED, NAME_ONE

SOURCE = textwrap.dedent(
    f'''
    import pytest
    from pytest import mark

    pytestmark = [pytest.mark.slow, pytest.mark.spec("{COUNTED}")]
    SPEC = "not-literal"


    @pytest.mark.spec("{COUNT_ONE}", "{COUNT_NONE}")
    def test_function():
        pass


    @mark.spec("{NAME_ONE}")
    class TestGroup:
        pytestmark = pytest.mark.spec("{COUNTED}#1")

        @pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.spec("{COUNTED}#2"))])
        def test_method(self, x):
            pass


    @pytest.mark.spec(SPEC, keyword="{COUNT_ONE}")
    def test_non_literal():
        pass


    def helper():
        return pytest.mark.other("{COUNT_ONE}")
    '''
)


def test_python_source_citations():
    found = python_source_citations(SOURCE, "conformance/test_x.py")
    assert [(c.target, c.test, c.line) for c in found] == [
        (COUNTED, "conformance/test_x.py", 5),
        (COUNT_ONE, "conformance/test_x.py::test_function", 9),
        (COUNT_NONE, "conformance/test_x.py::test_function", 9),
        (NAME_ONE, "conformance/test_x.py::TestGroup", 14),
        (f"{COUNTED}#1", "conformance/test_x.py::TestGroup", 16),
        (f"{COUNTED}#2", "conformance/test_x.py::TestGroup::test_method", 18),
        ("not-literal", "conformance/test_x.py::test_non_literal", 23),  # a module constant
    ]
    assert all(c.kind == PYTHON and c.static and c.path == "conformance/test_x.py" for c in found)
    assert found[0].where == "conformance/test_x.py:5"


def test_unparsable_source_is_skipped():
    assert python_source_citations("def broken(:\n", "conformance/test_bad.py") == []


def test_scan_only_test_files_in_given_dirs(tmp_path):
    line = f'import pytest\n\n@pytest.mark.spec("{COUNT_ONE}")\ndef test_a():\n    pass\n'
    for relpath in [
        "conformance/test_a.py",
        "property_tests/deep/test_b.py",
        "conformance/helper.py",
        "elsewhere/test_c.py",
        "conformance/.hidden/test_d.py",
        "conformance/__pycache__/test_e.py",
    ]:
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line)
    found = scan_python_citations(tmp_path, ("conformance", "property_tests", "missing"))
    assert [c.test for c in found] == [
        "conformance/test_a.py::test_a",
        "property_tests/deep/test_b.py::test_a",
    ]


def test_check_citations_reports_unknown_ids(demo_catalog):
    citations = [
        Citation(COUNT_ONE, "t.py::test_ok", PYTHON, True, "t.py", 3),
        Citation(f"{COUNTED}#2", "t.py::test_clause", PYTHON, True, "t.py", 4),
        Citation("demo/widgets-are-countd/count-none", "t.py::test_typo", PYTHON, True, "t.py", 5),
        Citation(f"{COUNTED}#3", "t.py::test_clause3", PYTHON, True, "t.py", 6),
        Citation("demo", "t.py::test_capability", PYTHON, True, "t.py", 7),
    ]
    drift = [str(d) for d in check_citations(citations, demo_catalog)]
    assert drift == [
        "t.py:5: t.py::test_typo: cites unknown spec id 'demo/widgets-are-countd/count-none' "
        f"(did you mean '{COUNT_NONE}'?)",
        f"t.py:6: t.py::test_clause3: cites unknown spec id '{COUNTED}#3' "
        f"(did you mean '{COUNTED}#2'?)",
        "t.py:7: t.py::test_capability: cites 'demo', a capability; "
        "cite a requirement, scenario or clause id",
    ]


def test_covers():
    assert covers("f.py", "f.py::test_a")
    assert covers("f.py::test_a", "f.py::test_a[1-2]")
    assert covers("f.py::C", "f.py::C::test_a")
    assert covers("f.py::test_a", "f.py::test_a")
    assert not covers("f.py::test_a", "f.py::test_ab")
    assert not covers("f.py", "f.pyc::test_a")


def test_fstrings_of_module_constants_are_static_citations():
    from conformance.harness.citations import python_source_citations

    source = (
        "import pytest\n"
        'CAP = "cap"\n'
        'REQ = f"{CAP}/req"\n'
        'OTHER = REQ + "/x"\n'
        "@pytest.mark.spec(f'{REQ}/scenario', OTHER, f'{REQ}#2', f'{unknown}/x', f'{REQ!r}')\n"
        "def test_a(): pass\n"
    )
    ids = [c.target for c in python_source_citations(source, "conformance/test_a.py")]
    assert ids == ["cap/req/scenario", "cap/req/x", "cap/req#2"]
