"""What a large reconcile remembers of the contents it read, for the copies it meets next.

A vault often holds the same bytes at several paths: a folder copied for a new project, an
archive beside the original, notes synced twice. A cold index cut, withheld and hashed each
copy as if it were new, and read back from the chunks table the vectors of chunks it had
written a minute before. A reconcile that reads ahead (:meth:`daemon.sync.Syncer.reconcile`
of a large plan) now:

- reads the files of one name and size one after the other (:func:`copies_together`; a
  vault without copies is read in path order, as before), so that copies meet within a few
  batches and a small memory of them is enough;
- parses one content once (:class:`ContentMemo`: the bytes, and the file's name, for the
  title, must match; a note that had a problem when parsed is parsed again at each path, its
  problems name the path), looks for credentials in it once (a content that held none), and
  cuts it into chunks once (the chunks of a copy are the original's at the copy's path:
  their ids and every link are the copy's own);
- takes the vectors of the chunks it wrote a moment ago from memory
  (:meth:`magma.store_memo.RecentVectors.widened`), and reads from the chunks table only the
  hashes that the table held when the reconcile began or were written since
  (:func:`magma.store.known_vectors_among`): a cold index reads no vector back.

Everything is keyed by what the result depends on, and each memory is bounded; what falls out
of it is computed again, as before. The index written is the same, row for row.
"""

from __future__ import annotations

import os
import posixpath
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from ccb.model import FileEntry, Note
from ccb.names import nfc_key
from ccb.parse import parse_note
from ccb.scan import read_note_bytes
from consistency.withheld import Withheld, withhold_credentials
from magma.chunking import Chunk, chunk_note
from magma.inline_data import without_inline_data
from magma.store import MagmaStore, known_vectors_among, stored_content_hashes
from magma.store_memo import RecentVectors

__all__ = [
    "CHUNKED_CHARS_KEPT",
    "CHUNKED_KEPT",
    "CLEAN_KEPT",
    "PARSED_BYTES_KEPT",
    "PARSED_KEPT",
    "RUN_VECTORS",
    "ContentMemo",
    "chunks_of",
    "copies_together",
    "read_indexed_note",
    "run_vectors",
    "withheld_of",
]

#: Notes kept parsed by :class:`ContentMemo`, and their bytes at most (our choice: copies
#: are read one after the other, so a few batches of notes are plenty; 32 MB bounds a vault
#: of large files).
PARSED_KEPT = 512
PARSED_BYTES_KEPT = 32 * 1024 * 1024
#: Contents kept as holding no credential (a key of a few hashes each).
CLEAN_KEPT = 8192
#: Notes whose chunks are kept, and their texts' characters at most (a chunk holds its text
#: twice: as cut, and after its title and headings).
CHUNKED_KEPT = 512
CHUNKED_CHARS_KEPT = 16 * 1024 * 1024
#: Chunk vectors kept in memory while a large reconcile runs (16 MB at 512 dims): the chunks
#: of the copies of a note, read one after the other, and of the batches just before.
RUN_VECTORS = 8192


class _Kept:
    """A bounded memory: the newest ``count`` values (and ``size`` of their weights at
    most), by key. Safe across threads (the read-ahead thread and the writer's)."""

    def __init__(self, count: int, size: int | None = None) -> None:
        self._count, self._size = count, size
        self._values: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            found = self._values.get(key)
            if found is None:
                return None
            self._values.move_to_end(key)
            return found[0]

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._weight = 0

    def put(self, key: Hashable, value: Any, weight: int = 0) -> None:
        with self._lock:
            old = self._values.pop(key, None)
            self._weight -= old[1] if old is not None else 0
            self._values[key] = (value, weight)
            self._weight += weight
            while len(self._values) > self._count or (
                    self._size is not None and self._weight > self._size and self._values):
                _, (_, dropped) = self._values.popitem(last=False)
                self._weight -= dropped


