"""Dreaming and expiration: the daemon's side of consolidation.

The rules are pure (:mod:`consistency.dream`, :mod:`consistency.lifecycle`); this module
gathers their inputs, carries out their answers through the one writer, and writes down what
it did. A dream, in order:

1. **Lock** — ``<state>/dream.lock``: one dream per vault across processes. A lock older than
   ``dream.lock_ttl_minutes`` or held by a dead process on this host is stale: taken over, and
   the takeover logged.
2. **Read all** — every memory file of the memory folder. A file whose size and mtime match the
   record of the last dream (``<state>/dream-state.json``) is not read again: its facts come
   from the record. ``DREAMS.md``, ``MEMORY.md`` and conflict copies are never memories.
3. **Exact duplicates, near-duplicates, contradictions**
   (:func:`consistency.dream.plan_consolidation`), only where a memory changed since the
   last dream: counts skipped/updated/added are logged.
4. **Lifecycle** (:func:`consistency.lifecycle.plan_lifecycle`) with the recall statistics of
   MAGMA and the reference link checks.
5. **Apply** — minimal frontmatter edits (and a merged body for near-duplicates) through
   :class:`ccb.writer.NoteWriter` with origin ``dream``, so every change is a version in the
   history. Nothing is deleted: a merged or superseded memory gets ``status: archived`` and
   stays on disk; ``dreamd restore`` brings it back.
6. **Rebuild ``MEMORY.md``** within its limits, **record** the new state, **append a diary
   entry** to ``<memory folder>/DREAMS.md`` (date, every change with links, counts) — only when
   the dream changed something, so an unchanged vault does not grow the diary every night.

Crash safety: the planned actions are written to ``<state>/dream-journal.json`` before the
first write. Every action is applied as "make it so" from the files as they are now (a merge
adds only the sentences the keeper lacks; an archive sets values already set), so the next
dream first replays an unfinished journal, then plans afresh: the end state is the one an
uninterrupted dream reaches, and the diary entry lists the interrupted dream's changes too.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import filelock
import structlog
from ulid import ULID

from ccb.atomic import write_json_atomic
from ccb.frontmatter_edit import replace_body, set_properties
from ccb.memory_file import content_hash_normalised
from ccb.memory_index import IndexEntry, build_memory_index
from ccb.model import MemoryType, Note, PropertyValue
from ccb.parse import detect_conflict_copy, parse_note
from ccb.scan import read_note_bytes
from ccb.writer import NoteWriter, sha256_hex
from config.errors import DreamdError, DreamGuardError, LockError, MemoryNotFoundError
from consistency.dream import (
    Consolidation,
    DreamMemory,
    Gate,
    MergeDuplicate,
    SupersedeOld,
    dream_due,
    groups_to_compare,
    plan_consolidation,
)
from consistency.duplicates import merge_bodies
from consistency.lifecycle import (
    ARCHIVED,
    Archive,
    Demote,
    LifecycleMemory,
    LifecyclePolicy,
    MarkBroken,
    Promote,
    RecallStats,
    SetPriority,
    Transition,
    has_rule_force,
    is_archived,
    is_hidden,
    plan_lifecycle,
)

__all__ = [
    "DIARY_FILE",
    "DreamLock",
    "DreamPlan",
    "DreamReport",
    "DreamRunner",
    "SessionCount",
    "SessionLog",
    "index_entries",
]

log = structlog.get_logger("dreamd.dream")

DIARY_FILE = "DREAMS.md"
STATE_FILE = "dream-state.json"
JOURNAL_FILE = "dream-journal.json"
LOCK_FILE = "dream.lock"
SESSIONS_FILE = "sessions.json"
#: First lines of a new ``DREAMS.md``.
DIARY_HEADER = (
    "# Dream diary\n"
    "\n"
    "Written by dreamd after each dream that changed something: what it merged, superseded,\n"
    "archived or promoted, with links. Nothing is ever deleted; `dreamd restore NAME` brings\n"
    "an archived memory back, `dreamd history NAME` shows every version.\n"
)
#: Most session timestamps kept per kind (older ones are dropped first).
SESSIONS_KEPT = 10_000
#: Most URL checks run at once when ``lifecycle.check_urls`` is on.
URL_CHECK_WORKERS = 8
#: Properties a dream writes to archive a memory; ``dreamd restore`` removes them.
ARCHIVE_KEYS = ("archived", "archived_reason", "merged_into", "status_before")

_URL_RE = re.compile(r"https?://[^\s<>()\[\]\"'`]+")
_INDEX_NAMES = frozenset({"MEMORY.md", DIARY_FILE})


# --------------------------------------------------------------------------- lock


class DreamLock:
    """One dream per vault across processes: ``<state dir>/dream.lock`` names the holder.

    The lock file holds JSON ``{pid, host, token, started, expires}``; taking and releasing it
    happens under a short ``filelock`` guard, so two processes never both take it. A lock
    past ``expires`` (``ttl`` after it was taken) or held by a pid that no longer runs on this
    host is stale and taken over (logged as ``dream.lock_taken_over``). Raises ``LockError``
    naming the holder when a live dream holds it.
    """

    def __init__(self, state_dir: Path, ttl: timedelta,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.path = state_dir / LOCK_FILE
        self._guard = filelock.FileLock(state_dir / (LOCK_FILE + ".guard"), timeout=30)
        self._ttl = ttl
        self._clock = clock
        self._token = str(ULID())

    def __enter__(self) -> DreamLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def holder(self) -> dict[str, Any] | None:
        """The JSON the lock file holds, or ``None`` (no lock, or unreadable)."""
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _stale(self, holder: Mapping[str, Any], now: datetime) -> str | None:
        try:
            expires = datetime.fromisoformat(str(holder.get("expires")))
        except ValueError:
            return "unreadable lock"
        if now >= expires:
            return f"expired at {holder.get('expires')}"
        if holder.get("host") == socket.gethostname() and not _pid_alive(holder.get("pid")):
            return f"process {holder.get('pid')} is gone"
        return None

    def acquire(self) -> None:
        """Take the lock (see the class docstring)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        now = self._clock()
        with self._guard:
            holder = self.holder() if self.path.exists() else None
            if holder is not None or self.path.exists():
                why = self._stale(holder or {}, now)
                if why is None:
                    raise LockError(
                        f"dream: another dream is running on this vault (pid {holder.get('pid')}"
                        f" on {holder.get('host')}, since {holder.get('started')}); it holds "
                        f"{self.path} until {holder.get('expires')}" if holder else
                        f"dream: {self.path} is held")
                log.warning("dream.lock_taken_over", lock=str(self.path), why=why,
                            holder=holder)
            write_json_atomic(self.path, {
                "pid": os.getpid(), "host": socket.gethostname(), "token": self._token,
                "started": now.isoformat(timespec="seconds"),
                "expires": (now + self._ttl).isoformat(timespec="seconds"),
            })

    def release(self) -> None:
        """Drop the lock if it is still ours (a takeover made it someone else's)."""
        with self._guard:
            holder = self.holder()
            if holder is not None and holder.get("token") == self._token:
                self.path.unlink(missing_ok=True)


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --------------------------------------------------------------------------- sessions


