"""`turnbound knobs`: what each framework's "max N" bounds, as one row each, from the engines."""

from __future__ import annotations

from pathlib import Path

import click
from turnbound.properties.cli.app import app, finish, usage_error
from turnbound.properties.cli.conform import load_adapter
from turnbound.properties.knob_points import curve, write_points
from turnbound.properties.knobs import REQUESTS, TOOLS, framework_tables, knob_row, markdown, replace_block
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
@click.option(
    "--adapter",
    metavar="MODULE:NAME",
    help="With one PROFILE: replay each longest run on this real implementation (see conform).",
)
@click.option(
    "--points",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="With one PROFILE: write its curve, N = 0..8, as JSON (for the comparison notebook).",
)
@click.option("--counter", "counters", multiple=True, help="Counter of the curve (repeatable).")
@click.option(
    "--n-max", type=click.IntRange(0, 64), default=8, show_default=True, help="The curve's last N."
)
def knobs_cmd(
    profiles: tuple[str, ...],
    write: Path | None,
    check: Path | None,
    adapter: str | None,
    points: Path | None,
    counters: tuple[str, ...],
    n_max: int,
) -> None:
    """The "what max N means" table of the framework PROFILES (default: every bundled one).

    Each row is computed: the explorer's exact maxima of model requests and tool executions for
    N = 0..5, the prover's verdict on both count bounds for every N, and the exits the longest
    runs take. --write FILE replaces the generated block of FILE (the README); --check FILE
    exits 1 if that block is not what the engines give now.

    --points FILE (one PROFILE) writes the curve instead: for N = 0..--n-max, the longest run by
    each counter (default: model requests and tool executions), its count and exit, and the
    bound's value; with --adapter, each run replayed on the real implementation, exit 1 if
    any point differs.
    """
    if points is not None or adapter is not None or counters:
        _curve(profiles, adapter, points, counters, n_max)
        return
    tables = [load_profile(p) for p in profiles] if profiles else framework_tables()
    rows = [knob_row(t) for t in tables]
    target = write or check
    # a file next to the framework pages (docs/frameworks/README.md) links them by name
    beside = target is not None and bool(rows) and (target.parent / f"{rows[0].profile}.md").is_file()
    block = markdown(rows, "" if beside else "docs/frameworks/")
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


def _curve(
    profiles: tuple[str, ...], adapter: str | None, points: Path | None, counters: tuple[str, ...], n_max: int
) -> None:
    if len(profiles) != 1 or points is None:
        usage_error("--points FILE, --adapter and --counter take exactly one PROFILE and --points")
    table = load_profile(profiles[0])
    names = counters or (REQUESTS, TOOLS)
    scheduler = load_adapter(adapter, table, timeout=30.0) if adapter is not None else None
    try:
        curve_points = curve(table, names, scheduler, range(n_max + 1))
    finally:
        if scheduler is not None:
            scheduler.close()
    write_points(points, table, adapter or "engines only", curve_points)
    off = [p for p in curve_points if scheduler is not None and not p.agrees]
    for p in off:
        click.echo(
            f"FAIL {table.name} N={p.n} {p.counter}: engines {p.engines} ({p.exit}), "
            f"real code {p.real} ({p.real_exit})"
        )
    replayed = "replayed on the real code, all agree" if scheduler is not None and not off else "engines only"
    if scheduler is None or not off:
        click.echo(f"{points}: {len(curve_points)} points of {table.name} ({replayed})")
    finish(not off)
