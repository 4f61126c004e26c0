"""MemoryIndexKeeper.text_of: what MEMORY.md holds, with the entries it keeps between builds."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from ccb.memory_file import NewMemory, render_memory
from ccb.model import Note
from ccb.parse import parse_note
from ccb.writer import NoteWriter
from daemon.memory_index_keeper import MemoryIndexKeeper, index_entries, index_fields

AT = datetime(2026, 11, 1, tzinfo=UTC)


def _note(path: str, name: str, *, valid_to: str | None = None) -> tuple[str, Note]:
    data = render_memory(NewMemory(name=name, description=f"about {name}", type="project",
                                   id=f"id-{name}", created=AT, updated=AT, body=name + "\n"))
    if valid_to:
        data = data.replace(b"valid_to:\n", f"valid_to: {valid_to}\n".encode())
    return path, parse_note(path, data)


def _fresh(keeper: MemoryIndexKeeper, notes: list[tuple[str, Note]], today: date) -> bytes:
    """What the pure build gives: every entry judged anew."""
    entries = index_entries(keeper.memory_folder, (
        (path, index_fields(note)) for path, note in notes if note.memory), today)
    return keeper.render(entries)


def test_kept_entries_give_what_a_fresh_build_gives_across_edits_and_days(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    keeper = MemoryIndexKeeper(writer=NoteWriter(tmp_path / "vault", tmp_path / "state"),
                               memory_folder="Memory", record=None)
    notes = [_note(f"Memory/m{i}.md", f"memory {i}") for i in range(5)]
    notes.append(_note("Memory/ends.md", "ends soon", valid_to="2026-12-02"))
    day = date(2026, 12, 1)
    first, _ = keeper.text_of(notes, day)
    assert first == _fresh(keeper, notes, day) and b"ends soon" in first
    notes[0] = _note("Memory/m0.md", "memory zero, renamed")  # an edit: a new content hash
    del notes[3]
    edited, _ = keeper.text_of(notes, day)
    assert edited == _fresh(keeper, notes, day)
    assert b"renamed" in edited and b"memory 3" not in edited
    later, _ = keeper.text_of(notes, date(2026, 12, 2))  # the day valid_to ends it
    assert later == _fresh(keeper, notes, date(2026, 12, 2)) and b"ends soon" not in later
