"""The expression language: typing, rendering, compiling, and refusing hostile input."""

from __future__ import annotations

import pytest
from turnbound.reference.errors import ExpressionError
from turnbound.reference.expr import Compare, Lit, Logic, render
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.expr_parse import Symbol, parse_expr
from turnbound.reference.types import BOOL, INT, EnumType

MODE = EnumType("mode", ("exploration", "settlement"))
REASON = EnumType("reason", ("cap", "error"))
SCOPE = {
    "rounds": Symbol("rounds", "var", INT),
    "budget": Symbol("budget", "param", INT),
    "done": Symbol("done", "var", BOOL),
    "mode": Symbol("mode", "var", MODE),
    "why": Symbol("why", "var", REASON),
}
ENV = {"rounds": 3, "budget": 2, "done": False, "mode": "settlement", "why": "error"}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("rounds <= budget + 1", True),
        ("rounds < budget", False),
        ("0 <= rounds <= 3", True),
        ("not done and rounds == 3", True),
        ("done or rounds * 2 - 1 == 5", True),
        ("mode == settlement", True),
        ("settlement == mode", True),
        ("why != cap", True),
        ("budget + (1 if done else 0)", 2),
        ("-rounds + 4", 1),
        ("rounds - (budget - 1)", 2),
    ],
)
def test_compiled_value(text: str, value: object) -> None:
    node = parse_expr(text, SCOPE)
    assert compile_expr(node)(ENV) == value


@pytest.mark.parametrize(
    "text",
    [
        "rounds <= budget + 1",
        "not (done and rounds == 3)",
        "rounds - (budget - 1) == 2",
        "(rounds + 1) * 2 > budget",
        "budget + (1 if done else 0)",
        "mode == settlement or why == error",
        "-rounds < 0",
    ],
)
def test_render_round_trips(text: str) -> None:
    node = parse_expr(text, SCOPE)
    again = parse_expr(render(node), SCOPE)
    assert again == node


def test_chained_comparison_is_a_conjunction() -> None:
    node = parse_expr("0 <= rounds <= budget", SCOPE)
    assert isinstance(node, Logic) and node.op == "and"
    assert all(isinstance(p, Compare) for p in node.operands)


def test_enum_member_takes_its_type_from_the_other_side() -> None:
    node = parse_expr("why == error", SCOPE)
    assert isinstance(node, Compare) and node.right == Lit("error", REASON)


def test_expected_enum_resolves_a_bare_member() -> None:
    assert parse_expr("exploration", SCOPE, MODE) == Lit("exploration", MODE)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("rounds.__class__", "attribute access"),
        ("__import__('os')", "function calls"),
        ("(lambda: 1)()", "function calls"),
        ("lambda: 1", "lambdas"),
        ("[x for x in y]", "comprehensions"),
        ("{x for x in y}", "comprehensions"),
        ("(x for x in y)", "comprehensions"),
        ("rounds[0]", "subscripts"),
        ("(x := 1)", "assignment expressions"),
        ("'text'", "str literals"),
        ("1.5 < rounds", "float literals"),
        ("10 ** 100", "operator Pow"),
        ("rounds / 2", "operator Div"),
        ("rounds // 2", "operator FloorDiv"),
        ("rounds % 2", "operator Mod"),
        ("rounds << 2", "operator LShift"),
        ("~rounds", "bitwise"),
        ("123456789012 > rounds", "larger than"),
        ("(" * 60 + "rounds" + ")" * 60, "deeper than"),
        ("1 + " * 1500 + "1", "characters long"),
        ("rounds in budget", "comparison In"),
        ("rounds is budget", "comparison Is"),
        ("f'{rounds}'", "f-strings"),
        ("rounds <", "syntax error"),
    ],
)
def test_hostile_or_foreign_input_is_rejected(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_expr(text, SCOPE)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_deep_nesting_without_parentheses_is_rejected() -> None:
    text = "not " * 60 + "done"
    with pytest.raises(ExpressionError, match="deeper than"):
        parse_expr(text, SCOPE)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("rounds and done", "expected bool"),
        ("done + 1", "expected int"),
        ("done < rounds", "expected bool"),
        ("mode == budget", "has type int, expected enum mode"),
        ("mode < settlement", "compares integers"),
        ("missing > 0", "unknown name 'missing'"),
        ("why == exploration", "not a member of enum reason"),
    ],
)
def test_type_errors_name_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_expr(text, SCOPE)
    assert fragment in str(info.value)


def test_expected_type_is_enforced() -> None:
    with pytest.raises(ExpressionError, match="expected bool"):
        parse_expr("rounds + 1", SCOPE, BOOL)
