"""Counterexamples as something a person can replay: parameters, host script, trace, probe line.

The JSON form is also a case file (`params` + `script`), so `turnbound run PROFILE
--script counterexample.json` replays it on the reference; a run cut off at the
violation is first finished with each operation's simplest outcome so the script
runs to a terminal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from turnbound.properties.fuzz.checked_run import CheckedRun, Finding, fmt_value
from turnbound.properties.scheduler import Observed, first_divergence
from turnbound.reference.interpreter import outcome_script
from turnbound.reference.outcomes import Outcome, outcome_text
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace, probe_line
from turnbound.reference.types import Value


def counterexample(
    table: Table, run: CheckedRun, finding: Finding, observed: Observed | None
) -> dict[str, Any]:
    """The counterexample of `finding` (consumes `run`: it is completed to a terminal if it can be)."""
    complete = run.ended or run.complete()
    trace = run.trace()
    return {
        "profile": table.name,
        "violation": {
            "kind": finding.kind,
            "name": finding.name,
            "message": finding.message,
            "step": finding.step,
        },
        "params": dict(trace.params),
        "script": {op: [o.to_json() for o in outs] for op, outs in outcome_script(trace).items()},
        "complete": complete,
        "divergence": first_divergence(trace, observed) if observed is not None else None,
        "probe": probe_line(table, trace) if complete else None,
        "trace": trace.to_json(),
    }


def counted(n: int, noun: str) -> str:
    """`1 example`, `2 examples`, `1,948 host calls`: every count in a report agrees with its noun."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def fuzz_counts(examples: int, turns: int, steps: int) -> str:
    """What a fuzzing session ran; host calls are those answered (a diverging request is not)."""
    return (
        f"{counted(examples, 'example')}, {counted(turns, 'turn')}, "
        f"{counted(steps, 'host call')} answered"
    )


def render_counterexample(cx: Mapping[str, Any]) -> str:
    """The counterexample as text: what broke, then everything needed to replay it."""
    v = cx["violation"]
    trace = Trace.model_validate(cx["trace"])
    lines = [f"{cx['profile']}: {v['message']}"]
    if cx["divergence"]:
        lines.append(f"first divergence from the reference: {cx['divergence']}")
    lines.append("params: " + json.dumps(cx["params"]))
    lines.append("script: " + json.dumps(cx["script"]))
    if len(trace.steps) > v["step"]:
        lines.append(
            f"(steps after {v['step']} finish the run with each operation's simplest outcome, "
            "so the script replays to a terminal)"
        )
    elif not cx["complete"]:
        lines.append(f"(the run can not continue past step {v['step']}; the script stops there)")
    lines.append("trace (reference):")
    lines.extend("  " + row for row in trace_rows(trace, mark=v["step"]))
    if trace.violation:
        lines.append(f"contract violation: {trace.violation}")
    if not cx["complete"]:
        lines.append(f"stopped at location {trace.terminal} (not a terminal)")
        return "\n".join(lines)
    lines.append(f"terminal: {trace.terminal}")
    lines.append(f"probe: {cx['probe']}")
    lines.append(
        f"replay: save this counterexample as JSON and run `turnbound run {cx['profile']} --script FILE`"
    )
    return "\n".join(lines)


def trace_rows(trace: Trace, mark: int = 0) -> list[str]:
    """A trace as aligned text columns; the row of step `mark` is flagged."""
    header = ["#", "transition", "operation", "outcome", *trace.counters]
    rows = [header]
    for i, step in enumerate(trace.steps, 1):
        rows.append(
            [
                str(i),
                step.transition,
                f"{step.op}({_kv(step.args)})",
                _outcome(step.outcome),
                *(str(step.counters.get(c, "")) for c in trace.counters),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    out = []
    for n, row in enumerate(rows):
        text = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        out.append(text + ("  <- here" if n == mark and mark > 0 else ""))
    return out


def _kv(values: Mapping[str, Value]) -> str:
    return ", ".join(f"{k}={fmt_value(v)}" for k, v in values.items())


def _outcome(outcome: Outcome) -> str:
    return outcome_text(outcome)
