"""Conflicts between a memory's file and its history, and the edits that settle them.

:class:`ConflictDesk` is the arbiter's hands (``dreamd check --fix``, ``dreamd conflicts``):
it records the file's content as the current version, merges two edits that touched different
lines on their common base, writes a version back to the file, or opens a conflict — MAGMA's
version in a conflict copy beside the file, listed in the state folder's ``conflicts.json``
until :meth:`ConflictDesk.resolve` settles it. Every side's bytes go to the history before
anything is written over them: nothing the user wrote is lost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from ccb.merge import merge_note
from ccb.parse import detect_conflict_copy, parse_note
from ccb.writer import NoteWriter
from config.errors import ConflictNotFoundError, DreamdError, MemoryNotFoundError
from daemon.history import VersionRecorder
from daemon.memories import MemoryService
from magma.versions import NewVersion, current

__all__ = ["CONFLICTS_FILE", "ConflictDesk", "ConflictRecord", "Keep"]

log = structlog.get_logger("dreamd.check")

#: State-dir file of conflicts waiting for the user, ``{memory key: ConflictRecord}``.
CONFLICTS_FILE = "conflicts.json"

Keep = Literal["file", "magma", "both"]


@dataclass(frozen=True, slots=True)
class ConflictRecord:
    """A conflict waiting for the user: ``path`` kept the file's version, ``copy`` holds
    MAGMA's version ``head_n``; ``opened`` is ISO UTC."""

    memory_key: str
    path: str
    copy: str
    head_n: int
    opened: str


