"""``dreamd run``: the foreground daemon that keeps MAGMA in step with the vault.

Start-up: take the per-vault lock, tell systemd we are up, reconcile (a stat walk when
nothing changed). Then watch the vault with watchfiles (short debounce, batches handled by
:class:`daemon.watch.ChangeHandler`), rescan periodically to catch missed events, compact the
store now and then, and keep a status file current. SIGTERM/SIGINT finish the current batch
and exit 0; SIGHUP reloads the configuration (an invalid one is logged and the old one kept).

The loop sleeps inside watchfiles' Rust core between events, so an idle daemon uses almost no
CPU: one wake-up per ``step`` to look at the stop flag, one per second to tick timers.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Any

import sdnotify
import structlog
import watchfiles

from ccb.atomic import write_json_atomic
from ccb.writer import sha256_hex
from config import LoadedSettings
from config.errors import (
    ConfigError,
    DreamdError,
    DreamGuardError,
    LockError,
    MassDeleteError,
    StoreError,
)
from daemon.app import App
from daemon.client_desk import ClientDesk
from daemon.lock import DaemonLock
from daemon.metrics import DaemonMetrics
from daemon.status import DAEMON_STATUS_FILE
from daemon.store_guard import StoreGuard
from daemon.sync import SyncReport
from daemon.watch import BatchResult, ChangeHandler, WatchFilter, relative_paths
from daemon.work_progress import WorkProgress
from magma.gc_pause import trim_heap
from magma.store import text_index_behind

__all__ = ["Daemon", "DaemonState", "maintain_now", "trim_now"]

log = structlog.get_logger("dreamd.daemon")

#: How often the watch loop wakes up with no events to tick timers (rescan, maintenance,
#: watchdog, deferred paths), in ms. One wake-up a second costs nothing measurable.
TICK_MS = 1000
#: watchfiles' ``step``: how long the Rust core waits for more events before yielding a
#: batch, in ms (DESIGN.md: debounce 50 + step 10 gave ≈14 ms latency; 20 halves idle wake-ups).
STEP_MS = 20
#: Old table versions younger than this survive compaction, so a search running in another
#: process never loses the version it reads (DESIGN.md: cleanup frees space only with 0).
KEEP_VERSIONS = timedelta(minutes=5)
#: Compact after this many applied batches, or after ``MAINTAIN_INTERVAL_S`` with writes —
#: once the vault has been quiet for ``MAINTAIN_QUIET_S`` (compaction of a 6,000-note store
#: takes ≈3 s of CPU and holds the loop, so it waits for a pause in the user's editing),
#: and regardless of quiet after ``MAINTAIN_FORCE_BATCHES`` (the full-text tail and the
#: version count must stay bounded for someone who never pauses).
#: A batch that leaves :data:`magma.store_tables.MAINTAIN_UNINDEXED_ROWS` chunks or more
#: outside the full-text index (a folder of notes dropped into the vault) is folded in at
#: the next quiet pause too, without waiting for the interval: every full-text search scans
#: those rows one by one until then (9,141 of them: 2.4 s a search instead of 33 ms).
MAINTAIN_EVERY_BATCHES = 50
MAINTAIN_INTERVAL_S = 600.0
MAINTAIN_QUIET_S = 30.0
MAINTAIN_FORCE_BATCHES = 500
#: Seconds without a search or a batch after which the watch loop gives the C heap's free
#: pages back (:func:`magma.gc_pause.trim_heap`, :func:`trim_now`). The buffers a search's
#: stages read and let go (LanceDB's decoded pages, the scores' arrays) stay in glibc's
#: arenas otherwise: on the 100,000-note bench index (``bench/warm_memory.py --searches 50``)
#: 1,508-1,514 MB of anonymous memory after 50 searches, 1,442-1,443 MB once trimmed. The
#: trim runs under the engines' lock, so never beside a search.
TRIM_QUIET_S = 5.0
#: At exit, how long to wait for the warm-up and a client's command in flight, in s.
EXIT_WAIT_S = 30.0
#: While waiting (vault unreadable, mass delete refused), look again this often, in s.
WAITING_RETRY_S = 30.0


class DaemonPhase(StrEnum):
    """What the daemon is doing (the status file's ``state``, the metrics' state set)."""

    STARTING = "starting"
    RECONCILING = "reconciling"
    WATCHING = "watching"
    #: A reconcile or batch failed; it retries every :data:`WAITING_RETRY_S` seconds.
    WAITING = "waiting"
    STOPPED = "stopped"


@dataclass(slots=True)
class DaemonState:
    """What the status file says, updated as the daemon works."""

    pid: int
    vault: str
    started_at: str
    state: DaemonPhase = DaemonPhase.STARTING
    ready_at: str | None = None
    queue_depth: int = 0
    batches: int = 0
    last_batch: dict[str, Any] | None = None
    last_rescan: str | None = None
    last_error: str | None = None
    watcher: str = "inotify"
    problems: list[dict[str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    last_check: dict[str, Any] | None = None
    dream: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    #: The local API's socket once clients can connect (:mod:`daemon.local_api`).
    api: str | None = None
    #: The batch, reconcile or client's sync under way (:class:`daemon.work_progress.WorkProgress`).
    work: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def maintain_now(*, pending: int, quiet_s: float, since_maintain_s: float,
                 text_index_behind: bool) -> bool:
    """Whether the watch loop compacts the store now: ``pending`` batches applied since the
    last compaction, the vault quiet for ``quiet_s`` seconds, ``since_maintain_s`` seconds
    since that compaction, and whether a batch left
    :data:`magma.store_tables.MAINTAIN_UNINDEXED_ROWS` chunks outside the full-text index
    (:data:`MAINTAIN_EVERY_BATCHES` and the constants beside it)."""
    if pending >= MAINTAIN_FORCE_BATCHES:
        return True
    if quiet_s < MAINTAIN_QUIET_S or not pending:
        return False
    return pending >= MAINTAIN_EVERY_BATCHES or text_index_behind \
        or since_maintain_s >= MAINTAIN_INTERVAL_S


def trim_now(*, worked_at: float | None, trimmed_at: float, now: float) -> bool:
    """Whether the watch loop trims the C heap now: the last search or batch at
    ``worked_at`` (``None``: none), the last trim at ``trimmed_at``, the clock at ``now``
    (seconds of one clock): work done since the trim and quiet for :data:`TRIM_QUIET_S`."""
    return worked_at is not None and worked_at > trimmed_at \
        and now - worked_at >= TRIM_QUIET_S


def _trimmed(app: App, batch_at: float, trimmed_at: float, now: float) -> float:
    """Trim the C heap when :func:`trim_now` says so, after the last batch at ``batch_at``
    and the search pipeline's last answer -> when the heap was last trimmed."""
    retriever = vars(app).get("retriever")  # none made yet: nothing searched
    searched = None if retriever is None else retriever.searched_at
    worked = batch_at if searched is None else max(searched, batch_at)
    if not trim_now(worked_at=worked, trimmed_at=trimmed_at, now=now):
        return trimmed_at
    trim_heap()
    return now


