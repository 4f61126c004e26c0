"""The vault graph held in memory and kept in step with the index, batch by batch.

:class:`GraphKeeper` follows the store's ``files`` table (its ``{path: content hash}``, kept
in memory by the store across its own commits, :class:`magma.store_memo.FileIndexMemo`):
after each sync it reads back only the files whose hash changed (their row, their links and,
for a memory, its chunks), applies them to one :class:`magma.vault_graph.VaultGraph`
(:meth:`~magma.vault_graph.VaultGraph.upsert` / ``remove``: never a rebuild on an edit) and
writes the nodes that changed to the ``edges`` table in one commit (:mod:`magma.edge_table`).

When no graph is held yet (a new process), :meth:`GraphKeeper.follow` first compares the
table's fingerprint with the index's: equal, the table is in step and nothing is built (a
start with nothing changed reads one row); else the graph is built from the index and the
table rewritten. :meth:`GraphKeeper.graph` always holds one, and rewrites the table only when
it is not in step. Given a ``seal`` file (:class:`magma.store_seal.IndexSeal`), the keeper
seals the versions of the files, ``edges`` and snippet tables at which the table was last
written or found in step: a start that finds them there reads no row and hashes no path (the
fingerprint of 100,000 paths is ≈0.2 s).

A failure to read or write (:class:`config.errors.StoreError`) never fails the sync that
called: it is logged, the graph is let go, and the next call builds it again.

Diary snippets (:mod:`magma.snippet_store`, cut by light sleep, not in the ``files``
table) follow the snippet table's version: the ``edges`` table's meta row records the
version read, and a new version is read whole and applied note by note
(:meth:`magma.vault_graph.VaultGraph.set_snippets`) at the next follow (after every sync).

The graph step of search reads the same graph (:meth:`GraphKeeper.step_graph`): its view
(:func:`magma.graph_step.step_graph`) is derived from the graph held on first use and then
patched with each step (:func:`magma.graph_step.patched_step_graph`: the changed notes'
pairs only; derived again when a memory with a subject changed), under the keeper's lock
(a search never sees a graph half updated).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pyarrow as pa
import structlog

from config.errors import StoreError
from magma.edge_table import (
    GRAPH_FORMAT,
    EdgeRow,
    graph_rows,
    read_fingerprint,
    read_graph,
    read_meta,
    write_rows,
)
from magma.gc_pause import trim_heap
from magma.graph_step import NoteGraph, has_subject, patched_step_graph, step_graph
from magma.snippet_store import SnippetStore
from magma.snippets import Snippet
from magma.store import (
    GraphFileRow,
    LinkRecord,
    MagmaStore,
    graph_file_rows,
    graph_reads,
    link_records,
)
from magma.store_memo import WrittenNote
from magma.store_seal import IndexSeal
from magma.store_tables import _in_list, _slices
from magma.vault_graph import VaultGraph, snippets_by_path

__all__ = ["GraphKeeper", "GraphUpdate", "current_graph", "diary_snippets", "graph_reads_of",
           "memory_texts"]

log = structlog.get_logger("dreamd.graph")

_FILE_COLUMNS = ["path", "kind", "title", "tags", "memory_type", "properties_json"]
_LINK_COLUMNS = ["src", "target", "kind", "subpath", "resolved", "line"]


@dataclass(frozen=True, slots=True)
class GraphUpdate:
    """What one :meth:`GraphKeeper.follow` did: files ``upserted`` and ``removed`` in the
    graph, ``nodes`` rewritten in the table, ``built`` whole (a first build), ``rows``
    written, and how long the graph update and the table write took (ms)."""

    upserted: int = 0
    removed: int = 0
    nodes: int = 0
    built: bool = False
    rows: int = 0
    graph_ms: float = 0.0
    write_ms: float = 0.0


def _rows(path_hash: tuple[str, str]) -> int:
    digest = hashlib.sha256(f"{path_hash[0]}\x00{path_hash[1]}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


def _stamp(mix: int) -> str:
    return f"{GRAPH_FORMAT}:{mix:032x}"


def graph_reads_of(store: MagmaStore, paths: Collection[str]
                   ) -> tuple[list[GraphFileRow], list[LinkRecord]]:
    """:func:`magma.store.graph_reads` of ``paths`` only (their file rows, their links).
    Raises :class:`StoreError`."""
    tables = store._t
    parts = list(_slices(sorted(set(paths))))
    files = [tables.read(tables.files, _FILE_COLUMNS, _in_list("path", p)) for p in parts]
    links = [tables.read(tables.links, _LINK_COLUMNS, _in_list("src", p)) for p in parts]
    if not parts:
        return [], []
    return graph_file_rows(pa.concat_tables(files)), link_records(pa.concat_tables(links))


def memory_texts(store: MagmaStore, paths: Collection[str] | None = None) -> dict[str, str]:
    """``{path: body}`` of the memories (of ``paths``; ``None``: all), their chunks' bodies
    in order. Raises :class:`StoreError`."""
    tables = store._t
    wheres = ["memory_type IS NOT NULL"] if paths is None else [
        f"memory_type IS NOT NULL AND {_in_list('path', part)}"
        for part in _slices(sorted(set(paths)))]
    texts: dict[str, list[tuple[int, str]]] = {}
    for where in wheres:
        data = tables.read(tables.chunks, ["path", "ordinal", "body"], where).to_pydict()
        for path, ordinal, body in zip(data["path"], data["ordinal"], data["body"],
                                       strict=True):
            texts.setdefault(path, []).append((ordinal, body))
    return {path: "\n".join(body for _, body in sorted(parts)) for path, parts in
            texts.items()}


def _mix_of(hashes: dict[str, str]) -> int:
    mix = 0
    for item in hashes.items():
        mix ^= _rows(item)
    return mix


def current_graph(store: MagmaStore) -> nx.MultiDiGraph:
    """The vault graph of the index, for a process that only reads the store: the ``edges``
    table's when it is in step with the index (its fingerprint), else built in memory from
    the index (the store's writer rewrites the table on its next sync). Raises
    :class:`StoreError`."""
    hashes = {path: known.content_hash for path, known in store.file_index().items()}
    if read_fingerprint(store) == _stamp(_mix_of(hashes)):
        return read_graph(store)
    files, links = graph_reads(store)
    return VaultGraph.build(files, links, memory_texts(store)).graph


def diary_snippets(source: SnippetStore) -> dict[str, tuple[Snippet, ...]]:
    """The diary snippets of ``source`` by the note they were cut from (transcript
    snippets are not graph nodes). Raises :class:`StoreError`."""
    return snippets_by_path(source.snippets(origin="diary"))


def _changed_rows(store: MagmaStore, changed: list[str], hashes: Mapping[str, str],
                  written: Mapping[str, WrittenNote]
                  ) -> tuple[list[GraphFileRow], dict[str, list[LinkRecord]], dict[str, str]]:
    """The file rows (sorted by path), links by source and memory texts of ``changed``
    paths: those ``written`` holds at the hash the index has now taken from it, the others
    read. Raises :class:`StoreError`."""
    handed = {p: note for p in changed
              if (note := written.get(p)) is not None and note.content_hash == hashes[p]}
    unread = [p for p in changed if p not in handed]
    files, links = graph_reads_of(store, unread) if unread else ([], [])
    texts = memory_texts(store, [f.path for f in files if f.memory_type])
    by_src: dict[str, list[LinkRecord]] = {}
    for link in links:
        by_src.setdefault(link.src, []).append(link)
    for path, note in handed.items():
        by_src[path] = list(note.links)
        if note.text is not None:
            texts[path] = note.text
    files = sorted([*files, *(note.file for note in handed.values())],
                   key=lambda f: f.path)  # (the order graph_file_rows reads them in)
    return files, by_src, texts


class GraphKeeper:
    """One vault graph following one store (module docstring) and, given ``snippets`` (what
    opens the snippet tables of that store), its diary snippets: read again, whole, when
    the snippet table has a new version, and applied note by note where they changed."""

    def __init__(self, store: MagmaStore,
                 snippets: Callable[[], SnippetStore] | None = None,
                 seal: Path | None = None) -> None:
        self._store = store
        #: The versions of the files, edges and snippet tables at which the ``edges`` table
        #: was last written or found in step (``seal``: its file; module docstring).
        self._seal = IndexSeal(seal, ("files", "edges", "snippets"))
        self._open_snippets = snippets
        self._snippet_table: SnippetStore | None = None
        self._snippet_version: int | None = None
        self._snippets: dict[str, tuple[Snippet, ...]] = {}
        self._held: VaultGraph | None = None
        self._hashes: dict[str, str] = {}
        self._mix = 0  # XOR of the rows' digests: the fingerprint, kept per change
        self._lock = threading.RLock()  # the writer's follow against a search's view
        self._view: NoteGraph | None = None  # the graph step's, of the graph held now
        #: The ``edges`` table's version when it last held the graph held (written, or found
        #: in step): another process's keeper writing it leaves the held graph behind.
        self._edges_at: int | None = None

    def step_graph(self) -> NoteGraph | None:
        """The graph step's view of the graph held (:func:`magma.graph_step.step_graph`),
        derived again only after the graph changed; ``None`` when no graph is held (a
        process that never synced reads :func:`current_graph` instead)."""
        with self._lock:
            if self._held is None:
                return None
            if self._view is None:
                self._view = step_graph(self._held.graph)
            return self._view

    def graph(self) -> nx.MultiDiGraph:
        """The vault graph as the index holds it now (built on first use; the ``edges``
        table is rewritten only when it is not in step). Raises :class:`StoreError`."""
        with self._lock:
            if self._held is not None:
                self.follow()  # (which lets the graph go when another process wrote the table)
            if self._held is None:
                hashes = self._index()
                self._build(hashes, in_step=self._in_step(hashes))
            assert self._held is not None
            return self._held.graph

    def follow(self) -> GraphUpdate:
        """Bring the graph and the ``edges`` table in step with the index (module
        docstring). Never raises: a store failure is logged and the graph let go."""
        with self._lock:
            try:
                written = self._store.written.take()  # (taken whatever is done with them)
                if self._held is not None and not self._table_holds_ours():
                    self._held, self._view = None, None  # built again from the index
                if self._held is None:
                    if self._seal.holds(self._versions()):  # nothing read, nothing hashed
                        return GraphUpdate()
                    hashes = self._index()
                    if self._in_step(hashes):
                        return GraphUpdate()
                    return self.build(hashes)
                return self._step(written)
            except StoreError as error:
                log.warning("graph.not_followed", error=str(error),
                            action="the graph is built again on its next use")
                self._held, self._view = None, None
                return GraphUpdate()

    def _table_holds_ours(self) -> bool:
        """Whether the ``edges`` table still holds the graph held: at the version this keeper
        left it, or moved since (a compaction, another process's keeper) to a meta row of
        the same files and snippets (one read). A table another process wrote for another
        index (a one-shot ``remember`` or ``sync`` beside a long-lived MCP server) is not:
        stepping on from the graph held would leave the rows of the notes that process
        added, changed or deleted as it wrote them."""
        version = self._store._t.edges.version
        if version == self._edges_at:
            return True
        meta = read_meta(self._store)
        if meta.get("fingerprint") != _stamp(self._mix) or \
                meta.get("snippets") != self._snippet_version:
            log.info("graph.table_moved", action="the graph is built again from the index")
            return False
        self._edges_at = version
        return True

    def _versions(self) -> dict[str, int | None]:
        """The versions the seal names: files, edges, and the snippet table's (``None``:
        no snippets followed)."""
        tables = self._store._t
        return {"files": tables.files.version, "edges": tables.edges.version,
                "snippets": self._snippets_now()}

    def _in_step(self, hashes: dict[str, str]) -> bool:
        """Whether the ``edges`` table holds the graph of ``hashes`` and of the snippet
        table now (its meta row: one read, every row hashed); sealed when it does."""
        if self._seal.holds(versions := self._versions()):
            return True
        meta = read_meta(self._store)
        if meta.get("fingerprint") != _stamp(_mix_of(hashes)) or \
                meta.get("snippets") != versions["snippets"]:
            return False
        self._seal.set(versions)
        return True

    def _index(self) -> dict[str, str]:
        return {path: known.content_hash for path, known in self._store.file_index().items()}

    def _snippets_now(self) -> int | None:
        """The snippet table's version now (``None``: no snippets are followed)."""
        if self._open_snippets is None:
            return None
        if self._snippet_table is None:
            self._snippet_table = self._open_snippets()
        return self._snippet_table.version()

    def _read_snippets(self, version: int | None) -> dict[str, tuple[Snippet, ...]]:
        self._snippet_version = version
        if version is None or self._snippet_table is None:
            return {}
        return diary_snippets(self._snippet_table)

    def build(self, hashes: dict[str, str] | None = None) -> GraphUpdate:
        """Build the graph whole from the index (``hashes``: its ``{path: content hash}``,
        read when ``None``), hold it, and rewrite the ``edges`` table (one commit) unless its
        meta row says it holds this graph already (a process warming up on an index in step:
        at 100,000 notes the rewrite is ≈18 s of the first save after a start). Raises
        :class:`StoreError`."""
        with self._lock:
            return self._build(hashes)

    def _build(self, hashes: dict[str, str] | None, *, in_step: bool = False) -> GraphUpdate:
        """(:meth:`build`; ``in_step``: the table holds this graph already, not written.)"""
        started = time.perf_counter()
        hashes = self._index() if hashes is None else hashes
        files, links = graph_reads(self._store)
        self._snippets = self._read_snippets(self._snippets_now())
        held = VaultGraph.build(files, links, memory_texts(self._store),
                                [s for found in self._snippets.values() for s in found])
        held.take_changed()
        count = len(files)
        del files, links
        self._mix = _mix_of(hashes)
        built = time.perf_counter()
        rows = 0 if in_step else self._write(graph_rows(held.graph), None)
        trim_heap()  # what the rows read and written left in the heaps (bench/graph_memory.py)
        self._held, self._hashes, self._view = held, hashes, None
        self._edges_at = self._store._t.edges.version
        update = GraphUpdate(upserted=count, nodes=held.graph.number_of_nodes(),
                             built=True, rows=rows, graph_ms=1000 * (built - started),
                             write_ms=1000 * (time.perf_counter() - built))
        log.info("graph.built", files=count, nodes=update.nodes,
                 edges=held.graph.number_of_edges(), duration_ms=round(update.graph_ms))
        return update

    def _step(self, written: Mapping[str, WrittenNote]) -> GraphUpdate:
        """Apply the files whose hash changed: those the store's own batches just wrote at
        that hash from ``written`` (:meth:`magma.store_memo.WrittenRows.take`), the others
        read back."""
        assert self._held is not None
        started = time.perf_counter()
        hashes = self._index()
        known = self._hashes
        # set operations on the dicts' views (C loops: 100,000 paths in milliseconds)
        changed = sorted(p for p, _ in hashes.items() - known.items())
        gone = sorted(known.keys() - hashes.keys())
        version = self._snippets_now()
        if not changed and not gone and version == self._snippet_version:
            return GraphUpdate()
        files, by_src, texts = _changed_rows(self._store, changed, hashes, written)
        read = time.perf_counter()
        view, self._view = self._view, None
        if view is not None and any(has_subject(self._held.graph, p) for p in [*changed, *gone]):
            view = None  # a memory leaves a subject: its other memories' pairs change
        found = {f.path for f in files}
        for path in [*gone, *(p for p in changed if p not in found)]:
            self._held.remove(path)
        for file in files:
            self._held.upsert(file, by_src.get(file.path, []), texts.get(file.path))
        if version != self._snippet_version:
            before, self._snippets = self._snippets, self._read_snippets(version)
            for path in sorted(before.keys() | self._snippets.keys()):
                if before.get(path) != self._snippets.get(path):
                    self._held.set_snippets(path, self._snippets.get(path, ()))
        for path in gone:
            self._mix ^= _rows((path, known[path]))
        for path in changed:
            if path in known:
                self._mix ^= _rows((path, known[path]))
            self._mix ^= _rows((path, hashes[path]))
        self._hashes = hashes
        nodes = self._held.take_changed()
        if view is not None:  # the search's view follows too (else derived on first use)
            self._view = patched_step_graph(view, self._held.graph, nodes)
        stepped = time.perf_counter()
        rows = self._write(graph_rows(self._held.graph, nodes), nodes)
        update = GraphUpdate(upserted=len(files), removed=len(gone), nodes=len(nodes),
                             rows=rows, graph_ms=1000 * (stepped - read),
                             write_ms=1000 * (time.perf_counter() - stepped))
        log.debug("graph.followed", upserted=update.upserted, removed=update.removed,
                  nodes=update.nodes, read_ms=round(1000 * (read - started), 1),
                  graph_ms=round(update.graph_ms, 2), write_ms=round(update.write_ms, 1))
        return update

    def _write(self, rows: list[EdgeRow], nodes: Collection[str] | None) -> int:
        """:func:`magma.edge_table.write_rows` with the fingerprint held, then the seal."""
        written = write_rows(self._store, rows, nodes, _stamp(self._mix), self._snippet_version)
        tables = self._store._t
        self._edges_at = tables.edges.version
        self._seal.set({"files": tables.files.version, "edges": tables.edges.version,
                        "snippets": self._snippet_version})
        return written
