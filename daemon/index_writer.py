"""The index write of a ``remember``, done right after its answer: one background writer per
process, and the barrier every reader of the store in that process passes first.

``remember`` returns once its memory file (and ``MEMORY.md``) is durably written and its
judgement made; the version record of the bytes it wrote, then the LanceDB write of those
files (chunks, vectors, links, the vault graph's step) follow on a thread of its own, in
order: each write is one version whatever changes the file before its index write. Index
writes that pile up meanwhile go in one batch (one commit for several files). A reader of
the store in the same process — a search, a status, a check, a forget, a rollback, a dream,
a sync — waits for what is pending first (:meth:`BackgroundIndex.settle`); the next
``remember`` does not: it sees the memory files themselves, the vector of each memory
just written (kept by the store, :class:`magma.store_memo.RecentVectors`) and the rows
committed so far, and embeds a vector none of them holds
(:meth:`daemon.memory_pool.MemoryPool.facts`; it waits only when that would be many).

A process that exits (a one-shot ``dreamd remember``, a script's last call) waits for the
write first: when its main thread ends, before the interpreter shuts the thread pools down
(:func:`_settle_at_exit`). A process killed before the write leaves the file on disk and the
index behind it; the next reconcile (``dreamd sync``, a daemon's start) indexes it, as it
indexes any file written while nothing ran.
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401  (its exit hook first: see _settle_at_exit)
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

import structlog

from config.errors import DreamdError

if TYPE_CHECKING:
    from daemon.memory_pool import StoredMemory

__all__ = ["BackgroundIndex", "IndexWrites", "settle_all"]

log = structlog.get_logger("dreamd.app")


class IndexWrites(Protocol):
    """How a writer of vault files has them indexed (:class:`daemon.indexing.Indexing`)."""

    def index_now(self, paths: Collection[str], *, purge: bool = False) -> bool:
        """Index ``paths`` before returning (False: left to a running daemon, or to the
        next sync); ``purge`` also drops old table versions."""
        ...

    def index_soon(self, paths: Collection[str]) -> bool:
        """Index ``paths`` right after the caller's answer."""
        ...

    def record_versions(self, memories: Iterable[StoredMemory], paths: Collection[str]
                        ) -> None:
        """Record the versions of the memory files at ``paths`` (of ``memories``, as just
        written) before :meth:`index_soon` indexes them (right after the answer too)."""
        ...

    def settle(self) -> None:
        """Wait for the index writes asked for by :meth:`index_soon`."""
        ...

    def asked(self, path: str) -> bool:
        """Is an index write of ``path`` asked for and not done yet?"""
        ...


