"""The MAGMA store: LanceDB tables for files, chunks (vectors + full text) and links.

Layout (one LanceDB database per vault, outside the vault):

- ``meta``   one row: vault path, embedding model id, vector dims, schema version. Opening a
  store built for another vault, model or schema raises :class:`StoreMismatchError`.
- ``files``  one row per vault file (notes and attachments), keyed by ``path``. Properties are
  kept as JSON text (``properties_json``), never one typed column per key: one key holds a
  date in one note and a string in another (shared case 01).
- ``chunks`` one row per chunk, keyed by ``chunk_id`` (``"<path>#<ordinal>"``), with the
  vector (``fixed_size_list<float32>[dims]``) and a full-text index on ``text``.
- ``links``  one row per link of a note, keyed by ``link_id`` (``"<src>#<n>"``), with the
  target as written and the vault path it resolves to (or null).

Writes are batch-oriented: :meth:`MagmaStore.apply` makes a few commits per table per call,
so versions grow per batch, not per note (shared case 21): the batch's own chunk and link
rows are deleted, then appended (two commits, no join with the whole table; a crash in
between is healed because the file rows are written last, in one ``merge_insert``); the
other notes' links a batch re-resolves are upserted in one commit of their own. Call
:meth:`MagmaStore.maintain` after write bursts to compact, fold new rows into the full-text
index and prune old versions.

**Single writer.** LanceDB 0.40 does not stop two processes writing one table: the last writer
wins silently and concurrent inserts of one key can duplicate rows (DESIGN.md, shared cases
18/19). One process — the daemon's writer — owns a store; others go through it or take the
writer lock. Do not ``fork`` after LanceDB was used (use ``spawn``). The in-memory path set
kept for link resolution assumes that single writer too.

String filters quote values with :func:`sql_str` (``'`` doubled), which keeps paths with
quotes, Chinese and emoji safe.
"""

from __future__ import annotations

import json
import posixpath
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import structlog
from lancedb.query import FullTextOperator, MatchQuery

from ccb.model import DIARY_FILE, MEMORY_INDEX_FILE, FileEntry, FileKind, LinkKind, Note, Problem
from ccb.owner import Owner, parse_owner
from config.errors import InvalidOwnerError, StoreError
from magma.chunking import HEADING_SEPARATOR, Chunk
from magma.gc_pause import collector_paused
from magma.graph import LinkResolver, link_key, path_key
from magma.store_memo import (
    FileIndexMemo,
    RecentVectors,
    StoreChanges,
    StoreDelta,
    TableMemo,
    WrittenNote,
    WrittenRows,
)
from magma.store_seal import IndexSeal
from magma.store_tables import (
    FTS_CONFIG,
    FTS_INDEX_NAME,
    INDEX_CACHE_BYTES,
    MAINTAIN_UNINDEXED_ROWS,
    SCHEMA_VERSION,
    StoreTables,
    _chunks_schema,
    _files_schema,
    _in_list,
    _links_schema,
    _slices,
    sql_str,
    table_name,
)

if TYPE_CHECKING:
    from magma.note_bm25_files import NoteBm25Files

__all__ = [
    "FTS_CONFIG",
    "SCHEMA_VERSION",
    "ApplyStats",
    "AttachmentRecord",
    "ChunkCandidate",
    "FileRecord",
    "GraphFileRow",
    "IndexedFile",
    "LinkRecord",
    "MagmaStore",
    "NoteRecord",
    "StoreCounts",
    "cache_bytes",
    "chunk_vector_batches",
    "graph_file_rows",
    "graph_reads",
    "index_dropped_at_open",
    "known_vectors_among",
    "link_records",
    "maintenance_due",
    "search_filter",
    "sql_str",
    "store_changed_under",
    "stored_content_hashes",
    "stored_problems",
    "table_name",
    "text_index_behind",
]

log = structlog.get_logger("dreamd.store")

#: Files that index the memory folder (Claude Code's MEMORY.md, dreamd's dream diary); they
#: name every owner's memories, so owner-scoped searches never return them.
INDEX_FILE_NAMES = (MEMORY_INDEX_FILE, DIARY_FILE)
#: Chunk rows per batch of :func:`chunk_vector_batches`: 16,384 × 2 KB = 32 MB of float32
#: vectors at a time. LanceDB reads batches ahead, so the batch bounds the read's peak: a
#: process streaming the 700,000 chunks of a 100,000-note vault (ids, paths, hashes and
#: vectors, keeping none) peaked at 1,134 MB RSS with 65,536 rows a batch, 815 MB with 16,384
#: and 786 MB with 8,192, each as fast (a probe of ``to_batches`` on
#: ``bench/vector_daemon_bench.py``'s table).
VECTOR_BATCH_ROWS = 16_384
# SQL IN-lists are sent in slices of this many values (keeps each filter string small).
_IN_SLICE = 500
#: The columns of the files table an :class:`IndexedFile` holds, in its field order.
_INDEX_COLUMNS = ("path", "kind", "size", "mtime_ns", "content_hash", "note_id", "memory_id",
                  "memory_type")


def _read_of(tables: StoreTables, table: Any, columns: list[str], where: str | None,
             only: tuple[str, Collection[str] | None], with_row_id: bool = False) -> pa.Table:
    """The rows of ``table`` matching ``where`` with ``columns`` (and ``_rowid`` when
    ``with_row_id``); only those whose column ``only[0]`` is in ``only[1]`` when that is not
    ``None`` (read in slices, in the table's order within each slice). Raises
    :class:`StoreError`."""
    column, values = only
    if values is None:
        return tables.read(table, columns, where, with_row_id)
    parts = [tables.read(table, columns, " AND ".join(filter(None, [where, _in_list(
        column, part)])), with_row_id) for part in _slices(sorted(set(values)))]
    if not parts:
        return tables.read(table, columns, "false", with_row_id)
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


#: A request for at least this share of a table's rows reads every row and keeps those
#: asked for, instead of querying the values in slices of 500: the chunk ids of the 10,000
#: memories of ``bench/dream_bench.py`` in 0.01 s of CPU instead of 0.17 s, their vectors in
#: 0.03 s instead of 0.29 s (a dream asks for every memory's).
WHOLE_READ_SHARE = 0.5


def _most_of(table: Any, wanted: int) -> bool:
    """Is ``wanted`` values (more than one slice) :data:`WHOLE_READ_SHARE` of ``table``'s
    rows or more? ``False`` when its rows cannot be counted (the values are queried)."""
    if wanted <= _IN_SLICE:
        return False
    try:
        rows = int(table.count_rows())
    except Exception:  # (the query reports what is wrong with the table)
        return False
    return wanted >= rows * WHOLE_READ_SHARE


def _stored_vectors(tables: StoreTables, wanted: Sequence[str], dims: int
                    ) -> dict[str, np.ndarray]:
    """``{content_hash: float32[dims]}`` of the stored chunks with the ``wanted`` hashes (the
    first row of each), queried in slices, or read from every row when they are most of the
    table (:func:`_most_of`)."""
    keep = set(wanted) if _most_of(tables.chunks, len(set(wanted))) else None
    parts = [None] if keep is not None else [
        _in_list("content_hash", part) for part in _slices(wanted)]
    found: dict[str, np.ndarray] = {}
    for where in parts:
        table = tables.read(tables.chunks, ["content_hash", "vector"], where)
        if table.num_rows == 0:
            continue
        flat = table.column("vector").combine_chunks().flatten().to_numpy()
        matrix = np.asarray(flat, dtype=np.float32).reshape(table.num_rows, dims)
        for i, chash in enumerate(table.column("content_hash").to_pylist()):
            if keep is None or chash in keep:
                found.setdefault(chash, matrix[i].copy())
    return found


