"""A direct, hand-written Python implementation of the deeptutor-scheduler table.

It exists for two reasons only: as the baseline the interpreter's speed is compared
with, and as an independent implementation the conformance machinery must find
equal to the reference. It is deliberately plain code, not table-driven.
"""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.host import Host
from turnbound.reference.outcomes import Outcome

FACTS = ("hasTools", "hasText", "truncated", "reasoningBudgetExhausted")
BOOL_DEFAULTS = {"recoveryRejected": False, "finishRedirect": False}


class _Stop(Exception):
    def __init__(self, terminal: str) -> None:
        self.terminal = terminal


def _facts(out: Outcome, required: tuple[str, ...], optional: Mapping[str, object]) -> dict[str, object]:
    if out.raise_ == "abort":
        raise _Stop("aborted")
    if out.raise_ is not None or out.facts is None:
        raise _Stop("contract_violation")
    facts = out.facts
    if set(facts) - set(required) - set(optional) or any(k not in facts for k in required):
        raise _Stop("contract_violation")
    merged = {**optional, **facts}
    if not all(isinstance(v, bool) for k, v in merged.items() if k != "extraRounds"):
        raise _Stop("contract_violation")
    return merged


def run(params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    e_budget, s_budget, empty_budget = (
        params["explorationBudget"],
        params["settlementBudget"],
        params["emptyRecoveryBudget"],
    )
    c = {"rounds": 0, "exploration_rounds": 0, "settlement_rounds": 0, "tool_steps": 0}
    recovery_used = redirect_used = False
    empty = reasoning = 0

    def forced(reason: str) -> str:
        out = host.call("forced_finish", {"reason": reason})
        if out.raise_ == "abort":
            return "aborted"
        extra = (out.facts or {}).get("extraRounds")
        if out.raise_ is not None or set(out.facts or {}) != {"extraRounds"} or extra not in (0, 1):
            return "contract_violation"
        if isinstance(extra, bool):
            return "contract_violation"
        assert isinstance(extra, int)
        c["rounds"] += extra
        return "forced_finish"

    def simple(op: str, terminal: str) -> str:
        out = host.call(op, {})
        _facts(out, (), {})
        return terminal

    try:
        while True:
            if c["exploration_rounds"] < e_budget:
                mode, recovery = "exploration", False
            elif c["settlement_rounds"] < s_budget:
                mode, recovery = "settlement", False
            elif recovery_used:
                return simple("reject_finish", "reject_finish"), c
            else:
                recovery_used = True
                offer = _facts(host.call("prepare_recovery", {}), ("available",), {})
                if not offer["available"]:
                    return forced("budget"), c
                mode, recovery = "settlement", True
            out = host.call("call_round", {"mode": mode, "recovery": recovery})
            if out.raise_ == "host_failure":
                fields = out.fields
                if set(fields) != {"partial"} or not isinstance(fields["partial"], bool):
                    return "contract_violation", c
                if c["rounds"] == 0 or fields["partial"]:
                    return "error", c
                return forced("error"), c
            f = _facts(out, FACTS, BOOL_DEFAULTS)
            c["rounds"] += 1
            c["settlement_rounds" if mode == "settlement" else "exploration_rounds"] += 1
            if f["hasTools"]:
                if recovery_used and f["recoveryRejected"]:
                    return simple("reject_finish", "reject_finish"), c
                d = _facts(host.call("dispatch_tools", {}), (), {"paused": False})
                c["tool_steps"] += 1
                if d["paused"]:
                    u = _facts(host.call("await_user", {}), ("resumed",), {})
                    if not u["resumed"]:
                        return "paused", c
                continue
            if f["reasoningBudgetExhausted"]:
                if reasoning >= 1:
                    return "error", c
                reasoning += 1
                continue
            if f["truncated"]:
                continue
            if not f["hasText"]:
                if empty < empty_budget:
                    empty += 1
                    continue
                if recovery_used:
                    return simple("reject_finish", "reject_finish"), c
                return forced("budget"), c
            if f["finishRedirect"]:
                if redirect_used:
                    return simple("reject_finish", "reject_finish"), c
                redirect_used = True
                continue
            return simple("finish", "finish"), c
    except _Stop as stop:
        return stop.terminal, c
