"""Tables the loader accepts but no engine may hang or crash on, under every command.

Each command runs through the real CLI entry point (`turnbound.properties.cli.main`) with
an alarm that fails the test after a few seconds instead of hanging the suite. Every
outcome must be a named result (exit 0 or 1) or a single `turnbound: error:` line with
exit 2; never a traceback. The rows that the one run loop exists for name their result.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from turnbound.properties.cli.main import main

TABLES = Path(__file__).resolve().parent / "pathological"
SECONDS = 120
"""Per command: a hang fails the test after this long (each finishes in seconds on a quiet machine;
the margin is for a loaded one, where the longest took 30 s)."""

MORE = {"facts": {"more": True}}
SCRIPTS = {
    "spin": {"finish": [{"facts": {}}]},
    "selfloop": {"finish": [{"facts": {}}]},
    "endless": {"step": [{"facts": {}}] * 3},
    "horizon": {"step": [MORE] * 4 + [{"facts": {"more": False}}], "finish": [{"facts": {}}]},
    "growth": {"step": [MORE] * 9 + [{"facts": {"more": False}}], "finish": [{"facts": {}}]},
}
LOGS = {
    "spin": [("op", "finish", {}), ("result", {}), ("end", "done", {})],
    "selfloop": [("op", "finish", {}), ("result", {}), ("end", "done", {})],
    "endless": [("op", "step", {}), ("result", {}), ("end", "done", {"calls": 1})],
    "horizon": [("op", "step", {}), ("result", {"more": True})] * 4 + [("end", "done", {"steps": 4})],
    "growth": [("op", "step", {}), ("result", {"more": True})] * 8 + [("end", "done", {"steps": 8})],
}

COMMANDS = [
    "run",
    "explore",
    "fuzz",
    "prove",
    "check",
    "mutate",
    "validate",
    "vectors",
    "conform-wire",
    "conform-fuzz",
    "graph",
]

EXPECTED: dict[tuple[str, str], tuple[int, str]] = {
    ("spin", "run"): (2, "internal transitions in a row without a host call"),
    ("spin", "explore"): (2, "internal transitions in a row without a host call"),
    ("spin", "fuzz"): (1, "internal transitions in a row without a host call"),
    ("spin", "prove"): (2, "spin: the reference cannot run it"),
    ("spin", "validate"): (1, "internal transitions in a row without a host call"),
    ("spin", "conform-fuzz"): (1, "internal transitions in a row without a host call"),
    ("selfloop", "run"): (2, "internal transitions loop at location 'a' without a host call"),
    ("selfloop", "explore"): (1, "a run may loop forever"),
    ("selfloop", "fuzz"): (1, "internal transitions loop at location 'a'"),
    ("selfloop", "prove"): (2, "selfloop: the reference cannot run it"),
    ("selfloop", "validate"): (1, "internal transitions loop at location 'a'"),
    ("endless", "run"): (2, "host script has no outcome for call #4 of 'step'"),
    ("endless", "explore"): (1, "Not decided: limit DEFAULT_MAX_STEPS=10000 host calls reached"),
    ("horizon", "run"): (0, "terminal: horizon"),
    ("horizon", "explore"): (0, "OK"),
    ("horizon", "fuzz"): (0, "no violation"),
    ("horizon", "validate"): (1, "not decided: limit step_horizon reached (3 host calls"),
    ("horizon", "conform-wire"): (0, "0 failed"),
    ("horizon", "conform-fuzz"): (0, "0 failed"),
    ("growth", "run"): (2, "(limit INT_LIMIT reached)"),
    ("growth", "explore"): (1, "Not decided: limit INT_LIMIT reached"),
    ("growth", "fuzz"): (1, "limit INT_LIMIT reached"),
    ("growth", "prove"): (2, "limit INT_LIMIT reached"),
    ("growth", "conform-fuzz"): (1, "limit INT_LIMIT reached"),
}


class Hang(Exception):
    pass


@pytest.fixture
def alarm() -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no result within {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _log(name: str) -> str:
    lines = [{"type": "start", "params": {}}]
    for entry in LOGS[name]:
        if entry[0] == "op":
            lines.append({"type": "op", "op": entry[1], "args": entry[2]})
        elif entry[0] == "result":
            lines.append({"type": "result", "facts": entry[1]})
        else:
            lines.append({"type": "end", "terminal": entry[1], "counters": entry[2]})
    return "".join(json.dumps(m) + "\n" for m in lines)


def _argv(command: str, table: Path, tmp: Path) -> list[str]:
    name = table.stem
    if command == "run":
        script = tmp / "script.json"
        script.write_text(json.dumps(SCRIPTS[name]))
        return ["run", str(table), "--script", str(script)]
    if command == "fuzz":
        return ["fuzz", str(table), "--examples", "10"]
    if command == "prove":
        return ["prove", str(table), "--timeout", "5"]
    if command == "check":
        return ["check", str(table), "--examples", "10"]
    if command == "mutate":
        return ["mutate", str(table), "--engines", "cases,explore", "--jobs", "1"]
    if command == "validate":
        log = tmp / "run.log"
        log.write_text(_log(name))
        return ["validate", str(table), str(log)]
    if command == "vectors":
        return ["vectors", "generate", str(table)]
    if command == "conform-wire":
        vectors = tmp / "vectors" / name
        wire = [sys.executable, "-m", "turnbound.properties.conformance.serve", str(table)]
        return ["conform", str(table), "--vectors", str(vectors), "--timeout", "5", "--", *wire]
    if command == "conform-fuzz":
        ref = "turnbound.properties.scheduler:ReferenceScheduler"
        return ["conform", str(table), "--fuzz", "5", "--adapter", ref]
    if command == "graph":
        return ["graph", str(table), "--out", str(tmp / "g.dot")]
    return [command, str(table)]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_command_ends_cleanly(
    name: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    alarm: None,
) -> None:
    table = tmp_path / f"{name}.toml"
    shutil.copy(TABLES / table.name, table)
    monkeypatch.chdir(tmp_path)
    if command == "conform-wire":  # the vectors of the table, made by the command under test
        main(["vectors", "generate", str(table)])
        (tmp_path / "vectors" / name).mkdir(parents=True, exist_ok=True)
        capsys.readouterr()
    code = main(_argv(command, table, tmp_path))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code in (0, 1, 2), out + err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("turnbound: error: "), err
    else:
        assert out.strip(), "a result is printed"
    expected = EXPECTED.get((name, command))
    if expected is not None:
        assert (code, expected[1] in out + err) == (expected[0], True), out + err


def test_a_step_horizon_under_prove_is_not_a_replay_bug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], alarm: None
) -> None:
    """Witnesses longer than the horizon are cut off by the one run: not decided, not a crash."""
    text = (TABLES.parent.parent / "spec" / "deeptutor-scheduler.toml").read_text()
    short = text.replace("[profile]\n", "[profile]\nstep_horizon = 2\n", 1)
    assert short != text
    table = tmp_path / "deeptutor-scheduler.toml"
    table.write_text(short)
    code = main(["prove", str(table), "--timeout", "10", "--claim", "naive_rounds_bound"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert "naive_rounds_bound: REFUTED" in out and "as expected" in out


def test_run_limits_must_be_positive() -> None:
    from turnbound.properties.scheduler import ReferenceScheduler
    from turnbound.reference.host import Script, ScriptHost
    from turnbound.reference.interpreter import run
    from turnbound.reference.profiles import load_profile

    table = load_profile("tool-call-budget")
    for bad in (0, -1, True):
        with pytest.raises(ValueError, match=f"max_steps must be a positive integer, got {bad!r}"):
            run(table, ScriptHost(Script({})), max_steps=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="max_steps must be a positive integer"):
            ReferenceScheduler(table, max_steps=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="run: expected a Table, got str"):
        run("tool-call-budget", ScriptHost(Script({})))  # type: ignore[arg-type]


def test_a_value_without_bound_stops_at_the_named_limit() -> None:
    from turnbound.reference.errors import ValueTooLarge
    from turnbound.reference.host import Script, ScriptHost
    from turnbound.reference.interpreter import run
    from turnbound.reference.loader import load_table

    script = Script.model_validate(SCRIPTS["growth"])
    with pytest.raises(ValueTooLarge, match=r"transition work makes steps an integer of 26 digits"):
        run(load_table(TABLES / "growth.toml"), ScriptHost(script))


def test_a_limit_reached_reads_as_not_decided(capsys: pytest.CaptureFixture[str], alarm: None) -> None:
    """A search cut short by its state limit reports no verdict: no FAIL, no HOLDS, no witness."""
    assert main(["explore", "deeptutor-scheduler", "-p", "explorationBudget=200", "--max-states", "300"]) == 1
    out = capsys.readouterr().out
    assert "Not decided: limit max_states=300 reached in 1 configuration" in out
    assert "FAIL" not in out and "HOLDS" not in out and "VIOLATED" not in out
    assert "horizon" not in out
    args = ["explore", "deeptutor-scheduler", "-p", "explorationBudget=200", "--max-states", "300", "--json"]
    assert main(args) == 1
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert result["limit"] == "max_states=300" and result["violations"] == []
    assert {c["verdict"] for c in result["claims"]} == {"unknown"}
