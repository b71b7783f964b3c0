"""`turnbound mutate`: the mutation score of a table's checks, with every survivor named."""

from __future__ import annotations

import sys
from typing import cast

import click
from rich.table import Table as RichTable
from turnbound.properties.cli.app import (
    app,
    console,
    emit_json,
    finish,
    json_option,
    parse_param_ranges,
    seconds_option,
    usage_error,
)
from turnbound.properties.explore.sweep import configurations
from turnbound.properties.fuzz.settings import PROFILES
from turnbound.properties.mutation.baseline import (
    DEFAULT_FUZZ_SETTINGS,
    DEFAULT_PROVE_TIMEOUT,
    mutation_ranges,
)
from turnbound.properties.mutation.engines import ENGINE_DOCS, ENGINES, Engine
from turnbound.properties.mutation.mutants import OPERATORS
from turnbound.properties.mutation.score import DEFAULT_JOBS, Family, MutationReport, mutate
from turnbound.reference.limits import MAX_JOBS
from turnbound.reference.profiles import load_profile


def _engines(text: str) -> list[Engine]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown or not names:
        usage_error(f"--engines {text!r}: unknown engine {unknown[0]!r}" if unknown else "--engines: empty")
    return [cast(Engine, n) for n in names]


@app.command("mutate")
@click.argument("profile")
@click.option(
    "--operator",
    "operators",
    multiple=True,
    type=click.Choice(list(OPERATORS)),
    help="Only this mutation operator (repeatable).",
)
@click.option(
    "--engines",
    default=",".join(ENGINES),
    show_default=True,
    help="Comma-separated engines, run in this order: "
    + "; ".join(f"{e}: {doc}" for e, doc in ENGINE_DOCS.items())
    + ". The loader always runs.",
)
@click.option(
    "--param",
    "-p",
    "param",
    multiple=True,
    metavar="NAME=V|NAME=LO..HI",
    help="The mutation range of a parameter (repeatable); default: its table range up to the third value "
    "that changes the reachable graph.",
)
@click.option("--mutant", "only", multiple=True, metavar="ID", help="Only this mutant (repeatable).")
@click.option(
    "--settings",
    "settings_name",
    type=click.Choice(list(PROFILES)),
    default=DEFAULT_FUZZ_SETTINGS,
    show_default=True,
    help="Hypothesis settings profile for the conform and fuzz engines.",
)
@click.option("--no-shrink", is_flag=True, help="Report Hypothesis counterexamples unshrunk (faster).")
@seconds_option("--prove-timeout", default=DEFAULT_PROVE_TIMEOUT, help="Prover seconds per claim.")
@click.option(
    "--every-engine",
    is_flag=True,
    help="Run every engine on every mutant the loader accepts, not only until the first kill.",
)
@click.option("--details", is_flag=True, help="Also print how each mutant was killed.")
@click.option(
    "--jobs", type=click.IntRange(1, MAX_JOBS), default=DEFAULT_JOBS, show_default=True, help="Workers."
)
@json_option
def mutate_cmd(
    profile: str,
    operators: tuple[str, ...],
    engines: str,
    param: tuple[str, ...],
    only: tuple[str, ...],
    settings_name: str,
    no_shrink: bool,
    prove_timeout: float,
    every_engine: bool,
    details: bool,
    jobs: int,
    as_json: bool,
) -> None:
    """Mutate PROFILE's table systematically and report which engine kills each mutant.

    Mutants: each comparison flipped or shifted, each guard conjunct dropped, each update
    removed, each int fact domain widened, each transition target swapped, each argument
    value changed, each failure sent to another terminal, each pair of updates dropped
    together, each priority of two facts swapped, each host call bypassed. A mutant no
    engine kills is equivalent if no host can tell it from the original: the explorer's
    graphs, reduced to what the wire shows (operations with their arguments as sent, the
    answers, the terminal and counters of `end`; internal steps and unread state left
    out) and minimised, are the same over the mutation range and then over the table's
    whole explore ranges; otherwise it survived. Two
    scores: the claims score (killed by the loader or the table's own claims: explore,
    fuzz, prove) and the differential score (killed by comparison with the original:
    cases, vectors, conform). Exit 1 if any survived.
    """
    table = load_profile(profile)
    ranges = mutation_ranges(table)
    if param:
        configurations(table, parse_param_ranges(param))  # names and values checked
        ranges.update(parse_param_ranges(param))
    report = mutate(
        table,
        operators=list(operators) or None,
        only=list(only) or None,
        engines=_engines(engines),
        ranges=ranges,
        every_engine=every_engine,
        fuzz_settings=settings_name,
        fuzz_shrink=not no_shrink,
        prove_timeout=prove_timeout,
        jobs=jobs,
    )
    if as_json:
        emit_json(report.to_json())
    else:
        _print(report, details)
        sys.stderr.write(f"judged {len(report.results)} mutants in {report.seconds:.1f} s (")
        sys.stderr.write(", ".join(f"{e} {s:.1f} s" for e, s in report.engine_seconds().items()))
        sys.stderr.write(f" of work on {jobs} worker{'s' if jobs != 1 else ''})\n")
    finish(report.ok)


