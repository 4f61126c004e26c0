"""Forgets begun and not finished: a ``dreamd forget`` cut short (kill -9, a power cut, a full
disk) is finished by running it again, and never mistaken for another device's memory.

``forget`` erases a memory in steps — its file, the links other memories wrote to it, the
diary lines that name it, dreamd's recent copies, its index rows and the old table versions,
the vectors cached of its chunks, its version history, its recalls and dream records —, and
a kill between two steps leaves some of them. Before the first step it writes what it is
about to erase into ``forgets-pending.json`` in the state folder (mode 0600): the memory's
history key, its vault path, its owner, the hash of its file's bytes and the content hashes
of its chunks (no text besides the path, whose file name is the memory's name slugged, as
every other record of the path). The entry goes once every step is done. While it is there:

- ``dreamd forget`` named by the same id, path, file name or name finds the memory in it when
  nothing else knows it any more (its file and versions gone, its rows not yet purged) and
  does every step again; each does nothing when done already;
- ``dreamd check`` reports ``forget_unfinished`` instead of what the half-erased memory looks
  like otherwise (an orphaned row, a memory "made on another device"), and ``check --fix``
  finishes the forget — unless the file is still there and was edited since the forget
  began: it is then the user's to forget again or keep (:meth:`ForgetJournal.drop`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import filelock

from ccb.atomic import TEMP_SUFFIX, read_json_object, write_bytes_atomic
from ccb.memory_file import slugify
from ccb.names import nfc_key
from daemon.lock import held

__all__ = ["PENDING_FORGETS_FILE", "ForgetJournal", "PendingForget"]

#: The journal's file in the state folder.
PENDING_FORGETS_FILE = "forgets-pending.json"
#: Seconds a process waits for another one's read-modify-write of the journal.
_LOCK_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class PendingForget:
    """One forget begun: the memory's history ``key`` (its id, or ``path:…``), its vault
    ``path``, its ``owner`` (``None``: shared), the sha256 of its file's bytes when the forget
    began (``None``: the file was gone already), the content hashes of its chunks in the
    index (``chunks``), and when it began (``since``, ISO 8601 UTC)."""

    key: str
    path: str
    owner: str | None
    file_hash: str | None
    chunks: tuple[str, ...]
    since: str

    @property
    def stem(self) -> str:
        """The forgotten file's name without ``.md``: what links to it are written with."""
        return Path(self.path).stem

    def named_by(self, id_or_name: str) -> bool:
        """Does ``id_or_name`` name this memory: its key, id, vault path, file name, file
        name without ``.md``, or a name whose slug is that (in NFC, case not counted)?"""
        wanted = nfc_key(id_or_name.strip()).casefold()
        if not wanted:
            return False
        stem = nfc_key(self.stem).casefold()
        names = {nfc_key(self.key).casefold(), nfc_key(self.path).casefold(),
                 nfc_key(self.path.rsplit("/", 1)[-1]).casefold(), stem}
        return wanted in names or nfc_key(slugify(id_or_name.strip())).casefold() == stem


def _pending_of(key: str, raw: object) -> PendingForget | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
        return None
    owner, file_hash, chunks = raw.get("owner"), raw.get("file_hash"), raw.get("chunks")
    return PendingForget(
        key=key, path=raw["path"], owner=owner if isinstance(owner, str) else None,
        file_hash=file_hash if isinstance(file_hash, str) else None,
        chunks=tuple(c for c in chunks if isinstance(c, str)) if isinstance(chunks, list)
        else (), since=str(raw.get("since", "")))


class ForgetJournal:
    """The forgets begun in one state folder (the module docstring). Safe across processes:
    each change is a read-modify-write under a file lock, written atomically and durably."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / PENDING_FORGETS_FILE
        self._lock = filelock.FileLock(state_dir / "forgets-pending.lock",
                                       timeout=_LOCK_TIMEOUT_S)

    def pending(self) -> dict[str, PendingForget]:
        """``{history key: forget begun}`` of every forget not finished."""
        if not self.path.exists():  # (the common case: no file, nothing to parse)
            return {}
        found = {key: _pending_of(key, raw) for key, raw in read_json_object(self.path).items()}
        return {key: p for key, p in found.items() if p is not None}

    def find(self, id_or_name: str) -> PendingForget | None:
        """The unfinished forget ``id_or_name`` names (:meth:`PendingForget.named_by`); of
        several, the one begun last."""
        named = [p for p in self.pending().values() if p.named_by(id_or_name)]
        return max(named, key=lambda p: p.since) if named else None

    def begin(self, key: str, path: str, *, owner: str | None, file_hash: str | None,
              chunks: Collection[str]) -> PendingForget:
        """Write down the forget of ``key`` before its first step (a forget begun before,
        begun again: the chunk hashes of both, the first owner and file hash known). Raises
        ``OSError`` when the state folder cannot be written (then nothing is erased)."""
        with self._locked():
            entries = read_json_object(self.path) if self.path.exists() else {}
            before = _pending_of(key, entries.get(key))
            if before is not None:
                chunks = {*before.chunks, *chunks}
                file_hash = before.file_hash or file_hash
                owner = before.owner or owner
            made = PendingForget(key, path, owner, file_hash, tuple(sorted(set(chunks))),
                                 before.since if before is not None
                                 else datetime.now(UTC).isoformat(timespec="seconds"))
            entries[key] = {k: v for k, v in asdict(made).items() if k != "key"}
            self._save(entries)
            return made

    def drop(self, key: str) -> None:
        """The forget of ``key`` is done (or the user kept the memory): its entry goes, and
        the temp files of writes of the journal that a kill cut short (they hold paths)."""
        with self._locked():
            entries = read_json_object(self.path) if self.path.exists() else {}
            if entries.pop(key, None) is not None:
                self._save(entries)
            self._sweep()

    def _save(self, entries: dict[str, object]) -> None:
        if not entries:
            self.path.unlink(missing_ok=True)
            return
        text = json.dumps(entries, ensure_ascii=False, indent=1) + "\n"
        write_bytes_atomic(self.path, text.encode("utf-8"), mode=0o600)

    def _sweep(self) -> None:
        """Delete the journal's temp files (``.forgets-pending.json.<random>.dreamd-tmp``):
        under the lock every one is a write a kill cut short."""
        for temp in self.path.parent.glob(f".{self.path.name}.*{TEMP_SUFFIX}"):
            temp.unlink(missing_ok=True)

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return held(self._lock, "forget", _LOCK_TIMEOUT_S)
