"""The search pipeline's in-memory index of one store version: the catalogue of notes, the
postings of their names and words, the memory matrix and the chunk vector index
(:mod:`magma.vector_index`: exact float32 rows, int8 rows above a configured size), and the link
graph (the daemon's retrieval pipeline reads it once per table version)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import structlog

from ccb.dates import day_in
from ccb.names import nfc_key
from ccb.templates import has_placeholder, in_locations
from magma.chunk_columns import (
    HASH_BYTES,
    NO_ADDRESS,
    ChunkHashes,
    ChunkIds,
    addresses_of,
    digests_of,
    ordinals_of,
    packed_hashes,
    packed_ids,
)
from magma.file_dates import NO_BURSTS, BulkWrites, bulk_writes
from magma.gc_pause import trim_heap
from magma.graph_step import NoteGraph
from magma.ivf_keeper import IvfWork, saved_partitions
from magma.layers import (
    L3_FACTS,
    L4_EVENTS,
    is_salient,
    is_template,
    note_date,
    note_layer,
    type_prior,
)
from magma.store import (
    INDEX_FILE_NAMES,
    ChunkCandidate,
    MagmaStore,
    chunk_vector_batches,
    chunks_at,
)
from magma.store_memo import StoreDelta
from magma.text import CJK_CHAR
from magma.vector_index import (
    BLOCK_ROWS,
    DEFAULT_LIMITS,
    ChunkVectors,
    VectorForm,
    VectorLimits,
    filled,
)
from magma.vector_ivf import RowPartitions, fits, followed

log = structlog.get_logger("dreamd.search")

WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "did", "for",
    "from", "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "so", "that", "the",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with",
    "you", "your", "about", "into", "have", "has", "had", "should", "would", "could", "we",
    "our", "us",
})


def tokens(text: str) -> list[str]:
    """Lower-cased words of ``text`` in NFC (a decomposed ``é`` is one letter of its word, not
    a break); CJK runs also as their 2-character pieces."""
    out: list[str] = []
    for word in WORD.findall(nfc_key(text).casefold()):
        if CJK_CHAR.search(word):
            out.append(word)
            out.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            out.append(word)
    return out


def norm(text: str) -> str:
    """The name index's key of a title, alias, name or query: its words in NFC, case-folded,
    one space apart (``"Café_Notes"`` → ``"café notes"``)."""
    return " ".join(WORD.findall(nfc_key(text).casefold().replace("_", " ")))


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One indexed note as the pipeline sees it (from the store's ``files`` table).

    ``dated`` is the day the note itself names (a date property or file name,
    :func:`magma.layers.note_date`; a memory's ``updated``/``created``), what time
    expressions match; ``day`` is that, else the file's modification day (for recency: a
    copied or synced vault resets modification times, so they never place a note in a time
    range); ``layer`` 1–5; ``prior`` its importance prior; ``salient``
    whether its name or description carries a salience word; ``template`` whether it is a
    template (:func:`is_template_note`), which has neither day: it is a blank form, not a
    note of a day; ``mtime_ns`` its file's modification time (0: unknown), which dates it
    when nothing else does and it was not written in a bulk write (:mod:`magma.file_dates`).
    """

    path: str
    note_id: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    memory_type: str | None
    memory_id: str | None
    name: str | None
    description: str | None
    owner: str | None
    properties: Mapping[str, Any]
    dated: date | None
    day: date | None
    layer: int
    prior: float
    salient: bool
    template: bool = False
    mtime_ns: int = 0


