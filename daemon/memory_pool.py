"""The vault's memory files, read once and kept while they do not change.

``remember`` judges a new memory against every live memory of its owner; reading and parsing
a thousand files for each call costs about a second. The entries of the memory folder's entry
files (``file.md#key``, :mod:`ccb.entry_notes`) are memories to judge against too
(:meth:`MemoryPool.entries`), read with their file. :class:`MemoryPool` keeps each memory
file parsed, with its read claim and its embedding, and a call costs one stat walk of the
memory folder: a file is read again only when its size, modification time, change time or
inode differ from the last read (an atomic replace gives a new inode; an edit in place moves
the times). One pool serves every :class:`daemon.memories.MemoryService` of an App, from any
thread.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path

import numpy as np
import structlog

from ccb.entry_notes import entry_notes, is_entry_note
from ccb.memory_file import content_hash_normalised
from ccb.model import GENERATED_FILES, Note, memory_key
from ccb.parse import detect_conflict_copy
from ccb.scan import VaultFilter, read_note_bytes, walked_path
from config.errors import DreamdError
from consistency.claims import read_claim
from consistency.duplicates import MemoryFacts, claim_text
from consistency.lifecycle import MemoryState
from consistency.withheld import withhold_credentials
from magma.chunking import DEFAULT_MAX_CHARS, Chunk, chunk_note
from magma.inline_data import without_inline_data
from magma.store import MagmaStore

__all__ = ["GENERATED_FILES", "MemoryPool", "StoredMemory", "first_chunk_hash"]

log = structlog.get_logger("dreamd.memories")

#: Files of the memory folder that dreamd writes itself and that are never memories.

_Signature = tuple[int, int, int, int]

#: Memory files not indexed yet whose first chunks ``facts`` embeds itself (≈ 12 ms each
#: with the default model): a hand edit the index has not seen yet is judged by meaning
#: too; a whole unindexed folder is left to the index.
EMBED_UNINDEXED = 16


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """A memory file as read: vault-relative ``path``, the parsed ``note`` and its bytes.

    For an entry of an entry file, ``path`` is its entry path (``Memory/facts.md#3f2a9c1d``),
    ``note`` the entry's note (:func:`ccb.entry_notes.entry_notes`) and ``data`` the bytes of
    the whole file."""

    path: str
    note: Note
    data: bytes


@dataclass(slots=True)
class _Entry:
    signature: _Signature
    stored: StoredMemory | None  # None: not a memory, or unreadable (reported once)
    facts: MemoryFacts | None = None
    first_chunk: str | None = None
    entries: tuple[_Entry, ...] = ()  # an entry file's entries (``stored`` is None then)


class MemoryPool:
    """Memory files under ``root / memory_folder``, parsed once per change.

    Conflict copies, dot files and :data:`GENERATED_FILES` are left out; a symlink out of
    the vault is refused by :func:`ccb.scan.read_note_bytes` (reported, never followed); a
    symlink to a file the vault walk keeps under its own path (``vfilter``'s rules) is a
    second name for it, left out as the walk leaves it out (:func:`ccb.scan.walked_path`);
    symlinked folders are not entered. Thread-safe.
    """

    def __init__(self, root: Path, memory_folder: str, *,
                 chunk_max_chars: int = DEFAULT_MAX_CHARS,
                 vfilter: VaultFilter | None = None) -> None:
        self.root = root
        self.vfilter = vfilter or VaultFilter()
        self.memory_folder = memory_folder.strip("/")
        #: How the index cuts notes into chunks (``sync.chunk_max_chars``): a memory's first
        #: chunk, and so the key of its stored vector, depends on it.
        self.chunk_max_chars = chunk_max_chars
        self._entries: dict[str, _Entry] = {}
        # what the walk makes of a file name: _DOT, _FILE (a memory file's name) or _OTHER
        self._names: dict[str, int] = {}
        # memories() and entries() of the entries now (None: to be listed again)
        self._listed: tuple[list[StoredMemory], list[StoredMemory]] | None = None
        # the last look was a whole walk that kept every file (:meth:`memories` may recheck)
        self._whole = False
        self._lock = threading.Lock()

    def memories(self, *, recheck: Collection[str] | None = None) -> list[StoredMemory]:
        """Every memory file now, by path; only files changed since the last call are read.

        ``recheck`` — vault paths a caller holding the vault's writer lock has just written
        (``remember``, before it rebuilds ``MEMORY.md``) — looks at those paths only, one
        stat each, and takes the others as the last walk found them (a walk when there was
        none yet): an edit by hand elsewhere in between is seen by the next call."""
        with self._lock:
            if recheck is not None and self._whole:
                self._recheck(recheck)
            else:
                self._refresh()
            return list(self._listing()[0])

    def memories_and_entries(self) -> tuple[list[StoredMemory], list[StoredMemory]]:
        """:meth:`memories` and :meth:`entries` of one look at the folder (``remember``
        judges a new memory against both: one stat walk instead of two)."""
        with self._lock:
            self._refresh()
            files, entries = self._listing()
            return list(files), list(entries)

    def _listing(self) -> tuple[list[StoredMemory], list[StoredMemory]]:
        if self._listed is None:
            ordered = sorted(self._entries.items())
            self._listed = (
                [e.stored for _rel, e in ordered if e.stored is not None],
                [item.stored for _rel, e in ordered for item in e.entries
                 if item.stored is not None])
        return self._listed

    def entries(self, memory_files: Mapping[str, tuple[int, int]] | None = None
                ) -> list[StoredMemory]:
        """Every entry of the memory folder's entry files now (each at its entry path, in
        file order, files by path); only files changed since the last call are read.

        ``memory_files`` — ``{path: (size, mtime_ns)}`` of the files the caller has just
        read as memory files (a dream's records) — are not read for entries while their
        size and modification time hold: a memory file is never an entry file (a dream over
        10,000 memories read each of them a second time for none)."""
        with self._lock:
            self._refresh(memory_files or {})
            return list(self._listing()[1])

    def _refresh(self, memory_files: Mapping[str, tuple[int, int]] | None = None) -> None:
        seen = dict(self._walk())
        gone = self._entries.keys() - seen.keys()
        for rel in gone:
            del self._entries[rel]
        changed, self._whole = bool(gone), True
        for rel, signature in seen.items():
            entry = self._entries.get(rel)
            if entry is not None and entry.signature == signature:
                continue
            changed = True
            if memory_files and memory_files.get(rel) == (signature[2], signature[0]):
                self._entries.pop(rel, None)  # a memory file: no entries; read when asked
                self._whole = False
                continue
            self._entries[rel] = self._read(rel, signature)
        if changed:
            self._listed = None

    def _recheck(self, paths: Collection[str]) -> None:
        changed = False
        for rel in dict.fromkeys(paths):
            signature = self._look(rel)
            entry = self._entries.get(rel)
            if signature is None:
                changed |= self._entries.pop(rel, None) is not None
            elif entry is None or entry.signature != signature:
                self._entries[rel] = self._read(rel, signature)
                changed = True
        if changed:
            self._listed = None

    def _look(self, rel: str) -> _Signature | None:
        """``rel``'s signature as :meth:`_walk` finds it, ``None`` when the walk would not
        yield it (gone, not a memory file's name, under a dot or symlinked folder, a
        symlink that is a second name)."""
        prefix = self.memory_folder + "/" if self.memory_folder else ""
        parts = rel.removeprefix(prefix).split("/") if rel.startswith(prefix) else []
        if not parts or any(not p or _kind_of(p) == _DOT for p in parts) \
                or _kind_of(parts[-1]) != _FILE:
            return None
        here = self.root / self.memory_folder
        if not here.is_dir():
            return None
        for part in parts[:-1]:  # the walk enters real folders only
            here = here / part
            if here.is_symlink() or not here.is_dir():
                return None
        path = here / parts[-1]
        try:
            st = path.stat()  # a symlink is judged by what it names
        except OSError:
            return None
        return self._kept(str(path), st, path.is_symlink())

    def facts(self, stored: Sequence[StoredMemory], store: MagmaStore | None,
              *, embed: Callable[[list[str]], np.ndarray] | None = None,
              settle: Callable[[], None] | None = None) -> list[MemoryFacts]:
        """What :func:`consistency.duplicates.decide` needs of each memory of ``stored``
        (keyed by :func:`ccb.model.memory_key`: its id, else its path — a memory written by
        hand or by Claude Code has none): its fields, read claim and the embedding of its
        first chunk — the vector the index holds for that chunk's hash (cut as
        :attr:`chunk_max_chars` says), else, for at most :data:`EMBED_UNINDEXED` files not
        indexed yet (a hand edit the index has not seen), one ``embed`` call; ``None``
        beyond that. Claims are read once per file version; vectors are kept with them.

        The chunks table is read as committed, without waiting for this process's pending
        index writes (:mod:`daemon.index_writer`): a vector it lacks for a memory being
        written (its rows not written yet, or deleted for a moment while they are written
        again) is the one kept of it (:class:`magma.store_memo.RecentVectors`), or embedded
        here as an unindexed file's: the same model's vector of the same text. Only when
        more than :data:`EMBED_UNINDEXED` vectors are still missing (any, without ``embed``)
        is ``settle()`` called (wait for the pending index writes, when given) and the table
        read again for those."""
        with self._lock:
            entries: list[_Entry] = []
            of_files = {item.stored.path: item for e in self._entries.values()
                        for item in e.entries if item.stored is not None}
            for s in stored:
                if s.note.memory is None:
                    continue
                entry = self._entries.get(s.path) or of_files.get(s.path)
                if entry is None or entry.stored is not s:
                    entry = _Entry((0, 0, 0, 0), s)  # not read by this pool: judged, not kept
                if entry.facts is None:
                    entry.facts = _facts(s)
                entries.append(entry)
            waiting: dict[str, list[_Entry]] = {}
            for entry in entries:
                assert entry.facts is not None and entry.stored is not None
                if entry.facts.embedding is None and store is not None:
                    if entry.first_chunk is None:
                        entry.first_chunk = first_chunk_hash(entry.stored.note,
                                                             self.chunk_max_chars)
                    waiting.setdefault(entry.first_chunk, []).append(entry)
            if waiting and store is not None:
                self._vectors(waiting, store, embed, settle)
            return [e.facts for e in entries if e.facts is not None]

    def _vectors(self, waiting: dict[str, list[_Entry]], store: MagmaStore,
                 embed: Callable[[list[str]], np.ndarray] | None,
                 settle: Callable[[], None] | None) -> None:
        """Give the entries of ``waiting`` (by first chunk hash) their vectors (:meth:`facts`
        says from where); those given are taken out of ``waiting``."""
        _take(waiting, store.known_vectors(waiting))
        many = len(waiting) > EMBED_UNINDEXED or (bool(waiting) and embed is None)
        if many and settle is not None:
            settle()  # (more than are embedded here: what was written meanwhile is read)
            _take(waiting, store.known_vectors(waiting))
        if waiting and embed is not None and len(waiting) <= EMBED_UNINDEXED:
            hashes = sorted(waiting)
            notes = [waiting[h][0].stored for h in hashes]
            texts = [first_chunk(n.note, self.chunk_max_chars).embed_text for n in notes if n]
            _take(waiting, dict(zip(hashes, embed(texts), strict=True)))

    def _walk(self) -> Iterable[tuple[str, _Signature]]:
        folder = self.root / self.memory_folder
        if not folder.is_dir():
            return
        if len(self._names) > _NAMES_KEPT:
            self._names.clear()
        names = self._names
        pending = [(str(folder), self.memory_folder + "/" if self.memory_folder else "")]
        while pending:
            top, prefix = pending.pop()
            try:
                entries = list(os.scandir(top))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                kind = names.get(name)
                if kind is None:
                    kind = names[name] = _kind_of(name)
                if kind == _DOT:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, f"{prefix}{name}/"))
                    continue
                if kind != _FILE:
                    continue
                rel = prefix + name
                try:
                    st = entry.stat()  # a symlink is judged by what it names
                except OSError:
                    continue
                signature = self._kept(entry.path, st, entry.is_symlink())
                if signature is not None:
                    yield rel, signature

    def _kept(self, path: str, st: os.stat_result, is_link: bool) -> _Signature | None:
        """The signature of the file at ``path`` (``st``: its stat, through a symlink) when
        the walk keeps it: a regular file, not a symlink that is a second name of one."""
        if is_link and self._second_name(path):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino

    def _second_name(self, link: str) -> bool:
        """Does the symlink ``link`` name a file the vault walk keeps under its own path?"""
        real_root = os.path.realpath(self.root)
        return walked_path(real_root, self.vfilter, os.path.realpath(link)) is not None

    def _read(self, rel: str, signature: _Signature) -> _Entry:
        try:
            # refuses a symlink out of the vault (never followed), reads the bytes once
            note, data = read_note_bytes(self.root, rel)
        except DreamdError as error:
            log.warning("memories.unreadable", path=rel, error=str(error))
            return _Entry(signature, None)
        if note.memory is not None:
            return _Entry(signature, StoredMemory(rel, note, data))
        plain = without_inline_data(note)  # as sync reads it
        if not is_entry_note(plain, in_scope=True):  # the memory folder is in scope
            return _Entry(signature, None)
        _file, notes, _problems = entry_notes(plain, data)
        return _Entry(signature, None, entries=tuple(
            _Entry(signature, StoredMemory(n.path, n, data)) for n in notes))


#: What :meth:`MemoryPool._walk` makes of a name: skipped with what is under it (a dot
#: file or folder), a memory file's name, or another name (a folder's is entered).
_DOT, _FILE, _OTHER = 0, 1, 2
#: File names whose kind is kept, at most (the folder's names; a bound, not a size).
_NAMES_KEPT = 200_000


def _kind_of(name: str) -> int:
    """:data:`_DOT`, :data:`_FILE` or :data:`_OTHER` for a name in the memory folder: a
    memory file is a ``.md`` file, not one dreamd generates (:data:`GENERATED_FILES`) and
    not a conflict copy (they carry the same id: the user settles them; the verdict of
    :func:`ccb.parse.detect_conflict_copy` depends on the name alone)."""
    if name.startswith("."):
        return _DOT
    if not name.endswith(".md") or name in GENERATED_FILES \
            or detect_conflict_copy(name) is not None:
        return _OTHER
    return _FILE


def first_chunk(note: Note, chunk_max_chars: int = DEFAULT_MAX_CHARS) -> Chunk:
    """``note``'s first chunk as the index cuts it: inline data dropped
    (:func:`magma.inline_data.without_inline_data`), then a credential written by hand
    withheld (:func:`consistency.withheld.withhold_credentials`), as sync does."""
    return chunk_note(withhold_credentials(without_inline_data(note)).note,
                      max_chars=chunk_max_chars)[0]


def first_chunk_hash(note: Note, chunk_max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The content hash of ``note``'s first chunk as the index cuts it: the key of its
    vector in the store (:meth:`magma.store.MagmaStore.known_vectors`)."""
    return first_chunk(note, chunk_max_chars).content_hash


def _take(waiting: dict[str, list[_Entry]], vectors: Mapping[str, np.ndarray]) -> None:
    """Give each entry of ``waiting`` (by its first chunk's hash) its vector among
    ``vectors``, and take it out of ``waiting``."""
    for chunk_hash, vector in vectors.items():
        for entry in waiting.pop(chunk_hash, ()):
            assert entry.facts is not None
            entry.facts = replace(entry.facts, embedding=vector)


def _facts(stored: StoredMemory) -> MemoryFacts:
    meta = stored.note.memory
    assert meta is not None
    body = stored.note.body.strip()
    facts = MemoryFacts(
        id=memory_key(meta.id, stored.path), type=meta.type, subject=meta.subject, name=meta.name,
        description=meta.description, body=body, content_hash=content_hash_normalised(body),
        state=MemoryState.of(meta, past=False),
        written=_day(meta.valid_from) or _day(meta.created),
        subject_inferred=stored.note.properties.get("subject_inferred") is True,
    )
    # the text counts days back ("two weeks ago") from the day it was written, not from the
    # day of the event it already dated (valid_from): that would count them twice
    return replace(facts, claim=read_claim(claim_text(facts),
                                           written=_day(meta.created) or facts.written))


def _day(value: date | datetime | None) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    return value
