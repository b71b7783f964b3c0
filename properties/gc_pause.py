"""The cyclic garbage collector paused while a search builds its graph.

A search creates millions of tuples (states, nodes, edges) that all stay alive and hold no
cycles; the collector still walks every one of them again and again as the older generations
fill (30% of the explorer's time at deeptutor-scheduler E = S = 12). Reference counting frees
everything a search drops, so pausing only the cycle collector changes nothing but the time; it
runs again, as it was, when the search ends. What the search made is then moved to the oldest
generation (`freeze` and `unfreeze`, two list splices): left in the youngest, the first
collection after the search would walk all of it once (10% of a sweep's time).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if was:
            gc.enable()
