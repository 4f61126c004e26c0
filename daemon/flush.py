"""``dreamd flush``: what the user said in a session goes to the diary before it is compacted.

Claude Code summarises a long session when its context fills (``PreCompact``) and forgets it
when it ends (``SessionEnd``). Both hooks send a JSON object on stdin — ``session_id``,
``transcript_path`` (the session's JSON-lines transcript), ``hook_event_name``, ``cwd`` — and
:func:`flush` reads the transcript from where the last flush of that session stopped, keeps
the user's own sentences that carry a rule, a preference or a decision
(:func:`consistency.statements.standing_statements`), and appends them to today's daily note
with the session as their source (:class:`daemon.diary.Diary`).

Idempotent per transcript position: a cursor per session in the state folder
(``flush-cursors/<key>.json``: the transcript's path and the byte offset read up to, a whole
line at a time) moves only after the note is written, and a sentence today's note already
holds is not added again, so a flush run twice, or killed and run again, adds nothing new.
A sentence that carries a credential is left out (:mod:`consistency.secrets`), never written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from config.errors import HookInputError
from consistency.secrets import find_secrets
from consistency.statements import Statement, standing_statements
from daemon.diary import Diary, NoteResult

__all__ = [
    "CURSOR_FOLDER",
    "DEFAULT_FLUSH_SECTION",
    "MAX_READ_BYTES",
    "FlushCursors",
    "FlushReport",
    "HookEvent",
    "UserStatement",
    "flush",
    "parse_hook_event",
    "user_statements",
]

log = structlog.get_logger("dreamd.flush")

#: The heading flushed sentences are written under (``## Sessions``).
DEFAULT_FLUSH_SECTION = "Sessions"
#: State-folder folder of the per-session cursors.
CURSOR_FOLDER = "flush-cursors"
#: Most transcript bytes one flush reads past its cursor (dreamd's choice: a day's session is
#: a few MB; what is left is read by the next flush, from where this one stopped).
MAX_READ_BYTES = 16 * 1024 * 1024
#: Characters of the session id named in a line's source (a Claude Code session id is a
#: UUID; its first 8 hex digits tell a day's sessions apart).
SOURCE_ID_CHARS = 8


@dataclass(frozen=True, slots=True)
class HookEvent:
    """The fields of a Claude Code hook's input that a flush reads."""

    session_id: str
    transcript_path: Path
    hook_event_name: str = ""
    cwd: str = ""


def parse_hook_event(raw: str) -> HookEvent:
    """The hook event in ``raw`` (stdin). ``session_id`` defaults to the transcript's file
    name (Claude Code names a transcript ``<session id>.jsonl``). Raises ``HookInputError``
    when it is not a JSON object with a ``transcript_path`` string."""
    if not raw.strip():
        raise HookInputError("flush: nothing on stdin; a PreCompact or SessionEnd hook sends "
                             "its event as JSON")
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise HookInputError(f"flush: stdin is not JSON ({error})") from None
    if not isinstance(event, dict):
        raise HookInputError("flush: stdin is not a JSON object (a hook sends one)")
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path.strip():
        raise HookInputError("flush: the hook's JSON has no transcript_path")
    transcript = Path(path).expanduser()
    session = event.get("session_id")
    name, cwd = event.get("hook_event_name"), event.get("cwd")
    return HookEvent(
        session_id=session if isinstance(session, str) and session.strip()
        else transcript.stem,
        transcript_path=transcript,
        hook_event_name=name if isinstance(name, str) else "",
        cwd=cwd if isinstance(cwd, str) else "",
    )


# --------------------------------------------------------------------------- the transcript

@dataclass(frozen=True, slots=True)
class UserStatement:
    """A statement of the user's, and the 1-based transcript line (counted from the
    flush's start offset) it was typed in."""

    statement: Statement
    line: int


