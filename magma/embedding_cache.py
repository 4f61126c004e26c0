"""Vectors of chunks the user has embedded before, kept once per user instead of once per vault.

A vault's own store already reuses the vector of an unchanged chunk. This cache carries them
across vaults: a copied or re-created vault, a second vault holding the same notes, and every
bench's per-question vault find the vectors of chunks embedded anywhere before, so the
embedder (≈80 chunks/s per core, DESIGN.md) runs once per distinct chunk text.

The cache is one SQLite file per embedding model, ``<storage.data_dir>/embedding-cache/
<model id>.sqlite``: rows ``(content_hash, vector, used)``, where ``content_hash`` is the
chunk's :func:`magma.chunking.chunk_hash` of its ``embed_text`` and ``used`` the last time
(Unix seconds) a sync took or stored it. It holds no text. It is bounded: past
``max_bytes`` the least recently used rows go (down to 90%). A forgotten memory's chunks are
taken out with :meth:`EmbeddingCache.evict`, so nothing forgotten stays here either.

The cache only saves time. Any failure (a locked, damaged or unwritable file; a full disk) is
logged once and the cache stops for the rest of the process; the index is never affected.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import structlog

from magma.chunking import chunk_hash
from magma.embedder import Embedder

__all__ = ["CACHE_FOLDER", "ROW_OVERHEAD_BYTES", "CachingEmbedder", "EmbeddingCache"]

log = structlog.get_logger(__name__)

#: Folder under ``storage.data_dir`` that holds one cache file per model.
CACHE_FOLDER = "embedding-cache"
#: Bytes a row takes besides its vector in SQLite (32-character key twice — row and index —,
#: an integer, record headers); measured ≈100 on 10,000 rows of 512 dims, rounded up.
ROW_OVERHEAD_BYTES = 128
#: Hashes per SQL statement (SQLite's default limit of host parameters is 32,766; small
#: statements keep each lock short while another process uses the file).
_SLICE = 500
#: Seconds a statement waits for another process's write lock before the cache gives up.
_BUSY_S = 5.0
#: After eviction the cache holds at most this share of ``max_bytes``, so a full cache does
#: not evict on every batch.
_LOW_WATER = 0.9


class EmbeddingCache:
    """Chunk vectors by content hash for one model, shared by every vault of the user.

    ``path`` is the SQLite file (created with its folder); ``dims`` the model's width (a row
    of another width is ignored); ``max_bytes`` the bound on disk (``0`` turns the cache off).
    Thread-safe; several processes may share the file (SQLite's locking, WAL journal).
    Methods never raise: after a failure the cache is off for the process and says so once.
    """

    def __init__(self, path: Path, dims: int, max_bytes: int) -> None:
        self.path = path
        self.dims = dims
        self.max_rows = max(0, max_bytes) // (dims * 4 + ROW_OVERHEAD_BYTES)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._off = self.max_rows == 0

    @classmethod
    def for_model(cls, data_dir: Path, model_id: str, dims: int,
                  max_bytes: int) -> EmbeddingCache:
        """The cache of ``model_id`` under ``data_dir`` (see the module docstring)."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id) or "model"
        return cls(data_dir / CACHE_FOLDER / f"{safe}.sqlite", dims, max_bytes)

    @property
    def enabled(self) -> bool:
        """False when turned off by configuration or after a failure."""
        return not self._off

    def get(self, hashes: Collection[str]) -> dict[str, np.ndarray]:
        """``{content_hash: float32[dims]}`` for the hashes held; marks them used."""
        wanted = sorted(set(hashes))
        if not wanted or self._off:
            return {}
        found: dict[str, np.ndarray] = {}
        now = int(time.time())
        with self._lock:
            db = self._connection()
            if db is None:
                return {}
            try:
                for start in range(0, len(wanted), _SLICE):
                    part = wanted[start:start + _SLICE]
                    marks = ",".join("?" * len(part))
                    for key, blob in db.execute(
                            f"SELECT hash, vector FROM vectors WHERE hash IN ({marks})", part):
                        row = np.frombuffer(blob, dtype=np.float32)
                        if row.shape == (self.dims,):
                            found[key] = row.copy()
                    if found:
                        with db:
                            db.execute(f"UPDATE vectors SET used = ? WHERE hash IN ({marks})",
                                       [now, *part])
            except sqlite3.Error as error:
                self._fail("read", error)
                return {}
        return found

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Keep ``vectors`` (``{content_hash: float32[dims]}``), then evict past the bound."""
        if not vectors or self._off:
            return
        now = int(time.time())
        rows = [(key, np.ascontiguousarray(vec, dtype=np.float32).tobytes(), now)
                for key, vec in vectors.items() if np.shape(vec) == (self.dims,)]
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO vectors (hash, vector, used) VALUES (?, ?, ?)",
                        rows)
                self._evict_over_bound(db)
            except sqlite3.Error as error:
                self._fail("write", error)

    def evict(self, hashes: Collection[str]) -> int:
        """Take these content hashes out (a forgotten memory's chunks) -> rows removed."""
        wanted = sorted(set(hashes))
        if not wanted or self._off:
            return 0
        removed = 0
        with self._lock:
            db = self._connection()
            if db is None:
                return 0
            try:
                with db:
                    for start in range(0, len(wanted), _SLICE):
                        part = wanted[start:start + _SLICE]
                        marks = ",".join("?" * len(part))
                        removed += db.execute(
                            f"DELETE FROM vectors WHERE hash IN ({marks})", part).rowcount
            except sqlite3.Error as error:
                self._fail("evict", error)
        return removed

    def stats(self) -> dict[str, int]:
        """``{"rows", "max_rows", "bytes"}`` (bytes: the file and its journal on disk)."""
        rows = 0
        with self._lock:
            db = None if self._off else self._connection()
            if db is not None:
                try:
                    rows = int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
                except sqlite3.Error as error:
                    self._fail("read", error)
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*")
                   if p.is_file()) if self.path.parent.is_dir() else 0
        return {"rows": rows, "max_rows": self.max_rows, "bytes": size}

    def close(self) -> None:
        """Close the file (the cache reopens it on next use)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # ------------------------------------------------------------------ internals

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is not None or self._off:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=_BUSY_S, check_same_thread=False,
                                 isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, "
                       "vector BLOB NOT NULL, used INTEGER NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)")
        except (sqlite3.Error, OSError) as error:
            self._fail("open", error)
            return None
        self._db = db
        return db

    def _evict_over_bound(self, db: sqlite3.Connection) -> None:
        count = int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
        if count <= self.max_rows:
            return
        drop = count - int(self.max_rows * _LOW_WATER)
        with db:
            db.execute("DELETE FROM vectors WHERE hash IN "
                       "(SELECT hash FROM vectors ORDER BY used, hash LIMIT ?)", (drop,))
        log.info("embedding_cache.evicted", rows=drop, kept=count - drop)

    def _fail(self, action: str, error: BaseException) -> None:
        log.warning("embedding_cache.off", action=action, path=str(self.path),
                    error=f"{type(error).__name__}: {error}")
        self._off = True
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


class CachingEmbedder:
    """An :class:`~magma.embedder.Embedder` that asks ``cache`` first and keeps what it embeds.

    The key of a text is :func:`magma.chunking.chunk_hash` of it, the chunk's own
    ``content_hash``, so :meth:`EmbeddingCache.evict` of a forgotten note's chunk hashes
    removes exactly its vectors. Meant for indexing (chunk texts); queries go to the model.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dims(self) -> int:
        return self.inner.dims

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Like the inner model's ``embed``; rows held by the cache are not embedded again."""
        return self.embed_counted(texts)[0]

    def embed_counted(self, texts: Sequence[str]) -> tuple[np.ndarray, int]:
        """:meth:`embed`, and how many of the rows the cache held (the model embedded the
        others): a sync reports the model's work apart from the cache's."""
        items = list(texts)
        if not items or not self.cache.enabled:
            return self.inner.embed(items), 0
        keys = [chunk_hash(text) for text in items]
        held = self.cache.get(keys)
        missing = [i for i, key in enumerate(keys) if key not in held]
        out = np.zeros((len(items), self.dims), dtype=np.float32)
        if missing:
            fresh = self.inner.embed([items[i] for i in missing])
            out[missing] = fresh
            self.cache.put({keys[i]: fresh[n] for n, i in enumerate(missing)})
        for i, key in enumerate(keys):
            if key in held:
                out[i] = held[key]
        return out, len(items) - len(missing)
