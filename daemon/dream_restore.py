"""Restore: bring an archived or superseded memory back, and remember that a user did.

``dreamd restore NAME`` undoes what a dream (or ``remember``'s supersession) set aside: the
archive keys go, the previous status comes back, and the successor no longer ``supersedes``
it. A restored memory is recorded in ``<state>/restored.json`` (path → content hash): the dream
leaves it out of consolidation and the lifecycle while it stays as restored, so the next dream
does not archive it again; an edit by the user makes it ordinary again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from ccb.frontmatter_edit import set_properties
from ccb.model import PropertyValue
from ccb.parse import parse_note
from ccb.writer import NoteWriter
from config.errors import MemoryNotFoundError
from consistency.lifecycle import is_archived

__all__ = ["ARCHIVE_KEYS", "RESTORED_FILE", "Restorer", "unarchived"]

log = structlog.get_logger("dreamd.dream")

#: State file of the memories restored by hand: ``{vault path: content hash}``.
RESTORED_FILE = "restored.json"
#: Properties a dream writes to archive a memory; ``dreamd restore`` removes them.
ARCHIVE_KEYS = ("archived", "archived_reason", "merged_into", "superseded_by", "status_before")


def unarchived(path: str, data: bytes) -> bytes | None:
    """The bytes of the archived memory file ``data`` (at ``path``) brought back: the archive
    keys (:data:`ARCHIVE_KEYS`) and ``valid_to`` removed, the previous status put back
    (``None``: not an archived memory). Pure; :meth:`Restorer.restore` writes it."""
    note = parse_note(path, data)
    if note.memory is None or not is_archived(note.memory.status):
        return None
    before = note.properties.get("status_before")
    remove = [k for k in ARCHIVE_KEYS if k in note.properties]
    updates: dict[str, PropertyValue] = {}
    if isinstance(before, str) and before.strip() and not is_archived(before):
        updates["status"] = before
    else:
        remove.append("status")
    if note.memory.valid_to is not None:
        remove.append("valid_to")
    return set_properties(data, updates, remove=remove, path=path)


class Restorer:
    """Restores memories of one vault and keeps the record of those restored."""

    def __init__(self, *, writer: NoteWriter, memory_folder: str, state_dir: Path) -> None:
        self.writer = writer
        self.root = writer.root
        self.memory_folder = memory_folder.strip("/")
        self.state_dir = state_dir

    def restore(self, stored_path: str) -> bool:
        """Bring the archived memory at ``stored_path`` back: remove the archive keys, put
        back the previous status. Returns False when it was not archived."""
        data = self.writer.read(stored_path)
        if data is None:
            raise MemoryNotFoundError(f"restore: {stored_path} is gone")
        note = parse_note(stored_path, data)
        if note.memory is None:
            return False
        if not is_archived(note.memory.status):
            if note.memory.valid_to is None:
                return False
            return self._restore_superseded(stored_path, data)  # closed by `remember`
        restored = unarchived(stored_path, data)
        assert restored is not None
        outcome = self.writer.write(stored_path, restored, base=data, origin="api",
                                    change="restored from the archive")
        successor = note.properties.get("superseded_by")
        if isinstance(successor, str):
            self._unlink_supersedes(successor, Path(stored_path).stem)
        kept = self.restored()
        kept[stored_path] = outcome.content_hash
        write_json_atomic(self.state_dir / RESTORED_FILE, kept)
        return True

    def _restore_superseded(self, stored_path: str, data: bytes) -> bool:
        """Undo a supersession made when a contradicting memory was remembered: clear
        ``valid_to`` and take this memory out of the successor's ``supersedes``."""
        restored = set_properties(data, {}, remove=("valid_to",), path=stored_path)
        outcome = self.writer.write(stored_path, restored, base=data, origin="api",
                                    change="restored: no longer superseded")
        stem = Path(stored_path).stem
        folder = self.root / self.memory_folder
        for candidate in sorted(folder.glob("*.md")):
            if candidate.is_symlink() or not candidate.is_file():
                continue
            text = candidate.read_bytes()
            if f"[[{stem}".encode() in text:
                rel = candidate.relative_to(self.root).as_posix()
                self._unlink_supersedes(f"[[{candidate.stem}]]", stem)
                log.info("dream.restore_unlinked", path=rel, restored=stored_path)
        kept = self.restored()
        kept[stored_path] = outcome.content_hash
        write_json_atomic(self.state_dir / RESTORED_FILE, kept)
        return True

    def _unlink_supersedes(self, link: str, stem: str) -> None:
        """Take ``[[stem]]`` out of the ``supersedes`` of the memory ``link`` names (the one
        that superseded a memory being restored), so the two do not both claim the fact."""
        target = link.strip().removeprefix("[[").removesuffix("]]").split("|")[0].strip()
        path = f"{self.memory_folder}/{target}.md"
        data = self.writer.read(path)
        if not target or data is None:
            return
        note = parse_note(path, data)
        if note.memory is None:
            return
        kept = [t for t in note.memory.supersedes if t.removesuffix(".md") != stem]
        if len(kept) == len(note.memory.supersedes):
            return
        values: list[PropertyValue] = [f"[[{t}]]" for t in kept]
        edited = set_properties(data, {"supersedes": values[0] if len(values) == 1 else values}
                                if values else {}, remove=() if values else ("supersedes",),
                                path=path)
        self.writer.write(path, edited, base=data, origin="api",
                          change=f"no longer supersedes {stem} (restored)")

    def carry(self, hashes: Mapping[str, str], written: Sequence[str]) -> None:
        """A restored memory the dream itself edited (a link check, a promotion) stays
        restored: its record follows the dream's write."""
        kept = self.restored()
        moved = {p: hashes[p] for p in written if p in kept and p in hashes}
        if moved:
            write_json_atomic(self.state_dir / RESTORED_FILE, {**kept, **moved})

    def restored(self) -> dict[str, str]:
        """``{path: hash}`` of memories restored by hand: left out of consolidation and the
        lifecycle while they stay as restored (an edit makes them ordinary again)."""
        data = read_json_object(self.state_dir / RESTORED_FILE)
        return {str(k): str(v) for k, v in data.items()}
