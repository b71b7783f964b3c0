"""Hostile files, options and API calls: each is refused in one line (exit 2) or gives a correct result.

Every test here reproduces one way an outside check broke turnbound with input someone
else wrote: a table name that walks out of its directory, sizes that exhaust memory,
grammar Python reads but the table language does not have, options that are not numbers,
readers that turned deep or huge JSON into tracebacks, and API calls with the wrong types.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.conformance import vector_gen
from turnbound.properties.conformance.vector_gen import write_vectors
from turnbound.properties.conformance.vectors import Manifest, Vector
from turnbound.properties.explore.explorer import explore
from turnbound.properties.export.itf import read_itf
from turnbound.properties.fuzz.stateful import machine_for
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.errors import DefinitionError, TableError
from turnbound.reference.host import Script, ScriptHost, check_script, parse_script
from turnbound.reference.interpreter import run
from turnbound.reference.limits import (
    MAX_FACT_VALUES,
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    MAX_PARAMETER_VALUE,
    PROFILE_NAME,
)
from turnbound.reference.loader import load_table, load_table_text
from turnbound.reference.profiles import load_profile, profile_names, spec_dir, table_path

UNGUARDED = (spec_dir() / "dsh-turn-unguarded.toml").read_text(encoding="utf-8")
SCHEDULER = (spec_dir() / "deeptutor-scheduler.toml").read_text(encoding="utf-8")


def variant(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI; it must exit 2 with exactly one error line and no traceback."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured
    err = captured.err.strip()
    assert "Traceback" not in captured.out + captured.err
    assert err.startswith("turnbound: error: ") and "\n" not in err, err
    return err


# -- names and paths ------------------------------------------------------------------


def test_every_bundled_profile_name_is_an_identifier() -> None:
    for name in profile_names():
        assert PROFILE_NAME.fullmatch(name), name
        assert load_profile(name).name == name


@pytest.mark.parametrize(
    "name",
    [
        "x/../../../../../../../../elsewhere/victim",
        "../victim",
        "/tmp/victim",
        "victim\nsecond line",
        "Victim",
        "victim.json",
        "",
        "a" * 65,
    ],
)
def test_a_profile_name_that_is_not_an_identifier_is_refused(name: str) -> None:
    text = variant(UNGUARDED, 'name = "dsh-turn-unguarded"', f"name = {json.dumps(name)}")
    with pytest.raises(TableError) as info:
        load_table_text(text, "evil.toml")
    assert info.value.where == "profile.name"
    assert "\n" not in str(info.value)


@pytest.fixture
def generated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Generate the small table's vectors once per module: these tests are about writing them."""
    vectors, manifest = _generated()
    monkeypatch.setattr(
        vector_gen, "generate", lambda table: (vectors, manifest.model_copy(update={"profile": table.name}))
    )


@cache
def _generated() -> tuple[list[Vector], Manifest]:
    return vector_gen.generate(
        load_table_text(variant(UNGUARDED, 'name = "dsh-turn-unguarded"', 'name = "good"'))
    )


@pytest.mark.usefixtures("generated_once")
def test_vectors_generate_never_deletes_a_file_it_did_not_write(tmp_path: Path) -> None:
    """An evil name is refused before anything is written; a good one writes only its own files."""
    victim = tmp_path / "elsewhere"
    victim.mkdir()
    (victim / "precious.json").write_text("{}")
    evil = tmp_path / "tables" / "evil.toml"
    evil.parent.mkdir()
    evil.write_text(
        variant(UNGUARDED, 'name = "dsh-turn-unguarded"', 'name = "x/../../../elsewhere"'), encoding="utf-8"
    )
    assert main(["vectors", "generate", str(evil)]) == 2
    assert sorted(p.name for p in victim.iterdir()) == ["precious.json"]

    good = tmp_path / "tables" / "good.toml"
    good.write_text(variant(UNGUARDED, 'name = "dsh-turn-unguarded"', 'name = "good"'), encoding="utf-8")
    out = tmp_path / "tables" / "vectors" / "good"
    out.mkdir(parents=True)
    (out / "notes.json").write_text("{}")  # someone else's file in the output directory
    (out / "step-0000000000.json").write_text("{}")  # looks like a vector, but no manifest lists it
    table = load_table(good)
    _, vectors, _ = write_vectors(table)
    written = {f"{v.id}.json" for v in vectors} | {"manifest.json"}
    assert {p.name for p in out.iterdir()} == written | {"notes.json", "step-0000000000.json"}
    # A vector the previous manifest listed and this generation no longer makes is removed.
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["vectors"].append("step-stale000000")
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "step-stale000000.json").write_text("{}")
    write_vectors(table)
    assert not (out / "step-stale000000.json").exists()
    assert (out / "notes.json").exists() and (out / "step-0000000000.json").exists()


