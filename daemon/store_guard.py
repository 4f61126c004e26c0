"""A running daemon notices when its store is changed under it by another process.

A newer dreamd that opens the store (its MCP server, a hook run in-process, a ``dreamd sync``
after the daemon stopped answering) upgrades the index: it drops the index tables and makes
them anew in its own layout (:mod:`magma.store_tables`). The daemon's handles then point at
tables that are gone, and each search or save failed with LanceDB's "Not found" on a data
file, again every second, for as long as it ran; it also held the vault's lock, so the newer
``dreamd run`` could not start.

The daemon stops instead, with one log line that says why (``daemon.store_changed``) and the
exit code of a store that is not this dreamd's (5, :data:`config.errors.EXIT_CODES`). It does
not open the store again: a store a newer dreamd upgraded is refused by this one
(:class:`config.errors.StoreMismatchError`), and writing in the old layout would spoil what
the newer one built. Under the service (``Restart=on-failure``) the exit brings the daemon
back with the dreamd installed now, which reads the new layout; at a terminal the user reads
why and starts it again. A store whose tables were removed is rebuilt by that start too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection

import structlog

from config.errors import StoreMismatchError, exit_code_for
from magma.store import MagmaStore, store_changed_under

__all__ = ["STORE_CHECK_S", "StoreGuard"]

log = structlog.get_logger("dreamd.daemon")

#: How often an idle daemon looks at its store's meta table, in s (our choice: a listing of
#: the tables and a read of one row, about a millisecond; a client asking within these
#: seconds gets its answer in-process, :mod:`daemon.client_desk`). After a failure it looks at
#: once.
STORE_CHECK_S = 10.0


class StoreGuard:
    """Looks whether ``store()`` changed under the daemon (:func:`store_changed_under`): at
    most every :data:`STORE_CHECK_S`, and at once after a new failure. The first time it
    has, logs why, says it to the person at the terminal (``say``) and sets each of the
    ``stop`` events; :attr:`exit_code` is then the daemon's exit code."""

    def __init__(self, store: Callable[[], MagmaStore], *, stop: Collection[threading.Event],
                 say: Callable[[str], None] | None = None) -> None:
        self._store = store
        self._stop = stop
        self._say = say
        self._next_s = 0.0
        self._failure: str | None = None  # the last failure looked after
        #: Why the store changed under the daemon (``None``: it has not).
        self.reason: str | None = None

    @property
    def exit_code(self) -> int:
        """0, or the exit code of a store that is not this dreamd's once it changed."""
        return 0 if self.reason is None else exit_code_for(StoreMismatchError(""))

    def changed(self, now_s: float, *, failed: str | None = None) -> str | None:
        """Why the store changed under the daemon, or ``None``; looks again when
        :data:`STORE_CHECK_S` passed since the last look on the monotonic clock ``now_s``, or
        when the daemon's last failure (``failed``, its message) is a new one."""
        new_failure = failed is not None and failed != self._failure
        self._failure = failed
        if self.reason is not None or not (new_failure or now_s >= self._next_s):
            return self.reason
        self._next_s = now_s + STORE_CHECK_S
        reason = store_changed_under(self._store())
        if reason is None:
            return None
        self.reason = reason
        log.error("daemon.store_changed", reason=reason,
                  stopping="this daemon cannot search or index that store",
                  hint="start dreamd run again (a service restarts by itself): the dreamd "
                  "installed now opens the index and brings it up to date")
        if self._say is not None:
            self._say(f"dreamd: stopping: {reason} while this daemon ran; start dreamd run "
                      "again to use it")
        for event in self._stop:
            event.set()
        return reason
