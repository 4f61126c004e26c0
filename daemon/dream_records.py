"""What a dream knows of each memory file, kept in ``dream-state.json`` between dreams.

A dream reads every memory file of the memory folder, except those whose size and mtime match
the record of the last dream: their facts come from the record, so a dream over 10,000 memories
reads only what changed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import date
from pathlib import Path
from stat import S_ISREG
from typing import Any

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from ccb.dates import iso
from ccb.memory_file import content_hash_normalised
from ccb.model import GENERATED_FILES, MemoryType, Note, memory_key
from ccb.parse import detect_conflict_copy
from ccb.scan import read_note_bytes
from ccb.writer import sha256_hex
from config.errors import DreamdError
from consistency.lifecycle import MemoryState, has_rule_force, is_current
from consistency.secrets import redact_secrets
from magma.lineage import link_stem, link_values

__all__ = ["STATE_FILE", "MemoryRecord", "Read", "Seen", "forget_record", "gather",
           "names_lineage", "read_body", "read_record", "refresh", "unchanged_bytes"]

log = structlog.get_logger("dreamd.dream")

#: The state folder's file of the records (the last dream's view of every memory file).
STATE_FILE = "dream-state.json"

_URL_RE = re.compile(r"https?://[^\s<>()\[\]\"'`]+")


@dataclass(slots=True)
class MemoryRecord:
    """What a dream knows of one memory file; kept in ``dream-state.json`` between dreams."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    id: str
    type: MemoryType
    name: str
    description: str
    subject: str | None
    owner: str | None
    status: str | None
    pinned: bool
    resident: bool
    rule: bool
    created: str | None
    updated: str | None
    valid_to: str | None
    expires: str | None
    broken_links: list[str]
    urls: list[str]
    derived_from: list[str]  # the sources' stems (:func:`magma.lineage.link_stem`)
    supersedes: list[str]  # the links of its ``supersedes``, as written
    norm_hash: str
    seen: str | None = None  # the file's hash when the last dream finished

    @property
    def changed(self) -> bool:
        return self.seen != self.hash

    def as_json(self) -> dict[str, Any]:
        """The record as the JSON object kept in ``dream-state.json`` (a shallow copy:
        ``dataclasses.asdict`` deep-copies and cost a second per 10,000 memories)."""
        return {name: getattr(self, name) for name in _RECORD_FIELDS}

    def hidden(self, today: date) -> bool:
        return not is_current(MemoryState.of(self, past=False), today)


_RECORD_FIELDS = tuple(f.name for f in fields(MemoryRecord))


def read_record(path: str, note: Note, data: bytes, stat: os.stat_result, seen: str | None
            ) -> MemoryRecord | None:
    meta = note.memory
    if meta is None:
        return None
    props = note.properties
    broken = props.get("broken_links")
    body = note.body.strip()
    return MemoryRecord(
        path=path, size=stat.st_size, mtime_ns=stat.st_mtime_ns, hash=sha256_hex(data),
        id=memory_key(meta.id, path), type=meta.type, name=redact_secrets(meta.name),
        description=redact_secrets(meta.description),  # (dream-state.json keeps no credential)
        subject=meta.subject, owner=meta.owner, status=meta.status, pinned=meta.pinned,
        resident=props.get("resident") is True,
        rule=meta.type == "feedback" and has_rule_force(f"{meta.description}\n{body}"),
        created=iso(meta.created), updated=iso(meta.updated), valid_to=iso(meta.valid_to),
        expires=iso(meta.expires),
        broken_links=[str(x) for x in broken] if isinstance(broken, list) else [],
        urls=sorted(set(_URL_RE.findall(note.body))) if meta.type == "reference" else [],
        derived_from=sorted({link_stem(x) for x in link_values(props.get("derived_from"))}),
        supersedes=list(link_values(props.get("supersedes"))),
        norm_hash=content_hash_normalised(body), seen=seen,
    )


#: What a dream knows of the bytes of a file it read: ``{vault path: (size, mtime_ns,
#: whether they name a lineage)}`` (:func:`names_lineage`).
Seen = dict[str, tuple[int, int, bool]]


def names_lineage(data: bytes) -> bool:
    """Do a file's bytes name a lineage (``derived_from``, ``forgotten_sources``)? The
    derived re-check (:mod:`daemon.dream_recheck`) has nothing to do in a folder where
    no file does."""
    return b"derived_from" in data or b"forgotten_sources" in data


#: The bytes of the files a dream read, by vault path, with the identity of the file they
#: were read from (:func:`_identity`): :func:`unchanged_bytes` gives them again while the
#: file keeps it, instead of reading it a second time.
Read = dict[str, tuple[tuple[int, int, int, int], bytes]]


def _identity(stat: os.stat_result) -> tuple[int, int, int, int]:
    """What tells a file's bytes changed: size, modification and status-change times, inode
    (a write in place changes the times, a swap the inode; the status-change time is set by
    the system on every change, never by the writer of the file)."""
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def unchanged_bytes(root: Path, path: str, read: Read | None) -> bytes | None:
    """The bytes of ``path`` kept in ``read`` (:func:`gather`), when the file is still the
    one they were read from (:func:`_identity`, one ``lstat``); else ``None`` (read it)."""
    kept = read.get(path) if read else None
    if kept is None:
        return None
    try:
        stat = (root / path).lstat()
    except OSError:
        return None
    return kept[1] if S_ISREG(stat.st_mode) and _identity(stat) == kept[0] else None


