"""Partial evaluation of an expression once the parameters are known.

Every expression of the language is pure and total (no division, no effects; a fact read is
readable by the loader's scopes), so a subtree's value never depends on whether, or in which
order, it is evaluated. That licenses the rewrites here, which the compiled step relies on
for speed: the claims' ghost updates substitute the arguments a transition sends and the
updates it makes into the claim's text (`pasttime.py`), leaving comparisons such as
`"exploration" == "exploration"` or `rounds + 1 == rounds + 1` that are decided before any
state exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.types import BOOL, INT, BoolType, IntType, Value

_REFLEXIVE = {"==": True, "<=": True, ">=": True, "!=": False, "<": False, ">": False}
"""A comparison of a subtree with itself."""
_NEGATED: dict[str, Literal["<", "<=", ">", ">=", "==", "!="]] = {
    "<": ">=",
    "<=": ">",
    ">": "<=",
    ">=": "<",
    "==": "!=",
    "!=": "==",
}


def fold(node: Expr, params: Mapping[str, Value]) -> Expr:
    """`node` with the parameters bound, constant subtrees evaluated and the boolean
    connectives simplified; the value at every state is the same as `node`'s."""
    if isinstance(node, Lit):
        return node
    if isinstance(node, Ref):
        if node.kind == "param" and node.name in params:
            return Lit(params[node.name], node.type)
        return node
    if isinstance(node, Not):
        return _negate(fold(node.operand, params))
    if isinstance(node, Neg):
        inner = fold(node.operand, params)
        return _constant(Neg(inner, node.type)) if isinstance(inner, Lit) else Neg(inner, node.type)
    if isinstance(node, Arith):
        return _arith(node, fold(node.left, params), fold(node.right, params))
    if isinstance(node, Compare):
        return _compare(node, fold(node.left, params), fold(node.right, params))
    if isinstance(node, Logic):
        return _logic(node, [fold(o, params) for o in node.operands])
    test = fold(node.test, params)
    then, orelse = fold(node.then, params), fold(node.orelse, params)
    if isinstance(test, Lit):
        return then if test.value else orelse
    if then == orelse:
        return then
    return Cond(test, then, orelse, node.type)


def _negate(node: Expr) -> Expr:
    """`not node`, pushed down to the leaves (De Morgan; every comparable type is totally
    ordered): a negated conjunction of literals compiles to one closure (`expr_compile`)."""
    if isinstance(node, Lit):
        return Lit(not node.value, BOOL)
    if isinstance(node, Not):
        return node.operand
    if isinstance(node, Compare):
        return Compare(_NEGATED[node.op], node.left, node.right, node.type)
    if isinstance(node, Logic):
        dual: Literal["and", "or"] = "or" if node.op == "and" else "and"
        return _logic(Logic(dual, (), node.type), [_negate(o) for o in node.operands])
    return Not(node, BOOL)


def _constant(node: Expr) -> Lit:
    """A subtree whose leaves are all literals, evaluated."""
    return Lit(compile_expr(node)({}), node.type)


def _arith(node: Arith, left: Expr, right: Expr) -> Expr:
    if isinstance(left, Lit) and isinstance(right, Lit):
        return _constant(Arith(node.op, left, right, node.type))
    if node.op in ("+", "-") and isinstance(right, Lit) and right.value == 0:
        return left
    if node.op == "+" and isinstance(left, Lit) and left.value == 0:
        return right
    if node.op == "*" and isinstance(right, Lit) and right.value == 1:
        return left
    if node.op == "*" and isinstance(left, Lit) and left.value == 1:
        return right
    return Arith(node.op, left, right, node.type)


def _compare(node: Compare, left: Expr, right: Expr) -> Expr:
    if isinstance(left, Lit) and isinstance(right, Lit):
        return _constant(Compare(node.op, left, right, node.type))
    if left == right:
        return Lit(_REFLEXIVE[node.op], BOOL)
    if isinstance(left.type, IntType) and isinstance(right.type, IntType):
        gap = _constant_gap(left, right)
        if gap is not None:
            return _constant(Compare(node.op, Lit(gap, INT), Lit(0, INT), node.type))
    if node.op in ("==", "!=") and isinstance(left.type, BoolType):
        # `true == x` is x, `false == x` is not x (and the other way round for !=).
        if isinstance(right, Lit):
            left, right = right, left
        if isinstance(left, Lit):
            same = left.value == (node.op == "==")
            return right if same else Not(right)
    return Compare(node.op, left, right, node.type)


Linear = dict[Expr, int]
"""An integer expression as a sum of coefficient * term; the constant's term is `_ONE`."""
_ONE = Lit(1, INT)


def _linear(node: Expr) -> Linear:
    """`node` as a linear combination of its non-linear parts (read names, products of two
    non-constants, conditionals): equal parts have equal values, every expression being pure."""
    if isinstance(node, Lit):
        return {_ONE: node.value}  # type: ignore[dict-item]
    if isinstance(node, Neg):
        return {k: -c for k, c in _linear(node.operand).items()}
    if isinstance(node, Arith):
        left, right = _linear(node.left), _linear(node.right)
        if node.op == "*":
            if set(right) == {_ONE}:
                return {k: c * right[_ONE] for k, c in left.items()}
            if set(left) == {_ONE}:
                return {k: c * left[_ONE] for k, c in right.items()}
            return {node: 1}
        sign = 1 if node.op == "+" else -1
        out = dict(left)
        for k, c in right.items():
            out[k] = out.get(k, 0) + sign * c
        return out
    return {node: 1}


def _constant_gap(left: Expr, right: Expr) -> int | None:
    """`left - right` when it is the same number at every state (`x + 1 == x` is false,
    `(a + 1) + b == (a + b) + 1` true), else None."""
    gap = _linear(left)
    for k, c in _linear(right).items():
        gap[k] = gap.get(k, 0) - c
    if any(c != 0 for k, c in gap.items() if k != _ONE):
        return None
    return gap.get(_ONE, 0)


def _logic(node: Logic, operands: list[Expr]) -> Expr:
    """`and` drops its true operands and is false with a false one; `or` the other way round
    (the operands are booleans, so `x and true` is x)."""
    absorbing = node.op == "or"
    kept: list[Expr] = []
    for o in operands:
        if isinstance(o, Lit):
            if o.value == absorbing:
                return Lit(absorbing, BOOL)
            continue
        if isinstance(o, Logic) and o.op == node.op:
            kept.extend(o.operands)
        else:
            kept.append(o)
    if not kept:
        return Lit(not absorbing, BOOL)
    if len(kept) == 1:
        return kept[0]
    return Logic(node.op, tuple(kept), node.type)
