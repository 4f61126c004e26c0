"""The LanceDB side of the MAGMA store: the tables of one store (one device's), their
layouts, the check that a store belongs to this vault and model, and the low-level reads and
writes every table shares (:mod:`magma.store` gives them their meaning)."""

from __future__ import annotations

import posixpath
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import lancedb
import pyarrow as pa
import structlog
from lancedb.index import FTS, BTree

from config.errors import StoreError, StoreMismatchError
from magma.remote_store import open_failure
from magma.vector_ann import ensure_vector_index, nearest_chunk_ids, vector_index_type

__all__ = ["FTS_CONFIG", "INDEX_CACHE_BYTES", "KEY_COLUMNS", "SCHEMA_VERSION", "StoreTables",
           "sql_str", "table_name"]

log = structlog.get_logger("dreamd.store")

T = TypeVar("T")

# SQL IN-lists are sent in slices of this many values (keeps each filter string small).
_IN_SLICE = 500
#: Data fragments a table may hold before a one-shot sync compacts the tables
#: (:meth:`StoreTables.maintenance_due`; our choice: each write of a batch appends one, so a
#: save of one note is compacted with fifteen others instead of alone — at 100,000 notes the
#: compaction is ≈6.5 s, against the < 1 s a save may take to be searchable).
MAINTAIN_FRAGMENTS = 16
#: Chunks searched outside the full-text index (flat, row by row) before a one-shot sync
#: folds them in (:meth:`StoreTables.maintenance_due`), and a running daemon does at its
#: next quiet pause (:mod:`daemon.runner`). Each such row costs every full-text search:
#: measured on the pooled LongMemEval oracle vault (940 notes, 12,713 chunks; a first sync
#: in batches left 9,141 outside the index, under the 10,000 this was before), 40 questions,
#: full-text search p50 / p95 2,418 / 4,921 ms with them, 33 / 117 ms once folded in (3.4 s
#: of maintenance; machine at load ~6, so ~0.25 ms a row there, ~0.1 ms idle). Our choice:
#: 1,000 rows, ~0.1 s a search at most, what a few hundred notes written at once leave; a
#: few saves are not folded in one by one.
MAINTAIN_UNINDEXED_ROWS = 1_000

#: Bumped whenever a table layout changes. A store of an older version has its derived tables
#: (files, chunks, links) dropped at open and rebuilt by the next sync; a newer one is refused.
#: 2: ``owner`` on files and chunks. 3: credentials written by hand into a note are withheld
#: from its chunks, properties and links (an older index may hold them, and a note's unchanged
#: bytes would never be indexed again). 4: a note's properties head its first chunk
#: (:func:`magma.chunking.property_words`; an older index holds notes of properties only as
#: their titles).
SCHEMA_VERSION = 4

#: Full-text index configuration, measured with lancedb 0.40.0 (see tests/magma):
#: ``icu`` segments Chinese ("睡眠" finds 睡眠质量) and English; ``/split`` also splits on
#: punctuation (``my-file_name.md`` -> my, file, name, md). Stop-word removal is OFF because
#: with the ICU tokenizer it applies every language's list: "dog", "cat", "die" were never
#: found. English stemming stays on ("running" finds "run").
FTS_CONFIG = FTS(base_tokenizer="icu/split", remove_stop_words=False)

#: Bytes of LanceDB's index cache of the store's connection (``storage.index_cache_mb``): the
#: full-text posting lists, vector-index partitions and key-index pages searches have read,
#: kept decoded in the heap. LanceDB's own bound is 6 GiB, so a daemon's cache grows towards
#: every index it holds: on the 100,000-note bench index (``bench/warm_memory.py --searches``,
#: the tests' 64-dimension fake vectors) the connection's caches held 63 MB once warm, 201 MB
#: after 50 searches and 235 MB after 50 more of other words, and the process's anonymous
#: memory grew 1,414 -> 1,607 -> 1,639 MB (after ``malloc_trim``). Bounded at 64 MB (the
#: connection's caches then hold 116-118 MB with LanceDB's metadata), RssAnon 1,346 -> 1,435
#: -> 1,438 MB (with :func:`magma.gc_pause.bound_heap`).
INDEX_CACHE_BYTES = 64 * 2**20

