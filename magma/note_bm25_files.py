"""The note-level BM25 index saved beside the store, read back memory-mapped at the next start.

At 100,000 notes (``bench/big_vault.py``) the index of :mod:`magma.note_bm25` takes ~80 s of
CPU to build and holds a score matrix of 37.7 million entries (144 MB of scores, 144 MB of
indices); built at every start, search went without it meanwhile and the daemon kept it in
its heap. :class:`NoteBm25Files` keeps the last index built in ``<state>/note-bm25/`` with the
tokens of every chunk it was built from (the seed of the next build: only the chunks changed
since are read and tokenized), under the fingerprint of what it indexes
(:func:`magma.note_bm25.spec_fingerprint`). The arrays are read with ``bm25s``'s
``BM25.load(dir, mmap=True)``: they stay in the page cache, out of the heap, and a search
pages in the columns of its words only.

Layout of ``<state>/note-bm25/`` (``<state>/note-bm25.lock`` is held while an index is put
in place or the folder emptied)::

    forgets            how many times a forget emptied the folder (:meth:`NoteBm25Files.discard`)
    save-seconds       how long the last save took (:meth:`NoteBm25Files.save_seconds`)
    index-<fingerprint>/
        data.csc.index.npy, indices.csc.index.npy, indptr.csc.index.npy,
        vocab.index.json, params.index.json      (``bm25s.BM25.save``)
        notes.json         the indexed notes' paths, in the matrix's document order
        chunks-<digest>.npy, tokens-<digest>.npy
                           every chunk's token ids (``int32``) in :data:`TOKEN_BUCKETS`
                           groups by content hash, named by the hash of their contents
        manifest.json      format, fingerprint, sizes and the groups: written last

At 100,000 notes (928,739 chunks, 163,229 of them distinct, 338,620 distinct tokens) the
folder holds 411 MB: 301 MB of scores and indices, written again by each save (every note's
scores move with any change), 87 MB of chunk tokens, of which a save writes only the groups
holding a changed chunk and links the others from the index saved before (hard links: no
data written). Read back, the index holds ~55 MB of the heap (its vocabulary and the notes'
paths). How often a rebuilt index is saved: :data:`magma.note_bm25.SAVE_GAP_S`.

An index is written into a temporary folder, fsynced, then renamed into place (one
``os.replace`` of the folder) and the older ones removed; a temporary folder a crash left is
removed at the next start. Its vocabulary holds the words of
the indexed notes only: a token no note holds any more is saved as a NUL and its number
(the matrix's empty columns; the numbers are kept so that the chunk token files stay the
same; renumbered once they are half of the vocabulary), so a deleted note's words leave the
disk with the next index saved, and a
forget (:meth:`magma.store.MagmaStore.maintain` with ``purge``) removes every saved index at
once. A build that read its snapshot before that forget does not save
(:meth:`NoteBm25Files.save` compares :meth:`NoteBm25Files.generation`).

A saved index that cannot be read (truncated, half-written by a crash before the rename,
edited by hand) is logged (``search.note_bm25_unreadable``) and removed; the index is built
again. Values damaged in place that break the index's bounds (an index past the
vocabulary, a pointer out of order), which no size check sees, are found by the search or
the build that reads them (:class:`magma.note_bm25.NoteBm25Builder`): logged, removed, built
again. Values changed within their bounds (a score, the order of ``notes.json``) are not
checked: they change rankings until the next save. The folder is dreamd's own state,
written once and never edited by it. No file is ever written in place (each save is a new
folder), so a mapping never sees its file change; one truncated by hand under a running
process would end it (``SIGBUS``), as with any memory-mapped file.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import bm25s
import filelock
import numpy as np
import structlog

from ccb.atomic import write_bytes_atomic
from config.errors import StoreError

__all__ = ["ABANDONED_AFTER_S", "BUCKET_CHUNKS", "FILES_FORMAT", "LOCK_TIMEOUT_S",
           "NOTE_INDEX_FOLDER", "TOKEN_BUCKETS", "NoteBm25Files", "SavedNoteBm25"]

log = structlog.get_logger("dreamd.note_bm25")

#: The folder's name in a vault's state folder (:func:`config.settings.state_dir`).
NOTE_INDEX_FOLDER = "note-bm25"
#: Version of the folder's layout (raised when what is saved changes meaning).
FILES_FORMAT = 2
#: Groups the chunks' token ids are saved in, each in files named by the hash of their
#: contents: a save links the groups no chunk of which changed from the index saved before
#: instead of writing them again (our choice: an edit of a few notes changes a few dozen
#: chunks, so at most as many groups). At 100,000 notes (163,229 distinct chunks, see
#: :data:`BUCKET_CHUNKS`): 64 groups of ~1.4 MB of tokens and ~80 KB of hashes.
TOKEN_BUCKETS = 256
#: Chunks per group below :data:`TOKEN_BUCKETS` groups: a smaller vault has fewer groups (a
#: power of two: the groups change only when the chunk count crosses one), so that a save
#: of a few hundred notes writes and syncs a few files, not hundreds (our choice).
BUCKET_CHUNKS = 4096
#: How long a save or a forget waits for another process's (seconds; our choice: both hold
#: the lock for a rename or a few removals).
LOCK_TIMEOUT_S = 30.0
#: A temporary folder of a save older than this was left by a crash (seconds; our choice: a
#: save of the 100,000-note index writes 392 MB, a few seconds).
ABANDONED_AFTER_S = 3600.0

_PREFIX = "index-"
_SAVING = ".saving-"
_MANIFEST = "manifest.json"
_SAVE_SECONDS = "save-seconds"
_NOTES = "notes.json"
_CHUNKS, _TOKENS = "chunks-", "tokens-"
_BM25S_FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy",
                "vocab.index.json", "params.index.json")
#: The name a word no note holds any more takes in a saved vocabulary (its number kept:
#: :func:`bm25_tokens` never makes a token with a NUL).
_UNUSED = "\0"


@dataclass(frozen=True, slots=True)
class SavedNoteBm25:
    """A saved index read back: ``index`` (a ``bm25s.BM25`` over memory-mapped arrays, its
    vocabulary in the heap) over the notes ``paths``, the token ids of every chunk it was
    built from (``buckets``: per group of chunks, their records (``hash``, ``end``: where
    their tokens end) and their tokens (``int32``), memory-mapped) and when it was written
    (``written``: ``time.time()``'s clock)."""

    fingerprint: str
    paths: tuple[str, ...]
    index: bm25s.BM25
    buckets: tuple[tuple[np.ndarray, np.ndarray], ...]
    written: float

    def chunk_tokens(self) -> dict[str, np.ndarray]:
        """``{content hash: token ids}`` (views of the mapped files, no copy)."""
        out: dict[str, np.ndarray] = {}
        for records, tokens in self.buckets:
            ends = records["end"].tolist()
            for h, start, end in zip(records["hash"].tolist(), [0, *ends[:-1]], ends,
                                     strict=True):
                out[h.decode("ascii")] = tokens[start:end]
        return out


class NoteBm25Files:
    """The saved note-level BM25 index of one store, in ``folder`` (the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = filelock.FileLock(folder.parent / f"{folder.name}.lock",
                                       timeout=LOCK_TIMEOUT_S)

    def generation(self) -> int:
        """How many times a forget emptied the folder (0: never); read before a snapshot,
        given back to :meth:`save`."""
        try:
            return int((self.folder / "forgets").read_text(encoding="ascii").strip() or 0)
        except (OSError, ValueError):
            return 0

    def written(self) -> float | None:
        """When the newest saved index was written (``time.time()``'s clock; ``None``: no
        index is saved)."""
        newest = max(map(_written_ns, self.folder.glob(f"{_PREFIX}*")), default=0)
        return newest / 1e9 if newest else None

    def save_seconds(self) -> float | None:
        """How long the last save took, writing and syncing (``None``: not known)."""
        try:
            return float((self.folder / _SAVE_SECONDS).read_text(encoding="ascii"))
        except (OSError, ValueError):
            return None

    def load(self) -> SavedNoteBm25 | None:
        """The index saved last (``None``: none, or unreadable: logged and removed)."""
        saved = sorted(self.folder.glob(f"{_PREFIX}*"), key=_written_ns, reverse=True) \
            if self.folder.is_dir() else []
        for folder in saved[1:]:  # (a crash between a rename and the removal of the old)
            shutil.rmtree(folder, ignore_errors=True)
        self._remove_abandoned()
        if not saved:
            return None
        try:
            return _read(saved[0])
        except Exception as error:  # whatever a damaged file raises: never a failed search
            log.warning("search.note_bm25_unreadable", folder=str(saved[0]),
                        error=f"{type(error).__name__}: {error}"[:300],
                        hint="the index is built again")
            shutil.rmtree(saved[0], ignore_errors=True)
            return None

    def save(self, fingerprint: str, paths: tuple[str, ...], index: bm25s.BM25,
             chunks: Mapping[str, np.ndarray], generation: int) -> SavedNoteBm25 | None:
        """Save ``index`` (over ``paths``; its vocabulary ``index.vocab_dict`` is the one of the
        ``chunks``' token ids) under ``fingerprint`` and read it back memory-mapped -> the
        saved index (its token ids renumbered: the tokens no note holds are left out).
        ``None`` when a forget emptied the folder since ``generation`` was read (nothing is
        saved: the index may hold the forgotten words). Raises ``OSError`` (nothing left
        behind but a temporary folder the next save removes)."""
        started = time.monotonic()
        self.folder.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=_SAVING, dir=self.folder))
        previous = max(self.folder.glob(f"{_PREFIX}*"), key=_written_ns, default=None)
        try:
            _write(temp, fingerprint, paths, index, chunks, previous)
            with self._locked():
                if self.generation() != generation:
                    log.info("search.note_bm25_not_saved", reason="a forget since its snapshot")
                    return None
                target = self.folder / f"{_PREFIX}{fingerprint}"
                if not target.exists():
                    temp.replace(target)
                _fsync(self.folder)
                for old in self.folder.glob(f"{_PREFIX}*"):
                    if old != target:
                        shutil.rmtree(old, ignore_errors=True)
            with contextlib.suppress(OSError):
                write_bytes_atomic(self.folder / _SAVE_SECONDS,
                                   f"{time.monotonic() - started:.2f}\n".encode())
            return _read(target)
        finally:
            shutil.rmtree(temp, ignore_errors=True)

    def remove(self, fingerprint: str) -> None:
        """Remove the index saved under ``fingerprint`` (found damaged); no error when it
        is gone."""
        with contextlib.suppress(OSError), self._locked():
            shutil.rmtree(self.folder / f"{_PREFIX}{fingerprint}", ignore_errors=True)

    def discard(self) -> None:
        """Remove every saved index (a forget: none may keep the forgotten words) and count
        one more forget, so that a build of an older snapshot does not save. Raises
        :class:`StoreError` (the folder named) when it cannot."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)  # (a build under way reads it)
            with self._locked():
                count = f"{self.generation() + 1}\n".encode()
                write_bytes_atomic(self.folder / "forgets", count)
                for old in self.folder.iterdir():
                    if old.is_dir():
                        shutil.rmtree(old)
                _fsync(self.folder)
        except OSError as error:  # (filelock's Timeout too)
            raise StoreError(f"magma: remove the saved note index in {self.folder}: "
                             f"{error}") from error

    def _remove_abandoned(self, now: float | None = None) -> None:
        """Remove the temporary folders of saves a crash cut short (older than
        :data:`ABANDONED_AFTER_S`: a save under way in another process keeps its own)."""
        now = time.time() if now is None else now
        for temp in self.folder.glob(f"{_SAVING}*"):
            with contextlib.suppress(OSError):
                if now - temp.stat().st_mtime > ABANDONED_AFTER_S:
                    shutil.rmtree(temp, ignore_errors=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            yield


def _write(folder: Path, fingerprint: str, paths: tuple[str, ...], index: bm25s.BM25,
           chunks: Mapping[str, np.ndarray], previous: Path | None = None) -> None:
    """Write the index into ``folder``, the tokens no document holds left out; the chunk
    token files of ``previous`` (the index saved before) whose contents are the same are
    linked there instead of being written again."""
    indptr = np.asarray(index.scores["indptr"])
    held = np.diff(indptr) > 0  # the tokens some note holds
    used = np.flatnonzero(held)
    kept = copy.copy(index)  # (the serving index is left as it is)
    if 2 * used.size >= len(held):  # their numbers kept: a word no note holds is renamed
        remap = None
        kept.vocab_dict = {t if held[i] else f"{_UNUSED}{i}": i
                           for t, i in index.vocab_dict.items()}
    else:  # mostly unused: renumbered (every chunk token file is written again)
        remap = np.full(len(held), -1, dtype=np.int32)
        remap[used] = np.arange(used.size, dtype=np.int32)
        kept.scores = {**index.scores, "indptr": np.append(indptr[used], indptr[-1])}
        kept.vocab_dict = {t: int(remap[i]) for t, i in index.vocab_dict.items()
                           if remap[i] >= 0}
    kept.save(folder, show_progress=False)
    written = [folder / name for name in _BM25S_FILES]
    buckets: list[str] = []
    for hashes in _buckets(chunks):
        lengths = np.fromiter((len(chunks[h]) for h in hashes), dtype=np.int64,
                              count=len(hashes))
        tokens = np.concatenate([chunks[h] for h in hashes]).astype(np.int32, copy=False)
        if (~held[tokens]).any():
            raise ValueError("note bm25: a chunk holds a token no note holds")
        if remap is not None:
            tokens = remap[tokens]
        records = np.empty(len(hashes), dtype=[("hash", f"S{max(map(len, hashes))}"),
                                               ("end", "<i8")])
        records["hash"] = [h.encode("ascii") for h in hashes]
        records["end"] = np.cumsum(lengths)
        digest = hashlib.blake2b(records.tobytes(), digest_size=16)
        digest.update(tokens.tobytes())
        name = digest.hexdigest()
        buckets.append(name)
        pair = (f"{_CHUNKS}{name}.npy", f"{_TOKENS}{name}.npy")
        if previous is not None and _linked(previous, folder, pair):
            continue
        np.save(folder / pair[0], records)
        np.save(folder / pair[1], tokens)
        written += [folder / pair[0], folder / pair[1]]
    (folder / _NOTES).write_text(json.dumps(list(paths), ensure_ascii=False), encoding="utf-8")
    (folder / _MANIFEST).write_text(json.dumps({
        "format": FILES_FORMAT, "fingerprint": fingerprint, "notes": len(paths),
        "chunks": len(chunks), "tokens": len(kept.vocab_dict), "buckets": buckets}),
        encoding="utf-8")
    for path in [*written, folder / _NOTES, folder / _MANIFEST]:
        _fsync(path)
    _fsync(folder)


def _buckets(chunks: Mapping[str, np.ndarray]) -> list[list[str]]:
    """The content hashes of ``chunks`` in groups (by their CRC-32; :data:`TOKEN_BUCKETS`,
    fewer in a vault of fewer than :data:`BUCKET_CHUNKS` chunks per group), each sorted;
    the empty ones left out."""
    count = 1
    while count < TOKEN_BUCKETS and count * BUCKET_CHUNKS < len(chunks):
        count *= 2
    groups: list[list[str]] = [[] for _ in range(count)]
    for content_hash in chunks:
        groups[zlib.crc32(content_hash.encode("ascii")) % count].append(content_hash)
    return [sorted(group) for group in groups if group]


def _linked(previous: Path, folder: Path, names: tuple[str, ...]) -> bool:
    """Link the files ``names`` of ``previous`` into ``folder`` -> whether all were (not: a
    file missing, a file system without hard links; nothing is left linked then)."""
    try:
        for name in names:
            os.link(previous / name, folder / name)
    except OSError:
        for name in names:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
        return False
    return True


def _read(folder: Path) -> SavedNoteBm25:
    """The index saved in ``folder``. Raises ``OSError`` or ``ValueError`` (or what a damaged
    file makes ``numpy`` or ``json`` raise) when it is missing, truncated or inconsistent."""
    manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    fingerprint = manifest["fingerprint"]
    if manifest["format"] != FILES_FORMAT or folder.name != f"{_PREFIX}{fingerprint}":
        raise ValueError(f"format {manifest['format']}, fingerprint {fingerprint}")
    paths = tuple(json.loads((folder / _NOTES).read_text(encoding="utf-8")))
    index = bm25s.BM25.load(folder, mmap=True)
    index.unique_token_ids_set = set()  # (read by its retrieve() only: ~16 MB at 338,620)
    data, indices, indptr = (index.scores[k] for k in ("data", "indices", "indptr"))
    buckets = tuple((np.load(folder / f"{_CHUNKS}{name}.npy", mmap_mode="r"),
                     np.load(folder / f"{_TOKENS}{name}.npy", mmap_mode="r"))
                    for name in manifest["buckets"])
    if (index.method != "lucene" or index.scores["num_docs"] != len(paths)
            or len(paths) != manifest["notes"] or len(index.vocab_dict) + 1 != len(indptr)
            or int(indptr[0]) != 0 or not int(indptr[-1]) == len(data) == len(indices)
            or sum(len(records) for records, _ in buckets) != manifest["chunks"]
            or any(not len(records) or int(records["end"][-1]) != len(tokens)
                   for records, tokens in buckets)):
        raise ValueError("note bm25: saved arrays of other sizes than the manifest's")
    return SavedNoteBm25(fingerprint, paths, index, buckets,
                         (folder / _MANIFEST).stat().st_mtime)


def _written_ns(folder: Path) -> int:
    """When the index in ``folder`` was written (0: its manifest is missing)."""
    try:
        return (folder / _MANIFEST).stat().st_mtime_ns
    except OSError:
        return 0


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