@pytest.mark.usefixtures("generated_once")
def test_a_manifest_cannot_name_a_file_outside_its_directory(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(variant(UNGUARDED, 'name = "dsh-turn-unguarded"', 'name = "good"'), encoding="utf-8")
    out = tmp_path / "vectors" / "good"
    out.mkdir(parents=True)
    (tmp_path / "victim.json").write_text("{}")
    (out / "manifest.json").write_text(json.dumps({"profile": "good", "vectors": ["../../victim"]}))
    write_vectors(load_table(good))
    assert (tmp_path / "victim.json").exists()


def test_a_profile_name_is_a_bundled_name_and_a_path_looks_like_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.toml").write_text(UNGUARDED, encoding="utf-8")
    for name in ["../../x", str(tmp_path / "x")[1:], "dsh-turn-unguarded\n"]:
        err = one_line_exit_2(["run", name, "--all-cases"], capsys)
        assert "unknown profile" in err
    err = one_line_exit_2(["run", str(tmp_path / "foo.toml"), "--all-cases"], capsys)
    assert "foo.toml: the table file does not exist" in err
    upper = tmp_path / "T.TOML"
    upper.write_text(UNGUARDED, encoding="utf-8")
    assert table_path(str(upper)) == upper
    with pytest.raises(TypeError, match="profile name or a table path"):
        table_path(None)  # type: ignore[arg-type]


# -- limits ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "where", "words"),
    [
        (
            'facts.extraRounds = { type = "int", min = 0, max = 1 }',
            'facts.extraRounds = { type = "int", min = 0, max = 1000000000000 }',
            "extraRounds",
            f"the limit is {MAX_FACT_VALUES}",
        ),
        ("range = [0, 3]", "range = [0, 1000000000000000000000]", "range", "beyond the limit"),
        ("default = 1\nrange", f"default = {MAX_PARAMETER_VALUE + 1}\nrange", "default", "beyond the limit"),
        ("range = [0, 2]", "range = [0, 900]", "parameters", "configurations; the limit is"),
    ],
)
def test_sizes_a_table_asks_for_are_limited(old: str, new: str, where: str, words: str) -> None:
    with pytest.raises(DefinitionError) as info:
        load_table_text(variant(SCHEDULER, old, new), "big.toml")
    message = str(info.value)
    assert where in message and words in message, message
    assert message.startswith("big.toml: ")


