"""What a memoizing machine (`Machine(memo=True)`, the explorer's) keeps per transition: the
results of its updates by the values and facts they read. Every expression is pure, so equal
inputs make equal results; the explorer meets the same few inputs in many states (8,498
distinct ones over 188,325 update steps at deeptutor-scheduler E = S = 6), one run rarely.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from turnbound.reference.compiled import CompiledTransition
from turnbound.reference.types import Value
from turnbound.reference.update_step import slot_picker

MEMO_LIMIT = 50_000
"""Update results remembered per transition in a machine with `memo=True` (cleared past this)."""


@dataclass(frozen=True)
class Plan:
    """How a memoizing machine takes one transition's updates."""

    c: CompiledTransition
    pick_vars: Callable[[tuple[Value, ...]], tuple[Any, ...]]
    pick_facts: Callable[[Mapping[str, Value]], tuple[Any, ...]]
    merge: Callable[[tuple[Value, ...]], tuple[Value, ...]]
    """The state's values followed by the updates' results -> the new values."""
    int_positions: tuple[int, ...]
    memo: dict[tuple[tuple[Any, ...], tuple[Any, ...]], tuple[Value, ...]]

    @staticmethod
    def of(c: CompiledTransition, n: int) -> Plan:
        position = {slot: n + k for k, (slot, _) in enumerate(c.updates)}
        ints = tuple(k for k, (slot, _) in enumerate(c.updates) if slot in c.int_slots)
        merge = slot_picker(tuple(position.get(j, j) for j in range(n)))
        return Plan(c, slot_picker(c.read_slots), slot_picker(c.read_facts), merge, ints, {})
