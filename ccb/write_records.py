"""What the vault's writer remembers beside the vault, in ``recent-writes/`` of the state dir.

The lost-update journal and two small registries of :class:`ccb.writer.NoteWriter`:

- :class:`WriteJournal` (``journal.json`` and one blob per content hash): the bytes each recent
  write was based on and the bytes it wrote, kept :data:`HEAL_WINDOW_S` for
  :meth:`ccb.writer.NoteWriter.heal` (files mode 0600; a forget drops a path's entries and
  the blobs no entry refers to any more).

- :class:`OriginLog` (``origins.json``): who made each recent write, by the hash of the bytes
  written — ``(origin, change)`` such as ``("dream", "merged 2 memories")`` — so the indexer of
  any process names the version it records for those bytes. Kept :data:`ORIGIN_WINDOW_S`.
- :class:`GeneratedFiles` (``generated.json``): the hash of what dreamd last generated at a
  path (``MEMORY.md``), so a hand edit of a generated file is told apart and kept.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import filelock

from ccb.atomic import TEMP_SUFFIX, read_json_object, write_bytes_atomic
from ccb.write_transport import sha256_hex

__all__ = ["BATCH_SAVE_EVERY", "GENERATED_FILE", "HEAL_WINDOW_S", "JOURNAL_FILE",
           "ORIGINS_FILE", "ORIGIN_WAIT_S", "ORIGIN_WINDOW_S", "GeneratedFiles", "OriginLog",
           "WriteJournal", "prune_journal"]

GENERATED_FILE = "generated.json"
ORIGINS_FILE = "origins.json"
JOURNAL_FILE = "journal.json"
#: How long a write is journaled for :meth:`ccb.writer.NoteWriter.heal`, in seconds. An
#: editor that saves a buffer it loaded before our write does so within seconds (Obsidian
#: saves about two seconds after the last keystroke); ten minutes covers a laptop that slept
#: in between.
HEAL_WINDOW_S = 600.0
#: How long the origin of a write is remembered, in seconds: the indexer (the daemon's
#: watcher, or the writing process itself) records the version within moments; a day covers a
#: daemon that was down.
ORIGIN_WINDOW_S = 86_400.0
_ORIGINS_MAX = 16_384
#: Longest wait for another process's batch before bytes of unknown origin are taken for
#: someone else's edit, in seconds (our choice: a remember through the Obsidian CLI takes one
#: to two seconds; a longer batch's writes are then counted as edits, never lost).
ORIGIN_WAIT_S = 5.0
#: While held (a batch of writes), the origins are saved after this many writes (and at the
#: end): another process learns of a batch write's origin at most this many writes late.
BATCH_SAVE_EVERY = 100


class OriginLog:
    """``origins.json`` in ``folder``: ``{content hash: [origin, change, unix time]}`` of the
    last :data:`ORIGIN_WINDOW_S` (at most 16,384, newest kept). Not thread-safe: the writer
    calls it under its lock."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / ORIGINS_FILE
        self._held: dict[str, object] | None = None
        self._writes = 0
        self._wait_until = 0.0
        #: Each entry saved during a hold, as JSON (:meth:`_save`), with the value it encodes.
        self._encoded: dict[str, tuple[object, str]] = {}

    def of(self, content_hash: str) -> tuple[str, str] | None:
        """``(origin, change)`` of a recent write of these bytes, or ``None``."""
        found = self._load().get(content_hash)
        if isinstance(found, list) and len(found) == 3:
            return str(found[0]), str(found[1])
        return None

    def settled(self, content_hash: str, lock: filelock.BaseFileLock, *, own: bool
                ) -> tuple[str, str] | None:
        """:meth:`of`, and for bytes it does not know, :meth:`of` again once ``lock`` (the
        writer lock) is free, waiting at most :data:`ORIGIN_WAIT_S`. Another process's batch
        may put bytes on disk before it saves their origin (the Obsidian CLI writes them as it
        is told; ``remember`` holds its batch until ``MEMORY.md`` is written too). ``own``:
        this process holds a batch (its origins are in memory: no wait). After a wait that
        timed out, unknown bytes are not waited for during the next :data:`ORIGIN_WAIT_S`."""
        found = self.of(content_hash)
        if found is not None or own or time.monotonic() < self._wait_until:
            return found
        try:
            with lock.acquire(timeout=ORIGIN_WAIT_S):
                return self.of(content_hash)
        except filelock.Timeout:
            self._wait_until = time.monotonic() + ORIGIN_WAIT_S
            return None

    def note(self, data: bytes, tag: tuple[str, str]) -> None:
        """Remember that ``data`` was written by ``tag`` (``(origin, change)``), now."""
        origins = self._load()
        origins[sha256_hex(data)] = [tag[0], tag[1], time.time()]
        if self._held is None:
            self._save(origins)

    def hold(self) -> None:
        """Keep the log in memory until :meth:`release` (a batch of writes), saving it every
        :data:`BATCH_SAVE_EVERY` writes counted by :meth:`count_write`."""
        self._held = self._load()
        self._writes = 0

    def count_write(self) -> None:
        """One write of a held batch (nothing when not held)."""
        if self._held is None:
            return
        self._writes += 1
        if self._writes % BATCH_SAVE_EVERY == 0:
            self._save(self._held)

    def release(self) -> None:
        """Save what was held and read the file again from now on."""
        held = self._held
        try:
            if held is not None:
                self._save(held)
        finally:
            self._held, self._encoded = None, {}

    def _load(self) -> dict[str, object]:
        return self._held if self._held is not None else read_json_object(self._path)

    def _save(self, origins: dict[str, object]) -> None:
        now = time.time()
        kept = {k: v for k, v in origins.items() if isinstance(v, list) and len(v) == 3
                and now - float(v[2]) <= ORIGIN_WINDOW_S}
        if len(kept) > _ORIGINS_MAX:
            kept = dict(sorted(kept.items(), key=lambda kv: float(kv[1][2]))[-_ORIGINS_MAX:])
        # on one line: the C encoder (a dream saves thousands of origins every 100 writes)
        text = self._json(kept) + "\n"
        write_bytes_atomic(self._path, text.encode("utf-8"), durable=False)

    def _json(self, origins: Mapping[str, object]) -> str:
        """``json.dumps(origins, ensure_ascii=False)``, the same text. During a hold each
        entry is encoded once and kept while its value is the same object (:meth:`note` puts
        a new list): a batch saves its thousands of origins every :data:`BATCH_SAVE_EVERY`
        writes (a dream over the planted 10,000 memories of ``bench/dream_bench.py``: 33
        saves of up to 3,300): encoded whole at each save, 0.078 s of CPU over 3,300 writes;
        each entry once, 0.024 s (best of 7, ``time.process_time``)."""
        if self._held is None:
            return json.dumps(origins, ensure_ascii=False)
        pieces = []
        for key, value in origins.items():
            kept = self._encoded.get(key)
            if kept is None or kept[0] is not value:
                kept = self._encoded[key] = (value, json.dumps(key, ensure_ascii=False) + ": "
                                             + json.dumps(value, ensure_ascii=False))
            pieces.append(kept[1])
        return "{" + ", ".join(pieces) + "}"


