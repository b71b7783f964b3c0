"""The z3 back end agrees with the interpreter's closures on every expression it is given."""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.expr_parse import Symbol, parse_expr
from turnbound.reference.expr_z3 import const, decode, domain_constraint, to_z3, type_constraint, value
from turnbound.reference.types import BOOL, INT, Domain, EnumType

MODE = EnumType("mode", ("exploration", "settlement", "recovery"))
SCOPE = {
    "x": Symbol("x", "var", INT),
    "y": Symbol("y", "var", INT),
    "budget": Symbol("budget", "param", INT),
    "flag": Symbol("flag", "var", BOOL),
    "more": Symbol("more", "fact", BOOL),
    "m": Symbol("m", "var", MODE),
}


def _ints() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(
        st.integers(-5, 5).map(lambda v: Lit(v, INT)),
        st.sampled_from([Ref("x", "var", INT), Ref("y", "var", INT), Ref("budget", "param", INT)]),
    )

    def grow(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*"]), inner, inner).map(lambda t: Arith(t[0], t[1], t[2])),  # type: ignore[arg-type]
            inner.map(Neg),
            st.tuples(_bools_flat(), inner, inner).map(lambda t: Cond(t[0], t[1], t[2], INT)),
        )

    return st.recursive(leaves, grow, max_leaves=6)


def _bools_flat() -> st.SearchStrategy[Expr]:
    return st.sampled_from(
        [
            Ref("flag", "var", BOOL),
            Ref("more", "fact", BOOL),
            Compare("==", Ref("m", "var", MODE), Lit("settlement", MODE)),
        ]
    )


def _bools() -> st.SearchStrategy[Expr]:
    compares = st.tuples(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), _ints(), _ints()).map(
        lambda t: Compare(t[0], t[1], t[2])  # type: ignore[arg-type]
    )
    leaves = st.one_of(_bools_flat(), compares, st.booleans().map(lambda b: Lit(b, BOOL)))

    def grow(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        return st.one_of(
            inner.map(Not),
            st.tuples(st.sampled_from(["and", "or"]), st.lists(inner, min_size=2, max_size=3)).map(
                lambda t: Logic(t[0], tuple(t[1]))  # type: ignore[arg-type]
            ),
            st.tuples(inner, inner, inner).map(lambda t: Cond(t[0], t[1], t[2], BOOL)),
        )

    return st.recursive(leaves, grow, max_leaves=6)


ENVS = st.fixed_dictionaries(
    {
        "x": st.integers(-20, 20),
        "y": st.integers(-20, 20),
        "budget": st.integers(0, 10),
        "flag": st.booleans(),
        "more": st.booleans(),
        "m": st.sampled_from(MODE.members),
    }
)
TYPES = {"x": INT, "y": INT, "budget": INT, "flag": BOOL, "more": BOOL, "m": MODE}


def _z3_value(node: Expr, env: dict[str, object]) -> object:
    z3_env = {name: value(v, TYPES[name]) for name, v in env.items()}  # type: ignore[arg-type]
    return decode(z3.simplify(to_z3(node, z3_env)), node.type)


@settings(max_examples=150, deadline=None)
@given(node=st.one_of(_ints(), _bools()), env=ENVS)
def test_z3_term_evaluates_like_the_interpreter(node: Expr, env: dict[str, object]) -> None:
    assert _z3_value(node, env) == compile_expr(node)(env)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "x + 2 * y - budget",
        "-x if flag else y",
        "m == settlement and not more",
        "x < y <= budget",
        "(x != y) or (m != exploration)",
    ],
)
def test_parsed_table_expressions_agree(text: str) -> None:
    node = parse_expr(text, SCOPE)
    env = {"x": 3, "y": 4, "budget": 4, "flag": False, "more": True, "m": "settlement"}
    assert _z3_value(node, env) == compile_expr(node)(env)


def test_enum_values_are_member_indices_within_their_type() -> None:
    m = const("m", MODE)
    s = z3.Solver()
    s.add(type_constraint(m, MODE), m == value("recovery", MODE))
    assert s.check() == z3.sat
    assert decode(s.model().eval(m), MODE) == "recovery"
    s.add(m > 2)
    assert s.check() == z3.unsat


def test_int_domains_bound_a_fact() -> None:
    x = const("extraRounds", INT)
    s = z3.Solver()
    s.add(domain_constraint(x, Domain(INT, 0, 1)), x != 0, x != 1)
    assert s.check() == z3.unsat


def test_an_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(DefinitionError, match="no z3 term for var 'x'"):
        to_z3(Ref("x", "var", INT), {})
