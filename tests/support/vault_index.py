"""A vault folder written into a :class:`magma.store.MagmaStore` in one batch, without the
sync: what the graph tests build their graph from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ccb.model import FileEntry
from ccb.parse import parse_note
from magma.store import AttachmentRecord, MagmaStore, NoteRecord

__all__ = ["store_folder"]


def store_folder(store: MagmaStore, vault: Path, record_of: Callable[..., NoteRecord]) -> None:
    """Every file under ``vault`` into ``store`` in one batch: its notes parsed
    (``record_of`` makes each record), every other file an attachment, in path order."""
    files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file())
    notes = [record_of(parse_note(p, (vault / p).read_bytes())) for p in files
             if p.endswith(".md")]
    attachments = [AttachmentRecord(FileEntry(p, (vault / p).stat().st_size, 0, "attachment"),
                                    f"path:{p}") for p in files if not p.endswith(".md")]
    store.apply(upserts=notes, attachments=attachments)
