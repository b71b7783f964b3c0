"""`turnbound knobs`: the "what max N means" rows come from the engines, and the README's copy
of them is exactly what the engines give now."""

from __future__ import annotations

from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.knobs import (
    BEGIN,
    END,
    KnobRow,
    framework_tables,
    knob_row,
    markdown,
    replace_block,
)
from turnbound.reference.errors import DefinitionError
from turnbound.reference.profiles import load_profile

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_framework_profiles_are_the_ones_with_both_count_bounds() -> None:
    assert [t.name for t in framework_tables()] == [
        "google-adk",
        "langgraph-react",
        "openai-agents",
        "pydantic-ai",
        "smolagents",
        "strands-agents",
    ]


def test_a_row_is_computed_by_the_engines() -> None:
    row = knob_row(load_profile("langgraph-react"))
    # super-steps alternate between the model node and the tools node: ceil(N/2) requests, floor(N/2) tools
    assert row.requests == (0, 1, 1, 2, 2, 3) and row.tools == (0, 0, 1, 1, 2, 2)
    assert row.verdicts == ("proved for every N, tight", "proved for every N, tight")
    assert "recursion_error" in row.exits and row.knob == "recursion_limit" and row.default == 9999


def test_a_profile_without_the_count_bounds_is_one_line() -> None:
    with pytest.raises(DefinitionError, match="deeptutor-scheduler: not a framework profile"):
        knob_row(load_profile("deeptutor-scheduler"))


def test_a_knob_that_is_off_by_default_is_explored_on_and_shown_as_no_limit() -> None:
    row = knob_row(load_profile("strands-agents"))
    # limits=None is strands' default; limits={'turns': N}: N cycles, up to 6 model calls each (throttled retries)
    assert row.default is None and "| `turns` (no limit) |" in markdown([row])
    assert row.requests == (0, 6, 12, 18, 24, 30) and row.tools == (0, 2, 4, 6, 8, 10)
    assert "limit_turns" in row.exits


def test_markdown_marks_an_undecided_value() -> None:
    row = KnobRow("p", "fw 1.0", "n", 3, "counts a|b", (0, None), (0, 1), (), ("proved for every N", "unknown"))
    text = markdown([row])
    assert "| 0, ? | 0, 1 |" in text and "| — |" in text


def test_markdown_marks_a_value_without_a_limit_as_unbounded() -> None:
    row = KnobRow(
        "p", "fw 1.0", "n", 3, "counts", (15, 1), (10, 2), (), ("proved", "proved"), unbounded=(True, False)
    )
    assert "| ∞, 1 | ∞, 2 |" in markdown([row])


def test_the_block_is_replaced_between_the_markers_only() -> None:
    text = f"before\n{BEGIN}\nold\n{END}\nafter\n"
    assert replace_block(text, "new\n") == f"before\n{BEGIN}\nnew\n{END}\nafter\n"
    with pytest.raises(DefinitionError, match="no generated block"):
        replace_block("no markers here", "new\n")


@pytest.mark.slow  # every framework profile, twice: CI's own step `turnbound knobs --check README.md` is the quick one
def test_the_readme_holds_what_the_engines_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knobs", "--check", str(README)]) == 0
    drifted = tmp_path / "README.md"
    drifted.write_text(README.read_text().replace("0, 1, 1, 2, 2, 3", "0, 1, 2, 3, 4, 5"))
    assert main(["knobs", "--check", str(drifted)]) == 1
    assert "differs from what the engines give" in capsys.readouterr().out
