"""A small agent loop of the kind a team writes itself: the worked example of ../ADDING.md.

`max_steps` is the knob. Each step asks the model with tools offered and runs the tools its
reply calls; a reply without calls is the answer. When the steps are used up, the loop asks
once more without tools, so the user always gets an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    tool_calls: Sequence[int]
    """The tools the model asks for (an index per call)."""
    text: str | None


Model = Callable[[list[str], bool], Reply]
"""(history, tools offered) -> the model's reply."""
Tool = Callable[[int], str]


def run_agent(model: Model, tool: Tool, max_steps: int = 5) -> str:
    history: list[str] = []
    for _ in range(max_steps):
        reply = model(history, True)
        if not reply.tool_calls:
            return reply.text or ""
        for call in reply.tool_calls:
            history.append(tool(call))
    final = model(history, False)  # the steps are spent: one last request, without tools
    return final.text or ""
