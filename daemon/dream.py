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
The edits are staged and made durable together, then swapped in, and their folder is fsynced
once before the journal is cleared (:mod:`ccb.atomic_batch`): after a power cut each file is
its old bytes or its new ones, whole, and what was undone is done again by the replay.
"""

from __future__ import annotations

import difflib
import os
import re
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import filelock
import numpy as np
import structlog
from ulid import ULID

from ccb.atomic import read_json_object, write_json_atomic
from ccb.dates import as_written
from ccb.memory_index import IndexEntry
from ccb.model import DIARY_FILE
from ccb.parse import parse_note
from ccb.writable import require_writable
from ccb.writer import NoteWriter
from config.errors import (
    DreamdError,
    DreamGuardError,
    FrontmatterEditError,
    LockError,
    StaleWriteError,
    VaultError,
)
from config.settings import MEMORY_MAX_CHARS
from consistency.dream import (
    Consolidation,
    DreamMemory,
    Gate,
    LinkPossible,
    MergeDuplicate,
    Settle,
    SupersedeOld,
    dream_due,
    groups_to_compare,
    plan_consolidation,
)
from consistency.judgement import PairJudgement
from consistency.lifecycle import (
    Archive,
    Demote,
    LifecycleMemory,
    LifecyclePolicy,
    MarkBroken,
    Promote,
    RecallStats,
    Transition,
    is_archived,
    plan_lifecycle,
)
from consistency.secrets import redactions_kept
from consistency.synthesis import (
    ExtractedFact,
)
from daemon.client import pid_alive
from daemon.dream_blocks import sleep_night
from daemon.dream_deep import DeepPhase, Synthesise, diary_link, transcripts_since
from daemon.dream_edits import Step, diary_entry, still_allowed
from daemon.dream_entries import DreamEntries, dream_step_edits, mergeable
from daemon.dream_journal import DreamJournal, steps_of
from daemon.dream_profile import ProfileDistiller, is_profile
from daemon.dream_recheck import DerivedRecheck, RecheckPlan
from daemon.dream_records import (
    STATE_FILE,
    MemoryRecord,
    Read,
    Seen,
    gather,
    read_body,
    read_record,
    refresh,
    unchanged_bytes,
)
from daemon.dream_replay import TranscriptReplay
from daemon.dream_restore import Restorer, TakenBack
from daemon.dream_sleep import SleepCycle
from daemon.link_check import check_links
from daemon.llm import ChatClient
from daemon.memory_index_keeper import MemoryIndexKeeper, index_entries, index_fingerprint
from daemon.memory_pool import MemoryPool
from daemon.pair_judge import PairJudge
from magma.gc_pause import collector_paused
from magma.lineage import LineageResolver

__all__ = [
    "DIARY_FILE",
    "DreamLock",
    "DreamPlan",
    "DreamPolicy",
    "DreamReport",
    "DreamRoles",
    "DreamRunner",
    "IndexReads",
    "SessionCount",
    "SessionLog",
    "last_dream",
    "read_state",
]

log = structlog.get_logger("dreamd.dream")

LAST_FILE = "dream-last.json"
LOCK_FILE = "dream.lock"
SESSIONS_FILE = "sessions.json"
#: Most session timestamps kept per kind (older ones are dropped first).
SESSIONS_KEPT = 10_000



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
        return read_json_object(self.path) or None

    def _stale(self, holder: Mapping[str, Any], now: datetime) -> str | None:
        try:
            expires = datetime.fromisoformat(str(holder.get("expires")))
        except ValueError:
            return "unreadable lock"
        if now >= expires:
            return f"expired at {holder.get('expires')}"
        if holder.get("host") == socket.gethostname() and not pid_alive(holder.get("pid")):
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


def read_state(state_dir: Path) -> dict[str, Any]:
    """The dream state of a vault: ``last_dream`` (ISO), ``last_id`` and ``counts`` from
    ``dream-last.json``, the ``memories`` records from ``dream-state.json`` (``{}`` when there
    is none or it is unreadable). Two files: the records are rewritten only when they change."""
    return {**read_json_object(state_dir / STATE_FILE), **read_json_object(state_dir / LAST_FILE)}


def last_dream(state_dir: Path) -> datetime | None:
    """When the last dream of this state folder finished (aware), or ``None``."""
    stamp = read_json_object(state_dir / LAST_FILE).get("last_dream") \
        or read_json_object(state_dir / STATE_FILE).get("last_dream")
    try:
        return datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None




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
        data = read_json_object(self.path)
        return {k: [str(x) for x in v] for k, v in data.items() if isinstance(v, list)}

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
    return len(transcripts_since(pattern, since)) if pattern.strip() else 0


# --------------------------------------------------------------------------- plan and report


@dataclass(frozen=True, slots=True)
class DreamPlan:
    """What a dream (or ``expire``) would do, before it does it.

    ``changes`` are the diary lines (markdown, with wikilinks); ``edits`` maps each file the
    plan writes to ``(bytes before, bytes after, change)`` (:attr:`diff` shows them);
    ``counts`` holds ``memories`` (read), ``skipped`` (unchanged since the last dream),
    ``updated``, ``added`` (new since), ``changed_memories`` (files the plan writes) and one
    count per kind of change.
    """

    consolidation: tuple[Consolidation, ...]
    lifecycle: tuple[Transition, ...]
    changes: tuple[str, ...]
    counts: Mapping[str, int]
    share: float
    edits: Mapping[str, tuple[bytes, bytes, str]] = field(default_factory=dict, repr=False)
    #: What the plan does to ``MEMORY.md`` (dry runs): (path, summary, bytes before, after);
    #: the bytes are ``None`` when it stays as it is.
    memory_index: tuple[str, str, bytes | None, bytes | None] | None = field(
        default=None, repr=False)

    @property
    def after(self) -> dict[str, bytes]:
        """``{path: bytes after}`` of every file the plan writes: what a dream stages
        (:meth:`ccb.writer.NoteWriter.batch`), so that its writes are made durable together
        and the folder fsynced once when the batch ends, before the journal is cleared."""
        return {path: after for path, (_, after, _) in self.edits.items()}

    @property
    def diff(self) -> str:
        """A unified diff of every file the plan writes (``a/<path>`` → ``b/<path>``),
        ``MEMORY.md`` included when a dry run computed it."""
        files = {path: (before, after) for path, (before, after, _) in self.edits.items()}
        if self.memory_index is not None:
            path, _, before, after = self.memory_index
            if after is not None:
                files[path] = (before or b"", after)
        return "".join(
            "".join(difflib.unified_diff(
                before.decode("utf-8", "replace").splitlines(keepends=True),
                after.decode("utf-8", "replace").splitlines(keepends=True),
                fromfile=f"a/{path}", tofile=f"b/{path}"))
            for path, (before, after) in files.items())

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


@dataclass(frozen=True, slots=True)
class DreamPolicy:
    """The knobs of a dream (``[dream]`` and ``[lifecycle]`` settings; defaults as theirs):
    the lifecycle rules, the change guard (a plan that changes more than ``max_change_share``
    of the memories and more than ``max_change_free`` files needs ``--force``), the lock's
    time to live, the reference URL checks, the transcripts the Extractor reads, the
    longest memory text the deep phase may write (``memory.max_chars``), and how many older
    transcripts a dream replays (``dream.replay.sessions_per_dream``)."""

    lifecycle: LifecyclePolicy = field(default_factory=LifecyclePolicy)
    max_change_share: float = 0.25
    max_change_free: int = 10
    lock_ttl: timedelta = timedelta(hours=1)
    check_urls: bool = False
    url_timeout_s: float = 5.0
    transcripts: str = ""
    max_memory_chars: int = MEMORY_MAX_CHARS
    replay_sessions: int = 5


@dataclass(frozen=True, slots=True)
class DreamRoles:
    """The dream's LLM roles besides the deep phase, each ``None`` while off: ``judge``
    (``llm.judge``) settles the pairs the rules were unsure of; ``profile``
    (``llm.profile``) distils the user's ``user`` memories into one pinned profile."""

    judge: PairJudge | None = None
    profile: ProfileDistiller | None = None