@dataclass(frozen=True, slots=True)
class SessionCount:
    """Sessions since a moment, by source; ``total`` is what the session gate compares."""

    mcp: int
    transcripts: int
    edit_bursts: int

    @property
    def total(self) -> int:
        return self.mcp + self.transcripts + self.edit_bursts


class SessionLog:
    """Sessions as the dream gate counts them, from three real sources.

    - MCP client sessions: :meth:`record` ``("mcp")`` when a client connects;
    - vault editing bursts: :meth:`record` ``("edit")`` for each batch of user edits the
      daemon indexes; edits separated by at least ``idle_gap`` are two sessions;
    - assistant transcripts: files matching a glob (Claude Code's
      ``~/.claude/projects/*/*.jsonl``) written since the moment asked about.

    Timestamps live in ``<state dir>/sessions.json`` (at most :data:`SESSIONS_KEPT` per
    kind), read-modify-written under a ``filelock``: the daemon and an MCP server are two
    processes.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / SESSIONS_FILE
        self._lock = filelock.FileLock(state_dir / (SESSIONS_FILE + ".lock"), timeout=10)

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: [str(x) for x in v] for k, v in data.items() if isinstance(v, list)} \
            if isinstance(data, dict) else {}

    def record(self, kind: Literal["mcp", "edit"], at: datetime | None = None) -> None:
        """Note one session start (``mcp``) or one batch of vault edits (``edit``)."""
        when = (at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            data = self._read()
            times = data.setdefault(kind, [])
            if kind == "edit" and times and times[-1][:16] == when[:16]:
                return  # one mark a minute is enough to find the bursts
            times.append(when)
            data[kind] = times[-SESSIONS_KEPT:]
            write_json_atomic(self.path, data)

    def count(self, since: datetime | None, *, transcripts: str, idle_gap: timedelta
              ) -> SessionCount:
        """Sessions after ``since`` (``None``: all that are recorded)."""
        data = self._read()

        def after(kind: str) -> list[datetime]:
            out = []
            for stamp in data.get(kind, []):
                try:
                    moment = datetime.fromisoformat(stamp)
                except ValueError:
                    continue
                if since is None or moment > since:
                    out.append(moment)
            return sorted(out)

        edits = after("edit")
        bursts = sum(1 for i, t in enumerate(edits) if i == 0 or t - edits[i - 1] >= idle_gap)
        return SessionCount(len(after("mcp")), _count_transcripts(transcripts, since), bursts)


def _count_transcripts(pattern: str, since: datetime | None) -> int:
    if not pattern.strip():
        return 0
    cutoff = since.timestamp() if since is not None else float("-inf")
    count = 0
    full = Path(pattern).expanduser()
    base = Path(full.anchor) if full.is_absolute() else Path()
    for found in base.glob(str(full.relative_to(base) if full.is_absolute() else full)):
        try:
            if found.stat().st_mtime > cutoff:
                count += 1
        except OSError:
            continue
    return count


# --------------------------------------------------------------------------- records


@dataclass(slots=True)
class _Record:
    """What a dream knows of one memory file; kept in ``dream-state.json`` between dreams."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    id: str
    type: MemoryType
    name: str
    description: str
    subject: str | None
    owner: str | None
    status: str | None
    pinned: bool
    resident: bool
    rule: bool
    created: str | None
    updated: str | None
    valid_to: str | None
    expires: str | None
    priority: float | None
    broken_links: list[str]
    urls: list[str]
    norm_hash: str
    seen: str | None = None  # the file's hash when the last dream finished

    @property
    def changed(self) -> bool:
        return self.seen != self.hash

    def hidden(self, today: date) -> bool:
        return is_hidden(status=self.status, valid_to=_when(self.valid_to),
                         expires=_when(self.expires), today=today)


