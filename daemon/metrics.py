"""Prometheus metrics of the daemon, and the search log they are fed from.

Two halves:

- **The search log** (``<state dir>/searches.jsonl``). Searches run in other processes than
  the daemon (``dreamd search``, ``dreamd context``, the MCP server), so :meth:`App.search
  <daemon.app.App.search>` appends one JSON line per search (:class:`SearchRecord`: time, total
  and per-stage milliseconds, stage statuses, intent cache result, hits, verifier drops). Each
  line is one ``write(2)`` on an ``O_APPEND`` descriptor, so lines of concurrent processes never
  interleave (a line is far below a page). The log is bounded: past
  :data:`SEARCH_LOG_MAX_BYTES` the file becomes ``searches.1.jsonl`` (the previous one is
  dropped), so at most two generations (≤ 1 MiB) are kept, the recent half always whole. A
  search never fails because of the log (an error is logged and the search goes on).
- **The exporter** (:class:`DaemonMetrics`), used by ``dreamd run`` when ``metrics.enabled``:
  Prometheus text exposition at ``http://127.0.0.1:<metrics.port>/metrics`` (loopback only) and/or
  ``metrics.textfile`` rewritten atomically every ``metrics.interval_s`` for node_exporter's
  textfile collector. New search-log lines are read at every scrape and every interval (a tail
  that follows the rotation), so nothing is counted twice.

Names follow the Prometheus naming conventions (https://prometheus.io/docs/practices/naming/):
prefix ``dreamd_``, base units in the name (``_seconds``), ``_total`` on counters, label values
from closed sets. prometheus_client is imported only by the daemon (≈0.1 s measured here), not by
every ``dreamd search`` that writes the log.
"""

from __future__ import annotations

import errno
import json
import math
import os
import statistics
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import filelock
import structlog

from ccb.atomic import read_json_object
from config.settings import MetricsSettings

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client import CollectorRegistry, Metric

    from daemon.retrieval import SearchTrace

__all__ = [
    "CACHE_RESULTS",
    "DREAM_OUTCOMES",
    "SEARCH_LOG_FILE",
    "SEARCH_LOG_MAX_BYTES",
    "SEARCH_LOG_ROTATED",
    "STATUS_WINDOW",
    "DaemonMetrics",
    "SearchLogTail",
    "SearchRecord",
    "StageRecord",
    "append_search",
    "metrics_status",
    "read_searches",
    "search_record",
    "search_summary",
    "stage_status_label",
]

log = structlog.get_logger("dreamd.metrics")

#: The search log in the state dir, and its previous generation.
SEARCH_LOG_FILE = "searches.jsonl"
SEARCH_LOG_ROTATED = "searches.1.jsonl"
_ROTATE_LOCK = "searches.lock"
#: One generation's size limit in bytes; with the previous generation the log stays ≤ 1 MiB
#: (a line is ≈ 300 bytes: ≈ 1,700 searches a generation).
SEARCH_LOG_MAX_BYTES = 512 * 1024
#: How many recent searches ``dreamd status`` and ``dreamd_intent_cache_hit_ratio`` look at.
STATUS_WINDOW = 1000

#: Intent cache lookup results (label ``result``); ``trace.intent_cache`` spells the
#: semantic one ``semantic-hit``.
CACHE_RESULTS = ("hit", "semantic_hit", "miss", "off")
#: Outcomes of ``dreamd_dream_runs_total`` (label ``outcome``).
DREAM_OUTCOMES = ("ran", "nothing-to-do", "refused", "locked", "failed")
#: Stages of a search (label ``stage``; ``verifier`` only when the LLM verifier is on).
_STAGES = ("ccb-fast", "magma-extend", "full-fusion", "verifier")
#: Stage statuses (:class:`daemon.retrieval.StageTrace`) as label values; ``ran:`` is the
#: verifier's "ran: 1 failed, 0 late (kept unjudged)".
_STATUS_LABELS = {
    "ran": "ran", "ran late": "ran-late", "ran:": "ran-partial", "off": "off",
    "skipped: deadline": "skipped-deadline", "skipped: error": "skipped-error",
    "skipped: confident": "skipped-confident", "skipped: no query vector": "skipped-no-vector",
}
#: Statuses of a stage that was started (its ``ms`` is time spent in it).
_STARTED = frozenset({"ran", "ran-late", "ran-partial", "skipped-deadline", "skipped-error"})

