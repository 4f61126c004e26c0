"""``dreamd run``: the foreground daemon that keeps MAGMA in step with the vault.

Start-up: take the per-vault lock, tell systemd we are up, start watching the vault
(watchfiles on a thread of its own, :class:`daemon.watch_feed.WatchFeed`), reconcile (a stat
walk when nothing changed). A reconcile lets the watcher's batches in between its commits
(:mod:`daemon.interleave`): a note saved while a large vault is still being indexed is
searchable within seconds, not once the whole vault is. Then apply the watcher's batches
(short debounce, :class:`daemon.watch.ChangeHandler`), rescan periodically to catch missed
events, compact the store now and then, and keep a status file current. SIGTERM/SIGINT finish
the current batch (a reconcile stops between two commits) and exit 0; SIGHUP reloads the
configuration (an invalid one is logged and the old one kept).

The watcher sleeps inside watchfiles' Rust core between events and the loop on an event, so
an idle daemon uses almost no CPU: one wake-up per ``step`` in Rust to look at the stop flag,
one per second to tick timers.
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
from daemon.app import App, status_counts
from daemon.client_desk import ClientDesk
from daemon.first_index import indexed_files
from daemon.interleave import Interleave
from daemon.lock import DaemonLock
from daemon.metrics import DaemonMetrics
from daemon.status import DAEMON_STATUS_FILE, LAST_SYNC_FILE, check_record, write_last_check
from daemon.store_guard import StoreGuard
from daemon.sync import SyncReport
from daemon.turns import Turns
from daemon.watch import BatchResult, ChangeHandler, WatchFilter, relative_paths
from daemon.watch_feed import Changes, WatchFeed
from daemon.work_progress import WorkProgress, describe_work
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
#: How long the watch loop waits for the watches to be in place before its catch-up walk, in
#: s: a change after they are is an event, one before is seen by the walk. (The start-up
#: reconcile does not wait: it begins as the watches are set up, and the catch-up walk
#: after it sees what changed before they were.)
FEED_READY_WAIT_S = 30.0
#: While a reconcile runs, the index's counts in the status file are this old at most, in s
#: (:func:`_count` reads eight row counts: tens of ms at 100,000 notes).
COUNT_EVERY_S = 10.0
#: While the start-up reconcile runs, ``dreamd run`` at a terminal says how far it got this
#: often, in s (a first index of a large vault takes most of an hour).
SAY_EVERY_S = 60.0
#: ... once it has this many files to index (a start with a few changes says nothing more).
SAY_FROM_FILES = 500


class ReconcileStopped(Exception):
    """SIGTERM/SIGINT came during a reconcile: it ends between two commits, and the next
    start goes on from there (each commit is whole: :mod:`daemon.sync`)."""


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
        self.say = say
        self._terminate = threading.Event()
        self._wake = threading.Event()
        self._reload_requested = False
        self._notifier = sdnotify.SystemdNotifier()
        self._polling = False
        #: The vault's watcher (``None`` before the start, or while it is started again).
        self.feed: WatchFeed | None = None
        self.state = DaemonState(pid=os.getpid(), vault=str(app.vault_root), started_at=_now())
        self.metrics = DaemonMetrics(app.state_dir, conflicts=self._open_conflicts)
        #: The engines' lock: the watch loop holds it while it applies a batch, rescans,
        #: checks, dreams or reloads; the local API while it answers a client.
        self.lock = threading.RLock()
        #: The lock taken in turns: a reconcile lets the clients waiting for it in between
        #: its commits (:mod:`daemon.turns`).
        self.turns = Turns(self.lock)
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
                self._start_feed()  # saves made during the reconcile are indexed within it
                self.clients.open()  # clients are answered in the reconcile's turns
                with self.lock:
                    self._startup()
                while not self._terminate.is_set():
                    self._watch()
                    if self._reload_requested:
                        self._stop_feed()  # the roots and the debounce may change
                        with self.lock:
                            self._do_reload()
                self._notify("STOPPING=1")
                self.state.state = DaemonPhase.STOPPED
                self.write_status()
            finally:
                self._stop_feed()
                # no thread may be inside LanceDB or the model while the interpreter exits
                # (a native library aborts the process then): the warm-up ends, and a client's
                # command in flight finishes; later ones find the engines taken and go
                # in-process
                self.clients.stop(wait_s=EXIT_WAIT_S)
                self.lock.acquire(timeout=EXIT_WAIT_S)
                self.metrics.set_state(DaemonPhase.STOPPED)
                self.metrics.stop()
            log.info("daemon.stopped", batches=self.state.batches)
        if self.say is not None:
            self.say("dreamd: stopped")
        return self.guard.exit_code

    def _startup(self) -> None:
        self.state.state = DaemonPhase.RECONCILING
        self.write_status()
        self._rescan(reason="startup")
        if self.stopping:  # stopped within the reconcile: the next start goes on from there
            return
        if self.state.state != DaemonPhase.WAITING:
            self._check(reason="startup")
            _maybe_dream(self, reason="startup")  # catch up on a dream missed while off
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
        if self.say is not None:
            self.say(f"dreamd: watching {self.app.vault_root}: notes are indexed as they are "
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
        """Full reconcile, the watcher's batches let in between its commits; a refused mass
        delete puts the daemon in ``waiting``, index kept. SIGTERM ends it between two
        commits."""
        cfg = self.app.settings.sync
        self._next_rescan = time.monotonic() + cfg.rescan_interval_s
        between = BetweenBatches(self, stoppable=True, say=reason == "startup")
        try:
            with WorkProgress(self.state, self.write_status, "reconcile",
                              extra=_first_index(self.app)) as progress, \
                    self.turns.reconcile():
                report = self.syncer.reconcile(progress=progress, interleave=between.interleave)
        except ReconcileStopped:
            log.info("daemon.reconcile_stopped", reason=reason,
                     hint="the next start goes on from the last commit")
            return
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
        self.reconciled(report, between)

    def reconciled(self, report: SyncReport, between: BetweenBatches | None = None) -> None:
        """A full reconcile is done (periodic, or a client's sync): record it, watch again.
        The paths waiting to be applied are dropped (the walk read them after their change)
        but for those the watcher reported while it ran (``between``): the walk may have
        read them before."""
        self.metrics.changes_indexed(None, time.monotonic())  # the walk indexed them all
        _sync_metrics(self.metrics, "reconcile", report.duration_s, report)
        self.app.indexing.record_sync(report)
        self.handler.pending &= between.seen if between is not None else set()
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
        self._after_write(report.changed_paths or report.deleted
                          or (between is not None and between.synced))

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
        self.state.last_check = check_record(
            reason=reason, drift=report.counts(),
            fixed=len(fixed.applied) if fixed is not None else 0,
            left=[f.kind for f in left], versions_pruned=pruned)
        write_last_check(self.app.state_dir, self.state.last_check)
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

    def _start_feed(self) -> WatchFeed:
        """Start watching the vault and its extra roots (the watches are set up on the
        watcher's thread: :attr:`WatchFeed.ready`)."""
        cfg = self.app.settings.sync
        self.feed = WatchFeed(
            self._watched(), watch_filter=WatchFilter(self.app.roots),
            debounce_ms=cfg.debounce_ms, step_ms=STEP_MS, polling=self._polling,
            wake=self._wake).start()
        return self.feed

    def _stop_feed(self) -> None:
        if self.feed is not None:
            self.feed.stop()
            self.feed = None

    def _watch(self) -> None:
        """Apply the watcher's batches and tick the timers until a stop, a reload or a
        failed watcher. The loop sleeps on ``_wake`` (set by the watcher, a signal or the
        store guard), once a second to tick; a watcher (re)started here is followed by a
        catch-up walk (events before the watches were in place are never seen)."""
        if self.feed is not None and not self.feed.alive and not self.stopping:
            _feed_failed(self, self.feed)  # (the start's, during the reconcile)
            return
        feed = self.feed if self.feed is not None else self._start_feed()
        deadline = time.monotonic() + FEED_READY_WAIT_S
        while not feed.ready.wait(0.1) and not self.stopping and time.monotonic() < deadline:
            pass  # (the catch-up walk once the watches are in place; a signal seen at once)
        catch_up = True
        while True:
            if not catch_up:
                self._wake.wait(TICK_MS / 1000)
            self._wake.clear()  # (before the take: changes arriving after it wake it again)
            with self.lock:
                if catch_up:
                    catch_up = False
                    self._rescan(reason="catch-up")
                    self.write_status()
                changes = feed.take()
                if changes:
                    self.apply(changes)
                self._tick()
            if not feed.alive and not self.stopping:
                _feed_failed(self, feed)
                return
            if self.stopping or self._reload_requested:
                return

    def apply(self, changes: Changes, *, within: bool = False) -> frozenset[str]:
        """Apply a watcher batch (and the paths waiting that have settled) -> the index paths
        synced. ``within``: between two commits of a reconcile, whose progress and phase
        the status keeps; the graph, the counts and the session starts follow at its end."""
        self.metrics.changes_seen(relative_paths(self.app.roots, changes), time.monotonic())
        self._heal(relative_paths(self.app.vault_root, changes))
        if within:
            result: BatchResult = self.handler.apply_changes(changes)
        else:
            with WorkProgress(self.state, self.write_status, "batch") as progress:
                result = self.handler.apply_changes(changes, progress=progress)
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
            if not within:  # (the paths wait; the loop retries them after the reconcile)
                self.state.state = DaemonPhase.WAITING
        elif (report is not None and self.state.state == DaemonPhase.WAITING
              and not self.handler.pending):
            self.state.state = DaemonPhase.WATCHING
            self.state.last_error = None
        if report is not None:
            self.metrics.changes_indexed(result.paths, time.monotonic())
            _sync_metrics(self.metrics, "batch", result.duration_s, report)
            if not within:
                self._after_write(report.changed_paths or report.deleted)
                _count(self)
            _note_edits(self.app, self.metrics, report.changed_paths)
        self.write_status()
        return result.paths

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
            _maybe_dream(self, reason="scan")
        elif self.state.state == DaemonPhase.WAITING and now >= self._next_retry:
            self._next_retry = now + WAITING_RETRY_S
            self._rescan(reason="retry")
            self.write_status()
        elif self.handler.pending and self.handler.due(now):
            self.apply(set())
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


class BetweenBatches:
    """The daemon's side of one reconcile's :class:`daemon.interleave.Interleave`: called
    between its commits (the engines' lock held), it applies what the watcher reported
    since, keeps the status file's counts current, and says at a terminal how far a long
    start-up got. ``stoppable``: SIGTERM ends the reconcile there (:class:`ReconcileStopped`);
    ``say``: the start-up's, told at a terminal."""

    def __init__(self, daemon: Daemon, *, stoppable: bool, say: bool = False) -> None:
        self._daemon = daemon
        self._stoppable = stoppable
        self.say = daemon.say if say else None
        self.interleave = Interleave(self)
        #: Index paths the watcher reported, or a batch synced, during the reconcile: the
        #: ones still waiting after it stay waiting (:meth:`Daemon.reconciled`).
        self.seen: set[str] = set()
        #: Whether a watcher batch wrote to the index during the reconcile.
        self.synced = False
        self._counted_at = self._said_at = time.monotonic()
        self._announced = False

    def __call__(self) -> frozenset[str]:
        daemon = self._daemon
        if self._stoppable and daemon.stopping:
            raise ReconcileStopped
        now = time.monotonic()
        self._tell(now)
        daemon.turns.let_in()  # the clients waiting (daemon.turns)
        turned = daemon.turns.indexed()  # what their writes indexed
        self.seen |= turned
        self.synced = self.synced or bool(turned)
        changes = daemon.feed.take() if daemon.feed is not None else set()
        if changes:
            self.seen |= relative_paths(daemon.app.roots, changes)
        elif not (daemon.handler.pending and daemon.handler.due(now)):
            return turned
        synced = daemon.apply(changes, within=True)
        self.synced = self.synced or bool(synced)
        self.seen |= synced  # (a batch that failed waits in pending: kept after the reconcile)
        return synced | turned

    def _tell(self, now: float) -> None:
        """The counts into the status file every :data:`COUNT_EVERY_S`; at a terminal, that
        a long start-up indexes and watches, then how far it got every :data:`SAY_EVERY_S`."""
        daemon = self._daemon
        if now - self._counted_at >= COUNT_EVERY_S:
            self._counted_at = now
            try:
                _count(daemon)
            except StoreError as error:  # (the counts are a hint; the reconcile goes on)
                log.warning("store.counts_failed", error=str(error))
            daemon.write_status()
        work = daemon.state.work
        if self.say is None or not work or work.get("files", 0) < SAY_FROM_FILES:
            return
        if not self._announced:
            self._announced, self._said_at = True, now
            self.say(f"dreamd: indexing {daemon.app.vault_root} "
                     f"({work['files']:,} new or changed files); notes saved meanwhile are "
                     "indexed as they are saved, and dreamd status tells how far it got")
        elif now - self._said_at >= SAY_EVERY_S:
            self._said_at = now
            self.say(f"dreamd: {describe_work(work, daemon.app.zone)}")


def _feed_failed(daemon: Daemon, feed: WatchFeed) -> None:
    """The watcher stopped: the watch limit (fall back to polling), an event it cannot
    hand over (a stat walk reports the file), or anything else; it starts again."""
    error, daemon.feed = feed.failure, None
    if isinstance(error, OSError):
        _watch_failed(daemon, error)
        return
    daemon.metrics.error("watch", error or RuntimeError("the watcher stopped"))
    # watchfiles' own error for an event it cannot hand over ("Unable to decode path": a
    # file name that is not UTF-8): a stat walk reports the file, and watching starts again
    log.error("watch.event_failed", error=str(error)[:300],
              hint="the file is reported by dreamd status and left alone")
    daemon._terminate.wait(1.0)
    with daemon.lock:
        daemon._rescan(reason="watch error")
        daemon.write_status()


def _watch_failed(daemon: Daemon, error: OSError) -> None:
    daemon.metrics.error("watch", error)
    if daemon._polling:
        log.error("watch.failed", error=str(error))
        daemon._terminate.wait(5.0)
        return
    daemon._polling = True
    daemon.state.watcher = "polling"
    limit = _read_int(Path("/proc/sys/fs/inotify/max_user_watches"))
    log.error(
        "watch.limit_reached", error=str(error), max_user_watches=limit,
        hint="raise it: sudo sysctl fs.inotify.max_user_watches=524288 (and add it to "
             "/etc/sysctl.d/ to keep it); dreamd falls back to polling meanwhile",
    )


def _maybe_dream(daemon: Daemon, *, reason: str) -> None:
    """Dream when the gates are open (``auto_dream``); a dream that would change too
    much waits for ``dreamd dream --force`` and is asked about again after the time gate."""
    cfg = daemon.app.settings.auto_dream
    daemon._next_dream_scan = time.monotonic() + daemon._dream_scan_s
    if not cfg.enabled:
        return
    try:
        dreamer = daemon.app.dreamer(index=daemon._index_paths)
        sessions = daemon.app.session_count()
        gate = dreamer.gate(sessions=sessions,
                            min_hours=cfg.time_gate.min_hours_between_dream,
                            max_hours=cfg.time_gate.max_hours_between_dream,
                            min_sessions=cfg.session_gate.min_sessions_for_dream)
        earlier = daemon.state.dream.get("last") if daemon.state.dream else None
        daemon.state.dream = {"checked_at": _now(), "due": gate.due, "reason": gate.reason,
                              "sessions": sessions.total,
                              **({"last": earlier} if earlier else {})}
        if not gate.due:
            daemon.write_status()
            return
        log.info("dream.starting", reason=reason, gate=gate.reason)
        report = dreamer.dream()
        daemon.state.dream["last"] = {"at": _now(), "outcome": "done",
                                      "changed": report.plan.counts.get("changed_memories", 0),
                                      "duration_ms": report.timings_ms.get("total")}
        daemon.metrics.refresh()  # counts the finished dream (dream-last.json)
    except DreamGuardError as error:
        daemon.metrics.dream_outcome("refused")
        log.warning("dream.refused", reason=str(error))
        daemon._next_dream_scan = time.monotonic() + max(
            daemon._dream_scan_s, cfg.time_gate.min_hours_between_dream * 3600)
        if daemon.state.dream is not None:
            daemon.state.dream["last"] = {"at": _now(), "outcome": "asks", "error": str(error)}
    except LockError as error:
        daemon.metrics.dream_outcome("locked")
        log.info("dream.skipped", reason=str(error))
    except (DreamdError, OSError) as error:
        daemon.metrics.dream_outcome("failed")
        daemon.metrics.error("dream", error)
        log.error("dream.failed", reason=reason, error=str(error))
        if daemon.state.dream is not None:
            daemon.state.dream["last"] = {"at": _now(), "outcome": "failed",
                                          "error": str(error)}
    daemon.write_status()


def _first_index(app: App) -> dict[str, int]:
    """For a first index (no reconcile ever finished here): ``{"indexed_before": n}``, the
    files the index held at its start, from which searches say how many files of how many
    are indexed (:mod:`daemon.first_index`); else ``{}``."""
    if (app.state_dir / LAST_SYNC_FILE).exists():
        return {}
    try:
        return {"indexed_before": indexed_files(app.store.file_index())}
    except StoreError as error:  # (a hint only: the searches say less)
        log.warning("store.counts_failed", error=str(error))
        return {}


def _count(daemon: Daemon) -> None:
    """The index's row counts into the daemon's status and metrics."""
    counts = status_counts(daemon.app)  # (memories as dreamd status counts them)
    daemon.state.counts = {name: counts[name] for name in ("files", "notes", "chunks",
                                                           "memories")}
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