def _iso(value: object) -> str | None:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return None


def _when(value: str | None) -> datetime | date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value) if len(value) == 10 else datetime.fromisoformat(value)
    except ValueError:
        return None


def _record(path: str, note: Note, data: bytes, stat: os.stat_result, seen: str | None
            ) -> _Record | None:
    meta = note.memory
    if meta is None:
        return None
    props = note.properties
    priority = props.get("priority")
    broken = props.get("broken_links")
    body = note.body.strip()
    return _Record(
        path=path, size=stat.st_size, mtime_ns=stat.st_mtime_ns, hash=sha256_hex(data),
        id=meta.id or f"path:{path}", type=meta.type, name=meta.name, description=meta.description,
        subject=meta.subject, owner=meta.owner, status=meta.status, pinned=meta.pinned,
        resident=props.get("resident") is True,
        rule=meta.type == "feedback" and has_rule_force(f"{meta.description}\n{body}"),
        created=_iso(meta.created), updated=_iso(meta.updated), valid_to=_iso(meta.valid_to),
        expires=_iso(meta.expires),
        priority=float(priority) if isinstance(priority, int | float)
        and not isinstance(priority, bool) else None,
        broken_links=[str(x) for x in broken] if isinstance(broken, list) else [],
        urls=sorted(set(_URL_RE.findall(note.body))) if meta.type == "reference" else [],
        norm_hash=content_hash_normalised(body), seen=seen,
    )


def index_entries(memory_folder: str, memories: Iterable[tuple[str, Mapping[str, Any]]],
                  today: date) -> list[IndexEntry]:
    """``MEMORY.md`` entries of the live memories among ``(path, fields)`` pairs; ``fields``
    holds ``type name description pinned resident priority status valid_to expires updated``
    (dates as date/datetime or ISO text). Shared by the dream and ``rebuild_index`` so both
    build the same file."""
    entries = []
    prefix = memory_folder.strip("/") + "/"
    for path, f in memories:
        valid_to, expires = f.get("valid_to"), f.get("expires")
        if isinstance(valid_to, str):
            valid_to = _when(valid_to)
        if isinstance(expires, str):
            expires = _when(expires)
        if f.get("valid_to") or is_hidden(status=f.get("status"), valid_to=valid_to,
                                          expires=expires, today=today):
            continue
        updated = f.get("updated")
        if isinstance(updated, str):
            updated = _when(updated)
        priority = f.get("priority")
        entries.append(IndexEntry(
            name=f["name"], file=path.removeprefix(prefix), type=f["type"],
            description=f.get("description") or "", pinned=bool(f.get("pinned")),
            resident=f["type"] in {"user", "feedback"} or f.get("resident") is True,
            importance=float(priority) if isinstance(priority, int | float) else 1.0,
            updated=updated,
        ))
    return entries


# --------------------------------------------------------------------------- plan and report


@dataclass(frozen=True, slots=True)
class DreamPlan:
    """What a dream (or ``expire``) would do, before it does it.

    ``changes`` are the diary lines (markdown, with wikilinks); ``diff`` is a unified diff of
    every file the plan writes; ``counts`` holds ``memories`` (read), ``skipped`` (unchanged
    since the last dream), ``updated``, ``added`` (new since), ``changed_memories`` (files the
    plan writes) and one count per kind of change.
    """

    consolidation: tuple[Consolidation, ...]
    lifecycle: tuple[Transition, ...]
    changes: tuple[str, ...]
    diff: str
    counts: Mapping[str, int]
    share: float

    @property
    def empty(self) -> bool:
        return not self.consolidation and not self.lifecycle


@dataclass(frozen=True, slots=True)
class DreamReport:
    """What a dream did: the plan, whether it was applied, what was written, and timings."""

    plan: DreamPlan
    applied: bool
    written: tuple[str, ...] = ()
    diary: bool = False
    memory_index: str | None = None
    resumed: int = 0
    indexed: bool | None = None
    timings_ms: Mapping[str, float] = field(default_factory=dict)


# --------------------------------------------------------------------------- runner


