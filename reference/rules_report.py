"""The loader's rules for report rules: the names a probe line may read (the state,
`terminal`, and each operation's `<op>_calls`), and its placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from turnbound.reference.expr_parse import Scope, Symbol
from turnbound.reference.rules_context import LoadContext
from turnbound.reference.table import Operation, Parameter, ReportRule, Variable
from turnbound.reference.types import BOOL, INT, EnumType

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
TERMINAL_ENUM = "terminal"


def op_calls_name(op: str) -> str:
    """The meta name report rules use for how often an operation was invoked."""
    return f"{op}_calls"


def report_scope(
    state_scope: Scope, operations: Mapping[str, Operation], terminals: Mapping[str, str]
) -> dict[str, Symbol]:
    """Names a report rule may read: state, `terminal`, and `<op>_calls` counts."""
    scope = dict(state_scope)
    scope[TERMINAL_ENUM] = Symbol(TERMINAL_ENUM, "meta", EnumType(TERMINAL_ENUM, tuple(terminals)))
    for op in operations:
        name = op_calls_name(op)
        scope[name] = Symbol(name, "meta", INT)
    return scope


def build_report(
    ctx: LoadContext,
    state_scope: Scope,
    operations: Mapping[str, Operation],
    terminals: Mapping[str, str],
    variables: tuple[Variable, ...],
    params: tuple[Parameter, ...],
) -> tuple[ReportRule, ...]:
    scope = dict(report_scope(state_scope, operations, terminals))
    out = []
    for i, r in enumerate(ctx.doc.report):
        where = f"report[{i}]"
        when = ctx.expr(f"{where}.when", r.when, scope, BOOL)
        for name in _PLACEHOLDER.findall(r.line):
            if name not in scope:
                raise ctx.fail(
                    f"{where}.line", f"placeholder {{{name}}} names nothing; known: {sorted(scope)}"
                )
        out.append(ReportRule(when, r.line))
    return tuple(out)