@dataclass(slots=True)
class Snapshot:
    """What the pipeline keeps in memory of one store version (:func:`read_snapshot`)."""

    versions: dict[str, int]
    entries: dict[str, CatalogueEntry]
    postings: dict[str, set[str]]
    names: dict[str, set[str]]  # normalised name/title/alias -> paths
    memory_paths: list[str]
    memory_matrix: np.ndarray  # float32[n, dims], unit rows
    memory_text: dict[str, str]
    #: ``""`` for a row left by its chunk (``dead``); packed (:mod:`magma.chunk_columns`)
    chunk_ids: Sequence[str]
    chunk_paths: list[str]  # "" for a row left by its chunk
    chunk_vectors: ChunkVectors  # one unit row per chunk: the in-memory vector index
    #: content hash of each row ("" for a row left by its chunk); packed, as ``chunk_ids``
    chunk_hashes: Sequence[str]
    #: the living rows of each note, ascending (a ``range`` when they follow one another)
    rows_by_path: dict[str, Sequence[int]]
    neighbours: dict[str, set[str]] | None = None
    graph: NoteGraph | None = None  # the graph step's (magma.graph_step), built on first use
    link_targets: dict[str, dict[str, str]] | None = None  # src -> {target as written: path}
    #: the store's vector index search (:meth:`MagmaStore.nearest_chunk_ids`) when there are
    #: more chunks than ``limits.ann_above``, else ``None`` (every row is scanned)
    ann: Callable[[np.ndarray, int, str | None], list[tuple[str, str, float]] | None] | None \
        = None
    limits: VectorLimits = DEFAULT_LIMITS  # the index's form and how it is searched
    #: the IVF over the in-memory rows (:mod:`magma.vector_ivf`) when there are more chunks
    #: than ``limits.ann_above`` and ``limits.ann_index`` is ``"memory"``, else ``None``
    partitions: RowPartitions | None = None
    #: what the IVF over the rows needs before it answers (trained, or every row assigned:
    #: :class:`magma.ivf_keeper.IvfKeeper` does it off the search path; meanwhile ``ann``
    #: answers), ``None`` when nothing
    ivf_wanted: IvfWork | None = None
    #: the rows' identity: the same object while rows are only appended to or left dead, a
    #: new one when they are read whole or stacked again (an IVF done for some rows serves
    #: a later snapshot of the same lineage)
    lineage: object = field(default_factory=object)
    #: the bulk writes among the notes' file times (:mod:`magma.file_dates`), kept for the
    #: next batch to tell whether it makes, grows or ends one
    bulk: BulkWrites = NO_BURSTS
    #: rows whose chunk was rewritten or deleted since the rows were last stacked
    #: (:func:`follow_snapshot`): their path, id and hash are ``""``, no note lists them, and
    #: a scan of every row scores them ``-inf`` (:func:`living_scores`)
    dead: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: folders searched (a path prefix as typed) -> the prefix as the paths spell it and the
    #: notes of ``rows_by_path`` in it, in its order (:func:`daemon.retrieval.folder_of`),
    #: kept for the next search of that folder
    folders: dict[str, tuple[str, list[str]]] = field(default_factory=dict)

    @property
    def chunk_count(self) -> int:
        """Chunks held (the rows less the dead ones)."""
        return len(self.chunk_paths) - len(self.dead)


def is_template_note(path: str, title: str, properties_json: str,
                     templates: Collection[str] = ()) -> bool:
    """Is the note at ``path`` a template: in a templates folder or titled "… Template"
    (:func:`magma.layers.is_template`), in one of the vault's configured template places
    ``templates`` (:func:`ccb.templates.template_locations`), or with a placeholder
    (``{{date}}``, ``{{title}}``, ``<% … %>``) in its title or properties?"""
    return is_template(path, title) or in_locations(path, templates) \
        or has_placeholder(title) or has_placeholder(properties_json)


def read_snapshot(store: MagmaStore, versions: dict[str, int], zone: tzinfo,
                  limits: VectorLimits = DEFAULT_LIMITS,
                  templates: Collection[str] = ()) -> Snapshot:
    """The catalogue, the name and word postings and the in-memory vector index of ``store``
    at table ``versions`` (days counted in ``zone``); the index takes the form
    ``limits.form`` picks for its number of chunks (:func:`magma.vector_index.vector_form`),
    built batch by batch (never every float32 vector at once), and the store's vector index
    is searched instead of every row when there are more than ``limits.ann_above``
    (:func:`with_ann`); ``templates``: the vault's configured template places,
    :func:`is_template_note`. Raises :class:`StoreError`."""
    memory_text = _memory_text(store.memory_chunks())
    entries: dict[str, CatalogueEntry] = {}
    postings: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}
    catalogue = store.catalogue_rows().to_pylist()
    bulk = bulk_writes(row["mtime_ns"] for row in catalogue)
    for row in catalogue:
        entry = _entry(row, memory_text, zone, templates, bulk)
        entries[entry.path] = entry
        for key in _name_keys(entry):
            names.setdefault(key, set()).add(entry.path)
        for token in _posting_tokens(entry):
            postings.setdefault(token, set()).add(entry.path)
    rows, batches = chunk_vector_batches(store)
    ids, paths, hashes, vectors = vectors_of(rows, batches, limits, _indexed(store, limits, rows),
                                             entries)
    snap = _with_vectors(versions, entries, postings, names, memory_text, ids, paths, vectors,
                         hashes, limits)
    snap.bulk = bulk
    return with_ann(snap, store)


