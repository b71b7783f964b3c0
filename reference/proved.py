"""Which table objects the loader proved deterministic and total (guards exclusive and covering).

The step takes the first enabled guard only for such a table: one built by hand or
rewritten after loading (a test's broken table, a mutant) keeps the full check that
names every enabled transition. Keyed by object identity, held weakly: a table is
immutable, so a proof about one object stays true for its lifetime.
"""

from __future__ import annotations

import weakref

from turnbound.reference.table import Table

_PROVED: dict[int, weakref.ref[Table]] = {}


def mark_guards_proved(table: Table) -> None:
    key = id(table)
    _PROVED[key] = weakref.ref(table, lambda _ref: _PROVED.pop(key, None))


def guards_proved(table: Table) -> bool:
    ref = _PROVED.get(id(table))
    return ref is not None and ref() is table
