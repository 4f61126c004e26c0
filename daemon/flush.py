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

With the Extractor configured (``llm.enabled``: the dream's LLM, which reads transcripts in the
deep phase and in replay), the Extractor chooses instead of the rules: one call per flush
(:func:`consistency.synthesis.extraction_prompt` over the user's and the assistant's words
past the cursor, the last :data:`daemon.dream_deep.EXTRACT_MAX_CHARS` characters of them; the
user's statements before those are chosen by the rules), each fact's text one line of the
note. The call is bounded (:func:`extractor`: at most half the hook's time), and on any
failure — the endpoint down or slow, a reply that is not the JSON asked for — the rules choose
and the report says why (:attr:`FlushReport.fallback`, the hook's one line on stderr).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from ccb.diary import one_line
from config.errors import HookInputError, LlmError
from consistency.secrets import find_secrets
from consistency.statements import Statement, standing_statements
from consistency.synthesis import extraction_prompt, parse_extraction
from daemon.diary import Diary, NoteResult
from daemon.llm import ChatClient

__all__ = [
    "CURSOR_FOLDER",
    "DEFAULT_FLUSH_SECTION",
    "EXTRACTOR_SHARE",
    "EXTRACT_MAX_CHARS",
    "MAX_READ_BYTES",
    "Extract",
    "FlushCursors",
    "FlushReport",
    "HookEvent",
    "UserStatement",
    "extractor",
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
#: Characters of the session the Extractor reads in one flush (the deep phase's bound,
#: :data:`daemon.dream_deep.EXTRACT_MAX_CHARS`, kept equal here: a flush does not import the
#: dream).
EXTRACT_MAX_CHARS = 20_000
#: Share of the hook's time the Extractor's one call may take (dreamd's choice: the other
#: half leaves the rules and the note's write time when the endpoint is slow, so a slow
#: model never turns into a flush that never finishes).
EXTRACTOR_SHARE = 0.5

#: ``extract(session text) -> statements``: the Extractor's one call. Raises ``LlmError``
#: (the endpoint) or ``ValueError`` (a reply that is not the JSON asked for).
Extract = Callable[[str], list[str]]


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


def _spoken_text(entry: object) -> str | None:
    """The user's typed text (:func:`_typed_text`) or the assistant's text blocks of one
    transcript entry, prefixed by the speaker (``user: …``), as the Extractor reads them."""
    typed = _typed_text(entry)
    if typed is not None:
        return f"user: {typed.strip()}"
    if not isinstance(entry, dict) or entry.get("type") != "assistant" \
            or entry.get("isSidechain"):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = "\n".join(block.get("text", "") for block in content
                            if isinstance(block, dict) and block.get("type") == "text"
                            and isinstance(block.get("text"), str))
    return f"assistant: {content.strip()}" if isinstance(content, str) and content.strip() \
        else None


def session_text(chunk: bytes, max_chars: int = EXTRACT_MAX_CHARS) -> tuple[str, int]:
    """The user's and the assistant's words in ``chunk`` (whole JSON lines), one turn per
    paragraph, the last turns that fit ``max_chars`` (a single last turn longer than that:
    its end), and the 1-based line of the first turn not read whole (``1`` when all are;
    past the last line when none is): the rules choose among the user's statements before
    it."""
    turns = list(_texts_of_lines(chunk, _spoken_text))
    kept: list[str] = []
    size = 0
    first = chunk.count(b"\n") + 2
    for number, text in reversed(turns):
        if size + len(text) + 2 > max_chars:
            if not kept:
                kept.append(text[-max_chars:])
            break
        kept.append(text)
        size += len(text) + 2
        first = number
    return "\n\n".join(reversed(kept)), first


def extractor(client: ChatClient, timeout_s: float) -> Extract:
    """The Extractor's one call of a flush through ``client`` (``llm``), given at most
    ``timeout_s`` seconds (the role's own ``timeout_s`` when shorter): the text of each fact
    it finds (:func:`consistency.synthesis.parse_extraction`), on one line."""
    bounded = replace(client, timeout_s=min(client.timeout_s, timeout_s))

    def extract(text: str) -> list[str]:
        facts = parse_extraction(bounded.chat(extraction_prompt(text)))
        return [one_line(fact.body) for fact in facts if one_line(fact.body)]

    return extract


def user_statements(chunk: bytes) -> Iterator[UserStatement]:
    """The user's statements in ``chunk`` (whole JSON lines of a transcript); a line that is
    not JSON is skipped."""
    for number, text in _texts_of_lines(chunk, _typed_text):
        for statement in standing_statements(text):
            yield UserStatement(statement, number)


def _texts_of_lines(chunk: bytes, read: Callable[[Any], str | None]
                    ) -> Iterator[tuple[int, str]]:
    """``(1-based line, text)`` of each JSON line of ``chunk`` that ``read`` finds a text in;
    a blank line or one that is not JSON is skipped."""
    for number, line in enumerate(chunk.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = read(json.loads(line))
        except (ValueError, RecursionError):
            continue
        if text is not None:
            yield number, text


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
    credential, the note written (``None`` when nothing was to write), the transcript
    offset read up to, who chose the statements (``by``: ``"rules"``, ``"extractor"``, or
    ``"extractor+rules"`` when the session past the cursor was longer than the Extractor
    reads) and, when the Extractor failed and the rules chose instead, why (``fallback``)."""

    found: int
    withheld: int
    note: NoteResult | None
    offset: int
    by: str = "rules"
    fallback: str | None = None

    @property
    def appended(self) -> int:
        return len(self.note.lines) if self.note is not None else 0


def _chosen(chunk: bytes, extract: Extract | None, max_chars: int
            ) -> tuple[list[str], str, str | None]:
    """The statements of ``chunk`` to note (each once, in order), who chose them and, when
    the Extractor failed, why the rules did."""
    def rules(before: int | None = None) -> list[str]:
        return [found.statement.text for found in user_statements(chunk)
                if before is None or found.line < before]

    if extract is None:
        return list(dict.fromkeys(rules())), "rules", None
    text, first = session_text(chunk)
    try:
        chosen = extract(text) if text else []
    except (LlmError, ValueError) as error:
        why = f"the Extractor failed ({error}); the rules chose the statements"
        log.info("flush.extractor_failed", error=str(error))  # (the report says it)
        return list(dict.fromkeys(rules())), "rules", why
    earlier = rules(first)
    said = [t for t in dict.fromkeys([*earlier, *chosen]) if len(t) <= max_chars]
    return said, "extractor+rules" if earlier else "extractor", None


def flush(event: HookEvent, diary: Diary, cursors: FlushCursors, *,
          section: str = DEFAULT_FLUSH_SECTION, extract: Extract | None = None
          ) -> FlushReport:
    """Append the user's rules, preferences and decisions said in ``event``'s transcript
    since the session's last flush to today's note under ``## section`` (module
    docstring), then move the session's cursor. With ``extract`` (:func:`extractor`), the
    Extractor chooses them; when it fails, the rules do (:attr:`FlushReport.fallback`).

    Raises ``HookInputError`` when the transcript cannot be read; the writes raise as
    :meth:`daemon.diary.Diary.append` does (the cursor stays: the next flush tries again)."""
    start = cursors.offset(event)
    try:
        chunk, end = _read_from(event.transcript_path, start)
    except OSError as error:
        raise HookInputError(f"flush: cannot read the transcript {event.transcript_path} "
                             f"({error.strerror or error})") from None
    said, by, fallback = _chosen(chunk, extract, diary.max_chars)
    texts = [text for text in said if not find_secrets(text)]  # (each text checked once)
    withheld = len(said) - len(texts)
    note = None
    if texts:
        source = f"session {event.session_id[:SOURCE_ID_CHARS]}"
        note = diary.append(texts, section=section, source=source, skip_present=True)
    cursors.keep(event, end, datetime.now(UTC))
    log.info("flush.done", session=event.session_id, hook=event.hook_event_name,
             found=len(said), withheld=withheld, by=by,
             appended=len(note.lines) if note else 0, offset=end, read_from=start)
    return FlushReport(len(said), withheld, note, end, by, fallback)