class GeneratedFiles:
    """``generated.json`` in ``folder``: ``{vault path: hash of what dreamd last generated
    there}``."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / GENERATED_FILE

    def hash_of(self, rel_path: str) -> str | None:
        """Hash of what dreamd last generated at ``rel_path``, ``None`` when never here."""
        value = read_json_object(self._path).get(rel_path)
        return value if isinstance(value, str) else None

    def record(self, rel_path: str, content_hash: str) -> None:
        """Remember ``content_hash`` as what dreamd generated at ``rel_path``."""
        known = read_json_object(self._path)
        if known.get(rel_path) != content_hash:
            known[rel_path] = content_hash
            write_bytes_atomic(self._path, (json.dumps(known, indent=1) + "\n").encode(),
                               durable=False)


Journal = dict[str, list[dict[str, object]]]


def prune_journal(journal: Journal, now: float) -> None:
    """Drop journal entries older than :data:`HEAL_WINDOW_S` (in place)."""
    for path in list(journal):
        journal[path] = [e for e in journal[path]
                         if now - float(str(e.get("at", 0))) <= HEAL_WINDOW_S]
        if not journal[path]:
            del journal[path]


class WriteJournal:
    """The lost-update journal in ``folder``: ``journal.json`` holds ``{vault path: [{"base":
    hash | None, "ours": hash, "at": unix time}, …]}`` and each hash's bytes sit beside it in
    a file of that name. Held in memory during a batch of writes (:meth:`hold`,
    :meth:`release`). Not thread-safe: the writer calls it under its lock."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._held: Journal | None = None

    @property
    def held(self) -> bool:
        """Is the journal held in memory (a batch)?"""
        return self._held is not None

    def load(self) -> Journal:
        """The journal now (the held one during a batch)."""
        if self._held is not None:
            return self._held
        data = read_json_object(self._folder / JOURNAL_FILE)
        return {k: v for k, v in data.items() if isinstance(v, list)}

    def save(self, journal: Journal) -> None:
        """Save ``journal`` and delete the blobs none of its entries refers to (held: only
        kept, until :meth:`release`)."""
        if self._held is not None:
            self._held = journal
            return
        text = json.dumps(journal, ensure_ascii=False, indent=1) + "\n"
        write_bytes_atomic(self._folder / JOURNAL_FILE, text.encode("utf-8"), durable=False)
        keep = {str(e.get(k)) for entries in journal.values() for e in entries
                for k in ("base", "ours")}
        for blob in self._folder.iterdir():
            if blob.name not in {JOURNAL_FILE, GENERATED_FILE, ORIGINS_FILE} \
                    and blob.name not in keep \
                    and not blob.name.endswith(TEMP_SUFFIX):
                blob.unlink(missing_ok=True)

    def blob(self, digest: str) -> bytes | None:
        """The journaled bytes of hash ``digest`` (``None``: not kept)."""
        try:
            return (self._folder / digest).read_bytes()
        except OSError:
            return None

    def keep_blob(self, data: bytes) -> None:
        """Keep ``data`` under its hash (mode 0600) unless it is kept already."""
        stored = self._folder / sha256_hex(data)
        if not stored.exists():
            write_bytes_atomic(stored, data, mode=0o600, durable=False)

    def drop(self, rel_path: str) -> int:
        """Forget every entry of ``rel_path`` (and the blobs only they held); how many went."""
        journal = self.load()
        dropped = len(journal.pop(rel_path, []))
        self.save(journal)
        return dropped

    def drop_holding(self, markers: Sequence[bytes]) -> int:
        """Forget every entry whose bytes (before or after the write) contain one of
        ``markers`` (and the blobs only they held); how many went."""
        journal = self.load()
        dropped = 0
        for key in list(journal):
            kept = [e for e in journal[key] if not any(
                marker in (self.blob(str(e.get(side))) or b"")
                for side in ("base", "ours") if e.get(side) for marker in markers)]
            dropped += len(journal[key]) - len(kept)
            if kept:
                journal[key] = kept
            else:
                del journal[key]
        if dropped:
            self.save(journal)
        return dropped

    def hold(self) -> None:
        """Keep the journal in memory until :meth:`release`."""
        self._held = self.load()

    def release(self) -> None:
        """Prune and save what was held; read the file again from now on."""
        journal, self._held = self._held, None
        if journal is not None:
            prune_journal(journal, time.time())
            self.save(journal)
