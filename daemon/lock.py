"""One daemon per vault: an OS file lock in the vault's state folder, plus who holds it.

``DaemonLock(state_dir)`` takes ``<state_dir>/daemon.lock`` with ``filelock`` (``flock`` on
Unix), never waiting. The kernel drops the lock when the holder dies, even by ``SIGKILL``, so a
crash never leaves a stale lock behind. Right after acquiring, the holder writes
``<state_dir>/daemon.pid.json`` atomically (pid, hostname, start time, argv) so that a refused
second process, and ``dreamd status``, can name it. A side file left by a killed holder is stale
but harmless: the next holder overwrites it, and :func:`current_holder` trusts it only while the
lock is actually held.

The lock is also the store's one-writer lock (DESIGN.md: two LanceDB writers lose rows): a
one-shot command that writes the store (``dreamd sync``, or ``remember`` indexing its memory
with no daemon running) holds it for that moment, under its ``role`` (``sync``, ``index``).
A process that wants the store for a moment (``wait_s``) waits while such a one-shot holds it,
and never waits for a daemon, which keeps the store for as long as it runs and indexes what
the others write.

The lock file itself is kept on release (``preserve_lock_file=True``): unlinking a lock file
that another process may have just opened lets two processes "hold" two different inodes.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import filelock

from ccb.atomic import write_json_atomic
from config.errors import LockError

__all__ = [
    "DAEMON_ROLE",
    "HOLDER_FILE_NAME",
    "LOCK_FILE_NAME",
    "DaemonLock",
    "LockHolder",
    "current_holder",
    "held",
    "read_holder",
]

#: Name of the OS lock file inside the vault's state folder.
LOCK_FILE_NAME = "daemon.lock"
#: Name of the JSON side file naming the holder, inside the vault's state folder.
HOLDER_FILE_NAME = "daemon.pid.json"
#: The role of a running daemon in the side file (one-shot commands name theirs).
DAEMON_ROLE = "daemon"
#: How often a process waiting for a one-shot holder tries the lock again, in seconds.
_RETRY_S = 0.05


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) a vault's daemon lock, as written in ``daemon.pid.json``.

    ``started_at`` is ISO 8601 UTC with a ``Z`` suffix, to the second
    (``2026-11-30T10:00:00Z``); ``argv`` is the holder's ``sys.argv``; ``role`` is
    :data:`DAEMON_ROLE` for a daemon, else what the one-shot holder does (``sync``, ``index``;
    a side file without one is a daemon's, as before roles were written).
    """

    pid: int
    hostname: str
    started_at: str
    argv: tuple[str, ...]
    role: str = DAEMON_ROLE

    @classmethod
    def of_this_process(cls, now: datetime, role: str = DAEMON_ROLE) -> LockHolder:
        """The record for the calling process, started at ``now`` (an aware datetime)."""
        stamp = now.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
        return cls(os.getpid(), socket.gethostname(), stamp, tuple(sys.argv), role)

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored in the side file."""
        return {"pid": self.pid, "hostname": self.hostname, "started_at": self.started_at,
                "argv": list(self.argv), "role": self.role}

    @property
    def is_daemon(self) -> bool:
        """Is the holder a daemon (it keeps the lock as long as it runs)?"""
        return self.role == DAEMON_ROLE

    def describe(self) -> str:
        """``pid 1234, started 2026-11-30T10:00:00Z`` (plus ``on host X`` when not this host)."""
        text = f"pid {self.pid}, started {self.started_at}"
        if self.hostname != socket.gethostname():
            text += f", on host {self.hostname}"
        return text


def read_holder(state_dir: Path) -> LockHolder | None:
    """Parse ``<state_dir>/daemon.pid.json``; ``None`` when it is missing or unreadable.

    This says who *last* wrote the file, not whether it still runs: see :func:`current_holder`.
    """
    try:
        raw = json.loads((state_dir / HOLDER_FILE_NAME).read_text(encoding="utf-8"))
        return LockHolder(
            pid=int(raw["pid"]),
            hostname=str(raw["hostname"]),
            started_at=str(raw["started_at"]),
            argv=tuple(str(arg) for arg in raw.get("argv", ())),
            role=str(raw.get("role", DAEMON_ROLE)),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def _file_lock(state_dir: Path) -> filelock.BaseFileLock:
    # thread_local=False: the daemon may release from another thread than it acquired on.
    # preserve_lock_file=True: see the module docstring; it also rules out filelock's soft
    # (marker file) fallback, which a SIGKILL would leave stale.
    return filelock.FileLock(
        state_dir / LOCK_FILE_NAME, timeout=0, thread_local=False, preserve_lock_file=True
    )


@contextlib.contextmanager
def held(lock: filelock.BaseFileLock, what: str, timeout_s: float) -> Iterator[None]:
    """Hold ``lock`` (made with ``timeout=timeout_s``, seconds) for the ``with`` body.

    Raises LockError, naming ``what`` (``"history"``, ``"forget"``) and the lock file, when
    another process held it all that time."""
    try:
        with lock:
            yield
    except filelock.Timeout as exc:
        raise LockError(f"{what}: {exc.lock_file} held by another dreamd process for "
                        f"{timeout_s:.0f} s") from exc


def current_holder(state_dir: Path) -> LockHolder | None:
    """The running daemon of this state folder, or ``None`` when none holds the lock.

    Probes the lock without waiting (and releases it at once when free). A held lock whose side
    file is not written yet, or unreadable, yields a holder with pid 0 and empty fields.
    Never creates ``state_dir``.
    """
    if not (state_dir / LOCK_FILE_NAME).exists():
        return None
    probe = _file_lock(state_dir)
    try:
        probe.acquire(blocking=False)
    except filelock.Timeout:
        return read_holder(state_dir) or LockHolder(0, "", "", ())
    probe.release()
    return None


class DaemonLock:
    """Context manager holding ``<state_dir>/daemon.lock`` for the life of one daemon.

    ``state_dir`` is created if needed. ``role``: :data:`DAEMON_ROLE`, or what a one-shot
    holder does (``sync``, ``index``). Entering raises :class:`~config.errors.LockError`
    naming the holder when another process (or another ``DaemonLock`` in this process) holds
    it — at once, or, with ``wait_s`` (seconds), after waiting that long for a one-shot
    holder to finish (a daemon holder is never waited for). Leaving removes
    ``daemon.pid.json`` and releases the lock.
    """

    def __init__(self, state_dir: Path, *, role: str = DAEMON_ROLE, wait_s: float = 0.0) -> None:
        self.state_dir = state_dir
        self._lock = _file_lock(state_dir)
        self._role = role
        self._wait_s = wait_s
        self.holder: LockHolder | None = None

    @property
    def lock_path(self) -> Path:
        """``<state_dir>/daemon.lock``."""
        return self.state_dir / LOCK_FILE_NAME

    @property
    def holder_path(self) -> Path:
        """``<state_dir>/daemon.pid.json``."""
        return self.state_dir / HOLDER_FILE_NAME

    def acquire(self) -> LockHolder:
        """Take the lock and write the side file; returns this process's record.

        Raises LockError (another holder; the message names its pid and start time).
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self._wait_s
        while True:
            try:
                self._lock.acquire(blocking=False)
                break
            except filelock.Timeout:
                other = read_holder(self.state_dir)
                # (no side file yet: a holder that has just taken the lock; look again)
                if time.monotonic() < deadline and (other is None or not other.is_daemon):
                    time.sleep(_RETRY_S)
                    continue
                who = other.describe() if other else "pid unknown"
                if other is not None and not other.is_daemon:
                    raise LockError(
                        f"another dreamd command ({who}, {other.role}) is writing this "
                        f"vault's index (lock: {self.lock_path})") from None
                raise LockError(
                    f"another dreamd ({who}) is already running for this vault; "
                    f"stop it or use dreamd status (lock: {self.lock_path})"
                ) from None
        try:
            holder = LockHolder.of_this_process(datetime.now(UTC), self._role)
            # (not fsynced: the side file only names the holder; a power cut ends every
            # holder, and a stale side file is what a kill -9 leaves too)
            write_json_atomic(self.holder_path, holder.to_json(), durable=False)
        except BaseException:
            self._lock.release()
            raise
        self.holder = holder
        return holder

    def release(self) -> None:
        """Remove the side file and release the lock; a no-op when not held."""
        if not self._lock.is_locked:
            return
        try:
            self.holder_path.unlink(missing_ok=True)
        finally:
            self.holder = None
            self._lock.release(force=True)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
