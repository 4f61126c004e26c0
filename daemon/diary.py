"""The diary: lines appended to today's daily note, the raw layer of long-term memory.

Most of what an assistant hears is not worth a memory, and it cannot tell which part on the
day it hears it. So it writes a rough diary — ``dreamd note``, MCP ``memory_note``, and
``dreamd flush`` for what the user said in a session — and the dream decides later what
graduates (issue 21). A line goes to the vault's daily note of the user's day (``time.zone``),
where Obsidian's Daily notes settings put it (:mod:`ccb.daily_notes`), under a ``## heading``
(:mod:`ccb.diary`), through the vault's one writer (:class:`ccb.writer.NoteWriter`): read and
written under the writer lock, so two appends never lose one another, and an edit the user
makes meanwhile is merged, never overwritten. Append only: the note's bytes before and after
the new line are kept as they are. A missing note is made from the Daily notes template.
Credentials are refused as ``remember`` refuses them (:mod:`consistency.secrets`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import structlog

from ccb.daily_notes import (
    DailyNoteSettings,
    daily_note_path,
    render_template,
    template_path,
)
from ccb.diary import (
    DEFAULT_SECTION,
    DiaryEntry,
    append_entry,
    one_line,
    parse_entry,
    render_entry,
)
from ccb.memory_text import checked_memory_text
from ccb.writer import NoteWriter, WriteStatus
from config.errors import EmptyMemoryError
from consistency.secrets import refuse_secrets

__all__ = ["Diary", "NoteResult", "section_name"]

log = structlog.get_logger("dreamd.diary")


@dataclass(frozen=True, slots=True)
class NoteResult:
    """What an append did: the daily note's vault ``path`` and ``day``, the ``section``,
    the 1-based file ``lines`` of the new entries (empty when every one was there already),
    whether the note was ``created``, the writer's ``status`` and, when an edit made
    meanwhile could not be merged, the ``conflict_path`` holding ours."""

    path: str
    day: date
    section: str
    lines: tuple[int, ...]
    created: bool
    status: WriteStatus
    conflict_path: str | None = None


def section_name(text: str | None) -> str:
    """The heading a caller named (``"Notes"``, ``"## Notes"``) without its ``#`` marks, or
    :data:`ccb.diary.DEFAULT_SECTION`. Raises ``EmptyMemoryError`` for a heading of no
    words."""
    if text is None:
        return DEFAULT_SECTION
    name = one_line(text).lstrip("#").strip()
    if not name:
        raise EmptyMemoryError("note --section: the heading is empty; name one "
                               f"(default {DEFAULT_SECTION!r})")
    return name


class Diary:
    """Appends to the vault's daily notes (module docstring).

    ``settings`` are the vault's Daily notes settings; ``clock()`` is now in the user's time
    zone (its date is "today"); ``max_chars`` bounds one line (``memory.max_chars``);
    ``index(paths)``, when given, indexes the note after a write (the daemon's resident
    index; elsewhere the watcher or the next sync does)."""

    def __init__(self, *, writer: NoteWriter, settings: DailyNoteSettings,
                 clock: Callable[[], datetime], max_chars: int,
                 index: Callable[[Collection[str]], object] | None = None) -> None:
        self.writer = writer
        self.settings = settings
        self._clock = clock
        self.max_chars = max_chars
        self._index = index

    def today_path(self) -> str:
        """The vault path of today's daily note (it may not exist yet)."""
        return daily_note_path(self.settings, self._clock())

    def note(self, text: str, *, section: str = DEFAULT_SECTION,
             source: str | None = None) -> NoteResult:
        """Append ``text`` (made one line) to today's note under ``## section``, stamped
        with the local time.

        Raises, with nothing written: ``MemoryTextError`` (empty, wordless, longer than
        ``max_chars``, not UTF-8), ``SecretRefusedError`` when it carries a credential;
        ``VaultNotWritableError``, ``LockError`` (the writer lock held past its timeout)."""
        body = checked_memory_text(text, max_chars=self.max_chars, where="note")
        refuse_secrets(body, where=f"note {self.today_path()}")
        return self.append([body], section=section, source=source)

    def append(self, texts: Sequence[str], *, section: str = DEFAULT_SECTION,
               source: str | None = None, skip_present: bool = False) -> NoteResult:
        """Append each of ``texts`` (already checked) as one entry of today's note under
        ``## section``, in one write. ``skip_present``: leave out a text the note already
        holds (a flush run again after a crash). Raises like :meth:`note`'s writes."""
        now = self._clock()
        rel = daily_note_path(self.settings, now)
        with self.writer.batch():  # read and write under the writer lock
            current = self.writer.read(rel)
            data = current if current is not None else self._new_note(rel, now)
            # the entries the note holds, whole: a hand-written line that only contains a
            # statement ("Always use pnpm for the docs site only? not sure") is not it
            present = {entry.text for line in data.decode("utf-8", "replace").splitlines()
                       if (entry := parse_entry(line)) is not None}
            lines: list[int] = []
            for text in texts:
                if skip_present and one_line(text) in present:
                    continue
                appended = append_entry(data, section, render_entry(
                    DiaryEntry(text=text, at=now.time(), source=source)))
                data = appended.data
                lines.append(appended.line)
                present.add(one_line(text))
            if not lines:
                return NoteResult(rel, now.date(), section, (), False, "unchanged")
            outcome = self.writer.write(
                rel, data, base=current, origin="api",
                change=f"diary: {len(lines)} line(s) under ## {section}")
        log.info("diary.appended", path=rel, lines=len(lines), section=section,
                 source=source, status=outcome.status)
        if self._index is not None and outcome.status != "conflict":
            self._index([rel])
        return NoteResult(rel, now.date(), section, tuple(lines), current is None,
                          outcome.status, outcome.conflict_path)

    def _new_note(self, rel: str, now: datetime) -> bytes:
        """A new daily note: the template with its variables filled in, else empty."""
        template = template_path(self.settings)
        if template is None:
            return b""
        data = self.writer.read(template)
        if data is None:
            log.warning("diary.template_missing", template=template, note=rel)
            return b""
        title = rel.rsplit("/", 1)[-1].removesuffix(".md")
        text = render_template(data.decode("utf-8", "surrogateescape"), now, title=title,
                               date_format=self.settings.format)
        return text.encode("utf-8", "surrogateescape")
