"""Replay: the dream catches up on Claude Code transcripts it never read.

The deep phase's Extractor reads the transcripts written since the last dream
(:mod:`daemon.dream_deep`); what was said before dreamd was set up, while memory was off, or
in more sessions than one dream reads, was never looked at. With the Extractor configured
(``llm.enabled``), each dream also reads up to ``dream.replay.sessions_per_dream`` (5) of those
older transcripts, newest first, and keeps their facts through ``remember``'s write path (the
same judgement: duplicates merged, contradictions superseded, credentials refused).

A cursor in the state folder (``replay.json``: the transcript files read, by path) makes each
transcript read once, by the Extractor or by replay. A transcript is marked read when the model
answered about it (an unreadable answer too: the diary says so, and it is not asked again); an
endpoint that fails stops the replay, leaves that transcript and the ones after it unread, and
the diary says so.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from config.errors import LlmError
from consistency.synthesis import ExtractedFact, extraction_prompt, parse_extraction
from daemon.dream_deep import keep_facts, transcript_text
from daemon.llm import ChatClient

__all__ = ["REPLAY_CURSOR_FILE", "TranscriptReplay", "unread_transcripts"]

log = structlog.get_logger("dreamd.dream")

#: The replay cursor in the state folder: ``{"read": [transcript path, …]}``.
REPLAY_CURSOR_FILE = "replay.json"


def unread_transcripts(pattern: str, read: Collection[str], limit: int) -> list[Path]:
    """Transcript files matching ``pattern`` (``~`` expanded) whose path is not in ``read``,
    newest first (by modification time), at most ``limit``."""
    if limit <= 0 or not pattern.strip():
        return []
    full = Path(pattern).expanduser()
    base = Path(full.anchor) if full.is_absolute() else Path()
    found: list[tuple[float, str, Path]] = []
    for path in base.glob(str(full.relative_to(base) if full.is_absolute() else full)):
        if str(path) in read:
            continue
        try:
            status = path.stat()
        except OSError:
            continue
        if stat.S_ISREG(status.st_mode):  # never a pipe or a device: reading would block
            found.append((status.st_mtime, str(path), path))
    found.sort(reverse=True)
    return [path for _, _, path in found[:limit]]


class TranscriptReplay:
    """Replays unread transcripts in a dream (module docstring). ``remember(fact)`` keeps a
    fact through the write path and returns ``(path, action)``."""

    def __init__(self, *, llm: ChatClient, remember: Callable[[ExtractedFact], tuple[str, str]],
                 transcripts: str, state_dir: Path, sessions_per_dream: int) -> None:
        self.llm = llm
        self._remember = remember
        self.transcripts = transcripts
        self.cursor_path = state_dir / REPLAY_CURSOR_FILE
        self.sessions_per_dream = sessions_per_dream

    def read(self) -> set[str]:
        """The transcripts read so far (paths as globbed)."""
        kept = read_json_object(self.cursor_path).get("read")
        return {p for p in kept if isinstance(p, str)} if isinstance(kept, list) else set()

    def run(self, extracted: Sequence[Path], lines: list[str]) -> list[str]:
        """Mark ``extracted`` (what the Extractor read in this dream) read, then replay up to
        ``sessions_per_dream`` unread transcripts, newest first. Diary lines go to ``lines``;
        returns the paths written. Never raises for the endpoint."""
        read = self.read()
        before = set(read)
        read |= {str(p) for p in extracted}
        written: list[str] = []
        for transcript in unread_transcripts(self.transcripts, read, self.sessions_per_dream):
            said = len(lines)
            text = transcript_text(transcript)
            try:
                facts = parse_extraction(self.llm.chat(extraction_prompt(text))) if text else []
            except LlmError as error:
                log.warning("dream.replay_failed", error=str(error))
                lines.append(f"Replay stopped at transcript {transcript.name}: {error}")
                break
            except ValueError as error:
                lines.append(f"Replayed transcript {transcript.name} and kept nothing: {error}")
                facts = []
            read.add(str(transcript))
            written += keep_facts(self._remember, facts, transcript.name, "Replayed", lines)
            if len(lines) == said:
                lines.append(f"Replayed transcript {transcript.name}: nothing new")
        if read != before:
            write_json_atomic(self.cursor_path, {"read": sorted(read)})
        return written