def gather(root: Path, memory_folder: str, cached: Mapping[str, Any], seen: Seen | None = None,
           read: Read | None = None,
           ) -> tuple[dict[str, MemoryRecord], dict[str, str], dict[str, MemoryRecord]]:
    """Records of every memory file under ``memory_folder`` (unchanged ones, by size and
    mtime, from ``cached``: the last dream's records), the bodies of the files read now, and
    the records of the memory files the dream leaves alone. Generated files, conflict
    copies, dot files and anything that is not a regular file are never memories; a file
    that does not read is left alone (sync reports it). A memory file with a problem (a
    property it cannot read, ``ccb.parse``) is left alone too — never planned, never edited
    — but it is a memory all the same: ``MEMORY.md`` lists it when it is current, as
    ``remember`` and ``check --fix`` do (the third mapping). ``seen`` gets the
    :data:`Seen` entry of each file read, ``read`` its bytes (:data:`Read`)."""
    folder = root / memory_folder.strip("/")
    records: dict[str, MemoryRecord] = {}
    bodies: dict[str, str] = {}
    left_alone: dict[str, MemoryRecord] = {}
    if not folder.is_dir():
        return records, bodies, left_alone
    real_root = os.path.realpath(root)
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        inside = Path(current).relative_to(root).as_posix()  # (once per folder, not per file)
        for name in sorted(files):
            if not name.endswith(".md") or name.startswith(".") or name in GENERATED_FILES:
                continue
            rel = name if inside == "." else f"{inside}/{name}"
            if detect_conflict_copy(rel) is not None:
                continue
            try:
                stat = os.lstat(os.path.join(current, name))  # noqa: PTH118
            except OSError:
                continue
            if not S_ISREG(stat.st_mode):  # a symlink, a FIFO, a device: never opened
                log.warning("dream.not_a_file", path=rel)
                continue
            old = cached.get(rel)
            kept = _kept_record(old, stat)
            if kept is not None:
                records[rel] = kept
                continue
            try:
                note, data = read_note_bytes(root, rel, real_root=real_root, markdown=False)
            except DreamdError as error:
                log.warning("dream.unreadable", path=rel, error=str(error))
                continue
            _keep(rel, stat, data, seen, read)
            record = read_record(rel, note, data, stat,
                                 old.get("seen") if isinstance(old, dict) else None)
            if note.problems:  # reported by sync; a file that does not read is left
                log.warning("dream.left_alone", path=rel, reason=note.problems[0].reason)
                if record is not None:
                    left_alone[rel] = record
                continue
            if record is not None:
                records[rel] = record
                bodies[rel] = note.body.strip()
    return records, bodies, left_alone

def _keep(path: str, stat: os.stat_result, data: bytes, seen: Seen | None, read: Read | None
          ) -> None:
    """Note the file just read in ``seen`` and ``read`` (:func:`gather`)."""
    if seen is not None:
        seen[path] = (stat.st_size, stat.st_mtime_ns, names_lineage(data))
    if read is not None:
        read[path] = (_identity(stat), data)


def _kept_record(old: object, stat: os.stat_result) -> MemoryRecord | None:
    """The last dream's record ``old`` of a file whose size and mtime it still has, else
    ``None`` (a record of another layout too: the file is read)."""
    if not (isinstance(old, dict) and old.get("size") == stat.st_size
            and old.get("mtime_ns") == stat.st_mtime_ns):
        return None
    try:
        return MemoryRecord(**old)
    except TypeError:
        return None


def refresh(root: Path, records: Mapping[str, MemoryRecord], written: Sequence[str],
            seen: Seen | None = None) -> dict[str, MemoryRecord]:
    """``records`` with the files in ``written`` read again (the others are as read);
    ``seen``: as :func:`gather`'s."""
    fresh = dict(records)
    real_root = os.path.realpath(root)
    for path in written:
        ahead = _stat_of(root / path)  # (a change during the read is not taken as seen)
        try:
            note, data = read_note_bytes(root, path, real_root=real_root, markdown=False)
            stat = (root / path).lstat()
        except (DreamdError, OSError):
            fresh.pop(path, None)
            continue
        if seen is not None and ahead == (stat.st_size, stat.st_mtime_ns):
            seen[path] = (stat.st_size, stat.st_mtime_ns, names_lineage(data))
        old = records.get(path)
        record = read_record(path, note, data, stat, old.seen if old else None)
        if record is None:
            fresh.pop(path, None)
        else:
            fresh[path] = record
    return fresh


def _stat_of(file: Path) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of ``file`` (not followed if a link), ``None`` when it has none."""
    try:
        stat = file.lstat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def read_body(root: Path, path: str, bodies: dict[str, str]) -> str:
    """The stripped body of the memory at ``path``, read once per dream (``bodies`` keeps
    what was read). Raises DreamdError for a file that does not read."""
    if path not in bodies:
        note, _ = read_note_bytes(root, path, markdown=False)
        bodies[path] = note.body.strip()
    return bodies[path]


def forget_record(state_dir: Path, key: str) -> bool:
    """Drop the record of the memory kept under ``key`` (:func:`ccb.model.memory_key`) from
    :data:`STATE_FILE` (``dreamd forget``: its name and description go with it); returns
    whether there was one. Raises ``OSError`` when the file cannot be written."""
    state = read_json_object(state_dir / STATE_FILE)
    records = state.get("memories")
    if not isinstance(records, dict):
        return False
    kept = {path: record for path, record in records.items()
            if not (isinstance(record, dict)
                    and memory_key(str(record.get("id") or "") or None, path) == key)}
    if len(kept) == len(records):
        return False
    write_json_atomic(state_dir / STATE_FILE, {**state, "memories": kept}, indent=None)
    return True