def vectors_of(rows: int, batches: Iterable[Any], limits: VectorLimits, indexed: bool = True,
               spelled: Iterable[str] = ()) -> tuple[ChunkIds, list[str], ChunkHashes,
                                                     ChunkVectors]:
    """The chunk ids, paths, content hashes and in-memory vector index (in the form
    ``limits`` picks for ``rows`` chunks, ``indexed`` by the store or not) of ``batches``
    (record batches of ``chunk_id``, ``path``, ``content_hash`` and ``vector``,
    :func:`magma.store.chunk_vector_batches`), each batch converted as it comes; the chunks
    of a note share one path string (700,000 chunks of 100,000 notes: 600,000 strings
    fewer), the one of ``spelled`` when it holds the path (the catalogue's: 100,000 fewer);
    the ids and hashes packed (:mod:`magma.chunk_columns`); the heap trimmed after
    (:func:`trim_heap`). Raises
    :class:`StoreError` from the batches."""
    paths: list[str] = []
    ordinals: list[np.ndarray] = []
    addresses: list[np.ndarray] = []
    digests: list[np.ndarray] = []
    odd_ids: dict[int, str] = {}
    odd_hashes: dict[int, str] = {}

    # a note's chunks share one path string, ``spelled``'s when it has it (the catalogue's)
    one: dict[str, str] = {path: path for path in spelled}

    def matrices() -> Iterator[np.ndarray]:
        for batch in batches:
            start = len(paths)
            paths.extend(one.setdefault(p, p) for p in batch.column("path").to_pylist())
            part, odd = ordinals_of(batch.column("chunk_id").to_pylist(), paths, start)
            ordinals.append(part)
            odd_ids.update(odd)
            addresses.append(row_addresses(batch))
            part, odd = digests_of(batch.column("content_hash").to_pylist(), start)
            digests.append(part)
            odd_hashes.update(odd)
            yield matrix_of(batch)

    vectors = filled(limits.form(rows, indexed), rows, matrices(),
                     limits.file_folder(rows, indexed))
    ids = ChunkIds(paths, np.concatenate([np.zeros(0, dtype=np.int32), *ordinals]), odd_ids,
                   np.concatenate([np.zeros(0, dtype=np.uint64), *addresses]))
    hashes = ChunkHashes(np.concatenate([np.zeros((0, HASH_BYTES), dtype=np.uint8), *digests]),
                         odd_hashes)
    trim_heap()
    return ids, paths, hashes, vectors


def with_ann(snap: Snapshot, store: MagmaStore, before: Snapshot | None = None,
             left: Sequence[int] | None = None) -> Snapshot:
    """``snap`` searching an IVF index when it has more than ``snap.limits.ann_above`` chunks
    (``None``: never): the IVF over its in-memory rows (:attr:`Snapshot.partitions`,
    :func:`row_partitions`) when ``snap.limits.ann_index`` is ``"memory"``, else
    ``store``'s (:attr:`Snapshot.ann`). ``before``: the snapshot ``snap`` was followed from
    (its rows appended to, ``left``: the rows no chunk holds any more; ``None``: stacked
    again)."""
    rows = snap.chunk_count
    memory = snap.limits.in_memory(rows)
    got = row_partitions(snap, before, left, store.model_id) if memory else None
    snap.partitions = got if isinstance(got, RowPartitions) else None
    snap.ivf_wanted = got if isinstance(got, IvfWork) else None
    # the store's index answers while the IVF over the rows is not ready
    snap.ann = store.nearest_chunk_ids \
        if snap.limits.asks_index(rows) and snap.partitions is None else None
    return snap


def row_partitions(snap: Snapshot, before: Snapshot | None = None,
                   left: Sequence[int] | None = None, model: str = ""
                   ) -> RowPartitions | IvfWork:
    """The IVF over ``snap``'s rows (:mod:`magma.vector_ivf`): ``before``'s carried over
    (the same rows: the same IVF; rows appended: those assigned, ``left`` out); read whole:
    the one saved in ``snap.limits.folder`` for those rows, embedded by ``model``
    (:func:`magma.ivf_keeper.saved_partitions`). Else the work it needs, done off the search
    path: every row assigned again (stacked again, or saved for other rows), or trained
    (the rows outgrew the centroids, or none fit)."""
    was = before.partitions if before is not None else None
    vectors = snap.chunk_vectors
    if was is not None and before is not None:
        if vectors is before.chunk_vectors and not left:
            return was
        if left is None:  # stacked again: every row moved
            return IvfWork(was.centroids, was.trained_rows) \
                if fits(was, len(vectors), was.centroids.shape[1]) else IvfWork()
        out = followed(was, vectors, len(before.chunk_vectors),
                       np.asarray(left, dtype=np.int64))
        if out is None:  # the rows outgrew the centroids
            return IvfWork()
    elif before is not None and before.ivf_wanted is not None \
            and before.lineage is snap.lineage:
        return before.ivf_wanted  # (under way for these rows)
    else:
        got = saved_partitions(vectors, snap.limits.folder, snap.chunk_hashes, model)
        if isinstance(got, IvfWork):
            return got
        out = got
    return followed_dead(out, snap.dead) if len(snap.dead) else out


def followed_dead(partitions: RowPartitions, dead: np.ndarray) -> RowPartitions:
    """``partitions`` with the ``dead`` rows (no chunk holds them) never probed."""
    return partitions.appended(np.zeros(0, dtype=np.int32), dead)


