"""State files in the state dir (outside the vault) and the ``dreamd status`` report.

``vault.json`` records which vault a state dir belongs to (so ``dreamd search`` can find the
only vault indexed so far); ``last_sync.json`` records the last reconcile; ``last_check.json``
the last consistency check, by ``dreamd check`` or by the daemon (:func:`write_last_check`).
They are replaced atomically (temp file in the same folder, fsync, ``os.replace``), so a
reader never sees half a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccb.atomic import read_json_object, write_json_atomic
from daemon.sync import SyncReport
from daemon.vault_choice import VAULT_FILE
from daemon.vault_choice import indexed_vaults as known_vaults

__all__ = [
    "DAEMON_STATUS_FILE",
    "LAST_CHECK_FILE",
    "LAST_SYNC_FILE",
    "VAULT_FILE",
    "StatusReport",
    "check_record",
    "known_vaults",
    "newest_check",
    "read_json",
    "write_json_atomic",
    "write_last_check",
    "write_last_sync",
]

DAEMON_STATUS_FILE = "daemon.json"
LAST_SYNC_FILE = "last_sync.json"
LAST_CHECK_FILE = "last_check.json"


def read_json(path: Path) -> dict[str, Any] | None:
    """Read a state file; ``None`` when it is absent or unreadable (a state file is advisory)."""
    return read_json_object(path) or None


def write_last_sync(state_dir: Path, report: SyncReport, finished_at: str,
                    still_there: Callable[[str], bool] = lambda path: False) -> None:
    """Record the outcome of a reconcile for ``dreamd status``. The problem files of earlier
    reconciles stay listed while ``still_there(path)`` and this one did not read them again
    (an incremental sync reads only what changed: a template that does not parse is still
    one until it is fixed)."""
    earlier = (read_json(state_dir / LAST_SYNC_FILE) or {}).get("problems") or []
    seen = {p.path for p in report.problems} | set(report.changed_paths)
    kept = [p for p in earlier if isinstance(p, dict) and isinstance(p.get("path"), str)
            and p["path"] not in seen and still_there(p["path"])]
    write_json_atomic(
        state_dir / LAST_SYNC_FILE,
        {
            "finished_at": finished_at,
            "duration_s": round(report.duration_s, 3),
            "added": report.added,
            "modified": report.modified,
            "deleted": report.deleted,
            "renamed": len(report.renamed),
            "chunks_embedded": report.chunks_embedded,
            "chunks_cached": report.chunks_cached,
            "problems": [{"path": p.path, "kind": p.kind, "reason": p.reason}
                         for p in report.problems] + kept,
            "conflict_copies": [{"path": c.path, "conflict_of": c.conflict_of}
                                for c in report.conflict_copies],
        },
    )


def check_record(*, reason: str, drift: dict[str, int], fixed: int, left: Sequence[str],
                 **extra: object) -> dict[str, Any]:
    """What ``dreamd status`` shows of a check: when (``at``, UTC ISO 8601), who asked
    (``reason``: ``dreamd check``, or the daemon's ``interval`` / ``start`` …), the drift it
    found (``{kind: count}``, empty: clean), how many findings it repaired and the kinds it
    left for the user."""
    return {"at": datetime.now(UTC).isoformat(timespec="milliseconds"), "reason": reason,
            "drift": dict(drift), "fixed": fixed, "left": list(left), **extra}


def write_last_check(state_dir: Path, record: dict[str, Any]) -> None:
    """Record the last check (:func:`check_record`) for ``dreamd status``, whoever ran it."""
    write_json_atomic(state_dir / LAST_CHECK_FILE, record)


def newest_check(*records: object) -> dict[str, Any] | None:
    """The latest of the check records given (``None`` and malformed ones skipped): the
    daemon's own last check and the one ``last_check.json`` holds, so that a ``dreamd
    check`` run after the daemon's is the one ``dreamd status`` reports."""
    def when(record: dict[str, Any]) -> datetime:
        try:
            at = datetime.fromisoformat(str(record.get("at")))
        except ValueError:
            return datetime.min.replace(tzinfo=UTC)
        return at if at.tzinfo is not None else at.replace(tzinfo=UTC)

    found = [r for r in records if isinstance(r, dict) and r.get("at")]
    return max(found, key=when) if found else None


@dataclass(frozen=True, slots=True)
class StatusReport:
    """What ``dreamd status`` shows. ``counts`` maps a name to a number of rows or files.

    ``daemon`` is the running daemon's status file (pid, state, last batch, queue depth,
    problem files) or ``None`` when no daemon holds the vault's lock. ``dream`` holds the last
    dream (``last``, ``counts``) and whether the next one is due (``due``, ``reason``,
    ``sessions``). ``searches`` sums up the recent searches of every process and the intent
    cache's hits (:func:`daemon.metrics.search_summary`); ``metrics`` says whether Prometheus
    metrics are served or written (:func:`daemon.metrics.metrics_status`). ``vectors`` is the
    form of the in-memory chunk vector index (``form`` ``"float32"``, ``"float16"`` or
    ``"int8"``, ``chunks``, ``compact_above``: the ``retrieval.compact_vectors_above``
    threshold, ``ann_form``: ``retrieval.ann_vector_form``) and how the vector stage searches
    (``search`` ``"ivf index"`` or ``"exact scan"``, ``index``: the store's vector index type
    or ``None``, ``ann_above``: ``retrieval.ann_vectors_above``, ``filtered_scan_rows`` and
    ``ann_index``: the settings of those names; ``ann_index`` ``"memory"``: the IVF over the
    in-memory rows answers, ``"store"``: the store's index).
    """

    vault: str
    store: str
    state_dir: str
    last_sync: str | None
    last_sync_duration_s: float | None
    counts: dict[str, int] = field(default_factory=dict)
    problems: tuple[dict[str, str], ...] = ()
    conflict_copies: tuple[dict[str, str], ...] = ()
    daemon: dict[str, Any] | None = None
    dream: dict[str, Any] | None = None
    searches: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    memory_index: dict[str, Any] | None = None
    vectors: dict[str, Any] | None = None
    #: The last consistency check, ``dreamd check``'s or the daemon's (:func:`newest_check`).
    last_check: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "daemon": self.daemon,
            "dream": self.dream,
            "searches": self.searches,
            "metrics": self.metrics,
            "memory_index": self.memory_index,
            "vectors": self.vectors,
            "vault": self.vault,
            "store": self.store,
            "state_dir": self.state_dir,
            "last_sync": self.last_sync,
            "last_sync_duration_s": self.last_sync_duration_s,
            "last_check": self.last_check,
            "counts": dict(self.counts),
            "problems": list(self.problems),
            "conflict_copies": list(self.conflict_copies),
        }