def stored_content_hashes(store: MagmaStore) -> set[str]:
    """Every content hash the chunks table holds: one read of that column (none of an
    empty table). Raises :class:`StoreError`."""
    tables = store._t
    if not tables.retrying(tables.chunks.count_rows):
        return set()
    return set(tables.read(tables.chunks, ["content_hash"]).column("content_hash").to_pylist())


def known_vectors_among(store: MagmaStore, hashes: Collection[str],
                        stored: Callable[[str], bool]) -> dict[str, np.ndarray]:
    """:meth:`MagmaStore.known_vectors` of ``hashes``, the table read only for those that
    ``stored`` says it may hold (a large reconcile knows what the table held when it began
    and what was written since: a cold index reads no vector back). Raises
    :class:`StoreError`."""
    found, wanted = store.recent_vectors.split(hashes)
    wanted = [chash for chash in wanted if stored(chash)]
    if wanted:
        for chash, vector in _stored_vectors(store._t, wanted, store.dims).items():
            found.setdefault(chash, vector)
    return found


def _column_map(read: Callable[[Any, list[str], str | None], pa.Table], table: Any,
                pair: tuple[str, str], column: str, values: Collection[str] | None
                ) -> dict[str, str]:
    """``{key: value}`` (``pair``) of the rows of ``table`` whose ``column`` is in ``values``
    (every row: ``None``), read with ``read(table, columns, where)``: every row read and
    those of ``values`` kept when they are most of the table (:func:`_most_of`)."""
    key, value = pair
    wanted = None if values is None else set(values)
    if wanted is not None and _most_of(table, len(wanted)):
        data = read(table, list(dict.fromkeys((key, value, column))), None).to_pydict()
        return {k: v for k, v, c in zip(data[key], data[value], data[column], strict=True)
                if c in wanted}
    parts: list[str | None] = [None] if wanted is None else [
        _in_list(column, part) for part in _slices(sorted(wanted))]
    found: dict[str, str] = {}
    for where in parts:
        data = read(table, [key, value], where).to_pydict()
        found.update(zip(data[key], data[value], strict=True))
    return found


# ---------------------------------------------------------------------------- records


