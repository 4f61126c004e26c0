"""``MEMORY.md``: the one owner of the memory index file.

``MEMORY.md`` is a file dreamd generates in the memory folder (the format Claude Code reads at
session start): one line per current memory, grouped by type. It is the user's file too, so
every writer of it goes through here:

- what it should hold: :func:`index_entries` (which memories, by the one visibility rule
  :func:`consistency.lifecycle.is_current`) and :meth:`MemoryIndexKeeper.render`;
- when it is current without reading any memory: :func:`index_fingerprint` of the memories it
  was built from, recorded beside the hash of what was written (``memory-index.json`` in the
  state folder);
- whose it is: a ``MEMORY.md`` that is not what dreamd last wrote is someone's own and is never
  overwritten silently (the writer keeps it as a conflict copy); one this state folder has no
  record of is *adopted* as dreamd's when it is exactly what the memories give.

Callers (``remember``/``forget``, the dream, ``check``/``--fix``, the first sync of a state
folder) hand it the memories; it never walks the vault itself.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from ccb.atomic import read_json_object, write_json_atomic
from ccb.dates import as_written
from ccb.memory_index import MAX_BYTES, MAX_LINES, IndexEntry, layout_memory_index
from ccb.model import MEMORY_INDEX_FILE, Note
from ccb.writer import NoteWriter, WriteOutcome, sha256_hex
from consistency.lifecycle import MemoryState, is_current
from consistency.secrets import redact_secrets

__all__ = ["INDEX_FILE", "MemoryIndexKeeper", "index_entries", "index_fields",
           "index_fingerprint", "index_listing"]

#: File name of the memory index in the memory folder.
INDEX_FILE = MEMORY_INDEX_FILE
#: A line of the index: ``- [name](file.md) — description`` (``ccb.memory_index``).
_INDEX_LINK_RE = re.compile(r"^- \[.*\]\(([^)\s]+)\)", re.MULTILINE)
#: Its closing line when not every memory fits (``ccb.memory_index``).
_LEFT_OUT_RE = re.compile(r"^- … (\d+) more memor(?:y|ies) not listed", re.MULTILINE)
#: Builds whose left-out memories are kept until one is written and recorded (a rebuild
#: renders the file once or twice before it writes it).
_KEPT_BUILDS = 4


def index_entries(memory_folder: str, memories: Iterable[tuple[str, Mapping[str, Any]]],
                  today: date) -> list[IndexEntry]:
    """``MEMORY.md`` entries of the memories among ``(path, fields)`` pairs that are current on
    ``today``; ``fields`` holds ``type name description pinned resident status valid_to
    expires updated`` (dates as date/datetime or ISO text). A credential in a name, file name
    or description (a memory written by hand) is replaced by
    :data:`consistency.secrets.REDACTED`: ``MEMORY.md`` never copies one, whoever builds it."""
    entries = []
    prefix = memory_folder.strip("/") + "/"
    for path, f in memories:
        if not is_current(MemoryState.of(f, past=False), today):
            continue
        updated = f.get("updated")
        if isinstance(updated, str):
            updated = as_written(updated)
        entries.append(IndexEntry(
            name=redact_secrets(str(f["name"])),
            file=redact_secrets(path.removeprefix(prefix)), type=f["type"],
            description=redact_secrets(str(f.get("description") or "")),
            pinned=bool(f.get("pinned")),
            resident=f["type"] in {"user", "feedback"} or f.get("resident") is True,
            updated=updated,
        ))
    return entries


def index_fields(note: Note) -> dict[str, object]:
    """The fields :func:`index_entries` reads, from a parsed memory file."""
    meta = note.memory
    assert meta is not None
    return {"type": meta.type, "name": meta.name, "description": meta.description,
            "pinned": meta.pinned, "resident": note.properties.get("resident"),
            "status": meta.status,
            "valid_to": meta.valid_to, "expires": meta.expires, "updated": meta.updated}


def index_fingerprint(memories: Iterable[tuple[str, str]], today: date) -> str:
    """SHA-256 hex over ``(path, content hash)`` of every memory ``MEMORY.md`` is built from,
    and the day (what is current depends on it): when it matches the one recorded at the last
    build and the file is what was written, ``MEMORY.md`` is current without reading any
    memory."""
    digest = hashlib.sha256(today.isoformat().encode())
    for path, content_hash in sorted(memories):
        digest.update(f"\n{path}\0{content_hash}".encode())
    return digest.hexdigest()


class MemoryIndexKeeper:
    """Writes, records and adopts one vault's ``MEMORY.md`` (module docstring).

    ``record`` is the state file of the last build (``None``: nothing is recorded, as for a
    vault opened read-only); ``writer`` is the vault's one writer.
    """

    def __init__(self, *, writer: NoteWriter, memory_folder: str, record: Path | None) -> None:
        self.writer = writer
        self.memory_folder = memory_folder.strip("/")
        self.record = record
        # each memory's entry (None: not current) by (path, content hash), for one day
        self._entries: tuple[date, dict[tuple[str, str], IndexEntry | None]] | None = None
        # the vault paths each recent build left out, by the hash of its bytes
        self._left_out: dict[str, tuple[str, ...]] = {}

    @property
    def path(self) -> str:
        """Vault path of ``MEMORY.md``."""
        return f"{self.memory_folder}/{INDEX_FILE}"

    def render(self, entries: Sequence[IndexEntry]) -> bytes:
        """The file's bytes for ``entries`` (what it leaves out is recorded with the build,
        :meth:`record_built`)."""
        layout = layout_memory_index(entries, memory_folder=self.memory_folder)
        data = layout.text.encode("utf-8")
        self._left_out[sha256_hex(data)] = tuple(f"{self.memory_folder}/{entry.file}"
                                                 for entry in layout.left_out)
        while len(self._left_out) > _KEPT_BUILDS:
            del self._left_out[next(iter(self._left_out))]
        return data

    def text_of(self, memories: Iterable[tuple[str, Note]], today: date) -> tuple[bytes, str]:
        """What ``MEMORY.md`` holds for these parsed memory files, and their fingerprint."""
        listed = list(memories)
        known = self._entries[1] if self._entries and self._entries[0] == today else {}
        kept: dict[tuple[str, str], IndexEntry | None] = {}
        for path, note in listed:
            key = (path, note.content_hash)
            if key not in known and note.memory:
                found = index_entries(self.memory_folder, [(path, index_fields(note))], today)
                # (read once per file version; index_entries withholds credentials)
                kept[key] = found[0] if found else None
            elif note.memory:
                kept[key] = known[key]
        self._entries = (today, kept)  # an unchanged file is not judged again
        entries = [entry for entry in kept.values() if entry is not None]
        inputs = index_fingerprint(((path, note.content_hash) for path, note in listed), today)
        return self.render(entries), inputs

    def current_bytes(self) -> bytes | None:
        """What the file holds now (``None``: there is none)."""
        return self.writer.read(self.path)

    def is_dreamds(self, data: bytes) -> bool:
        """Is ``data`` what dreamd last wrote (or adopted) there?"""
        return self.writer.generated_hash(self.path) == sha256_hex(data)

    def has_record(self) -> bool:
        """Has this state folder written or adopted the file before?"""
        return self.writer.generated_hash(self.path) is not None

    def recorded(self, inputs: str, output_hash: str) -> bool:
        """Was the file with hash ``output_hash`` built from memories with fingerprint
        ``inputs``? (Then it is current without reading any memory.)"""
        record = read_json_object(self.record) if self.record is not None else {}
        return record.get("output") == output_hash and record.get("inputs") == inputs

    def record_built(self, inputs: str, output_hash: str) -> None:
        """Record what the file (with hash ``output_hash``) was built from, and the memories
        it left out to fit (``left_out``, vault paths) when this keeper rendered it."""
        if self.record is not None:
            record: dict[str, Any] = {"inputs": inputs, "output": output_hash}
            left_out = self._left_out.get(output_hash)
            if left_out is not None:
                record["left_out"] = list(left_out)
            # (not fsynced: a record a power cut loses or leaves behind does not match
            # the file or its memories, and the next rebuild reads them again)
            write_json_atomic(self.record, record, durable=False)

    def write(self, text: bytes, inputs: str) -> WriteOutcome:
        """Write the file through the one writer (a hand-edited one is kept beside it as a
        conflict copy, :meth:`ccb.writer.NoteWriter.write_generated`) and record the build."""
        outcome = self.writer.write_generated(self.path, text)
        self.record_built(inputs, outcome.content_hash)
        return outcome

    def adopt(self, data: bytes, inputs: str | None = None) -> None:
        """Take ``data`` (what the file holds, equal to what the memories give) as dreamd's
        own; with ``inputs``, record the build too."""
        self.writer.adopt_generated(self.path, data)
        if inputs is not None:
            self.record_built(inputs, sha256_hex(data))

    def would_adopt(self, current: bytes, entries: Sequence[IndexEntry]) -> bool:
        """Is ``current`` (a file this state folder has no record of) exactly what dreamd
        builds from the memories of ``entries`` it lists? Then it is dreamd's own: an index
        written before memories were added by hand, or by another data folder."""
        listed = {urllib.parse.unquote(target) for target in
                  _INDEX_LINK_RE.findall(current.decode("utf-8", "replace"))}
        subset = [e for e in entries if e.file in listed]
        return len(subset) == len(listed) and self.render(subset) == current

    # ------------------------------------------------------------------ the dream's build

    def preview(self, entries: Sequence[IndexEntry], text: bytes
                ) -> tuple[str, str, bytes | None, bytes | None]:
        """What a planned dream does to the file: its path, a summary line, and its bytes
        before and after (``None``, ``None`` when it stays as it is)."""
        current, path = self.current_bytes(), self.path
        if current == text:
            return path, f"{path} stays as it is", None, None
        if current is not None and not self._would_be_dreamds(current, entries):
            return path, (f"{path} is not dreamd's (written or edited by hand): the dream "
                          "leaves it as it is; `dreamd check --fix` rebuilds it"), None, None
        return path, f"{path} would be rebuilt: {len(entries)} live memories", current, text

    def rebuild(self, entries: Callable[[], Sequence[IndexEntry]], inputs: str, *,
                any_memories: bool, last: Mapping[str, Any] | None
                ) -> tuple[str, bool, dict[str, str] | None]:
        """A dream's rebuild: ``(summary, changed, build record)``. Nothing is read or
        written when ``last`` (the last dream's build record) says the file is what these
        memories (fingerprint ``inputs``) give. A link to another file and a hand-written
        file are left as they are (``dreamd check --fix`` rebuilds one and keeps it as a
        copy). ``entries`` is called only when the file is built."""
        current = self.current_bytes()
        if last is not None and last.get("inputs") == inputs \
                and last.get("output") == sha256_hex(current or b""):
            return str(last.get("summary") or f"{self.path} is current"), False, None
        listed = entries()
        target = self.writer.root / self.path
        if not any_memories and not target.exists():
            return f"no memories, so no {self.path}", False, None
        if target.is_symlink():
            return f"{self.path} is a link to another file: left as it is", False, None
        if current is not None:
            if not self.has_record() and self.would_adopt(current, listed):
                self.adopt(current)
            if not self.is_dreamds(current):
                return (f"{self.path} is not dreamd's (written or edited by hand): left as it "
                        "is; `dreamd check --fix` rebuilds it and keeps yours as a copy"), \
                    False, None
        text = self.render(listed)
        outcome = self.write(text, inputs)
        lines = text.count(b"\n")
        summary = (f"{self.path} lists {len(listed)} live memories in {lines} lines, "
                   f"{len(text):,} bytes")
        return summary, outcome.status != "unchanged", {
            "inputs": inputs, "output": outcome.content_hash, "summary": summary}

    def _would_be_dreamds(self, current: bytes, entries: Sequence[IndexEntry]) -> bool:
        if self.has_record():
            return self.is_dreamds(current)
        return self.would_adopt(current, entries)


def index_listing(vault_root: Path, memory_folder: str, record: Path) -> dict[str, Any] | None:
    """What ``MEMORY.md`` lists, for ``dreamd status`` (reads that file and the record of its
    last build, nothing else): its ``path``, how many memories it ``listed``, how many it
    ``left_out`` to fit Claude Code's limits, their vault paths (``left_out_paths``; ``None``
    when the file is not as dreamd last recorded it, or the record is of an earlier dreamd:
    the next rebuild records them) and whether it is ``generated`` (what dreamd last wrote;
    ``None``: this state folder has no record of it). ``None`` when there is no ``MEMORY.md``."""
    path = f"{memory_folder.strip('/')}/{INDEX_FILE}"
    try:
        data = (vault_root / path).read_bytes()
    except OSError:
        return None
    text = data.decode("utf-8", "replace")
    built = read_json_object(record)
    generated = built.get("output") == sha256_hex(data) if built else None
    paths = built.get("left_out") if generated else None
    paths = [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else None
    found = _LEFT_OUT_RE.search(text)
    return {"path": path, "listed": len(_INDEX_LINK_RE.findall(text)),
            "left_out": len(paths) if paths is not None else int(found[1]) if found else 0,
            "left_out_paths": paths, "generated": generated,
            "limits": {"lines": MAX_LINES, "bytes": MAX_BYTES}}