FTS_INDEX_NAME = "text_idx"

#: The columns each derived table is looked up or joined by (an SQL ``IN`` list of paths,
#: ids or hashes, or a ``merge_insert`` key): each gets a BTREE scalar index, named
#: ``<column>_idx``, so a lookup reads the index instead of the whole column (a path lookup
#: at 127,283 chunks: 13.6 ms without, 4.2 ms with; ``bench/store_index_bench.py``). Made
#: with the table (an empty table's index costs nothing), or by :meth:`StoreTables.maintain`
#: for a table made before; rows written since are folded in by the table's ``optimize``.
KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "files": ("path",),
    "chunks": ("chunk_id", "path", "content_hash"),
    "links": ("link_id", "src", "target_key"),
    "edges": ("edge_id", "src"),
}


def sql_str(value: str) -> str:
    """Quote ``value`` as an SQL string literal for LanceDB filters (``'`` becomes ``''``)."""
    return "'" + value.replace("'", "''") + "'"


def _in_list(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


def _slices(values: Sequence[str], size: int = _IN_SLICE) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _files_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("note_id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("size", pa.int64(), nullable=False),
            pa.field("mtime_ns", pa.int64(), nullable=False),
            pa.field("content_hash", pa.string(), nullable=False),
            pa.field("title", pa.string(), nullable=False),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("aliases", pa.list_(pa.string())),
            pa.field("memory_type", pa.string()),
            pa.field("memory_id", pa.string()),
            pa.field("memory_name", pa.string()),
            pa.field("memory_description", pa.string()),
            pa.field("owner", pa.string()),
            pa.field("properties_json", pa.string(), nullable=False),
            pa.field("problems_json", pa.string(), nullable=False),
            pa.field("indexed_at", pa.timestamp("us", tz="UTC"), nullable=False),
        ]
    )


def _chunks_schema(dims: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("path", pa.string(), nullable=False),
            pa.field("note_id", pa.string(), nullable=False),
            pa.field("ordinal", pa.int32(), nullable=False),
            pa.field("title", pa.string(), nullable=False),
            pa.field("heading_path", pa.string(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("body", pa.string(), nullable=False),
            pa.field("content_hash", pa.string(), nullable=False),
            pa.field("memory_type", pa.string()),
            pa.field("owner", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dims)),
        ]
    )


def _links_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("link_id", pa.string(), nullable=False),
            pa.field("src", pa.string(), nullable=False),
            pa.field("target", pa.string(), nullable=False),
            pa.field("target_key", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("subpath", pa.string()),
            pa.field("resolved", pa.string()),
            pa.field("line", pa.int32(), nullable=False),
        ]
    )


def _edges_schema() -> pa.Schema:
    """The vault graph's rows (:mod:`magma.edge_table`): a node (``relation`` ``node``) or an
    edge ``src`` → ``dst`` with its ``key`` and attributes, as JSON."""
    return pa.schema(
        [
            pa.field("edge_id", pa.string(), nullable=False),
            pa.field("src", pa.string(), nullable=False),
            pa.field("dst", pa.string(), nullable=False),
            pa.field("key", pa.string(), nullable=False),
            pa.field("relation", pa.string(), nullable=False),
            pa.field("attrs_json", pa.string(), nullable=False),
        ]
    )


def _meta_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("vault_path", pa.string(), nullable=False),
            pa.field("model_id", pa.string(), nullable=False),
            pa.field("dims", pa.int32(), nullable=False),
            pa.field("schema_version", pa.int32(), nullable=False),
            pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),
        ]
    )


#: Tables rebuilt from the vault by a sync (``edges``: from the other three, by
#: :mod:`magma.edge_table`); everything else in a store is kept.
_DERIVED_TABLES = ("files", "chunks", "links", "edges")


def table_name(base: str, device: str | None) -> str:
    """The name of table ``base`` for ``device``: ``files`` alone, ``files-laptop`` in a store
    shared by devices (each device indexes its own copy of the vault; the version history,
    :mod:`magma.versions`, is one table for all)."""
    return base if device is None else f"{base}-{device}"