class IndexedFile(NamedTuple):
    """What reconcile needs to decide whether a file changed: size (bytes), mtime (ns), hash.
    A named tuple: a start reads one of every file (100,000 at 100,000 notes), and a tuple is
    made ≈4× faster than a frozen dataclass (20 -> 5 ms of CPU at 7,049 files)."""

    path: str
    kind: FileKind
    size: int
    mtime_ns: int
    content_hash: str
    note_id: str
    memory_id: str | None
    memory_type: str | None = None


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One row of ``files``: a note's metadata as indexed (``properties`` decoded from JSON:
    dates are ISO strings there)."""

    path: str
    note_id: str
    kind: FileKind
    size: int
    mtime_ns: int
    content_hash: str
    title: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    memory_type: str | None
    memory_id: str | None
    memory_name: str | None
    memory_description: str | None
    properties: Mapping[str, Any]
    problems: tuple[Problem, ...]
    indexed_at: datetime


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """One row of ``links``: ``src`` note path, ``target`` as written, the resolved path."""

    src: str
    target: str
    kind: str
    subpath: str | None
    resolved: str | None
    line: int


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """A parsed note ready to store: its chunks and their vectors (``float32[len(chunks),
    dims]``, row i belongs to ``chunks[i]``). ``note_id`` is the memory id if the note has
    one, else an id the caller assigned (stable across renames when the caller can tell)."""

    note: Note
    note_id: str
    size: int
    mtime_ns: int
    chunks: Sequence[Chunk]
    vectors: np.ndarray


@dataclass(frozen=True, slots=True)
class AttachmentRecord:
    """A non-markdown vault file: a graph node, never text. ``content_hash`` may be empty
    when the caller does not hash attachments."""

    entry: FileEntry
    note_id: str
    content_hash: str = ""


@dataclass(frozen=True, slots=True)
class ApplyStats:
    """What one :meth:`MagmaStore.apply` wrote (row counts)."""

    files_written: int = 0
    files_deleted: int = 0
    chunks_written: int = 0
    links_written: int = 0


@dataclass(frozen=True, slots=True)
class StoreCounts:
    """Row counts for ``dreamd status``."""

    files: int
    notes: int
    attachments: int
    chunks: int
    memories: int
    links: int
    unresolved_links: int
    fts_unindexed_rows: int = 0


@dataclass(frozen=True, slots=True)
class ChunkCandidate:
    """One chunk returned by a vector or full-text query, best first.

    ``score`` is the cosine similarity (vector; 1 = same direction) or the BM25 score
    (full text; unbounded, higher is better). ``body`` is the body segment, ``text`` the
    embedded text (prefix + body)."""

    chunk_id: str
    path: str
    note_id: str
    title: str
    heading_path: str
    body: str
    text: str
    memory_type: str | None
    owner: str | None
    score: float
    vector: np.ndarray | None = None


# ---------------------------------------------------------------------------- schemas


def _json_default(value: object) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def _to_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=_json_default, sort_keys=False)


# ---------------------------------------------------------------------------- store


class MagmaStore:
    """Read and write the MAGMA tables of one vault. Construct with :meth:`open`."""

    def __init__(self, tables: StoreTables, *, vault_path: str, model_id: str, dims: int
                 ) -> None:
        self._t = tables
        self.uri = tables.uri
        self.vault_path, self.model_id, self.dims = vault_path, model_id, dims
        self._paths: set[str] | None = None
        self._file_index = FileIndexMemo()
        self._properties = TableMemo()  # memory_properties() of every memory
        self._unresolved, self._problems = TableMemo(), TableMemo()  # (of their reads)
        self.recent_vectors = RecentVectors()  # (also a draft's, about to be written)
        self._resolver: LinkResolver | None = None
        self._changes = StoreChanges()
        self.written = WrittenRows()  # (what the graph reads of our batches)
        #: The versions at which no orphan can be there (:mod:`magma.store_seal`).
        self.seal = IndexSeal()
        #: The saved note-level BM25 index (:mod:`magma.note_bm25_files`), emptied by a purge.
        self.note_index: NoteBm25Files | None = None

    # ------------------------------------------------------------------ open

    @classmethod
    def open(
        cls, uri: str, *, vault_path: str, model_id: str, dims: int, device: str | None = None,
        storage_options: Mapping[str, str] | None = None, vector_index_above: int | None = None,
        seal: Path | None = None, note_index: Path | None = None,
        index_cache_bytes: int = INDEX_CACHE_BYTES,
    ) -> MagmaStore:
        """Open (or create) the store at ``uri`` for ``vault_path`` and embedding ``model_id``.

        ``device`` names this device's tables when several devices share one store
        (``files-<device>`` …; :func:`table_name`); ``None`` uses the plain names.
        ``storage_options``: LanceDB's storage options for an object-store ``uri`` (endpoint,
        region, credentials; ``storage.options``). ``vector_index_above``: chunks above which
        :meth:`maintain` builds the vector index (``retrieval.ann_vectors_above``; ``None``: never).
        ``seal``: the file of the tables' seal (:mod:`magma.store_seal`; ``None``: every full
        reconcile reads every chunk's path). ``note_index``: the folder of the saved note-level BM25
        index (:attr:`note_index`; ``None``: none). ``index_cache_bytes``: LanceDB's index cache
        bound (``storage.index_cache_mb``). Raises :class:`StoreMismatchError` when the store was
        built for another vault path, model id, vector width or schema version (the message names
        both values), and :class:`StoreError` when the database cannot be opened or created."""
        tables = StoreTables.open(uri, vault_path=vault_path, model_id=model_id, dims=dims,
                                  device=device, storage_options=storage_options,
                                  index_cache_bytes=index_cache_bytes)
        tables.vector_index_above = vector_index_above
        store = cls(tables, vault_path=vault_path, model_id=model_id, dims=dims)
        store.seal = IndexSeal(seal)
        store.note_index = _note_index_files(note_index)
        return store

    # ------------------------------------------------------------------ reads

    def stored_hashes(self, hashes: Collection[str]) -> set[str]:
        """Which of ``hashes`` some stored chunk holds now (a read of the chunks table's
        ``content_hash`` column); the vectors this process kept of the others are dropped,
        so a forgotten text leaves none behind. Raises :class:`StoreError`."""
        stored = {h for part in _slices(sorted(set(hashes))) for h in self._t.read(
            self._t.chunks, ["content_hash"], _in_list("content_hash", part)
        ).column("content_hash").to_pylist()}
        self.recent_vectors.drop(set(hashes) - stored)
        return stored

    def file_index(self) -> dict[str, IndexedFile]:
        """``{path: IndexedFile}`` for every stored file (a new dict): one columnar read,
        kept while the files table stays at its version (:class:`FileIndexMemo`)."""
        version = self._files_version()
        kept = self._file_index.get(version)
        if kept is not None:
            return kept
        cols = list(_INDEX_COLUMNS)
        data = self._t.read(self._t.files, cols).to_pydict()
        rows = map(IndexedFile._make, zip(*(data[c] for c in cols), strict=True))
        index = dict(zip(data["path"], rows, strict=True))
        if self._paths != set(index):
            self._paths, self._resolver = set(index), None
        self._file_index.keep(version, index)
        return index

    def _files_version(self) -> int | None:
        return _table_version(self._t.files)

    def known_vectors(self, hashes: Collection[str]) -> dict[str, np.ndarray]:
        """``{chunk content_hash: float32[dims]}`` for the hashes stored (any path) or written
        by this process a moment ago or about to be (a ``remember``'s draft): ``recent_vectors``,
        :data:`RECENT_VECTORS`; so that an unchanged chunk is never embedded twice, also
        across renames. What is stored *now*: :meth:`stored_hashes`."""
        found, wanted = self.recent_vectors.split(hashes)
        for chash, vector in _stored_vectors(self._t, wanted, self.dims).items():
            found.setdefault(chash, vector)
        return found

    def chunk_hashes(self, paths: Collection[str] | None = None) -> dict[str, str]:
        """``{chunk_id: content_hash}`` of every chunk, or of the chunks of ``paths``."""
        return _column_map(self._t.read, self._t.chunks, ("chunk_id", "content_hash"), "path",
                           paths)

    def chunk_bodies(self, hashes: Collection[str] | None = None) -> dict[str, str]:
        """``{content_hash: body}`` of every chunk, or of those with ``hashes`` (the hash is
        taken over text that ends with the body). Raises :class:`StoreError`."""
        return _column_map(self._t.read, self._t.chunks, ("content_hash", "body"),
                           "content_hash", hashes)

    def memory_properties(self, paths: Collection[str] | None = None
                          ) -> dict[str, Mapping[str, Any]]:
        """``{path: properties}`` of every memory row (or of those at ``paths``; properties
        decoded from JSON, dates are ISO strings), for checks that must not re-read unchanged
        files."""
        where = "memory_type IS NOT NULL"
        if paths is None:  # every memory: kept while the files table stays at its version
            return dict(self._properties.read(self._files_version(),
                                              lambda: _properties(self._t, where)))
        if not paths:
            return {}
        return _properties(self._t, f"{where} AND {_in_list('path', sorted(set(paths)))}")

    def unresolved_links(self, sources: Collection[str] | None = None) -> list[LinkRecord]:
        """Links (from ``sources``, default every note) that resolve to no vault file, by
        source and position."""
        wanted = None if sources is None else set(sources)
        if wanted is not None and not wanted:
            return []
        every = self._unresolved.read(_table_version(self._t.links),  # kept per version
                                      lambda: _unresolved(self._t))
        return [r for r in every if wanted is None or r.src in wanted]

    def counts(self) -> StoreCounts:
        """Row counts of every table (for ``dreamd status``)."""
        try:
            files = self._t.files
            unindexed = 0
            if self._t.fts_ready():
                stats = self._t.chunks.index_stats(FTS_INDEX_NAME)
                unindexed = stats.num_unindexed_rows if stats is not None else 0
            return StoreCounts(
                files=files.count_rows(),
                notes=files.count_rows("kind = 'note'"),
                attachments=files.count_rows("kind = 'attachment'"),
                chunks=self._t.chunks.count_rows(),
                memories=files.count_rows("memory_type IS NOT NULL"),
                links=self._t.links.count_rows(),
                unresolved_links=self._t.links.count_rows("resolved IS NULL"),
                fts_unindexed_rows=unindexed,
            )
        except Exception as exc:
            raise StoreError(f"magma: count rows in {self.uri}: {exc}") from exc

    def changes_since(self, versions: Mapping[str, int]) -> StoreDelta | None:
        """What this process's batches wrote since the tables were at ``versions``, up to now
        (:class:`magma.store_memo.StoreChanges`; ``None``: read the tables whole)."""
        return self._changes.since(versions, self.versions())

    def versions(self) -> dict[str, int]:
        """Current LanceDB version of each table (grows by one per commit)."""
        return {
            "files": self._t.files.version,
            "chunks": self._t.chunks.version,
            "links": self._t.links.version,
        }

    # ------------------------------------------------------------------ search reads

    def vector_candidates(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        memory_types: Collection[str] | None = None,
        path_prefix: str | None = None,
        owner: Owner | None = None,
        with_vectors: bool = False,
    ) -> list[ChunkCandidate]:
        """Nearest chunks by cosine similarity (flat scan, filters applied before the scan)."""
        if self._t.chunks.count_rows() == 0:
            return []
        def query() -> Any:
            return (self._t.chunks.search(np.asarray(vector, dtype=np.float32),
                                          query_type="vector").distance_type("cosine")
                    .bypass_vector_index())

        return [_candidate(row, 1.0 - float(row["_distance"])) for row in self._candidate_rows(
            query, "vector search", limit, with_vectors,
            search_filter(memory_types, path_prefix, owner))]

    def nearest_chunk_ids(self, vector: np.ndarray, limit: int, where: str | None = None
                          ) -> list[tuple[str, str, float]] | None:
        """:meth:`StoreTables.nearest_chunk_ids`. Raises :class:`StoreError`."""
        return self._t.nearest_chunk_ids(vector, limit, where)

    def vector_index(self) -> str | None:
        """:meth:`StoreTables.vector_index`. Raises :class:`StoreError`."""
        return self._t.vector_index()


    def fulltext_candidates(
        self,
        query_text: str,
        *,
        limit: int,
        memory_types: Collection[str] | None = None,
        path_prefix: str | None = None,
        owner: Owner | None = None,
        with_vectors: bool = False,
    ) -> list[ChunkCandidate]:
        """Best chunks by BM25 on ``text`` (words OR-ed, no query syntax: quotes, colons and
        operators are plain characters); equal scores (copies) in path order, not LanceDB's."""
        if not query_text.strip() or not self._t.fts_ready():
            return []
        def query() -> Any:
            return self._t.chunks.search(MatchQuery(
                query_text, "text", boost=1.0, fuzziness=0, max_expansions=50,
                operator=FullTextOperator.OR, prefix_length=0, document_granularity=None,
            ), query_type="fts")

        return sorted((_candidate(row, float(row["_score"])) for row in self._candidate_rows(
            query, "full-text search", limit, with_vectors, search_filter(
                memory_types, path_prefix, owner))), key=lambda c: (-c.score, c.path, c.chunk_id))

    def _candidate_rows(self, build: Callable[[], Any], what: str, limit: int,
                        with_vectors: bool, where: str | None) -> list[dict[str, Any]]:
        def rows() -> list[dict[str, Any]]:
            query = build().select([*_CANDIDATE_COLUMNS, *(["vector"] if with_vectors else [])])
            query = query.limit(limit)
            if where:
                query = query.where(where, prefilter=True)
            return list(query.to_list())

        try:
            return self._t.retrying(rows)
        except Exception as exc:
            raise StoreError(f"magma: {what} in {self.uri}: {exc}") from exc

    def catalogue_rows(self, paths: Collection[str] | None = None) -> pa.Table:
        """Every note's (not attachment's) searchable metadata, one row per note (of
        ``paths`` only, when given): ``path``, ``note_id``, ``title``, ``tags``, ``aliases``,
        ``memory_type``, ``memory_id``, ``memory_name``, ``memory_description``, ``owner``,
        ``properties_json``, ``mtime_ns`` (the search's in-memory catalogue). Raises
        :class:`StoreError`."""
        return _read_of(self._t, self._t.files, [
            "path", "note_id", "title", "tags", "aliases", "memory_type", "memory_id",
            "memory_name", "memory_description", "owner", "properties_json", "mtime_ns",
        ], "kind = 'note'", ("path", paths))

    def memory_chunks(self, paths: Collection[str] | None = None) -> pa.Table:
        """Every chunk of a memory (of ``paths`` only, when given): ``path``, ``ordinal``,
        ``body``, in note order. Raises :class:`StoreError`."""
        return _read_of(self._t, self._t.chunks, ["path", "ordinal", "body"],
                        "memory_type IS NOT NULL", ("path", paths))

    def link_pairs(self, sources: Collection[str] | None = None) -> pa.Table:
        """``src``, ``target`` (as written) and ``resolved`` of every link (from ``sources``
        only, when given) that resolves to a vault file (the edges between notes, for the
        graph). Raises :class:`StoreError`."""
        return _read_of(self._t, self._t.links, ["src", "target", "resolved"],
                        "resolved IS NOT NULL", ("src", sources))

    def chunk_vectors(self, paths: Collection[str] | None = None) -> pa.Table:
        """Every chunk's (of ``paths`` only, when given) ``chunk_id``, ``path``,
        ``content_hash``, ``vector`` (``float32[dims]``) and ``_rowid`` (its address in the
        table): what an in-memory vector search needs. Raises :class:`StoreError`."""
        return _read_of(self._t, self._t.chunks, ["chunk_id", "path", "content_hash", "vector"],
                        None, ("path", paths), with_row_id=True)

    def chunks_by_id(self, chunk_ids: Collection[str], *, with_vectors: bool = True,
                     addresses: Mapping[str, int] | None = None) -> list[ChunkCandidate]:
        """The chunks with ``chunk_ids`` as candidates (``score`` 0), with their ``vector``
        unless ``with_vectors`` is false (a search that scores on its in-memory rows reads
        the texts only: 2 KB of float32 less a chunk read from disk). ``addresses``: where
        some of them were in the table (:func:`chunks_at`), taken there and each checked to
        be the chunk asked for; the rest, and any an address no longer finds, by id. Raises
        :class:`StoreError`."""
        wanted = set(chunk_ids)
        found = _chunks_at_known(self, wanted, with_vectors, addresses or {})
        wanted -= {c.chunk_id for c in found}
        return found + (_chunks_where(self, "chunk_id", wanted, with_vectors) if wanted else [])

    def chunks_of(self, paths: Collection[str], *, with_vectors: bool = True
                  ) -> list[ChunkCandidate]:
        """Every chunk of the notes at ``paths`` as candidates (``score`` 0), with their
        ``vector`` unless ``with_vectors`` is false. Raises :class:`StoreError`."""
        return _chunks_where(self, "path", paths, with_vectors)

    # ------------------------------------------------------------------ writes

    def apply(
        self,
        *,
        upserts: Sequence[NoteRecord] = (),
        attachments: Sequence[AttachmentRecord] = (),
        deletes: Collection[str] = (),
        touches: Sequence[FileEntry] = (),
        now: datetime | None = None,
    ) -> ApplyStats:
        """Write one batch: chunks and links a delete and an append each (links also a merge
        of other notes' re-resolved rows), then the file rows in one commit.

        ``upserts`` replace every row of those notes (file row, all chunks, all links);
        ``attachments`` upsert file rows; ``deletes`` remove files and their chunks and links;
        ``touches`` update only ``size``/``mtime_ns`` of files whose content did not change.
        Links of the batch are resolved against the paths stored after the batch; when the
        set of paths changes, links of other notes are re-resolved in the same commit; an empty
        batch writes nothing. ``now`` stamps ``indexed_at`` (default: now, UTC). Raises
        :class:`StoreError` on a write failure or vectors misaligned with chunks."""
        stamp, deleted = now or datetime.now(UTC), set(deletes)
        if not (upserts or attachments or deleted or touches):  # 1.5 s of a restart at 100k
            return ApplyStats(0, 0, 0, 0)  # notes went to a resolver of every path
        for record in upserts:
            if record.vectors.shape != (len(record.chunks), self.dims):
                raise StoreError(
                    f"magma: apply {record.note.path}: vectors shape {record.vectors.shape}, "
                    f"expected ({len(record.chunks)}, {self.dims})"
                )
        try:
            versions = self.versions()
            before = self._known_paths()
            after = (before - deleted) | {r.note.path for r in upserts}
            after |= {a.entry.path for a in attachments}
            # Chunks and links first, the file rows last: a file row (with its content hash)
            # is the mark that a note is fully indexed, so a crash in between is healed by
            # the next reconcile re-indexing that note.
            changed_paths = (after ^ before) | (deleted - before)  # (orphans deleted too)
            resolver = self._link_resolver(before)
            for path in changed_paths:
                if path in after:
                    resolver.add(path)
                else:
                    resolver.discard(path)
            # sealed (no orphan): a path without a file row has no chunk or link row to delete
            empty = after - before if self.seal.holds(versions) else set()
            chunks_written = _write_chunks(self._t, self.recent_vectors, self.dims, upserts,
                                           deleted, empty)
            links, others = _write_links(self._t, upserts, deleted, resolver, changed_paths, empty)
            files_written = self._write_files(upserts, attachments, deleted, touches, stamp)
        except Exception as exc:
            self._paths = self._resolver = None  # re-read from the tables next time
            self.written.forget()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(
                f"magma: apply batch ({len(upserts)} notes, {len(deleted)} deletes) to "
                f"{self.uri}: {type(exc).__name__}: {exc}"
            ) from exc
        self._paths = after
        written = {r.note.path for r in upserts} | {a.entry.path for a in attachments}
        self._changes.record(versions, done := self.versions(),
                             written | deleted | {t.path for t in touches},
                             same_paths=after == before)
        self.seal.carry(versions, done)
        _keep_written(self.written, written | deleted | others, upserts, attachments, links, stamp)
        return ApplyStats(files_written, len(deleted & before), chunks_written,
                          len(links) + len(others))

    def orphaned_paths(self) -> set[str]:
        """Paths that have chunk or link rows but no file row (:func:`orphaned_paths`)."""
        return orphaned_paths(self._t)

    def relink(self) -> set[str]:
        """Resolve every stored link again against the file rows and write the rows whose
        resolution differs, in one commit (:func:`stale_links`: what a crash between a
        batch's link and file commits can leave; a sweep's work); their sources. Raises
        :class:`StoreError`."""
        versions = self.versions()
        try:
            rows = stale_links(self._t, LinkResolver(self._known_paths()))
            if rows:
                self._t.replace(self._t.links, "link_id", "src",
                                pa.Table.from_pylist(rows, schema=_links_schema()), [])
        except Exception as exc:
            raise StoreError(f"magma: relink {self.uri}: {type(exc).__name__}: {exc}") from exc
        sources = {row["src"] for row in rows}
        if sources:
            self._changes.record(versions, self.versions(), sources, same_paths=True)
            self.written.after(sources, [])
        return sources

    def refresh(self, *, if_behind: bool = False) -> None:
        """Let a long-lived reader see what the writer process committed since it opened
        (:meth:`StoreTables.refresh`); ``if_behind``: only when another process committed
        since (a refresh makes the next write reload what it cached). Raises
        :class:`StoreError`."""
        if if_behind and not self._t.behind():
            return
        self._t.refresh()
        self.written.forget()
        self._paths = None
        self._resolver = None

    def maintain(
        self, cleanup_older_than: timedelta = timedelta(0), *, purge: bool = False
    ) -> None:
        """Compact every table, fold new rows into the full-text index, prune old versions
        (:meth:`StoreTables.maintain`, which says what ``cleanup_older_than`` and ``purge``
        do). Raises :class:`StoreError`."""
        if purge:
            self._paths = None
            self._changes.forget()  # the tables are rewritten whole: readers read them again
        versions = self.versions()
        self._t.maintain(cleanup_older_than, purge=purge)
        self.seal.carry(versions, self.versions())  # rows moved or purged, none orphaned
        if purge and self.note_index is not None:  # (its vocabulary holds the words)
            self.note_index.discard()
        if not purge:  # compaction moves rows, never changes one
            self._changes.record(versions, self.versions(), (), same_paths=True)

    # ------------------------------------------------------------------ internals

    def _known_paths(self) -> set[str]:
        if self._paths is None:
            self._paths = set(self._t.read(self._t.files, ["path"]).column("path").to_pylist())
        return self._paths

    def _link_resolver(self, paths: set[str]) -> LinkResolver:
        if self._resolver is None:
            self._resolver = LinkResolver(paths)
        return self._resolver

    def _write_files(
        self,
        upserts: Sequence[NoteRecord],
        attachments: Sequence[AttachmentRecord],
        deleted: set[str],
        touches: Sequence[FileEntry],
        stamp: datetime,
    ) -> int:
        rows = [_note_row(r, stamp) for r in upserts]
        rows += [_attachment_row(a, stamp) for a in attachments]
        written = {row["path"] for row in rows}
        touched = {t.path: t for t in touches if t.path not in written and t.path not in deleted}
        if touched:
            # Touches are folded into the same commit: read the current rows, patch two fields.
            for part in _slices(sorted(touched)):
                for row in self._t.read(self._t.files, None, _in_list("path", part)).to_pylist():
                    entry = touched[row["path"]]
                    row["size"], row["mtime_ns"] = entry.size, entry.mtime_ns
                    rows.append(row)
        table = self._t.files
        kept, version = self._file_index.writing(), self._files_version()
        if rows:
            data = pa.Table.from_pylist(rows, schema=_files_schema())
            if not deleted and _all_new(kept, version, rows):
                table.add(data)  # (no row to match: an append, not a join over the table)
            else:
                self._t.replace(table, "path", "path", data, sorted(deleted))
        elif deleted:
            table.delete(_in_list("path", sorted(deleted)))
        self._file_index.follow(kept, version, self._files_version(), {
            row["path"]: IndexedFile(*(row[c] for c in _INDEX_COLUMNS)) for row in rows}, deleted)
        return len(rows)



def _write_chunks(tables: StoreTables, recent: RecentVectors, dims: int,
                  upserts: Sequence[NoteRecord], deleted: set[str], empty: set[str]) -> int:
    """Replace the chunk rows of ``upserts`` and ``deleted`` (the sources in ``empty`` hold
    none) and keep the newest vectors in ``recent``; the rows written."""
    rows, vectors = _chunk_rows(upserts, dims)
    replaced = sorted({r.note.path for r in upserts} | deleted)
    n = len(rows["chunk_id"])
    if n:
        stacked = np.concatenate(vectors, axis=0)
        rows["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(stacked.ravel()), dims)
        data = pa.Table.from_pydict(rows, schema=_chunks_schema(dims))
        # a note's own rows: re-indexed whole if a crash falls between the two commits
        tables.rewrite_groups(tables.chunks, "path", data, replaced, empty=empty)
        tables.ensure_fts()
        recent.add(rows["content_hash"], stacked)  # (the last recent.size of them kept)
    elif replaced:
        tables.delete_in(tables.chunks, "path", [p for p in replaced if p not in empty])
    return n


def _all_new(kept: tuple[int, dict[str, Any]] | None, version: int | None,
             rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether no row of ``rows`` has its path in the files table: ``kept`` (the file index
    memo, :class:`magma.store_memo.FileIndexMemo`) was read at the table's ``version`` now
    and holds none of them."""
    return kept is not None and version is not None and kept[0] == version and not any(
        row["path"] in kept[1] for row in rows)


def orphaned_paths(tables: StoreTables) -> set[str]:
    """Paths that have chunk or link rows, or that a link resolves to, but no file row.

    A crash between the chunk and file commits of a *new* note leaves such rows (and other
    notes' links resolved to it); if the note is then deleted before the next start, no
    reconcile would ever name the path. The full reconcile removes them (a delete of a path
    without a file row resolves the links to it again, :meth:`MagmaStore.apply`), unless the
    tables are sealed (:mod:`magma.store_seal`). One column read per table (every chunk's
    path; the links' sources and resolutions). Raises ``StoreError``.
    """
    try:
        files = set(tables.read(tables.files, ["path"]).column("path").to_pylist())
        chunks = set(tables.read(tables.chunks, ["path"]).column("path").to_pylist())
        links = tables.read(tables.links, ["src", "resolved"])
    except Exception as exc:
        raise StoreError(f"magma: read {tables.uri}: {exc}") from exc
    named = set(links.column("src").to_pylist()) | set(links.column("resolved").to_pylist())
    return (chunks | named) - files - {None}


def stale_links(tables: StoreTables, resolver: LinkResolver) -> list[dict[str, Any]]:
    """The stored link rows whose resolution ``resolver`` (of the file rows' paths) answers
    otherwise, with the answer. A batch re-resolves the links its paths change in the commit
    before its file rows (:meth:`MagmaStore.apply`): a crash between the two, then the note
    put back unchanged (moved out and back, mtime kept), leaves them resolved for a set of
    paths the file rows do not have. Reads the links' keys, then the changed rows whole."""
    keys = tables.read(tables.links, ["link_id", "src", "target", "kind", "resolved"])
    wrong = {link_id for link_id, src, target, kind, resolved in zip(
        *(keys.column(c).to_pylist() for c in ("link_id", "src", "target", "kind", "resolved")),
        strict=True) if resolver.resolve(target, src, kind=kind) != resolved}
    rows = []
    for part in _slices(sorted(wrong)):
        for row in tables.read(tables.links, None, _in_list("link_id", part)).to_pylist():
            row["resolved"] = resolver.resolve(row["target"], row["src"], kind=row["kind"])
            rows.append(row)
    return rows


def _write_links(tables: StoreTables, upserts: Sequence[NoteRecord], deleted: set[str],
                 resolver: LinkResolver, changed_paths: set[str], empty: Collection[str] = ()
                 ) -> tuple[list[dict[str, Any]], set[str]]:
    """Replace the link rows of ``upserts`` and ``deleted`` (a delete and an append,
    :meth:`StoreTables.rewrite_groups`; the sources in ``empty`` hold none, nothing deleted)
    and, when the set of paths changed, upsert the other notes' links it re-resolves in one
    ``merge_insert`` commit first; the batch's own rows written, and the sources of the
    other rows."""
    rows = _link_rows(upserts, resolver)
    replaced = {r.note.path for r in upserts} | deleted
    others = _reresolved_links(tables, resolver, changed_paths, replaced) if changed_paths else []
    if others:
        # Other notes' rows in one commit of their own: their files are unchanged, so no
        # reconcile would write them again after a crash (never a delete, then an append).
        tables.replace(tables.links, "link_id", "src",
                       pa.Table.from_pylist(others, schema=_links_schema()), [])
    # the batch's own rows: written again by the next reconcile if a crash falls in between
    tables.rewrite_groups(tables.links, "src", pa.Table.from_pylist(
        rows, schema=_links_schema()), sorted(replaced), empty=empty)
    return rows, {row["src"] for row in others}


def _keep_written(kept: WrittenRows, changed: set[str], upserts: Sequence[NoteRecord],
                  attachments: Sequence[AttachmentRecord], links: Sequence[dict[str, Any]],
                  stamp: datetime) -> None:
    """Keep in ``kept`` (:meth:`magma.store_memo.WrittenRows.after`) what the graph reads of
    a batch's notes (:class:`magma.store_memo.WrittenNote`), made from the rows the batch
    wrote by the functions that convert the rows read back (:func:`graph_file_rows`,
    :func:`link_records`), the ``changed`` paths' older ones dropped; none for a batch of
    more notes than :attr:`~magma.store_memo.WrittenRows.room` (a sync of a whole vault
    builds none after the first few; the graph reads them back)."""
    kept.after(changed, _written_notes(upserts, attachments, links, stamp, kept.room))


def _written_notes(upserts: Sequence[NoteRecord], attachments: Sequence[AttachmentRecord],
                   links: Sequence[dict[str, Any]], stamp: datetime, most: int
                   ) -> list[WrittenNote]:
    """:func:`_keep_written`'s notes (none for more than ``most``)."""
    if not (upserts or attachments) or len(upserts) + len(attachments) > most:
        return []
    rows = [_note_row(r, stamp) for r in upserts] + [_attachment_row(a, stamp)
                                                     for a in attachments]
    files = graph_file_rows(pa.Table.from_pylist(rows, schema=_files_schema()))
    by_src: dict[str, list[LinkRecord]] = {}
    for link in link_records(pa.Table.from_pylist(list(links), schema=_links_schema())):
        by_src.setdefault(link.src, []).append(link)
    texts = {r.note.path: "\n".join(c.text for c in sorted(r.chunks, key=lambda c: c.ordinal))
             for r in upserts if r.note.memory is not None and r.chunks}
    hashes = {row["path"]: row["content_hash"] for row in rows}
    return [WrittenNote(hashes[f.path], f, tuple(by_src.get(f.path, ())), texts.get(f.path))
            for f in files]


_CANDIDATE_COLUMNS = (
    "chunk_id",
    "path",
    "note_id",
    "title",
    "heading_path",
    "body",
    "text",
    "memory_type",
    "owner",
)


def _candidate(row: Mapping[str, Any], score: float) -> ChunkCandidate:
    return ChunkCandidate(
        chunk_id=row["chunk_id"],
        path=row["path"],
        note_id=row["note_id"],
        title=row["title"],
        heading_path=row["heading_path"],
        body=row["body"],
        text=row["text"],
        memory_type=row["memory_type"],
        owner=row["owner"],
        score=score,
        vector=(np.asarray(row["vector"], dtype=np.float32)
                if row.get("vector") is not None else None),
    )


def search_filter(
    memory_types: Collection[str] | None, path_prefix: str | None, owner: Owner | None = None
) -> str:
    """The SQL filter on chunk rows of a search asking for ``memory_types``, a folder
    ``path_prefix`` and an ``owner``'s view (what :meth:`MagmaStore.fulltext_candidates`
    and a filtered vector index search filter with; ``""`` when nothing is asked for)."""
    parts: list[str] = []
    if memory_types is not None:
        types = sorted(set(memory_types))
        parts.append(_in_list("memory_type", types) if types else "false")
    if path_prefix:
        parts.append(f"starts_with(path, {sql_str(path_prefix)})")
    if owner is not None:
        # Index files (MEMORY.md, DREAMS.md) list every owner's memories: an owner's
        # search reads the memories themselves instead.
        parts.append("NOT (" + " OR ".join(
            f"path = '{name}' OR path LIKE '%/{name}' OR path LIKE '%:{name}'"
            for name in INDEX_FILE_NAMES) + ")")
        values = owner.visible_values()
        if values is not None:
            parts.append(f"(owner IS NULL OR {_in_list('owner', values)})")
        else:
            parts.append(f"(owner IS NULL OR owner = {sql_str(owner.user)} "
                         f"OR starts_with(owner, {sql_str(owner.user + '/')}))")
    return " AND ".join(parts)


def _owner_value(note: Note) -> str | None:
    """The ``owner`` column: a memory's owner as ``user[/agent]`` casefolded; an owner that
    does not parse is kept as written (casefolded) so that no reader's filter matches it;
    notes that are not memories have none (an ``owner`` property on a task note is not an
    owner of memories)."""
    if note.memory is None or not note.memory.owner or not note.memory.owner.strip():
        return None
    try:
        return str(parse_owner(note.memory.owner))
    except InvalidOwnerError:
        return "!" + note.memory.owner.strip().casefold()


def _chunk_rows(upserts: Sequence[NoteRecord], dims: int
                ) -> tuple[dict[str, list[Any]], list[np.ndarray]]:
    """The chunks table's columns (without ``vector``) for the notes of a batch, and each
    note's ``float32[chunks, dims]`` vectors (notes without chunks left out)."""
    rows: dict[str, list[Any]] = {name: [] for name in _chunks_schema(dims).names}
    vectors: list[np.ndarray] = []
    for record in upserts:
        note = record.note
        memory_type = note.memory.type if note.memory else None
        owner = _owner_value(note)
        for chunk in record.chunks:
            rows["chunk_id"].append(f"{note.path}#{chunk.ordinal}")
            rows["path"].append(note.path)
            rows["note_id"].append(record.note_id)
            rows["ordinal"].append(chunk.ordinal)
            rows["title"].append(note.title)
            rows["heading_path"].append(HEADING_SEPARATOR.join(chunk.heading_path))
            rows["text"].append(chunk.embed_text)
            rows["body"].append(chunk.text)
            rows["content_hash"].append(chunk.content_hash)
            rows["memory_type"].append(memory_type)
            rows["owner"].append(owner)
        if len(record.chunks):
            vectors.append(np.asarray(record.vectors, dtype=np.float32))
    return rows, vectors


def _link_rows(upserts: Sequence[NoteRecord], resolver: LinkResolver) -> list[dict[str, Any]]:
    """The links table's rows for the notes of a batch, resolved with ``resolver``."""
    rows: list[dict[str, Any]] = []
    for record in upserts:
        src = record.note.path
        for n, link in enumerate(record.note.links):
            rows.append(
                {
                    "link_id": f"{src}#{n}",
                    "src": src,
                    "target": link.target,
                    "target_key": link_key(link.target),
                    "kind": link.kind,
                    "subpath": link.subpath,
                    "resolved": resolver.resolve(link.target, src, kind=link.kind),
                    "line": link.line,
                }
            )
    return rows


def _reresolved_links(
    tables: StoreTables, resolver: LinkResolver, changed_paths: set[str], skip: set[str]
) -> list[dict[str, Any]]:
    """Stored links of notes outside this batch whose resolution the batch changed.

    Only links whose ``target_key`` equals the file name of an added or removed path can
    change, so only those rows are read.
    """
    keys = sorted({path_key(p) for p in changed_paths})
    changed: list[dict[str, Any]] = []
    for part in _slices(keys):
        for row in tables.read(tables.links, None, _in_list("target_key", part)).to_pylist():
            if row["src"] in skip:
                continue
            kind: LinkKind = row["kind"]
            resolved = resolver.resolve(row["target"], row["src"], kind=kind)
            if resolved != row["resolved"]:
                row["resolved"] = resolved
                changed.append(row)
    return changed


def _note_row(record: NoteRecord, stamp: datetime) -> dict[str, Any]:
    note = record.note
    memory = note.memory
    return {
        "path": note.path,
        "note_id": record.note_id,
        "kind": "note",
        "size": record.size,
        "mtime_ns": record.mtime_ns,
        "content_hash": note.content_hash,
        "title": note.title,
        "tags": list(note.tags),
        "aliases": list(note.aliases),
        "memory_type": memory.type if memory else None,
        "memory_id": memory.id if memory else None,
        "memory_name": memory.name if memory else None,
        "memory_description": memory.description if memory else None,
        "owner": _owner_value(note),
        "properties_json": _to_json(dict(note.properties)),
        "problems_json": _to_json(
            [{"path": p.path, "kind": p.kind, "reason": p.reason} for p in note.problems]
        ),
        "indexed_at": stamp,
    }


def _attachment_row(record: AttachmentRecord, stamp: datetime) -> dict[str, Any]:
    entry = record.entry
    return {
        "path": entry.path,
        "note_id": record.note_id,
        "kind": entry.kind,
        "size": entry.size,
        "mtime_ns": entry.mtime_ns,
        "content_hash": record.content_hash,
        "title": posixpath.basename(entry.path),
        "tags": [],
        "aliases": [],
        "memory_type": None,
        "memory_id": None,
        "memory_name": None,
        "memory_description": None,
        "owner": None,
        "properties_json": "{}",
        "problems_json": "[]",
        "indexed_at": stamp,
    }


def stored_problems(store: MagmaStore) -> dict[str, tuple[Problem, ...]]:
    """``{path: problems}`` of every indexed note that had problems when it was read (a
    frontmatter that is not YAML, a property that cannot be read …), as sync recorded them:
    one read of two columns, for ``dreamd check``, which does not read unchanged files; kept
    while the files table stays at its version (a check where nothing changed reads none).
    Raises :class:`StoreError`."""
    return dict(store._problems.read(store._files_version(), lambda: _problems(store._t)))


def _problems(tables: StoreTables) -> dict[str, tuple[Problem, ...]]:
    data = tables.read(tables.files, ["path", "problems_json"],
                       "problems_json != '[]'").to_pydict()
    return {path: tuple(Problem(**p) for p in json.loads(raw))
            for path, raw in zip(data["path"], data["problems_json"], strict=True)
            if raw and raw != "[]"}


def _file_record(row: Mapping[str, Any]) -> FileRecord:
    return FileRecord(
        path=row["path"],
        note_id=row["note_id"],
        kind=row["kind"],
        size=row["size"],
        mtime_ns=row["mtime_ns"],
        content_hash=row["content_hash"],
        title=row["title"],
        tags=tuple(row["tags"] or ()),
        aliases=tuple(row["aliases"] or ()),
        memory_type=row["memory_type"],
        memory_id=row["memory_id"],
        memory_name=row["memory_name"],
        memory_description=row["memory_description"],
        properties=json.loads(row["properties_json"]),
        problems=tuple(Problem(**p) for p in json.loads(row["problems_json"])),
        indexed_at=row["indexed_at"],
    )


#: Columns of ``files`` the vault graph reads (no vectors, no problems).
_GRAPH_FILE_COLUMNS = ["path", "kind", "title", "tags", "memory_type", "properties_json"]


@dataclass(frozen=True, slots=True)
class GraphFileRow:
    """What the vault graph reads of a ``files`` row (``magma.graph.GraphFile`` fits):
    ``properties`` decoded from JSON (dates are ISO strings), ``{}`` for attachments."""

    path: str
    kind: str
    title: str
    tags: tuple[str, ...]
    memory_type: str | None
    properties: Mapping[str, Any]


#: Columns of ``links`` a :class:`LinkRecord` holds, in its field order.
_LINK_COLUMNS = ["src", "target", "kind", "subpath", "resolved", "line"]


def graph_file_rows(table: pa.Table) -> list[GraphFileRow]:
    """``table`` (``files`` rows with at least the columns the graph reads) as
    :class:`GraphFileRow`, sorted by path: sorted in Arrow, each column turned into Python
    once (a dict per row, then a dataclass from it, cost a third of a second on 8,049 files:
    ``bench/graph_bench.py``)."""
    table = table.sort_by([("path", "ascending")])  # UTF-8 byte order = code point order
    paths, kinds, titles, types = (_interned(table.column(c).to_pylist())
                                   for c in ("path", "kind", "title", "memory_type"))
    tags, props = (table.column(c).to_pylist() for c in ("tags", "properties_json"))
    return [GraphFileRow(path, kind, title or "", tuple(map(sys.intern, tag or ())),
                         memory_type, json.loads(prop) if prop and prop != "{}" else {})
            for path, kind, title, tag, memory_type, prop in zip(
                paths, kinds, titles, tags, types, props, strict=True)]


def _interned(values: list[Any]) -> list[Any]:
    """``values`` with each string :func:`sys.intern`-ed (``None`` kept): Arrow gives each row
    a string of its own, and the vault graph holds these for the daemon's life — a link's
    source path once per link, its kind, its target and heading repeated across notes (at
    100,000 notes and 368,000 links the rows read take 435 -> 273 MB,
    ``bench/graph_memory.py``)."""
    intern = sys.intern
    return [intern(v) if v is not None else None for v in values]


def link_records(table: pa.Table) -> list[LinkRecord]:
    """``table`` (``links`` rows with the columns of :class:`LinkRecord`) as records sorted
    by source, then line, then target (Arrow's sort is stable: links of one line with one
    target keep their order, as Python's ``sorted`` keeps it)."""
    table = table.sort_by([("src", "ascending"), ("line", "ascending"),
                           ("target", "ascending")])
    return list(map(LinkRecord, *(_interned(table.column(c).to_pylist()) if c != "line"
                                  else table.column(c).to_pylist() for c in _LINK_COLUMNS)))


def chunk_vector_batches(store: MagmaStore, batch_rows: int = VECTOR_BATCH_ROWS
                         ) -> tuple[int, Iterator[pa.RecordBatch]]:
    """The number of chunk rows and every chunk's ``chunk_id``, ``path``, ``content_hash``,
    ``vector`` (``float32[dims]``) and ``_rowid`` (its address in the table) in batches of at
    most ``batch_rows``, from one version of the chunks table: what the in-memory vector
    index is built from without holding every float32 vector at once. Raises
    :class:`StoreError` (also while the batches are read)."""
    table = store._t.chunks
    columns = ["chunk_id", "path", "content_hash", "vector"]
    try:
        rows = store._t.retrying(table.count_rows)
        reader = store._t.retrying(lambda: table.search().select(columns).with_row_id(True)
                                   .limit(None).to_batches(batch_rows))
    except Exception as exc:
        raise StoreError(f"magma: read chunks in {store.uri}: {exc}") from exc

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            yield from reader
        except Exception as exc:
            raise StoreError(f"magma: read chunks in {store.uri}: {exc}") from exc

    return int(rows), batches()


def chunks_at(store: MagmaStore, addresses: Sequence[int], with_vectors: bool = False
              ) -> list[ChunkCandidate]:
    """The chunks still at ``addresses`` (LanceDB ``_rowid``s, :func:`chunk_addresses`) as
    candidates (``score`` 0): 40 chunks of the 928,740 of ``bench/scale_bench.py``'s store in
    8.2 ms of CPU against 17.8 ms through the id's index, 10 in 3.4 against 10.3
    (``bench/chunk_reads_bench.py``, this 2-core machine at load 5.3). An
    address the table no longer has (its row deleted, the table compacted since) gives
    nothing, and so does a table that cannot be read so (the caller reads by id)."""
    columns = [*_CANDIDATE_COLUMNS, *(["vector"] if with_vectors else [])]
    try:
        rows = store._t.chunks.take_row_ids(list(addresses)).select(columns).to_arrow()
    except Exception as exc:  # (a store that cannot take rows so: read by id)
        log.debug("store.take_by_address_failed", error=str(exc)[:200])
        return []
    return [_candidate(row, 0.0) for row in rows.to_pylist()]


def _chunks_where(store: MagmaStore, column: str, values: Collection[str], with_vectors: bool
                  ) -> list[ChunkCandidate]:
    """The chunks whose ``column`` is one of ``values``, as candidates (``score`` 0)."""
    columns = [*_CANDIDATE_COLUMNS, *(["vector"] if with_vectors else [])]
    rows = _read_of(store._t, store._t.chunks, columns, None, (column, values))
    return [_candidate(row, 0.0) for row in rows.to_pylist()]


def _chunks_at_known(store: MagmaStore, wanted: Collection[str], with_vectors: bool,
                     addresses: Mapping[str, int]) -> list[ChunkCandidate]:
    """The chunks of ``wanted`` whose ``addresses`` still find them (:func:`chunks_at`)."""
    known = sorted({addresses[c] for c in wanted if c in addresses})
    return [c for c in chunks_at(store, known, with_vectors) if c.chunk_id in wanted] \
        if known else []


def chunk_addresses(store: MagmaStore) -> pa.Table:
    """Every chunk's ``chunk_id`` and ``_rowid``, its address in the chunks table (the row's
    fragment and offset; it changes when the table is compacted). Raises
    :class:`StoreError`."""
    return store._t.read(store._t.chunks, ["chunk_id"], None, with_row_id=True)


def maintenance_due(store: MagmaStore) -> bool:
    """Whether :meth:`MagmaStore.maintain` has work worth its cost now
    (:meth:`StoreTables.maintenance_due`). Raises :class:`StoreError`."""
    return store._t.maintenance_due()


def index_dropped_at_open(store: MagmaStore) -> int | None:
    """The schema version of the index tables (files, chunks, links, edges) the
    :meth:`MagmaStore.open` of ``store`` dropped, an older dreamd's (``None``: none dropped;
    the next sync rebuilds them from the vault)."""
    return store._t.upgraded_from


def store_changed_under(store: MagmaStore) -> str | None:
    """Why the store ``store`` opened changed under this process, in words for the user
    (a newer dreamd upgraded it, or its tables were removed), or ``None``
    (:meth:`StoreTables.changed_under`). Never raises."""
    return store._t.changed_under()


def cache_bytes(store: MagmaStore) -> int:
    """Bytes LanceDB's caches of ``store``'s connection hold: its index cache, bounded at
    open (``index_cache_bytes``), and its metadata cache."""
    session = store._t.session
    return int(session.size_bytes) if session is not None else 0


def text_index_behind(store: MagmaStore) -> bool:
    """Whether :data:`magma.store_tables.MAINTAIN_UNINDEXED_ROWS` chunks or more are searched
    outside the full-text index, which :meth:`MagmaStore.maintain` folds them into. Reads
    index metadata only. Raises :class:`StoreError`."""
    try:
        return store._t.text_rows_unindexed() >= MAINTAIN_UNINDEXED_ROWS
    except Exception as exc:
        raise StoreError(f"magma: read the full-text index's stats in {store.uri}: {exc}"
                         ) from exc


def graph_reads(store: MagmaStore) -> tuple[list[GraphFileRow], list[LinkRecord]]:
    """Every file (sorted by path) and every link (by source, then position) of ``store``:
    two columnar reads, what :func:`magma.vault_graph.vault_graph` is built from. Raises
    :class:`StoreError`."""
    files = store._t.read(store._t.files, _GRAPH_FILE_COLUMNS)
    links = store._t.read(store._t.links, _LINK_COLUMNS)
    with collector_paused():  # 63,438 records on the bench vault: magma.gc_pause
        return graph_file_rows(files), link_records(links)


def _table_version(table: Any) -> int | None:
    """The LanceDB version ``table`` is at (``None``: it cannot say; read it every time)."""
    try:
        return int(table.version)
    except Exception:
        return None


def _properties(tables: StoreTables, where: str) -> dict[str, Mapping[str, Any]]:
    """``{path: properties}`` of the file rows matching ``where`` (JSON decoded)."""
    data = tables.read(tables.files, ["path", "properties_json"], where).to_pydict()
    return {path: json.loads(props)
            for path, props in zip(data["path"], data["properties_json"], strict=True)}


def _unresolved(tables: StoreTables) -> list[LinkRecord]:
    """Every link that resolves to no vault file, by source, line and target."""
    rows = tables.read(tables.links, ["src", "target", "kind", "subpath", "resolved", "line"],
                       "resolved IS NULL").to_pylist()
    return sorted((LinkRecord(**row) for row in rows), key=lambda r: (r.src, r.line, r.target))


def _note_index_files(folder: Path | None) -> NoteBm25Files | None:
    """The saved note-level BM25 index in ``folder`` (``None``: none kept)."""
    if folder is None:
        return None
    from magma.note_bm25_files import NoteBm25Files  # (bm25s: 0.2 s of import, when used)

    return NoteBm25Files(folder)
