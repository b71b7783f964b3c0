"""Process pools for the engines that spread work over workers.

Fork hands a worker the tables without pickling them (a `Table` holds mapping proxies);
where fork does not exist the engines run their work in this process instead.
"""

from __future__ import annotations

import multiprocessing


def fork_context() -> multiprocessing.context.BaseContext | None:
    """The fork start method, or None where the platform has none."""
    try:
        return multiprocessing.get_context("fork")
    except ValueError:
        return None
