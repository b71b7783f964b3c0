"""The explorer's search as a `networkx.DiGraph` (attributes in `explorer`'s docstring)."""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
from turnbound.properties.explore.results import PathStep, Summary
from turnbound.properties.explore.search import _Search
from turnbound.reference.outcomes import outcome_text

describe_outcome = outcome_text
"""The one rendering of an outcome (`turnbound.reference.outcomes.outcome_text`)."""


def _to_graph(search: _Search, summary: Summary, broken: Mapping[int, tuple[str, ...]]) -> nx.DiGraph:
    machine = search.machine
    horizon = set(search.horizon_leaves)
    depth = search.depths()
    g = nx.DiGraph(profile=summary.profile, params=dict(summary.params))
    for i, (state, mon) in enumerate(search.nodes):
        g.add_node(
            i,
            location=state.location,
            terminal=machine.is_terminal(state),
            values=machine.variables(state),
            facts=dict(state.facts),
            monitors=mon,
            depth=depth[i],
            calls=search.calls[i],
            horizon=i in horizon,
            violations=broken.get(i, ()),
        )
    for i in range(len(search.nodes)):
        for e in range(search.first_edge[i], search.first_edge[i + 1]):
            step = search.step_of(search.label[e])
            label = _label_text(step)
            for alt in search.alternatives.get(e, ()):
                label += " | " + _label_text(search.step_of(alt))
            g.add_edge(
                i, search.dst[e], transition=step.transition, op=step.op, outcome=step.outcome, label=label
            )
    return g


def _label_text(step: PathStep) -> str:
    if step.outcome is None:
        return step.transition
    return f"{step.transition}: {describe_outcome(step.outcome)}"
