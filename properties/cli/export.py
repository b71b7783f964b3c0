"""`turnbound export promela`: a table as a model for another engine."""

from __future__ import annotations

from pathlib import Path

import click
from turnbound.properties.cli.app import app, param_option, parse_param_values
from turnbound.properties.export.promela import export_promela
from turnbound.reference.errors import DefinitionError
from turnbound.reference.profiles import load_profile


@app.group("export")
def export_group() -> None:
    """A table in another engine's language."""


@export_group.command("promela")
@click.argument("profile")
@param_option
@click.option("--claim", metavar="NAME", help="Assert only this claim (e.g. one expected to be violated).")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE", help="Write here.")
@click.option(
    "--atomic",
    is_flag=True,
    help="Take the internal transitions after each step inside its d_step: SPIN stores the states "
    "`turnbound explore` stores by default (without it, those of `explore --all-states`).",
)
def promela_cmd(
    profile: str, param: tuple[str, ...], claim: str | None, out: Path | None, atomic: bool
) -> None:
    """PROFILE at fixed parameters as a Promela model for SPIN (stdout, or --out FILE).

    SPIN stores exactly the states `turnbound explore --all-states` stores at the same
    parameters (with --atomic, those `turnbound explore` stores).
    Check it with: spin -a FILE && gcc -O2 -DNOREDUCE -o pan pan.c && ./pan
    (claims the table expects to hold are asserted; --claim NAME asserts that claim alone).
    """
    table = load_profile(profile)
    text = export_promela(table, parse_param_values(param), claim, atomic=atomic)
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{out}: cannot write the model: {exc.strerror}") from None
    click.echo(f"wrote {out} ({len(text.splitlines())} lines)", err=True)