@dataclass(frozen=True, slots=True)
class IndexReads:
    """What the index tells a dream: MAGMA's recall statistics by memory id; per vault path,
    the link targets it could not resolve (``None``: no index yet, links not checked); the
    first-chunk vector of each memory path (the dream compares memories by meaning with them;
    ``None``: only those that share a subject)."""

    recall_stats: Callable[[], Mapping[str, RecallStats]]
    unresolved_links: Callable[[Sequence[str]], Mapping[str, Sequence[str]]] | None = None
    embeddings: Callable[[Sequence[str]], Mapping[str, np.ndarray]] | None = None


@dataclass(slots=True)
class _DreamRun:
    """What one dream (or plan) learns as it goes: the records it planned from, the archives
    the still-allowed check vetoed, the state it loaded, and its ``MEMORY.md`` build."""

    known: Mapping[str, MemoryRecord] = field(default_factory=dict)
    vetoed: list[str] = field(default_factory=list)
    loaded_memories: Mapping[str, Any] = field(default_factory=dict)
    index_built: dict[str, str] | None = None
    #: The memory files the dream leaves alone (a property it cannot read): never planned,
    #: listed in ``MEMORY.md`` all the same (:func:`daemon.dream_records.gather`).
    left_alone: Mapping[str, MemoryRecord] = field(default_factory=dict)
    recheck: RecheckPlan = field(default_factory=RecheckPlan)  # what the re-check did
    #: The files this run read, as they were (:data:`daemon.dream_records.Seen`): the
    #: re-check does not read again one unchanged since that names no lineage.
    seen: Seen = field(default_factory=dict)
    #: The bytes of the files read for the plan (:data:`daemon.dream_records.Read`): its
    #: edits start from them while the files are unchanged, instead of reading each again
    #: (:func:`daemon.dream_records.unchanged_bytes`: a plan over 10,000 memories edits
    #: 3,300 of them, each looked at a few times); ``None`` once the plan is made
    read: Read | None = field(default_factory=dict)