def _drop_derived(
    db: Any, meta: Any, existing: set[str], old_version: int, device: str | None
) -> None:
    """Drop the derived tables of an older-schema store and stamp the meta row with the
    current version; the caller re-creates them empty and the next sync fills them."""
    for base in _DERIVED_TABLES:
        name = table_name(base, device)
        if name in existing:
            db.drop_table(name)
            existing.discard(name)
    meta.update(values={"schema_version": SCHEMA_VERSION})
    log.warning("store.schema_upgrade",
                error="this dreamd indexes notes differently from the one that built the "
                "index, so the index was emptied; your notes and memories are untouched",
                old=old_version, new=SCHEMA_VERSION,
                hint="run dreamd sync to rebuild it (text indexed before is not embedded "
                "again while the embedding cache holds it); dreamd run rebuilds it by "
                "itself, and a daemon of an older dreamd running now stops: start it again")


def _check_meta(
    uri: str, row: Mapping[str, Any], vault_path: str, model_id: str, dims: int
) -> None:
    def norm(p: str) -> str:
        return posixpath.normpath(p.replace("\\", "/"))

    if norm(row["vault_path"]) != norm(vault_path):
        raise StoreMismatchError(
            f"magma: open store {uri}: built for vault {row['vault_path']!r}, not "
            f"{vault_path!r}; to share one store between devices, give each its own "
            "storage.device name"
        )
    if row["model_id"] != model_id or int(row["dims"]) != dims:
        raise StoreMismatchError(
            f"magma: open store {uri}: built with embedding model {row['model_id']!r} "
            f"({row['dims']} dims), not {model_id!r} ({dims} dims); rebuild the index"
        )
    if int(row["schema_version"]) > SCHEMA_VERSION:
        raise StoreMismatchError(
            f"magma: open store {uri}: schema version {row['schema_version']}, "
            f"newer than this dreamd's {SCHEMA_VERSION}; upgrade dreamd or remove the store"
        )


