"""The lost-update repair of :class:`ccb.writer.NoteWriter`: which write of ours an editor's
save was built on, and our edits it saved over merged back.

:class:`LostUpdates` journals every write of a memory file (the bytes it was based on and the
bytes it wrote, in :class:`ccb.write_records.WriteJournal`) and, given what is on disk now,
finds the writes of ours an editor saved over and merges them back (:meth:`LostUpdates.repaired`).
A write of ours is told apart by its ``updated:`` stamp, set to the microsecond and never twice
the same in one process (:meth:`LostUpdates.stamp`). Not thread-safe: the writer calls it under
its lock.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import structlog

from ccb.frontmatter_edit import set_properties
from ccb.merge import merge_note
from ccb.write_records import HEAL_WINDOW_S, WriteJournal, prune_journal
from ccb.write_transport import sha256_hex, short_hash
from config.errors import DreamdError

__all__ = ["JOURNAL_PER_FILE", "LostUpdates", "Repair"]

log = structlog.get_logger("dreamd.writer")

#: Most journal entries kept per file (the newest); a memory written more often than this
#: within :data:`HEAL_WINDOW_S` keeps only its latest writes healable.
JOURNAL_PER_FILE = 64


@dataclass(frozen=True, slots=True)
class Repair:
    """What :meth:`LostUpdates.repair` found. ``data``: the file's bytes with our lost edits
    merged back (the bytes given when nothing was lost, or on a clash); ``since``: the
    journaled version they were built on (``None``: none has their stamp — an edit, or no
    journal); ``conflict_path``: the conflict copy our newest write went to, if it did;
    ``clash``: the merge clashed (``data`` is then the bytes given, kept as they are)."""

    data: bytes
    since: bytes | None = None
    conflict_path: str | None = None
    clash: bool = False


class LostUpdates:
    """The journal of our writes in ``recent`` and the repair that reads it.

    ``key`` maps a vault path to the path its entries are kept under (the file's own path,
    whatever link or spelling named it; raises ``VaultError`` outside the vault), ``clock``
    gives the time of a fresh stamp, ``fork(path, data, current)`` writes ``data`` beside
    ``path`` as a conflict copy and returns the copy's vault path."""

    def __init__(
        self, recent: WriteJournal, *, key: Callable[[str], str],
        clock: Callable[[], datetime], fork: Callable[[str, bytes, bytes], str | None],
    ) -> None:
        self.recent = recent
        self.key = key
        self._clock = clock
        self._fork = fork
        self._last_stamp: datetime | None = None

    def stamp(self) -> datetime:
        """A fresh ``updated`` stamp for a merge (to the microsecond, never twice the same
        in one process)."""
        now = self._clock().astimezone(UTC)
        if self._last_stamp is not None and now <= self._last_stamp:
            now = self._last_stamp + timedelta(microseconds=1)
        self._last_stamp = now
        return now

    def restamp(self, data: bytes, rel_path: str) -> bytes:
        """``data`` with a fresh ``updated`` stamp when it has one: content that replaces what
        was briefly on disk must be told apart from it (:func:`_built_on`)."""
        if not any(line.startswith("updated:") for line in _lines(data)):
            return data
        try:
            return set_properties(data, {"updated": self.stamp()}, path=rel_path)
        except DreamdError:
            return data

    def distinct(self, data: bytes, rel_path: str, based_on: bytes | None) -> bytes:
        """``data``, which we are about to write (an editor's save our write displaced,
        going back in place) and journal against ``based_on``, with a fresh stamp when its
        stamp is another journaled version's: a write of ours that sets a stamp must be the
        only version with it (:meth:`repair` finds what a buffer was built on by its stamp).
        Kept as it is when it has the stamp of ``based_on`` (journaled as a write that set no
        stamp, told apart by its lines) or a stamp no version has (the user set it)."""
        stamp = _stamp_line(data)
        if stamp is None or (based_on is not None and stamp == _stamp_line(based_on)):
            return data
        for entry in self.recent.load().get(self.key(rel_path), []):
            for side in ("base", "ours"):
                version = self.recent.blob(str(entry[side])) if entry.get(side) else None
                if version is not None and _stamp_line(version) == stamp:
                    return self.restamp(data, rel_path)
        return data

    def drop(self, rel_path: str) -> int:
        """Forget every entry of ``rel_path`` (under its key and as spelled); how many went."""
        key = self.key(rel_path)
        return self.recent.drop(key) + (self.recent.drop(rel_path) if key != rel_path else 0)

    def remember(self, rel_path: str, based_on: bytes | None, data: bytes) -> None:
        """Journal a write of a file with an ``updated:`` stamp (memory files), dropping
        entries older than :data:`HEAL_WINDOW_S`. Files without a stamp (``MEMORY.md``) are
        rebuilt from the memories on every change: never healed. Every write in the window
        is kept (at most :data:`JOURNAL_PER_FILE` per file): an editor's buffer may predate
        several of them, and each must come back."""
        journal = self.recent.load()
        now = time.time()
        if not self.recent.held:  # a batch prunes once, when it saves
            prune_journal(journal, now)
        if any(line.startswith("updated:") for line in _lines(data)):
            for blob in (based_on, data):
                if blob is not None:
                    self.recent.keep_blob(blob)
            entries = journal.setdefault(self.key(rel_path), [])
            entries.append({"base": sha256_hex(based_on) if based_on is not None else None,
                            "ours": sha256_hex(data), "at": now})
            del entries[:-JOURNAL_PER_FILE]
        self.recent.save(journal)

    def repaired(self, rel_path: str, current: bytes | None) -> bytes | None:
        """``current`` with every journaled edit of ours that an editor saved over merged
        back (:meth:`repair`); ``None`` when there is no file."""
        return None if current is None else self.repair(rel_path, current).data

    def repair(self, rel_path: str, current: bytes) -> Repair:
        """``current`` (a file's bytes) with every journaled edit of ours that an editor
        saved over merged back. Call with the writer lock held.

        What an editor saves keeps the ``updated:`` stamp of what it loaded; every write of
        ours, merge and repair has a stamp of its own (:meth:`stamp`). So the version the
        editor's buffer was built on is the newest journaled one — a write of ours or a
        version we found on disk and wrote over — with the stamp ``current`` has. The change
        from that version to our newest write is merged in at once; every entry stays in the
        journal (another editor may hold a buffer built on any version that was on disk).
        Several versions may share a stamp (two editors' saves of one load): when the buffer
        was built on an older one than the one taken, the merge would drop lines our newest
        write has and ``current`` lacks; then our newest write also goes whole to a conflict
        copy, so nothing is lost and nothing the user deleted comes back into the memory. A
        clash with what the editor saved: our newest write goes to a conflict copy and
        ``current`` is journaled as settled. A stamp that matches nothing — the user or a
        plugin rewrote ``updated`` — is an edit, never repaired. Entries past
        :data:`HEAL_WINDOW_S` are not read; a write that created the file ends the search
        (an editor cannot hold a buffer older than the file). The result, when it differs
        from ``current``, has a fresh stamp.
        """
        now = time.time()
        entries = [e for e in self.recent.load().get(self.key(rel_path), [])
                   if now - float(str(e.get("at", 0))) <= HEAL_WINDOW_S]
        if not entries or sha256_hex(current) == entries[-1]["ours"]:
            return Repair(current, current if entries else None)
        newest = self.recent.blob(str(entries[-1]["ours"]))
        since = self._built_from(entries, current)
        log.debug("write.heal_check", path=rel_path, current=short_hash(current),
                  since=short_hash(since))
        if newest is None or since is None or since == newest:
            return Repair(current, since)  # built on our newest write, or an edit: not lost
        repaired = merge_note(since, newest, current, now=self.stamp())
        if repaired is None:  # clashes with what the editor saved: kept beside it
            copy = self._fork(rel_path, newest, current)
            self.remember(rel_path, current, current)  # settled: not forked again
            return Repair(current, since, copy, clash=True)
        repaired = self.restamp(repaired, rel_path)
        copy = None
        if self._may_predate(entries, since, _dropped(newest, repaired)):
            copy = self._fork(rel_path, newest, current)  # (what it dropped, kept whole)
        log.warning("write.healed", path=rel_path,
                    reason="an editor saved over our write; our edit merged back")
        return Repair(repaired, since, copy)

    def _built_from(self, entries: list[dict[str, object]], current: bytes) -> bytes | None:
        """The newest journaled version ``current`` was built on (:meth:`repaired`), or
        ``None`` when none has its stamp."""
        stamp_now = _stamp_line(current)
        if stamp_now is None:
            return None
        for entry in reversed(entries):
            ours = self.recent.blob(str(entry["ours"]))
            base = self.recent.blob(str(entry["base"])) if entry.get("base") else None
            if ours is None:
                return None  # the journal lost its blobs: stop here
            if _stamp_line(ours) == stamp_now:
                if base is None or _stamp_line(base) != stamp_now \
                        or _built_on(base, ours, current):
                    return ours
                return base  # a write that set no stamp, its added lines gone
            if base is None:
                return None  # created the file: no buffer is older
            if _stamp_line(base) == stamp_now:
                return base
        return None

    def _may_predate(self, entries: list[dict[str, object]], since: bytes,
                     dropped: list[str]) -> bool:
        """Could the buffer a repair merged into have been built on an older version than
        ``since``, one that lacked some of the ``dropped`` lines (missing from the buffer
        because it predates them, not because the user deleted them)? Two editors' saves of
        one load share its stamp, and the journal knows only the ones we wrote over. Every
        version with that stamp grew from the write of ours that set it; an editor that only
        adds lines keeps each line of that write. So: unless that write is journaled and has
        every dropped line."""
        if not dropped:
            return False
        stamp = _stamp_line(since)
        for entry in entries:
            ours = self.recent.blob(str(entry["ours"]))
            base = self.recent.blob(str(entry["base"])) if entry.get("base") else None
            if ours is not None and _stamp_line(ours) == stamp \
                    and (base is None or _stamp_line(base) != stamp):
                return not set(dropped) <= set(_lines(ours))
        return True  # a stamp older than the journal: the buffer may predate any line