def _gathered(run: _DreamRun, root: Path, memory_folder: str, cached: Mapping[str, Any]
              ) -> tuple[dict[str, MemoryRecord], dict[str, str]]:
    """:func:`daemon.dream_records.gather` for ``run`` (what it leaves alone and the files
    it read are kept in it)."""
    records, bodies, run.left_alone = gather(root, memory_folder, cached, run.seen, run.read)
    return records, bodies


def _dream_memories(current: list[MemoryRecord],
                    vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]] | None,
                    entries: Sequence[DreamMemory] = ()) -> list[DreamMemory]:
    """The current memory files as the consolidation sees them, by path (two files may
    carry one id), then ``entries``; each with its vector from ``vectors`` (the index's, by
    path; ``None``: none) and the file's ``pinned``. ``supersedes`` read with the one
    lineage resolver (a name, a file stem, a path in a subfolder), a link to the memory
    itself or to one closed already left out. Made whole at once: a copy of each to add its
    vector (:func:`dataclasses.replace`) cost 0.04 s of CPU per 10,000 memories (best of 7,
    ``time.process_time``)."""
    resolve = LineageResolver.of((r.path, r.name) for r in current)
    # a memory already closed at a day of its own (a supersession that takes effect later:
    # ``valid_to`` ahead) is no target: its successor and its day are written already
    open_ended = {r.path for r in current if r.valid_to is None}
    current = sorted(current, key=lambda r: r.path)
    found = vectors([*(r.path for r in current), *(m.path for m in entries)]) if vectors \
        else {}
    return [DreamMemory(
        id=r.path, path=r.path, type=r.type, name=r.name, description=r.description,
        subject=r.subject, owner=r.owner, content_hash=r.norm_hash,
        created=as_written(r.created) or as_written(r.updated) or _mtime(r),
        changed=r.changed, embedding=found.get(r.path), pinned=r.pinned,
        derived_from=frozenset(r.derived_from),
        supersedes=frozenset(p for link in r.supersedes
                             if (p := resolve(link)) in open_ended and p != r.path),
    ) for r in current] + [replace(m, embedding=found.get(m.path)) for m in entries]


