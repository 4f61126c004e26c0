"""Entry files ⇄ memory files (ccb.entry_convert): lossless for what dreamd writes."""

from __future__ import annotations

from datetime import UTC, date, datetime

from entry_corpus import generate

from ccb.entries import entry_key, parse_entry_file
from ccb.entry_convert import ENTRIES_HEADER, entries_to_memories, memories_to_entries
from ccb.memory_file import NewMemory, render_memory
from ccb.parse import parse_note

NOW = datetime(2026, 7, 1, 9, 30, tzinfo=UTC)
def test_a_thousand_entries_in_fifty_files_come_back_byte_for_byte() -> None:
    entries = generate(seed=22, files=50, per_file=20)
    files = entries_to_memories(entries, now=NOW)
    assert files.lossy == ()
    assert len(files.files) == 1000
    back = memories_to_entries(files.files)
    assert back.lossy == ()
    assert back.files == entries


def test_memory_files_carry_the_fields_and_read_as_memories() -> None:
    entries = {"facts.md": (ENTRIES_HEADER + "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;"
                            "conf=0.90;hc=2-->\n- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;"
                            f"sup={entry_key('我在余杭区')}-->\n").encode()}
    files = entries_to_memories(entries, now=NOW).files
    assert sorted(files) == ["facts/0001-我在余杭区.md", "facts/0002-我在西湖区.md"]
    old = parse_note("facts/0001-我在余杭区.md", files["facts/0001-我在余杭区.md"])
    new = parse_note("facts/0002-我在西湖区.md", files["facts/0002-我在西湖区.md"])
    assert old.memory is not None and new.memory is not None
    assert (old.memory.type, old.memory.subject, old.memory.valid_from) == (
        "project", "所在地", date(2026, 5, 2))
    assert new.memory.supersedes == ("0001-我在余杭区",)
    assert old.body == "我在余杭区\n"
    # the same export twice is the same bytes (ids come from the entry, not the clock)
    assert entries_to_memories(entries, now=NOW).files == files


def test_an_edit_of_the_memory_file_reaches_the_entry() -> None:
    entries = {"facts.md": (ENTRIES_HEADER + "- Works late <!--m:subj=作息;conf=0.90;hc=3-->\n"
                            ).encode()}
    (path, data), = entries_to_memories(entries, now=NOW).files.items()
    edited = data.replace(b"subject: \xe4\xbd\x9c\xe6\x81\xaf", b"subject: habits").replace(
        b"valid_to:", b"valid_to: 2026-08-01")
    back = memories_to_entries({path: edited}).files["facts.md"].decode()
    assert back == ENTRIES_HEADER + (
        "- Works late <!--m:subj=habits;conf=0.90;hc=3;vt=2026-08-01-->\n")


def _memory(name: str, body: str, **more: object) -> bytes:
    return render_memory(NewMemory(
        name=name, description=more.pop("description", name),  # type: ignore[arg-type]
        type=more.pop("type", "feedback"), id="01JCW3ZQ8N6X0V4B7K2M5P9R1T",  # type: ignore[arg-type]
        created=datetime(2026, 6, 15, 3, 1, tzinfo=UTC),
        updated=datetime(2026, 6, 20, 9, 12, 44, tzinfo=UTC), body=body, **more))  # type: ignore[arg-type]


def test_memory_files_dreamd_wrote_come_back_byte_for_byte() -> None:
    memories = {
        "tests-hit-a-real-database.md": _memory(
            "Tests hit a real database", "Integration tests must use a real database.\n\n"
            "**Why:** mocks hid a broken migration.\n", description="Never mocks",
            version=3, subject="testing.database", valid_from=date(2026, 6, 15),
            supersedes=("tests-may-use-mocks",), pinned=True, source="user",
            owner="alice/claude-code"),
        "我喜欢深色主题.md": _memory("我喜欢深色主题", "我喜欢深色主题\n", type="user",
                                   source=None),
        "renamed-by-hand.md": _memory("Deploys on Fridays", "Never deploy on Fridays.\n",
                                      expires=date(2027, 1, 1)),
    }
    entries = memories_to_entries(memories)
    assert entries.lossy == ()
    assert sorted(entries.files) == ["feedback.md", "user.md"]
    user = parse_entry_file("user.md", entries.files["user.md"]).entries
    assert [e.text for e in user] == ["我喜欢深色主题"]
    back = entries_to_memories(entries.files, now=NOW)
    assert back.files == memories


def test_what_would_not_come_back_is_named() -> None:
    entries = {"notes.md": b"# Facts\n\n- one <!--m:subj=x-->\n* two\n",
               "bad.md": b"- caf\xe9\n"}
    converted = entries_to_memories(entries, now=NOW)
    assert [path for path, _ in converted.lossy] == ["bad.md", "notes.md"]
    assert len(converted.files) == 2
    hand = _memory("Hand edited", "Text.\n").replace(b"pinned: false\n",
                                                     b"pinned: false\nstatus: archived\n")
    result = memories_to_entries({"hand-edited.md": hand, "plain.md": b"# just a note\n"})
    assert [path for path, _ in result.lossy] == ["hand-edited.md", "plain.md"]
    assert list(result.files) == ["feedback.md"]
