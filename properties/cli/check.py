"""`turnbound check`: every bundled profile (or the named ones) through every engine, one report."""

from __future__ import annotations

import click
from rich.table import Table as RichTable
from turnbound.properties.all_engines import ENGINES, ProfileCheck, check_profiles
from turnbound.properties.cli.app import app, console, emit_json, finish, json_option, usage_error
from turnbound.properties.explore.sweep import DEFAULT_JOBS
from turnbound.properties.fuzz.report import counted
from turnbound.reference.limits import MAX_JOBS
from turnbound.reference.profiles import load_profile, profile_names


def _mark(ok: bool | None) -> str:
    return "skipped" if ok is None else ("ok" if ok else "FAIL")


def _print(r: ProfileCheck) -> None:
    t = r.table
    console.print(f"[bold]{t.name}[/bold] — {t.title}" if t.title else f"[bold]{t.name}[/bold]")
    passed = sum(c.passed for c in r.cases)
    console.print(f"  cases    {passed}/{len(r.cases)} pass" + ("" if r.cases_ok else "  FAIL"), markup=False)
    for c in r.cases:
        if not c.passed:
            console.print(f"           {c.case.name}: " + "; ".join(c.mismatches), markup=False)
    if r.explore_ok is not None:
        unexpected = [c.name for c in r.claims if c.unexpected]
        verdict = "every claim as expected" if not unexpected else f"UNEXPECTED: {', '.join(unexpected)}"
        console.print(
            f"  explore  {r.configurations} configurations, {r.states:,} states (atomic: host-call points "
            "and terminals), "
            f"{r.edges:,} edges: {verdict}",
            markup=False,
        )
    if r.fuzzed is not None:
        f = r.fuzzed
        verdict = "no violation" if f.ok else "COUNTEREXAMPLE (run `turnbound fuzz` to see it)"
        console.print(
            f"  fuzz     {counted(f.examples_run, 'example')}, {counted(f.steps, 'host call')}: {verdict}",
            markup=False,
        )
    if r.proofs:
        proved = sum(p.verdict == "proved" for p in r.proofs)
        refuted = sum(p.verdict == "refuted" for p in r.proofs)
        unknown = sum(p.verdict == "unknown" for p in r.proofs)
        wrong = [p.goal.name for p in r.proofs if not p.ok]
        tail = "all as expected" if not wrong else f"NOT AS EXPECTED: {', '.join(wrong)}"
        console.print(
            f"  prove    {proved} proved, {refuted} refuted, {unknown} unknown "
            f"for all parameter values: {tail}",
            markup=False,
        )
        bounds = RichTable(box=None, show_header=False, pad_edge=False, padding=(0, 1))
        for p in r.proofs:
            if p.goal.kind != "bound":
                continue
            if p.verdict == "proved":
                how = "PROVED" + (", tight" if p.tight else ", not shown tight" if p.tight is False else "")
            elif p.verdict == "refuted":
                how = "REFUTED" + (" (as expected)" if p.ok else "")
            else:
                how = "UNKNOWN"
            bounds.add_row("          ", p.goal.text, how)
        if bounds.row_count:
            console.print("  bounds")
            console.print(bounds)
    console.print(f"  verdict  {'OK' if r.ok else 'FAIL'}", markup=False)


@app.command("check")
@click.argument("profiles", nargs=-1)
@click.option(
    "--engines",
    default=",".join(ENGINES),
    show_default=True,
    help="Comma-separated subset of: " + ", ".join(ENGINES) + ".",
)
@click.option("--examples", type=click.IntRange(1), default=None, help="Hypothesis examples per profile.")
@click.option("--seed", type=int, default=0, show_default=True, help="Hypothesis seed.")
@click.option(
    "--jobs",
    type=click.IntRange(1, MAX_JOBS),
    default=DEFAULT_JOBS,
    show_default=True,
    help="Workers: profiles checked side by side (one profile's sweep uses them all).",
)
@json_option
def check_cmd(
    profiles: tuple[str, ...], engines: str, examples: int | None, seed: int, jobs: int, as_json: bool
) -> None:
    """Check PROFILES (default: every bundled profile) with cases, exploration, fuzzing and proofs."""
    chosen = [e.strip() for e in engines.split(",") if e.strip()]
    unknown = sorted(set(chosen) - set(ENGINES))
    if unknown:
        usage_error(f"--engines: unknown engines {unknown}; choose from {', '.join(ENGINES)}")
    names = list(profiles) or profile_names()
    tables = [load_profile(n) for n in names]
    results = []
    for r in check_profiles(tables, chosen, examples=examples, seed=seed, jobs=jobs):
        results.append(r)
        if not as_json:
            _print(r)
            console.print()
    ok = all(r.ok for r in results)
    if as_json:
        emit_json({"ok": ok, "profiles": [r.to_json() for r in results]})
    else:
        failed = [r.table.name for r in results if not r.ok]
        if ok:
            n = len(results)
            what = "1 profile" if n == 1 else f"{n} profiles"
            console.print(f"OK: {what}; every engine's verdict as expected", markup=False)
        else:
            console.print(f"FAIL: {', '.join(failed)}", markup=False)
    finish(ok)