class DreamRunner:
    """Dreams, expiration and restore for one vault.

    ``reads`` is what the index tells a dream (:class:`IndexReads`); ``index(paths)`` indexes
    written files (False: a running daemon will); ``memory_index`` writes and records
    ``MEMORY.md``; ``policy`` holds the knobs (:class:`DreamPolicy`); ``llm`` runs the deep
    phase (:mod:`daemon.dream_deep`) and ``remember`` keeps the facts it extracts; ``roles``
    are the other LLM roles (:class:`DreamRoles`). What one dream learns as it goes lives in a
    per-run object, never on the runner."""

    def __init__(
        self, *, writer: NoteWriter, state_dir: Path, memory_index: MemoryIndexKeeper,
        reads: IndexReads, index: Callable[[Sequence[str]], bool],
        policy: DreamPolicy | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        llm: ChatClient | None = None,
        remember: Callable[[ExtractedFact], tuple[str, str]] | None = None,
        roles: DreamRoles | None = None,
    ) -> None:
        self.writer = writer
        self.root = writer.root
        self.state_dir = state_dir
        self.memory_index = memory_index
        self.memory_folder = memory_index.memory_folder
        self.reads = reads
        self._index = index
        self.policy = policy or DreamPolicy()
        self._clock = clock
        self.llm = llm
        self._remember = remember
        self._roles = roles or DreamRoles()
        self.restorer = Restorer(writer=writer, memory_folder=self.memory_folder,
                                 state_dir=state_dir, clock=clock)
        self.journal = DreamJournal(state_dir)
        self.entries = DreamEntries(MemoryPool(self.root, self.memory_folder), state_dir)
        self._run = _DreamRun()  # what the dream under way has learnt; new for each
        self.sleep: SleepCycle | None = None  # light, REM and deep sleep (the composition root)

    # ------------------------------------------------------------------ state

    @property
    def diary_path(self) -> str:
        return f"{self.memory_folder}/{DIARY_FILE}"

    @property
    def index_path(self) -> str:
        return self.memory_index.path

    def state(self) -> dict[str, Any]:
        """:func:`read_state` of this vault's state folder."""
        return read_state(self.state_dir)

    def last_dream(self) -> datetime | None:
        """When the last dream finished (aware), or ``None``."""
        return last_dream(self.state_dir)

    def gate(self, *, sessions: SessionCount, min_hours: float, max_hours: float,
             min_sessions: int) -> Gate:
        """:func:`consistency.dream.dream_due` at the runner's clock."""
        return dream_due(last_dream=self.last_dream(), sessions=sessions.total,
                         now=self._clock(), min_hours=min_hours, max_hours=max_hours,
                         min_sessions=min_sessions)

    # ------------------------------------------------------------------ reading

    def _gather(self, cached: Mapping[str, Any]) -> tuple[dict[str, MemoryRecord], dict[str, str]]:
        """:func:`daemon.dream_records.gather`; what it leaves alone is kept for MEMORY.md."""
        return _gathered(self._run, self.root, self.memory_folder, cached)

    def _refresh(self, records: Mapping[str, MemoryRecord], written: Sequence[str]
                 ) -> dict[str, MemoryRecord]:
        """:func:`daemon.dream_records.refresh`."""
        return refresh(self.root, records, written, self._run.seen)

    # ------------------------------------------------------------------ planning

    def _plan(self, records: Mapping[str, MemoryRecord], bodies: dict[str, str], *,
              consolidate: bool, overlay: dict[str, bytes]) -> DreamPlan:
        now = self._clock()
        today = now.date()  # the user's day: the clock carries time.zone
        restored = {p for p, h in self.restorer.restored().items()
                    if p in records and records[p].hash == h}
        current = [r for r in records.values() if not r.hidden(today)
                   and r.path not in restored and not is_profile(r)]  # a profile is no fact
        actions: list[Consolidation] = []
        lines_of = self.entries.memories(today, records) if consolidate else []
        if (consolidate and any(r.changed for r in current)) or any(m.changed for m in lines_of):
            memories = _dream_memories(current, self.reads.embeddings, lines_of)
            # the comparison groups tell which bodies to read; when every body is read
            # already (a first dream reads every file), bodies outside the groups are never
            # looked at (:func:`consistency.dream.plan_consolidation`): the groups are then
            # found once, there, not twice
            read_all = all(m.path in bodies for m in memories if m.path in records)
            wanted = {m.id for m in memories} if read_all else groups_to_compare(memories)
            memories = [m if m.path not in records or (
                m.id not in wanted and m.body is None and m.pinned == records[m.path].pinned)
                else replace(m, body=read_body(self.root, m.path, bodies)
                             if m.id in wanted else None, pinned=records[m.path].pinned)
                for m in memories]
            if self._roles.judge is not None:
                self._roles.judge.start()
            actions = _consolidation(
                memories, settle=self._settle if self._roles.judge is not None else None)
        # Lifecycle runs on the state after the consolidation.
        closed = {a.duplicate_path for a in actions if isinstance(a, MergeDuplicate)}
        closed |= {a.old_path for a in actions if isinstance(a, SupersedeOld)}
        stats = self.reads.recall_stats()
        unreachable = self._check_links([r for r in records.values()
                                         if r.type == "reference" and r.path not in closed
                                         and not is_archived(r.status)])
        lifecycle_input = [LifecycleMemory(
            id=r.id, path=r.path, type=r.type, status=r.status, pinned=r.pinned,
            resident=r.resident, rule=r.rule, created=as_written(r.created),
            updated=as_written(r.updated) or _mtime(r), valid_to=as_written(r.valid_to),
            expires=as_written(r.expires),
            broken_links=tuple(r.broken_links),
            unreachable=unreachable.get(r.path), recall=stats.get(r.id, RecallStats()),
        ) for r in sorted(records.values(), key=lambda r: r.path) if r.path not in closed]
        transitions = [t for t in plan_lifecycle(lifecycle_input, now, self.policy.lifecycle)
                       if not (isinstance(t, Archive) and t.path in restored)]
        self._run.known = records
        try:
            lines, edits = self._edits(actions, transitions, records, overlay, now)
        finally:  # (the files read for the plan are not kept past it)
            self._run.known, self._run.read = {}, None
        actions = _changing(actions, edits)
        added = sum(1 for r in records.values() if r.seen is None)
        updated = sum(1 for r in records.values() if r.seen is not None and r.changed)
        live = sum(1 for r in records.values() if not r.hidden(today))
        counts = {
            "memories": len(records), "live": live, "skipped": len(records) - added - updated,
            "updated": updated, "added": added, "changed_memories": len(edits),
            **_consolidation_counts(actions),
            "archived": sum(1 for t in transitions if isinstance(t, Archive)),
            "broken_links": sum(1 for t in transitions if isinstance(t, MarkBroken)),
            "promoted": sum(1 for t in transitions if isinstance(t, Promote)),
            "demoted": sum(1 for t in transitions if isinstance(t, Demote)),
        }
        share = len(edits) / live if live else (1.0 if edits else 0.0)
        return DreamPlan(tuple(actions), tuple(transitions), tuple(lines), counts, share, edits)

    def _settle(self, old: DreamMemory, new: DreamMemory, why: PairJudgement | None
                ) -> str | None:
        """The ``llm.judge`` answer for a pair the rules were unsure of."""
        assert self._roles.judge is not None
        return self._roles.judge.settle(old.body or "", old.content_hash, new.body or "",
                                  new.content_hash, why)

    def _check_links(self, references: Sequence[MemoryRecord]) -> dict[str, tuple[str, ...]]:
        """:func:`daemon.link_check.check_links` with the index's unresolved links."""
        return check_links(references, self.reads.unresolved_links,
                           check_urls=self.policy.check_urls,
                           url_timeout_s=self.policy.url_timeout_s)

    # ------------------------------------------------------------------ edits

    def _read(self, path: str, overlay: dict[str, bytes]) -> bytes | None:  # (_DreamRun.read)
        if path in overlay:
            return overlay[path]
        return unchanged_bytes(self.root, path, self._run.read) or self.writer.read(path)

    def _edits(
        self, actions: Sequence[Consolidation], transitions: Sequence[Transition],
        records: Mapping[str, MemoryRecord], overlay: dict[str, bytes], now: datetime,
    ) -> tuple[list[str], dict[str, tuple[bytes, bytes, str]]]:
        """Diary lines and ``{path: (before, after, change)}`` of the plan, computed from the
        files as they are (``overlay`` holds the bytes of edits planned earlier in this run)."""
        lines: list[str] = []
        edits: dict[str, tuple[bytes, bytes, str]] = {}
        for step in (*actions, *transitions):
            try:
                step_edits = self._step_edits(step, overlay, now)
            except FrontmatterEditError as error:  # reported and left alone, never forced
                lines.append(f"Left {_step_paths(step)} as they are: {error}")
                continue
            for path, after, line in step_edits:
                before = self._read(path, overlay)
                if before is None or after == before:
                    continue
                first, _, change = edits.get(path, (before, before, _change_kind(step)))
                edits[path] = (first, after, change)
                overlay[path] = after
                if line:
                    lines.append(line)
        return lines, edits

    def _step_edits(self, step: Step, overlay: dict[str, bytes],
                    now: datetime) -> list[tuple[str, bytes, str]]:
        """:func:`daemon.dream_entries.dream_step_edits` of the bytes now (overlay first)."""
        return dream_step_edits(step, lambda p: self._read(p, overlay), self._run.known, now)

    # ------------------------------------------------------------------ running

    def plan(self, *, consolidate: bool = True) -> DreamPlan:
        """What a dream (``consolidate=False``: ``dreamd expire``) would do now; writes
        nothing."""
        self._run = _DreamRun()
        records, bodies = self._gather(self.state().get("memories") or {})
        plan = _rechecked(self, records, bodies, consolidate)
        return replace(plan, memory_index=self._index_preview(records, plan))

    def _index_preview(self, records: Mapping[str, MemoryRecord], plan: DreamPlan
                       ) -> tuple[str, str, bytes | None, bytes | None]:
        """What the plan does to ``MEMORY.md``: a summary line, and its bytes before and after
        (``None``, ``None`` when it stays as it is)."""
        after = dict(records)
        for path, (_, data, _) in plan.edits.items():
            old = records.get(path)
            record = read_record(path, parse_note(path, data), data, (self.root / path).lstat(),
                             old.seen if old else None)
            if record is not None:
                after[path] = record
        text, entries = self._index_text(after)
        return self.memory_index.preview(entries, text)

    def dream(self, *, dry_run: bool = False, force: bool = False,
              consolidate: bool = True) -> DreamReport:
        """Run one dream (``consolidate=False``: lifecycle only, ``dreamd expire``).

        ``dry_run`` plans and returns without writing or locking. Raises ``LockError`` when
        another dream runs, ``DreamGuardError`` when the plan changes more than
        ``max_change_share`` of the memories and ``force`` is not set,
        ``VaultNotWritableError`` when the memory folder refuses writes (nothing written).
        """
        timings: dict[str, float] = {}
        started = time.perf_counter()
        if dry_run:
            plan = self.plan(consolidate=consolidate)
            timings["plan"] = _ms(started)
            return DreamReport(plan, applied=False, timings_ms=timings)
        with DreamLock(self.state_dir, self.policy.lock_ttl, self._clock), redactions_kept(), \
                collector_paused():  # (thousands of records kept: magma.gc_pause)
            # a vault that refuses writes stops the dream here, not after half its edits
            require_writable(self.root / self.memory_folder)
            self._run = _DreamRun()
            state = self.state()
            self._run.loaded_memories = state.get("memories") or {}
            journal = self.journal.read()
            resumed_lines: list[str] = []
            resumed = 0
            if journal is not None:
                resumed_lines, resumed = self._replay(journal)
            records, bodies = self._gather(state.get("memories") or {})
            timings["read"] = _ms(started)
            plan = self._plan(records, bodies, consolidate=consolidate, overlay={})
            timings["plan"] = _ms(started) - timings["read"]
            if (plan.share > self.policy.max_change_share and not force
                    and plan.counts["changed_memories"] > self.policy.max_change_free):
                raise DreamGuardError(
                    f"dream: the plan changes {plan.counts['changed_memories']} memory files, "
                    f"{plan.share:.0%} of the {plan.counts['live']} live memories, more than "
                    f"dream.max_change_share ({self.policy.max_change_share:.0%}); nothing was "
                    "changed. Look at it with: dreamd dream --dry-run; go ahead with: "
                    "dreamd dream --force")
            dream_id = journal["id"] if journal else str(ULID())
            all_lines = [*resumed_lines, *(x for x in plan.changes if x not in resumed_lines)]
            self.journal.write(dream_id, self._clock(), all_lines, plan.counts,
                               (*plan.consolidation, *plan.lifecycle))
            t0 = time.perf_counter()
            written = self._write_edits(plan, all_lines)
            timings["apply"] = _ms(t0)
            records = self._refresh(records, written)
            self.restorer.carry({p: r.hash for p, r in records.items()}, written)
            if consolidate:
                t0 = time.perf_counter()
                deep = _llm_phases(self, records, dream_id, plan, all_lines)
                written += deep
                plan = with_recheck(plan, self._run.recheck, lines=False)  # what it did
                timings["deep"] = _ms(t0)
                records, _ = self._gather({p: r.as_json() for p, r in records.items()}) \
                    if deep else (records, {})
            t0 = time.perf_counter()
            index_summary, index_changed = self._rebuild_index(records)
            timings["memory_index"] = _ms(t0)
            diary = False
            if all_lines or resumed or index_changed:
                counts = journal.get("counts") if journal else None
                diary = self._write_diary(dream_id, counts if isinstance(counts, dict)
                                          else plan.counts, all_lines, index_summary)
            if consolidate:
                self._record_dream(dream_id, plan, records)
            else:
                self._keep_state(state, records)
            self.journal.clear()
        paths = sorted({*written, *([self.index_path] if index_changed else []),
                        *([self.diary_path] if diary else [])})
        t0 = time.perf_counter()
        indexed = self._index(paths) if paths else None
        timings["index"] = _ms(t0)
        timings["total"] = _ms(started)
        log.info("dream.done", id=dream_id, written=len(written), diary=diary,
                 resumed=resumed, **{k: v for k, v in plan.counts.items() if v})
        return DreamReport(replace(plan, changes=tuple(all_lines)), applied=True,  # all lines
                           written=tuple(sorted(written)), diary=diary,
                           memory_index=index_summary, resumed=resumed, indexed=indexed,
                           timings_ms=timings)

    def _record_dream(self, dream_id: str, plan: DreamPlan,
                      records: Mapping[str, MemoryRecord]) -> None:
        """Record the finished dream: its time and id, and every memory as seen now."""
        for record in records.values():
            record.seen = record.hash
        self.entries.record()
        memories = {p: r.as_json() for p, r in sorted(records.items())}
        if memories != self._run.loaded_memories:
            write_json_atomic(self.state_dir / STATE_FILE, {"memories": memories}, indent=None)
        previous = read_json_object(self.state_dir / LAST_FILE).get("memory_index")
        write_json_atomic(self.state_dir / LAST_FILE, {
            "last_dream": self._clock().isoformat(), "last_id": dream_id,  # not cut to seconds
            "counts": dict(plan.counts), "memory_index": self._run.index_built or previous,
        })

    def _keep_state(self, state: Mapping[str, Any], records: Mapping[str, MemoryRecord]) -> None:
        """After ``expire``: refresh the records (sizes and hashes), keep the dream's marks:
        an expiry is not a dream, so what changed since the last dream stays "changed"."""
        previous = state.get("memories") or {}
        for path, record in records.items():
            old = previous.get(path)
            record.seen = old.get("seen") if isinstance(old, dict) else None
        write_json_atomic(self.state_dir / STATE_FILE, {
            "memories": {p: r.as_json() for p, r in sorted(records.items())}}, indent=None)

    def _write_edits(self, plan: DreamPlan, lines: list[str]) -> list[str]:
        """Write the plan's edits, each based on the bytes it was planned from (a file the
        user changed meanwhile is merged or kept as a conflict copy by the writer). A file
        deleted or being saved meanwhile is left as it is, and ``lines`` says so."""
        written: list[str] = []
        with self.writer.batch(stage=plan.after, within=self.memory_folder):
            for path, (before, after, change) in plan.edits.items():
                try:
                    outcome = self.writer.write(path, after, base=before, origin="dream",
                                                change=change,
                                                heal=_body(before) != _body(after))
                except (StaleWriteError, VaultError) as error:
                    log.warning("dream.not_written", path=path, error=str(error))
                    lines.append(f"Left {diary_link(path)} as it is: {error}; the next dream "
                                 "looks again")
                    continue
                if outcome.conflict_path:
                    lines.append(f"{diary_link(path)} changed meanwhile: the dream's version is "
                                 f"beside it as {diary_link(outcome.conflict_path)}")
                written.append(path)
        return written

    def _apply(self, steps: Sequence[Step]) -> list[str]:
        """Carry out ``steps`` from the files as they are now; returns the paths written.
        Keepers and superseding memories are written before the memories they close."""
        written: list[str] = []
        now = self._clock()
        for step in steps:
            try:
                step_edits = self._step_edits(step, {}, now)
            except FrontmatterEditError as error:
                log.warning("dream.left_alone", step=type(step).__name__, error=str(error))
                continue
            for path, after, _ in step_edits:
                before = self.writer.read(path)
                if isinstance(step, Synthesise) and path == step.new_path:
                    if before is None:  # a synthesis is a new file; never over another one
                        self.writer.write(path, after, base=None, origin="dream",
                                          change="dream: synthesised")
                        written.append(path)
                    continue
                if before is None or before == after:
                    continue
                if not still_allowed(step, path, before):
                    log.info("dream.replay_skipped", path=path, step=type(step).__name__)
                    self._run.vetoed.append(path)
                    continue
                try:
                    self.writer.write(path, after, base=before, origin="dream",
                                      change=_change_kind(step))
                except DreamdError as error:  # gone, busy, out of the vault: left as it is
                    log.warning("dream.not_written", path=path, error=str(error))
                    continue
                if path not in written:
                    written.append(path)
        return written

    def _deep_phase(self) -> DeepPhase:
        assert self.llm is not None
        return DeepPhase(
            llm=self.llm, writer=self.writer, memory_folder=self.memory_folder,
            clock=self._clock, recall_stats=self.reads.recall_stats, remember=self._remember,
            transcripts=self.policy.transcripts, last_dream=self.last_dream,
            apply_step=self._journal_and_apply, max_memory_chars=self.policy.max_memory_chars)

    def _journal_and_apply(self, dream_id: str, plan: DreamPlan, lines: list[str],
                           step: Synthesise) -> list[str]:
        self.journal.add(dream_id, plan.counts, lines, step)
        return self._apply([step])

    # ------------------------------------------------------------------ journal

    def _replay(self, journal: Mapping[str, Any]) -> tuple[list[str], int]:
        """Finish an interrupted dream's actions (each is idempotent); returns its diary
        lines and how many files it still had to write."""
        steps = steps_of(journal)
        self._run.vetoed = []
        written = self._apply(steps)
        log.warning("dream.resumed", id=journal.get("id"), finished=len(written))
        vetoed = {diary_link(p) for p in self._run.vetoed}
        lines = [str(x) for x in journal.get("lines", [])
                 if not any(str(x).startswith(f"Archived {v}") or f"{v} superseded" in str(x)
                            for v in vetoed)]
        lines += [f"Left {v} as it is: it was pinned or changed after the interrupted dream "
                  "planned to archive it" for v in sorted(vetoed)]
        return lines, len(written)

    # ------------------------------------------------------------------ MEMORY.md, diary

    def _index_text(self, records: Mapping[str, MemoryRecord]) -> tuple[bytes, list[IndexEntry]]:
        entries = index_entries(self.memory_folder, ((r.path, r.as_json()) for r in {
            **self._run.left_alone, **records}.values()), self._clock().date())
        return self.memory_index.render(entries), entries

    def _rebuild_index(self, records: Mapping[str, MemoryRecord]) -> tuple[str, bool]:
        """:meth:`MemoryIndexKeeper.rebuild` of every memory file (``records`` and those left
        alone, as ``check`` builds it): a summary line, whether the file changed."""
        records, today = {**self._run.left_alone, **records}, self._clock().date()
        inputs = index_fingerprint(((r.path, r.hash) for r in records.values()), today)
        last = read_json_object(self.state_dir / LAST_FILE).get("memory_index")
        summary, changed, built = self.memory_index.rebuild(
            lambda: self._index_text(records)[1], inputs, any_memories=bool(records),
            last=last if isinstance(last, dict) else None)
        if built is not None:
            self._run.index_built = built
        return summary, changed

    def _write_diary(self, dream_id: str, counts: Mapping[str, int], lines: Sequence[str],
                     index_summary: str | None) -> bool:
        """Append one entry to ``DREAMS.md`` (:func:`daemon.dream_edits.diary_entry`); never
        through a link (it would land in another note)."""
        if (self.root / self.diary_path).is_symlink():
            log.warning("dream.diary_is_a_link", path=self.diary_path)
            return False
        current = self.writer.read(self.diary_path)
        data = diary_entry(current, dream_id, counts, lines, index_summary,
                           self._clock().astimezone(UTC))
        if data is None:
            return False
        self.writer.write(self.diary_path, data, base=current, origin="dream",
                          change="dream diary entry")
        return True

    # ------------------------------------------------------------------ restore

    def restore(self, stored_path: str) -> TakenBack | None:  # :meth:`Restorer.restore`
        return self.restorer.restore(stored_path)

