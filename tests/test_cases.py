"""Every seed case reproduces on the reference, figure for figure."""

from __future__ import annotations

import pytest
from turnbound.reference.cases import check_case
from turnbound.reference.monitors import check_trace
from turnbound.reference.profiles import load_profile, profile_cases, profile_names

from tests.conftest import SEEDS

ALL = [(name, case) for name in profile_names() for case in profile_cases(load_profile(name))]


@pytest.mark.parametrize(("profile", "case"), ALL, ids=[f"{p}/{c.name}" for p, c in ALL])
def test_case_reproduces(profile: str, case: object) -> None:
    table = load_profile(profile)
    result = check_case(table, case)  # type: ignore[arg-type]
    assert result.passed, result.mismatches
    assert result.trace is not None
    broken = [p.name for p in check_trace(table, result.trace) if p.expect == "holds"]
    assert broken == []


def test_deeptutor_has_the_eleven_seed_cases() -> None:
    names = {c.name for c in profile_cases(load_profile("deeptutor-scheduler"))}
    assert len(names) == 11
    assert {
        "ordinary_cap",
        "recovery_answer",
        "recovery_tools",
        "recovery_rejected",
        "partial_error",
        "forced_finish_extra_2",
        "abort_during_dispatch",
        "incomplete_call_round",
    } <= names


def test_probe_lines_stand_verbatim_in_the_seed() -> None:
    """The seed's 'Selected output' lines are our case lines, character for character."""
    seed = SEEDS / "000_62d844e9b3342951.txt"
    if not seed.exists():
        pytest.skip("the seed documents are not beside this checkout")
    text = seed.read_text()
    table = load_profile("deeptutor-scheduler")
    shown = [check_case(table, c).probe for c in profile_cases(table)]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("Selected output:")) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("PASS: 11 synthetic"))
    selected = [line for line in lines[start:end] if line.strip()]
    assert len(selected) == 7
    for line in selected:
        assert line in shown


def _with_args(case_name: str, args: dict[str, list[dict[str, object]]]) -> object:
    case = next(c for c in profile_cases(load_profile("tool-call-budget")) if c.name == case_name)
    return case.model_copy(update={"expect": case.expect.model_copy(update={"args": args})})


def test_a_case_compares_the_arguments_as_sent() -> None:
    """The seed's trailers 9, 8, 7: a table that sent 9, 7, 7 would pass a names-only case."""
    table = load_profile("tool-call-budget")
    wrong = _with_args("answer_before_cap", {"run_tool": [{"remaining": 9}, {"remaining": 7}, {"remaining": 7}]})
    result = check_case(table, wrong)  # type: ignore[arg-type]
    assert result.mismatches == ("run_tool call 2: remaining=8, expected 7",)
    short = _with_args("answer_before_cap", {"run_tool": [{"remaining": 9}]})
    assert check_case(table, short).mismatches == (  # type: ignore[arg-type]
        "run_tool called 3 times, expected arguments for 1",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"launch": [{}]}, "case kill_switch: expect.args.launch: no operation 'launch'"),
        ({"request": [{"colour": True}]}, "case kill_switch: expect.args.request[1]: request has no argument 'colour'"),
        ({"request": [{"tools": "no"}]}, "case kill_switch: expect.args.request[1].tools: 'no' is not a bool"),
    ],
)
def test_expected_arguments_the_table_does_not_declare_are_named(args: dict[str, list[dict[str, object]]], message: str) -> None:
    result = check_case(load_profile("tool-call-budget"), _with_args("kill_switch", args))  # type: ignore[arg-type]
    assert not result.passed and result.trace is None
    assert result.mismatches[0].startswith(message)
