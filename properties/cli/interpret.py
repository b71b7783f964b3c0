"""`turnbound profiles` and `turnbound run`: the reference on named cases or a host script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table as RichTable
from turnbound.properties.cli.app import (
    app,
    console,
    emit_json,
    finish,
    json_option,
    param_option,
    parse_param_values,
    usage_error,
)
from turnbound.properties.conformance.runner import fmt_call
from turnbound.properties.scheduler import fmt_values
from turnbound.reference.cases import CaseResult, check_case
from turnbound.reference.errors import DefinitionError
from turnbound.reference.host import ScriptHost, check_script, parse_script
from turnbound.reference.interpreter import run as run_table
from turnbound.reference.jsonfile import read_json
from turnbound.reference.outcomes import outcome_text
from turnbound.reference.profiles import load_profile, profile_cases, profile_names
from turnbound.reference.table import CONTRACT_VIOLATION
from turnbound.reference.trace import Step, Trace, probe_line


@app.command()
@json_option
def profiles(as_json: bool) -> None:
    """List the bundled profiles."""
    rows: list[dict[str, Any]] = []
    for name in profile_names():
        table = load_profile(name)
        rows.append(
            {
                "name": name,
                "title": table.title,
                "parameters": table.defaults(),
                "cases": len(profile_cases(table)),
                "variant_of": table.variant_of,
            }
        )
    if as_json:
        emit_json(rows)
        return
    out = RichTable("profile", "parameters (defaults)", "cases", "title", box=None, pad_edge=False)
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r["parameters"].items())
        out.add_row(r["name"], params, str(r["cases"]), r["title"])
    console.print(out)


@app.command("run")
@click.argument("profile")
@click.option("--case", "case", multiple=True, metavar="NAME", help="Run the named case (repeatable).")
@click.option("--all-cases", is_flag=True, help="Run every case of the profile.")
@click.option("--script", type=click.Path(path_type=Path), help="A host script (or case) JSON file.")
@click.option("--itf", type=click.Path(path_type=Path), help="With --script: also write the trace as ITF.")
@param_option
@json_option
def run_cmd(
    profile: str,
    case: tuple[str, ...],
    all_cases: bool,
    script: Path | None,
    itf: Path | None,
    param: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run the reference on PROFILE (a bundled name or a .toml path).

    With --case/--all-cases: one probe line per case, then PASS or the failures.
    With --script: one host script, printed as a trace.
    """
    table = load_profile(profile)
    if script is not None:
        if case or all_cases:
            usage_error("--script can not be combined with --case or --all-cases")
        _run_script(profile, script, parse_param_values(param), as_json, itf)
        return
    if itf is not None:
        usage_error("--itf applies to --script")
    if param:
        usage_error("--param applies to --script; a case carries its own parameters")
    known = {c.name: c for c in profile_cases(table)}
    if all_cases:
        chosen = list(known.values())
    elif case:
        missing = [n for n in case if n not in known]
        if missing:
            usage_error(f"{table.name}: no case named {missing[0]!r}; cases: {', '.join(known) or 'none'}")
        chosen = [known[n] for n in case]
    else:
        usage_error("say what to run: --case NAME, --all-cases or --script FILE")
    if not chosen:
        usage_error(f"{table.name}: the profile has no cases")
    results = [check_case(table, c) for c in chosen]
    if as_json:
        emit_json({"profile": table.name, "results": [_result_json(r) for r in results]})
    else:
        _print_results(results)
    finish(all(r.passed for r in results))


def _result_json(r: CaseResult) -> dict[str, Any]:
    return {
        "case": r.case.name,
        "passed": r.passed,
        "line": r.line,
        "mismatches": list(r.mismatches),
        "trace": r.trace.to_json() if r.trace else None,
    }


def _print_results(results: list[CaseResult]) -> None:
    for r in results:
        console.print(r.probe, markup=False)
    failed = [r for r in results if not r.passed]
    if not failed:
        console.print(f"PASS: {len(results)} cases", markup=False)
        return
    console.print(f"FAIL: {len(failed)} of {len(results)} cases", markup=False)
    for r in failed:
        console.print(f"  {r.case.name}: " + "; ".join(r.mismatches), markup=False)


def _run_script(
    profile: str, path: Path, params: dict[str, int], as_json: bool, itf: Path | None = None
) -> None:
    table = load_profile(profile)
    data = read_json(path, "script")
    violations_expected = False
    if isinstance(data, dict) and "script" in data:  # a case file: its script and parameters
        case_params = data.get("params", {})
        if not isinstance(case_params, dict):
            raise DefinitionError(f"{path}: params: expected an object of name: integer")
        params = {**case_params, **params}
        expect = data.get("expect")
        violations_expected = isinstance(expect, dict) and expect.get("terminal") == CONTRACT_VIOLATION
        data = data["script"]
    host_script = parse_script(data, str(path))
    check_script(table, host_script, str(path), violations_expected)
    trace = run_table(table, ScriptHost(host_script), params)
    if itf is not None:
        from turnbound.properties.export.itf import write_itf  # only when asked: it needs the explorer

        write_itf(itf, table, trace, {"description": f"{table.name} on {path}"})
    if as_json:
        emit_json(trace.to_json())
        return
    print_trace(table.name, trace, probe_line(table, trace))


def fmt_outcome(step: Step) -> str:
    return outcome_text(step.outcome)


def print_trace(name: str, trace: Trace, line: str) -> None:
    """A trace as a table a person can follow, then its probe line."""
    console.print(f"{name} ({fmt_values(dict(trace.params))})", markup=False)
    grid = RichTable("#", "transition", "call", *trace.counters, box=None, pad_edge=False)
    for i, step in enumerate(trace.steps, 1):  # a call as conformance reports print it
        call = fmt_call(step.op, step.args, step.outcome)
        grid.add_row(str(i), step.transition, call, *(str(v) for v in step.counters.values()))
    console.print(grid)
    if trace.violation:
        console.print(f"contract violation: {trace.violation}", markup=False)
    console.print(f"terminal: {trace.terminal}", markup=False)
    console.print(line, markup=False)
