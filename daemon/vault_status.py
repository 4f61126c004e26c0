"""``dreamd status``: what the user sees of one vault, read from the state folder and store.

:func:`vault_status` answers before the first sync too (no counts then): the vault and its
store, the last sync and its problems, the daemon's own status file while one holds the vault,
the last dream and whether the next is due, and a summary of recent searches and metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from config.settings import Settings, intent_cache_enabled
from consistency.dream import dream_due
from daemon.dream import SessionCount, last_dream, read_state
from daemon.dream_sleep import diary_status
from daemon.lock import current_holder
from daemon.memory_index_keeper import index_listing
from daemon.metrics import metrics_status, read_searches, search_summary
from daemon.status import (
    DAEMON_STATUS_FILE,
    LAST_CHECK_FILE,
    LAST_SYNC_FILE,
    StatusReport,
    newest_check,
    read_json,
)
from magma.vector_index import VectorLimits

__all__ = ["vault_status"]


def vault_status(*, vault: Path, store_uri: str, state_dir: Path, settings: Settings,
                 counts: Callable[[], dict[str, int]],
                 sessions: Callable[[], SessionCount], memory_index_record: Path,
                 vector_index: Callable[[], str | None] = lambda: None) -> StatusReport:
    """The status of the vault at ``vault``. ``counts()`` reads the store's counts (only
    once the vault was synced); ``sessions()`` counts the sessions since the last dream;
    ``memory_index_record`` is the record of ``MEMORY.md``'s last build (what it left out);
    ``vector_index()`` the type of the store's vector index, ``None`` without one (asked
    only once the vault was synced)."""
    # the counts first: the open of an older dreamd's index drops it and the record of its
    # last sync, so the status says "never" and counts nothing until a sync rebuilds it
    counted: dict[str, int] = counts() if (state_dir / LAST_SYNC_FILE).exists() else {}
    last = read_json(state_dir / LAST_SYNC_FILE)
    counted = counted if last is not None else {}
    daemon = None
    holder = current_holder(state_dir)
    if holder is not None and (holder.is_daemon or not holder.pid):
        # the status file of this daemon; a one-shot holder (dreamd sync) is no daemon, and
        # a file another pid wrote is a daemon's killed before it could clear it (its
        # "indexing a batch … 120 of 480") while this one starts
        found = read_json(state_dir / DAEMON_STATUS_FILE)
        daemon = found if found and (not holder.pid or found.get("pid") == holder.pid) \
            else {"state": "starting"}
        indexed = daemon.get("counts")
        if last is None and isinstance(indexed, dict):
            # its first index under way: what it has indexed so far (kept current by the
            # daemon while it reconciles, daemon.runner.COUNT_EVERY_S)
            counted = {k: v for k, v in indexed.items() if isinstance(v, int)}
    return StatusReport(
        vault=str(vault),
        store=store_uri,
        state_dir=str(state_dir),
        last_sync=last.get("finished_at") if last else None,
        last_sync_duration_s=last.get("duration_s") if last else None,
        counts=counted,
        problems=tuple(last.get("problems", [])) if last else (),
        conflict_copies=tuple(last.get("conflict_copies", [])) if last else (),
        daemon=daemon, dream=_dream_status(state_dir, settings, sessions()),
        searches=search_summary(read_searches(state_dir),
                                cache_enabled=intent_cache_enabled(settings)),
        metrics=metrics_status(settings.metrics, daemon),
        memory_index=index_listing(vault, settings.vault.memory_folder, memory_index_record),
        vectors=vectors_status(counted.get("chunks"), VectorLimits.of(settings.retrieval),
                               vector_index() if last is not None else None),
        last_check=newest_check(daemon.get("last_check") if daemon else None,
                                read_json(state_dir / LAST_CHECK_FILE)),
    )


def vectors_status(chunks: int | None, limits: VectorLimits, index: str | None = None
                   ) -> dict[str, object]:
    """The in-memory chunk vector index's form for ``chunks`` chunks (``None`` before the
    first sync: the form the first sync's size will decide) and its thresholds (``limits``:
    ``compact_above``, ``ann_above``, ``ann_form``, ``filtered_scan_rows``, ``ann_index``,
    the ``retrieval`` settings of those names), and how the vector stage searches:
    ``search`` ``"ivf index"`` when there are more than ``ann_above`` chunks and the IVF
    ``ann_index`` names is there (``"memory"``: the in-memory rows' own, always;
    ``"store"``: when the store keeps one, ``index``: its type), else ``"exact scan"``
    (``None`` before the first sync); the rows are exact until that index is there."""
    ann_above = limits.ann_above
    memory = chunks is not None and limits.in_memory(chunks)
    ann = chunks is not None and limits.asks_index(chunks) and (memory or index is not None)
    search = None if chunks is None else "ivf index" if ann else "exact scan"
    form = limits.form(chunks, indexed=memory or index is not None) \
        if chunks is not None else None
    return {"form": form,
            "chunks": chunks, "compact_above": limits.compact_above, "search": search,
            "index": index, "ann_above": ann_above, "ann_form": limits.ann_form,
            "filtered_scan_rows": limits.filtered_scan_rows, "ann_index": limits.ann_index}


def _dream_status(state_dir: Path, settings: Settings, sessions: SessionCount
                  ) -> dict[str, object]:
    """The last dream and whether the next is due (for ``dreamd status``)."""
    cfg = settings.auto_dream
    gate = dream_due(last_dream=last_dream(state_dir), sessions=sessions.total,
                     now=datetime.now(UTC),
                     min_hours=cfg.time_gate.min_hours_between_dream,
                     max_hours=cfg.time_gate.max_hours_between_dream,
                     min_sessions=cfg.session_gate.min_sessions_for_dream)
    state = read_state(state_dir)
    return {"last": state.get("last_dream"), "counts": state.get("counts"),
            "auto": cfg.enabled, "due": gate.due, "reason": gate.reason,
            "sessions": {"mcp": sessions.mcp, "transcripts": sessions.transcripts,
                         "edit_bursts": sessions.edit_bursts},
            "diary": diary_status(state_dir)}
