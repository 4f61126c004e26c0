"""Light sleep's transcripts: what the user said in an assistant session, as snippets.

Issue 21, "Light sleep": the raw layer is the daily notes *and* the transcripts of the last
days. A Claude Code transcript (``~/.claude/projects/<project>/<session>.jsonl``, the files of
``dream.transcripts``) is read the way ``dreamd flush`` reads it — the user's own sentences
that carry a rule, a preference or a decision (:func:`daemon.flush.user_statements`: the same
selection, never a second one) — and each statement becomes one snippet
(:func:`consistency.snippet_cut.cut_statements`, starting score 0.58) whose evidence is the
transcript's line (``~/.claude/projects/p/3f2a….jsonl:12``). Its day is the day the user said
it (the entry's ``timestamp``, in the user's time zone; the file's modification day for an
entry without one). A statement that carries a credential is never a snippet
(:mod:`consistency.secrets`). Reads the file; writes nothing.
"""

from __future__ import annotations

import json
from datetime import date, datetime, tzinfo
from pathlib import Path

from consistency.secrets import find_secrets
from consistency.snippet_cut import cut_statements
from daemon.flush import user_statements
from magma.snippets import Snippet

__all__ = ["transcript_label", "transcript_signature", "transcript_snippets"]


def transcript_label(path: Path, home: Path | None = None) -> str:
    """How a transcript is named in the raw layer and in evidence: ``~/…`` under the home
    folder (``home``, default the user's), else its absolute path."""
    full = path.expanduser().absolute()
    try:
        return "~/" + full.relative_to(home or Path.home()).as_posix()
    except ValueError:
        return full.as_posix()


def transcript_signature(path: Path) -> str | None:
    """``"<size>:<mtime_ns>"`` of the file (an append changes it), ``None`` when it cannot
    be read."""
    try:
        status = path.stat()
    except OSError:
        return None
    return f"{status.st_size}:{status.st_mtime_ns}"


def _said_on(entry_line: bytes, zone: tzinfo, fallback: date) -> date:
    """The day, in ``zone``, of a transcript entry's ``timestamp`` (ISO 8601, UTC ``Z`` as
    Claude Code writes it), ``fallback`` without a readable one."""
    try:
        stamp = json.loads(entry_line).get("timestamp")
        moment = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except (ValueError, AttributeError, RecursionError):
        return fallback
    if moment is None or moment.tzinfo is None:
        return fallback
    return moment.astimezone(zone).date()


def transcript_snippets(path: Path, label: str, zone: tzinfo, since: date
                        ) -> list[Snippet] | None:
    """The snippets of the user's statements in the transcript at ``path`` said on
    ``since`` or later, named ``label`` (:func:`transcript_label`), in line order; a
    statement said twice is kept once (its first line), one with a credential never.
    ``None`` when the file cannot be read."""
    try:
        data = path.read_bytes()
        modified = datetime.fromtimestamp(path.stat().st_mtime, zone).date()
    except OSError:
        return None
    lines = data.split(b"\n")
    by_day: dict[date, list[tuple[int, str]]] = {}
    seen: set[str] = set()
    for found in user_statements(data):
        text = found.statement.text
        folded = " ".join(text.split()).casefold()
        if folded in seen or find_secrets(text):
            continue
        seen.add(folded)
        day = _said_on(lines[found.line - 1], zone, modified)
        if day >= since:
            by_day.setdefault(day, []).append((found.line, text))
    out = [s for day, said in by_day.items() for s in cut_statements(label, day, said)]
    return sorted(out, key=lambda s: s.lines)