#: Buckets of the search histograms, in seconds: around the default stage deadlines
#: (ccb-fast 0.1, magma-extend 0.3, full-fusion 0.8; their sum 1.2 is a search's budget).
SEARCH_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 2.5, 5.0)
#: Buckets of the sync histograms, in seconds: from the watcher's ≈14 ms (DESIGN.md) to a large
#: copy-in embedded at ≈80 chunks/s (minutes).
SYNC_BUCKETS_S = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
                  900.0)
#: Daemon states (:class:`daemon.runner.DaemonState`).
_DAEMON_STATES = ["starting", "reconciling", "watching", "waiting", "stopped"]
#: Changed paths remembered for the sync latency at most (a mass copy-in is far below).
_MAX_SEEN = 200_000
#: Loopback only, like MCP over HTTP (DESIGN.md, Safety).
METRICS_HOST = "127.0.0.1"
_ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost"})


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class StageRecord:
    """One stage of a logged search: ``status`` as :class:`daemon.retrieval.StageTrace` says
    it, ``ms`` wall milliseconds, ``found`` notes it proposed (the verifier: minus the hits
    it dropped)."""

    name: str
    status: str
    ms: float
    found: int = 0


@dataclass(frozen=True, slots=True)
class SearchRecord:
    """One line of the search log. ``at`` ISO UTC; ``total_ms`` the pipeline's milliseconds;
    ``intent_cache`` ``hit`` | ``semantic-hit`` | ``miss`` | ``off``; ``error`` the class name
    of the error a failed search raised (then the rest is empty)."""

    at: str
    total_ms: float
    stages: tuple[StageRecord, ...] = ()
    intent_cache: str = "off"
    hits: int = 0
    verifier_dropped: int = 0
    error: str | None = None

    def to_line(self) -> bytes:
        """The record as one JSON line (UTF-8, ending in ``\\n``)."""
        data: dict[str, Any] = {
            "at": self.at, "total_ms": self.total_ms,
            "stages": [{"name": s.name, "status": s.status, "ms": s.ms, "found": s.found}
                       for s in self.stages],
            "intent_cache": self.intent_cache, "hits": self.hits,
            "verifier_dropped": self.verifier_dropped,
        }
        if self.error is not None:
            data["error"] = self.error
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    @classmethod
    def from_line(cls, line: bytes | str) -> SearchRecord:
        """Parse one log line. Raises ``ValueError`` for anything that is not a record."""
        try:
            data = json.loads(line)
        except RecursionError as error:  # deeply nested garbage is garbage too
            raise ValueError("search log line: nested too deeply") from error
        if not isinstance(data, dict):
            raise ValueError("search log line: not a JSON object")
        stages = data.get("stages", [])
        if not isinstance(stages, list) or not all(isinstance(s, dict) for s in stages):
            raise ValueError("search log line: stages is not a list of objects")
        try:
            return cls(
                at=_typed(data["at"], str), total_ms=_number(data["total_ms"]),
                stages=tuple(StageRecord(_typed(s["name"], str), _typed(s["status"], str),
                                         _number(s["ms"]), _int(s.get("found", 0), signed=True))
                             for s in stages),
                intent_cache=_typed(data.get("intent_cache", "off"), str),
                hits=_int(data.get("hits", 0)),
                verifier_dropped=_int(data.get("verifier_dropped", 0)),
                error=_typed(data["error"], str) if data.get("error") is not None else None,
            )
        except KeyError as error:
            raise ValueError(f"search log line: {error.args[0]!r} missing") from None


