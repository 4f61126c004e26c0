"""The dream's deep phase: what it does with an LLM role configured (``[llm]``).

Three jobs, each answer checked before anything is written (:mod:`consistency.synthesis`):

- **synthesise** clusters of related memories into one (the members are superseded, never
  deleted; a synthesis that drops a fact of a member is rejected);
- **refine** new or changed memories an assistant or a dream wrote into What / Why / How to
  apply (a user's own words are left as they are);
- **extract** facts from assistant transcripts written since the last dream, through the write
  path (secrets refused, duplicates and contradictions decided there).

Any failure of the endpoint ends the phase with a diary line; the dream goes on without it.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import structlog
from ulid import ULID

from ccb.dates import as_written
from ccb.frontmatter_edit import replace_body, set_properties
from ccb.memory_file import NewMemory, memory_path, render_memory
from ccb.memory_text import checked_memory_text
from ccb.parse import parse_note
from ccb.writer import NoteWriter
from config.errors import DreamdError, LlmError, MemoryTextError
from config.settings import MEMORY_MAX_CHARS
from consistency.lifecycle import RecallStats
from consistency.synthesis import (
    Candidate,
    ExtractedFact,
    dropped_facts,
    extraction_prompt,
    parse_extraction,
    parse_synthesis,
    pick_clusters,
    refine_prompt,
    synthesis_prompt,
)
from daemon.dream_records import read_body
from daemon.llm import ChatClient

if TYPE_CHECKING:
    from daemon.dream import DreamPlan
    from daemon.dream_records import MemoryRecord

__all__ = ["EXTRACT_MAX_CHARS", "EXTRACT_MAX_FILES", "REFINE_MAX", "DeepPhase", "Synthesise",
           "diary_link", "keep_facts", "transcript_text", "transcripts_since"]

log = structlog.get_logger("dreamd.dream")

#: Most memories the Refiner restates per dream (dreamd's choice: one LLM call each).
REFINE_MAX = 8
#: Most transcripts the Extractor reads per dream, and the characters read from the end of
#: each (dreamd's choice: a long session's tail fits a small local model's context).
EXTRACT_MAX_FILES = 5
EXTRACT_MAX_CHARS = 20_000
_WHY_RE = re.compile(r"^\W*\**\s*why\b", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Synthesise:
    """The deep phase's accepted synthesis: write ``data`` (a whole memory file) as the new
    memory ``new_path`` and archive ``sources`` into it. Kept in the journal, so a dream killed
    between the two writes finishes it without asking the model again."""

    new_path: str
    data: str
    sources: tuple[str, ...]


def diary_link(path: str) -> str:
    """``[[stem]]``: Obsidian resolves a link by file name. A name Obsidian cannot put in a
    wikilink (``| # ^ [ ]``) gets a markdown link to the file instead."""
    stem = Path(path).stem
    if _UNLINKABLE.search(stem):
        return f"[{stem}](<{Path(path).name}>)"
    return f"[[{stem}]]"


_UNLINKABLE = re.compile(r"[|#^\[\]]")


class DeepPhase:
    """The deep phase of one vault's dreams (module docstring).

    ``recall_stats()`` gives MAGMA's recall statistics by memory id; ``remember(fact)`` keeps
    an extracted fact through the write path (``(path, action)``); ``last_dream()`` is when
    the last dream ended; ``apply_step(dream_id, plan, lines, step)`` journals a synthesis and
    writes it (the runner's crash-safe apply), returning the paths written. A synthesis or a
    refinement is held to what ``remember`` takes (:mod:`ccb.memory_text`, at most
    ``max_memory_chars``: ``memory.max_chars``).
    """

    def __init__(
        self, *, llm: ChatClient, writer: NoteWriter, memory_folder: str,
        clock: Callable[[], datetime],
        recall_stats: Callable[[], Mapping[str, RecallStats]],
        remember: Callable[[ExtractedFact], tuple[str, str]] | None, transcripts: str,
        last_dream: Callable[[], datetime | None],
        apply_step: Callable[[str, DreamPlan, list[str], Synthesise], list[str]],
        max_memory_chars: int = MEMORY_MAX_CHARS,
    ) -> None:
        self.max_memory_chars = max_memory_chars
        self.llm = llm
        self.writer = writer
        self.root = writer.root
        self.memory_folder = memory_folder.strip("/")
        self._clock = clock
        self._recall_stats = recall_stats
        self._remember = remember
        self.transcripts = transcripts
        self._last_dream = last_dream
        self._apply_step = apply_step
        self.failed = False  # the endpoint failed: the phase stopped
        self.extracted: list[Path] = []  # transcripts the model answered about

    def run(self, records: Mapping[str, MemoryRecord], dream_id: str, plan: DreamPlan,
              lines: list[str]) -> list[str]:
        """The LLM phase: synthesise clusters, refine assistant-written memories, extract
        facts from transcripts. Each answer is checked; any failure of the endpoint ends the
        phase with a diary line and the dream goes on without it. Returns paths written."""
        assert self.llm is not None
        written: list[str] = []
        try:
            written += self._synthesise(records, dream_id, plan, lines)
            written += self._refine(records, lines)
            written += self._extract(lines)
        except LlmError as error:
            log.warning("dream.llm_failed", error=str(error))
            lines.append(f"Deep phase stopped: {error}")
            self.failed = True
        return written

    def _candidates(self, records: Mapping[str, MemoryRecord], today: date) -> list[Candidate]:
        stats = self._recall_stats()
        out = []
        for r in sorted(records.values(), key=lambda r: r.path):
            if r.hidden(today) or r.type == "user" or r.rule:
                continue
            out.append(Candidate(
                id=r.id, path=r.path, type=r.type, name=r.name, subject=r.subject,
                owner=r.owner, body="", updated=as_written(r.updated) or _mtime(r),
                recalls=stats.get(r.id, RecallStats()).count, resident=r.resident,
                pinned=r.pinned))
        return out

    def _synthesise(self, records: Mapping[str, MemoryRecord], dream_id: str, plan: DreamPlan,
                    lines: list[str]) -> list[str]:
        assert self.llm is not None
        now = self._clock()
        clusters = pick_clusters(self._candidates(records, now.date()), now)
        written: list[str] = []
        for cluster in clusters:
            bodies: dict[str, str] = {}
            members = tuple(replace(m, body=read_body(self.root, m.path, bodies))
                            for m in cluster.members)
            cluster = replace(cluster, members=members)
            links = ", ".join(diary_link(m.path) for m in members)
            try:
                synthesis = parse_synthesis(self.llm.chat(synthesis_prompt(cluster)))
            except ValueError as error:
                lines.append(f"Rejected a synthesis of {links}: {error}")
                continue
            dropped = dropped_facts([f"{m.name}\n{m.body}" for m in members],
                                    f"{synthesis.name}\n{synthesis.description}\n"
                                    f"{synthesis.body}")
            if dropped:
                lines.append(f"Rejected a synthesis of {links}: it dropped "
                             + ", ".join(f"`{d}`" for d in dropped[:8]))
                continue
            refused = self._refused(synthesis.body)
            if refused:
                lines.append(f"Rejected a synthesis of {links}: {refused}")
                continue
            folder = self.root / self.memory_folder
            existing = [p.relative_to(self.root).as_posix() for p in folder.iterdir()]
            new_path = memory_path(existing, self.memory_folder, synthesis.name)
            subjects = {m.subject for m in members if m.subject}
            data = render_memory(NewMemory(
                name=synthesis.name, description=synthesis.description, type=cluster.type,
                id=str(ULID()), created=now, updated=now, body=synthesis.body + "\n",
                subject=subjects.pop() if len(subjects) == 1 else None,
                valid_from=now.date(), supersedes=tuple(Path(m.path).stem for m in members),
                source="dream", owner=members[0].owner,
                derived_from=tuple(Path(m.path).stem for m in members)))
            step = Synthesise(new_path, data.decode("utf-8"), tuple(m.path for m in members))
            lines.append(f"Synthesised {links} into {diary_link(new_path)}")
            written += self._apply_step(dream_id, plan, lines, step)
        return written

    def _refine(self, records: Mapping[str, MemoryRecord], lines: list[str]) -> list[str]:
        """Restate new or changed memories an assistant or a dream wrote as What / Why / How
        to apply (a user's own words are left as they are)."""
        assert self.llm is not None
        written: list[str] = []
        today = self._clock().date()
        picked = [r for r in sorted(records.values(), key=lambda r: r.path)
                  if r.changed and not r.hidden(today) and r.type in {"feedback", "project"}]
        for record in picked[:REFINE_MAX]:
            data = self.writer.read(record.path)
            if data is None:
                continue
            note = parse_note(record.path, data)
            source = str(note.properties.get("source") or "").casefold()
            if source not in {"assistant", "dream"} or _WHY_RE.search(note.body):
                continue
            created = as_written(record.created)
            try:
                refined = parse_synthesis(self.llm.chat(refine_prompt(
                    record.name, note.body,
                    created.date() if isinstance(created, datetime) else created)))
            except ValueError as error:
                lines.append(f"Kept {diary_link(record.path)} as it was: the refinement was "
                             f"unreadable ({error})")
                continue
            dropped = dropped_facts([note.body], refined.body)
            if dropped:
                lines.append(f"Kept {diary_link(record.path)} as it was: the refinement dropped "
                             + ", ".join(f"`{d}`" for d in dropped[:8]))
                continue
            refused = self._refused(refined.body)
            if refused:
                lines.append(f"Kept {diary_link(record.path)} as it was: {refused}")
                continue
            version = note.memory.version if note.memory else None
            edited = set_properties(data, {"updated": self._clock(),
                                           "version": (version or 1) + 1}, path=record.path)
            self.writer.write(record.path, replace_body(edited, refined.body.rstrip() + "\n"),
                              base=data, origin="dream", change="dream: refined")
            written.append(record.path)
            lines.append(f"Refined {diary_link(record.path)} into What / Why / How to apply")
        return written

    def _refused(self, body: str) -> str | None:
        """Why the model's text may not be a memory's (too long, no words…), else ``None``."""
        try:
            checked_memory_text(body, max_chars=self.max_memory_chars, where="the model's text")
        except MemoryTextError as error:
            return str(error)
        return None

    def _extract(self, lines: list[str]) -> list[str]:
        """Facts from assistant transcripts written since the last dream, kept through the
        write path (secrets refused, duplicates and contradictions decided there)."""
        assert self.llm is not None
        if self._remember is None or not self.transcripts.strip():
            return []
        since = self._last_dream()
        written: list[str] = []
        for transcript in transcripts_since(self.transcripts, since)[:EXTRACT_MAX_FILES]:
            text = transcript_text(transcript)
            if not text:
                continue
            try:
                facts = parse_extraction(self.llm.chat(extraction_prompt(text)))
            except ValueError as error:
                self.extracted.append(transcript)
                lines.append(f"Read nothing from transcript {transcript.name}: {error}")
                continue
            self.extracted.append(transcript)
            written += keep_facts(self._remember, facts, transcript.name, "Extracted", lines)
        return written


def _mtime(record: MemoryRecord) -> datetime:
    """The file's modification time: the last edit of a memory without ``updated``."""
    return datetime.fromtimestamp(record.mtime_ns / 1e9, UTC)


def transcripts_since(pattern: str, since: datetime | None) -> list[Path]:
    """Transcript files matching ``pattern`` written after ``since``, oldest first."""
    full = Path(pattern).expanduser()
    base = Path(full.anchor) if full.is_absolute() else Path()
    cutoff = since.timestamp() if since is not None else float("-inf")
    found = []
    for path in base.glob(str(full.relative_to(base) if full.is_absolute() else full)):
        try:
            status = path.stat()
        except OSError:
            continue
        mtime = status.st_mtime
        if not stat.S_ISREG(status.st_mode):
            continue  # a folder, a pipe or a device: reading one would block or fail
        if mtime > cutoff:
            found.append((mtime, path))
    return [path for _, path in sorted(found)]


def keep_facts(remember: Callable[[ExtractedFact], tuple[str, str]],
               facts: list[ExtractedFact], transcript: str, verb: str,
               lines: list[str]) -> list[str]:
    """Keep ``facts`` of the transcript named ``transcript`` through ``remember`` (the write
    path: secrets refused, duplicates and contradictions decided there); a diary line per
    fact kept (``"<verb> [[memory]] from transcript <name> (<action>)"``) or refused. Returns
    the paths written."""
    written: list[str] = []
    for fact in facts:
        try:
            path, action = remember(fact)
        except DreamdError as error:  # a secret, an unwritable file: say so, go on
            lines.append(f"Did not keep a fact from {transcript}: {error}")
            continue
        if action != "duplicate":
            written.append(path)
            lines.append(f"{verb} {diary_link(path)} from transcript {transcript} ({action})")
    return written


def transcript_text(path: Path) -> str:
    """The user's and the assistant's words in a Claude Code transcript (JSON lines with
    ``message: {role, content}``), the last :data:`EXTRACT_MAX_CHARS` characters."""
    parts: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") not in {"user", "assistant"}:
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(c.get("text", "") for c in content
                                if isinstance(c, dict) and c.get("type") == "text")
        if isinstance(content, str) and content.strip():
            parts.append(f"{message['role']}: {content.strip()}")
    return "\n\n".join(parts)[-EXTRACT_MAX_CHARS:]
