"""``DREAMS.md`` shows the sleep's work: a ``## Light Sleep`` and a ``## REM Sleep`` block.

Display only (issue 21): what each snippet's state is lives in the state folder and MAGMA,
and nothing here is ever read back. The blocks are appended after what the file holds (every
byte before stays as it is), once per dream (``<!-- sleep ID -->``), and only on a night that
staged, promoted or dropped something or that REM looked at: a night with nothing new
writes nothing. Tables keep to what Obsidian renders (``|`` in a text is escaped).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime

import structlog

from ccb.diary import one_line
from ccb.writer import NoteWriter
from config.errors import DreamdError, LlmError
from consistency.secrets import redact_secrets
from consistency.synthesis import parse_wording, wording_problem, wording_prompt
from daemon.dream_deep import diary_link
from daemon.dream_edits import DIARY_HEADER
from daemon.dream_sleep import Reword, SleepCycle, SleepReport
from daemon.llm import ChatClient
from magma.snippet_store import SnippetRecalls

__all__ = ["PARAGRAPH_MAX_CHARS", "diary_paragraph", "line_wording", "sleep_blocks",
           "sleep_night"]

log = structlog.get_logger("dreamd.dream")
#: Longest candidate text shown in a table cell, in characters.
CELL_MAX_CHARS = 120
#: Longest diary paragraph kept from the model, in characters (dreamd's choice: three
#: sentences).
PARAGRAPH_MAX_CHARS = 600
#: What the model is asked for (the words "consolidate", "tidy" and "extract" name the deep
#: phase's other prompts).
_PARAGRAPH_SYSTEM = (
    "You keep the dream diary of a note-taking assistant. In two or three sentences, in the "
    "first person, say what you noticed tonight in the user's daily notes. Use only what the "
    "list below says; add no fact, name or number that is not in it. Plain text, no list.")
#: Characters of a snippet's key shown (what ``dreamd promote --explain KEY`` takes).
KEY_CHARS = 8


def _cell(text: str) -> str:
    """One table cell: credentials withheld, control and invisible characters removed, one
    line, ``|`` escaped, at most :data:`CELL_MAX_CHARS` characters."""
    shown = "".join(c for c in redact_secrets(text)
                    if c.isspace() or unicodedata.category(c) not in ("Cc", "Cf"))
    flat = " ".join(shown.split()).replace("|", "\\|")
    return flat if len(flat) <= CELL_MAX_CHARS else flat[:CELL_MAX_CHARS - 1] + "…"


def _recalls(found: SnippetRecalls | None) -> str:
    if found is None or not found.count:
        return "0"
    return f"{found.count} ({found.distinct_queries} queries, {found.days} days)"


def _light_rows(night: SleepReport, recalls: Mapping[str, SnippetRecalls]) -> list[str]:
    promoted = {key: (path, action) for key, path, action in night.promoted}
    dropped = dict(night.dropped)
    keys = [*night.staged, *(k for k in promoted if k not in night.staged),
            *(k for k in dropped if k not in night.staged and k not in promoted)]
    rows = []
    for key in keys:
        snippet = night.snippets.get(key)
        if key in promoted:
            path, action = promoted[key]
            status = f"promoted → {diary_link(path)}" + (f" ({action})" if action != "created"
                                                         else "")
        elif key in dropped:
            status = f"dropped: {dropped[key]}"
        else:
            status = "staged"
        text = snippet.text if snippet else key
        evidence = f"`{snippet.evidence}`" if snippet else ""
        confidence = f"{night.rem[key]:.2f}" if key in night.rem else ""
        rows.append(f"| `{key[:KEY_CHARS]}` | {_cell(text)} | {confidence} | {evidence} | "
                    f"{_recalls(recalls.get(key))} | {_cell(status)} |")
    return rows


def sleep_blocks(current: bytes | None, night: SleepReport, dream_id: str, now: datetime,
                 paragraphs: Mapping[str, str] | None = None) -> bytes | None:
    """``DREAMS.md`` (``current``; ``None``: not there yet) with the night's blocks
    appended, or ``None`` when there is nothing to show or this dream showed it already.
    ``paragraphs`` (``light``, ``rem``) are the model's diary paragraphs, one under each
    heading."""
    said = paragraphs or {}
    marker = f"<!-- sleep {dream_id} -->"
    if not night.changed or (current is not None and marker.encode() in current):
        return None
    stamp = f"{now.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    parts = [f"\n## Light Sleep\n\n{marker}\n{stamp}: {len(night.staged)} staged, "
             f"{len(night.promoted)} promoted, {len(night.dropped)} dropped, "
             f"{night.waiting} waiting.\n"]
    if said.get("light"):
        parts.append(f"\n{said['light']}\n")
    rows = _light_rows(night, night.recalls)
    if rows:
        parts.append("\n| Key | Candidate | Confidence | Evidence | Recalls | Status |\n"
                     "| --- | --- | --- | --- | --- | --- |\n" + "".join(r + "\n" for r in rows))
    if night.why_none:
        parts.append(f"\nNone promoted: {night.why_none}.\n")
    if night.rem:
        themes = ", ".join(f"{t.tag} ({t.count})" for t in night.themes[:8]) or "none"
        parts.append(f"\n## REM Sleep\n\n{len(night.rem)} candidates looked at. "
                     f"Themes: {themes}.\n"
                     + (f"\n{said['rem']}\n" if said.get("rem") else "")
                     + "\n| Candidate | Confidence | Themes |\n| --- | --- | --- |\n")
        shared = {t.tag for t in night.themes}
        for key, confidence in sorted(night.rem.items(), key=lambda kv: -kv[1]):
            snippet = night.snippets.get(key)
            tags = ", ".join(t for t in (snippet.tags if snippet else ()) if t in shared)
            parts.append(f"| {_cell(snippet.text if snippet else key)} | {confidence:.2f} | "
                         f"{_cell(tags)} |\n")
    head = current if current is not None else DIARY_HEADER.encode()
    return head + "".join(parts).encode("utf-8")


def diary_paragraph(llm: ChatClient, facts: list[str]) -> str | None:
    """The model's short first-person paragraph on ``facts`` (one line each), made one line,
    credentials withheld, at most :data:`PARAGRAPH_MAX_CHARS`; ``None`` when the model
    fails or says nothing. Kept in ``DREAMS.md`` only: never promoted, never read back."""
    try:
        reply = llm.chat([{"role": "system", "content": _PARAGRAPH_SYSTEM},
                          {"role": "user", "content": "\n".join(f"- {f}" for f in facts)}])
    except LlmError as error:
        log.warning("dream.paragraph_failed", error=str(error))
        return None
    text = redact_secrets(one_line(reply))[:PARAGRAPH_MAX_CHARS].strip()
    return f"*{text.replace('*', '')}*" if text else None


def line_wording(llm: ChatClient) -> Reword:
    """Deep sleep's rewording of a promoted line by ``llm``
    (:func:`consistency.synthesis.wording_prompt`): a stable statement with its reason,
    kept only when it passes the synthesis fact check both ways
    (:func:`consistency.synthesis.wording_problem`); a failing model, an unreadable answer
    or a refused one leaves the line's own words, and says why."""

    def reword(heading: str, body: str) -> tuple[str | None, str | None]:
        line = f"{heading}: {body}" if heading else body
        try:
            statement = parse_wording(llm.chat(wording_prompt(line)))
        except LlmError as error:
            log.warning("dream.wording_failed", error=str(error))
            return None, f"the model failed ({error})"
        except ValueError as error:
            return None, f"the model's answer was unreadable ({error})"
        why = wording_problem(heading, body, statement)
        if why is not None:
            log.info("dream.wording_refused", why=why)
            return None, f"the model's wording was refused: {why}"
        return statement, None

    return reword


