"""The engines' lock taken in turns with a long reconcile: clients answered while it runs.

The daemon's engines (the store, the retriever, the writer) are used by one thread at a time,
under one lock (:attr:`daemon.runner.Daemon.lock`): the store has one writer, and it is the
thread holding that lock. A reconcile holds it from its start to its end, and a first index
of a large vault lasts most of an hour: a client waiting for the lock that long would give up
and answer in-process (slow: it loads the model), from a partial index all the same.

So a reconcile lets the clients waiting for the lock in between its commits, where it already
lets the watcher's batches in (:mod:`daemon.interleave`): :meth:`Turns.let_in` gives the
lock up (every level the reconcile's thread holds) while clients are waiting, and takes it
back once they had their turn. A client's command runs on its own thread, holding the lock:
still one thread in the engines at a time, still this process as the store's only writer.
What a client's write indexed there is handed back to the reconcile (:meth:`Turns.indexed`),
which leaves those paths as the write left them, as it does the watcher's.

Only the commands that make sense on a partial index take a turn (:data:`IN_A_RECONCILE`);
the others are told the daemon is indexing (:class:`NotNow`) and answer in-process as before.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["IN_A_RECONCILE", "LET_IN_MAX_S", "NotNow", "Turns"]

#: Commands a client may run within a reconcile's turn: reads of the index as it is so far
#: (searches say the index is partial, :mod:`daemon.first_index`), and the writes a user makes
#: while it runs (``remember``, ``note``). ``sync``, ``check``, ``forget``, ``rollback`` wait
#: for its end (answered in-process meanwhile, as before): each is a pass over the vault or
#: the index of its own.
IN_A_RECONCILE = frozenset({"search", "context", "show", "history", "diff", "status",
                            "conflicts", "remember", "note"})
#: Longest a reconcile waits, at one interleave, for the clients waiting to have had their
#: turn, in s (a stream of clients never holds the index back for longer).
LET_IN_MAX_S = 10.0


class NotNow(Exception):
    """A command that waits for the end of the reconcile under way (not in
    :data:`IN_A_RECONCILE`)."""


class Turns:
    """Turns at ``lock`` (an RLock) between a reconcile holding it and the clients."""

    def __init__(self, lock: threading.RLock) -> None:
        self.lock = lock
        self._handoff = threading.Condition(lock)
        self._count = threading.Lock()
        self._waiting = 0
        self._reconciles = 0
        self._indexed: set[str] = set()

    @property
    def reconciling(self) -> bool:
        """Whether a reconcile holds the lock and lets clients in at its interleave."""
        return self._reconciles > 0

    @contextmanager
    def reconcile(self) -> Iterator[None]:
        """The reconcile under way (on the thread holding :attr:`lock`)."""
        self._reconciles += 1
        try:
            yield
        finally:
            self._reconciles -= 1

    def take(self, wait_s: float) -> bool:
        """Take :attr:`lock` within ``wait_s`` seconds, in a reconcile's turn when one runs
        -> whether it was taken (then the caller releases it)."""
        with self._count:
            self._waiting += 1
        try:
            taken = self.lock.acquire(timeout=max(wait_s, 0.0))
        finally:
            with self._count:
                self._waiting -= 1
        if taken:
            self._handoff.notify_all()  # (the reconcile, if it let us in, waits for it)
        return taken

    def check(self, command: str) -> None:
        """Raise :class:`NotNow` when ``command`` may not run in the reconcile under way
        (called holding :attr:`lock`: then a reconcile runs only if it let the caller in)."""
        if self.reconciling and command not in IN_A_RECONCILE:
            raise NotNow(command)

    def __enter__(self) -> Turns:
        """A turn for as long as it takes (an MCP tool call)."""
        self.take(float(threading.TIMEOUT_MAX))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.lock.release()

    def let_in(self, max_wait_s: float = LET_IN_MAX_S) -> None:
        """On the reconcile's thread, holding :attr:`lock`: let the clients waiting for it
        have their turn, for ``max_wait_s`` seconds at most, then take it back."""
        if not self.reconciling or not self._waiting:
            return
        # (wait_for gives up every level of the lock while it waits, and takes it back once
        # the last one let in has answered, or at the deadline with clients still waiting)
        self._handoff.wait_for(lambda: not self._waiting, timeout=max_wait_s)

    def note_indexed(self, paths: Collection[str]) -> None:
        """A client's write indexed ``paths`` within a reconcile's turn."""
        if self.reconciling:
            self._indexed.update(paths)

    def indexed(self) -> frozenset[str]:
        """The paths clients' writes indexed since the last call (for the reconcile to
        leave as they are)."""
        taken, self._indexed = frozenset(self._indexed), set()
        return taken
