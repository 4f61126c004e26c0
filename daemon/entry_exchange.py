"""``dreamd export --format entries|files`` and ``dreamd import``: the memory folder in the
other format (:mod:`ccb.entry_convert`).

- :func:`export_folder` reads the memory folder and converts its entry files into memory
  files (``files``) or its memory files into entry files (``entries``; on request
  ``dreamd export --format entries --with-hits`` writes each line's recall count from
  MAGMA as ``hc=``: search never writes it, the file is the user's), and
  :func:`write_export` puts the result in a folder of the user's choice (a file there that
  holds other bytes is never overwritten).
- :func:`import_folder` reads a folder of either format and writes it into the memory folder
  as memory files (``files``) or entry files (``entries``), through the one writer (a file
  already there with other bytes keeps them; ours goes beside it as a conflict copy), with
  credentials refused. It does not index: a running daemon's watcher does, else the next
  ``dreamd sync`` (a thousand files are one sync, not a thousand index writes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ccb.entries import is_entry_file
from ccb.entry_convert import Converted, entries_to_memories, memories_to_entries
from ccb.model import GENERATED_FILES
from ccb.parse import detect_conflict_copy, parse_note
from ccb.scan import NOTE_SUFFIX, is_temp_file_name
from config.errors import VaultError
from consistency.secrets import refuse_secrets

if TYPE_CHECKING:
    from daemon.app import App

__all__ = ["Format", "ImportReport", "export_folder", "import_folder", "read_folder",
           "recall_counts", "write_export"]

Format = Literal["entries", "files"]


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import wrote (vault paths), what went beside a file as a conflict copy, and
    what was not kept byte for byte (``(path, reason)``)."""

    written: tuple[str, ...]
    conflicts: tuple[str, ...]
    lossy: tuple[tuple[str, str], ...]


def read_folder(folder: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """``(entry files, memory files)`` under ``folder`` (relative POSIX path → bytes):
    markdown files only, without dot-folders, temp files, conflict copies, ``MEMORY.md`` and
    ``DREAMS.md``; a note that is neither is left out. Raises ``VaultError`` when ``folder``
    is not a readable folder."""
    if not folder.is_dir():
        raise VaultError(f"{folder} is not a folder; give a folder of entry or memory "
                         "files (one dreamd export --to wrote); nothing was written")
    entries: dict[str, bytes] = {}
    memories: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if (not name.lower().endswith(NOTE_SUFFIX) or name.startswith(".")
                    or is_temp_file_name(name) or name in GENERATED_FILES):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            if detect_conflict_copy(rel) is not None:
                continue
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise VaultError(f"dreamd: read {path}: {exc.strerror or exc}") from exc
            note = parse_note(rel, data)
            if note.memory is not None:
                memories[rel] = data
            elif is_entry_file(rel, note.properties, note.body, in_scope=True):
                entries[rel] = data
    return entries, memories


def _convert(folder: Path, fmt: Format, now: datetime,
             hits: Callable[[], Mapping[str, int]] | None = None) -> Converted:
    entries, memories = read_folder(folder)
    if fmt == "files":
        return entries_to_memories(entries, now=now)
    return memories_to_entries(memories, hits() if hits is not None else None)


def export_folder(app: App, fmt: Format, *, with_hits: bool = False) -> Converted:
    """The memory folder's entry files as memory files (``files``), or its memory files as
    entry files (``entries``; ``with_hits``: each line with ``hc=`` its recall count in
    MAGMA, :func:`recall_counts`). Raises ``StoreError`` when the recalls cannot be read."""
    folder = app.vault_root / app.settings.vault.memory_folder
    return _convert(folder, fmt, app.clock(),
                    (lambda: recall_counts(app)) if with_hits else None)


def recall_counts(app: App) -> dict[str, int]:
    """``{path in the memory folder: recalls}`` of the memory folder's indexed memories, from
    the recall log MAGMA keeps (:mod:`magma.recalls`, keyed by the index row's note id). A
    memory never recalled, or not indexed yet, is not in it (its count is 0). Reads only:
    the files and the recall log are left as they are."""
    folder = app.settings.vault.memory_folder.strip("/")
    prefix = f"{folder}/" if folder else ""
    stats = app.recalls.stats()
    return {path[len(prefix):]: stats[row.note_id].count
            for path, row in app.store.file_index().items()
            if path.startswith(prefix) and row.memory_type is not None
            and row.note_id in stats}


def write_export(converted: Converted, out: Path) -> list[str]:
    """Write ``converted`` under ``out`` (created); returns the paths written. Raises
    ``VaultError`` naming the first file of ``out`` that holds other bytes (nothing is
    written then) or a folder that refuses writes."""
    clash = [p for p, data in converted.files.items()
             if (out / p).exists() and (out / p).read_bytes() != data]
    if clash:
        raise VaultError(f"dreamd: export to {out}: {clash[0]} exists with other content "
                         f"({len(clash)} such file(s)); choose an empty folder")
    written = []
    for path, data in sorted(converted.files.items()):
        target = out / path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_bytes(data)
                written.append(path)
        except OSError as exc:
            raise VaultError(f"dreamd: export to {out}: {exc.strerror or exc}") from exc
    return written


def import_folder(app: App, source: Path, fmt: Format) -> ImportReport:
    """Write the entry and memory files of ``source`` into the memory folder as ``fmt``
    (module docstring). Raises ``SecretRefusedError`` before anything is written when a
    file carries a credential, ``VaultError`` for an unreadable ``source``, and what
    :meth:`ccb.writer.NoteWriter.write` raises."""
    entries, memories = read_folder(source)
    now = app.clock()
    if fmt == "files":
        converted = entries_to_memories(entries, now=now)
        files: Mapping[str, bytes] = {**converted.files, **memories}
    else:
        converted = memories_to_entries(memories)
        files = {**converted.files, **entries}
    for path, data in files.items():
        refuse_secrets(data.decode("utf-8", errors="replace"), where=f"import {path}")
    folder = app.settings.vault.memory_folder.strip("/")
    written: list[str] = []
    conflicts: list[str] = []
    for path, data in sorted(files.items()):
        vault_path = f"{folder}/{path}" if folder else path
        # base None: a new file; one already there with other bytes keeps them (ours beside)
        outcome = app.writer.write(vault_path, data, base=None, origin="api", change="imported")
        if outcome.conflict_path:
            conflicts.append(outcome.conflict_path)
        if outcome.status != "unchanged":
            written.append(vault_path)
    return ImportReport(tuple(written), tuple(conflicts), converted.lossy)