def _llm_phases(runner: DreamRunner, records: dict[str, MemoryRecord], dream_id: str,
                plan: DreamPlan, lines: list[str]) -> list[str]:
    """The deep phase and replay (while ``llm`` is on), the profile (while its role is on),
    light, REM and deep sleep over the diary, then the re-check of memories derived from a
    changed source (:mod:`daemon.dream_recheck`; re-derived while ``llm`` is on): the paths
    written. Replay is skipped when
    the deep phase found the endpoint failing."""
    written: list[str] = []
    if runner.llm is not None:
        deep = runner._deep_phase()
        written += deep.run(records, dream_id, plan, lines)
        if runner._remember is not None and not deep.failed:
            written += TranscriptReplay(
                llm=runner.llm, remember=runner._remember, transcripts=runner.policy.transcripts,
                state_dir=runner.state_dir, sessions_per_dream=runner.policy.replay_sessions,
            ).run(deep.extracted, lines)
    profile = runner._roles.profile
    if profile is not None:
        fresh = runner._refresh(records, written) if written else records
        written += profile.run(fresh, runner._clock(), lines)
    if runner.sleep is not None:  # light, REM and deep sleep
        written += sleep_night(runner.sleep, runner.writer, runner.diary_path, dream_id,
                               runner.llm)
    # last: it reads what the phases before wrote (a profile distilled again, a synthesis)
    runner._run.recheck = _derived_recheck(runner).run(lines)
    written += [p for p in runner._run.recheck.edits if p not in written]
    return written


