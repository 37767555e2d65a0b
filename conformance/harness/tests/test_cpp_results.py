"""gtest XML result parsing, test lists of gtest binaries, and C++ evidence."""

import pytest

from conformance.harness.cpp import (
    ResultsError,
    list_gtest_binary,
    load_gtest_results,
    parse_gtest_xml,
    parse_test_list,
    read_cpp,
    undecorate_name,
    undecorate_suite,
)
from strideweave._harness import outcomes

from .conftest import COUNT_NONE, COUNT_ONE, COUNTED, NAME_ONE, fake_binary

RESULTS = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="7" failures="1" name="AllTests">
  <testsuite name="demo__widgets_are_counted" tests="3">
    <testcase name="count_one_widget" status="run" result="completed" time="0"
              classname="demo__widgets_are_counted" />
    <testcase name="count_none" status="run" result="completed" time="0"
              classname="demo__widgets_are_counted">
      <failure message="Expected equality" type=""><![CDATA[x_test.cc:9 boom]]></failure>
    </testcase>
    <testcase name="clause1" status="run" result="skipped" time="0"
              classname="demo__widgets_are_counted">
      <skipped message="not yet" />
    </testcase>
  </testsuite>
  <testsuite name="Inst/demo__widgets_are_named" tests="2">
    <testcase name="name_a_widget/0" value_param="1" status="run" result="completed"
              classname="Inst/demo__widgets_are_named" />
    <testcase name="name_a_widget/1" value_param="2" status="run" result="completed"
              classname="Inst/demo__widgets_are_named" />
  </testsuite>
  <testsuite name="Typed/0">
    <testcase name="works" status="notrun" result="suppressed" classname="Typed/0" />
    <testcase name="other" status="run" result="suppressed" classname="Typed/0" />
  </testsuite>
</testsuites>
"""


@pytest.mark.parametrize(
    ("suite", "expected"),
    [("Suite", "Suite"), ("Prefix/Suite", "Suite"), ("Suite/0", "Suite"), ("P/Suite/12", "Suite")],
)
def test_undecorate_suite(suite, expected):
    assert undecorate_suite(suite) == expected


def test_undecorate_name():
    assert undecorate_name("Name/3") == "Name"
    assert undecorate_name("Name/named_param") == "Name"
    assert undecorate_name("Name") == "Name"


def test_parse_gtest_xml(tmp_path):
    path = tmp_path / "results.xml"
    path.write_text(RESULTS)
    cases = parse_gtest_xml(path)
    assert [(c.test.suite, c.test.name, c.outcome) for c in cases] == [
        ("demo__widgets_are_counted", "count_one_widget", outcomes.PASSED),
        ("demo__widgets_are_counted", "count_none", outcomes.FAILED),
        ("demo__widgets_are_counted", "clause1", outcomes.SKIPPED),
        ("demo__widgets_are_named", "name_a_widget", outcomes.PASSED),
        ("demo__widgets_are_named", "name_a_widget", outcomes.PASSED),
        ("Typed", "works", outcomes.SKIPPED),
        ("Typed", "other", outcomes.SKIPPED),
    ]
    assert {c.test.path for c in cases} == {str(path)}


def test_single_testsuite_root_and_classname_fallback(tmp_path):
    path = tmp_path / "one.xml"
    path.write_text(
        '<testsuite name="S"><testcase name="n"><error message="e"/></testcase></testsuite>'
    )
    (case,) = parse_gtest_xml(path)
    assert (case.test.label, case.outcome) == ("S.n", outcomes.FAILED)


@pytest.mark.parametrize(
    "content", ["<testsuites><testsuite", "<html/>", "<testsuites><testcase/></testsuites>"]
)
def test_malformed_files_raise(tmp_path, content):
    path = tmp_path / "bad.xml"
    path.write_text(content)
    with pytest.raises(ResultsError, match=r"bad\.xml"):
        parse_gtest_xml(path)


def test_load_directory_and_missing_location(tmp_path):
    (tmp_path / "b.xml").write_text(
        '<testsuites><testsuite name="B"><testcase name="b"/></testsuite></testsuites>'
    )
    (tmp_path / "a.xml").write_text(
        '<testsuites><testsuite name="A"><testcase name="a"/></testsuite></testsuites>'
    )
    (tmp_path / "notes.txt").write_text("ignored")
    assert [c.test.suite for c in load_gtest_results(tmp_path)] == ["A", "B"]
    assert [c.test.suite for c in load_gtest_results(tmp_path / "b.xml")] == ["B"]
    with pytest.raises(ResultsError, match="does not exist"):
        load_gtest_results(tmp_path / "missing")


def test_read_cpp_merges_instances_and_maps_citations(tmp_path, demo_catalog):
    (tmp_path / "results.xml").write_text(RESULTS)
    extra = RESULTS.replace(
        'name_a_widget/1" value_param="2" status="run" result="completed"',
        'name_a_widget/1" value_param="2" status="run" result="skipped"',
    )
    (tmp_path / "more.xml").write_text(extra.replace("count_one_widget", "count_one_widget__again"))
    results = read_cpp(demo_catalog, tmp_path)
    assert results.outcomes["demo__widgets_are_counted.count_one_widget"] == outcomes.PASSED
    assert results.outcomes["demo__widgets_are_counted.count_none"] == outcomes.FAILED
    assert results.outcomes["demo__widgets_are_named.name_a_widget"] == outcomes.PASSED
    assert {(c.target, c.test) for c in results.citations} == {
        (COUNT_ONE, "demo__widgets_are_counted.count_one_widget"),
        (COUNT_ONE, "demo__widgets_are_counted.count_one_widget__again"),
        (COUNT_NONE, "demo__widgets_are_counted.count_none"),
        ("demo/widgets-are-counted#1", "demo__widgets_are_counted.clause1"),
        (NAME_ONE, "demo__widgets_are_named.name_a_widget"),
    }
    assert results.drift == ()


def test_read_cpp_reports_drift(tmp_path, demo_catalog):
    (tmp_path / "r.xml").write_text(
        '<testsuites><testsuite name="demo__widgets_are_counted">'
        '<testcase name="count_everything" classname="demo__widgets_are_counted"/>'
        "</testsuite></testsuites>"
    )
    (drift,) = read_cpp(demo_catalog, tmp_path).drift
    assert str(drift).startswith(
        f"{tmp_path / 'r.xml'}: C++ test demo__widgets_are_counted.count_everything: test name"
    )


LISTING = """\
demo__widgets_are_counted.
  count_one_widget
  clause1
