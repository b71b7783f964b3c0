"""Thin, fast paths around z3's Python API for the prover's inner loops.

`z3.And` coerces and sort-checks every argument in Python, and `model.eval` builds a
wrapper object per call; over a few hundred candidate atoms and queries that
dominated the proof time, so these helpers call the C API directly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import z3


def conj(terms: Sequence[z3.BoolRef]) -> z3.BoolRef:
    """The conjunction of boolean terms (true if empty)."""
    if not terms:
        return z3.BoolVal(True)
    if len(terms) == 1:
        return terms[0]
    ctx = terms[0].ctx
    args = (z3.Ast * len(terms))(*[t.as_ast() for t in terms])
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(terms), args), ctx)


def disj(terms: Sequence[z3.BoolRef]) -> z3.BoolRef:
    """The disjunction of boolean terms (false if empty)."""
    if not terms:
        return z3.BoolVal(False)
    if len(terms) == 1:
        return terms[0]
    ctx = terms[0].ctx
    args = (z3.Ast * len(terms))(*[t.as_ast() for t in terms])
    return z3.BoolRef(z3.Z3_mk_or(ctx.ref(), len(terms), args), ctx)


def true_in(model: z3.ModelRef, term: z3.BoolRef) -> bool:
    """Whether the term is true in the model (completing it where the model is silent)."""
    result = (z3.Ast * 1)()
    ctx = term.ctx.ref()
    if not z3.Z3_model_eval(ctx, model.model, term.as_ast(), True, result):
        raise z3.Z3Exception("model evaluation failed")
    return bool(z3.Z3_get_bool_value(ctx, result[0]) == z3.Z3_L_TRUE)


class Undecided(Exception):
    """z3 gave up (the time budget ran out, or the query is outside what it decides)."""


def solver(deadline: float) -> z3.Solver:
    """A plain solver whose queries stop at the deadline (a `time.monotonic()` value)."""
    s = z3.SimpleSolver()
    limit(s, deadline)
    return s


def limit(s: z3.Solver, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Undecided("timeout")
    s.set("timeout", max(1, int(remaining * 1000)))


def check(s: z3.Solver) -> z3.CheckSatResult:
    """sat or unsat; anything else raises `Undecided` with z3's reason."""
    verdict = s.check()
    if verdict == z3.unknown:
        raise Undecided(s.reason_unknown())
    return verdict