class StoreTables:
    """The ``meta``, ``files``, ``chunks``, ``links`` and ``edges`` tables of one store.
    Construct with :meth:`open`. ``has_fts``: whether the full-text index exists (``None``:
    ask LanceDB); ``vector_index_above``: chunks above which :meth:`maintain` builds the
    vector index (:func:`magma.vector_ann.ensure_vector_index`; ``None``: never)."""

    def __init__(self, db: Any, *, uri: str, meta: Any, files: Any, chunks: Any,
                 links: Any, edges: Any) -> None:
        self.db = db
        self.uri = uri
        self.meta, self.files, self.chunks, self.links = meta, files, chunks, links
        self.edges = edges
        self.has_fts: bool | None = None
        self.vector_index_above: int | None = None
        #: LanceDB's caches of the connection (``size_bytes``: what its index and metadata
        #: caches hold; ``None``: a connection made without one).
        self.session: Any = None
        #: The schema version of the index tables this open dropped (``None``: none dropped;
        #: the next sync rebuilds them from the vault).
        self.upgraded_from: int | None = None

    @classmethod
    def open(cls, uri: str, *, vault_path: str, model_id: str, dims: int,
             device: str | None, storage_options: Mapping[str, str] | None = None,
             index_cache_bytes: int = INDEX_CACHE_BYTES) -> StoreTables:
        """Open (or create) the tables at ``uri`` (``storage_options``: LanceDB's, for an
        object store; ``index_cache_bytes``: the bound of LanceDB's index cache,
        :data:`INDEX_CACHE_BYTES`); see :meth:`magma.store.MagmaStore.open` for the errors
        raised."""
        try:
            session = lancedb.Session(index_cache_size_bytes=index_cache_bytes)
            db = lancedb.connect(uri, storage_options=dict(storage_options or {}) or None,
                                 session=session)
            existing = set(db.list_tables().tables)
        except Exception as exc:
            reason = open_failure(exc, uri=uri, options=storage_options or {})
            raise StoreError(f"magma: open store {uri}: {reason}") from exc
        upgraded_from: int | None = None
        try:
            meta_name = table_name("meta", device)
            if meta_name in existing:
                meta = db.open_table(meta_name)
                rows = meta.to_arrow().to_pylist()
                if rows:
                    _check_meta(uri, rows[0], vault_path, model_id, dims)
                    if int(rows[0]["schema_version"]) < SCHEMA_VERSION:
                        upgraded_from = int(rows[0]["schema_version"])
                        _drop_derived(db, meta, existing, upgraded_from, device)
            else:
                meta = db.create_table(meta_name, schema=_meta_schema())
            if meta.count_rows() == 0:
                row = {
                    "vault_path": vault_path,
                    "model_id": model_id,
                    "dims": dims,
                    "schema_version": SCHEMA_VERSION,
                    "created_at": datetime.now(UTC),
                }
                meta.add(pa.Table.from_pylist([row], schema=_meta_schema()))

            def table(base: str, schema: pa.Schema) -> Any:
                name = table_name(base, device)
                if name in existing:
                    return db.open_table(name)
                made = db.create_table(name, schema=schema)
                ensure_key_indexes(made, base)
                return made

            tables = cls(
                db, uri=uri, meta=meta,
                files=table("files", _files_schema()),
                chunks=table("chunks", _chunks_schema(dims)),
                links=table("links", _links_schema()),
                edges=table("edges", _edges_schema()),
            )
            tables.session = session
            tables.upgraded_from = upgraded_from
        except StoreMismatchError:
            raise
        except Exception as exc:
            raise StoreError(f"magma: open store {uri}: {type(exc).__name__}: {exc}") from exc
        return tables

    @property
    def derived(self) -> tuple[Any, Any, Any, Any]:
        """The tables a sync rebuilds from the vault: ``files``, ``chunks``, ``links``,
        ``edges``."""
        return self.files, self.chunks, self.links, self.edges

    def read(self, table: Any, columns: list[str] | None, where: str | None = None,
             with_row_id: bool = False) -> pa.Table:
        """Every row of ``table`` (matching ``where``) with ``columns`` (``None``: all), and
        LanceDB's ``_rowid`` of each when ``with_row_id``. Raises :class:`StoreError`."""
        def rows() -> pa.Table:
            query = table.search()
            if columns is not None:
                query = query.select(columns)
            if where:
                query = query.where(where)
            if with_row_id:
                query = query.with_row_id(True)
            return query.limit(None).to_arrow()

        try:
            return self.retrying(rows)
        except Exception as exc:
            raise StoreError(f"magma: read {table.name} in {self.uri}: {exc}") from exc

    def changed_under(self) -> str | None:
        """Why the store at :attr:`uri` is no longer the one these handles opened, in words
        for the user, or ``None``: another process upgraded it (its meta row names a newer
        schema than :data:`SCHEMA_VERSION`: a newer dreamd dropped the index tables and
        made them anew, in a layout this one cannot read or write), or removed its tables
        (the meta table or an index table is gone). A store that cannot be read right now
        says nothing: a passing failure is no change. One listing of the tables and one
        read of the one-row meta table: about a millisecond on a local disk."""
        try:
            existing = set(self.db.list_tables().tables)
            rows = (self.db.open_table(self.meta.name).to_arrow().to_pylist()
                    if self.meta.name in existing else [])
        except Exception:
            return None
        newer = int(rows[0]["schema_version"]) if rows else None
        if newer is not None and newer > SCHEMA_VERSION:
            return (f"a newer dreamd upgraded the index (index schema {newer}; this dreamd "
                    f"reads {SCHEMA_VERSION})")
        gone = [t.name for t in (self.meta, *self.derived) if t.name not in existing]
        if gone:
            return f"another process removed the index tables ({', '.join(gone)})"
        return None

    def behind(self) -> bool:
        """Has another process committed to a table since these handles read it? (Opens
        each table's latest version to compare: about 2 ms; a failure counts as behind.)"""
        try:
            return any(self.db.open_table(t.name).version != t.version for t in self.derived)
        except Exception:
            return True

    def retrying(self, read: Callable[[], T]) -> T:
        """``read()``, once more on the tables' latest version when the version it read has
        gone: a ``forget`` in another process drops every older version (its purge), and a
        reader that opened one finds its files missing ("Not found"). Raises what ``read``
        raises."""
        try:
            return read()
        except Exception as exc:
            if "Not found" not in str(exc):
                raise
            log.info("store.version_gone", error=str(exc)[:200])
            for table in self.derived:
                table.checkout_latest()
            return read()

    def fts_ready(self) -> bool:
        """Whether ``chunks`` has its full-text index."""
        if not self.has_fts:
            self.has_fts = any(i.name == FTS_INDEX_NAME for i in self.chunks.list_indices())
        return bool(self.has_fts)

    def ensure_fts(self) -> None:
        """Create the full-text index once ``chunks`` has rows (shared case 20)."""
        if not self.fts_ready() and self.chunks.count_rows() > 0:
            self.chunks.create_index("text", config=FTS_CONFIG, name=FTS_INDEX_NAME)
            self.has_fts = True

    def vector_index(self) -> str | None:
        """The type of the chunks' vector index (``"IvfRq"``; ``None``: none, the vector
        stage scans its in-memory rows). Raises :class:`StoreError`."""
        try:
            return self.retrying(lambda: vector_index_type(self.chunks))
        except Exception as exc:
            raise StoreError(f"magma: list the indexes of {self.uri}: {exc}") from exc

    def nearest_chunk_ids(self, vector: Any, limit: int, where: str | None = None
                          ) -> list[tuple[str, str, float]] | None:
        """The candidates for the ``limit`` chunks nearest the unit ``vector`` by the vector
        index (matching the SQL filter ``where``, when given) -> ``(chunk_id, path, quantised
        cosine)``, best first by it (:func:`magma.vector_ann.nearest_chunk_ids`); ``None``
        when there is no vector index. Raises :class:`StoreError`."""
        def search() -> list[tuple[str, str, float]] | None:
            if vector_index_type(self.chunks) is None:
                return None
            return nearest_chunk_ids(self.chunks, vector, limit, where)

        try:
            return self.retrying(search)
        except Exception as exc:
            raise StoreError(f"magma: vector index search in {self.uri}: {exc}") from exc

    @staticmethod
    def replace(table: Any, key: str, group: str, data: pa.Table,
                groups: list[str] | None) -> None:
        """Upsert ``data`` by ``key`` and, in the same commit, delete the other rows whose
        ``group`` column is in ``groups`` (e.g. every other chunk of those paths; ``[]``: no
        other row; ``None``: every other row of the table). One commit, but a join over the
        whole table: :meth:`rewrite_groups` where a crash between two commits is safe.
        Raises what LanceDB raises."""
        builder = table.merge_insert(key).when_matched_update_all().when_not_matched_insert_all()
        if groups is None:
            builder = builder.when_not_matched_by_source_delete()
        elif groups:
            builder = builder.when_not_matched_by_source_delete(_in_list(group, groups))
        builder.execute(data)

    @staticmethod
    def rewrite_groups(table: Any, group: str, data: pa.Table, groups: list[str], *,
                       empty: Collection[str] = ()) -> None:
        """Replace every row whose ``group`` column is in ``groups`` by ``data`` (whose rows
        all belong to ``groups``): one delete of those groups' rows (not of ``empty``, which
        the caller knows hold none: no delete when all are), then one append. Two
        commits instead of :meth:`replace`'s join over the whole table (127,283 chunks:
        ``bench/store_index_bench.py``). A crash in between leaves those groups without
        rows: only for rows the caller writes again after a crash (a note's own chunks and
        links: its file row, written last, still holds the old content hash, so the next
        reconcile indexes the note again). Raises ``ValueError`` for a row of ``data``
        outside ``groups``, and what LanceDB raises."""
        inside = set(groups)
        if data.num_rows and not inside.issuperset(data.column(group).to_pylist()):
            raise ValueError(f"rewrite_groups: a row of data outside the {group}s rewritten")
        for part in _slices(sorted(inside.difference(empty))):
            table.delete(_in_list(group, part))
        if data.num_rows:
            table.add(data)

    @staticmethod
    def delete_in(table: Any, column: str, values: list[str]) -> None:
        for part in _slices(values):
            table.delete(_in_list(column, part))

    def refresh(self) -> None:
        """Let a long-lived reader see what the writer process committed since it opened.

        LanceDB handles read the version they opened; a reader beside the daemon (the MCP
        server, a benchmark) calls this before it answers. Raises :class:`StoreError`.
        """
        try:
            for table in self.derived:
                table.checkout_latest()
        except Exception as exc:
            raise StoreError(f"magma: refresh {self.uri}: {exc}") from exc
        self.has_fts = None

    def maintenance_due(self, fragments: int = MAINTAIN_FRAGMENTS,
                        unindexed: int = MAINTAIN_UNINDEXED_ROWS) -> bool:
        """Whether :meth:`maintain` has work worth its cost (seconds on a big vault): the
        full-text index is missing while ``chunks`` has rows, the vector index is due and
        not built (:attr:`vector_index_above`), a table holds ``fragments`` data fragments
        or more (each write appends one, and a read opens each), or ``unindexed`` chunks or
        more are searched outside the full-text index. Reads table metadata only. Raises
        :class:`StoreError`."""
        try:
            chunks = self.chunks.count_rows()
            if chunks and not self.fts_ready():
                return True
            above = self.vector_index_above
            if above is not None and chunks > above and vector_index_type(self.chunks) is None:
                return True
            if any(t.stats()["fragment_stats"]["num_fragments"] >= fragments
                   for t in self.derived):
                return True
            return chunks > 0 and self.text_rows_unindexed() >= unindexed
        except Exception as exc:
            raise StoreError(f"magma: read the tables' stats in {self.uri}: {exc}") from exc

    def text_rows_unindexed(self) -> int:
        """Chunks the full-text search scans row by row, outside its index (0 without the
        index: there is nothing to search yet). Reads the index's metadata only."""
        if not self.fts_ready():
            return 0
        stats = self.chunks.index_stats(FTS_INDEX_NAME)
        return stats.num_unindexed_rows if stats is not None else 0

    def maintain(self, cleanup_older_than: timedelta, *, purge: bool) -> None:
        """Compact every table, fold new rows into the full-text index (and into the vector
        index, built first when the chunks outgrew :attr:`vector_index_above`), prune old
        versions.

        ``cleanup_older_than=timedelta(0)`` keeps only the latest version (DESIGN.md: plain
        ``optimize()`` keeps 7 days and frees nothing). ``purge`` (``dreamd forget``) first
        rewrites each table whole: a delete only marks rows deleted, and compaction rewrites a
        data file only once enough of it is deleted, so one forgotten row would stay on disk;
        the rewrite is also a commit after the delete (whose filter names the deleted paths),
        so the cleanup removes that too. It costs a copy of the tables (seconds on a large
        vault). Only safe while no other process reads an older version.
        Raises :class:`StoreError`.
        """
        try:
            if purge:
                for table in self.derived:
                    table.add(_fresh_buffers(table.to_arrow()), mode="overwrite")
                self.has_fts = False  # the rewrite drops the index; rebuilt just below
            self.ensure_fts()
            for base, table in zip(_DERIVED_TABLES, self.derived, strict=True):
                ensure_key_indexes(table, base)
            if self.vector_index_above is not None:
                ensure_vector_index(self.chunks, self.vector_index_above)
            with warnings.catch_warnings():
                # lancedb warns that cleanup_older_than=0 breaks concurrent readers; this
                # store has a single writer by design (see the module docstring).
                warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than")
                for table in self.derived:
                    table.optimize(cleanup_older_than=cleanup_older_than)
        except Exception as exc:
            raise StoreError(f"magma: maintain {self.uri}: {exc}") from exc


def ensure_key_indexes(table: Any, base: str) -> None:
    """Give ``table`` (a derived table, ``base`` its name without the device) the BTREE
    index of each of its :data:`KEY_COLUMNS` it lacks (a table rewritten whole by a purge
    has lost them). Reads the table's index list; builds read the column. Raises what
    LanceDB raises."""
    have = {index.name for index in table.list_indices()}
    for column in KEY_COLUMNS.get(base, ()):
        if f"{column}_idx" not in have:
            table.create_index(column, config=BTree(), name=f"{column}_idx")


def _fresh_buffers(rows: pa.Table) -> pa.Table:
    """``rows`` copied into buffers that hold only these rows: a table read past deleted rows
    may share buffers that still hold theirs, and writing it back would keep their bytes on
    disk (``forget``)."""
    return rows.take(pa.array(range(rows.num_rows), type=pa.int64()))