def _paragraphs(llm: ChatClient, night: SleepReport) -> dict[str, str]:
    """One paragraph per phase that did something (light, REM)."""
    texts = {key: s.text for key, s in night.snippets.items()}
    light = [f"new: {texts.get(k, k)}" for k in night.staged] \
        + [f"became a memory: {texts.get(k, k)}" for k, _, _ in night.promoted] \
        + [f"dropped ({why}): {texts.get(k, k)}" for k, why in night.dropped]
    said = {"light": diary_paragraph(llm, light[:20]) if light else None}
    if night.rem:
        said["rem"] = diary_paragraph(llm, [f"theme {t.tag}: {t.count} lines"
                                             for t in night.themes[:8]] or ["no shared theme"])
    return {k: v for k, v in said.items() if v}


def sleep_night(cycle: SleepCycle, writer: NoteWriter, diary_path: str, dream_id: str,
                llm: ChatClient | None = None) -> list[str]:
    """One night of ``cycle`` inside a dream -> the files it wrote: the memories it
    promoted, and ``diary_path`` when it showed its work there (never through a link: it
    would land in another note). With ``llm``, each block opens with the model's diary
    paragraph (:func:`diary_paragraph`), and a promoted line may be kept in its wording
    (:func:`line_wording`)."""
    try:
        night = cycle.run(line_wording(llm) if llm is not None else None)
    except DreamdError as error:  # the store unreadable: the dream's other work stands
        log.warning("dream.sleep_failed", error=str(error))
        return []
    written = list(night.written)
    if (writer.root / diary_path).is_symlink():
        log.warning("dream.diary_is_a_link", path=diary_path)
        return written
    current = writer.read(diary_path)
    said = _paragraphs(llm, night) if llm is not None and night.changed else {}
    data = sleep_blocks(current, night, dream_id, cycle.now(), said)
    if data is not None:
        writer.write(diary_path, data, base=current, origin="dream", change="dream: sleep")
        written.append(diary_path)
    return written
