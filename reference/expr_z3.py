"""Compile an expression tree to a z3 term: the same trees the interpreter runs.

Integers and booleans map to z3 Int and Bool; an enum value is the Int index of
its member, so enum variables need `type_constraint` to stay within their members.
"""

from __future__ import annotations

from collections.abc import Mapping

import z3
from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref
from turnbound.reference.types import BoolType, Domain, EnumType, IntType, Type, Value

Z3Env = Mapping[str, z3.ExprRef]
"""Names (parameters, variables, facts) to the z3 terms that stand for them."""


def const(name: str, type_: Type) -> z3.ExprRef:
    """A fresh z3 constant of the table type (enums are Int member indices)."""
    if isinstance(type_, BoolType):
        return z3.Bool(name)
    return z3.Int(name)


def value(v: Value, type_: Type) -> z3.ExprRef:
    """A table value as a z3 literal."""
    if isinstance(type_, BoolType):
        return z3.BoolVal(bool(v))
    if isinstance(type_, EnumType):
        return z3.IntVal(type_.members.index(str(v)))
    return z3.IntVal(int(v))


def decode(term: z3.ExprRef, type_: Type) -> Value:
    """A z3 model value (already evaluated with model completion) as a table value."""
    if isinstance(type_, BoolType):
        return bool(z3.is_true(term))
    index = int(term.as_long())
    if isinstance(type_, EnumType):
        return type_.members[index]
    return index


def type_constraint(term: z3.ExprRef, type_: Type) -> z3.BoolRef:
    """What every value of the type satisfies (an enum index names a member)."""
    if isinstance(type_, EnumType):
        return z3.And(term >= 0, term < len(type_.members))
    return z3.BoolVal(True)


def domain_constraint(term: z3.ExprRef, domain: Domain) -> z3.BoolRef:
    """Membership in a fact's finite domain."""
    if isinstance(domain.type, IntType):
        return z3.And(term >= domain.lo, term <= domain.hi)
    return type_constraint(term, domain.type)


def to_z3(node: Expr, env: Z3Env) -> z3.ExprRef:
    """The z3 term of a typed expression; every name it reads must be in `env`."""
    if isinstance(node, Lit):
        return value(node.value, node.type)
    if isinstance(node, Ref):
        term = env.get(node.name)
        if term is None:
            raise DefinitionError(f"no z3 term for {node.kind} {node.name!r} here")
        return term
    if isinstance(node, Not):
        return z3.Not(to_z3(node.operand, env))
    if isinstance(node, Neg):
        return -to_z3(node.operand, env)
    if isinstance(node, Arith):
        left, right = to_z3(node.left, env), to_z3(node.right, env)
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        return left * right
    if isinstance(node, Compare):
        return _compare(node.op, to_z3(node.left, env), to_z3(node.right, env))
    if isinstance(node, Logic):
        parts = [to_z3(o, env) for o in node.operands]
        return z3.And(*parts) if node.op == "and" else z3.Or(*parts)
    assert isinstance(node, Cond)
    return z3.If(to_z3(node.test, env), to_z3(node.then, env), to_z3(node.orelse, env))


def _compare(op: str, left: z3.ExprRef, right: z3.ExprRef) -> z3.BoolRef:
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right
    if op == "==":
        return left == right
    return left != right
