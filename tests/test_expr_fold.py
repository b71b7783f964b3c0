"""Partial evaluation with the parameters bound: the folded expression has the original's value
at every state, and the rewrites the compiled step relies on do happen."""

from __future__ import annotations

import random

import pytest
from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref, render
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.expr_fold import fold
from turnbound.reference.profiles import load_profile, profile_names
from turnbound.reference.table import Table
from turnbound.reference.types import BOOL, INT, BoolType, EnumType, IntType, Type, Value


def _value(rng: random.Random, type_: Type) -> Value:
    if isinstance(type_, BoolType):
        return rng.random() < 0.5
    if isinstance(type_, IntType):
        return rng.randint(-3, 12)
    assert isinstance(type_, EnumType)
    return rng.choice(list(type_.members))


def _names(table: Table) -> dict[str, Type]:
    """Every name an expression of the table may read, with its type."""
    names: dict[str, Type] = {v.name: v.type for v in table.variables}
    for op in table.operations.values():
        names.update((f.name, f.domain.type) for f in op.facts)
    for failure in table.failures.values():
        names.update((f.name, f.domain.type) for f in failure.fields)
    return names


def _exprs(table: Table) -> list[Expr]:
    out: list[Expr] = []
    for t in table.transitions:
        out += [t.guard, *(e for _, e in t.args), *(e for _, e in t.updates)]
        out += [e for ups in t.raise_updates.values() for _, e in ups]
    return out


@pytest.mark.parametrize("name", profile_names())
def test_the_folded_expression_has_the_same_value_at_every_state(name: str) -> None:
    """Every guard, argument and update of the table (the claims' ghost updates included), at
    the default parameters and at random ones, over random values of everything it reads."""
    table = load_profile(name)
    rng = random.Random(name)
    names = _names(table)
    assignments = [table.defaults()] + [
        {p.name: rng.randint(p.min, p.min + 5) for p in table.parameters} for _ in range(3)
    ]
    for params in assignments:
        for expr in _exprs(table):
            plain, fast = compile_expr(expr), compile_expr(fold(expr, params))
            for _ in range(8):
                env = {n: _value(rng, t) for n, t in names.items()} | params
                assert fast(env) == plain(env) and type(fast(env)) is type(plain(env)), expr


def test_the_step_claims_ghost_updates_are_decided_in_part_before_any_state() -> None:
    """deeptutor-scheduler's step claims substitute the arguments sent into the claim: the mode
    comparisons of `round_arguments` fold away, leaving the budget test alone."""
    table = load_profile("deeptutor-scheduler")
    update = dict(table.transition("explore_round").updates)["round_arguments"]
    folded = fold(update, table.defaults())
    assert "exploration == exploration" in render(update)
    assert render(folded) == "round_arguments and not recovery_used and exploration_rounds < 1"


x, y = Ref("x", "var", INT), Ref("y", "var", INT)
b = Ref("b", "var", BOOL)
n = Ref("n", "param", INT)


@pytest.mark.parametrize(
    ("expr", "folded"),
    [
        (Compare("<", x, n), Compare("<", x, Lit(3, INT))),
        (Compare("==", Arith("+", x, Lit(1, INT)), Arith("+", x, Lit(1, INT))), Lit(True, BOOL)),
        (Compare("<", x, x), Lit(False, BOOL)),
        (Compare("==", Lit("a", INT), Lit("a", INT)), Lit(True, BOOL)),
        (Compare("==", Lit(False, BOOL), b), Not(b)),
        (Compare("!=", b, Lit(False, BOOL)), b),
        (Logic("and", (b, Lit(True, BOOL), Compare(">", n, Lit(1, INT)))), b),
        (Logic("and", (b, Compare(">", n, Lit(4, INT)))), Lit(False, BOOL)),
        (
            Logic("or", (Logic("or", (b, Not(b))), Compare(">", x, y))),
            Logic("or", (b, Not(b), Compare(">", x, y))),
        ),
        (Not(Not(b)), b),
        (Not(Compare("<", x, n)), Compare(">=", x, Lit(3, INT))),
        (Not(Compare("!=", x, y)), Compare("==", x, y)),
        (Not(Logic("and", (b, Compare("<", x, y)))), Logic("or", (Not(b), Compare(">=", x, y)))),
        (Not(Logic("or", (Not(b), Logic("and", (b, Not(b)))))), Logic("and", (b, Logic("or", (Not(b), b))))),
        (Arith("+", x, Arith("-", n, Lit(3, INT))), x),
        (Arith("*", Lit(1, INT), y), y),
        (Cond(Compare(">", n, Lit(0, INT)), x, y), x),
        (Cond(b, x, x), x),
        (Arith("+", n, Lit(4, INT)), Lit(7, INT)),
        (Compare("==", x, Arith("+", x, Lit(1, INT))), Lit(False, BOOL)),
        (Compare("<", Arith("-", x, n), x), Lit(True, BOOL)),
        (
            Compare(
                "==", Arith("+", Arith("+", x, Lit(1, INT)), y), Arith("+", Arith("+", x, y), Lit(1, INT))
            ),
            Lit(True, BOOL),
        ),
        (Compare(">=", Arith("*", Lit(2, INT), x), Arith("+", x, x)), Lit(True, BOOL)),
        (Compare("!=", Neg(Arith("-", y, x)), Arith("-", x, y)), Lit(False, BOOL)),
        (Compare("==", Arith("*", x, y), Arith("*", x, y)), Lit(True, BOOL)),
        (
            Compare("<", Arith("+", x, y), Arith("+", x, Lit(1, INT))),
            Compare("<", Arith("+", x, y), Arith("+", x, Lit(1, INT))),
        ),
        (
            Compare("==", Arith("*", x, y), Arith("*", y, x)),
            Compare("==", Arith("*", x, y), Arith("*", y, x)),
        ),
    ],
)
def test_each_rewrite(expr: Expr, folded: Expr) -> None:
    assert fold(expr, {"n": 3}) == folded


def test_an_unbound_parameter_stays_a_reference() -> None:
    assert fold(Compare("<", x, n), {}) == Compare("<", x, n)
