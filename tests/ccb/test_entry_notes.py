"""Entry files read as one memory note per entry (ccb.entry_notes)."""

from __future__ import annotations

from datetime import date

from ccb.entries import entry_key
from ccb.entry_notes import entry_notes, is_entry_note, is_entry_path, split_entry_path
from ccb.parse import parse_note

FILE = (
    "---\nentry_type: user\nowner: ana\ntags: [facts]\n---\n"
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;sup={old}-->\n"
    "- Works late <!--m:type=feedback;vf=someday-->\n"
).replace("{old}", entry_key("我在余杭区"))


def _read(text: str, path: str = "Memory/facts.md"):  # type: ignore[no-untyped-def]
    data = text.encode()
    return parse_note(path, data), data


def test_each_entry_becomes_a_memory_note_at_its_entry_path() -> None:
    note, data = _read(FILE)
    assert is_entry_note(note, in_scope=True)
    file_note, (old, new, late), problems = entry_notes(note, data)
    assert file_note.body == "" and file_note.path == "Memory/facts.md"
    assert old.path == f"Memory/facts.md#{entry_key('我在余杭区')}"
    assert split_entry_path(old.path) == ("Memory/facts.md", entry_key("我在余杭区"))
    assert old.memory is not None and new.memory is not None and late.memory is not None
    assert (old.memory.type, old.memory.subject, old.memory.owner) == ("user", "所在地", "ana")
    # named by the newer entry's sup: valid until the newer began
    assert old.memory.valid_to == date(2026, 6, 20)
    assert old.properties["superseded_by"] == new.path
    assert new.memory.supersedes == (old.path,) and new.memory.valid_to is None
    assert old.properties["hit_count"] == 2 and old.properties["confidence"] == 0.9
    assert late.memory.type == "feedback" and late.memory.valid_from is None
    assert [p.reason for p in problems] == [
        "metadata vf='someday': Invalid isoformat string: 'someday'"]
    assert old.tags == ("facts",)


def test_an_entrys_hash_changes_with_its_line_or_its_successor_only() -> None:
    note, data = _read(FILE)
    _, before, _ = entry_notes(note, data)
    note3, data3 = _read(FILE.replace("---\n- ", "---\n# Added above\n\n- ").replace(
        "Works late", "Works early"))
    _, third, _ = entry_notes(note3, data3)
    assert [n.content_hash for n in third[:2]] == [n.content_hash for n in before[:2]]
    assert third[2].content_hash != before[2].content_hash


def test_entry_paths_are_told_from_file_paths() -> None:
    assert is_entry_path("Memory/facts.md#3f2a9c1d") and is_entry_path("claude:a.md#3f2a9c1d-2")
    assert not is_entry_path("Memory/facts.md") and not is_entry_path("notes/a#b.md")
    assert not is_entry_path("Memory/facts.md#Heading")