def _typed(value: Any, kind: type[str]) -> str:
    if not isinstance(value, kind):
        raise ValueError(f"search log line: {value!r} is not a {kind.__name__}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0:
        raise ValueError(f"search log line: {value!r} is not a duration")
    return float(value)


def _int(value: Any, *, signed: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or (value < 0 and not signed):
        raise ValueError(f"search log line: {value!r} is not a count")
    return value


def search_record(trace: SearchTrace, *, hits: int, at: datetime) -> SearchRecord:
    """The log record of one search from its trace (``at``: aware). ``trace.intent_cache``
    and ``trace.verifier_dropped`` are read when the trace has them (``off`` and 0 before)."""
    return SearchRecord(
        at=at.isoformat(timespec="milliseconds"), total_ms=round(trace.total_ms, 3),
        stages=tuple(StageRecord(s.name, s.status, round(s.elapsed_ms, 3), s.found)
                     for s in trace.stages),
        intent_cache=str(getattr(trace, "intent_cache", "off")), hits=hits,
        verifier_dropped=int(getattr(trace, "verifier_dropped", 0)),
    )


def stage_status_label(status: str) -> str:
    """A stage status as a label value: ``skipped: deadline`` -> ``skipped-deadline``,
    ``ran late: too little found before it`` -> ``ran-late``, ``ran: 1 failed, 0 late …``
    -> ``ran-partial``; unknown ones -> ``other``."""
    key = status.strip()
    for prefix in ("ran late", "ran:"):
        if key.startswith(prefix):
            key = prefix
    return _STATUS_LABELS.get(key, "other")


def _cache_label(result: str) -> str:
    label = result.replace("-", "_")
    return label if label in CACHE_RESULTS else "off"


# --------------------------------------------------------------------------- the log


def append_search(state_dir: Path, record: SearchRecord, *,
                  max_bytes: int = SEARCH_LOG_MAX_BYTES) -> bool:
    """Append ``record`` to ``<state_dir>/searches.jsonl`` (one ``O_APPEND`` write, so
    concurrent processes never interleave lines); rotate past ``max_bytes``. Never raises:
    returns False (and logs ``search_log.not_written``) when the line could not be written."""
    path = state_dir / SEARCH_LOG_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, record.to_line())
            stat = os.fstat(fd)
        finally:
            os.close(fd)
        if stat.st_size > max_bytes:
            _rotate(state_dir, stat.st_ino, max_bytes)
    except OSError as error:
        log.warning("search_log.not_written", file=str(path), error=str(error))
        return False
    return True


def _rotate(state_dir: Path, inode: int, max_bytes: int) -> None:
    """Make the full log the previous generation; one process rotates, the others go on."""
    path = state_dir / SEARCH_LOG_FILE
    lock = filelock.FileLock(state_dir / _ROTATE_LOCK, timeout=0, thread_local=False)
    try:
        with lock:
            stat = path.stat()
            if stat.st_ino == inode and stat.st_size > max_bytes:  # nobody rotated it yet
                path.replace(state_dir / SEARCH_LOG_ROTATED)
    except filelock.Timeout:
        return  # another process is rotating it right now


def _complete_lines(data: bytes) -> tuple[list[bytes], int]:
    """Whole lines of ``data`` and how many bytes they span (a partial last line waits)."""
    end = data.rfind(b"\n") + 1
    return data[:end].splitlines(), end


def read_searches(state_dir: Path, *, last: int = STATUS_WINDOW,
                  on_bad: Callable[[ValueError], None] | None = None) -> list[SearchRecord]:
    """The last ``last`` records of the log (both generations), oldest first; bad lines are
    skipped (``on_bad`` hears of each). An absent or unreadable log is ``[]``."""
    lines: list[bytes] = []
    for name in (SEARCH_LOG_ROTATED, SEARCH_LOG_FILE):
        try:
            lines += _complete_lines((state_dir / name).read_bytes())[0]
        except OSError:
            continue
    found: list[SearchRecord] = []
    for line in reversed(lines):
        if len(found) >= last:
            break
        if not line.strip():
            continue
        try:
            found.append(SearchRecord.from_line(line))
        except ValueError as error:
            if on_bad is not None:
                on_bad(error)
    found.reverse()
    return found


class SearchLogTail:
    """Reads the records appended to the log since the last call, across rotations.

    Starts at the end of the log (``from_start=False``: what was logged before is history,
    not new events) or at its start. Not thread-safe: one reader per instance.
    """

    def __init__(self, state_dir: Path, *, from_start: bool = False) -> None:
        self._path = state_dir / SEARCH_LOG_FILE
        self._rotated = state_dir / SEARCH_LOG_ROTATED
        self._inode: int | None = None
        self._offset = 0
        if not from_start:
            try:
                stat = self._path.stat()
                self._inode, self._offset = stat.st_ino, stat.st_size
            except OSError:
                pass

    def read_new(self, on_bad: Callable[[ValueError], None] | None = None) -> list[SearchRecord]:
        """Records appended since the last call, oldest first; bad lines are skipped
        (``on_bad`` hears of each). A file rotated twice between two calls loses the lines of
        the middle generation (≈ 1,700 searches between two scrapes)."""
        lines: list[bytes] = []
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = None
        current = os.fstat(fd).st_ino if fd is not None else None
        try:
            if current != self._inode:
                if self._inode is not None:  # rotated: finish the generation we were reading
                    lines += self._finish_rotated()
                self._inode, self._offset = current, 0
            if fd is not None:
                if os.fstat(fd).st_size < self._offset:  # cut by hand: start over
                    self._offset = 0
                os.lseek(fd, self._offset, os.SEEK_SET)
                chunks = []
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
                new, used = _complete_lines(b"".join(chunks))
                self._offset += used
                lines += new
        finally:
            if fd is not None:
                os.close(fd)
        records: list[SearchRecord] = []
        for line in lines:
            if not line.strip():
                continue
            try:
                records.append(SearchRecord.from_line(line))
            except ValueError as error:
                if on_bad is not None:
                    on_bad(error)
        return records

    def _finish_rotated(self) -> list[bytes]:
        try:
            with self._rotated.open("rb") as old:
                if os.fstat(old.fileno()).st_ino != self._inode:
                    return []  # rotated twice since: that generation is gone
                old.seek(self._offset)
                return _complete_lines(old.read())[0]
        except OSError:
            return []


# --------------------------------------------------------------------------- status


def search_summary(records: Collection[SearchRecord], *, cache_enabled: bool) -> dict[str, Any]:
    """What ``dreamd status`` says of recent searches: ``searches`` (count), ``failed``,
    ``median_total_ms``, and intent cache ``lookups`` (results other than ``off``), ``hits``
    (semantic ones included), ``semantic_hits``, ``misses``, ``hit_ratio`` and
    ``semantic_ratio`` (0–1, ``None`` without lookups); ``cache_enabled`` as configured here."""
    done = [r for r in records if r.error is None]
    results = [_cache_label(r.intent_cache) for r in done]
    hits, semantic = results.count("hit"), results.count("semantic_hit")
    lookups = hits + semantic + results.count("miss")
    return {
        "cache_enabled": cache_enabled, "searches": len(done),
        "failed": len(records) - len(done),
        "median_total_ms": round(statistics.median(r.total_ms for r in done), 1)
        if done else None,
        "lookups": lookups, "hits": hits + semantic, "semantic_hits": semantic,
        "misses": results.count("miss"),
        "hit_ratio": (hits + semantic) / lookups if lookups else None,
        "semantic_ratio": semantic / lookups if lookups else None,
    }


def metrics_status(settings: MetricsSettings, daemon: Mapping[str, Any] | None) -> dict[str, Any]:
    """Whether metrics are served or written: the running daemon's word (``daemon``: its status
    file) when there is one, else what the settings here would do. Keys: ``enabled``, ``url``
    (``None``: no HTTP endpoint), ``textfile``, ``active`` (a daemon exports them now),
    ``error`` (why part of it does not work)."""
    reported = daemon.get("metrics") if daemon else None
    if isinstance(reported, dict):
        return {**reported, "active": bool(reported.get("enabled"))}
    return {
        "enabled": settings.enabled,
        "url": f"http://{METRICS_HOST}:{settings.port}/metrics" if settings.port else None,
        "textfile": str(settings.textfile) if settings.textfile else None,
        "active": False, "error": None,
    }


# --------------------------------------------------------------------------- exporter


class DaemonMetrics:
    """The daemon's metrics in their own ``CollectorRegistry`` (never the global one, so tests
    and several Apps in one process do not collide), and their exporters.

    The daemon records what it does (``set_*``, ``sync_done``, ``changes_*``, ``dream_outcome``,
    ``error``); :meth:`refresh` pulls the rest — new search-log lines, open conflicts
    (``conflicts()``: their number), finished dreams (``dream-last.json``, written by whichever
    process dreamt) — and runs before every scrape and every ``interval_s``. :meth:`configure`
    starts the exporters (again, after a reload); :meth:`stop` stops them. Thread-safe.
    """

    def __init__(self, state_dir: Path, *, conflicts: Callable[[], int]) -> None:
        from prometheus_client import CollectorRegistry, Counter, Enum, Gauge, Histogram

        self.state_dir = state_dir
        self._conflicts = conflicts
        self._lock = threading.Lock()  # the recorded and pulled state
        self._exporters_lock = threading.Lock()  # never held by refresh: stop joins its threads
        self._settings = MetricsSettings()
        self._server: WSGIServer | None = None
        self._server_thread: threading.Thread | None = None
        self._writer_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._url: str | None = None
        self._http_error: str | None = None
        self._textfile_error: str | None = None
        self._seen: dict[str, float] = {}
        self._tail = SearchLogTail(state_dir)
        self._recent: deque[str] = deque(
            (_cache_label(r.intent_cache) for r in read_searches(state_dir) if r.error is None),
            maxlen=STATUS_WINDOW)
        self._dream_id: Any = _last_dream_record(state_dir).get("last_id")

        r = self.registry = CollectorRegistry(auto_describe=True)
        self.daemon_state = Enum("dreamd_daemon_state", "What the daemon is doing.",
                                 states=_DAEMON_STATES, registry=r)
        self.index_files = Gauge("dreamd_index_files",
                                 "Files in the index, by kind (note, attachment).",
                                 ["kind"], registry=r)
        self.index_chunks = Gauge("dreamd_index_chunks", "Chunks (embedded passages) indexed.",
                                  registry=r)
        self.index_memories = Gauge("dreamd_index_memories", "Memories indexed.", registry=r)
        self.queue_depth = Gauge("dreamd_watch_queue_depth",
                                 "Changed paths waiting to be indexed.", registry=r)
        self.sync_latency = Histogram(
            "dreamd_sync_latency_seconds",
            "Seconds from a change delivered by the watcher to the index having it, per path.",
            buckets=SYNC_BUCKETS_S, registry=r)
        self.sync_duration = Histogram(
            "dreamd_sync_duration_seconds",
            "Seconds of one sync: a watcher batch (kind=batch) or a full reconcile "
            "(kind=reconcile).", ["kind"], buckets=SYNC_BUCKETS_S, registry=r)
        self.sync_files = Counter("dreamd_sync_files", "Files the daemon indexed, by change.",
                                  ["change"], registry=r)
        self.chunks_embedded = Counter("dreamd_sync_chunks_embedded",
                                       "Chunks embedded (changed content) by the daemon.",
                                       registry=r)
        self.stage_seconds = Histogram(
            "dreamd_search_stage_duration_seconds",
            "Seconds of each started search stage (ccb-fast, magma-extend, full-fusion, "
            "verifier), and of the whole search (stage=total).",
            ["stage"], buckets=SEARCH_BUCKETS_S, registry=r)
        self.stage_outcomes = Counter(
            "dreamd_search_stage_outcomes", "Search stages by status (ran, ran-late, "
            "ran-partial, skipped-deadline, skipped-error, skipped-confident, "
            "skipped-no-vector, off, other).",
            ["stage", "status"], registry=r)
        self.verifier_dropped = Counter("dreamd_search_verifier_dropped",
                                        "Hits the verifier dropped from search answers.",
                                        registry=r)
        self.cache_lookups = Counter(
            "dreamd_intent_cache_lookups", "Intent cache lookups of searches, by result.",
            ["result"], registry=r)
        self.cache_ratio = Gauge(
            "dreamd_intent_cache_hit_ratio",
            f"Intent cache hits (semantic ones included) per lookup over the last "
            f"{STATUS_WINDOW} logged searches (NaN: no lookups).", registry=r)
        self.dream_runs = Counter("dreamd_dream_runs", "Dreams, by outcome.", ["outcome"],
                                  registry=r)
        self.dream_last = Gauge("dreamd_dream_last_timestamp_seconds",
                                "Unix time the last dream finished (0: never).", registry=r)
        self.conflicts_open = Gauge("dreamd_conflicts_open",
                                    "Conflicts waiting for the user (dreamd conflicts).",
                                    registry=r)
        self.errors = Counter("dreamd_errors", "Errors by where they happened (source) and "
                              "their class (error).", ["source", "error"], registry=r)
        for kind in ("note", "attachment"):
            self.index_files.labels(kind)
        for kind in ("batch", "reconcile"):
            self.sync_duration.labels(kind)
        for change in ("added", "modified", "deleted", "renamed"):
            self.sync_files.labels(change)
        for stage in ("ccb-fast", "magma-extend", "full-fusion", "total"):  # always there
            self.stage_seconds.labels(stage)
        for result in CACHE_RESULTS:
            self.cache_lookups.labels(result)
        for outcome in DREAM_OUTCOMES:
            self.dream_runs.labels(outcome)
        self.cache_ratio.set(self._ratio())
        self._dream_timestamp(_last_dream_record(state_dir).get("last_dream"))

    # ------------------------------------------------------------------ exporters

    def configure(self, settings: MetricsSettings) -> None:
        """Start (or restart, when they changed) the exporters ``settings`` ask for. A port
        that cannot be bound is logged (``metrics.http_failed``) and reported by
        :meth:`describe`; the daemon goes on without the endpoint."""
        with self._exporters_lock:
            if settings == self._settings and (self._server or self._writer_thread):
                return
            self._stop_exporters()
            self._settings = settings
            self._http_error = self._textfile_error = None
            if not settings.enabled:
                return
            if settings.port:
                self._serve(settings.port)
            if settings.textfile is not None:
                if settings.textfile.suffix != ".prom":
                    log.warning("metrics.textfile_name", textfile=str(settings.textfile),
                                hint="node_exporter's textfile collector reads *.prom files only")
                self._stop.clear()
                self._writer_thread = threading.Thread(
                    target=self._write_loop, name="dreamd-metrics-textfile", daemon=True)
                self._writer_thread.start()
            if not settings.port and settings.textfile is None:
                log.warning("metrics.nowhere", hint="metrics.enabled with metrics.port = 0 and "
                            "no metrics.textfile exports nothing")
            log.info("metrics.started", url=self._url, textfile=str(settings.textfile or ""))

    def _serve(self, port: int) -> None:
        from wsgiref.simple_server import WSGIRequestHandler, make_server

        from prometheus_client import (
            CollectorRegistry,
            PlatformCollector,
            ProcessCollector,
            make_wsgi_app,
        )
        from prometheus_client.exposition import ThreadingWSGIServer

        # The endpoint adds the process's own metrics (process_*, python_info); the textfile
        # leaves them out: node_exporter exports its own process_* and would refuse duplicates.
        served = CollectorRegistry()
        served.register(_Forward(self.registry))
        ProcessCollector(registry=served)
        PlatformCollector(registry=served)
        exposition = make_wsgi_app(served)

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            host = str(environ.get("HTTP_HOST", METRICS_HOST)).rsplit(":", 1)[0]
            if host not in _ALLOWED_HOSTS:  # a DNS-rebinding page is not a local scraper
                start_response("403 Forbidden", [("Content-Type", "text/plain")])
                return [b"dreamd metrics: loopback hosts only\n"]
            if environ.get("PATH_INFO") not in ("/metrics", "/metrics/"):
                start_response("404 Not Found", [("Content-Type", "text/plain")])
                return [b"dreamd metrics are at /metrics\n"]
            self.refresh()
            result: Iterable[bytes] = exposition(environ, start_response)
            return result

        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Scrapes are not worth a log line each."""

        try:
            server = make_server(METRICS_HOST, port, app, ThreadingWSGIServer,
                                 handler_class=Quiet)
        except OSError as error:
            reason = "already in use" if error.errno == errno.EADDRINUSE else str(error)
            self._http_error = f"port {port}: {reason}"
            self.errors.labels("metrics", type(error).__name__).inc()
            log.error("metrics.http_failed", port=port, error=reason,
                      hint="set metrics.port to a free port (0: no HTTP endpoint); the daemon "
                           "keeps the index in step without it")
            return
        self._server = server
        self._url = f"http://{METRICS_HOST}:{server.server_port}/metrics"
        self._server_thread = threading.Thread(target=server.serve_forever,
                                               name="dreamd-metrics-http", daemon=True)
        self._server_thread.start()

    def _write_loop(self) -> None:
        while True:
            self.write_textfile()
            if self._stop.wait(self._settings.interval_s):
                return

    def write_textfile(self) -> None:
        """Refresh, then rewrite ``metrics.textfile`` atomically (temp file beside it, rename).
        An error is logged once per kind of error and counted; the daemon goes on."""
        from prometheus_client import write_to_textfile

        path = self._settings.textfile
        if path is None:
            return
        self.refresh()
        try:
            write_to_textfile(str(path), self.registry)
        except OSError as error:
            reason = f"{type(error).__name__}: {error}"
            self.errors.labels("metrics", type(error).__name__).inc()
            if reason != self._textfile_error:
                log.error("metrics.textfile_failed", textfile=str(path), error=reason)
            self._textfile_error = reason
            return
        self._textfile_error = None

    def _stop_exporters(self) -> None:
        self._stop.set()
        if self._writer_thread is not None:
            self._writer_thread.join(timeout=10)
            self._writer_thread = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._server_thread is not None:
                self._server_thread.join(timeout=10)
            self._server = self._server_thread = None
            self._url = None

    def stop(self) -> None:
        """Stop serving; write the textfile a last time (state ``stopped``) so node_exporter
        does not report a running daemon. Idempotent."""
        with self._exporters_lock:
            textfile = self._settings.textfile if self._settings.enabled else None
            self._stop_exporters()
            if textfile is not None:
                self.write_textfile()
            self._settings = MetricsSettings()

    def describe(self) -> dict[str, Any]:
        """For the status file: ``enabled``, ``url`` (served now, else ``None``), ``textfile``,
        ``interval_s``, ``error`` (why something is not exported, else ``None``)."""
        cfg = self._settings
        errors = [e for e in (self._http_error, self._textfile_error) if e]
        return {"enabled": cfg.enabled, "url": self._url,
                "textfile": str(cfg.textfile) if cfg.enabled and cfg.textfile else None,
                "interval_s": cfg.interval_s, "error": "; ".join(errors) or None}

    # ------------------------------------------------------------------ recording

    def set_state(self, state: str) -> None:
        """The daemon's state (``starting``, ``reconciling``, ``watching``, ``waiting``,
        ``stopped``)."""
        if state in _DAEMON_STATES:
            self.daemon_state.state(state)

    def set_index(self, counts: Mapping[str, int]) -> None:
        """Row counts of the index (``files``, ``notes``, ``chunks``, ``memories``)."""
        files, notes = counts.get("files", 0), counts.get("notes", 0)
        self.index_files.labels("note").set(notes)
        self.index_files.labels("attachment").set(max(files - notes, 0))
        self.index_chunks.set(counts.get("chunks", 0))
        self.index_memories.set(counts.get("memories", 0))

    def set_queue_depth(self, paths: int) -> None:
        """Changed paths waiting to be indexed."""
        self.queue_depth.set(paths)

    def changes_seen(self, paths: Iterable[str], now: float) -> None:
        """The watcher delivered changes of ``paths`` at monotonic ``now`` (seconds); the
        first time counts until the index has the path."""
        with self._lock:
            if len(self._seen) > _MAX_SEEN:
                self._seen.clear()
            for path in paths:
                self._seen.setdefault(path, now)

    def changes_indexed(self, paths: Iterable[str] | None, now: float) -> None:
        """The index has ``paths`` (``None``: every change seen, after a full reconcile) at
        monotonic ``now``: observe each one's sync latency."""
        with self._lock:
            if paths is None:
                done = list(self._seen.values())
                self._seen.clear()
            else:
                done = [t for p in paths if (t := self._seen.pop(p, None)) is not None]
        for seen in done:
            self.sync_latency.observe(max(now - seen, 0.0))

    def sync_done(self, kind: str, duration_s: float, *, added: int = 0, modified: int = 0,
                  deleted: int = 0, renamed: int = 0, chunks_embedded: int = 0) -> None:
        """One sync (``kind`` ``batch`` or ``reconcile``) took ``duration_s`` seconds."""
        self.sync_duration.labels(kind).observe(duration_s)
        for change, count in (("added", added), ("modified", modified), ("deleted", deleted),
                              ("renamed", renamed)):
            if count:
                self.sync_files.labels(change).inc(count)
        if chunks_embedded:
            self.chunks_embedded.inc(chunks_embedded)

    def dream_outcome(self, outcome: str) -> None:
        """A dream of the daemon that did not finish: ``refused`` (too many changes: it waits
        for ``dreamd dream --force``), ``locked`` (another process was dreaming) or ``failed``.
        Finished dreams, anyone's, are counted by :meth:`refresh` from ``dream-last.json``."""
        self.dream_runs.labels(outcome).inc()

    def error(self, source: str, error: BaseException | str) -> None:
        """Count an error at ``source`` (``sync``, ``watch``, ``check``, ``dream``, …): its
        class name, or ``error`` itself when only a kind is known."""
        name = error if isinstance(error, str) else type(error).__name__
        self.errors.labels(source, name).inc()

    # ------------------------------------------------------------------ pulled

    def refresh(self) -> None:
        """Feed new search-log lines into the search metrics; update open conflicts and the
        last dream. Cheap when nothing changed (a stat and two small reads)."""
        with self._lock:
            for record in self._tail.read_new(on_bad=self._bad_line):
                self._observe(record)
            self.cache_ratio.set(self._ratio())
            try:
                self.conflicts_open.set(self._conflicts())
            except Exception as error:  # a metric is never worth stopping the daemon
                self.error("conflicts", error)
                log.warning("metrics.conflicts_unknown", error=str(error))
            last = _last_dream_record(self.state_dir)
            dream_id = last.get("last_id")
            if dream_id and dream_id != self._dream_id:
                self._dream_id = dream_id
                counts = last.get("counts")
                changed = counts.get("changed_memories", 0) if isinstance(counts, dict) else 0
                self.dream_runs.labels("ran" if changed else "nothing-to-do").inc()
                self._dream_timestamp(last.get("last_dream"))

    def _bad_line(self, error: ValueError) -> None:
        self.error("search-log", error)
        log.info("search_log.line_skipped", error=str(error)[:200])

    def _observe(self, record: SearchRecord) -> None:
        if record.error is not None:
            self.error("search", record.error if record.error.isidentifier() else "Error")
            return
        for stage in record.stages:
            if stage.name not in _STAGES:
                continue
            status = stage_status_label(stage.status)
            self.stage_outcomes.labels(stage.name, status).inc()
            if status in _STARTED:
                self.stage_seconds.labels(stage.name).observe(stage.ms / 1000)
        self.stage_seconds.labels("total").observe(record.total_ms / 1000)
        result = _cache_label(record.intent_cache)
        self.cache_lookups.labels(result).inc()
        self._recent.append(result)
        if record.verifier_dropped:
            self.verifier_dropped.inc(record.verifier_dropped)

    def _ratio(self) -> float:
        lookups = [r for r in self._recent if r != "off"]
        if not lookups:
            return math.nan
        return sum(r != "miss" for r in lookups) / len(lookups)

    def _dream_timestamp(self, stamp: Any) -> None:
        try:
            when = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
        except ValueError:
            when = None
        if when is not None:
            self.dream_last.set(when.timestamp())


class _Forward:
    """A collector that yields another registry's metrics (to serve it with more)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        return self._registry.collect()


def _last_dream_record(state_dir: Path) -> dict[str, Any]:
    """``dream-last.json`` (small; ``read_state`` would also read every memory's record)."""
    from daemon.dream import LAST_FILE  # here: daemon.dream loads LanceDB (≈2 s), and the
    # search log alone is wanted by processes that have no use for it

    return read_json_object(state_dir / LAST_FILE)


