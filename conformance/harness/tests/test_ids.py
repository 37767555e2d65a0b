"""Slugs and id shapes."""

import pytest

from strideweave._harness import ids


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Build a hierarchical layout", "build-a-hierarchical-layout"),
        (
            "complement fills the gaps of a Layout's image",
            "complement-fills-the-gaps-of-a-layouts-image",
        ),
        ("a Layout\u2019s image", "a-layouts-image"),
        ("DLPack export produces version 1.0", "dlpack-export-produces-version-1-0"),
        ("  --Leading and trailing!!  ", "leading-and-trailing"),
        ("right_inverse undoes (L)", "right-inverse-undoes-l"),
        ("__dlpack__() call", "dlpack-call"),
        ("Caf\u00e9 stride", "caf-stride"),
        ("!!!", ""),
    ],
)
def test_slug(text, expected):
    assert ids.slug(text) == expected


def test_slug_never_contains_separators():
    result = ids.slug("a_b/c#d e--f")
    assert result == "a-b-c-d-e-f"
    assert ids.is_slug(result)
    assert not ids.is_slug("A-b")
    assert not ids.is_slug("a--b")
    assert not ids.is_slug("")


def test_id_shapes():
    assert ids.requirement_id("core-layout", "r") == "core-layout/r"
    assert ids.scenario_id("core-layout", "r", "s") == "core-layout/r/s"
    assert ids.clause_id("core-layout", "r", 3) == "core-layout/r#3"