class ConflictDesk:
    """Settles memories whose file and history disagree, through the one writer, and keeps
    the open conflicts.

    ``index(paths) -> bool`` re-indexes vault paths after a resolve; ``memories()`` gives the
    memory service (its ``MEMORY.md`` is rebuilt after one); ``state_dir`` holds
    :data:`CONFLICTS_FILE`.
    """

    def __init__(self, *, writer: NoteWriter, recorder: VersionRecorder, state_dir: Path,
                 index: Callable[[Collection[str]], bool],
                 memories: Callable[[], MemoryService], clock: Callable[[], datetime]) -> None:
        self.writer = writer
        self.recorder = recorder
        self.archive = recorder.archive
        self.state_dir = state_dir
        self._index = index
        self._memories = memories
        self._clock = clock

    def read(self, path: str) -> bytes:
        data = self.writer.read(path)
        if data is None:
            raise MemoryNotFoundError(f"check: {path}: the file is gone")
        return data

    def record_head(self, key: str, path: str, data: bytes, change: str) -> int:
        """Record ``data`` as ``key``'s current version (origin ``arbiter``)."""
        memory = parse_note(path, data).memory
        recorded = self.archive.record([NewVersion(
            memory_id=key, path=path, content=data, origin="arbiter", change_log=change,
            memory_type=memory.type if memory else None,
            name=memory.name if memory else None)], now=self._clock())
        self.recorder.set_bases({key: hashlib.sha256(data).hexdigest()})
        head = current(self.archive.history(key))
        return recorded[0].n if recorded else (head.n if head else 0)

    def _keep_side(self, key: str, path: str, data: bytes, change: str) -> None:
        """Keep ``data`` in ``key``'s history as a side version — its raw bytes, whether or
        not they still parse as a memory (nothing the user wrote may be lost)."""
        note = parse_note(path, data)
        memory = note.memory
        self.archive.record([NewVersion(
            memory_id=key, path=path, content=data, origin="arbiter", change_log=change,
            kind="kept", memory_type=memory.type if memory else None,
            name=memory.name if memory else None)], now=self._clock())

    def merge_with(
        self, path: str, key: str, n: int, data: bytes, reindex: set[str]
    ) -> str | None:
        """When the file and version ``n`` changed different lines since the base this
        device last agreed with, write the merge (both edits survive; it becomes the current
        version). ``None`` when there is no base or the two edits touch the same lines."""
        base_hash = self.recorder.bases().get(key)
        base = next((self.archive.content(key, v.n) for v in self.archive.history(key)
                     if v.content_hash == base_hash and v.kind != "tombstone"), None)
        if base is None:
            return None
        merged = merge_note(base, data, self.archive.content(key, n))
        if merged is None or merged == data:
            return None
        self._keep_side(key, path, data, f"this device's version, merged with {n}")
        outcome = self.writer.write(path, merged, base=data, origin="arbiter",
                                    change=f"merged with version {n}")
        final = self.writer.read(path) or merged
        number = self.record_head(key, path, final, f"this device's edit merged with {n}")
        self.close(key)
        reindex.add(path)
        return f"{path}: both edits merged as version {number} ({outcome.status})"

    def take_magma(
        self, path: str, key: str, n: int, keep: bool, reason: str, reindex: set[str]
    ) -> str:
        data = self.read(path)
        if keep:  # a divergence: when the two edits touched different lines, keep both
            merged = self.merge_with(path, key, n, data, reindex)
            if merged is not None:
                return merged
        # even when the file's content "was recorded": nothing is lost by keeping it again
        self._keep_side(key, path, data, f"this device's version, replaced: {reason}")
        head = self.archive.get(key, n)
        content = self.archive.content(key, n)
        self.recorder.set_bases({key: head.content_hash})
        outcome = self.writer.write(path, content, base=data, origin="arbiter",
                                    change=f"took version {n}: {reason}", restores=True)
        reindex.add(path)
        return f"version {n} written to the file ({outcome.status})" + (
            "; the file's own version kept in the history" if keep else "")

    def manual_review(
        self, path: str, key: str, n: int, reason: str, reindex: set[str]
    ) -> str:
        data = self.read(path)
        self._keep_side(key, path, data, f"this device's version, in conflict with {n}: {reason}")
        copy = self.writer.write_conflict_copy(path, self.archive.content(key, n))
        conflicts = self.load()
        conflicts[key] = ConflictRecord(key, path, copy, n, self._clock().isoformat())
        self._save(conflicts)
        reindex.add(path)
        return f"conflict: version {n} written to {copy} for review"

    def close(self, key: str) -> None:
        conflicts = self.load()
        if conflicts.pop(key, None) is not None:
            self._save(conflicts)

    def conflicts(self) -> list[ConflictRecord]:
        """Open conflicts, oldest first. A conflict whose copy the user deleted is settled
        as "keep the file" by the next ``check --fix``."""
        return sorted(self._open().values(), key=lambda c: c.opened)

    def resolve(self, key: str, keep: Keep) -> str:
        """Settle the open conflict of ``key``: keep the ``file``, MAGMA's version (the
        conflict copy, as the user may have edited it), or ``both`` (merged, or the copy's
        body appended). Both sides' bytes go to the history first, parsed or not; the copy is
        removed only if it still holds what was kept. When the memory changed again elsewhere
        since the conflict was opened, the copy is refreshed with that version and nothing
        else is done: the user looks again. Raises ``ConflictNotFoundError``,
        ``StaleWriteError`` (the conflict copy changed during the resolve; it is left)."""
        conflicts = self.load()
        record = conflicts.get(key) or next(
            (c for c in conflicts.values() if key in {c.path, Path(c.path).stem}), None)
        if record is None:
            raise ConflictNotFoundError(
                f"conflicts resolve {key}: no open conflict for it (see dreamd conflicts)")
        key = record.memory_key
        base_hash = self.recorder.bases().get(key)  # before this resolve moves it
        data = self.read(record.path)
        copy_bytes = self.writer.read(record.copy)
        if copy_bytes is None:
            copy_bytes = self.archive.content(key, record.head_n)
        head = current(self.archive.history(key))
        self._keep_side(key, record.copy, copy_bytes, "the conflict copy, as resolved")
        self._keep_side(key, record.path, data, "the file, as resolved")
        if head is not None and head.kind == "edit" and head.n > record.head_n \
                and head.content_hash != hashlib.sha256(copy_bytes).hexdigest():
            newer = self.archive.content(key, head.n)
            self.writer.write(record.copy, newer, base=self.writer.read(record.copy),
                              origin="arbiter", change=f"version {head.n} for review")
            conflicts[key] = ConflictRecord(key, record.path, record.copy, head.n,
                                            record.opened)
            self._save(conflicts)
            raise ConflictNotFoundError(
                f"conflicts resolve {key}: the memory changed again elsewhere (version "
                f"{head.n}) since this conflict was opened; {record.copy} now holds that "
                "version (what it held is in the history): compare again, then resolve")
        if head is not None:
            self.recorder.set_bases({key: head.content_hash})
        if keep == "file":
            result = data
        elif keep == "magma":
            result = copy_bytes
        else:
            result = self._both(key, base_hash, data, copy_bytes, record.path)
        outcome = self.writer.write(record.path, result, base=data, origin="arbiter",
                                    change=f"conflict resolved: kept {keep}",
                                    restores=keep != "both")
        final = self.writer.read(record.path) or result
        self.record_head(key, record.path, final, f"conflict resolved: kept {keep}")
        if self.writer.read(record.copy) is not None:
            self.writer.delete(record.copy, expect=copy_bytes)  # only what was kept
        self.close(key)
        self._index([record.path, record.copy])
        self._memories().rebuild_index()
        log.info("conflict.resolved", memory_key=key, keep=keep, status=outcome.status)
        return f"{record.path}: kept {keep}; {record.copy} removed (both versions in history)"

    def _both(
        self, key: str, base_hash: str | None, ours: bytes, theirs: bytes, path: str
    ) -> bytes:
        """Both sides in one file: merged on their common base when they touched different
        sections (or both only added lines), else the copy's body appended to the file, in
        the file's own encoding and line endings."""
        base = None
        for version in self.archive.history(key):
            if version.content_hash == base_hash and version.kind != "tombstone":
                base = self.archive.content(key, version.n)
        merged = merge_note(base, ours, theirs) if base is not None else None
        if merged is not None:
            return merged
        note = parse_note(path, ours)
        body = parse_note(path, theirs).body.strip("\n")
        codec = {"utf-8": "utf-8", "utf-16-le": "utf-16-le", "utf-16-be": "utf-16-be"}[
            note.encoding]
        bom = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[
            note.encoding]
        raw = ours[len(bom):] if ours.startswith(bom) else ours
        text = raw.decode(codec, errors="surrogateescape").rstrip("\r\n")
        eol = note.line_ending
        text += eol + eol + body.replace("\n", eol) + eol
        encoded = text.encode(codec, errors="surrogateescape")
        return (bom if ours.startswith(bom) else b"") + encoded

    def _open(self) -> dict[str, ConflictRecord]:
        return {k: c for k, c in self.load().items()
                if self.writer.read(c.copy) is not None}

    def load(self) -> dict[str, ConflictRecord]:
        data = read_json_object(self.state_dir / CONFLICTS_FILE)
        found = {}
        for key, value in data.items():
            try:
                record = ConflictRecord(**value)
                if not all(isinstance(getattr(record, f), str)
                           for f in ("memory_key", "path", "copy", "opened")) \
                        or not isinstance(record.head_n, int) or isinstance(record.head_n, bool):
                    raise TypeError("wrong field types")
                if record.memory_key != key or detect_conflict_copy(record.copy) != record.path:
                    # a resolve deletes the copy: it must be a conflict copy of that very file
                    raise TypeError("the copy is not a conflict copy of the memory's file")
                self.writer.read(record.path)  # VaultError: a path that leaves the vault
                self.writer.read(record.copy)
            except (TypeError, DreamdError, OSError) as error:
                log.warning("conflicts.entry_ignored", key=str(key), reason=str(error),
                            file=str(self.state_dir / CONFLICTS_FILE))
                continue
            found[key] = record
        return found

    def _save(self, conflicts: Mapping[str, ConflictRecord]) -> None:
        write_json_atomic(self.state_dir / CONFLICTS_FILE,
                          {k: _record_json(c) for k, c in conflicts.items()})


def _record_json(record: ConflictRecord) -> dict[str, Any]:
    return {"memory_key": record.memory_key, "path": record.path, "copy": record.copy,
            "head_n": record.head_n, "opened": record.opened}
