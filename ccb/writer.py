"""Compare-before-write for files inside the vault: never last-writer-wins.

Every write names the hash of the bytes it was based on. If the file still has that hash it
is replaced atomically (:mod:`ccb.atomic`). If someone changed it meanwhile — the user in
Obsidian, a sync tool, another dreamd process — the writer re-reads it and merges
(:func:`ccb.merge.merge_note`) when the two edits touched different properties or sections;
otherwise it keeps the file as it is and writes our version beside it as a conflict copy
``<name>.conflict-<YYYYMMDD-HHMMSS>.md`` (syncthing's pattern), which the user settles. Either
way nothing anyone wrote is lost.

One process writes at a time: :class:`NoteWriter` takes a per-vault writer lock
(``writer.lock`` in the state dir) around each compare-and-replace, so dreamd's own
processes (daemon, CLI, MCP server) queue behind each other; editors, which take no lock,
are caught by the compare. ``on_written(path, content_hash)`` lets the daemon's watcher
recognise its own writes (echo suppression by content hash).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import filelock
import structlog

from ccb.atomic import write_bytes_atomic
from ccb.merge import merge_note
from config.errors import StaleWriteError, VaultError

__all__ = ["NoteWriter", "WriteOutcome", "conflict_copy_path", "sha256_hex"]

log = structlog.get_logger("dreamd.writer")

#: How long a write waits for another dreamd process holding the writer lock, in seconds.
WRITER_LOCK_TIMEOUT_S = 30.0

WriteStatus = Literal["created", "written", "merged", "conflict", "unchanged"]


def sha256_hex(data: bytes) -> str:
    """SHA-256 hex digest of ``data`` (the content hash used everywhere in dreamd)."""
    return hashlib.sha256(data).hexdigest()


def conflict_copy_path(rel_path: str, now: datetime) -> str:
    """``Memory/x.md`` → ``Memory/x.conflict-20261130-101500.md`` (UTC stamp)."""
    stem, dot, suffix = rel_path.rpartition(".")
    if not dot or "/" in suffix:
        stem, suffix = rel_path, ""
    stamp = now.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stem}.conflict-{stamp}" + (f".{suffix}" if suffix else "")


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What a write did. ``content_hash`` is the hash of the file at ``path`` afterwards;
    ``conflict_path`` is set when our version went to a conflict copy instead."""

    path: str
    status: WriteStatus
    content_hash: str
    conflict_path: str | None = None


class NoteWriter:
    """The single writer of one vault's files (see module docstring).

    ``root`` is the vault, ``lock_dir`` the state dir (outside the vault) for ``writer.lock``.
    Paths are vault-relative POSIX strings; a path that resolves outside the vault raises
    ``VaultError``.
    """

    def __init__(
        self,
        root: Path,
        lock_dir: Path,
        *,
        on_written: Callable[[str, str], None] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.root = root.resolve()
        lock_dir.mkdir(parents=True, exist_ok=True)
        self._process_lock = filelock.FileLock(lock_dir / "writer.lock",
                                               timeout=WRITER_LOCK_TIMEOUT_S)
        self._thread_lock = threading.Lock()
        self._on_written = on_written
        self._clock = clock

    def _absolute(self, rel_path: str) -> Path:
        target = (self.root / rel_path).resolve()
        if not target.is_relative_to(self.root) or target == self.root:
            raise VaultError(f"ccb: write {rel_path}: path leaves the vault")
        return target

    def read(self, rel_path: str) -> bytes | None:
        """Current bytes of a vault file, or ``None`` when it does not exist."""
        try:
            return self._absolute(rel_path).read_bytes()
        except FileNotFoundError:
            return None

    def write(self, rel_path: str, data: bytes, *, base: bytes | None) -> WriteOutcome:
        """Write ``data`` at ``rel_path``, based on ``base`` (``None``: the file is new).

        Same bytes on disk → ``unchanged``; file still equal to ``base`` (or absent when
        ``base`` is ``None``) → atomic replace; changed meanwhile → merge, else conflict copy.
        Raises ``StaleWriteError`` when a file we based an edit on has been deleted (we do not
        resurrect what the user removed; the caller decides), ``VaultError`` for paths outside
        the vault, ``OSError`` for I/O failures (the file is left as it was).
        """
        target = self._absolute(rel_path)
        with self._thread_lock, self._process_lock:
            current = self.read(rel_path)
            if current == data:
                return WriteOutcome(rel_path, "unchanged", sha256_hex(data))
            if current == base:
                status: WriteStatus = "created" if current is None else "written"
                return self._replace(target, rel_path, data, status)
            if current is None:
                raise StaleWriteError(
                    f"ccb: write {rel_path}: the file was deleted since it was read "
                    f"(expected {sha256_hex(base or b'')[:8]}…, found no file)"
                )
            merged = merge_note(base, data, current) if base is not None else None
            if merged is not None:
                outcome = self._replace(target, rel_path, merged, "merged")
                log.info("write.merged", path=rel_path)
                return outcome
            return self._fork(rel_path, data, current)

    def _replace(
        self, target: Path, rel_path: str, data: bytes, status: WriteStatus
    ) -> WriteOutcome:
        digest = sha256_hex(data)
        if self._on_written is not None:
            self._on_written(rel_path, digest)  # before the event can arrive
        write_bytes_atomic(target, data)
        return WriteOutcome(rel_path, status, digest)

    def _fork(self, rel_path: str, data: bytes, current: bytes) -> WriteOutcome:
        copy = conflict_copy_path(rel_path, self._clock())
        n = 1
        while self.read(copy) is not None:
            n += 1
            copy = conflict_copy_path(rel_path, self._clock()).replace(
                ".conflict-", f".conflict{n}-", 1)
        self._replace(self._absolute(copy), copy, data, "created")
        log.warning("write.conflict", path=rel_path, conflict_copy=copy)
        return WriteOutcome(rel_path, "conflict", sha256_hex(current), conflict_path=copy)
