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
from datetime import UTC, datetime, timedelta

import structlog

from ccb.frontmatter_edit import set_properties
from ccb.merge import merge_note
from ccb.write_records import HEAL_WINDOW_S, WriteJournal, prune_journal
from ccb.write_transport import sha256_hex, short_hash
from config.errors import DreamdError

__all__ = ["JOURNAL_PER_FILE", "LostUpdates"]

log = structlog.get_logger("dreamd.writer")

#: Most journal entries kept per file (the newest); a memory written more often than this
#: within :data:`HEAL_WINDOW_S` keeps only its latest writes healable.
JOURNAL_PER_FILE = 64


class LostUpdates:
    """The journal of our writes in ``recent`` and the repair that reads it.

    ``key`` maps a vault path to the path its entries are kept under (the file's own path,
    whatever link or spelling named it; raises ``VaultError`` outside the vault), ``clock``
    gives the time of a fresh stamp, ``fork(path, data, current)`` writes ``data`` beside
    ``path`` as a conflict copy."""

    def __init__(
        self, recent: WriteJournal, *, key: Callable[[str], str],
        clock: Callable[[], datetime], fork: Callable[[str, bytes, bytes], object],
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
        back. Call with the writer lock held.

        Newest first: a write whose ``updated:`` stamp ``current`` still has is what the
        file was built on — any later write of ours was saved over. A write whose *base* stamp
        ``current`` has is where an editor's older buffer came from: that write and every
        later one were saved over. The change from what the buffer was (that base, or the
        write it was built on) to our newest write is merged in at once (a clash with what the
        editor saved: our newest write goes to a conflict copy). A stamp that is neither — the
        user or a plugin rewrote ``updated`` — is an edit, never repaired: a line the user
        deleted is not brought back. Entries past :data:`HEAL_WINDOW_S`, and writes that
        created the file (an editor cannot hold a buffer older than the file), are never
        repaired; entries that were merged back or forked are dropped from the journal.
        """
        if current is None:
            return None  # deleted on purpose: nothing to repair
        journal = self.recent.load()
        now = time.time()
        key = self.key(rel_path)
        entries = [e for e in journal.get(key, [])
                   if now - float(str(e.get("at", 0))) <= HEAL_WINDOW_S]
        if not entries or sha256_hex(current) == entries[-1]["ours"]:
            return current
        stamp_now = _stamp_line(current)
        missing: list[tuple[int, bytes, bytes]] = []
        lost_from: int | None = None
        since = b""  # what the editor's buffer was
        for index in range(len(entries) - 1, -1, -1):
            entry = entries[index]
            ours = self.recent.blob(str(entry["ours"]))
            base = self.recent.blob(str(entry["base"])) if entry.get("base") else None
            if ours is None or base is None:
                break  # created the file, or the journal lost its blobs: stop here
            if _built_on(base, ours, current):
                if missing:  # built on this write; the later ones were saved over
                    lost_from, since = missing[-1][0], ours
                break
            missing.append((index, base, ours))
            if stamp_now is not None and stamp_now == _stamp_line(base):
                lost_from, since = index, base
                break
        log.debug("write.heal_check", path=rel_path, current=short_hash(current),
                  lost=lost_from is not None, candidates=len(missing))
        if lost_from is None:
            return current  # edited by someone who had our write: not a lost update
        newest = missing[0][2]  # (each write of ours is built on the one before: the lock)
        repaired = merge_note(since, newest, current, now=self.stamp())
        if repaired is None:  # clashes with what the editor saved: kept beside it
            self._fork(rel_path, newest, current)
            repaired = current
        journal[key] = entries[:lost_from]
        if not journal[key]:
            del journal[key]
        self.recent.save(journal)
        if repaired != current:
            log.warning("write.healed", path=rel_path,
                        reason="an editor saved over our write; our edit merged back")
        return repaired


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
