"""What the daemon is doing right now, for ``dreamd status``: a :class:`daemon.sync.Progress`
that keeps the status file's ``work`` current while a batch, a reconcile or a client's
``dreamd sync`` runs.

The watch loop applies a batch synchronously, holding the engines' lock, so the status file
written before and after a batch says nothing about the hundreds of notes of a folder just
dropped into the vault; and ``dreamd status`` asked of a daemon busy for more than
:data:`daemon.client.BUSY_WAIT_S` answers in-process from that file. So the file is written
when a phase of :data:`WRITE_FROM_FILES` files or more starts, and once work has run for
:data:`WRITE_EVERY_S` seconds, then at most that often: the single-note batch of an edit
writes nothing more than before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, tzinfo
from types import TracebackType
from typing import Any, Literal, Protocol

from daemon.sync import Progress
from daemon.terminal_text import counted

__all__ = ["WRITE_EVERY_S", "WRITE_FROM_FILES", "WorkProgress", "describe_work", "local_stamp"]

#: How often the status file is rewritten while work advances, in s (each write is a temp
#: file, an fsync and a rename: two a second cost nothing next to embedding a note).
WRITE_EVERY_S = 0.5

#: A phase of this many files or more is written when it starts: at ≈100 chunks embedded a
#: second (DESIGN.md, the multilingual USE on one thread) it takes half a second or more.
WRITE_FROM_FILES = 50

Kind = Literal["batch", "reconcile", "sync"]


class _HasWork(Protocol):
    work: dict[str, Any] | None


class WorkProgress:
    """Progress of one unit of work (``kind``), kept in ``state.work`` as ``{"kind",
    "phase", "done", "total", "files", "started_at"}`` (``files``: the largest phase's
    total so far, the files the work took on; and ``extra``'s items) and written by
    ``write()``; ``also`` is told
    the same (a client's progress bar). Used as a context manager: ``state.work`` is
    ``None`` again on exit, and the caller writes the status once more."""

    def __init__(self, state: _HasWork, write: Callable[[], None], kind: Kind, *,
                 also: Progress | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 extra: Mapping[str, int] | None = None) -> None:
        self._state, self._write, self._kind, self._also = state, write, kind, also
        self._extra = dict(extra or {})
        self._clock = clock
        self._written = clock()  # (work that ends within WRITE_EVERY_S is never written)
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")

    def __enter__(self) -> WorkProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._state.work = None

    def phase(self, name: str, total: int) -> None:
        if self._also is not None:
            self._also.phase(name, total)
        files = max(total, self._state.work["files"] if self._state.work else 0)
        self._state.work = {"kind": self._kind, "phase": name, "done": 0, "total": total,
                            "files": files, "started_at": self._started_at, **self._extra}
        self._flush(force=total >= WRITE_FROM_FILES)

    def advance(self, units: int = 1) -> None:
        if self._also is not None:
            self._also.advance(units)
        if self._state.work is not None:
            self._state.work["done"] += units
            self._flush()

    def _flush(self, *, force: bool = False) -> None:
        now = self._clock()
        if force or now - self._written >= WRITE_EVERY_S:
            self._written = now
            self._write()


_WHAT = {"batch": "indexing a batch of {changed}",
         "reconcile": "reconciling the vault ({files} new or changed)",
         "sync": "running dreamd sync ({files} new or changed)"}
_DONE = {"reading": "read", "embedding": "embedded", "indexing": "indexed"}


def local_stamp(value: object, zone: tzinfo) -> str:
    """An ISO 8601 time from a status file (``2026-12-07T05:06:06+00:00``) as the user reads
    it, in ``zone`` (the user's, ``time.zone``; one without an offset is UTC):
    ``2026-12-07 14:06:06 JST``. A value that is no such time, or one the zone moves off the
    calendar (``0001-01-01T00:00:00+00:00`` in New York, from a damaged file), comes back as
    text. Pure."""
    try:
        at = datetime.fromisoformat(str(value))
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        return f"{at.astimezone(zone):%Y-%m-%d %H:%M:%S %Z}"
    except (ValueError, OverflowError):
        return str(value)


def describe_work(work: dict[str, Any], zone: tzinfo) -> str:
    """The status file's ``work`` as ``dreamd status`` says it: ``indexing a batch of 480
    changed files: 120 of 480 embedded, 360 to go (since 03:01:33 CET)``, the time in
    ``zone`` (the user's, ``time.zone``; a ``started_at`` without an offset is UTC). Pure."""
    files = work.get("files", "?")
    what = _WHAT.get(str(work.get("kind")), "working ({files})").format(
        files=counted(files, "file") if isinstance(files, int) else f"{files} files",
        changed=counted(files, "changed file") if isinstance(files, int)
        else f"{files} changed files")
    done, total, phase = work.get("done"), work.get("total"), str(work.get("phase"))
    line = f"{what}: {done} of {total} {_DONE.get(phase, phase)}"
    if isinstance(done, int) and isinstance(total, int) and total > done:
        line += f", {total - done} to go"
    try:
        started = datetime.fromisoformat(str(work.get("started_at")))
        if started.tzinfo is None:
            started = started.replace(tzinfo=UTC)
        since = started.astimezone(zone)
    except (ValueError, OverflowError):  # not a time, or one the zone moves off the calendar
        return line
    return f"{line} (since {since:%H:%M:%S %Z})"
