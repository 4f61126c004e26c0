"""The raw layer in MAGMA: snippets of daily notes, and their recalls.

Two LanceDB tables of the store:

- ``snippets`` — one row per snippet light sleep cut (:class:`magma.snippets.Snippet`),
  derived from the vault like the chunks: :meth:`SnippetStore.replace_notes` puts a note's
  current snippets in place of its old ones, so a line the user deleted leaves the table at
  the next light sleep, and a rebuilt store is filled again from the daily notes.
- ``snippet_recalls`` — one row per snippet per search that hit it: ``key``, ``query_hash``
  (:func:`magma.recalls.query_hash`: the query itself is not kept), ``score`` (how well the
  query matched it, 0–1), ``at`` (UTC), ``device``. Usage statistics, like ``recalls``: they
  never touch a user's file.
- ``snippet_vectors`` — one row per snippet per embedding model: ``key``, ``model`` (the
  embedder's ``model_id``), ``vector`` (unit length, ``float32``; its width is the model's).
  Derived like the snippets: light sleep embeds the snippets that have none for the model it
  runs with and removes the rows of snippets gone (:meth:`SnippetStore.keep_vectors`);
  active recall ranks by them when the model is in memory.

What the dream decided about a snippet (staged, promoted, dropped) is not here: it is the
dream's own state (:mod:`daemon.dream_sleep`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from config.errors import StoreError
from magma import shared_tables
from magma.recalls import query_hash
from magma.remote_store import open_failure
from magma.snippets import Snippet, SnippetOrigin

__all__ = ["SnippetRecalls", "SnippetStore"]

_SNIPPETS = "snippets"
_RECALLS = "snippet_recalls"
_VECTORS = "snippet_vectors"


@dataclass(frozen=True, slots=True)
class SnippetRecalls:
    """How a snippet was recalled: ``count`` hits, ``distinct_queries``, ``days`` (distinct
    UTC days), ``first`` and ``last`` hit (aware), ``mean_score`` (mean match, 0–1)."""

    count: int = 0
    distinct_queries: int = 0
    days: int = 0
    first: datetime | None = None
    last: datetime | None = None
    mean_score: float = 0.0


def _snippet_schema() -> pa.Schema:
    return pa.schema([
        pa.field("key", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("day", pa.date32(), nullable=False),
        pa.field("line_first", pa.int32(), nullable=False),
        pa.field("line_last", pa.int32(), nullable=False),
        pa.field("heading", pa.string(), nullable=False),
        pa.field("body", pa.string(), nullable=False),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("origin", pa.string(), nullable=False),
    ])


def _recall_schema() -> pa.Schema:
    return pa.schema([
        pa.field("key", pa.string(), nullable=False),
        pa.field("query_hash", pa.string(), nullable=False),
        pa.field("score", pa.float32(), nullable=False),
        pa.field("at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("device", pa.string()),
    ])


def _vector_schema() -> pa.Schema:
    return pa.schema([
        pa.field("key", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("vector", pa.list_(pa.float32()), nullable=False),
    ])


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _snippet(row: Mapping[str, Any]) -> Snippet:
    origin: SnippetOrigin = "transcript" if row["origin"] == "transcript" else "diary"
    return Snippet(key=row["key"], path=row["path"], day=row["day"],
                   lines=(int(row["line_first"]), int(row["line_last"])), heading=row["heading"],
                   body=row["body"], tags=tuple(row["tags"] or ()), kind=row["kind"],
                   origin=origin)


class SnippetStore:
    """The ``snippets`` and ``snippet_recalls`` tables of one store; open with
    :meth:`open`. Every method raises ``StoreError`` with the table's name on a failure."""

    def __init__(self, snippets: Any, recalls: Any, device: str | None,
                 vectors: Any = None) -> None:
        self._snippets = snippets
        self._recalls = recalls
        self._device = device
        self._vectors = vectors

    @classmethod
    def open(cls, uri: str, *, device: str | None = None,
             storage_options: Mapping[str, str] | None = None) -> SnippetStore:
        """Open (or create) the three tables at the store ``uri`` (``storage_options``:
        LanceDB's, for an object store). Raises ``StoreError``."""
        try:
            db = lancedb.connect(uri, storage_options=dict(storage_options or {}) or None)
            names = set(db.list_tables().tables)
            tables = [db.open_table(name) if name in names
                      else db.create_table(name, schema=schema, exist_ok=True)
                      for name, schema in ((_SNIPPETS, _snippet_schema()),
                                           (_RECALLS, _recall_schema()),
                                           (_VECTORS, _vector_schema()))]
        except Exception as exc:
            reason = open_failure(exc, uri=uri, options=storage_options or {})
            raise StoreError(f"magma: open snippets in {uri}: {reason}") from exc
        return cls(tables[0], tables[1], device, tables[2])

    # ------------------------------------------------------------------ snippets

    def replace_notes(self, snippets_by_path: Mapping[str, Sequence[Snippet]]) -> None:
        """Each path's snippets in place of the ones it had (an empty list: none left)."""
        if not snippets_by_path:
            return
        rows = [s for found in snippets_by_path.values() for s in found]
        try:
            paths = ", ".join(_quoted(p) for p in sorted(snippets_by_path))
            self._snippets.delete(f"path IN ({paths})")
            if rows:
                self._snippets.add(pa.table({
                    "key": [s.key for s in rows], "path": [s.path for s in rows],
                    "day": [s.day for s in rows], "line_first": [s.lines[0] for s in rows],
                    "line_last": [s.lines[1] for s in rows],
                    "heading": [s.heading for s in rows], "body": [s.body for s in rows],
                    "tags": [list(s.tags) for s in rows], "kind": [s.kind for s in rows],
                    "origin": [s.origin for s in rows],
                }, schema=_snippet_schema()))
        except Exception as exc:
            raise StoreError(f"magma: write snippets: {type(exc).__name__}: {exc}") from exc

    def version(self) -> int:
        """The ``snippets`` table's version: a new one with every write (and compaction)."""
        try:
            self._snippets.checkout_latest()
            return int(self._snippets.version)
        except Exception as exc:
            raise StoreError(f"magma: read snippets: {type(exc).__name__}: {exc}") from exc

    def keys(self) -> set[str]:
        """The key of every snippet (one column read)."""
        try:
            self._snippets.checkout_latest()
            return set(self._snippets.to_arrow().column("key").to_pylist())
        except Exception as exc:
            raise StoreError(f"magma: read snippets: {type(exc).__name__}: {exc}") from exc

    def snippets(self, *, paths: Collection[str] | None = None, since: date | None = None,
                 origin: SnippetOrigin | None = None, keys: Collection[str] | None = None
                 ) -> list[Snippet]:
        """The snippets of ``paths`` (``None``: of every note) of days from ``since`` on,
        read from ``origin`` (``None``: both), with ``keys`` (``None``: any), in path and line
        order."""
        clauses = []
        if keys is not None:
            if not keys:
                return []
            clauses.append(f"key IN ({', '.join(_quoted(k) for k in sorted(keys))})")
        if origin is not None:
            clauses.append(f"origin = {_quoted(origin)}")
        if paths is not None:
            if not paths:
                return []
            clauses.append(f"path IN ({', '.join(_quoted(p) for p in sorted(paths))})")
        if since is not None:
            clauses.append(f"day >= date '{since.isoformat()}'")
        try:
            self._snippets.checkout_latest()
            if clauses:
                data = self._snippets.search().where(" AND ".join(clauses)) \
                    .limit(None).to_arrow()
            else:
                data = self._snippets.to_arrow()
        except Exception as exc:
            raise StoreError(f"magma: read snippets: {type(exc).__name__}: {exc}") from exc
        found = [_snippet(row) for row in data.to_pylist()]
        return sorted(found, key=lambda s: (s.path, s.lines))

    # ------------------------------------------------------------------ recalls

    def record(self, scores: Mapping[str, float], query: str, at: datetime | None = None
               ) -> int:
        """One recall of each snippet key of ``scores`` (key → match, 0–1) for ``query`` at
        ``at`` (aware; default now) -> rows added."""
        keys = sorted(k for k in scores if k)
        if not keys:
            return 0
        when = (at or datetime.now(UTC)).astimezone(UTC)
        rows = pa.table({
            "key": keys, "query_hash": [query_hash(query)] * len(keys),
            "score": [float(scores[k]) for k in keys], "at": [when] * len(keys),
            "device": [self._device] * len(keys)}, schema=_recall_schema())
        try:
            self._recalls.add(rows)
        except Exception as exc:
            raise StoreError(f"magma: record snippet recalls: {type(exc).__name__}: {exc}") \
                from exc
        return len(keys)

    def recall_stats(self) -> dict[str, SnippetRecalls]:
        """``{snippet key: SnippetRecalls}`` for every snippet hit at least once (one
        columnar read and a group-by)."""
        try:
            self._recalls.checkout_latest()
            data = self._recalls.to_arrow().select(["key", "query_hash", "score", "at"])
            if data.num_rows == 0:
                return {}
            data = data.append_column("day", pc.cast(data.column("at"), pa.date32()))
            grouped = data.group_by("key").aggregate([
                ("query_hash", "count"), ("query_hash", "count_distinct"),
                ("day", "count_distinct"), ("at", "min"), ("at", "max"), ("score", "mean"),
            ]).to_pylist()
        except Exception as exc:
            raise StoreError(f"magma: read snippet recalls: {type(exc).__name__}: {exc}") \
                from exc
        return {row["key"]: SnippetRecalls(
            count=row["query_hash_count"], distinct_queries=row["query_hash_count_distinct"],
            days=row["day_count_distinct"], first=row["at_min"], last=row["at_max"],
            mean_score=float(row["score_mean"])) for row in grouped}

    # ------------------------------------------------------------------ vectors

    def vectors(self, model: str) -> tuple[list[str], np.ndarray]:
        """The snippet keys with a vector made by ``model`` and those vectors, one row per
        key (``float32[len(keys), dims]``, unit rows; no rows for none). Raises
        ``StoreError`` (also when the rows are not all of one width)."""
        if self._vectors is None:
            return [], np.zeros((0, 0), dtype=np.float32)
        try:
            self._vectors.checkout_latest()
            data = self._vectors.search().where(f"model = {_quoted(model)}") \
                .select(["key", "vector"]).limit(None).to_arrow()
            keys = data.column("key").to_pylist()
            flat = pc.list_flatten(data.column("vector")).to_numpy(zero_copy_only=False)
            width = len(flat) // len(keys) if keys else 0
            matrix = np.asarray(flat, dtype=np.float32).reshape(len(keys), width)
        except Exception as exc:
            raise StoreError(f"magma: read snippet vectors: {type(exc).__name__}: {exc}") \
                from exc
        return keys, matrix

    def vector_keys(self, model: str) -> set[str]:
        """The snippet keys that have a vector made by ``model``."""
        if self._vectors is None:
            return set()
        try:
            self._vectors.checkout_latest()
            data = self._vectors.search().where(f"model = {_quoted(model)}") \
                .select(["key"]).limit(None).to_arrow()
        except Exception as exc:
            raise StoreError(f"magma: read snippet vectors: {type(exc).__name__}: {exc}") \
                from exc
        return set(data.column("key").to_pylist())

    def keep_vectors(self, model: str, add: Mapping[str, np.ndarray],
                     gone: Collection[str]) -> None:
        """Add ``model``'s vectors of ``add`` (key → unit vector) and remove the rows (of any
        model) of the keys ``gone``."""
        if self._vectors is None or not (add or gone):
            return
        try:
            if gone:
                keys = ", ".join(_quoted(k) for k in sorted(gone))
                self._vectors.delete(f"key IN ({keys})")
            if add:
                self._vectors.add(pa.table({
                    "key": list(add), "model": [model] * len(add),
                    "vector": [np.asarray(v, dtype=np.float32).tolist() for v in add.values()],
                }, schema=_vector_schema()))
        except Exception as exc:
            raise StoreError(f"magma: write snippet vectors: {type(exc).__name__}: {exc}") \
                from exc

    def optimize(self, cleanup_older_than: timedelta | None = None) -> None:
        """Compact the tables' small appends (every night and every search adds some: a year
        of them made a read of the keys 314 ms instead of 3 ms, measured with
        ``bench/diary_bench.py``) and drop the table versions older than
        ``cleanup_older_than`` (``None``: LanceDB's default, 7 days)."""
        try:
            for table in (self._snippets, self._recalls, self._vectors):
                if table is not None:
                    shared_tables.optimize(table, cleanup_older_than)
        except Exception as exc:
            raise StoreError(f"magma: optimize snippets: {type(exc).__name__}: {exc}") from exc
