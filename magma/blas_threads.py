"""How many BLAS threads numpy's work uses for a while, through ``threadpoolctl``.

OpenBLAS (numpy's wheels ship it) splits a matrix product over as many threads as the machine
has cores, whatever the size, and its threads wait for each other by spinning. For the forward
pass of one short text (a ``remember``'s draft, a search query) on a 2-core machine that
something else keeps busy, that costs more than it gains: one sentence took p50 23-94 ms and
p90 63-240 ms on two threads against p50 5-10 ms and p90 9-17 ms on one (our measure: load
average 5.8, USE multilingual v3, :mod:`magma.embedder`). :func:`blas_threads` sets the count
for a block and puts it back after it (``threadpoolctl``'s ``ThreadpoolController.limit``,
about 15 µs a block). The count is the process's: the blocks of all threads take one lock, so
each puts back what it found, and BLAS work of other threads meanwhile runs on that count too.
Where no BLAS library ``threadpoolctl`` knows is loaded, nothing changes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np  # noqa: F401  (loaded first: the controller finds numpy's BLAS)
from threadpoolctl import ThreadpoolController

__all__ = ["blas_thread_count", "blas_threads"]

#: Held for a block of :func:`blas_threads` (by one thread at a time; re-entrant).
_HELD = threading.RLock()


@contextmanager
def blas_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` (≥ 1) BLAS threads, then put back the count it found
    (one block at a time in the process; a thread may nest them)."""
    with _HELD, _controller().limit(limits=count, user_api="blas"):
        yield


def blas_thread_count() -> int | None:
    """The BLAS thread count now (the first BLAS library's), or ``None`` with none loaded."""
    pools = _controller().select(user_api="blas").info()
    return int(pools[0]["num_threads"]) if pools else None


@functools.cache
def _controller() -> ThreadpoolController:
    """The BLAS libraries of the process, found once (numpy's is loaded by then)."""
    return ThreadpoolController()