def ann_rows(snap: Snapshot, vector: np.ndarray, limit: int, where: str | None = None
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows of ``snap`` among the ``limit`` chunks nearest ``vector`` by the store's
    vector index (of those matching the SQL filter ``where``, when given:
    :func:`magma.store.search_filter`) and their cosines on ``snap``'s rows -> ``(int64[≤
    limit], float32[≤ limit])``, best first (a chunk written after ``snap`` is left out);
    ``None`` when ``snap`` scans every row (no index, or too few chunks). The index's
    candidates (:func:`magma.vector_ann.nearest_chunk_ids`, ranked by quantised cosines) are
    scored again on the in-memory rows, as a scan of every row scores them: the stored
    float32 vectors are not read again from disk. Raises :class:`StoreError`."""
    found = snap.ann(vector, limit, where) if snap.ann is not None else None
    if found is None:
        return None
    wanted: dict[str, set[str]] = {}
    for chunk_id, path, _quantised in found:
        wanted.setdefault(path, set()).add(chunk_id)
    rows = [row for path, ids in wanted.items() for row in snap.rows_by_path.get(path, ())
            if snap.chunk_ids[row] in ids]
    index = np.unique(np.asarray(rows, dtype=np.int64))  # in row order: equal cosines too
    sims = snap.chunk_vectors.scores_at(index, np.asarray(vector, dtype=np.float32))
    best = np.argsort(-sims, kind="stable")[:limit]
    return index[best], sims[best]


def follow_snapshot(store: MagmaStore, snap: Snapshot, delta: StoreDelta,
                    versions: dict[str, int], zone: tzinfo,
                    limits: VectorLimits = DEFAULT_LIMITS,
                    templates: Collection[str] = ()) -> Snapshot:
    """``snap`` carried over the batches that wrote ``delta.paths`` (what
    :meth:`MagmaStore.changes_since` answers): only those paths' rows, chunks and vectors are
    read; every other note keeps its entry, postings and vector rows (in their form: no
    float32 copy of the rows kept, unless the index changes form). The new rows are appended
    (:meth:`magma.vector_index.ChunkVectors.appended`: no copy of the rows kept) and the rows
    the changed notes had are left dead (:attr:`Snapshot.dead`) until they are more than
    :data:`DEAD_SHARE` of the rows (at least :data:`DEAD_ROWS_MIN`), when the living rows are
    stacked again: a save of a few notes costs O(their chunks) and a copy of the chunk lists'
    pointers, not a copy of the vectors. Equal, path by path, to :func:`read_snapshot` at
    ``versions``. ``snap`` is left as it was (a search may be reading it): the result shares
    only what did not change. The links follow when the set of stored paths stayed the
    same, else they are read again on first use. Raises :class:`StoreError`."""
    changed = delta.paths
    if not changed:
        rows = snap.chunk_count
        indexed = _indexed(store, limits, rows)
        form = limits.form(rows, indexed)
        if form == snap.chunk_vectors.form:
            return with_ann(_addressed(store, replace(snap, versions=versions, limits=limits)),
                            store, snap)
        # the store's index was built (or dropped) since: the rows change form
        again = _stacked_again(snap, versions, snap.entries, snap.postings, snap.names,
                               snap.memory_text, None, frozenset(), form, limits, indexed)
        again.bulk = snap.bulk
        return with_ann(again, store, snap)
    added = _memory_text(store.memory_chunks(changed))
    memory_text = {p: t for p, t in snap.memory_text.items() if p not in changed}
    memory_text.update(added)
    entries = {p: e for p, e in snap.entries.items() if p not in changed}
    postings, names = dict(snap.postings), dict(snap.names)
    for old in (snap.entries[p] for p in changed if p in snap.entries):
        _drop(postings, _posting_tokens(old), old.path)
        _drop(names, _name_keys(old), old.path)
    catalogue = store.catalogue_rows(changed).to_pylist()
    # The bursts of the whole store, as a full read finds them: a rename keeps its file
    # time, and a copy the watcher splits over batches comes in parts (the snapshot's own,
    # found when it was made, tell whether this batch changed them).
    bulk = bulk_writes([e.mtime_ns for e in entries.values()]
                       + [row["mtime_ns"] for row in catalogue])
    if not bulk.same(snap.bulk):
        entries.update(_redated(entries.values(), bulk, zone))
    for row in catalogue:
        entry = _entry(row, memory_text, zone, templates, bulk)
        entries[entry.path] = entry
        _add(postings, _posting_tokens(entry), entry.path)
        _add(names, _name_keys(entry), entry.path)
    fresh = store.chunk_vectors(changed)
    left = [r for p in changed for r in snap.rows_by_path.get(p, ())]
    rows = snap.chunk_count - len(left) + fresh.num_rows
    indexed = _indexed(store, limits, rows)
    form = limits.form(rows, indexed)
    if form == snap.chunk_vectors.form and \
            len(snap.dead) + len(left) <= max(DEAD_ROWS_MIN, int(rows * DEAD_SHARE)):
        out = _appended(snap, versions, entries, postings, names, memory_text, fresh, left,
                        limits)
        out.lineage = snap.lineage  # the same rows, some appended, some left dead
        appended: list[int] | None = left
    else:
        out = _stacked_again(snap, versions, entries, postings, names, memory_text, fresh,
                             changed, form, limits, indexed)
        appended = None
    if delta.same_paths and snap.neighbours is not None and snap.link_targets is not None:
        out.link_targets, out.neighbours = _follow_links(
            snap.link_targets, snap.neighbours, store.link_pairs(changed), changed, entries)
    out.bulk = bulk
    return with_ann(_addressed(store, out, changed, fresh.num_rows), store, snap,
                    appended)


def _addressed(store: MagmaStore, snap: Snapshot, changed: Collection[str] = (),
               fresh: int = 0) -> Snapshot:
    """``snap`` with the addresses of the rows it kept forgotten when they have moved (the
    table compacted since they were read: one kept row, taken at its address, is not
    there); the last ``fresh`` rows, read with this batch, keep theirs. Those rows are then
    read by id, as before addresses were kept, until the snapshot is read whole again.
    Reading every address again instead (:func:`magma.store.chunk_addresses` mapped by id)
    took 1.6 s of CPU and 334 MB more at 928,740 chunks, on the search path."""
    ids = snap.chunk_ids
    if not isinstance(ids, ChunkIds):
        return snap
    kept = next((rows[0] for path, rows in snap.rows_by_path.items()
                 if rows and path not in changed), None)
    known = ids.addresses([kept]) if kept is not None else {}
    if not known or any(c.chunk_id in known for c in chunks_at(store, list(known.values()))):
        return snap
    addresses = np.full(len(ids), NO_ADDRESS, dtype=np.uint64)
    if fresh:
        addresses[-fresh:] = ids.address_array()[-fresh:]
    snap.chunk_ids = ids.with_addresses(addresses)
    log.info("search.chunk_addresses_moved", rows=len(ids) - fresh,
             hint="the table was compacted: these chunks are read by id until the next "
                  "full read")
    return snap


#: Dead rows a followed snapshot keeps before its living rows are stacked again
#: (:func:`follow_snapshot`): a tenth of the rows, at least :data:`DEAD_ROWS_MIN` (our
#: choice: a scan of every row scans a tenth more at most, and at 928,312 rows, where
#: stacking the int8 rows again takes ≈3.7 s, that is once in ≈9,000 saves of a note of ten
#: chunks).
DEAD_SHARE = 0.1
DEAD_ROWS_MIN = 1_024


def living_scores(snap: Snapshot, vector: np.ndarray) -> np.ndarray:
    """The cosine of every row of ``snap`` with ``vector`` (``float32[rows]``), ``-inf`` for
    its dead rows (:attr:`Snapshot.dead`)."""
    sims = snap.chunk_vectors.scores(vector)
    if len(snap.dead):
        sims[snap.dead] = -np.inf
    return sims


def _appended(snap: Snapshot, versions: dict[str, int], entries: dict[str, CatalogueEntry],
              postings: dict[str, set[str]], names: dict[str, set[str]],
              memory_text: dict[str, str], fresh: Any, left: list[int],
              limits: VectorLimits) -> Snapshot:
    """``snap``'s rows with ``left`` dead and the rows of ``fresh`` (the changed notes'
    chunks, :meth:`MagmaStore.chunk_vectors`) appended: the chunk lists copied (pointers),
    the rows of the notes not changed kept where they are."""
    paths = list(snap.chunk_paths)
    for row in left:
        paths[row] = ""
    rows_by_path = dict(snap.rows_by_path)
    for row in left:
        rows_by_path.pop(snap.chunk_paths[row], None)
    start = len(paths)
    new_paths = fresh.column("path").to_pylist()
    added: dict[str, list[int]] = {}
    for offset, path in enumerate(new_paths):
        added.setdefault(path, []).append(start + offset)
    for path, rows in added.items():
        rows_by_path[path] = _span([*rows_by_path.get(path, ()), *rows])
    paths += new_paths
    ids = packed_ids(snap.chunk_ids, None, left, fresh.column("chunk_id").to_pylist(), paths,
                     row_addresses(fresh))
    hashes = packed_hashes(snap.chunk_hashes, None, left,
                           fresh.column("content_hash").to_pylist())
    dead = np.concatenate([snap.dead, np.asarray(left, dtype=np.int64)]) if left else snap.dead
    return _with_vectors(versions, entries, postings, names, memory_text, ids, paths,
                         snap.chunk_vectors.appended(matrix_of(fresh)), hashes, limits,
                         rows_by_path=rows_by_path, dead=dead)


def _stacked_again(snap: Snapshot, versions: dict[str, int],
                   entries: dict[str, CatalogueEntry], postings: dict[str, set[str]],
                   names: dict[str, set[str]], memory_text: dict[str, str], fresh: Any,
                   changed: Collection[str], form: VectorForm, limits: VectorLimits,
                   indexed: bool) -> Snapshot:
    """``snap``'s living rows of the notes not ``changed`` then the rows of ``fresh``
    (``None``: none), stacked again in ``form``: no dead row left. Rows of the same form stay
    where they were kept (a file: a new one; the heap); rows changing form go where
    ``limits`` puts them (:meth:`VectorLimits.file_folder`, ``indexed`` or not by the
    store); rows kept in the heap where a file would be (it could not be written) move to
    one at the next snapshot read whole."""
    keep = [i for i, p in enumerate(snap.chunk_paths) if p and p not in changed]
    fresh_matrix = matrix_of(fresh) if fresh is not None else None
    was = snap.chunk_vectors
    if form == was.form:
        vectors = was.followed(np.asarray(keep, dtype=np.int64),
                               fresh_matrix if fresh_matrix is not None
                               else np.zeros((0, 1), dtype=np.float32))
    else:
        rows = len(keep) + (len(fresh_matrix) if fresh_matrix is not None else 0)
        vectors = _converted(was, keep, fresh_matrix, form, limits.file_folder(rows, indexed))

    def column(name: str) -> list[str]:
        return fresh.column(name).to_pylist() if fresh is not None else []

    paths = [snap.chunk_paths[i] for i in keep] + column("path")
    return _with_vectors(
        versions, entries, postings, names, memory_text,
        packed_ids(snap.chunk_ids, keep, (), column("chunk_id"), paths,
                   row_addresses(fresh) if fresh is not None else None), paths,
        vectors, packed_hashes(snap.chunk_hashes, keep, (), column("content_hash")), limits)


def _memory_text(chunks: Any) -> dict[str, str]:
    """``{path: text}``: each memory's chunk bodies, each after a newline, in note order."""
    memory_text: dict[str, str] = {}
    for path, body in zip(chunks.column("path").to_pylist(), chunks.column("body").to_pylist(),
                          strict=True):
        memory_text[path] = memory_text.get(path, "") + "\n" + body
    return memory_text