def _left_behind(app: App) -> bool:
    """:func:`magma.store.text_index_behind` of ``app``'s store; a store whose stats cannot
    be read is logged and counts as not behind (a hint only: the interval still holds)."""
    try:
        return text_index_behind(app.store)
    except StoreError as error:
        log.warning("store.stats_failed", error=str(error))
        return False


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Daemon:
    """One running daemon for one vault. ``reload`` re-reads settings for SIGHUP."""

    def __init__(self, app: App, *, reload: Callable[[], LoadedSettings],
                 say: Callable[[str], None] | None = None) -> None:
        self.app = app
        self._reload = reload
        #: one plain line for the person who started it at a terminal (``dreamd run``):
        #: that it watches, and that it stopped; the log events go on beside it
        self._say = say
        self._terminate = threading.Event()
        self._wake = threading.Event()
        self._reload_requested = False
        self._notifier = sdnotify.SystemdNotifier()
        self._polling = False
        self.state = DaemonState(pid=os.getpid(), vault=str(app.vault_root), started_at=_now())
        self.metrics = DaemonMetrics(app.state_dir, conflicts=self._open_conflicts)
        #: The engines' lock: the watch loop holds it while it applies a batch, rescans,
        #: checks, dreams or reloads; the local API while it answers a client.
        self.lock = threading.RLock()
        #: Clients: the engines' warm-up, the local API and the index work of their writes.
        self.clients = ClientDesk(self)
        #: Stops the daemon when another process changes its store under it.
        self.guard = StoreGuard(lambda: self.app.store, stop=(self._terminate, self._wake),
                                say=say)

    # ------------------------------------------------------------------ wiring

    def _build(self) -> None:
        cfg = self.app.settings.sync
        self.app.indexing.resident_index = self.clients.resident_index
        self.app.indexing.resident_sync = self.clients.resident_sync
        self.syncer = self.app.make_syncer()
        self.handler = ChangeHandler(self.app.roots, self.syncer)
        self.checker = self.app.consistency(index=self._index_paths)
        self._next_rescan = time.monotonic() + cfg.rescan_interval_s
        self._next_check = time.monotonic() + self.app.settings.check.interval_minutes * 60
        self._next_retry = time.monotonic() + WAITING_RETRY_S
        self._batches_since_maintain = 0
        self._text_index_behind = False  # MAINTAIN_UNINDEXED_ROWS left by a batch
        self._heal_pending: set[str] = set()
        self._last_maintain = time.monotonic()
        self._last_batch_at = self._trimmed_at = time.monotonic()
        self._next_dream_scan = time.monotonic() + self._dream_scan_s

    @property
    def _dream_scan_s(self) -> float:
        return self.app.settings.auto_dream.session_gate.scan_interval_ms / 1000

    def _notify(self, message: str) -> None:
        self._notifier.notify(message)

    def write_status(self) -> None:
        handler = getattr(self, "handler", None)
        self.state.queue_depth = len(handler.pending) if handler is not None else 0
        self.metrics.set_state(self.state.state)
        self.metrics.set_queue_depth(self.state.queue_depth)
        self.state.metrics = self.metrics.describe()
        write_json_atomic(self.app.state_dir / DAEMON_STATUS_FILE, self.state.as_dict())

    # ------------------------------------------------------------------ signals

    def _on_stop(self, signum: int, frame: FrameType | None) -> None:
        log.info("daemon.stopping", signal=signal.Signals(signum).name)
        self._terminate.set()
        self._wake.set()

    def _on_hup(self, signum: int, frame: FrameType | None) -> None:
        self._reload_requested = True
        self._wake.set()

    def _install_signals(self) -> None:
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, self._on_hup)

    # ------------------------------------------------------------------ main loop

    def run(self) -> int:
        """Run until SIGTERM/SIGINT; returns the process exit code (0 on a clean stop).

        Raises ``LockError`` when another daemon holds this vault.
        """
        with DaemonLock(self.app.state_dir):
            self._build()  # opens the store: only once this process is the vault's one writer
            self._install_signals()
            # after the lock: a second daemon refused for this vault never takes the port
            self.metrics.configure(self.app.settings.metrics)
            try:
                self.write_status()
                self._notify("READY=1")
                self._notify("STATUS=reconciling the vault with the index")
                with self.lock:
                    self._startup()
                while not self._terminate.is_set():
                    self._watch()
                    if self._reload_requested:
                        with self.lock:
                            self._do_reload()
                self._notify("STOPPING=1")
                self.state.state = DaemonPhase.STOPPED
                self.write_status()
            finally:
                # no thread may be inside LanceDB or the model while the interpreter exits
                # (a native library aborts the process then): the warm-up ends, and a client's
                # command in flight finishes; later ones find the engines taken and go
                # in-process
                self.clients.stop(wait_s=EXIT_WAIT_S)
                self.lock.acquire(timeout=EXIT_WAIT_S)
                self.metrics.set_state(DaemonPhase.STOPPED)
                self.metrics.stop()
            log.info("daemon.stopped", batches=self.state.batches)
        if self._say is not None:
            self._say("dreamd: stopped")
        return self.guard.exit_code

    def _startup(self) -> None:
        self.state.state = DaemonPhase.RECONCILING
        self.write_status()
        self._rescan(reason="startup")
        if self.state.state != DaemonPhase.WAITING:
            self._check(reason="startup")
            self._maybe_dream(reason="startup")  # catch up on a dream missed while off
        if self._batches_since_maintain:  # a restart with nothing changed costs a stat walk
            self._maintain()
        if self.state.state != DaemonPhase.WAITING:
            self.state.state = DaemonPhase.WATCHING
        self._refresh_session_starts()  # memories edited while no daemon ran
        self.state.ready_at = _now()
        self.write_status()
        # Load the embedding model and the search index now, in the background, so the first
        # edit and the first client do not wait for them (≈2 s); the loop keeps watching
        # meanwhile, and the local API opens once they are warm.
        self.clients.start()
        self._notify(f"STATUS={self.state.state}")
        log.info("daemon.ready", vault=str(self.app.vault_root), state=self.state.state)
        if self._say is not None:
            self._say(f"dreamd: watching {self.app.vault_root}: notes are indexed as they are "
                      "saved, and searches from the command line and assistants come here; "
                      "Ctrl-C stops it")

    @property
    def stopping(self) -> bool:
        """Whether SIGTERM/SIGINT asked the daemon to stop."""
        return self._terminate.is_set()

    def index_write(self, paths: Collection[str], *, purge: bool) -> None:
        """Index a client's write now: this process is the store's one writer."""
        with self.lock:
            self.app.indexing.sync_now(self.syncer, paths, purge=purge)
            self._after_write(True)

    def _rescan(self, *, reason: str) -> None:
        """Full reconcile; a refused mass delete puts the daemon in ``waiting``, index kept."""
        cfg = self.app.settings.sync
        self._next_rescan = time.monotonic() + cfg.rescan_interval_s
        try:
            with WorkProgress(self.state, self.write_status, "reconcile") as progress:
                report = self.syncer.reconcile(progress=progress)
        except MassDeleteError as error:
            self.metrics.error("sync", error)
            self.state.state = DaemonPhase.WAITING
            self.state.last_error = str(error)
            log.error("daemon.waiting", reason=str(error))
            return
        except DreamdError as error:
            self.metrics.error("sync", error)
            self.state.last_error = str(error)
            self.state.state = DaemonPhase.WAITING
            log.error("daemon.rescan_failed", reason=reason, error=str(error))
            return
        self.reconciled(report)

    def reconciled(self, report: SyncReport) -> None:
        """A full reconcile is done (periodic, or a client's sync): record it, watch again."""
        self.metrics.changes_indexed(None, time.monotonic())  # the walk indexed them all
        _sync_metrics(self.metrics, "reconcile", report.duration_s, report)
        self.app.indexing.record_sync(report)
        self.handler.pending.clear()
        if self.state.state == DaemonPhase.WAITING:
            self.state.state = DaemonPhase.WATCHING
        self.state.last_error = None  # the whole vault is indexed: no earlier error holds
        if self.state.last_batch:
            self.state.last_batch["error"] = None
        self.state.last_rescan = _now()
        self.state.problems = [
            {"path": p.path, "kind": p.kind, "reason": p.reason} for p in report.problems
        ]
        _count(self)
        self._after_write(report.changed_paths or report.deleted)

    def _maintain(self) -> None:
        """Compact the index tables and the version table (each write is one append)."""
        self.app.store.maintain(cleanup_older_than=KEEP_VERSIONS)
        self.app.versions.optimize(KEEP_VERSIONS)
        self._batches_since_maintain, self._text_index_behind = 0, False

    def _index_paths(self, paths: Collection[str]) -> bool:
        """The checker's re-index: this process is the store's writer."""
        self.syncer.sync_paths(paths)
        self._after_write(True)
        return True

    def _check(self, *, reason: str) -> None:
        """Run the consistency checker and apply its automatic repairs (stale and missing
        entries, confirmed orphans, the version archive, ``MEMORY.md``); prune versions by
        policy. Drift that needs ``dreamd check --fix`` or the user is left and logged."""
        self._next_check = time.monotonic() + self.app.settings.check.interval_minutes * 60
        try:
            report = self.checker.check()
            fixed = self.checker.fix(report, automatic_only=True) if not report.clean else None
            self.app.versions.repair()  # also copies other devices' versions here
            policy = self.app.settings.versions
            pruned = self.app.versions.prune(keep_last=policy.keep_last,
                                             keep_days=policy.keep_days, now=datetime.now(UTC))
        except (DreamdError, OSError) as error:  # the daemon keeps watching either way
            self.metrics.error("check", error)
            log.error("daemon.check_failed", reason=reason, error=str(error))
            return
        # Contradictions are the dream's to settle (merge or supersede), not check --fix's.
        left = [f for f in (fixed.left if fixed is not None else ()) if f.kind != "contradiction"]
        self.state.last_check = {
            "at": _now(), "reason": reason, "drift": report.counts(),
            "fixed": len(fixed.applied) if fixed is not None else 0,
            "left": [f.kind for f in left], "versions_pruned": pruned,
        }
        if left:
            log.warning("daemon.drift_left", kinds=sorted({f.kind for f in left}),
                        hint="run dreamd check: it lists what is left and how to settle each")
        self.write_status()

    def _open_conflicts(self) -> int:
        """Open conflicts (``dreamd conflicts``), for the metrics (0 before the first build)."""
        checker = getattr(self, "checker", None)
        return len(checker.conflicts()) if checker is not None else 0

    def _watched(self) -> list[Path]:
        """The vault and every extra root that exists now (a missing one is picked up by a
        rescan once it is back; watching a missing path would stop the watcher)."""
        paths = [self.app.vault_root]
        for root in self.app.roots[1:]:
            if root.path.is_dir():
                paths.append(root.path)
            else:
                log.warning("daemon.root_not_watched", root=str(root.path),
                            reason="folder missing")
        return paths

    def _watch(self) -> None:
        cfg = self.app.settings.sync
        self._wake.clear()
        catch_up = True
        try:
            for changes in watchfiles.watch(
                *self._watched(),
                watch_filter=WatchFilter(self.app.roots),
                debounce=cfg.debounce_ms, step=STEP_MS, stop_event=self._wake,
                rust_timeout=TICK_MS, yield_on_timeout=True, raise_interrupt=False,
                force_polling=self._polling or None, ignore_permission_denied=True,
            ):
                with self.lock:
                    if catch_up:
                        # The watcher is up now: one stat walk catches what changed between
                        # the last reconcile and this moment (events before the watch are
                        # never seen).
                        catch_up = False
                        self._rescan(reason="catch-up")
                        self.write_status()
                    if changes:
                        self._apply(changes)
                    self._tick()
                if self._wake.is_set():
                    return
        except OSError as error:
            self._watch_failed(error)
        except RuntimeError as error:
            # watchfiles' own error for an event it cannot hand over ("Unable to decode
            # path": a file name that is not UTF-8): a stat walk reports the file, and
            # watching starts again
            self.metrics.error("watch", error)
            log.error("watch.event_failed", error=str(error)[:300],
                      hint="the file is reported by dreamd status and left alone")
            self._terminate.wait(1.0)
            with self.lock:
                self._rescan(reason="watch error")
                self.write_status()

    def _watch_failed(self, error: OSError) -> None:
        self.metrics.error("watch", error)
        if self._polling:
            log.error("watch.failed", error=str(error))
            self._terminate.wait(5.0)
            return
        self._polling = True
        self.state.watcher = "polling"
        limit = _read_int(Path("/proc/sys/fs/inotify/max_user_watches"))
        log.error(
            "watch.limit_reached", error=str(error), max_user_watches=limit,
            hint="raise it: sudo sysctl fs.inotify.max_user_watches=524288 (and add it to "
                 "/etc/sysctl.d/ to keep it); dreamd falls back to polling meanwhile",
        )

    def _apply(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        self.metrics.changes_seen(relative_paths(self.app.roots, changes), time.monotonic())
        self._heal(relative_paths(self.app.vault_root, changes))
        with WorkProgress(self.state, self.write_status, "batch") as progress:
            result: BatchResult = self.handler.apply_changes(changes, progress=progress)
        if result.paths:
            self._last_batch_at = time.monotonic()
        self.state.batches += 1
        report = result.report
        self.state.last_batch = {
            "at": _now(), "paths": len(result.paths),
            "duration_ms": round(result.duration_s * 1000), "error": result.error,
            **({"added": report.added, "modified": report.modified, "deleted": report.deleted,
                "renamed": len(report.renamed), "chunks_embedded": report.chunks_embedded,
                "chunks_cached": report.chunks_cached,
                "problems": [p.path for p in report.problems]} if report else {}),
        }
        if result.failure is not None:
            self.metrics.error("sync", result.failure)
            self.state.last_error = result.error
            self.state.state = DaemonPhase.WAITING
        elif (report is not None and self.state.state == DaemonPhase.WAITING
              and not self.handler.pending):
            self.state.state = DaemonPhase.WATCHING
            self.state.last_error = None
        if report is not None:
            self.metrics.changes_indexed(result.paths, time.monotonic())
            _sync_metrics(self.metrics, "batch", result.duration_s, report)
            self._after_write(report.changed_paths or report.deleted)
            _count(self)
            _note_edits(self.app, self.metrics, report.changed_paths)
        self.write_status()

    def _maybe_dream(self, *, reason: str) -> None:
        """Dream when the gates are open (``auto_dream``); a dream that would change too
        much waits for ``dreamd dream --force`` and is asked about again after the time gate."""
        cfg = self.app.settings.auto_dream
        self._next_dream_scan = time.monotonic() + self._dream_scan_s
        if not cfg.enabled:
            return
        try:
            dreamer = self.app.dreamer(index=self._index_paths)
            sessions = self.app.session_count()
            gate = dreamer.gate(sessions=sessions,
                                min_hours=cfg.time_gate.min_hours_between_dream,
                                max_hours=cfg.time_gate.max_hours_between_dream,
                                min_sessions=cfg.session_gate.min_sessions_for_dream)
            self.state.dream = {"checked_at": _now(), "due": gate.due, "reason": gate.reason,
                                "sessions": sessions.total,
                                **({"last": self.state.dream.get("last")}
                                   if self.state.dream and self.state.dream.get("last") else {})}
            if not gate.due:
                self.write_status()
                return
            log.info("dream.starting", reason=reason, gate=gate.reason)
            report = dreamer.dream()
            self.state.dream["last"] = {"at": _now(), "outcome": "done",
                                        "changed": report.plan.counts.get("changed_memories", 0),
                                        "duration_ms": report.timings_ms.get("total")}
            self.metrics.refresh()  # counts the finished dream (dream-last.json)
        except DreamGuardError as error:
            self.metrics.dream_outcome("refused")
            log.warning("dream.refused", reason=str(error))
            self._next_dream_scan = time.monotonic() + max(
                self._dream_scan_s, cfg.time_gate.min_hours_between_dream * 3600)
            if self.state.dream is not None:
                self.state.dream["last"] = {"at": _now(), "outcome": "asks", "error": str(error)}
        except LockError as error:
            self.metrics.dream_outcome("locked")
            log.info("dream.skipped", reason=str(error))
        except (DreamdError, OSError) as error:
            self.metrics.dream_outcome("failed")
            self.metrics.error("dream", error)
            log.error("dream.failed", reason=reason, error=str(error))
            if self.state.dream is not None:
                self.state.dream["last"] = {"at": _now(), "outcome": "failed", "error": str(error)}
        self.write_status()

    def _heal(self, paths: set[str]) -> None:
        """An editor's save over one of dreamd's writes: merge our edit back (ccb.writer).
        Paths the writer lock kept us from looking at are retried on the next tick."""
        wanted = paths | self._heal_pending
        if not wanted:
            return
        try:
            done = self.app.writer.heal(wanted, wait=False)
        except OSError as error:
            self.metrics.error("heal", error)
            log.warning("daemon.heal_failed", error=str(error))
            done = []
        self._heal_pending = wanted if done is None else set()

    def _after_write(self, changed: object) -> None:
        if changed:
            self._batches_since_maintain += 1
            self._text_index_behind = self._text_index_behind or _left_behind(self.app)
            self._refresh_session_starts(every=True)

    def _refresh_session_starts(self, *, every: bool = False) -> None:
        """:func:`daemon.context.refresh_session_starts` (``every``: the index changed)."""
        from daemon.context import refresh_session_starts

        refresh_session_starts(self.app, every=every)

    def _tick(self) -> None:
        now = time.monotonic()
        self._notify("WATCHDOG=1")
        if self.guard.changed(now, failed=self.state.last_error):
            return
        if now >= self._next_rescan:
            self._rescan(reason="periodic")
            self.write_status()
        elif now >= self._next_check and self.state.state != DaemonPhase.WAITING:
            self._check(reason="periodic")
        elif now >= self._next_dream_scan and self.state.state != DaemonPhase.WAITING:
            self._maybe_dream(reason="scan")
        elif self.state.state == DaemonPhase.WAITING and now >= self._next_retry:
            self._next_retry = now + WAITING_RETRY_S
            self._rescan(reason="retry")
            self.write_status()
        elif self.handler.pending and self.handler.due(now):
            self._apply(set())
        elif self._heal_pending:
            self._heal(set())
        if maintain_now(pending=self._batches_since_maintain,
                        quiet_s=now - self._last_batch_at,
                        since_maintain_s=now - self._last_maintain,
                        text_index_behind=self._text_index_behind):
            self._maintain()
            self._last_maintain = now
            log.info("store.maintained")
        self._trimmed_at = _trimmed(self.app, self._last_batch_at, self._trimmed_at, now)

    def _do_reload(self) -> None:
        self._reload_requested = False
        try:
            loaded = self._reload()
            fresh = self.app.reloaded(loaded)
        except ConfigError as error:
            log.error("config.reload_failed", error=str(error), kept="previous configuration")
            return
        self.app = fresh
        self._build()
        self.clients.refresh()  # api.json names the settings clients must match
        self.metrics.configure(fresh.settings.metrics)
        log.info("config.reloaded", config=str(loaded.config_path), profile=loaded.profile)


def _count(daemon: Daemon) -> None:
    """The index's row counts into the daemon's status and metrics."""
    counts = daemon.app.store.counts()
    daemon.state.counts = {"files": counts.files, "notes": counts.notes,
                           "chunks": counts.chunks, "memories": counts.memories}
    daemon.metrics.set_index(daemon.state.counts)


def _note_edits(app: App, metrics: DaemonMetrics, paths: Collection[str]) -> None:
    """Count a batch with a user's edit for the dream gate's editing sessions (dreamd's own
    writes, recognised by their hash, are not the user's)."""
    writer = app.writer
    for path in paths:
        data = writer.read(path) if not path.startswith(".") else None
        if data is not None and writer.origin_of(sha256_hex(data)) is None:
            try:
                app.sessions.record("edit")
            except OSError as error:
                metrics.error("sessions", error)
                log.warning("daemon.session_not_counted", error=str(error))
            return


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def _sync_metrics(metrics: DaemonMetrics, kind: str, duration_s: float,
                  report: SyncReport) -> None:
    """One reconcile or batch's counts, for the metrics."""
    metrics.sync_done(kind, duration_s, added=report.added, modified=report.modified,
                      deleted=report.deleted, renamed=len(report.renamed),
                      chunks_embedded=report.chunks_embedded)
