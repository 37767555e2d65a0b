"""pyproject configuration and strict-mode resolution."""

import pytest

from strideweave._harness.config import (
    ConfigError,
    MachineSkip,
    ProjectConfig,
    load_project_config,
    selects,
    strict_ids,
)

REQUIREMENTS = {"a": ["a/one"], "b": ["b/one", "b/two"], "c": []}


def test_missing_pyproject_claims_nothing(tmp_path):
    config = load_project_config(tmp_path)
    assert config == ProjectConfig(tmp_path)
    assert config.spec_root == tmp_path / "spec"
    assert config.python_test_dirs == ("conformance", "property_tests")
    assert config.lock_path == tmp_path / "spec" / "clauses.lock"


def test_reads_complete_lists(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.strideweave.conformance]\ncomplete = ["a", "b"]\n'
        'complete_requirements = ["c/one", "c/two"]\n'
    )
    config = load_project_config(tmp_path)
    assert config.complete == ("a", "b")
    assert config.complete_requirements == ("c/one", "c/two")


def test_table_without_complete(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.strideweave.conformance]\n")
    config = load_project_config(tmp_path)
    assert (config.complete, config.complete_requirements) == ((), ())


@pytest.mark.parametrize(
    ("content", "subject"),
    [
        ('[tool.strideweave.conformance]\ncomplete = "a"\n', "complete must be a list"),
        ("[tool.strideweave.conformance]\ncomplete_requirements = [1]\n", "complete_requirements"),
        ("[tool", "Expected"),
    ],
)
def test_invalid_pyproject(tmp_path, content, subject):
    (tmp_path / "pyproject.toml").write_text(content)
    with pytest.raises(ConfigError, match=rf"pyproject\.toml: .*{subject}"):
        load_project_config(tmp_path)


def test_strict_modes():
    assert strict_ids("auto", ["a"], [], REQUIREMENTS) == {"a"}
    assert strict_ids("all", ["a"], [], REQUIREMENTS) == {"a", "b", "c"}
    assert strict_ids("none", ["a"], [], REQUIREMENTS) == set()
    with pytest.raises(ConfigError, match="unknown capabilities: zzz"):
        strict_ids("auto", ["a", "zzz"], [], REQUIREMENTS)
    with pytest.raises(ConfigError, match="strict mode"):
        strict_ids("some", [], [], REQUIREMENTS)


def test_claimed_requirements_are_strict_under_auto_only():
    assert strict_ids("auto", ["a"], ["b/two"], REQUIREMENTS) == {"a", "b/two"}
    assert strict_ids("all", [], ["b/two"], REQUIREMENTS) == {"a", "b", "c"}
    assert strict_ids("none", [], ["b/two"], REQUIREMENTS) == set()


@pytest.mark.parametrize("mode", ["auto", "all", "none"])
def test_claimed_requirement_errors_in_every_mode(mode):
    with pytest.raises(
        ConfigError,
        match=r"^\[tool\.strideweave\.conformance\] complete_requirements names unknown "
        r"requirements: b/tow \(did you mean 'b/two'\?\), zzz$",
    ):
        strict_ids(mode, [], ["b/one", "zzz", "b/tow"], REQUIREMENTS)
    with pytest.raises(
        ConfigError,
        match=r"^\[tool\.strideweave\.conformance\] complete_requirements names requirements "
        r"of capabilities listed in complete: b/one, b/two$",
    ):
        strict_ids(mode, ["b"], ["b/two", "a/one", "b/one"], REQUIREMENTS)


MACHINE_SKIP = """
[[tool.strideweave.conformance.machine_skips]]
test = "conformance/test_io.py::test_direct"
needs = "a file system that accepts O_DIRECT"
fallback = "conformance/test_io.py::test_direct_anywhere"
"""


def test_reads_machine_skips(tmp_path):
    (tmp_path / "pyproject.toml").write_text(MACHINE_SKIP)
    (skip,) = load_project_config(tmp_path).machine_skips
    assert skip == MachineSkip(
        "conformance/test_io.py::test_direct",
        "a file system that accepts O_DIRECT",
        "conformance/test_io.py::test_direct_anywhere",
    )
    assert skip.matches("conformance/test_io.py::test_direct[tmpfs]")
    assert not skip.matches("conformance/test_io.py::test_direct_anywhere")


def test_a_parameter_narrows_a_match():
    assert selects("t.py::test_a[tmpfs]", "t.py::test_a[tmpfs-4]")
    assert not selects("t.py::test_a[tmpfs]", "t.py::test_a[disk-4]")
    assert not selects("t.py::test_a[tmpfs]", "t.py::test_a")
    assert selects("Suite.name", "Suite.name")


@pytest.mark.parametrize(
    "content",
    [
        "[tool.strideweave.conformance]\nmachine_skips = 1\n",
        MACHINE_SKIP.replace('needs = "a file system that accepts O_DIRECT"\n', ""),
        MACHINE_SKIP.replace('"conformance/test_io.py::test_direct"', '""'),
        MACHINE_SKIP + 'extra = "x"\n',
    ],
)
def test_invalid_machine_skips(tmp_path, content):
    (tmp_path / "pyproject.toml").write_text(content)
    with pytest.raises(ConfigError, match=r"pyproject\.toml: .*machine_skips"):
        load_project_config(tmp_path)


def test_every_clause_cited_is_a_boolean(tmp_path):
    table = "[tool.strideweave.conformance]\nevery_clause_cited = "
    (tmp_path / "pyproject.toml").write_text(table + "true\n")
    assert load_project_config(tmp_path).every_clause_cited is True
    (tmp_path / "pyproject.toml").write_text(table + '"yes"\n')
    with pytest.raises(ConfigError, match="every_clause_cited must be true or false"):
        load_project_config(tmp_path)