def _entry(row: Mapping[str, Any], memory_text: Mapping[str, str], zone: tzinfo,
           templates: Collection[str] = (), bulk: BulkWrites = NO_BURSTS) -> CatalogueEntry:
    """One catalogue row (:meth:`MagmaStore.catalogue_rows`) as the pipeline sees it: a
    note without a date of its own is dated by its file, unless the file was written in one
    of the ``bulk`` writes (:mod:`magma.file_dates`: a copy of the vault says nothing of
    when the note was written)."""
    props = json.loads(row["properties_json"] or "{}")
    path = row["path"]
    memory_type = row["memory_type"]
    text = " ".join(filter(None, [row["memory_name"], row["memory_description"],
                                  memory_text.get(path, "")]))
    layer = note_layer(path=path, title=row["title"], memory_type=memory_type,
                       properties=props, tags=row["tags"] or (), text=text)
    dated = note_date(props, path) if memory_type is None else (
        day_in(props.get("updated"), zone) or day_in(props.get("created"), zone))
    day = dated
    if day is None and row["mtime_ns"] and not bulk.holds(row["mtime_ns"]):
        day = datetime.fromtimestamp(row["mtime_ns"] / 1e9, zone).date()
    template = memory_type is None and is_template_note(
        path, row["title"], row["properties_json"] or "", templates)
    if template:
        # a blank form: its file dates say when the form was edited, and its date property
        # is a placeholder; it is no event and has no recency
        dated = day = None
        layer = L3_FACTS if layer == L4_EVENTS else layer
    return CatalogueEntry(
        path=path, note_id=row["note_id"], title=row["title"],
        aliases=tuple(row["aliases"] or ()), tags=tuple(row["tags"] or ()),
        memory_type=memory_type, memory_id=row["memory_id"], name=row["memory_name"],
        description=row["memory_description"], owner=row["owner"], properties=props,
        dated=dated, day=day, layer=layer, prior=type_prior(layer, memory_type, text),
        salient=is_salient(text), template=template, mtime_ns=row["mtime_ns"] or 0)


