"""Sentence splitting and clause extraction."""

import pytest

from strideweave._harness.clauses import extract_clauses, prose_blocks, split_sentences
from strideweave._harness.openspec import parse_spec

from .conftest import spec_document


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two? Three! Four", ["One.", "Two?", "Three!", "Four"]),
        (
            "Use e.g. tuples, i.e. nested ones, etc. and more.",
            ["Use e.g. tuples, i.e. nested ones, etc. and more."],
        ),
        ("Compare A vs. B here. Next.", ["Compare A vs. B here.", "Next."]),
        ("(e.g. this) stays. Then", ["(e.g. this) stays.", "Then"]),
        (
            "Version 1.0 and 2.10.3 stay whole. Next.",
            ["Version 1.0 and 2.10.3 stay whole.", "Next."],
        ),
        ("Cap it at 1.0. Then stop.", ["Cap it at 1.0.", "Then stop."]),
        ("Call f.g() and x.y. Done.", ["Call f.g() and x.y.", "Done."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("Wrapped (like this.) Next.", ["Wrapped (like this.)", "Next."]),
        ("Spaces   collapse\tfine.", ["Spaces collapse fine."]),
        ("", []),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_prose_blocks_drop_tables_and_fences_and_split_lists():
    body = (
        "First line\ncontinues here\n\n| a | b |\n|---|---|\n| SHALL | x |\n"
        "```\ncode SHALL be ignored.\n```\n- item one\n- item two\n  wrapped\n~~~\nmore\n~~~\nLast"
    )
    assert prose_blocks(body) == [
        "First line continues here",
        "- item one",
        "- item two wrapped",
        "Last",
    ]


def test_extract_clauses_keeps_only_normative_sentences():
    body = (
        "Intro sentence. A Layout SHALL be immutable, e.g. frozen. It MAY be cached.\n"
        "Negative values MUST fail\n\n"
        "| Condition | Failure |\n|---|---|\n| it SHALL | not count |\n\n"
        "A shall in lowercase is not normative. It SHALL NOT copy."
    )
    assert extract_clauses(body) == [
        "A Layout SHALL be immutable, e.g. frozen.",
        "Negative values MUST fail",
        "It SHALL NOT copy.",
    ]


def test_clauses_are_numbered_per_requirement(tmp_path):
    text = spec_document(
        """
        ### Requirement: First

        It SHALL a. It SHALL b.

        #### Scenario: S

        ok

        ### Requirement: Second

        Intro. It MUST c, i.e. d.

        #### Scenario: S

        The scenario SHALL not add clauses.
        """
    )
    first, second = parse_spec(tmp_path / "demo" / "spec.md", text).requirements
    assert [(c.number, c.id, c.text) for c in first.clauses] == [
        (1, "demo/first#1", "It SHALL a."),
        (2, "demo/first#2", "It SHALL b."),
    ]
    assert [(c.number, c.id, c.text) for c in second.clauses] == [
        (1, "demo/second#1", "It MUST c, i.e. d.")
    ]
