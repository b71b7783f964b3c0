"""`turnbound prove`: every claim of a table, for every parameter value (z3)."""

from __future__ import annotations

import time
from typing import Any

import click
from turnbound.properties.cli.app import app, console, emit_json, finish, json_option, seconds_option
from turnbound.properties.cli.interpret import print_trace
from turnbound.properties.prove.prover import (
    DEFAULT_DEPTH,
    DEFAULT_MAX_K,
    DEFAULT_TIMEOUT,
    ProofResult,
    Prover,
)
from turnbound.properties.prove.witness import ConcreteRun
from turnbound.reference.errors import DefinitionError, RunError
from turnbound.reference.profiles import load_profile
from turnbound.reference.stepping import probe_run
from turnbound.reference.table import Table
from turnbound.reference.trace import probe_line

_HEADLINE = {
    "proved": "PROVED for all parameter values",
    "refuted": "REFUTED",
    "unknown": "UNKNOWN",
}


@app.command("prove")
@click.argument("profile")
@click.option("--claim", "claims", multiple=True, metavar="NAME", help="Report only this claim (repeatable).")
@seconds_option("--timeout", default=DEFAULT_TIMEOUT, help="Seconds allowed per claim.")
@click.option(
    "--k",
    "max_k",
    type=click.IntRange(1, 10),
    default=DEFAULT_MAX_K,
    show_default=True,
    help="Largest k tried.",
)
@click.option(
    "--depth",
    type=click.IntRange(1, 200),
    default=DEFAULT_DEPTH,
    show_default=True,
    help="Longest run searched for a counterexample or a tightness witness.",
)
@click.option("--no-pdr", is_flag=True, help="Skip property-directed reachability (z3 Spacer).")
@click.option(
    "--no-strengthen",
    is_flag=True,
    help="Plain k-induction over the lemmas only (no inferred facts): shows which lemmas a proof needs.",
)
@json_option
def prove_cmd(
    profile: str,
    claims: tuple[str, ...],
    timeout: float,
    max_k: int,
    depth: int,
    no_pdr: bool,
    no_strengthen: bool,
    as_json: bool,
) -> None:
    """Prove the invariants, bounds and trace properties of PROFILE for all parameter values.

    Parameters are symbolic, constrained only by their declared domains. A bound that
    is proved is also shown tight (a run that meets it, replayed on the interpreter);
    a claim that is false is refuted with a counterexample run, replayed and printed.
    Exit code 1 if any verdict differs from the claim's `expect`.
    """
    table = load_profile(profile)
    try:
        probe_run(table)
    except RunError as exc:
        raise DefinitionError(f"{table.name}: the reference cannot run it: {exc}") from None
    started = time.monotonic()
    prover = Prover(
        table, timeout=timeout, max_k=max_k, depth=depth, use_pdr=not no_pdr, strengthen=not no_strengthen
    )
    strengthening = prover.strengthening
    results = prover.prove_all(list(claims) or None)
    total = time.monotonic() - started
    facts = sum(len(k) for p, k in strengthening.kept.items() if p in table.locations)
    if as_json:
        emit_json(
            {
                "profile": table.name,
                "parameters": {p.name: {"min": p.min, "max": p.max} for p in table.parameters},
                "strengthening": {"facts": facts, "seconds": round(strengthening.seconds, 3)},
                "claims": [_claim_json(r) for r in results],
                "seconds": round(total, 3),
                "ok": all(r.ok for r in results),
            }
        )
    else:
        _print_report(table, results, facts, strengthening.seconds, total)
    finish(all(r.ok for r in results))


def _claim_json(r: ProofResult) -> dict[str, Any]:
    return {
        "name": r.goal.name,
        "kind": r.goal.kind,
        "expr": r.goal.text,
        "verdict": r.verdict,
        "method": r.method or None,
        "reason": r.reason or None,
        "tight": r.tight,
        "tight_witness": _witness_json(r.tight_witness),
        "witness": _witness_json(r.witness),
        "counterexample_to_induction": r.cti.to_json()
        if r.cti is not None and r.verdict != "proved"
        else None,
        "seconds": round(r.seconds, 3),
        "expected": r.goal.expect,
        "ok": r.ok,
    }


def _witness_json(w: ConcreteRun | None) -> dict[str, Any] | None:
    return None if w is None else w.to_json()


def _print_report(
    table: Table, results: list[ProofResult], facts: int, strengthen: float, total: float
) -> None:
    domains = ", ".join(
        f"{p.name} >= {p.min}" + ("" if p.max is None else f" and <= {p.max}") for p in table.parameters
    )
    console.print(f"{table.name}: parameters symbolic ({domains or 'none'})", markup=False)
    console.print(
        f"inferred strengthening: {facts} facts at {len(table.locations)} locations, {strengthen:.2f} s",
        markup=False,
    )
    for r in results:
        console.print(_line(r), markup=False, soft_wrap=True)
        if r.verdict == "refuted" and r.witness is not None:
            _print_witness(table, r.witness)
        elif r.verdict == "unknown" and r.cti is not None:
            console.print(f"    counterexample to induction: {r.cti.describe()}", markup=False)
    counts = {v: sum(1 for r in results if r.verdict == v) for v in _HEADLINE}
    unexpected = [r.goal.name for r in results if not r.ok]
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    verdict = "all as expected" if not unexpected else f"NOT as expected: {', '.join(unexpected)}"
    console.print(f"{len(results)} claims: {summary}; {verdict} ({total:.2f} s)", markup=False)


def _line(r: ProofResult) -> str:
    g = r.goal
    how = ", ".join(x for x in (r.method, f"{r.seconds:.2f} s") if x)
    text = f"{g.name}: {_HEADLINE[r.verdict]} ({how})"
    if g.expect == "violated" or not r.ok:
        text += " as expected" if r.ok else f" -- EXPECTED {'holds' if g.expect == 'holds' else 'violated'}"
    text += f" -- {g.text}"
    if r.verdict == "refuted" and r.witness is not None:
        text += f"; {r.witness.detail}"
    if r.verdict == "unknown":
        text += f"; {r.reason}"
    if r.tight is True and r.tight_witness is not None:
        text += f"; tight: {r.tight_witness.detail}"
    elif r.tight is False:
        text += "; tight: no run meets it within the search depth"
    return text


def _print_witness(table: Table, w: ConcreteRun) -> None:
    print_trace(table.name, w.trace, probe_line(table, w.trace))