def _redated(entries: Iterable[CatalogueEntry], bulk: BulkWrites, zone: tzinfo
             ) -> dict[str, CatalogueEntry]:
    """The ``entries`` dated by their file whose day changes with the store's ``bulk``
    writes (:func:`_entry`), by path, with their new day."""
    out: dict[str, CatalogueEntry] = {}
    for entry in entries:
        if entry.dated is not None or entry.template or not entry.mtime_ns:
            continue
        day = None if bulk.holds(entry.mtime_ns) else \
            datetime.fromtimestamp(entry.mtime_ns / 1e9, zone).date()
        if day != entry.day:
            out[entry.path] = replace(entry, day=day)
    return out


def _labels(entry: CatalogueEntry) -> list[str]:
    return [entry.title, *entry.aliases, *(filter(None, [entry.name]))]


def _name_keys(entry: CatalogueEntry) -> set[str]:
    """The name index's keys of ``entry``: its title, aliases and memory name (:func:`norm`)."""
    return {key for key in map(norm, _labels(entry)) if key}


def _posting_tokens(entry: CatalogueEntry) -> set[str]:
    """The words ``entry`` is found by in the catalogue: labels, description, tags, name."""
    searchable = " ".join([*_labels(entry), entry.description or "", *entry.tags,
                           (entry.name or "").replace("-", " ")])
    return {token for token in tokens(searchable) if token not in STOPWORDS}


