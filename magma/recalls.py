"""Recall statistics: which memories were handed to a caller, for which query, when.

DESIGN.md: usage statistics live in MAGMA, never in the file — a recall must never touch a
user's file. One LanceDB table ``recalls`` in the store (shared by every device, like the
version history), one row per memory per answer: ``memory_id``, ``query_hash`` (SHA-256 hex of
the case-folded, whitespace-collapsed query: the query text itself is not kept), ``at``
(UTC, microseconds), ``device``. :meth:`RecallLog.stats` folds the rows into
:class:`RecallStats` (count, distinct queries, last recall, recall days), which the
lifecycle policy reads for promotion and decay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import lancedb
import pyarrow as pa
import pyarrow.compute as pc

from config.errors import StoreError
from magma import shared_tables
from magma.remote_store import open_failure
from magma.shared_tables import rewrite_live_rows

__all__ = ["RecallLog", "RecallStats", "query_hash"]

_TABLE = "recalls"


@dataclass(frozen=True, slots=True)
class RecallStats:
    """How often a memory was handed to a caller.

    ``count``: recalls; ``distinct_queries``: different query texts among them;
    ``last``: the latest recall (aware datetime) or ``None``; ``days``: distinct UTC days
    with a recall.
    """

    count: int = 0
    distinct_queries: int = 0
    last: datetime | None = None
    days: int = 0


def _schema() -> pa.Schema:
    return pa.schema([
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("query_hash", pa.string(), nullable=False),
        pa.field("at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("device", pa.string()),
    ])


def query_hash(query: str) -> str:
    """SHA-256 hex (64 characters) of ``query`` case-folded with whitespace collapsed, so
    ``"Dark mode?"`` and ``"dark  mode?"`` are one query."""
    text = " ".join(query.casefold().split())
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RecallLog:
    """The ``recalls`` table of one store; open with :meth:`open`."""

    def __init__(self, table: Any, device: str | None) -> None:
        self._table = table
        self._device = device

    @classmethod
    def open(cls, uri: str, *, device: str | None = None,
             storage_options: Mapping[str, str] | None = None) -> RecallLog:
        """Open (or create) the table at the store ``uri`` (``storage_options``: LanceDB's,
        for an object store). Raises ``StoreError``."""
        try:
            db = lancedb.connect(uri, storage_options=dict(storage_options or {}) or None)
            table = (db.open_table(_TABLE) if _TABLE in set(db.list_tables().tables)
                     else db.create_table(_TABLE, schema=_schema(), exist_ok=True))
        except Exception as exc:
            reason = open_failure(exc, uri=uri, options=storage_options or {})
            raise StoreError(f"magma: open recalls in {uri}: {reason}") from exc
        return cls(table, device)

    def record(self, memory_ids: Collection[str], query: str, at: datetime | None = None) -> int:
        """Count one recall of each of ``memory_ids`` for ``query`` at ``at`` (aware; default
        now) -> rows added. Raises ``StoreError``."""
        ids = sorted({m for m in memory_ids if m})
        if not ids:
            return 0
        when = (at or datetime.now(UTC)).astimezone(UTC)
        digest = query_hash(query)
        rows = pa.table({
            "memory_id": ids, "query_hash": [digest] * len(ids), "at": [when] * len(ids),
            "device": [self._device] * len(ids),
        }, schema=_schema())
        try:
            self._table.add(rows)
        except Exception as exc:
            raise StoreError(f"magma: record recalls: {type(exc).__name__}: {exc}") from exc
        return len(ids)

    def stats(self) -> dict[str, RecallStats]:
        """``{memory id: RecallStats}`` for every memory recalled at least once (one columnar
        read and a group-by). Raises ``StoreError``."""
        try:
            self._table.checkout_latest()
            data = self._table.to_arrow().select(["memory_id", "query_hash", "at"])
            if data.num_rows == 0:
                return {}
            data = data.append_column("day", pc.cast(data.column("at"), pa.date32()))
            grouped = data.group_by("memory_id").aggregate([
                ("query_hash", "count"), ("query_hash", "count_distinct"), ("at", "max"),
                ("day", "count_distinct"),
            ]).to_pylist()
        except Exception as exc:
            raise StoreError(f"magma: read recalls: {type(exc).__name__}: {exc}") from exc
        return {
            row["memory_id"]: RecallStats(count=row["query_hash_count"],
                                          distinct_queries=row["query_hash_count_distinct"],
                                          last=row["at_max"],
                                          days=row["day_count_distinct"])
            for row in grouped
        }

    def forget(self, memory_id: str) -> None:
        """Drop every recall of ``memory_id`` and the table versions that held them
        (``dreamd forget``). Raises ``StoreError``."""
        try:
            self._table.checkout_latest()
            self._table.delete(f"memory_id = '{memory_id.replace(chr(39), chr(39) * 2)}'")
            # the delete only marks the rows: rewritten so their bytes go, keeping the
            # recalls other devices count meanwhile (magma.shared_tables)
            rewrite_live_rows(self._table, "memory_id")
        except Exception as exc:
            raise StoreError(f"magma: forget recalls: {type(exc).__name__}: {exc}") from exc

    def optimize(self) -> None:
        """Compact the table's small appends (one per answer) and drop old table versions;
        tried again when another device's compaction commits first."""
        try:
            shared_tables.optimize(self._table, None)
        except Exception as exc:
            raise StoreError(f"magma: optimize recalls: {type(exc).__name__}: {exc}") from exc
