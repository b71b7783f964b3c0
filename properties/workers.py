"""Process pools for the engines that spread work over workers.

Fork hands a worker the tables without pickling them (a `Table` holds mapping proxies);
where fork does not exist the engines run their work in this process instead. A worker that
dies (killed, out of memory) ends the work with one error: `multiprocessing.Pool` would wait
for its lost task forever, `concurrent.futures` notices the broken pool.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from turnbound.reference.errors import TurnboundError

T = TypeVar("T")
R = TypeVar("R")


class WorkerDied(TurnboundError):
    """A worker process ended without a result."""


def fork_context() -> multiprocessing.context.BaseContext | None:
    """The fork start method, or None where the platform has none."""
    try:
        return multiprocessing.get_context("fork")
    except ValueError:
        return None


def ordered_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    chunksize: int = 1,
) -> Iterator[R]:
    """`fn` over `items` on `workers` forked processes (each set up by `initializer`), the
    results in the items' order as they come. Stopping early cancels what has not started."""
    context = fork_context()
    assert context is not None, "callers run in this process where fork does not exist"
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs)
    try:
        yield from pool.map(fn, items, chunksize=chunksize)
    except BrokenProcessPool:
        raise WorkerDied(
            "a worker process died without a result (killed, or out of memory); "
            "--jobs 1 runs the work in this process"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