def _drop(index: dict[str, set[str]], keys: Iterable[str], path: str) -> None:
    """``path`` out of ``index[key]`` for each key, copying each set it changes (the old
    snapshot keeps its own)."""
    for key in keys:
        left = index.get(key, set()) - {path}
        if left:
            index[key] = left
        else:
            index.pop(key, None)


def _add(index: dict[str, set[str]], keys: Iterable[str], path: str) -> None:
    """``path`` into ``index[key]`` for each key, copying each set it changes."""
    for key in keys:
        index[key] = index.get(key, set()) | {path}


def _with_vectors(versions: dict[str, int], entries: dict[str, CatalogueEntry],
                  postings: dict[str, set[str]], names: dict[str, set[str]],
                  memory_text: dict[str, str], chunk_ids: Sequence[str],
                  chunk_paths: list[str], vectors: ChunkVectors, chunk_hashes: Sequence[str],
                  limits: VectorLimits, *, rows_by_path: dict[str, Sequence[int]] | None = None,
                  dead: np.ndarray | None = None) -> Snapshot:
    """The snapshot of these parts, with the rows of each path (``rows_by_path``, counted
    here when ``None``; ``dead``: the rows no chunk holds) and the memory matrix (the
    memories' rows of the one in-memory index: no second read of their vectors)."""
    if rows_by_path is None:
        counted: dict[str, list[int]] = {}
        for row, path in enumerate(chunk_paths):
            counted.setdefault(path, []).append(row)
        rows_by_path = {path: _span(rows) for path, rows in counted.items()}
        del counted
    # the memories' rows of the one in-memory index (no second read of their vectors)
    memory_rows = [r for p in memory_text if p in entries for r in rows_by_path.get(p, ())]
    matrix = (vectors.rows(memory_rows) if memory_rows
              else np.zeros((0, 1), dtype=np.float32))
    return Snapshot(versions=versions, entries=entries, postings=postings, names=names,
                    memory_paths=[chunk_paths[r] for r in memory_rows], memory_matrix=matrix,
                    memory_text=memory_text, chunk_ids=chunk_ids, chunk_paths=chunk_paths,
                    chunk_vectors=vectors, chunk_hashes=chunk_hashes,
                    rows_by_path=rows_by_path, limits=limits,
                    dead=dead if dead is not None else np.zeros(0, dtype=np.int64))


def _span(rows: list[int]) -> Sequence[int]:
    """``rows`` (ascending) as a ``range`` when they follow one another, as a note's chunks
    do in the store: 48 bytes instead of a list and an int object a row (100,000 notes,
    928,740 chunks: 43 MB of lists)."""
    return range(rows[0], rows[-1] + 1) if rows and rows[-1] - rows[0] + 1 == len(rows) \
        else rows


def _follow_links(targets: Mapping[str, dict[str, str]], near: Mapping[str, set[str]],
                  pairs: Any, changed: Collection[str], entries: Mapping[str, CatalogueEntry]
                  ) -> tuple[dict[str, dict[str, str]], dict[str, set[str]]]:
    """The link targets and neighbours of :func:`linked` carried over new link rows
    (``pairs``: :meth:`MagmaStore.link_pairs` of the ``changed`` sources), the set of paths
    unchanged: an edge of a changed note stays when either end still links to the other."""
    followed = {src: t for src, t in targets.items() if src not in changed}
    for src, target, path in zip(pairs.column("src").to_pylist(),
                                 pairs.column("target").to_pylist(),
                                 pairs.column("resolved").to_pylist(), strict=True):
        followed.setdefault(src, {})[link_written(target)] = path
    out = dict(near)

    def links(a: str, b: str) -> bool:
        return b in followed.get(a, {}).values() or a in followed.get(b, {}).values()

    for src in changed:
        for other in {*targets.get(src, {}).values(), *followed.get(src, {}).values()}:
            if other == src or not (_graph_note(src, entries) and _graph_note(other, entries)):
                continue
            keep = links(src, other)
            for a, b in ((src, other), (other, src)):
                have = out.get(a, set())
                if keep and b not in have:
                    out[a] = have | {b}
                elif not keep and b in have:
                    out[a] = have - {b}
                    if not out[a]:
                        del out[a]
    return followed, out