def _dropped(ours: bytes, merged: bytes) -> list[str]:
    """The lines ``ours`` has and ``merged`` lacks (but for its stamp and version)."""
    kept = set(_lines(merged))
    return [line for line in _lines(ours)
            if line.strip() and not line.startswith(_BUMPED) and line not in kept]


def _built_on(base: bytes, ours: bytes, current: bytes) -> bool:
    """True when ``current`` was built on our write of ``ours`` (over ``base``): it still has
    the ``updated:`` stamp that write set — dreamd stamps every memory write to the
    microsecond, an editor that saved an older buffer has an older stamp, and a user who
    edits or deletes our new line in Obsidian keeps our stamp, so their edit is never
    "healed" away. For a write that set no stamp: every line it added is still there."""
    current_l = _lines(current)
    stamps = _stamps(base, ours)
    if stamps:
        return any(stamp in current_l for stamp in stamps)
    base_l, ours_l = _lines(base), _lines(ours)
    added: list[str] = []
    for op, _i1, _i2, j1, j2 in difflib.SequenceMatcher(
            a=base_l, b=ours_l, autojunk=False).get_opcodes():
        if op in {"insert", "replace"}:
            added.extend(line for line in ours_l[j1:j2]
                         if line.strip() and not line.startswith(_BUMPED))
    remaining = list(current_l)
    for line in added:
        if line not in remaining:
            return False
        remaining.remove(line)
    return True


_BUMPED = ("updated:", "version:")


def _lines(data: bytes) -> list[str]:
    return [line.rstrip() for line in data.decode("utf-8", errors="replace").splitlines()]


def _stamp_line(data: bytes) -> str | None:
    """The first ``updated:`` line of ``data`` (its frontmatter stamp), if any."""
    return next((line for line in _lines(data) if line.startswith("updated:")), None)


def _stamps(base: bytes, ours: bytes) -> list[str]:
    """The ``updated:`` lines ``ours`` has and ``base`` has not."""
    base_l = set(_lines(base))
    return [line for line in _lines(ours) if line.startswith("updated:") and line not in base_l]
