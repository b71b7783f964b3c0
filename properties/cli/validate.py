"""`turnbound validate`: check a log recorded from a real run against a profile's table."""

from __future__ import annotations

from pathlib import Path

import click
from turnbound.properties.cli.app import (
    app,
    console,
    emit_json,
    finish,
    json_option,
    param_option,
    parse_param_values,
)
from turnbound.properties.conformance.validate import Validation, validate
from turnbound.properties.export.itf import write_itf
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table


@app.command("validate")
@click.argument("profile")
@click.argument("log", type=click.Path(path_type=Path))
@param_option
@click.option(
    "--itf", type=click.Path(path_type=Path), help="Write the rejected (else the first) run as ITF."
)
@json_option
def validate_cmd(profile: str, log: Path, param: tuple[str, ...], itf: Path | None, as_json: bool) -> None:
    """Check LOG (protocol v1 messages, one JSON object per line) against PROFILE's table.

    Prints `accepted`, or the first line that no transition explains and what the table expected.
    --param fills in parameters the log's start message does not state.
    """
    table = load_profile(profile)
    result = validate(table, log, parse_param_values(param))
    if itf is not None and result.runs:
        _write_itf(itf, table, result)
    if as_json:
        emit_json(
            {
                "profile": result.profile,
                "log": result.source,
                "accepted": result.accepted,
                "runs": len(result.runs),
                "operations": result.operations,
                "rejection": (
                    {"line": result.rejection.line, "message": result.rejection.message}
                    if result.rejection
                    else None
                ),
                "claims_broken": [
                    {"run": b.run, "name": b.name, "kind": b.kind, "expect": b.expect} for b in result.broken
                ],
            }
        )
    elif result.rejection is None:
        runs = "1 run" if len(result.runs) == 1 else f"{len(result.runs)} runs"
        console.print(f"accepted: {runs}, {result.operations} host operations ({log})", markup=False)
    else:
        r = result.rejection
        console.print(f"rejected: {log}:{r.line}: {r.message}", markup=False, soft_wrap=True)
    if not as_json:
        for b in result.broken:
            expected = "as expected" if b.expect == "violated" else "the table breaks its own claim"
            console.print(f"run {b.run} breaks {b.kind} {b.name} ({expected})", markup=False)
    finish(result.accepted)


def _write_itf(path: Path, table: Table, result: Validation) -> None:
    """The rejected run up to the rejection, or else the log's first run."""
    index = len(result.runs) - 1 if result.rejection else 0
    meta: dict[str, object] = {"log": result.source, "run": index + 1, "runs": len(result.runs)}
    if result.rejection is not None:
        meta["description"] = (
            f"rejected at {result.source}:{result.rejection.line}: {result.rejection.message}"
        )
        meta["rejection"] = {"line": result.rejection.line, "message": result.rejection.message}
    else:
        meta["description"] = f"run 1 of {result.source}, accepted by {table.name}"
    write_itf(path, table, result.runs[index], meta)