def _consolidation(memories: Sequence[DreamMemory], settle: Settle | None
                  ) -> list[Consolidation]:
    """:func:`mergeable` of :func:`plan_consolidation`, with the collector held off while
    thousands of claims are read and kept (:mod:`magma.gc_pause`)."""
    with collector_paused():
        return mergeable(plan_consolidation(memories, settle=settle))


def _changing(actions: Sequence[Consolidation], edits: Mapping[str, Any]
              ) -> list[Consolidation]:
    """``actions`` without the links that change no file (a pair linked already, or one
    the user settled as two facts: :func:`daemon.dream_edits.step_edits`)."""
    return [a for a in actions if not isinstance(a, LinkPossible)
            or a.old_path in edits or a.new_path in edits]


def _consolidation_counts(actions: Sequence[Consolidation]) -> dict[str, int]:
    """How many duplicates the plan merges, memories it supersedes and pairs it links."""
    return {"merged": sum(1 for a in actions if isinstance(a, MergeDuplicate)),
            "superseded": sum(1 for a in actions if isinstance(a, SupersedeOld)),
            "linked": sum(1 for a in actions if isinstance(a, LinkPossible))}


def _rechecked(runner: DreamRunner, records: Mapping[str, MemoryRecord],
               bodies: dict[str, str], consolidate: bool) -> DreamPlan:
    """The dream's plan of ``records`` with what the derived re-check would do after it (a
    dream's last phase, :func:`_llm_phases`), read on the memories as the plan leaves them."""
    plan = runner._plan(records, bodies, consolidate=consolidate, overlay={})
    if not consolidate:  # ``dreamd expire`` runs no re-check
        return plan
    return with_recheck(plan, _derived_recheck(runner).preview(
        {p: after for p, (_, after, _) in plan.edits.items()}), lines=True)


