"""A call handed to a bounded thread pool that the first thread to wait for it runs itself
when no worker has taken it yet (*caller runs*).

A search runs its stages in one pool of four workers, and the magma-extend stage hands the
query's full-text search and phrase lists to the same pool, then waits for them. A stage past
its deadline is abandoned, not stopped: it goes on in its worker. When four such stages hold
the four workers, each waiting for a call queued behind it, no worker is left to run those
calls, and every later search of the process finds nothing (seen on the 100,000-note bench
index under load: four workers blocked on their full-text calls for good). A :class:`PoolCall`
cannot wait on a full pool: whoever waits for it first, a worker or the caller, runs it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

__all__ = ["PoolCall"]

T = TypeVar("T")


class PoolCall(Generic[T]):
    """``fn()`` submitted to ``pool``; :meth:`result` runs it in the waiting thread when no
    worker has started it yet, so that it never waits for a free worker. It runs once."""

    def __init__(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> None:
        self._fn: Callable[[], T] | None = fn
        self._lock = threading.Lock()
        self._outcome: Future[T] = Future()
        pool.submit(self._run)

    def _run(self) -> None:
        with self._lock:
            fn, self._fn = self._fn, None
        if fn is None:  # started already, by a worker or a waiting thread
            return
        self._outcome.set_running_or_notify_cancel()
        try:
            self._outcome.set_result(fn())
        except BaseException as error:  # handed to whoever waits, as a Future does
            self._outcome.set_exception(error)

    def result(self, timeout: float | None = None) -> T:
        """``fn()``'s result (or what it raised), run here first when no worker has started
        it. With ``timeout`` (seconds) the caller only waits, at most that long, and never
        runs it: a bounded wait must not become a run of unknown length. Raises
        :class:`concurrent.futures.TimeoutError` past ``timeout``."""
        if timeout is None:
            self._run()
        return self._outcome.result(timeout)

    def done(self) -> bool:
        """Has ``fn`` returned or raised?"""
        return self._outcome.done()