def test_a_huge_step_horizon_is_refused() -> None:
    text = variant(UNGUARDED, "step_horizon = 128", "step_horizon = 10000000000")
    with pytest.raises(TableError, match=r"profile\.step_horizon"):
        load_table_text(text, "t.toml")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["explore", "deeptutor-scheduler", "-p", "explorationBudget=0..1000000000"], "limited to"),
        (["explore", "deeptutor-scheduler", "-p", "emptyRecoveryBudget=0..1000"], "the limit is"),
        (
            ["explore", "deeptutor-scheduler", "-p", "emptyRecoveryBudget=0..40", "-p", "explorationBudget=0..40"],
            "1681 configurations",
        ),
        (["explore", "deeptutor-scheduler", "-p", "explorationBudget=" + "9" * 5000], "limited to"),
        (
            [
                "run",
                "deeptutor-scheduler",
                "--script",
                str(spec_dir() / "cases" / "deeptutor-scheduler" / "ordinary_cap.json"),
                "-p",
                "explorationBudget=1",
                "-p",
                "explorationBudget=2",
            ],
            "--param explorationBudget is given twice",
        ),
        (
            ["explore", "deeptutor-scheduler", "-p", "emptyRecoveryBudget=1", "-p", "emptyRecoveryBudget=2"],
            "twice",
        ),
    ],
)
def test_option_sizes_are_checked_up_front(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert words in one_line_exit_2(argv, capsys)


def test_worker_count_is_limited(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--jobs" in one_line_exit_2(["explore", "dsh-turn-unguarded", "--jobs", "100000"], capsys)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "1e9", "abc"])
def test_prove_timeout_must_be_a_finite_positive_duration(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "--timeout" in one_line_exit_2(["prove", "dsh-turn-unguarded", "--timeout", value], capsys)


# -- the expression grammar -----------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("resumed # and false", "comment"),
        ("steps <= claimedCeiling # or true", "comment"),
        ("ｓｔｅｐｓ <= claimedCeiling", "U+FF53"),
        ("steps <= claimedCeiling and ﬁnish", "U+FB01"),
        ("steps <= 0x14", "'0x14' is not a decimal integer literal"),
        ("steps <= 1_000", "'1_000' is not a decimal integer literal"),
        ("steps <= 0o7", "not a decimal integer literal"),
        ("steps <= 0b1", "not a decimal integer literal"),
        ("True or steps <= claimedCeiling", "'True' is not part of the table language"),
        ("steps <= claimedCeiling \\\n or true", "backslash"),
        ("steps <= 1e3", "float"),
        ("steps <= 10000000000", "larger than"),
        ("steps <= (1if true else 2)", "invalid decimal literal"),
        ("steps <= 0x1g", "invalid hexadecimal literal"),
    ],
)
def test_expressions_accept_only_the_documented_grammar(expr: str, words: str) -> None:
    text = variant(UNGUARDED, 'expr = "steps <= claimedCeiling"', f"expr = {json.dumps(expr)}")
    with pytest.raises(TableError) as info:
        load_table_text(text, "t.toml")
    assert words in str(info.value), str(info.value)
    assert "\n" not in str(info.value).replace("\\n", "")


def test_invalid_utf8_is_refused_with_its_byte_offset(tmp_path: Path) -> None:
    raw = UNGUARDED.encode("utf-8")
    at = raw.index(b"dsh turn without a guard")
    path = tmp_path / "t.toml"
    path.write_bytes(raw[:at] + b"\xff\xfe" + raw[at:])
    with pytest.raises(DefinitionError, match=rf"t\.toml: table is not valid UTF-8 \(byte {at}\)$"):
        load_table(path)


def test_a_false_lemma_does_not_switch_off_the_guard_exclusivity_proof(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlapping = variant(
        UNGUARDED, 'guard = "user_messages <= maxUserMessages and not toolCalls"', 'guard = "true"'
    )
    with pytest.raises(TableError, match="overlap"):
        load_table_text(overlapping, "t.toml")
    with_false_lemma = variant(
        overlapping, 'expr = "tool_runs <= steps and admitted <= user_messages"', 'expr = "false"'
    )
    with pytest.raises(TableError, match="overlap"):
        load_table_text(with_false_lemma, "t.toml")
    path = tmp_path / "t.toml"
    path.write_text(with_false_lemma, encoding="utf-8")
    assert "overlap" in one_line_exit_2(["check", str(path), "--engines", "cases"], capsys)


# -- scripts --------------------------------------------------------------------------


def test_a_script_fact_outside_its_domain_or_an_unknown_op_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"call_round": [{"facts": {"hasTools": 3}}]}))
    err = one_line_exit_2(["run", "deeptutor-scheduler", "--script", str(script)], capsys)
    assert "script.call_round[0]" in err and "hasTools=3" in err
    script.write_text(json.dumps({"call_rounds": [{"facts": {}}]}))
    err = one_line_exit_2(["run", "deeptutor-scheduler", "--script", str(script)], capsys)
    assert "script.call_rounds" in err and "no operation 'call_rounds'" in err


def test_a_case_whose_script_names_an_unknown_operation_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.toml").write_text(UNGUARDED, encoding="utf-8")
    cases = tmp_path / "cases" / "dsh-turn-unguarded"
    cases.mkdir(parents=True)
    case = {
        "name": "typo",
        "script": {"model_stepp": [{"facts": {"toolCalls": False}}]},
        "expect": {"terminal": "completed"},
    }
    (cases / "typo.json").write_text(json.dumps(case))
    assert main(["run", str(tmp_path / "t.toml"), "--all-cases"]) == 1
    assert "script.model_stepp: dsh-turn-unguarded has no operation 'model_stepp'" in capsys.readouterr().out


def test_a_case_that_expects_a_contract_violation_still_runs(capsys: pytest.CaptureFixture[str]) -> None:
    case = spec_dir() / "cases" / "deeptutor-scheduler" / "forced_finish_extra_2.json"
    assert main(["run", "deeptutor-scheduler", "--script", str(case)]) == 0
    assert "terminal: contract_violation" in capsys.readouterr().out


# -- readers of untrusted JSON ----------------------------------------------------------


