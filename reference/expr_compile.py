"""Compile an expression tree to a Python closure over an environment mapping.

Closures, not generated source: nothing is ever passed to eval or exec.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref
from turnbound.reference.types import BoolType, Value

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


Slotted = Callable[[tuple[Value, ...], Mapping[str, Value]], Value]
"""An expression over a state's values (by slot) and the facts readable there."""


def compile_slotted(node: Expr, slots: Mapping[str, int], params: Mapping[str, Value]) -> Slotted:
    """A closure over (values, facts): parameters bound as constants, variables read by slot.

    What the one step evaluates: no environment dict is built per state. A name that is
    neither a parameter nor a variable is read from the facts mapping. Every expression is
    pure and reads only what is readable where it is evaluated (the loader's rule), so the
    closures may read in any order and need not stop at the first decisive operand.
    """
    if isinstance(node, Lit):
        value = node.value
        return lambda v, f: value
    if isinstance(node, Ref):
        name = node.name
        if node.kind == "param" and name in params:
            bound = params[name]
            return lambda v, f: bound
        if node.kind == "var" and name in slots:
            i = slots[name]
            return lambda v, f: v[i]
        return lambda v, f: f[name]

    def sub(n: Expr) -> Slotted:
        return compile_slotted(n, slots, params)

    if isinstance(node, Not):
        literal = _literal(node, slots)
        if literal is not None:
            return _literals([literal], True)
        inner = sub(node.operand)
        return lambda v, f: not inner(v, f)
    if isinstance(node, Neg):
        inner = sub(node.operand)
        return lambda v, f: -inner(v, f)  # type: ignore[operator]
    if isinstance(node, Arith | Compare):
        op = _ARITH[node.op] if isinstance(node, Arith) else _CMP[node.op]
        return _binary(node.op, op, node.left, node.right, slots, params)
    if isinstance(node, Logic):
        literals: list[_Literal] = []
        rest: list[Expr] = []
        for o in node.operands:
            literal = _literal(o, slots)
            if literal is None:
                rest.append(o)
            else:
                literals.append(literal)
        parts = [sub(o) for o in rest]
        fn = parts[-1] if parts else None
        for part in reversed(parts[:-1]):
            fn = _and2(part, fn) if node.op == "and" else _or2(part, fn)  # type: ignore[arg-type]
        if literals:
            return _literals(literals, node.op == "and", fn)
        assert fn is not None
        return fn
    assert isinstance(node, Cond)
    test = sub(node.test)
    if isinstance(node.then, Lit) and isinstance(node.orelse, Lit):
        yes, no = node.then.value, node.orelse.value
        return lambda v, f: yes if test(v, f) else no
    then, orelse = sub(node.then), sub(node.orelse)
    return lambda v, f: then(v, f) if test(v, f) else orelse(v, f)


def _and2(a: Slotted, b: Slotted) -> Slotted:
    return lambda v, f: a(v, f) and b(v, f)


def _or2(a: Slotted, b: Slotted) -> Slotted:
    return lambda v, f: a(v, f) or b(v, f)


_Literal = tuple[bool, Any, bool]
"""A boolean variable (by slot) or fact (by name), maybe negated: (is a fact?, where, wanted value)."""


def _literal(node: Expr, slots: Mapping[str, int]) -> _Literal | None:
    wanted = True
    if isinstance(node, Not):
        node, wanted = node.operand, False
    if not isinstance(node, Ref) or not isinstance(node.type, BoolType):
        return None
    if node.kind == "var" and node.name in slots:
        return False, slots[node.name], wanted
    if node.kind == "fact":
        return True, node.name, wanted
    return None


def _literals(literals: list[_Literal], conjunction: bool, rest: Slotted | None = None) -> Slotted:
    """The conjunction (or disjunction) of boolean literals as one closure: the values read
    compared with the values that make every literal true (for `and`) or every one false (`or`);
    `rest`, the other operands, evaluated in the same closure after them."""
    on_vars = [(where, wanted) for fact, where, wanted in literals if not fact]
    on_facts = [(where, wanted) for fact, where, wanted in literals if fact]
    if not conjunction:  # x or not y is false exactly at x = false, y = true
        on_vars = [(where, not wanted) for where, wanted in on_vars]
        on_facts = [(where, not wanted) for where, wanted in on_facts]
    pv, wv = _getter(on_vars)
    pf, wf = _getter(on_facts)
    if rest is not None:
        return _literals_then(conjunction, on_vars != [], on_facts != [], pv, wv, pf, wf, rest)
    if conjunction:
        if not on_facts:
            return lambda v, f: pv(v) == wv
        if not on_vars:
            return lambda v, f: pf(f) == wf
        return lambda v, f: pv(v) == wv and pf(f) == wf
    if not on_facts:
        return lambda v, f: pv(v) != wv
    if not on_vars:
        return lambda v, f: pf(f) != wf
    return lambda v, f: pv(v) != wv or pf(f) != wf