Inst/demo__widgets_are_named.  # TypeParam = int
  name_a_widget/0  # GetParam() = 1
  name_a_widget/1  # GetParam() = 2
Plain.
  DISABLED_ignored
"""


def test_parse_test_list_undecorates():
    tests = parse_test_list(LISTING, "bin/tests")
    assert [(t.label, t.path) for t in tests] == [
        ("demo__widgets_are_counted.count_one_widget", "bin/tests"),
        ("demo__widgets_are_counted.clause1", "bin/tests"),
        ("demo__widgets_are_named.name_a_widget", "bin/tests"),
        ("demo__widgets_are_named.name_a_widget", "bin/tests"),
        ("Plain.DISABLED_ignored", "bin/tests"),
    ]


def test_binary_lists_bind_without_outcomes(tmp_path, demo_catalog):
    binary = fake_binary(tmp_path, LISTING)
    assert len(list_gtest_binary(binary)) == 5
    evidence = read_cpp(demo_catalog, None, [binary])
    assert evidence.outcomes == {}
    assert {(c.target, c.test) for c in evidence.citations} == {
        (COUNT_ONE, "demo__widgets_are_counted.count_one_widget"),
        (f"{COUNTED}#1", "demo__widgets_are_counted.clause1"),
        (NAME_ONE, "demo__widgets_are_named.name_a_widget"),
    }


def test_results_and_binaries_merge_by_label(tmp_path, demo_catalog):
    (tmp_path / "results.xml").write_text(RESULTS)
    evidence = read_cpp(demo_catalog, tmp_path / "results.xml", [fake_binary(tmp_path, LISTING)])
    labels = [c.test for c in evidence.citations]
    assert len(labels) == len(set(labels))
    assert evidence.outcomes["demo__widgets_are_counted.count_one_widget"] == outcomes.PASSED


def test_failing_or_missing_binary_is_an_error(tmp_path):
    with pytest.raises(ResultsError, match="--gtest_list_tests exited 3"):
        list_gtest_binary(fake_binary(tmp_path, "", status=3))
    with pytest.raises(ResultsError, match="cannot run"):
        list_gtest_binary(tmp_path / "not_built")