def _span(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]}..{values[-1]}"


def _print(report: MutationReport, details: bool) -> None:
    ranges = ", ".join(f"{k}={_span(v)}" for k, v in report.ranges.items()) or "no parameters"
    console.print(f"mutate {report.profile}: {len(report.results)} mutants, range {ranges}", markup=False)
    grid = RichTable("operator", "mutants", "killed", "survived", "equivalent", box=None, pad_edge=False)
    for op, row in report.by_operator().items():
        total = sum(row.values())
        grid.add_row(op, str(total), str(row["killed"]), str(row["survived"]), str(row["equivalent"]))
    console.print(grid)
    judged = len(report.results) - report.equivalent
    console.print(
        f"score: {report.score:.1%} ({report.killed} killed of {judged} non-equivalent; "
        f"{report.equivalent} equivalent)",
        markup=False,
    )
    families: tuple[tuple[Family, str], ...] = (
        ("claims", "by the loader or by the table's own claims (explore, fuzz, prove)"),
        ("differential", "by a comparison with the original (cases, vectors, conform)"),
    )
    for family, how in families:
        value = report.family_score(family)
        if value is None:
            console.print(f"{family} score: not measured (no {family} engine ran)", markup=False)
        else:
            console.print(
                f"{family} score: {value:.1%} ({report.killed_in(family)} of {judged} killed {how})",
                markup=False,
            )
    which = "every kill" if report.every_engine else "first kill"
    kills = " · ".join(f"{e} {n}" for e, n in report.by_engine().items())
    console.print(f"killed by engine ({which}): {kills}", markup=False)
    if details:
        console.print("kills:", markup=False)
        for r in report.results:
            for k in r.kills if report.every_engine else r.kills[:1]:
                console.print(f"  {r.id} [{k.engine}] {k.summary}", markup=False, soft_wrap=True)
    if report.measured("claims"):
        escapes = [r for r in report.escapes("claims") if r.status == "killed"]
        if escapes:
            console.print(f"NOT KILLED BY A CLAIM ({len(escapes)}):", markup=False)
            for r in escapes:
                kill = r.kills[0]
                console.print(f"  {r.id}: {r.description} [{kill.engine}]", markup=False, soft_wrap=True)
    survivors = [r for r in report.results if r.status == "survived"]
    if survivors:
        console.print(f"SURVIVED ({len(survivors)}):", markup=False)
        for r in survivors:
            console.print(f"  {r.id}: {r.description}", markup=False, soft_wrap=True)
            if r.note:
                console.print(f"    {r.note}", markup=False, soft_wrap=True)
    else:
        console.print("no survivors", markup=False)
