"""Realistic hand-made bugs, one or more per class of fault the bundled claims must catch.

Each bug is a copy of a bundled table with one behaviour rule changed the way an
implementer gets it wrong, its claims (invariants, bounds, lemmas, trace properties,
monitors, step claims, ghost variables and their updates) left byte-identical. A named claim must then fail in
the explorer over the table's ranges and in the prover (a counterexample, replayed), not
only in a case: a case compares the bug with the original table, a claim states what
the seed says.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

import pytest
from turnbound.properties.explore.sweep import sweep, tally
from turnbound.properties.mutation.score import mutate
from turnbound.properties.prove.prover import Prover
from turnbound.reference.loader import load_table_text
from turnbound.reference.profiles import load_profile, spec_dir
from turnbound.reference.table import Table

CLAIM_SECTIONS = ("invariants", "bounds", "lemmas", "trace_properties", "monitors", "step_claims")


@dataclass(frozen=True)
class Bug:
    id: str
    kind: str
    """The class of fault: argument, exit, paired-update, auxiliary-budget, exact-bound."""
    profile: str
    edits: tuple[tuple[str, str], ...]
    """Exact replacements in the table's text, each of a passage that occurs once."""
    claim: str
    """The claim that must fail."""


TCB = "tool-call-budget"
GUARD = "dsh-turn-guard"

BUGS = [
    Bug(
        "forced_final_offers_tools",
        "argument",
        TCB,
        (
            (
                'args = { tools = "false", wrapup = "true", correction = "false" }',
                'args = { tools = "true", wrapup = "true", correction = "false" }',
            ),
        ),
        "forced_final_shape",
    ),
    Bug(
        "trailer_counted_before_the_increment",
        "argument",
        TCB,
        (
            (
                'guard = "rounds + 1 < max_rounds"\nop = "run_tool"\n'
                'args = { remaining = "max_rounds - rounds - 1", trailer = "spent if max_rounds - rounds - 1 == 0 '
                'else (one if max_rounds - rounds - 1 == 1 else many)" }',
                'guard = "rounds + 1 < max_rounds"\nop = "run_tool"\n'
                'args = { remaining = "max_rounds - rounds - 1", trailer = "spent if max_rounds - rounds == 0 '
                'else (one if max_rounds - rounds == 1 else many)" }',
            ),
        ),
        "trailer_wording_as_sent",
    ),
    Bug(
        "scaffolding_only_forced_final_errors",
        "exit",
        TCB,
        (
            (
                'id = "cap_fallback"\nfrom = "forced_replied"\nguard = "not content"',
                'id = "cap_fallback"\nfrom = "forced_replied"\nguard = "not content and not scaffolding"',
            ),
            (
                "# -- claims ----",
                '[[transitions]]\nid = "cap_malformed"\nfrom = "forced_replied"\nguard = "not content and scaffolding"\n'
                'op = "error"\nupdate = { error_sent = "true" }\nto = "malformed_reply"\n\n# -- claims ----',
            ),
        ),
        "no_error_on_the_cap_path",
    ),
    Bug(
        "cancel_drops_what_was_typed",
        "paired-update",
        GUARD,
        (
            (
                'update = { cancelled = "true", inbox = "inbox + (1 if userTyped else 0)", '
                'user_messages = "user_messages + (1 if userTyped else 0)" }',
                'update = { cancelled = "true" }',
            ),
        ),
        "every_typed_message_is_kept",
    ),
    Bug(
        "one_correction_per_turn",
        "auxiliary-budget",
        TCB,
        (
            (
                "[variables.awaiting]",
                '[variables.corrected]\ntype = "bool"\ninit = "false"\n\n[variables.awaiting]',
            ),
            (
                'guard = "calls == 0 and not content and scaffolding and not correcting"\n'
                'update = { correcting = "true", awaiting = "false" }',
                'guard = "calls == 0 and not content and scaffolding and not correcting and not corrected"\n'
                'update = { correcting = "true", awaiting = "false", corrected = "true" }',
            ),
            (
                'guard = "calls == 0 and not content and scaffolding and correcting"',
                'guard = "calls == 0 and not content and scaffolding and (correcting or corrected)"',
            ),
        ),
        "malformed_only_after_one_retry",
    ),
    Bug(
        "cancel_one_grace_step_early",
        "exact-bound",
        GUARD,
        (
            (
                "fires < maxFires and used <= maxSteps + gracefulSteps)",
                "fires < maxFires and used < maxSteps + gracefulSteps)",
            ),
            (
                "(fires > 0 and used > maxSteps + gracefulSteps))",
                "(fires > 0 and used >= maxSteps + gracefulSteps))",
            ),
        ),
        "cancel_exactly_at_the_allowance",
    ),
]


