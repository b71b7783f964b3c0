"""my_loop.run_agent, unchanged, with turnbound as its host: the adapter of ../ADDING.md.

The scripted model asks the host for every reply (`model_request`, with whether tools were
offered); the tool asks the host for every execution (`run_tool`). The terminal and the
counters are read off what the real code did, never computed from the table.

    PYTHONPATH=docs/frameworks/example turnbound conform docs/frameworks/example/my-loop.toml \
        --adapter adapter:scheduler --fuzz 200
"""

from __future__ import annotations

from collections.abc import Mapping

from my_loop import Reply, run_agent
from turnbound.properties.scheduler import ThreadedScheduler
from turnbound.reference.host import Host
from turnbound.reference.outcomes import Outcome, complete, contract_violation
from turnbound.reference.table import CONTRACT_VIOLATION, Table
from turnbound.reference.types import Value


class ModelFailure(RuntimeError):
    pass


class ContractBroken(Exception):
    """The host answered outside the operation's contract: the run ends at contract_violation."""


class ToolFailure(RuntimeError):
    pass


def run_turn(table: Table, params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    params = {**table.defaults(), **params}  # the table's defaults are the loop's
    counts = {"model_requests": 0, "tool_executions": 0}
    last_offered = [True]

    def ask(op: str, args: dict[str, Value]) -> Outcome:
        outcome = host.call(op, args)
        if contract_violation(table, table.operations[op], outcome):
            raise ContractBroken(op)
        return outcome

    def model(history: list[str], tools: bool) -> Reply:
        last_offered[0] = tools
        counts["model_requests"] += 1  # a request counts once made, whatever comes back
        outcome = ask("model_request", {"tools": tools})
        if outcome.raise_ is not None:
            raise ModelFailure(outcome.raise_)
        facts = complete(table.operations["model_request"].facts, outcome.facts or {})
        return Reply(tuple(range(int(facts["calls"]))), "an answer" if facts["hasText"] else None)

    def tool(index: int) -> str:
        counts["tool_executions"] += 1
        outcome = ask("run_tool", {"index": index})
        if outcome.raise_ is not None:
            raise ToolFailure(outcome.raise_)
        return "tool output"

    try:
        run_agent(model, tool, max_steps=params["maxSteps"])
    except ContractBroken:
        return CONTRACT_VIOLATION, counts
    except ModelFailure:
        return "model_error", counts
    except ToolFailure:
        return "tool_error", counts
    return ("answered" if last_offered[0] else "capped_answer"), counts


def scheduler(table: Table, timeout: float = 10.0) -> ThreadedScheduler:
    return ThreadedScheduler(lambda params, host: run_turn(table, params, host), timeout=timeout)
