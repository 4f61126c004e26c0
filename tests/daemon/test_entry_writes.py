"""Entry writes through the one writer (daemon.entry_writes): minimal edits, as `git diff`
sees them, on real files; then indexed like any write."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from ccb.entries import entry_key, format_entry_file, parse_entry_file, supersede_entry
from ccb.owner import parse_owner
from ccb.writer import NoteWriter
from config.errors import EntryEditError, MemoryNotFoundError, SecretRefusedError
from daemon.app import App
from daemon.entry_writes import add_entry_at, forget_entry_at, supersede_entry_at

Builder = Callable[..., tuple[App, object]]
FACTS = (
    "---\ntags: [facts]\n---\n# 关于我\n\n"
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- Prefers Go and dark themes <!--m:subj=tools-->\n"
    "- Works late\n"
)
YUHANG = f"Memory/facts.md#{entry_key('我在余杭区')}"


@pytest.fixture
def writer(tmp_path: Path) -> NoteWriter:
    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    (tmp_path / "vault" / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    return NoteWriter(tmp_path / "vault", tmp_path / "state",
                      clock=lambda: datetime(2026, 6, 20, 9, tzinfo=UTC))


def _git_diff(before: bytes, after_file: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    """``(removed, added)`` lines of ``git diff --no-index`` between ``before`` and the file."""
    old = tmp_path / "before.md"
    old.write_bytes(before)
    run = subprocess.run(["git", "diff", "--no-index", "--no-color", "-U0", str(old),
                          str(after_file)], capture_output=True, check=False, timeout=30)
    lines = run.stdout.decode().splitlines()
    body = [x for x in lines if not x.startswith(("---", "+++", "@@", "diff", "index"))]
    return [x[1:] for x in body if x.startswith("-")], [x[1:] for x in body if x.startswith("+")]


def test_supersession_is_one_modified_line_and_one_added(writer: NoteWriter, tmp_path: Path
                                                         ) -> None:
    facts = writer.root / "Memory" / "facts.md"
    before = facts.read_bytes()
    done = supersede_entry_at(writer, YUHANG, "我在西湖区", on=date(2026, 6, 20))
    assert done.outcome.status == "written"
    assert done.entry == f"Memory/facts.md#{entry_key('我在西湖区')}"
    removed, added = _git_diff(before, facts, tmp_path)
    assert removed == ["- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->"]
    assert added == [
        "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2;vt=2026-06-20-->",
        f"- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90;sup={entry_key('我在余杭区')}-->",
    ]
    assert facts.read_bytes().startswith(before.split(b"- \xe6")[0])  # frontmatter untouched


def test_a_users_edit_between_read_and_write_is_merged_not_lost(writer: NoteWriter) -> None:
    facts = writer.root / "Memory" / "facts.md"
    base = facts.read_bytes()
    ours, _ = supersede_entry(parse_entry_file("Memory/facts.md", base),
                              entry_key("我在余杭区"), "我在西湖区", on=date(2026, 6, 20))
    # the user adds a fact in Obsidian after dreamd read the file, before it writes
    theirs = base.replace("# 关于我\n".encode(), "# 关于我\n\n- Drinks oolong tea\n".encode())
    facts.write_bytes(theirs)
    outcome = writer.write("Memory/facts.md", format_entry_file(ours), base=base)
    text = facts.read_text(encoding="utf-8")
    assert outcome.status == "merged", outcome
    assert "- Drinks oolong tea\n" in text and "vt=2026-06-20-->" in text and "我在西湖区" in text


def test_add_and_forget_touch_one_line_each(writer: NoteWriter, tmp_path: Path) -> None:
    facts = writer.root / "Memory" / "facts.md"
    before = facts.read_bytes()
    added = add_entry_at(writer, "Memory/facts.md", "Tests hit a real database",
                         [("subj", "testing.database")])
    assert _git_diff(before, facts, tmp_path) == (
        [], ["- Tests hit a real database <!--m:subj=testing.database-->"])
    middle = facts.read_bytes()
    gone = forget_entry_at(writer, f"Memory/facts.md#{entry_key('Prefers Go and dark themes')}")
    assert _git_diff(middle, facts, tmp_path) == (
        ["- Prefers Go and dark themes <!--m:subj=tools-->"], [])
    assert gone.outcome.status == "written"
    entries = parse_entry_file("f.md", facts.read_bytes()).entries
    assert [e.text for e in entries] == ["我在余杭区", "Works late", "Tests hit a real database"]
    assert added.entry.endswith(entry_key("Tests hit a real database"))
    # a new file is created with its first entry
    new = add_entry_at(writer, "Memory/习惯.md", "每天晚上十一点睡觉")
    assert new.outcome.status == "created"
    created = (writer.root / "Memory" / "习惯.md").read_text(encoding="utf-8")
    assert created == "- 每天晚上十一点睡觉\n"


def test_bad_requests_write_nothing(writer: NoteWriter) -> None:
    facts = writer.root / "Memory" / "facts.md"
    before = facts.read_bytes()
    with pytest.raises(EntryEditError, match="not an entry path"):
        supersede_entry_at(writer, "Memory/facts.md", "x", on=date(2026, 6, 20))
    with pytest.raises(EntryEditError, match="no entry"):
        forget_entry_at(writer, "Memory/facts.md#00000000")
    with pytest.raises(MemoryNotFoundError, match="no such entry file"):
        forget_entry_at(writer, "Memory/none.md#00000000")
    with pytest.raises(SecretRefusedError):
        add_entry_at(writer, "Memory/facts.md",
                     "deploy key is AKIAIOSFODNN7EXAMPLX with secret "
                     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ")
    with pytest.raises(EntryEditError, match="one non-empty line"):
        add_entry_at(writer, "Memory/facts.md", "two\nlines")
    assert facts.read_bytes() == before


def test_a_superseded_entry_leaves_search_after_the_write(vault: Path, make_app: Builder
                                                         ) -> None:
    (vault / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    done = supersede_entry_at(app.writer, YUHANG, "我在西湖区", on=date(2026, 6, 20))
    app.indexing.index_now(["Memory/facts.md"])
    now = datetime(2026, 7, 1, tzinfo=UTC)
    found = [h.path for h in app.search("我在", count_recall=False, now=now)]
    assert done.entry in found and YUHANG not in found
    # a search never writes hc (recalls live in MAGMA)
    before = (vault / "Memory" / "facts.md").read_bytes()
    app.search("我在余杭区", now=now)
    assert (vault / "Memory" / "facts.md").read_bytes() == before


def test_another_owners_entry_file_is_not_found(writer: NoteWriter) -> None:
    facts = writer.root / "Memory" / "facts.md"
    facts.write_text(FACTS.replace("tags: [facts]", "tags: [facts]\nowner: ana"),
                     encoding="utf-8")
    with pytest.raises(MemoryNotFoundError):
        forget_entry_at(writer, YUHANG, owner=parse_owner("bob"))
    assert forget_entry_at(writer, YUHANG, owner=parse_owner("ana")).outcome.status == "written"
