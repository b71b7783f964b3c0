"""`turnbound knobs`: what each framework's "max N" bounds, as one row each, from the engines."""

from __future__ import annotations

from pathlib import Path

import click
from turnbound.properties.cli.app import app, finish
from turnbound.properties.knobs import framework_tables, knob_row, markdown, replace_block
from turnbound.reference.errors import DefinitionError
from turnbound.reference.profiles import load_profile


@app.command("knobs")
@click.argument("profiles", nargs=-1)
@click.option(
    "--write", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE", help="Update FILE's block."
)
@click.option(
    "--check", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE", help="Fail if FILE drifted."
)
def knobs_cmd(profiles: tuple[str, ...], write: Path | None, check: Path | None) -> None:
    """The "what max N means" table of the framework PROFILES (default: every bundled one).

    Each row is computed: the explorer's exact maxima of model requests and tool executions for
    N = 0..5, the prover's verdict on both count bounds for every N, and the exits the longest
    runs take. --write FILE replaces the generated block of FILE (the README); --check FILE
    exits 1 if that block is not what the engines give now.
    """
    tables = [load_profile(p) for p in profiles] if profiles else framework_tables()
    block = markdown([knob_row(t) for t in tables])
    target = write or check
    if target is None:
        click.echo(block, nl=False)
        return
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{target}: cannot read: {exc.strerror}") from None
    updated = replace_block(text, block)
    if check is not None:
        if updated != text:
            click.echo(
                f"{check}: the knobs table differs from what the engines give; run turnbound knobs --write"
            )
        finish(updated == text)
        click.echo(f"{check}: the knobs table is what the engines give")
        return
    assert write is not None
    write.write_text(updated, encoding="utf-8")
    click.echo(f"{write}: knobs table written ({len(tables)} rows)")
