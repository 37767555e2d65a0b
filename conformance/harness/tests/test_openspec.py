"""OpenSpec parser rules and every malformed case."""

from pathlib import Path

import pytest

from strideweave._harness.openspec import SpecError, load_specs, parse_spec

from .conftest import DEMO_SPEC, spec_document

PATH = Path("spec/demo/spec.md")


def parse(text: str):
    return parse_spec(PATH, text)


def errors(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse(text)
    return [problem.message for problem in info.value.problems]


def test_parses_structure_ids_and_lines():
    spec = parse(DEMO_SPEC)
    assert spec.capability == "demo"
    assert spec.path == PATH
    assert spec.purpose == "A demo capability used by the harness tests."
    counted, named = spec.requirements
    assert counted.name == "Widgets are counted"
    assert counted.slug == "widgets-are-counted"
    assert counted.id == "demo/widgets-are-counted"
    assert counted.line == 9
    assert counted.body == "The counter SHALL count widgets. It MUST never go negative."
    assert [c.id for c in counted.clauses] == [
        "demo/widgets-are-counted#1",
        "demo/widgets-are-counted#2",
    ]
    assert [c.text for c in counted.clauses] == [
        "The counter SHALL count widgets.",
        "It MUST never go negative.",
    ]
    assert [s.id for s in counted.scenarios] == [
        "demo/widgets-are-counted/count-one-widget",
        "demo/widgets-are-counted/count-none",
    ]
    first = counted.scenarios[0]
    assert (first.name, first.line) == ("Count one widget", 13)
    assert first.steps == "- **WHEN** one widget is added\n- **THEN** the count is 1"
    assert named.scenarios[0].id == "demo/widgets-are-named/name-a-widget"


def test_data_model_is_frozen():
    spec = parse(DEMO_SPEC)
    with pytest.raises(AttributeError):
        spec.requirements[0].name = "other"  # type: ignore[misc]


def test_capability_is_folder_name():
    spec = parse_spec(Path("x/core-layout/spec.md"), DEMO_SPEC)
    assert spec.requirements[0].id == "core-layout/widgets-are-counted"


def test_capability_folder_must_be_a_slug():
    with pytest.raises(SpecError, match="not a slug"):
        parse_spec(Path("spec/Core_Layout/spec.md"), DEMO_SPEC)


def test_missing_purpose():
    text = (
        "# demo\n\n## Requirements\n\n### Requirement: R\n\nIt SHALL x.\n\n#### Scenario: S\n\nok\n"
    )
    assert errors(text) == ["missing required section '## Purpose'"]


def test_missing_requirements():
    assert errors("# demo\n\n## Purpose\n\nSomething.\n") == [
        "missing required section '## Requirements'"
    ]


def test_section_titles_are_case_insensitive():
    text = spec_document("### Requirement: R\n\nIt SHALL x.\n\n#### Scenario: S\n\nok")
    text = text.replace("## Purpose", "## PURPOSE").replace("## Requirements", "## requirements")
    assert parse(text).requirements[0].name == "R"


def test_empty_purpose_and_duplicate_sections():
    text = (
        "## Purpose\n\n## Requirements\n\n### Requirement: R\n\nIt SHALL x.\n\n"
        "#### Scenario: S\n\nok\n\n## Purpose\n\nagain\n"
    )
    assert errors(text) == ["duplicate section '## Purpose'", "the Purpose section is empty"]


def test_empty_requirements_section():
    assert errors(spec_document("Nothing here.")) == ["the Requirements section has no requirement"]


def test_duplicate_requirement():
    text = spec_document(
        """
        ### Requirement: Same

        It SHALL a.

        #### Scenario: A

        ok

        ### Requirement: Same

        It SHALL b.

        #### Scenario: B

        ok
        """
    )
    with pytest.raises(SpecError) as info:
        parse(text)
    (problem,) = info.value.problems
    assert problem.message == "duplicate requirement 'Same' (first at line 9)"
    assert (problem.path, problem.line) == ("spec/demo/spec.md", 17)
    assert str(info.value) == "spec/demo/spec.md:17: duplicate requirement 'Same' (first at line 9)"


def test_duplicate_scenario_within_a_requirement():
    text = spec_document(
        """
        ### Requirement: R

        It SHALL a.

        #### Scenario: Twice

        one

        #### Scenario: Twice

        two
        """
    )
    assert errors(text) == ["duplicate scenario 'Twice' (first at line 13)"]


def test_same_scenario_name_in_two_requirements_is_fine():
    text = spec_document(
        """
        ### Requirement: R1

        It SHALL a.

        #### Scenario: Same

        ok

        ### Requirement: R2

        It SHALL b.

        #### Scenario: Same

        ok
        """
    )
    spec = parse(text)
    assert [r.scenarios[0].id for r in spec.requirements] == ["demo/r1/same", "demo/r2/same"]


def test_requirement_without_scenario():
    text = spec_document(
        """
        ### Requirement: Lonely

        It SHALL be alone.

        ##### Deep heading is not a scenario
        """
    )
    assert errors(text) == ["requirement 'Lonely' has no scenario"]


@pytest.mark.parametrize(
    "body",
    [
        "It should work.",
        "It shall work, in lowercase.",
        "A MUSTARD-coloured SHALLOW pool.",
    ],
)
def test_requirement_without_shall_or_must(body):
    text = spec_document(f"### Requirement: Weak\n\n{body}\n\n#### Scenario: S\n\nok")
    assert errors(text) == ["requirement 'Weak' has no SHALL or MUST in its body"]


def test_shall_in_a_table_satisfies_the_body_rule_but_is_no_clause():
    text = spec_document("### Requirement: R\n\n| It SHALL | be tabled |\n\n#### Scenario: S\n\nok")
    assert parse(text).requirements[0].clauses == ()


def test_must_is_enough():
    text = spec_document("### Requirement: R\n\nIt MUST work.\n\n#### Scenario: S\n\nok")
    assert parse(text).requirements[0].clauses[0].text == "It MUST work."


def test_shall_only_in_a_scenario_does_not_count():
    text = spec_document("### Requirement: R\n\nIt works.\n\n#### Scenario: S\n\nIt SHALL work.")
    assert errors(text) == ["requirement 'R' has no SHALL or MUST in its body"]


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_headings_inside_fenced_blocks_are_ignored(fence):
    text = spec_document(
        f"""
        ### Requirement: R

        It SHALL parse this example:

        {fence}markdown
        ### Requirement: Not real
        #### Scenario: Not real either
        {fence}

        #### Scenario: Real

        {fence}
        ## Requirements
        #### Scenario: Fake
        {fence}
        """
    )
    (requirement,) = parse(text).requirements
    assert [s.name for s in requirement.scenarios] == ["Real"]
    assert "#### Scenario: Fake" in requirement.scenarios[0].steps


def test_heading_after_unclosed_fence_is_ignored():
    text = spec_document(
        "### Requirement: R\n\nIt SHALL x.\n\n#### Scenario: S\n\n```\n#### Scenario: T"
    )
    assert [s.name for s in parse(text).requirements[0].scenarios] == ["S"]


def test_any_level_four_heading_is_a_scenario():
    text = spec_document(
        """
        ### Requirement: R

        It SHALL x.

        #### Plain heading

        ok

        #### scenario: lowercase prefix

        ok
        """
    )
    scenarios = parse(text).requirements[0].scenarios
    assert [(s.name, s.slug) for s in scenarios] == [
        ("Plain heading", "plain-heading"),
        ("lowercase prefix", "lowercase-prefix"),
    ]


def test_names_are_trimmed():
    text = spec_document(
        "###   Requirement:   Spaced out   \n\nIt SHALL x.\n\n####   Scenario:   Padded   ##\n\nok"
    )
    requirement = parse(text).requirements[0]
    assert requirement.name == "Spaced out"
    assert requirement.scenarios[0].name == "Padded"


def test_names_are_case_sensitive():
    """'Grow' and 'grow' are different names, so the error is the slug collision."""
    text = spec_document(
        """
        ### Requirement: R

        It SHALL x.

        #### Scenario: Grow

        ok

        #### Scenario: grow

        ok
        """
    )
    assert errors(text) == ["scenario 'grow' has the same slug 'grow' as 'Grow' (line 13)"]


def test_requirement_slug_collision():
    text = spec_document(
        """
        ### Requirement: A layout's image

        It SHALL a.

        #### Scenario: S

        ok

        ### Requirement: A layouts image

        It SHALL b.

        #### Scenario: S

        ok
        """
    )
    assert errors(text) == [
        "requirement 'A layouts image' has the same slug 'a-layouts-image' as "
        '"A layout\'s image" (line 9)'
    ]


def test_empty_names_and_empty_slugs():
    text = spec_document(
        """
        ### Requirement: R

        It SHALL x.

        #### Scenario:

        ok

        #### ???

        ok

        #### Fine

        ok
        """
    )
    assert errors(text) == ["scenario heading has no name", "scenario name '???' has an empty slug"]


def test_scenario_before_any_requirement():
    text = spec_document(
        "Intro.\n\n#### Scenario: Orphan\n\nok\n\n"
        "### Requirement: R\n\nIt SHALL x.\n\n#### Scenario: S\n\nok"
    )
    assert errors(text) == ["scenario heading outside a requirement"]


def test_all_problems_are_reported_together():
    text = spec_document(
        """
        ### Requirement: A

        No keyword.

        ### Requirement: A

        It SHALL x.

        #### Scenario: S

        ok
        """
    )
    assert errors(text) == [
        "requirement 'A' has no scenario",
        "requirement 'A' has no SHALL or MUST in its body",
        "duplicate requirement 'A' (first at line 9)",
    ]


def test_following_sections_end_the_requirements():
    text = DEMO_SPEC + "\n## Non-Coverage\n\n- not this\n\n### Requirement: Ignored\n"
    spec = parse(text)
    assert len(spec.requirements) == 2
    assert "Non-Coverage" not in spec.requirements[-1].scenarios[-1].steps


def test_deeper_headings_stay_in_steps_and_body():
    text = spec_document(
        """
        ### Requirement: R

        It SHALL x.

        ##### Note

        body note

        #### Scenario: S

        ##### Detail

        step
        """
    )
    requirement = parse(text).requirements[0]
    assert "##### Note" in requirement.body
    assert requirement.scenarios[0].steps == "##### Detail\n\nstep"


def test_load_specs_collects_all_files(tmp_path):
    (tmp_path / "spec" / "good").mkdir(parents=True)
    (tmp_path / "spec" / "good" / "spec.md").write_text(DEMO_SPEC)
    (tmp_path / "spec" / "bad").mkdir()
    (tmp_path / "spec" / "bad" / "spec.md").write_text("## Purpose\n\nx\n")
    (tmp_path / "spec" / "worse").mkdir()
    (tmp_path / "spec" / "worse" / "spec.md").write_text("nothing\n")
    with pytest.raises(SpecError) as info:
        load_specs(tmp_path / "spec", relative_to=tmp_path)
    assert [str(p) for p in info.value.problems] == [
        "spec/bad/spec.md:1: missing required section '## Requirements'",
        "spec/worse/spec.md:1: missing required section '## Purpose'",
        "spec/worse/spec.md:1: missing required section '## Requirements'",
    ]
    (tmp_path / "spec" / "bad" / "spec.md").unlink()
    (tmp_path / "spec" / "worse" / "spec.md").unlink()
    (spec,) = load_specs(tmp_path / "spec", relative_to=tmp_path)
    assert spec.capability == "good"
    assert spec.path == Path("spec/good/spec.md")


def test_load_specs_without_spec_dir(tmp_path):
    assert load_specs(tmp_path / "spec") == ()