class BackgroundIndex:
    """Index vault paths on one background thread, in the order asked, each ``first`` job
    (a version record) before the index write that follows it: ``write(paths) -> bool`` is
    the synchronous index of the caller (it takes the store's lock itself). Thread-safe."""

    def __init__(self, write: Callable[[list[str]], bool]) -> None:
        self._write = write
        self._versions: list[Callable[[], object]] = []  # run before the paths are written
        self._pending: dict[str, None] = {}  # paths, in the order asked, each once
        self._writing: frozenset[str] = frozenset()  # the batch being written
        self._worker: threading.Thread | None = None
        self._changed = threading.Condition()
        self._here = threading.local()
        _LIVE.add(self)

    def submit(self, paths: Collection[str], first: Callable[[], object] | None = None
               ) -> None:
        """Run ``first()`` and index ``paths`` soon, after what is already pending (returns
        at once)."""
        with self._changed:
            if first is not None:
                self._versions.append(first)
            self._pending.update(dict.fromkeys(paths))
            if self._worker is None and (self._pending or self._versions):
                _settle_at_exit()
                self._worker = threading.Thread(target=self._drain, name="dreamd-index-write")
                self._worker.start()

    @property
    def pending(self) -> bool:
        """Is an index write asked for and not done yet?"""
        with self._changed:
            return self._worker is not None

    def asked(self, path: str) -> bool:
        """Is ``path`` waiting to be indexed, or being indexed now?"""
        with self._changed:
            return path in self._pending or path in self._writing

    def settle(self, timeout_s: float | None = None) -> None:
        """Wait until every write asked for before this call is in the store (at most
        ``timeout_s`` seconds; ``None``: as long as it takes). Returns at once on the
        writer's own thread, and on a thread that holds the store (:meth:`holding`): the
        pending writes follow its own."""
        if getattr(self._here, "holding", False):
            return
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._changed:
            while self._worker is not None and self._worker is not threading.current_thread():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                self._changed.wait(left)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Mark this thread as the store's writer for a while (it holds the store's lock:
        waiting for the background writer, which needs that lock, would never end)."""
        before = getattr(self._here, "holding", False)
        self._here.holding = True
        try:
            yield
        finally:
            self._here.holding = before

    def _drain(self) -> None:
        try:
            while work := self._next():
                versions, paths = work
                while versions:  # (also those asked for meanwhile: before the index write
                    for job in versions:  # reads the files, which may be newer by then)
                        try:
                            job()
                        except Exception as error:  # (any: the index write still goes in,
                            # and the next write of the file records its version)
                            log.error("versions.record_failed", error=str(error),
                                      kind=type(error).__name__,
                                      exc_info=not isinstance(error, DreamdError | OSError))
                    versions = self._take_versions()
                try:
                    if paths:
                        self._write(paths)
                except Exception as error:  # (any: the file is on disk; the writes asked
                    # for after these still go in)
                    log.error("index.write_failed", paths=len(paths), error=str(error),
                              kind=type(error).__name__,
                              exc_info=not isinstance(error, DreamdError | OSError),
                              hint="the next dreamd sync (or the daemon) indexes it")
        finally:
            with self._changed:  # (also after an error nobody expected: no reader hangs)
                if self._worker is threading.current_thread():
                    self._worker = None
                    self._pending.clear()
                    self._versions.clear()
                    self._writing = frozenset()
                self._changed.notify_all()

    def _take_versions(self) -> list[Callable[[], object]]:
        with self._changed:
            versions, self._versions = self._versions, []
            return versions

    def _next(self) -> tuple[list[Callable[[], object]], list[str]] | None:
        """The pending versions and paths, taken; ``None`` ends the thread (no longer the
        writer)."""
        with self._changed:
            versions, paths = self._versions, list(self._pending)
            self._versions = []
            self._pending.clear()
            self._writing = frozenset(paths)
            if not paths and not versions:
                self._worker = None
                self._changed.notify_all()
                return None
            return versions, paths


#: Every writer of this process (:func:`settle_all`).
_LIVE: weakref.WeakSet[BackgroundIndex] = weakref.WeakSet()


def settle_all(timeout_s: float) -> None:
    """Wait, at most ``timeout_s`` seconds in all, for the pending index writes of every
    writer of this process (a process about to end: :func:`daemon.entry.exit_on_sigterm`)."""
    deadline = time.monotonic() + timeout_s
    for writer in list(_LIVE):
        writer.settle(max(0.0, deadline - time.monotonic()))


#: The longest a process's exit waits for its pending index writes, in s (those of a
#: ``remember`` take well under one; the store's lock is waited for up to
#: :data:`daemon.indexing.STORE_WAIT_S`, 120 s, behind another command).
EXIT_WAIT_S = 180.0
_exit_hooked = False


def _settle_at_exit() -> None:
    """Have this process's exit wait for its pending index writes before the interpreter
    shuts the thread pools down (once per process).

    When the main thread ends, Python first runs the hooks of ``threading._register_atexit``
    (last registered first), then joins the other threads, then runs :mod:`atexit`.
    ``concurrent.futures`` registers one that refuses every later ``submit`` ("cannot
    schedule new futures after interpreter shutdown"), and LanceDB (0.41) hands each write to
    a pool: a writer still at work then lost the write. This hook, registered after that one
    (its module is imported above), runs before it. ``threading._register_atexit`` is
    private, as the one ``concurrent.futures`` uses; where it is missing, :mod:`atexit`
    (too late for LanceDB 0.41, in time for older ones).
    """
    global _exit_hooked
    if _exit_hooked:
        return
    _exit_hooked = True
    register = getattr(threading, "_register_atexit", None)
    try:
        if register is not None:
            register(settle_all, EXIT_WAIT_S)
        else:  # pragma: no cover  (every CPython from 3.9 has it)
            atexit.register(settle_all, EXIT_WAIT_S)
    except RuntimeError:  # (the interpreter is shutting down already: the join waits)
        pass
