"""`turnbound fuzz`: the Hypothesis machine on a profile, with what it reached and any counterexample."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table as RichTable
from turnbound.properties.cli.app import (
    app,
    console,
    emit_json,
    finish,
    json_option,
    param_option,
    parse_param_ranges,
)
from turnbound.properties.fuzz.report import fuzz_counts, render_counterexample
from turnbound.properties.fuzz.session import FuzzResult, fuzz
from turnbound.properties.fuzz.settings import PROFILES
from turnbound.properties.fuzz.swarm import CONTRACT, FACTS, ParamChoice
from turnbound.reference.profiles import load_profile


@app.command("fuzz")
@click.argument("profile")
@click.option("--examples", type=click.IntRange(min=1), help="Hypothesis examples (default: the settings').")
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed, same runs, same report.")
@click.option(
    "--settings",
    "settings_name",
    type=click.Choice(list(PROFILES)),
    default="quick",
    show_default=True,
    help="Named settings: "
    + "; ".join(f"{p.name} = {p.examples} examples of {p.steps} turns" for p in PROFILES.values())
    + ".",
)
@click.option(
    "--database",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Keep Hypothesis's example database in DIR: failing examples are saved there and replayed "
    "first by the next run with DIR (so its report also depends on what DIR holds). "
    "Default: no database, nothing written.",
)
@param_option
@json_option
def fuzz_cmd(
    profile: str,
    examples: int | None,
    seed: int,
    settings_name: str,
    database: Path | None,
    param: tuple[str, ...],
    as_json: bool,
) -> None:
    """Fuzz PROFILE with the Hypothesis state machine generated from its table.

    Parameters are drawn from their declared ranges unless fixed (--param k=v) or
    narrowed (--param k=a..b). Exit 1 with the shrunk counterexample on a violation.
    The same table, seed and settings give the same report on every installation
    with the same Hypothesis version; no file is written (no `.hypothesis/` folder)
    unless --database names one.
    """
    table = load_profile(profile)
    params: dict[str, ParamChoice] = {
        name: values[0] if len(values) == 1 else values for name, values in parse_param_ranges(param).items()
    }
    result = fuzz(table, examples, seed, settings_name, params=params, database=database)
    if as_json:
        emit_json(result.to_json())
    else:
        _print(result)
    finish(result.ok)


def _print(result: FuzzResult) -> None:
    cov = result.coverage
    console.print(f"fuzz {result.profile}: settings {result.settings}, seed {result.seed}", markup=False)
    console.print(fuzz_counts(result.examples_run, result.turns, result.steps), markup=False)
    kinds: list[str] = [FACTS]
    for counts in cov.outcomes.values():
        kinds += [k for k in counts if k not in kinds and k != CONTRACT]
    if any(CONTRACT in counts for counts in cov.outcomes.values()):
        kinds.append(CONTRACT)
    grid = RichTable(box=None, pad_edge=False)
    grid.add_column("operation")
    for kind in kinds:
        grid.add_column(kind, justify="right")
    for op, counts in cov.outcomes.items():
        grid.add_row(op, *(str(counts[k]) if k in counts else "-" for k in kinds))
    console.print(grid)
    terminals = " · ".join(f"{name} {n}" for name, n in cov.terminals.items())
    console.print(f"terminals: {terminals}", markup=False)
    never = [tid for tid, n in cov.transitions.items() if n == 0]
    taken = len(cov.transitions) - len(never)
    line = f"transitions: {taken} of {len(cov.transitions)} taken"
    console.print(line + (f"; never: {', '.join(never)}" if never else ""), markup=False)
    for name, turns in cov.refuted.items():
        status = f"refuted in {turns} turns" if turns else "not refuted by these runs"
        console.print(f"expected to fail: {name}: {status}", markup=False)
    if result.counterexample is None:
        console.print("no violation", markup=False)
        return
    console.print("VIOLATION (shrunk counterexample):", markup=False)
    console.print(render_counterexample(result.counterexample), markup=False, soft_wrap=True)