def _log(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text('{"type": "start", "params": {}}\n' + line + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("[" * 200_000, "nested deeper than"),
        ('{"type": "request", "n": ' + "7" * 5000 + "}", f"the limit is {MAX_INT_DIGITS}"),
        ('{"type": "request", "n": 1e999999}', "out of range"),
        ('{"type": "request", "n": NaN}', "NaN is not JSON"),
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "nested deeper than"),
    ],
)
def test_validate_reads_a_hostile_log_in_one_line(
    tmp_path: Path, line: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = one_line_exit_2(["validate", "deeptutor-scheduler", str(_log(tmp_path, line))], capsys)
    assert "run.jsonl:2: " in err and words in err, err


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        '{"call_round": [{"facts": {"n": ' + "1" * 10_000 + "}}]}",
        "\ufeff{}",
        '{"a": Infinity}',
    ],
)
def test_script_case_vector_and_itf_readers_refuse_hostile_json(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    assert "x.json" in one_line_exit_2(["run", "deeptutor-scheduler", "--script", str(path)], capsys)
    cases = tmp_path / "cases" / "dsh-turn-unguarded"
    cases.mkdir(parents=True)
    (cases / "x.json").write_text(text, encoding="utf-8")
    (tmp_path / "t.toml").write_text(UNGUARDED, encoding="utf-8")
    assert "x.json" in one_line_exit_2(["run", str(tmp_path / "t.toml"), "--all-cases"], capsys)


def test_invalid_utf8_in_a_script_names_the_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"call_round": [\xff]}')
    err = one_line_exit_2(["run", "deeptutor-scheduler", "--script", str(path)], capsys)
    assert re.search(r"not valid UTF-8 \(byte 16\)", err), err


# -- the Python API ---------------------------------------------------------------------


def test_api_arguments_are_checked_at_the_boundary() -> None:
    table = load_profile("deeptutor-scheduler")
    with pytest.raises(TypeError, match=r"machine_for: expected a Table, got str; load it first"):
        machine_for("deeptutor-scheduler")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"run: expected a host with a call\(op, args\) method, got dict"):
        run(table, {"call_round": []})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"run: expected a Table, got str"):
        run("deeptutor-scheduler", ScriptHost(Script({})))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"run: parameter explorationBudget must be an int, got str"):
        run(table, ScriptHost(Script({})), {"explorationBudget": "1"})  # type: ignore[dict-item]
    with pytest.raises(
        TypeError, match=r"load_table_text: expected the table's TOML text \(str\), got NoneType"
    ):
        load_table_text(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"load_table: expected a path"):
        load_table(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"explore: max_states must be at least 1, got 0"):
        explore(table, max_states=0)
    with pytest.raises(TypeError, match=r"explore: expected a Table"):
        explore("deeptutor-scheduler")  # type: ignore[arg-type]


def test_a_scheduler_instance_where_a_factory_is_expected_fails_at_once() -> None:
    table = load_profile("deeptutor-scheduler")
    instance = ThreadedScheduler(lambda params, host: None)
    with pytest.raises(TypeError, match=r"factory .* got a ThreadedScheduler instance; pass `lambda: Thr"):
        machine_for(table, scheduler=instance)  # type: ignore[arg-type]
    machine_for(table, scheduler=lambda: ThreadedScheduler(lambda params, host: None))  # a factory is fine
    with pytest.raises(TypeError, match="run must be a function"):
        ThreadedScheduler("not a function")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        ThreadedScheduler(lambda params, host: None, timeout=float("nan"))


# -- messages ----------------------------------------------------------------------------


def test_an_error_message_is_one_line_whatever_a_file_holds(tmp_path: Path) -> None:
    assert str(DefinitionError("t.toml: name 'a\nb\x1b[2J\u2028c'")) == "t.toml: name 'a\\nb\\x1b[2J\\u2028c'"
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"call_round\nforged line": []}))
    table = load_profile("deeptutor-scheduler")
    with pytest.raises(DefinitionError) as info:
        check_script(table, parse_script(json.loads(script.read_text()), str(script)), str(script))
    assert "\n" not in str(info.value) and "call_round\\nforged line" in str(info.value)


@pytest.mark.parametrize(
    "state",
    [
        {"x": {"#bigint": "abc"}},
        {"x": {"#bigint": "1" * 40}},
        {"x": {"#tup": 3}},
        {"x": {"#map": [[[1], 2]]}},
    ],
)
def test_a_malformed_itf_value_is_one_line(tmp_path: Path, state: dict[str, object]) -> None:
    path = tmp_path / "t.itf.json"
    path.write_text(json.dumps({"states": [state]}))
    with pytest.raises(DefinitionError, match=r"t\.itf\.json: not an ITF trace: "):
        read_itf(path)