def _graph_note(path: str, entries: Mapping[str, CatalogueEntry]) -> bool:
    """Does :func:`linked` keep ``path`` as an end of an edge (a note, not an index file)?"""
    return path in entries and path.rsplit("/", 1)[-1] not in INDEX_FILE_NAMES


def link_written(target: str) -> str:
    """A link target as compared by the graph step: URL-decoded, case-folded, without a
    heading."""
    return unquote(target.split("#", 1)[0]).strip().casefold()


def _indexed(store: MagmaStore, limits: VectorLimits, rows: int) -> bool:
    """Is the IVF index a vault of ``rows`` chunks searches there (asked of the store only
    when ``limits`` has it search the store's; the in-memory rows' own always is)? Raises
    :class:`StoreError`."""
    return not limits.asks_index(rows) or limits.in_memory(rows) \
        or store.vector_index() is not None


def _converted(was: ChunkVectors, keep: Sequence[int], fresh: np.ndarray | None,
               form: VectorForm, folder: Path | None = None) -> ChunkVectors:
    """The rows of ``was`` at ``keep`` then ``fresh`` (``float32[k, dims]``) in ``form``
    (in a file in ``folder``: :func:`magma.vector_index.filled`), converted
    :data:`magma.vector_index.BLOCK_ROWS` rows at a time (no float32 copy of them all)."""
    def blocks() -> Iterator[np.ndarray]:
        for start in range(0, len(keep), BLOCK_ROWS):
            yield was.rows(np.asarray(keep[start : start + BLOCK_ROWS], dtype=np.int64))
        if fresh is not None and len(fresh):
            yield fresh

    return filled(form, len(keep) + (len(fresh) if fresh is not None else 0), blocks(),
                  folder)


def chunks_at_rows(store: MagmaStore, snap: Snapshot, rows: Iterable[int]
                   ) -> list[ChunkCandidate]:
    """The chunks of ``snap``'s living ``rows`` read from ``store`` without their vectors
    (:meth:`MagmaStore.chunks_by_id`), taken by their addresses in the chunks table when the
    snapshot knows them (:meth:`magma.chunk_columns.ChunkIds.addresses`). Raises
    :class:`StoreError`."""
    rows = list(rows)
    ids = snap.chunk_ids
    addresses = ids.addresses(rows) if isinstance(ids, ChunkIds) else None
    return store.chunks_by_id({ids[row] for row in rows}, with_vectors=False,
                              addresses=addresses)


def row_addresses(table: Any) -> np.ndarray:
    """Each row's address in the chunks table (``uint64[rows]``) of a read with LanceDB's
    ``_rowid`` (:func:`magma.store.chunk_vector_batches`, :meth:`MagmaStore.chunk_vectors`);
    :data:`magma.chunk_columns.NO_ADDRESS` for every row of a read without it."""
    if "_rowid" not in table.schema.names:
        return addresses_of(None, table.num_rows)
    return addresses_of(table.column("_rowid").to_numpy(zero_copy_only=False), table.num_rows)


def matrix_of(table: Any) -> np.ndarray:
    """The ``vector`` column of ``table`` as ``float32[rows, dims]`` (``(0, 1)`` when empty)."""
    if table.num_rows == 0:
        return np.zeros((0, 1), dtype=np.float32)
    column = table.column("vector")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False),
                      dtype=np.float32).reshape(table.num_rows, -1)


def linked(sources: Sequence[str], targets: Sequence[str | None],
            entries: Mapping[str, CatalogueEntry]) -> dict[str, set[str]]:
    """Notes linked either way from the store's ``(src, resolved)`` link pairs: both ends
    indexed notes (attachments and unindexed files are not notes to return), index files
    left out."""
    near: dict[str, set[str]] = {}
    for src, dst in zip(sources, targets, strict=True):
        if dst is None or src == dst or src not in entries or dst not in entries:
            continue
        near.setdefault(src, set()).add(dst)
        near.setdefault(dst, set()).add(src)
    for index in [p for p in near if p.rsplit("/", 1)[-1] in INDEX_FILE_NAMES]:
        for other in near.pop(index):
            near.get(other, set()).discard(index)
    return near