def _typed_text(entry: object) -> str | None:
    """What the user typed in one transcript entry: a ``user`` message's text (a string,
    or its ``text`` blocks), never a tool result, a meta message the client added, a
    compaction summary or a sub-agent's prompt."""
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return None
    if entry.get("isMeta") or entry.get("isCompactSummary") or entry.get("isSidechain"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(block.get("text", "") for block in content
                            if isinstance(block, dict) and block.get("type") == "text"
                            and isinstance(block.get("text"), str))
    return content if isinstance(content, str) and content.strip() else None


def user_statements(chunk: bytes) -> Iterator[UserStatement]:
    """The user's statements in ``chunk`` (whole JSON lines of a transcript); a line that is
    not JSON is skipped."""
    for number, line in enumerate(chunk.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = _typed_text(json.loads(line))
        except (ValueError, RecursionError):
            continue
        if text is not None:
            for statement in standing_statements(text):
                yield UserStatement(statement, number)


def _read_from(path: Path, offset: int) -> tuple[bytes, int]:
    """The whole lines of ``path`` from byte ``offset`` (at most :data:`MAX_READ_BYTES`), and
    the offset after the last of them (a line still being written is left for later). A file
    shorter than ``offset`` was replaced: it is read from its start. A whole line longer than
    :data:`MAX_READ_BYTES` (a pasted dump, an image) is passed over, so the lines after it
    are read. Raises ``OSError``."""
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        if size < offset:
            offset = 0
        handle.seek(offset)
        data = handle.read(MAX_READ_BYTES)
        while len(data) == MAX_READ_BYTES and b"\n" not in data:
            skipped = _past_next_line_end(handle)
            if skipped is None:  # the long line is still being written
                return b"", offset
            offset = skipped
            handle.seek(offset)
            data = handle.read(MAX_READ_BYTES)
    end = data.rfind(b"\n")
    if end < 0:
        return b"", offset
    return data[:end + 1], offset + end + 1


def _past_next_line_end(handle: BinaryIO) -> int | None:
    """The offset just after the next ``\\n`` from ``handle``'s position, or None at EOF."""
    while block := handle.read(1024 * 1024):
        found = block.find(b"\n")
        if found >= 0:
            return handle.tell() - len(block) + found + 1
    return None


# --------------------------------------------------------------------------- cursors

class FlushCursors:
    """Where each session's last flush stopped: ``<state dir>/flush-cursors/<key>.json``
    holding ``{"session_id", "transcript", "offset", "at"}`` (one file per session: two
    sessions flushing at once never overwrite each other's)."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / CURSOR_FOLDER

    def _file(self, session_id: str) -> Path:
        key = hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        return self.folder / f"{key}.json"

    def offset(self, event: HookEvent) -> int:
        """The byte offset of ``event``'s transcript read so far (0: none, or another
        transcript than the one recorded)."""
        record = read_json_object(self._file(event.session_id))
        offset = record.get("offset")
        if record.get("transcript") != str(event.transcript_path) or not isinstance(offset, int):
            return 0
        return max(offset, 0)

    def keep(self, event: HookEvent, offset: int, now: datetime) -> None:
        """Record that ``event``'s transcript was read up to byte ``offset``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self._file(event.session_id), {
            "session_id": event.session_id, "transcript": str(event.transcript_path),
            "offset": offset, "at": now.astimezone(UTC).isoformat()})


# --------------------------------------------------------------------------- the flush

@dataclass(frozen=True, slots=True)
class FlushReport:
    """What a flush did: the statements found past the cursor, those ``withheld`` for a
    credential, the note written (``None`` when nothing was to write) and the transcript
    offset read up to."""

    found: int
    withheld: int
    note: NoteResult | None
    offset: int

    @property
    def appended(self) -> int:
        return len(self.note.lines) if self.note is not None else 0


def flush(event: HookEvent, diary: Diary, cursors: FlushCursors, *,
          section: str = DEFAULT_FLUSH_SECTION) -> FlushReport:
    """Append the user's rules, preferences and decisions said in ``event``'s transcript
    since the session's last flush to today's note under ``## section`` (module
    docstring), then move the session's cursor.

    Raises ``HookInputError`` when the transcript cannot be read; the writes raise as
    :meth:`daemon.diary.Diary.append` does (the cursor stays: the next flush tries again)."""
    start = cursors.offset(event)
    try:
        chunk, end = _read_from(event.transcript_path, start)
    except OSError as error:
        raise HookInputError(f"flush: cannot read the transcript {event.transcript_path} "
                             f"({error.strerror or error})") from None
    said = list(dict.fromkeys(found.statement.text for found in user_statements(chunk)))
    texts = [text for text in said if not find_secrets(text)]  # (each text checked once)
    withheld = len(said) - len(texts)
    note = None
    if texts:
        source = f"session {event.session_id[:SOURCE_ID_CHARS]}"
        note = diary.append(texts, section=section, source=source, skip_present=True)
    cursors.keep(event, end, datetime.now(UTC))
    log.info("flush.done", session=event.session_id, hook=event.hook_event_name,
             found=len(said), withheld=withheld,
             appended=len(note.lines) if note else 0, offset=end, read_from=start)
    return FlushReport(len(said), withheld, note, end)
