"""pyproject configuration and strict-mode resolution."""

import pytest

from conformance.harness.config import (
    ConfigError,
    ProjectConfig,
    load_project_config,
    strict_capabilities,
)


def test_missing_pyproject_claims_nothing(tmp_path):
    config = load_project_config(tmp_path)
    assert config == ProjectConfig(tmp_path)
    assert config.spec_root == tmp_path / "spec"
    assert config.python_test_dirs == ("conformance", "property_tests")
    assert config.lock_path == tmp_path / "spec" / "clauses.lock"


def test_reads_complete_list(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.strideweave.conformance]\ncomplete = ["a", "b"]\n'
    )
    assert load_project_config(tmp_path).complete == ("a", "b")


def test_table_without_complete(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.strideweave.conformance]\n")
    assert load_project_config(tmp_path).complete == ()


@pytest.mark.parametrize("content", ['[tool.strideweave.conformance]\ncomplete = "a"\n', "[tool"])
def test_invalid_pyproject(tmp_path, content):
    (tmp_path / "pyproject.toml").write_text(content)
    with pytest.raises(ConfigError, match=r"pyproject\.toml"):
        load_project_config(tmp_path)


def test_strict_modes():
    caps = ["a", "b", "c"]
    assert strict_capabilities("auto", ["a"], caps) == {"a"}
    assert strict_capabilities("all", ["a"], caps) == {"a", "b", "c"}
    assert strict_capabilities("none", ["a"], caps) == set()
    with pytest.raises(ConfigError, match="unknown capabilities: zzz"):
        strict_capabilities("auto", ["a", "zzz"], caps)
    with pytest.raises(ConfigError, match="strict mode"):
        strict_capabilities("some", [], caps)