def _literals_then(
    conjunction: bool,
    vars_: bool,
    facts: bool,
    pv: Callable[[Any], Any],
    wv: Any,
    pf: Callable[[Any], Any],
    wf: Any,
    rest: Slotted,
) -> Slotted:
    if conjunction:
        if not facts:
            return lambda v, f: pv(v) == wv and rest(v, f)
        if not vars_:
            return lambda v, f: pf(f) == wf and rest(v, f)
        return lambda v, f: pv(v) == wv and pf(f) == wf and rest(v, f)
    if not facts:
        return lambda v, f: pv(v) != wv or rest(v, f)
    if not vars_:
        return lambda v, f: pf(f) != wf or rest(v, f)
    return lambda v, f: pv(v) != wv or pf(f) != wf or rest(v, f)


def _getter(pairs: list[tuple[Any, bool]]) -> tuple[Callable[[Any], Any], Any]:
    """An itemgetter for the places, and what it returns at the wanted values (one item or a tuple)."""
    if not pairs:
        return itemgetter(0), None
    places, wanted = zip(*pairs, strict=True)
    return itemgetter(*places), wanted[0] if len(wanted) == 1 else tuple(wanted)


def _leaf(node: Expr, slots: Mapping[str, int], params: Mapping[str, Value]) -> tuple[str, Any] | None:
    """A constant (literal or bound parameter) or a variable slot; None for anything else."""
    if isinstance(node, Lit):
        return "const", node.value
    if isinstance(node, Ref) and node.kind == "param" and node.name in params:
        return "const", params[node.name]
    if isinstance(node, Ref) and node.kind == "var" and node.name in slots:
        return "slot", slots[node.name]
    return None


def _slot_const(name: str, i: int, c: Any) -> Slotted | None:
    """The commonest nodes (a counter against its budget, a counter's increment) with the
    operator inline rather than called."""
    if name == "+":
        return lambda v, f: v[i] + c
    if name == "-":
        return lambda v, f: v[i] - c
    if name == "<":
        return lambda v, f: v[i] < c
    if name == "<=":
        return lambda v, f: v[i] <= c
    if name == ">":
        return lambda v, f: v[i] > c
    if name == ">=":
        return lambda v, f: v[i] >= c
    if name == "==":
        return lambda v, f: v[i] == c
    return None


def _binary(
    name: str,
    op: Callable[[Any, Any], Any],
    a: Expr,
    b: Expr,
    slots: Mapping[str, int],
    params: Mapping[str, Value],
) -> Slotted:
    """A comparison or arithmetic node; a variable against a constant or another variable (the
    usual guard and counter update) reads its slots directly instead of calling two closures."""
    la, lb = _leaf(a, slots, params), _leaf(b, slots, params)
    if la is not None and lb is not None:
        (ka, xa), (kb, xb) = la, lb
        if ka == "slot" and kb == "const":
            return _slot_const(name, xa, xb) or (lambda v, f: op(v[xa], xb))
        if ka == "const" and kb == "slot":
            return lambda v, f: op(xa, v[xb])
        if ka == "slot" and kb == "slot":
            return lambda v, f: op(v[xa], v[xb])
    if la is not None and la[0] == "slot":
        i = la[1]
        if name == "+" and isinstance(b, Cond) and isinstance(b.then, Lit) and isinstance(b.orelse, Lit):
            # a monitor's count: n + (1 if the call matches else 0)
            test, yes, no = compile_slotted(b.test, slots, params), b.then.value, b.orelse.value
            return lambda v, f: v[i] + (yes if test(v, f) else no)
        right = compile_slotted(b, slots, params)
        return lambda v, f: op(v[i], right(v, f))
    left, right = compile_slotted(a, slots, params), compile_slotted(b, slots, params)
    return lambda v, f: op(left(v, f), right(v, f))