def with_recheck(plan: DreamPlan, recheck: RecheckPlan, *, lines: bool) -> DreamPlan:
    """``plan`` with what the derived re-check does after it (:class:`RecheckPlan`): its
    edits (a file both change: from the plan's bytes before to the re-check's after), its
    archives counted in ``archived``, ``changed_memories`` and ``share`` over all the edits,
    and (``lines``: a dry run's) its diary lines. The one sum behind a dry run's plan and a
    dream's report."""
    if not recheck.edits and not recheck.archived and not (lines and recheck.lines):
        return plan
    edits = dict(plan.edits)
    for path, (before, after, change) in recheck.edits.items():
        first = edits[path][0] if path in edits else before
        edits[path] = (first, after, edits[path][2] if path in edits else change)
    counts = {**plan.counts, "archived": plan.counts.get("archived", 0) + recheck.archived,
              "changed_memories": len(edits)}
    live = counts.get("live", 0)
    share = len(edits) / live if live else (1.0 if edits else 0.0)
    return replace(plan, edits=edits, counts=counts, share=share,
                   changes=plan.changes + (tuple(recheck.lines) if lines else ()))


def _derived_recheck(runner: DreamRunner) -> DerivedRecheck:
    return DerivedRecheck(writer=runner.writer, memory_folder=runner.memory_folder,
                          restorer=runner.restorer, clock=runner._clock, llm=runner.llm,
                          seen=runner._run.seen)