def _content_key(note: Note, *more: Hashable) -> tuple[Hashable, ...] | None:
    """What a note read from a file makes of the file's content besides its path: the
    content hash of its bytes (an entry line's covers its file's path), the body as cut
    (an entry file's is emptied in the memory folder only), its frontmatter as withheld,
    and ``more``; ``None`` when a part cannot be a key."""
    key = (note.content_hash, len(note.body), hash(note.body), hash(note.frontmatter_raw),
           *more)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class ContentMemo:
    """The notes parsed, the contents found clean of credentials and the chunks cut by one
    large reconcile (module docstring), each bounded."""

    def __init__(self, root: Path,
                 vectors: Callable[[Collection[str]], Mapping[str, np.ndarray]],
                 recent: RecentVectors | None = None) -> None:
        #: The vault folder resolved once (each read checks its file is under it).
        self.real_root = os.path.realpath(root)
        #: The vectors of chunk hashes the run has or the store holds (:func:`run_vectors`).
        self.vectors = vectors
        self._parsed = _Kept(PARSED_KEPT, PARSED_BYTES_KEPT)
        self._clean = _Kept(CLEAN_KEPT)
        self._chunked = _Kept(CHUNKED_KEPT, CHUNKED_CHARS_KEPT)
        #: The store's recent vectors: a forget let in during the run drops some (a client
        #: between two commits), and everything kept here goes with them (:meth:`_after_forgets`).
        self._recent = recent
        self._forgets = recent.forgets if recent is not None else 0

    def _after_forgets(self) -> None:
        """Let go of every text kept when a text was forgotten since (its bytes, parse and
        chunks must not outlive the forget; what is still in the vault is read again)."""
        if self._recent is not None and self._recent.forgets != self._forgets:
            self._forgets = self._recent.forgets
            for kept in (self._parsed, self._clean, self._chunked):
                kept.clear()

    def parse(self, path: str, data: bytes) -> Note:
        """:func:`ccb.parse.parse_note` of ``data`` at ``path``, inline data dropped
        (:func:`magma.inline_data.without_inline_data`): the note parsed from the same bytes
        at another path of the same name (the same title), at ``path``, when its parse
        found no problem (a problem names the path it was found at)."""
        self._after_forgets()
        kept: Note | None = self._parsed.get(data)
        if kept is not None and kept.title == nfc_key(PurePosixPath(path).stem):
            return replace(kept, path=path)
        note = without_inline_data(parse_note(path, data))
        if not note.problems:
            self._parsed.put(data, note, len(data))
        return note

    def withheld(self, note: Note) -> Withheld:
        """:func:`consistency.withheld.withhold_credentials` of ``note``: nothing to look
        for in a content found clean before."""
        self._after_forgets()
        key = _content_key(note)
        if key is not None and self._clean.get(key) is not None:
            return Withheld(note, ())
        withheld = withhold_credentials(note)
        if key is not None and not withheld.found:
            self._clean.put(key, True)
        return withheld

    def chunks(self, note: Note, max_chars: int) -> list[Chunk]:
        """:func:`magma.chunking.chunk_note` of ``note``: the chunks of a note of the same
        content, title, memory, tags and aliases cut before, at ``note``'s path."""
        self._after_forgets()
        key = _content_key(note, note.title, note.memory, note.tags, note.aliases, max_chars)
        kept: list[Chunk] | None = self._chunked.get(key) if key is not None else None
        if kept is None:
            chunks = chunk_note(note, max_chars=max_chars)
            if key is not None:
                self._chunked.put(key, chunks, sum(len(c.text) + len(c.embed_text)
                                                   for c in chunks))
            return chunks
        return [Chunk(note.path, c.ordinal, c.heading_path, c.text, c.embed_text,
                      c.content_hash) for c in kept]


def read_indexed_note(root: Path, rel_path: str, memo: ContentMemo | None
                      ) -> tuple[Note, bytes]:
    """The note at ``rel_path`` under ``root`` as the index cuts it (inline data dropped)
    and its bytes, parsed once per content with ``memo``. Raises like
    :func:`ccb.scan.read_note_bytes`."""
    if memo is None:
        note, data = read_note_bytes(root, rel_path)
        return without_inline_data(note), data
    return read_note_bytes(root, rel_path, real_root=memo.real_root, parse=memo.parse)


def withheld_of(note: Note, memo: ContentMemo | None) -> Withheld:
    """:func:`consistency.withheld.withhold_credentials`, once per content with ``memo``."""
    return withhold_credentials(note) if memo is None else memo.withheld(note)


def chunks_of(note: Note, max_chars: int, memo: ContentMemo | None) -> list[Chunk]:
    """:func:`magma.chunking.chunk_note`, once per content with ``memo``."""
    return chunk_note(note, max_chars=max_chars) if memo is None else memo.chunks(
        note, max_chars)


def copies_together(entries: Iterable[FileEntry]) -> list[FileEntry]:
    """``entries`` with those of one file name and size (likely copies) one after the
    other, each group where its first one was: the order kept when no two share both."""
    groups: dict[tuple[str, int], list[FileEntry]] = {}
    for entry in entries:
        groups.setdefault((posixpath.basename(entry.path), entry.size), []).append(entry)
    return [entry for group in groups.values() for entry in group]


def run_vectors(store: MagmaStore, written: Collection[str]
                ) -> Callable[[Collection[str]], Mapping[str, np.ndarray]]:
    """What a large reconcile asks for the vectors of its chunks' hashes: those kept in
    memory, and those the chunks table may hold, read (the hashes it held now, or those
    ``written`` since: the set that :meth:`magma.store_memo.RecentVectors.widened`
    fills). Reads the table's hashes once. Raises :class:`config.errors.StoreError`."""
    before = stored_content_hashes(store)

    def known(hashes: Collection[str]) -> Mapping[str, np.ndarray]:
        return known_vectors_among(store, hashes,
                                   lambda chash: chash in before or chash in written)

    return known

