"""The dream's distilled profile: with the ``llm.profile`` role configured, one short pinned
``user`` memory made from the user's ``user`` memories (:mod:`consistency.profile`).

Per dream, at most one question (:data:`PROFILE_MAX_CALLS`), and only when the sources
changed since the last profile (their paths and file hashes, kept in ``<state>/profile.json``).
The answer is checked sentence by sentence against the sources it cites; a draft that says
anything no source says, is unreadable, or is not a memory ``remember`` would take is
rejected and the profile stays as it was. A failing endpoint changes nothing either. The
diary says what happened in every case.

A profile the user edited by hand (its body is not one the dream wrote) is never overwritten:
the new draft goes beside it as a conflict copy (:meth:`ccb.writer.NoteWriter.write_conflict_copy`,
syncthing's ``<name>.conflict-<stamp>.md``), which the user settles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import structlog
from ulid import ULID

from ccb.atomic import read_json_object, write_json_atomic
from ccb.frontmatter_edit import replace_body, set_properties
from ccb.memory_file import NewMemory, memory_path, render_memory
from ccb.memory_text import checked_memory_text
from ccb.parse import parse_note
from ccb.writer import NoteWriter
from config.errors import DreamdError, LlmError, MemoryTextError
from config.settings import MEMORY_MAX_CHARS, Settings
from consistency.profile import (
    MAX_SOURCES,
    MIN_SOURCES,
    PROFILE_NAME,
    PROFILE_SUBJECT,
    ProfileSentence,
    ProfileSource,
    parse_profile,
    profile_body,
    profile_prompt,
    sources_hash,
    unsupported_facts,
)
from daemon.dream_deep import diary_link
from daemon.dream_records import MemoryRecord, read_body
from daemon.llm import ChatClient

__all__ = ["PROFILE_MAX_CALLS", "PROFILE_STATE_FILE", "ProfileDistiller", "is_profile",
           "profile_distiller"]

log = structlog.get_logger("dreamd.dream")

#: Questions the profile asks per dream (dreamd's choice: one distillation, no retry; a
#: rejected draft waits for the next change of its sources).
PROFILE_MAX_CALLS = 1
#: The profile's record in the state folder: its path, the hash of the sources it was made
#: from, and the hashes of the bodies the dream wrote (anything else is a hand edit).
PROFILE_STATE_FILE = "profile.json"
_BODIES_KEPT = 2
_DESCRIPTION = "The user's preferences and habits, distilled by the dream from their memories"


def is_profile(record: MemoryRecord) -> bool:
    """Whether ``record`` is the distilled profile (a ``user`` memory with its subject)."""
    return record.type == "user" and record.subject == PROFILE_SUBJECT


def _body_hash(data: bytes, path: str) -> str:
    return hashlib.sha256(parse_note(path, data).body.strip().encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class _Draft:
    """A checked draft: the profile's body and the sources' hash it was made from."""

    body: str
    sources: str
    source_count: int


class ProfileDistiller:
    """Distils the profile in a dream (module docstring). ``max_memory_chars`` bounds the
    profile as ``remember`` bounds a memory (``memory.max_chars``)."""

    def __init__(self, *, llm: ChatClient, writer: NoteWriter, memory_folder: str,
                 state_dir: Path, max_memory_chars: int = MEMORY_MAX_CHARS) -> None:
        self.llm = llm
        self.writer = writer
        self.memory_folder = memory_folder.strip("/")
        self.state_path = state_dir / PROFILE_STATE_FILE
        self.max_memory_chars = max_memory_chars
        self.calls = 0  # questions asked in the dream under way

    def run(self, records: Mapping[str, MemoryRecord], now: datetime,
            lines: list[str]) -> list[str]:
        """Distil the profile from ``records`` (the dream's, after its own writes) at ``now``;
        diary lines go to ``lines``. Returns the paths written (the profile or its conflict
        copy). Never raises for the endpoint or the model's answer; a write that fails is
        logged and the profile stays as it was."""
        self.calls = 0
        state = read_json_object(self.state_path)
        sources = self._sources(records, now.date())
        if len(sources) < MIN_SOURCES:
            return []
        digest = sources_hash(sources)
        if state.get("sources") == digest:
            return []
        draft = self._draft(sources, digest, lines)
        if draft is None:
            return []
        try:
            return self._write(draft, state, records, now, lines)
        except DreamdError as error:
            log.warning("dream.profile_not_written", error=str(error))
            lines.append(f"Kept the profile as it was: {error}")
            return []

    def _sources(self, records: Mapping[str, MemoryRecord], today: date
                 ) -> list[ProfileSource]:
        """The live ``user`` memories without an owner (the vault owner's, which every
        owner sees: the profile carries no owner either, so it never shows one owner's
        memories to another), newest first, at most :data:`MAX_SOURCES`."""
        live = [r for r in records.values() if r.type == "user" and not r.owner
                and not is_profile(r) and not r.hidden(today)]
        live.sort(key=lambda r: (r.updated or r.created or "", r.path), reverse=True)
        bodies: dict[str, str] = {}
        root = self.writer.root
        return [ProfileSource(r.path, r.name, read_body(root, r.path, bodies), r.hash)
                for r in live[:MAX_SOURCES]]

    def _draft(self, sources: list[ProfileSource], digest: str, lines: list[str]
               ) -> _Draft | None:
        """One question and its checks; ``None`` (with a diary line) when it failed."""
        if self.calls >= PROFILE_MAX_CALLS:
            return None
        self.calls += 1
        try:
            sentences = parse_profile(self.llm.chat(profile_prompt(sources)), len(sources))
        except LlmError as error:
            log.warning("dream.profile_failed", error=str(error))
            lines.append(f"Did not distil the profile: {error}")
            return None
        except ValueError as error:
            lines.append(f"Rejected a profile draft: {error}")
            return None
        refused = self._refused(sentences, sources)
        if refused:
            lines.append(f"Rejected a profile draft: {refused}")
            return None
        links = [diary_link(s.path) for s in sources]
        return _Draft(profile_body(sentences, links), digest, len(sources))

    def _refused(self, sentences: list[ProfileSentence], sources: list[ProfileSource]
                 ) -> str | None:
        for sentence in sentences:
            unsupported = unsupported_facts(sentence, sources)
            if unsupported:
                return (f"{sentence.text!r} says "
                        + ", ".join(f"`{fact}`" for fact in unsupported[:8])
                        + ", which the memories it cites do not")
        try:
            checked_memory_text(" ".join(s.text for s in sentences),
                                max_chars=self.max_memory_chars, where="the profile")
        except MemoryTextError as error:
            return str(error)
        return None

    def _path(self, state: Mapping[str, object], records: Mapping[str, MemoryRecord]) -> str:
        """The profile's path: the recorded one, else a profile found among the memories,
        else a free name in the memory folder."""
        recorded = state.get("path")
        if isinstance(recorded, str) and recorded:
            return recorded
        found = sorted(r.path for r in records.values() if is_profile(r))
        if found:
            return found[0]
        folder = self.writer.root / self.memory_folder
        existing = [p.relative_to(self.writer.root).as_posix() for p in folder.iterdir()] \
            if folder.is_dir() else []
        return memory_path(existing, self.memory_folder, PROFILE_NAME)

    def _write(self, draft: _Draft, state: Mapping[str, object],
               records: Mapping[str, MemoryRecord], now: datetime,
               lines: list[str]) -> list[str]:
        path = self._path(state, records)
        current = self.writer.read(path)
        kept = state.get("bodies")
        written_bodies = [b for b in kept if isinstance(b, str)] if isinstance(kept, list) else []
        link = diary_link(path)
        if current is not None and _body_hash(current, path) not in written_bodies:
            copy = self.writer.write_conflict_copy(path, self._render(draft, None, now, path))
            self._save(path, draft.sources, written_bodies)
            lines.append(f"The profile {link} was edited by hand: the new draft is beside it "
                         f"as {diary_link(copy)}")
            return [copy]
        if current is not None and parse_note(path, current).body == draft.body:
            self._save(path, draft.sources, written_bodies)  # the same profile: no new version
            return []
        data = self._render(draft, current, now, path)
        bodies = [_body_hash(data, path), *written_bodies][:_BODIES_KEPT]
        self._save(path, None, bodies)  # before the write: a crash never reads as a hand edit
        outcome = self.writer.write(path, data, base=current, origin="dream",
                                    change="dream: profile distilled")
        self._save(path, draft.sources, bodies)
        lines.append(f"Distilled the profile {link} from {draft.source_count} user memories"
                     + ("" if current is None else " (its sources changed)"))
        if outcome.conflict_path:
            lines.append(f"{link} changed meanwhile: the dream's version is beside it as "
                         f"{diary_link(outcome.conflict_path)}")
        return [path]

    def _render(self, draft: _Draft, current: bytes | None, now: datetime, path: str) -> bytes:
        """The profile file: a new memory, or ``current`` with its body replaced and
        ``updated``/``version`` moved on (every other property as the file has it)."""
        if current is None:
            return render_memory(NewMemory(
                name=PROFILE_NAME, description=_DESCRIPTION, type="user", id=str(ULID()),
                created=now, updated=now, body=draft.body, subject=PROFILE_SUBJECT,
                valid_from=now.date(), pinned=True, source="dream"))
        note = parse_note(path, current)
        version = note.memory.version if note.memory and note.memory.version else 1
        edited = set_properties(current, {"updated": now, "version": version + 1}, path=path)
        return replace_body(edited, draft.body)

    def _save(self, path: str, sources: str | None, bodies: list[str]) -> None:
        state = read_json_object(self.state_path)
        write_json_atomic(self.state_path, {
            "path": path, "sources": sources if sources is not None else state.get("sources"),
            "bodies": bodies})



def profile_distiller(settings: Settings, writer: NoteWriter, state_dir: Path
                      ) -> ProfileDistiller | None:
    """The distiller of the ``llm.profile`` role, ``None`` while the role is off."""
    role = settings.llm.profile
    if not role.enabled or not role.model:
        return None
    return ProfileDistiller(
        llm=ChatClient(role.base_url, role.model, timeout_s=role.timeout_s), writer=writer,
        memory_folder=settings.vault.memory_folder, state_dir=state_dir,
        max_memory_chars=settings.memory.max_chars)
