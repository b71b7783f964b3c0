"""The implementation side of protocol v1: a Python scheduler (or the reference) as a command.

`python -m turnbound.properties.conformance.serve PROFILE` answers protocol v1 with the
reference interpreter; `serve(run)` does the same for any synchronous scheduler.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import IO

from turnbound.properties.conformance.messages import PROTOCOL, dump, message_outcome
from turnbound.properties.scheduler import (
    RunFunction,
)
from turnbound.reference.host import Host
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table
from turnbound.reference.types import Value


class _WireHost:
    def __init__(self, stdin: IO[str], stdout: IO[str]) -> None:
        self.stdin = stdin
        self.stdout = stdout

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        self.stdout.write(dump({"type": "op", "op": op, "args": dict(args)}) + "\n")
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise SystemExit("turnbound closed the connection in the middle of a case")
        return message_outcome(json.loads(line))


def serve(run: RunFunction, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer protocol v1 on stdin/stdout with a synchronous Python scheduler, until `stop`."""
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    host = _WireHost(inp, out)
    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") == "stop":
            return 0
        if msg.get("type") != "start" or msg.get("protocol") != PROTOCOL:
            sys.stderr.write(f"expected a protocol {PROTOCOL} start message, got: {line.strip()}\n")
            return 2
        terminal, counters = run(dict(msg.get("params", {})), host)
        out.write(dump({"type": "end", "terminal": terminal, "counters": dict(counters)}) + "\n")
        out.flush()
    return 0


def reference_run(table: Table) -> RunFunction:
    """The reference interpreter as a synchronous scheduler, e.g. to serve it over the wire."""

    def run_reference(params: Mapping[str, int], host: Host) -> tuple[str, Mapping[str, int]]:
        trace = run(table, host, params, ghosts=False)  # judged on the wire: no claim reads ghosts
        return trace.terminal, trace.counters

    return run_reference


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m turnbound.properties.conformance.serve PROFILE`: the reference, speaking protocol v1."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m turnbound.properties.conformance.serve PROFILE\n")
        return 2
    return serve(reference_run(load_profile(args[0])))


if __name__ == "__main__":
    sys.exit(main())
