"""The knob's curve: the engines' longest runs, their counts and exits, replayed on an implementation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.knob_points import Point, curve, read_points, write_points
from turnbound.properties.knobs import REQUESTS, TOOLS, knob_row
from turnbound.properties.scheduler import ReferenceScheduler
from turnbound.reference.errors import DefinitionError
from turnbound.reference.loader import load_table_text
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table

PROFILE = "openai-agents"


@pytest.fixture(scope="module")
def table() -> Table:
    return load_profile(PROFILE)


def test_the_curve_is_the_knobs_row(table: Table) -> None:
    points = curve(table, (REQUESTS, TOOLS), ns=range(4))
    row = knob_row(table)
    assert [p.engines for p in points if p.counter == REQUESTS] == list(row.requests[:4])
    assert [p.engines for p in points if p.counter == TOOLS] == list(row.tools[:4])
    assert {p.exit for p in points} <= set(table.terminals)


def test_the_formula_is_the_bound_and_tight_at_every_point(table: Table) -> None:
    points = curve(table, (REQUESTS, TOOLS), ns=range(4))
    # max_turns N allows N requests and, with two calls per reply, 2N tool executions (the bounds)
    assert [(p.n, p.counter, p.formula) for p in points] == [
        (n, c, n * (1 if c == REQUESTS else 2)) for n in range(4) for c in (REQUESTS, TOOLS)
    ]
    assert all(p.engines == p.formula for p in points)


def test_replayed_on_the_reference_every_point_agrees(table: Table) -> None:
    points = curve(table, (REQUESTS,), ReferenceScheduler(table), ns=range(3))
    assert [p.real for p in points] == [p.engines for p in points]
    assert all(p.agrees for p in points)


def test_an_implementation_one_request_short_is_off_the_curve(table: Table) -> None:
    assert table.source is not None
    text = Path(table.source).read_text(encoding="utf-8")
    guards = ("model_requests + 1 <= maxTurns", "model_requests + 1 > maxTurns")
    assert [text.count(g) for g in guards] == [1, 2], "the cap's guards moved: update this test's mutation"
    for g in guards:
        text = text.replace(g, g.replace("+ 1", "+ 2"))
    short = load_table_text(text, "short.toml")
    points = curve(table, (REQUESTS,), ReferenceScheduler(short), ns=range(1, 3))
    assert [p.agrees for p in points] == [False, False]
    assert [p.real for p in points] == [p.engines - 1 for p in points]


def test_points_round_trip_and_bad_files_are_one_error(tmp_path: Path, table: Table) -> None:
    points = [Point(2, REQUESTS, 2, "max_turns_exceeded", 2, 2, "max_turns_exceeded")]
    path = tmp_path / "p.json"
    write_points(path, table, "reference", points)
    assert read_points(path) == (PROFILE, points)
    path.write_text(json.dumps({"format": 1, "profile": PROFILE, "points": [{"n": 1}]}))
    with pytest.raises(DefinitionError, match=r"p\.json: not a knob points file"):
        read_points(path)
    path.write_text("[")
    with pytest.raises(DefinitionError, match=r"p\.json"):
        read_points(path)


def test_cli_writes_the_curve_and_refuses_two_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "curve.json"
    adapter = "turnbound.properties.scheduler:ReferenceScheduler"
    assert main(["knobs", PROFILE, "--adapter", adapter, "--points", str(out), "--n-max", "2"]) == 0
    assert "6 points of openai-agents (replayed on the real code, all agree)" in capsys.readouterr().out
    assert len(read_points(out)[1]) == 6
    assert main(["knobs", PROFILE, "pydantic-ai", "--points", str(out)]) == 2
    assert "exactly one PROFILE" in capsys.readouterr().err