class DreamRunner:
    """Dreams, expiration and restore for one vault (plain constructor arguments).

    ``recall_stats()`` gives MAGMA's recall statistics by memory id; ``unresolved_links(paths)``
    gives, per vault path, the link targets the index could not resolve (``None``: no index
    yet, links not checked); ``index(paths)`` indexes written files (False: a running daemon
    will); ``rebuild_index_record(inputs, output_hash)`` records a ``MEMORY.md`` build.
    """

    def __init__(
        self, *, writer: NoteWriter, memory_folder: str, state_dir: Path,
        recall_stats: Callable[[], Mapping[str, RecallStats]],
        unresolved_links: Callable[[Sequence[str]], Mapping[str, Sequence[str]]] | None,
        index: Callable[[Sequence[str]], bool],
        note_index_built: Callable[[str, str], None],
        index_fingerprint: Callable[[Iterable[tuple[str, str]], date], str],
        policy: LifecyclePolicy | None = None, max_change_share: float = 0.25,
        max_change_free: int = 10,
        lock_ttl: timedelta = timedelta(hours=1), check_urls: bool = False,
        url_timeout_s: float = 5.0, clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.writer = writer
        self.root = writer.root
        self.memory_folder = memory_folder.strip("/")
        self.state_dir = state_dir
        self._recall_stats = recall_stats
        self._unresolved = unresolved_links
        self._index = index
        self._note_index_built = note_index_built
        self._fingerprint = index_fingerprint
        self.policy = policy or LifecyclePolicy()
        self.max_change_share = max_change_share
        self.max_change_free = max_change_free
        self.lock_ttl = lock_ttl
        self.check_urls = check_urls
        self.url_timeout_s = url_timeout_s
        self._clock = clock

    # ------------------------------------------------------------------ state

    @property
    def diary_path(self) -> str:
        return f"{self.memory_folder}/{DIARY_FILE}"

    @property
    def index_path(self) -> str:
        return f"{self.memory_folder}/MEMORY.md"

    def state(self) -> dict[str, Any]:
        """``dream-state.json``: ``last_dream`` (ISO), ``last_id``, ``memories`` records."""
        try:
            data = json.loads((self.state_dir / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def last_dream(self) -> datetime | None:
        """When the last dream finished (aware), or ``None``."""
        stamp = self.state().get("last_dream")
        try:
            return datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
        except ValueError:
            return None

    def gate(self, *, sessions: SessionCount, min_hours: float, max_hours: float,
             min_sessions: int) -> Gate:
        """:func:`consistency.dream.dream_due` at the runner's clock."""
        return dream_due(last_dream=self.last_dream(), sessions=sessions.total,
                         now=self._clock(), min_hours=min_hours, max_hours=max_hours,
                         min_sessions=min_sessions)

    # ------------------------------------------------------------------ reading

    def _gather(self, cached: Mapping[str, Any]) -> tuple[dict[str, _Record], dict[str, str]]:
        """Records of every memory file (unchanged ones from ``cached``) and the bodies of
        the files read now."""
        folder = self.root / self.memory_folder
        records: dict[str, _Record] = {}
        bodies: dict[str, str] = {}
        if not folder.is_dir():
            return records, bodies
        for current, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if not name.endswith(".md") or name.startswith(".") or name in _INDEX_NAMES:
                    continue
                full = Path(current) / name
                rel = full.relative_to(self.root).as_posix()
                if detect_conflict_copy(rel) is not None:
                    continue
                try:
                    stat = full.lstat()
                except OSError:
                    continue
                old = cached.get(rel)
                if (isinstance(old, dict) and old.get("size") == stat.st_size
                        and old.get("mtime_ns") == stat.st_mtime_ns):
                    try:
                        records[rel] = _Record(**old)
                        continue
                    except TypeError:
                        pass  # a record of another layout: read the file
                try:
                    note, data = read_note_bytes(self.root, rel)
                except DreamdError as error:
                    log.warning("dream.unreadable", path=rel, error=str(error))
                    continue
                seen = old.get("seen") if isinstance(old, dict) else None
                record = _record(rel, note, data, stat, seen)
                if record is not None:
                    records[rel] = record
                    bodies[rel] = note.body.strip()
        return records, bodies

    def _body(self, path: str, bodies: dict[str, str]) -> str:
        if path not in bodies:
            note, _ = read_note_bytes(self.root, path)
            bodies[path] = note.body.strip()
        return bodies[path]

    # ------------------------------------------------------------------ planning

    def _plan(self, records: Mapping[str, _Record], bodies: dict[str, str], *,
              consolidate: bool, overlay: dict[str, bytes]) -> DreamPlan:
        now = self._clock()
        today = now.astimezone(UTC).date()
        current = [r for r in records.values() if not r.hidden(today)]
        actions: list[Consolidation] = []
        if consolidate:
            memories = [DreamMemory(
                id=r.id, path=r.path, type=r.type, name=r.name, description=r.description,
                subject=r.subject, owner=r.owner, content_hash=r.norm_hash,
                created=_when(r.created), changed=r.changed,
            ) for r in sorted(current, key=lambda r: r.path)]
            wanted = groups_to_compare(memories)
            memories = [DreamMemory(
                id=m.id, path=m.path, type=m.type, name=m.name, description=m.description,
                subject=m.subject, owner=m.owner, content_hash=m.content_hash,
                created=m.created, changed=m.changed,
                body=self._body(m.path, bodies) if m.id in wanted else None,
            ) for m in memories]
            actions = plan_consolidation(memories)
        # Lifecycle runs on the state after the consolidation.
        closed = {a.duplicate_path for a in actions if isinstance(a, MergeDuplicate)}
        closed |= {a.old_path for a in actions if isinstance(a, SupersedeOld)}
        stats = self._recall_stats()
        unreachable = self._check_links([r for r in records.values()
                                         if r.type == "reference" and r.path not in closed
                                         and not is_archived(r.status)])
        lifecycle_input = [LifecycleMemory(
            id=r.id, path=r.path, type=r.type, status=r.status, pinned=r.pinned,
            resident=r.resident, rule=r.rule, created=_when(r.created),
            updated=_when(r.updated) or _mtime(r), valid_to=_when(r.valid_to),
            expires=_when(r.expires),
            priority=r.priority, broken_links=tuple(r.broken_links),
            unreachable=unreachable.get(r.path), recall=stats.get(r.id, RecallStats()),
        ) for r in sorted(records.values(), key=lambda r: r.path) if r.path not in closed]
        transitions = plan_lifecycle(lifecycle_input, now, self.policy)
        lines, edits = self._edits(actions, transitions, records, overlay, now)
        diff = "".join(
            "".join(difflib.unified_diff(
                before.decode("utf-8", "replace").splitlines(keepends=True),
                after.decode("utf-8", "replace").splitlines(keepends=True),
                fromfile=f"a/{path}", tofile=f"b/{path}"))
            for path, (before, after) in edits.items())
        added = sum(1 for r in records.values() if r.seen is None)
        updated = sum(1 for r in records.values() if r.seen is not None and r.changed)
        counts = {
            "memories": len(records), "skipped": len(records) - added - updated,
            "updated": updated, "added": added, "changed_memories": len(edits),
            "merged": sum(1 for a in actions if isinstance(a, MergeDuplicate)),
            "superseded": sum(1 for a in actions if isinstance(a, SupersedeOld)),
            "archived": sum(1 for t in transitions if isinstance(t, Archive)),
            "broken_links": sum(1 for t in transitions if isinstance(t, MarkBroken)),
            "priority": sum(1 for t in transitions if isinstance(t, SetPriority)),
            "promoted": sum(1 for t in transitions if isinstance(t, Promote)),
            "demoted": sum(1 for t in transitions if isinstance(t, Demote)),
        }
        share = len(edits) / len(records) if records else 0.0
        return DreamPlan(tuple(actions), tuple(transitions), tuple(lines), diff, counts, share)

    def _check_links(self, references: Sequence[_Record]) -> dict[str, tuple[str, ...]]:
        """Unreachable link targets per reference memory path; a memory is left out (not
        checked) when there is no index to resolve its wikilinks."""
        if not references or self._unresolved is None:
            return {}
        try:
            unresolved = self._unresolved([r.path for r in references])
        except DreamdError as error:
            log.warning("dream.links_unchecked", error=str(error))
            return {}
        broken_urls: set[str] = set()
        if self.check_urls:
            urls = sorted({u for r in references for u in r.urls})
            with ThreadPoolExecutor(max_workers=URL_CHECK_WORKERS) as pool:
                for url, ok in zip(urls, pool.map(self._url_ok, urls), strict=True):
                    if not ok:
                        broken_urls.add(url)
        return {r.path: tuple(sorted({*unresolved.get(r.path, ()),
                                      *(u for u in r.urls if u in broken_urls)}))
                for r in references}

    def _url_ok(self, url: str) -> bool:
        """HTTP HEAD: reachable unless the server answers 404/410 or cannot be reached.
        Other errors (401, 403, 405, 5xx) say the server is there: not broken."""
        request = urllib.request.Request(url, method="HEAD",
                                         headers={"User-Agent": "dreamd link check"})
        try:
            with urllib.request.urlopen(request, timeout=self.url_timeout_s):
                return True
        except urllib.error.HTTPError as error:
            return error.code not in {404, 410}
        except (urllib.error.URLError, OSError, ValueError):
            return False

    # ------------------------------------------------------------------ edits

    def _read(self, path: str, overlay: dict[str, bytes]) -> bytes | None:
        if path in overlay:
            return overlay[path]
        return self.writer.read(path)

    def _edits(
        self, actions: Sequence[Consolidation], transitions: Sequence[Transition],
        records: Mapping[str, _Record], overlay: dict[str, bytes], now: datetime,
    ) -> tuple[list[str], dict[str, tuple[bytes, bytes]]]:
        """Diary lines and ``{path: (before, after)}`` of the plan, computed from the files
        as they are (``overlay`` holds the bytes of edits planned earlier in this run)."""
        lines: list[str] = []
        edits: dict[str, tuple[bytes, bytes]] = {}
        for step in (*actions, *transitions):
            for path, after, line in self._step_edits(step, overlay, now):
                before = self._read(path, overlay)
                if before is None or after == before:
                    continue
                first = edits.get(path, (before, before))[0]
                edits[path] = (first, after)
                overlay[path] = after
                if line:
                    lines.append(line)
        return lines, edits

    def _step_edits(self, step: Consolidation | Transition, overlay: dict[str, bytes],
                    now: datetime) -> list[tuple[str, bytes, str]]:
        """``(path, new bytes, diary line)`` for one action, from the current bytes."""
        today = now.astimezone(UTC).date()
        out: list[tuple[str, bytes, str]] = []
        match step:
            case MergeDuplicate(keeper_path=keeper, duplicate_path=dup, kind=kind):
                keeper_data, dup_data = self._read(keeper, overlay), self._read(dup, overlay)
                if keeper_data is None or dup_data is None:
                    return out
                if kind == "near":
                    keeper_note = parse_note(keeper, keeper_data)
                    dup_note = parse_note(dup, dup_data)
                    merged = merge_bodies(keeper_note.body.rstrip("\n"), dup_note.body.strip())
                    if merged.rstrip("\n") != keeper_note.body.rstrip("\n"):
                        version = keeper_note.memory.version if keeper_note.memory else None
                        edited = set_properties(keeper_data, {
                            "updated": now, "version": (version or 1) + 1}, path=keeper)
                        out.append((keeper, replace_body(edited, merged.rstrip("\n") + "\n"),
                                    f"Merged the sentences of {_link(dup)} into {_link(keeper)}"
                                    " (near-duplicate)"))
                reason = ("exact duplicate" if kind == "exact" else "near-duplicate") + \
                    f" of {_link(keeper)}"
                out.append((dup, self._archived(dup, dup_data, reason, today,
                                                merged_into=_link(keeper)),
                            f"Archived {_link(dup)}: {reason}"))
            case SupersedeOld(old_path=old, new_path=new, reason=reason):
                new_data, old_data = self._read(new, overlay), self._read(old, overlay)
                if new_data is None or old_data is None:
                    return out
                new_note = parse_note(new, new_data)
                targets = list(new_note.memory.supersedes) if new_note.memory else []
                if Path(old).stem not in {t.removesuffix(".md") for t in targets}:
                    values: list[PropertyValue] = [f"[[{t}]]" for t in targets]
                    values.append(_link(old))
                    out.append((new, set_properties(
                        new_data, {"supersedes": values[0] if len(values) == 1 else values},
                        path=new), ""))
                closed = set_properties(old_data, {"valid_to": today}, path=old) \
                    if not parse_note(old, old_data).properties.get("valid_to") else old_data
                out.append((old, self._archived(old, closed, f"superseded by {_link(new)} "
                                                f"({reason})", today),
                            f"{_link(old)} superseded by {_link(new)}: {reason}; archived"))
            case Archive(path=path, reason=reason):
                data = self._read(path, overlay)
                if data is not None:
                    out.append((path, self._archived(path, data, reason, today),
                                f"Archived {_link(path)}: {reason}"))
            case MarkBroken(path=path, links=links):
                data = self._read(path, overlay)
                if data is not None:
                    if links:
                        new_data = set_properties(data, {"broken_links": list(links)}, path=path)
                        line = f"Marked links of {_link(path)} broken: " + ", ".join(
                            f"`{link}`" for link in links)
                    else:
                        new_data = set_properties(data, {}, remove=("broken_links",), path=path)
                        line = f"The links of {_link(path)} work again"
                    out.append((path, new_data, line))
            case SetPriority(path=path, priority=priority):
                data = self._read(path, overlay)
                if data is not None:
                    out.append((path, set_properties(data, {"priority": priority}, path=path),
                                f"Priority of {_link(path)} is now {priority:g}"))
            case Promote(path=path, reason=reason):
                data = self._read(path, overlay)
                if data is not None:
                    out.append((path, set_properties(data, {"resident": True}, path=path),
                                f"Promoted {_link(path)} to the resident set: {reason}"))
            case Demote(path=path, reason=reason):
                data = self._read(path, overlay)
                if data is not None:
                    out.append((path, set_properties(data, {}, remove=("resident",), path=path),
                                f"Demoted {_link(path)} from the resident set: {reason}"))
        return out

    @staticmethod
    def _archived(path: str, data: bytes, reason: str, today: date,
                  merged_into: str | None = None) -> bytes:
        """``data`` with ``status: archived`` (the previous status kept in ``status_before``),
        the date and the reason; unchanged when already archived."""
        note = parse_note(path, data)
        status = note.memory.status if note.memory else None
        if is_archived(status):
            return data
        updates: dict[str, PropertyValue] = {"status": ARCHIVED, "archived": today,
                                             "archived_reason": reason}
        if merged_into:
            updates["merged_into"] = merged_into
        if status:
            updates["status_before"] = status
        return set_properties(data, updates, path=path)

    # ------------------------------------------------------------------ running

    def plan(self, *, consolidate: bool = True) -> DreamPlan:
        """What a dream (``consolidate=False``: ``dreamd expire``) would do now; writes
        nothing."""
        records, bodies = self._gather(self.state().get("memories") or {})
        return self._plan(records, bodies, consolidate=consolidate, overlay={})

    def dream(self, *, dry_run: bool = False, force: bool = False,
              consolidate: bool = True) -> DreamReport:
        """Run one dream (``consolidate=False``: lifecycle only, ``dreamd expire``).

        ``dry_run`` plans and returns without writing or locking. Raises ``LockError`` when
        another dream runs, ``DreamGuardError`` when the plan changes more than
        ``max_change_share`` of the memories and ``force`` is not set (nothing written).
        """
        timings: dict[str, float] = {}
        started = time.perf_counter()
        if dry_run:
            plan = self.plan(consolidate=consolidate)
            timings["plan"] = _ms(started)
            return DreamReport(plan, applied=False, timings_ms=timings)
        with DreamLock(self.state_dir, self.lock_ttl, self._clock):
            state = self.state()
            journal = self._read_journal()
            resumed_lines: list[str] = []
            resumed = 0
            if journal is not None:
                resumed_lines, resumed = self._replay(journal)
            records, bodies = self._gather(state.get("memories") or {})
            timings["read"] = _ms(started)
            plan = self._plan(records, bodies, consolidate=consolidate, overlay={})
            timings["plan"] = _ms(started) - timings["read"]
            if (plan.share > self.max_change_share and not force and not journal
                    and plan.counts["changed_memories"] > self.max_change_free):
                raise DreamGuardError(
                    f"dream: the plan changes {plan.counts['changed_memories']} of "
                    f"{plan.counts['memories']} memories ({plan.share:.0%}), more than "
                    f"dream.max_change_share ({self.max_change_share:.0%}); nothing was "
                    "changed. Look at it with: dreamd dream --dry-run; go ahead with: "
                    "dreamd dream --force")
            dream_id = journal["id"] if journal else str(ULID())
            all_lines = [*resumed_lines, *(x for x in plan.changes if x not in resumed_lines)]
            self._write_journal(dream_id, plan, all_lines)
            t0 = time.perf_counter()
            written = self._apply(plan)
            timings["apply"] = _ms(t0)
            t0 = time.perf_counter()
            records, _ = self._gather({p: asdict(r) for p, r in records.items()})
            index_summary, index_changed = self._rebuild_index(records)
            index_outcome = index_summary if index_changed else None
            timings["memory_index"] = _ms(t0)
            diary = False
            if all_lines or resumed:
                counts = journal.get("counts") if journal else None
                diary = self._write_diary(dream_id, counts if isinstance(counts, dict)
                                          else plan.counts, all_lines, index_summary)
            if consolidate:
                self._record_dream(dream_id, plan, records)
            else:
                self._keep_state(state, records)
            (self.state_dir / JOURNAL_FILE).unlink(missing_ok=True)
        paths = sorted({*written, *([self.index_path] if index_outcome else []),
                        *([self.diary_path] if diary else [])})
        t0 = time.perf_counter()
        indexed = self._index(paths) if paths else None
        timings["index"] = _ms(t0)
        timings["total"] = _ms(started)
        log.info("dream.done", id=dream_id, written=len(written), diary=diary,
                 resumed=resumed, **{k: v for k, v in plan.counts.items() if v})
        return DreamReport(plan, applied=True, written=tuple(sorted(written)), diary=diary,
                           memory_index=index_outcome, resumed=resumed, indexed=indexed,
                           timings_ms=timings)

    def _record_dream(self, dream_id: str, plan: DreamPlan,
                      records: Mapping[str, _Record]) -> None:
        """Record the finished dream: its time and id, and every memory as seen now."""
        for record in records.values():
            record.seen = record.hash
        write_json_atomic(self.state_dir / STATE_FILE, {
            "last_dream": self._clock().isoformat(timespec="seconds"), "last_id": dream_id,
            "counts": dict(plan.counts),
            "memories": {p: asdict(r) for p, r in sorted(records.items())},
        })

    def _keep_state(self, state: Mapping[str, Any], records: Mapping[str, _Record]) -> None:
        """After ``expire``: refresh the records (sizes and hashes), keep the dream's marks:
        an expiry is not a dream, so what changed since the last dream stays "changed"."""
        previous = state.get("memories") or {}
        for path, record in records.items():
            old = previous.get(path)
            record.seen = old.get("seen") if isinstance(old, dict) else None
        write_json_atomic(self.state_dir / STATE_FILE, {
            **{k: v for k, v in state.items() if k != "memories"},
            "memories": {p: asdict(r) for p, r in sorted(records.items())},
        })

    def _apply(self, plan: DreamPlan) -> list[str]:
        """Carry out ``plan`` from the files as they are now; returns the paths written.
        Keepers and superseding memories are written before the memories they close."""
        written: list[str] = []
        now = self._clock()
        for step in (*plan.consolidation, *plan.lifecycle):
            for path, after, _ in self._step_edits(step, {}, now):
                before = self.writer.read(path)
                if before is None or before == after:
                    continue
                self.writer.write(path, after, base=before, origin="dream",
                                  change=_change_kind(step))
                if path not in written:
                    written.append(path)
        return written

    # ------------------------------------------------------------------ journal

    def _read_journal(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.state_dir / JOURNAL_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("id"), str) else None

    def _write_journal(self, dream_id: str, plan: DreamPlan, lines: Sequence[str]) -> None:
        write_json_atomic(self.state_dir / JOURNAL_FILE, {
            "id": dream_id, "started": self._clock().isoformat(timespec="seconds"),
            "lines": list(lines), "counts": dict(plan.counts),
            "actions": [_action_json(a) for a in (*plan.consolidation, *plan.lifecycle)],
        })

    def _replay(self, journal: Mapping[str, Any]) -> tuple[list[str], int]:
        """Finish an interrupted dream's actions (each is idempotent); returns its diary
        lines and how many files it still had to write."""
        steps = [s for s in (_action_from_json(a) for a in journal.get("actions", []))
                 if s is not None]
        written = self._apply(DreamPlan(
            tuple(s for s in steps if isinstance(s, MergeDuplicate | SupersedeOld)),
            tuple(s for s in steps if not isinstance(s, MergeDuplicate | SupersedeOld)),
            (), "", {}, 0.0))
        log.warning("dream.resumed", id=journal.get("id"), finished=len(written))
        return [str(x) for x in journal.get("lines", [])], len(written)

    # ------------------------------------------------------------------ MEMORY.md, diary

    def _rebuild_index(self, records: Mapping[str, _Record]) -> tuple[str, bool]:
        """Write ``MEMORY.md`` from ``records``; returns a one-line summary and whether the
        file changed."""
        today = self._clock().astimezone(UTC).date()
        entries = index_entries(self.memory_folder, (
            (r.path, asdict(r)) for r in records.values()), today)
        text = build_memory_index(entries, memory_folder=self.memory_folder).encode("utf-8")
        outcome = self.writer.write_generated(self.index_path, text)
        self._note_index_built(
            self._fingerprint(((r.path, r.hash) for r in records.values()), today),
            outcome.content_hash)
        lines = text.count(b"\n")
        summary = (f"{self.index_path} lists {len(entries)} live memories in {lines} lines, "
                   f"{len(text):,} bytes")
        return summary, outcome.status != "unchanged"

    def _write_diary(self, dream_id: str, counts: Mapping[str, int], lines: Sequence[str],
                     index_summary: str | None) -> bool:
        """Append one entry to ``DREAMS.md`` (once per dream id); ``counts`` are those of
        the dream's first plan (an interrupted dream's, when this one finishes it)."""
        marker = f"<!-- dream {dream_id} -->"
        current = self.writer.read(self.diary_path)
        if current is not None and marker.encode() in current:
            return False
        now = self._clock().astimezone(UTC)
        c = counts
        entry = [f"\n## {now:%Y-%m-%d %H:%M} UTC\n\n{marker}\n",
                 f"Read {c.get('memories', 0):,} memories: {c.get('skipped', 0):,} unchanged "
                 f"since the last dream (skipped), {c.get('updated', 0):,} updated, "
                 f"{c.get('added', 0):,} added.\n\n"]
        entry.extend(f"- {line}\n" for line in lines)
        if index_summary:
            entry.append(f"- {index_summary}\n")
        text = "".join(entry)
        base = current if current is not None else None
        data = (current if current is not None else DIARY_HEADER.encode()) + text.encode()
        self.writer.write(self.diary_path, data, base=base, origin="dream",
                          change="dream diary entry")
        return True

    # ------------------------------------------------------------------ restore

    def restore(self, stored_path: str) -> bool:
        """Bring the archived memory at ``stored_path`` back: remove the archive keys, put
        back the previous status. Returns False when it was not archived."""
        data = self.writer.read(stored_path)
        if data is None:
            raise MemoryNotFoundError(f"restore: {stored_path} is gone")
        note = parse_note(stored_path, data)
        if note.memory is None or not is_archived(note.memory.status):
            return False
        before = note.properties.get("status_before")
        remove = [k for k in ARCHIVE_KEYS if k in note.properties]
        updates: dict[str, PropertyValue] = {}
        if isinstance(before, str) and before.strip() and not is_archived(before):
            updates["status"] = before
        else:
            remove.append("status")
        if note.memory.valid_to is not None:
            remove.append("valid_to")
        restored = set_properties(data, updates, remove=remove, path=stored_path)
        self.writer.write(stored_path, restored, base=data, origin="api",
                          change="restored from the archive")
        return True


def _mtime(record: _Record) -> datetime:
    """The file's modification time: the last edit of a memory without ``updated`` (Claude
    Code's memory files carry no dates)."""
    return datetime.fromtimestamp(record.mtime_ns / 1e9, UTC)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def _link(path: str) -> str:
    """``[[stem]]``: Obsidian resolves a link by file name."""
    return f"[[{Path(path).stem}]]"


def _change_kind(step: Consolidation | Transition) -> str:
    return {MergeDuplicate: "dream: merged a duplicate", SupersedeOld: "dream: superseded",
            Archive: "dream: archived", MarkBroken: "dream: link check",
            SetPriority: "dream: priority decay", Promote: "dream: promoted",
            Demote: "dream: demoted"}[type(step)]


_ACTION_TYPES: dict[str, type] = {cls.__name__: cls for cls in (
    MergeDuplicate, SupersedeOld, Archive, MarkBroken, SetPriority, Promote, Demote)}


def _action_json(step: Consolidation | Transition) -> dict[str, Any]:
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(step).items()}
    return {"kind": type(step).__name__, **fields}


def _action_from_json(data: object) -> Consolidation | Transition | None:
    if not isinstance(data, dict):
        return None
    cls = _ACTION_TYPES.get(str(data.get("kind")))
    if cls is None:
        return None
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "kind"}
    try:
        return cls(**fields)
    except TypeError:
        return None

