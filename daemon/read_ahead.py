"""One batch read ahead on a thread while the caller works on the batch before it.

A cold index reads a note (parse, inline data dropped, entries split, credentials withheld:
pure Python) and then embeds and writes its chunks (the model's numpy and LanceDB's writer,
which release the GIL for most of their time). Read one after the other, a 100,000-note vault
kept the embedder idle for the quarter of an hour its reading took and held every parsed note
at once (1.7 GB). :func:`read_ahead` hands out ``(batch, read(batch))`` in order and reads
the next batch while the caller embeds and writes this one: at most two read batches are
held (the one handed out and the next), and the reader waits for the caller, never runs
further ahead, so it takes the cores only for one batch's reading at a time.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["READ_AHEAD_SWITCH_S", "read_ahead"]

S = TypeVar("S")
R = TypeVar("R")

#: The interpreter's switch interval while a batch is read ahead, in seconds (Python's own:
#: 0.005). Between two of its numpy calls the embedder's thread takes the GIL back for a
#: moment; with the reader's pure Python holding it, each such moment waited up to a whole
#: interval, and the model, at work 95 % of the wall, ran at 47.5 chunks/s instead of ~75:
#: a 10,036-note cold index (``bench/scale_bench.py --indexed-notes 10000 --spread``, real
#: model, 2 cores, load ~2) took 371 s at 0.005 and 268 s at 0.0005.
READ_AHEAD_SWITCH_S = 0.0005
_switch_lock = threading.Lock()
_switch_users = 0
_switch_before = 0.0


@contextmanager
def read_ahead(batches: Iterable[S], read: Callable[[S], R]) -> Iterator[Iterator[tuple[S, R]]]:
    """Yield an iterator of ``(batch, read(batch))`` in the order of ``batches``; while the
    caller holds one pair, the next batch is read on one thread.

    An exception ``read`` raises is raised to the caller when it asks for that batch. On
    leaving the block (at the end, or on an error of the caller's) no further batch is
    started; a read that is running is waited for (one batch) and its result dropped.
    """
    pending: list[Future[R]] = []
    with _short_switches(), \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="dreamd-read-ahead") as pool:

        def pairs() -> Iterator[tuple[S, R]]:
            upcoming = iter(batches)
            started = [(batch, pool.submit(read, batch)) for batch in _first(upcoming)]
            while started:
                batch, future = started.pop()
                pending[:] = [future]
                result = future.result()
                started = [(after, pool.submit(read, after)) for after in _first(upcoming)]
                pending[:] = [f for _, f in started]
                yield batch, result

        try:
            yield pairs()
        finally:
            for future in pending:
                future.cancel()


@contextmanager
def _short_switches() -> Iterator[None]:
    """:data:`READ_AHEAD_SWITCH_S` while at least one read-ahead runs; the interval before
    the first of them afterwards."""
    global _switch_users, _switch_before
    with _switch_lock:
        if _switch_users == 0:
            _switch_before = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_before, READ_AHEAD_SWITCH_S))
        _switch_users += 1
    try:
        yield
    finally:
        with _switch_lock:
            _switch_users -= 1
            if _switch_users == 0:
                sys.setswitchinterval(_switch_before)


def _first(items: Iterator[S]) -> list[S]:
    """The next item of ``items`` in a list, or an empty list at their end."""
    for item in items:
        return [item]
    return []
