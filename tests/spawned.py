"""Run a function in several spawned processes at once and collect what each reports."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any, Callable, Sequence


def spawned_results(target: Callable[..., None], args_each: Sequence[tuple[Any, ...]], *,
                    barrier: bool = False, timeout: float = 120) -> list[Any]:
    """``target(*args, [barrier,] queue)`` in one spawned process per ``args``: what each put on the
    queue (in the order they put it), once every process has ended with exit code 0. With
    ``barrier`` they share a ``Barrier`` of them all, to start something at the same moment."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    extra = (ctx.Barrier(len(args_each)),) if barrier else ()
    procs = [ctx.Process(target=target, args=(*args, *extra, queue)) for args in args_each]
    for p in procs:
        p.start()
    results = [queue.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return results
