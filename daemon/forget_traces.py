"""What ``dreamd forget`` takes out of dreamd's own records of past dreams, and out of the
copies of ``MEMORY.md`` it kept.

A dream writes a memory's name into the dream diary (``DREAMS.md``, "[[a]] superseded by
[[b]]", the values that changed) and its name and description into ``dream-state.json``, the
record the next dream starts from. After ``forget`` neither may keep them: the diary is indexed
and found by search, and the name is often the memory's text, slugged.

Each diary line naming the forgotten memory becomes "A memory was forgotten on DATE." (the
diary keeps its shape: the entry, its date and its other lines stay). The record goes through
:func:`daemon.dream_records.forget_record`.

A hand-edited ``MEMORY.md`` is kept beside the rebuilt one as a conflict copy — by forget's
own rebuild too — and lists the memory as it was (``- [name](file.md) — description``: the
name and the description are often the memory's text): :func:`scrub_index_copies` takes that
line out of every such copy.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from datetime import date
from pathlib import Path

from ccb.parse import detect_conflict_copy
from ccb.writer import NoteWriter
from daemon import session_snapshot
from daemon.dream_records import forget_record
from daemon.dream_sleep import forget_snippets
from daemon.forget_links import link_stem, unlink_in_version
from daemon.history import VersionRecorder
from daemon.lineage import scrub_canvases
from magma.recalls import RecallLog
from magma.versions import VersionArchive

__all__ = ["forget_recorded", "scrub_copies", "scrub_diary", "scrub_index_copies"]

_LINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
#: A line of ``MEMORY.md`` (``daemon.memory_index_keeper``): ``- [name](file.md) — …``.
_INDEX_LINE = re.compile(r"^- \[.*\]\(([^)\s]+)\)")
_LIST_MARKER = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


def _forgotten_line(line: str, day: date) -> str:
    marker = _LIST_MARKER.match(line)
    ending = line[len(line.rstrip("\r\n")):]
    return f"{marker.group(1) if marker else ''}A memory was forgotten on {day.isoformat()}." \
        + ending


def scrub_diary(writer: NoteWriter, diary_path: str, stem: str, day: date, *,
                origin: str) -> bool:
    """Replace every line of the diary at ``diary_path`` that links ``[[stem]]`` (the
    forgotten memory's file name, any folder, alias or heading) with "A memory was forgotten
    on ``day``."; returns whether the diary was written. A diary that is missing, a link or
    not UTF-8 is left. Raises as :meth:`ccb.writer.NoteWriter.write`."""
    if (writer.root / diary_path).is_symlink():
        return False
    current = writer.read(diary_path)
    if current is None:
        return False
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError:
        return False
    wanted = link_stem(stem)
    lines = text.splitlines(keepends=True)
    scrubbed = [_forgotten_line(line, day)
                if any(link_stem(m.group(1)) == wanted for m in _LINK.finditer(line)) else line
                for line in lines]
    if scrubbed == lines:
        return False
    writer.write(diary_path, "".join(scrubbed).encode("utf-8"), base=current, origin=origin,
                 change="a forgotten memory taken out of the diary")
    return True


def scrub_copies(writer: NoteWriter, index_path: str, stem: str) -> list[str]:
    """:func:`scrub_index_copies`, then the memory out of the canvases of the memory folder
    (the folder of ``index_path``; :func:`daemon.lineage.scrub_canvases`): the vault paths
    written or deleted."""
    folder = index_path.rsplit("/", 1)[0] if "/" in index_path else ""
    return [*scrub_index_copies(writer, index_path, stem),
            *scrub_canvases(writer, folder, stem)]


def scrub_index_copies(writer: NoteWriter, index_path: str, stem: str) -> list[str]:
    """Take every line that lists the memory with file name ``stem`` out of the conflict
    copies of the ``MEMORY.md`` at ``index_path`` (the module docstring); returns the vault
    paths of the copies written. The user's own lines stay; a copy that is a link or not
    UTF-8 is left. Not journaled for the lost-update repair: the bytes it replaces hold the
    forgotten text. Raises as :meth:`ccb.writer.NoteWriter.write`."""
    wanted = link_stem(stem)
    folder = (writer.root / index_path).parent
    written = []
    copies = sorted(p for p in folder.iterdir() if not p.is_symlink() and detect_conflict_copy(
        p.relative_to(writer.root).as_posix()) == index_path) if folder.is_dir() else []
    for copy in copies:
        path = copy.relative_to(writer.root).as_posix()
        current = writer.read(path)
        try:
            lines = (current or b"").decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            continue
        kept = [line for line in lines if not (match := _INDEX_LINE.match(line))
                or link_stem(urllib.parse.unquote(match.group(1))) != wanted]
        if kept != lines:
            writer.write(path, "".join(kept).encode("utf-8"), base=current, heal=False,
                         change="a forgotten memory taken out of a copy of the index")
            written.append(path)
    return written


def forget_recorded(versions: VersionArchive, recorder: VersionRecorder, recalls: RecallLog,
                    state_dir: Path, key: str, stem: str) -> int:
    """Drop every version of a forgotten memory (kept under ``key``) and its name
    (``stem``) from the links in other memories' earlier versions, then the table versions
    that held them, its recent-write journal, its recalls (by search), the session-start
    snapshots (which may quote it), the dream's record of it and of the diary lines and
    session statements it was promoted from (:func:`daemon.dream_sleep.forget_snippets`).
    Returns how many versions went. Raises :class:`config.errors.StoreError` and ``OSError``."""
    count = versions.forget(key)
    versions.rewrite(functools.partial(unlink_in_version, stem=stem),
                     needle=stem.encode("utf-8"))
    versions.compact()
    recorder.forget(key)
    recalls.forget(key)
    session_snapshot.clear(state_dir)
    forget_record(state_dir, key)
    forget_snippets(state_dir, stem)
    return count


def forget_entry_recorded(versions: VersionArchive, recorder: VersionRecorder, key: str
                          ) -> int:
    """Drop every version of a forgotten entry (kept under ``key``,
    :mod:`daemon.entry_versions`), the table versions that held them and its base; returns
    how many versions went. An entry is linked by no wikilink, so no other memory's
    versions change. Raises :class:`config.errors.StoreError` and ``OSError``."""
    count = versions.forget(key)
    if count:
        versions.compact()
    recorder.forget(key)
    return count