def _mtime(record: MemoryRecord) -> datetime:
    """The file's modification time: the last edit of a memory without ``updated`` (Claude
    Code's memory files carry no dates)."""
    return datetime.fromtimestamp(record.mtime_ns / 1e9, UTC)


def _body(data: bytes) -> bytes:
    """The bytes after the frontmatter block (all of ``data`` when it has none)."""
    if not data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
        return data
    parts = re.split(rb"^---[ \t]*\r?$", data, maxsplit=2, flags=re.MULTILINE)
    return parts[2] if len(parts) == 3 else data


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def _step_paths(step: Step) -> str:
    """The memories a step names, as links."""
    match step:
        case MergeDuplicate(keeper_path=keeper, duplicate_path=dup):
            return f"{diary_link(keeper)} and {diary_link(dup)}"
        case SupersedeOld(old_path=old, new_path=new) | LinkPossible(old_path=old, new_path=new):
            return f"{diary_link(old)} and {diary_link(new)}"
        case Synthesise(sources=sources):
            return ", ".join(diary_link(p) for p in sources)
        case _:
            return diary_link(step.path)


def _change_kind(step: Step) -> str:
    return {MergeDuplicate: "dream: merged a duplicate", SupersedeOld: "dream: superseded",
            LinkPossible: "dream: linked a possible pair",
            Archive: "dream: archived", MarkBroken: "dream: link check",
            Promote: "dream: promoted",
            Demote: "dream: demoted", Synthesise: "dream: synthesised"}[type(step)]