def original_text(bug: Bug) -> str:
    return (spec_dir() / f"{bug.profile}.toml").read_text()


def bug_text(bug: Bug) -> str:
    text = original_text(bug)
    for old, new in bug.edits:
        assert text.count(old) == 1, (bug.id, old)
        text = text.replace(old, new)
    return text


def claims_part(text: str) -> dict[str, Any]:
    """Everything a table claims: its claim sections, its ghosts and the ghosts' updates."""
    doc = tomllib.loads(text)
    ghosts = {name for name, v in doc.get("variables", {}).items() if v.get("ghost")}
    updates = {
        t["id"]: {var: e for var, e in t.get("update", {}).items() if var in ghosts}
        for t in doc["transitions"]
    }
    return {
        **{s: doc.get(s) for s in CLAIM_SECTIONS},
        "ghosts": {g: doc["variables"][g] for g in sorted(ghosts)},
        "ghost_updates": {tid: u for tid, u in updates.items() if u},
    }


def load_bug(bug: Bug) -> Table:
    return load_table_text(bug_text(bug), f"<{bug.id}>", spec_dir())


@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_the_bug_changes_behaviour_only(bug: Bug) -> None:
    before, after = original_text(bug), bug_text(bug)
    assert before != after
    assert claims_part(before) == claims_part(after)
    named = {c.name for c in (*load_profile(bug.profile).invariants, *load_profile(bug.profile).bounds)}
    named |= {p.name for p in load_profile(bug.profile).trace_properties}
    assert bug.claim in named


def test_every_class_has_a_bug() -> None:
    assert {b.kind for b in BUGS} == {"argument", "exit", "paired-update", "auxiliary-budget", "exact-bound"}


@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_the_explorer_sees_the_claim_fail(bug: Bug) -> None:
    original = {t.name: t for t in tally(sweep(load_profile(bug.profile), jobs=1, progress=False))}
    assert original[bug.claim].unexpected == 0
    found = {t.name: t for t in tally(sweep(load_bug(bug), jobs=1, progress=False))}
    assert found[bug.claim].unexpected > 0, f"{bug.id}: {bug.claim} holds on the bug"


@pytest.mark.slow
@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_the_prover_refutes_the_claim_with_a_replayed_witness(bug: Bug) -> None:
    (result,) = Prover(load_bug(bug)).prove_all([bug.claim])
    assert result.verdict == "refuted", (bug.id, result.verdict, result.reason)
    assert result.witness is not None


BEYOND_THE_EXPLORER = {
    TCB: {"run_first_call.arg.trailer.one"},
    GUARD: set(),
    "dsh-turn-guard-refire": set(),
    "dsh-turn-unguarded": set(),
    "deeptutor-scheduler": set(),
}
"""The mutants the claims, judged by the explorer over the mutation range, let through: each behaves
like the table there and differs only beyond it (the 'one' wording on the first call needs
max_rounds >= 3), where the explorer's second look over the table's explore ranges kills it by a
claim, and so does the prover, judging every parameter value."""

OUT_OF_RANGE_KILLS = [
    (TCB, "run_first_call.arg.trailer.one", "trailer_wording_as_sent"),
    (GUARD, "step_with_notice.update.admitted.remove", "nothing_lost"),
]
"""Mutants that differ from the table only where the explorer does not look (max_rounds >= 3; maxSteps = 0,
outside dsh-turn-guard's explore range), and the claim the prover refutes on each."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BEYOND_THE_EXPLORER))
def test_the_claims_alone_kill_every_mutant_inside_the_explored_ranges(name: str) -> None:
    report = mutate(load_profile(name), engines=("loader", "explore"), progress=False)
    assert {r.id for r in report.results if r.status == "survived"} == set()
    beyond = {
        r.id for r in report.results if r.kills and r.kills[0].summary.startswith("beyond the mutation range")
    }
    assert beyond == BEYOND_THE_EXPLORER[name]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "mutant", "claim"), OUT_OF_RANGE_KILLS, ids=[m for _, m, _ in OUT_OF_RANGE_KILLS]
)
def test_the_prover_kills_what_differs_beyond_the_explored_ranges(name: str, mutant: str, claim: str) -> None:
    report = mutate(load_profile(name), only=[mutant], engines=("loader", "prove"), progress=False)
    (r,) = report.results
    kill = r.killed_by("prove")
    assert r.status == "killed" and kill is not None and kill.summary.startswith(claim), (r.status, kill)
