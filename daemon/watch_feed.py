"""The vault's watcher on a thread of its own: ``dreamd run`` watches from its start.

watchfiles' Rust core waits for file events with the GIL released (no Python polls), and
each batch it hands over waits here until the daemon takes it (:meth:`WatchFeed.take`):
in the watch loop, or between two commits of a reconcile that holds the engines' lock for
minutes (a first index, the periodic rescan, a client's ``dreamd sync``; see
:mod:`daemon.interleave`). A save made while a large vault is still being indexed is then
searchable within seconds, and no event is lost while the loop is busy: they gather here.

The thread wakes the loop (``wake``) when changes arrive or the watcher fails; an error
(the inotify watch limit, a file name watchfiles cannot decode) ends the thread and is kept
in :attr:`WatchFeed.failure` for the loop to handle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import structlog
import watchfiles
from watchfiles import Change

__all__ = ["Changes", "WatchFeed"]

log = structlog.get_logger("dreamd.watch")

Changes = set[tuple[Change, str]]

#: How long the Rust core waits for events before it hands the thread an empty batch, in ms:
#: the first such hand-over says the watches are set up (:attr:`WatchFeed.ready`).
READY_TICK_MS = 1000


class WatchFeed:
    """Watches ``paths`` (watchfiles, ``watch_filter``, ``debounce_ms``, ``step_ms``;
    ``polling``: poll instead of inotify) on a thread, gathering the changes for
    :meth:`take` and setting ``wake`` when some arrive."""

    def __init__(self, paths: Sequence[Path], *, watch_filter: Callable[[Change, str], bool],
                 debounce_ms: int, step_ms: int, polling: bool,
                 wake: threading.Event) -> None:
        self._paths = list(paths)
        self._filter = watch_filter
        self._debounce_ms, self._step_ms, self._polling = debounce_ms, step_ms, polling
        self._wake = wake
        self._mutex = threading.Lock()
        self._changes: Changes = set()
        self._stop = threading.Event()
        #: Set once the watches are in place (the first hand-over), or the watcher failed.
        self.ready = threading.Event()
        #: The error the watcher stopped with (``None`` while it runs, or after a stop).
        self.failure: OSError | RuntimeError | None = None
        self._thread = threading.Thread(target=self._run, name="dreamd-watch", daemon=True)

    def start(self) -> WatchFeed:
        self._thread.start()
        return self

    @property
    def alive(self) -> bool:
        """Whether the watcher still runs (not stopped, not failed)."""
        return self._thread.is_alive()

    def take(self) -> Changes:
        """The changes gathered since the last call (an empty set: none)."""
        with self._mutex:
            changes, self._changes = self._changes, set()
        return changes

    def stop(self, *, wait_s: float = 5.0) -> None:
        """Stop watching (the Rust core looks at the stop flag every ``step_ms``); changes
        not taken yet are dropped."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=wait_s)

    def _run(self) -> None:
        try:
            for changes in watchfiles.watch(
                *self._paths, watch_filter=self._filter, debounce=self._debounce_ms,
                step=self._step_ms, stop_event=self._stop, rust_timeout=READY_TICK_MS,
                yield_on_timeout=True, raise_interrupt=False,
                force_polling=self._polling or None, ignore_permission_denied=True,
            ):
                self.ready.set()
                if changes:
                    with self._mutex:
                        self._changes |= changes
                    self._wake.set()
        except (OSError, RuntimeError) as error:
            # the watch limit (OSError), or an event watchfiles cannot hand over ("Unable
            # to decode path": a file name that is not UTF-8, RuntimeError)
            self.failure = error
            self._wake.set()
        finally:
            self.ready.set()
