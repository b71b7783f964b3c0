"""Every reader of untrusted text, fuzzed: a result or one line of turnbound's own error, never more.

A quick, derandomized sample per reader here; `test_readers_fuzz_slow.py` runs 10,000
examples per reader. The strategies and the property live in `tests/readers_fuzz.py`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from turnbound.properties.cli.main import main

from tests.readers_fuzz import (
    READERS_IN_MEMORY,
    READERS_ON_DISK,
    SMALL_TABLES,
    case_texts,
    log_lines,
    mutate_text,
    table_text,
)

QUICK = settings(
    max_examples=50,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.parametrize("name", sorted(READERS_IN_MEMORY))
def test_reader_in_memory(name: str) -> None:
    reader: Callable[[st.DataObject], object] = READERS_IN_MEMORY[name]

    @QUICK
    @given(st.data())
    def check(data: st.DataObject) -> None:
        reader(data)

    check()


@pytest.mark.parametrize("name", sorted(READERS_ON_DISK))
def test_reader_on_disk(name: str) -> None:
    reader = READERS_ON_DISK[name]
    with tempfile.TemporaryDirectory() as tmp:

        @QUICK
        @given(st.data())
        def check(data: st.DataObject) -> None:
            reader(data, Path(tmp))

        check()


# -- the same inputs through the command line -------------------------------------------

CLI = settings(
    max_examples=15, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


def _cli_clean(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 0, 1 or 2; on 2 exactly one error line; never a traceback."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code in (0, 1, 2), (code, captured)
    assert "Traceback" not in captured.out + captured.err
    if code == 2:
        err = captured.err.strip()
        assert err.startswith("turnbound: error: ") and "\n" not in err, err


def test_cli_on_mutated_tables_scripts_and_logs(capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)

        @CLI
        @given(st.data())
        def check(data: st.DataObject) -> None:
            name = data.draw(st.sampled_from(SMALL_TABLES))
            case = data.draw(st.sampled_from(case_texts(name)))
            table_file = directory / "mutant.toml"
            table_file.write_text(
                mutate_text(data, table_text(name)), encoding="utf-8", errors="surrogatepass"
            )
            script_file = directory / "script.json"
            script_file.write_text(case, encoding="utf-8")
            _cli_clean(["run", str(table_file), "--script", str(script_file)], capsys)
            script_file.write_text(mutate_text(data, case), encoding="utf-8", errors="surrogatepass")
            _cli_clean(["run", name, "--script", str(script_file)], capsys)
            log = directory / "run.jsonl"
            lines = list(log_lines(name))
            i = data.draw(st.integers(0, len(lines) - 1))
            lines[i] = mutate_text(data, lines[i])
            log.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
            _cli_clean(["validate", name, str(log)], capsys)

        check()
