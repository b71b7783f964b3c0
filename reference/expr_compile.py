"""Compile an expression tree to a Python closure over an environment mapping.

Closures, not generated source: nothing is ever passed to eval or exec.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref
from turnbound.reference.types import Value

Env = Mapping[str, Value]
Compiled = Callable[[Env], Value]

_ARITH: dict[str, Callable[[int, int], int]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def compile_expr(node: Expr) -> Compiled:
    if isinstance(node, Lit):
        value = node.value
        return lambda env: value
    if isinstance(node, Ref):
        name = node.name
        return lambda env: env[name]
    if isinstance(node, Not):
        inner = compile_expr(node.operand)
        return lambda env: not inner(env)
    if isinstance(node, Neg):
        inner = compile_expr(node.operand)
        return lambda env: -inner(env)  # type: ignore[operator]
    if isinstance(node, Arith):
        arith, left, right = _ARITH[node.op], compile_expr(node.left), compile_expr(node.right)
        return lambda env: arith(left(env), right(env))  # type: ignore[arg-type]
    if isinstance(node, Compare):
        cmp, left, right = _CMP[node.op], compile_expr(node.left), compile_expr(node.right)
        return lambda env: cmp(left(env), right(env))
    if isinstance(node, Logic):
        # Folded into nested binary closures: cheaper per call than all()/any() over a generator.
        parts = [compile_expr(o) for o in node.operands]
        fn = parts[-1]
        for part in reversed(parts[:-1]):
            fn = _and(part, fn) if node.op == "and" else _or(part, fn)
        return fn
    assert isinstance(node, Cond)
    test, then, orelse = compile_expr(node.test), compile_expr(node.then), compile_expr(node.orelse)
    return lambda env: then(env) if test(env) else orelse(env)


def _and(a: Compiled, b: Compiled) -> Compiled:
    return lambda env: a(env) and b(env)


def _or(a: Compiled, b: Compiled) -> Compiled:
    return lambda env: a(env) or b(env)
