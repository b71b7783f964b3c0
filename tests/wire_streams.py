"""Hostile wire message streams: what an implementation under test might write to its stdout.

A stream is a list of lines (bytes) drawn from well-formed messages of the table, the same
messages mutated byte by byte, arbitrary JSON, and the known hostile forms (deep nesting,
huge integers, NaN, lone surrogates, invalid UTF-8, overlong lines); after them the
process either exits or hangs. `play` feeds one stream to the runner through `cat` in a shell that
reads only the start message, so each answer turnbound writes either waits in the pipe or
breaks it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st
from turnbound.properties.conformance.cases import ConformCase, ConformCaseResult, run_case
from turnbound.properties.conformance.runner import failure_details, result_json
from turnbound.properties.conformance.wire import WireScheduler
from turnbound.reference.table import Table

MAX_LINE = 2048
"""The runner's line bound in these tests: small, so overlong lines are cheap to make."""
EXIT_TIMEOUT = 1.0
HANG_TIMEOUT = 0.05
NO_HANG = EXIT_TIMEOUT + 5
"""Seconds within which every stream must end: its timeout, plus a margin for a machine under load."""

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.text(max_size=8),
    st.floats(allow_nan=False),
    st.none(),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def messages(table: Table) -> st.SearchStrategy[dict[str, object]]:
    """Messages of the table's vocabulary (ops, ends), with arguments right or wrong."""
    ops = sorted(table.operations)
    terminals = sorted({*table.terminals, "finish", "no_such_terminal"})
    counters = sorted(table.counters)
    op = st.builds(
        lambda name, args: {"type": "op", "op": name, "args": args},
        st.sampled_from([*ops, "no_such_op"]),
        st.dictionaries(st.sampled_from(["mode", "recovery", "reason", "attempt", "x"]), scalars, max_size=3),
    )
    end = st.builds(
        lambda terminal, values: {"type": "end", "terminal": terminal, "counters": values},
        st.sampled_from(terminals),
        st.dictionaries(st.sampled_from([*counters, "extra"]), st.integers(-3, 1 << 64), max_size=5),
    )
    other = st.dictionaries(st.sampled_from(["type", "op", "args", "terminal", "counters"]), json_values)
    return st.one_of(op, end, other)


def _mutate(text: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    data = bytearray(text)
    for kind, where, byte in edits:
        if not data:
            data.append(byte)
            continue
        i = where % len(data)
        if kind == 0:
            data[i] = byte
        elif kind == 1:
            data.insert(i, byte)
        else:
            del data[i]
    return bytes(data).replace(b"\n", b" ")


HOSTILE_LINES = [
    b'{"type": "op", "op": "call_round", "args": {"mode": "exploration\\n", "recovery": false}}',
    b'{"type": "op", "op": "call_round", "args": {"mode\\u0000": "exploration", "recovery": false}}',
    b"[" * 5_000,  # past the parser's nesting limit (200,000 is iut.py's deep-json, in test_wire_hostile)
    b"{" * 5_000,
    b'{"type": "end", "terminal": "finish", "counters": {"rounds": ' + b"9" * 5000 + b"}}",
    b'{"type": "end", "terminal": "finish", "counters": {"rounds": NaN}}',
    b'{"type": "end", "terminal": "finish", "counters": {"rounds": -Infinity}}',
    b'{"type": "end", "terminal": "\\ud800", "counters": {}}',
    b'{"type": "op", "op": "call_round", "args": {"mode": "\\udfff", "recovery": false}}',
    b'{"type": "op", "op": "call_round", "args": {"\\ud800": 1}}',
    b'{"type": "end", "terminal": "fin\xffish", "counters": {}}',
    b"\xff\xfe\xfd",
    b"x" * (MAX_LINE + 1),
    b"\x00\x00",
    b"\r",
    b"   ",
    b"null",
    b'"op"',
    b"[]",
    b"1e999999",
    b'{"type": "end", "terminal": "finish", "counters": {"rounds": 1.5}}',
    b'{"type": "end", "terminal": "finish", "counters": {"rounds": 18446744073709551616}}',
]


def lines(table: Table) -> st.SearchStrategy[bytes]:
    encoded = messages(table).map(lambda m: json.dumps(m).encode())
    edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4)
    return st.one_of(
        encoded,
        st.builds(_mutate, encoded, edits),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.sampled_from(HOSTILE_LINES),
        st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    )


@dataclass(frozen=True)
class Stream:
    lines: list[bytes]
    newline_at_end: bool
    hangs: bool

    def data(self) -> bytes:
        return b"\n".join(self.lines) + (b"\n" if self.newline_at_end else b"")


def streams(table: Table) -> st.SearchStrategy[Stream]:
    hangs = st.sampled_from([False] * 7 + [True])  # a hang costs its timeout: one stream in eight
    return st.builds(Stream, st.lists(lines(table), max_size=6), st.booleans(), hangs)


def play(table: Table, case: ConformCase, stream: Stream, tmp: Path) -> tuple[ConformCaseResult, float]:
    """Run `case` against a process that writes `stream` and then exits or hangs."""
    path = tmp / "stream"
    path.write_bytes(stream.data())
    # The start message is read first, so that writing it never races with the process's exit.
    script = 'read -r _; cat "$0"; exec sleep 60' if stream.hangs else 'read -r _; exec cat "$0"'
    command = ["sh", "-c", script, str(path)]
    timeout = HANG_TIMEOUT if stream.hangs else EXIT_TIMEOUT
    wire = WireScheduler(command, table, timeout=timeout, max_line=MAX_LINE)
    began = time.monotonic()
    try:
        result = run_case(wire, case)
    finally:
        wire.close()
    return result, time.monotonic() - began


def check_clean(result: ConformCaseResult) -> None:
    """A case that passed, or failed with a one-line reason that every report can render."""
    if result.passed:
        return
    assert isinstance(result.divergence, str) and result.divergence
    assert "\n" not in result.divergence and "Traceback" not in result.divergence
    "\n".join(failure_details(result)).encode("utf-8")
    json.dumps(result_json(result, details=True), ensure_ascii=False).encode("utf-8")
