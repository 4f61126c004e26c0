"""Entry files in the index: each entry is a memory row at ``file.md#key``, found by search
and context, hidden once superseded, and kept in step as lines change.

Real files and a real LanceDB store; the embedder is the token-hash fake (these tests are
about what is indexed and hidden, not about meaning).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

from ccb.entries import entry_key
from ccb.model import FileEntry
from daemon.app import App
from daemon.context import build_context
from daemon.sync import plan_sync, stale_entry_paths
from magma.store import IndexedFile

Builder = Callable[..., tuple[App, object]]
NOW = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

FACTS = (
    "# 关于我\n\n"
    "- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- Prefers the kiln at cone six for stoneware <!--m:subj=kiln.cone-->\n"
    "- Drinks oolong tea every afternoon\n"
)
YUHANG = f"Memory/facts.md#{entry_key('我在余杭区工作')}"
XIHU = f"Memory/facts.md#{entry_key('我在西湖区工作')}"
OOLONG = f"Memory/facts.md#{entry_key('Drinks oolong tea every afternoon')}"


def _entry_rows(app: App) -> dict[str, str | None]:
    return {p: row.memory_type for p, row in app.store.file_index().items() if "#" in p}


def _paths(app: App, query: str, as_of: date | None = None) -> list[str]:
    return [h.path for h in app.search(query, count_recall=False, now=NOW, as_of=as_of)]


def test_each_entry_is_indexed_as_a_memory_and_found(vault: Path, make_app: Builder) -> None:
    (vault / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    report = app.sync()
    rows = _entry_rows(app)
    assert len(rows) == 3 and set(rows.values()) == {"project"}
    assert YUHANG in rows and OOLONG in rows
    assert _paths(app, "余杭区工作")[0] == YUHANG
    assert OOLONG in _paths(app, "oolong tea afternoon")[:3]
    # the file stays a note of the index, without its text (the entries carry it)
    assert "Memory/facts.md" in app.store.file_index()
    assert "Memory/facts.md" not in _paths(app, "oolong tea afternoon")
    assert report.problems == () or all(p.kind != "entry" for p in report.problems)
    props = app.store.memory_properties([YUHANG])[YUHANG]
    assert props["subject"] == "所在地" and props["valid_from"] == "2026-05-02"
    assert props["confidence"] == 0.9 and props["entry_of"] == "Memory/facts.md"


def test_a_superseded_entry_is_hidden_and_shown_with_all(vault: Path, make_app: Builder
                                                         ) -> None:
    facts = vault / "Memory" / "facts.md"
    facts.write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    key = entry_key("我在余杭区工作")
    facts.write_text(FACTS.replace("hc=2-->", "hc=2;vt=2026-06-20-->") +
                     f"- 我在西湖区工作 <!--m:subj=所在地;vf=2026-06-20;sup={key}-->\n",
                     encoding="utf-8")
    app.sync()
    found = _paths(app, "区工作")
    assert XIHU in found and YUHANG not in found
    hidden = {h.path: h for h in app.search("区工作", count_recall=False, now=NOW,
                                           include_hidden=True)}
    assert YUHANG in hidden
    # as of a day before the move, the old fact held
    assert YUHANG in _paths(app, "余杭区工作", as_of=date(2026, 6, 1))


def test_sup_alone_supersedes(vault: Path, make_app: Builder) -> None:
    facts = vault / "Memory" / "facts.md"
    key = entry_key("Drinks oolong tea every afternoon")
    facts.write_text(FACTS + f"- Drinks green tea every afternoon <!--m:sup={key}-->\n",
                     encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    props = app.store.memory_properties([OOLONG])[OOLONG]
    assert props["status"] == "superseded"
    assert OOLONG not in _paths(app, "tea every afternoon")


def test_lines_removed_and_files_deleted_take_their_rows_along(vault: Path, make_app: Builder
                                                               ) -> None:
    facts = vault / "Memory" / "facts.md"
    facts.write_text(FACTS, encoding="utf-8")
    app, fake = make_app(vault)
    app.sync()
    calls = len(fake.calls)  # type: ignore[attr-defined]
    again = app.sync()
    assert again.chunks_embedded == 0 and len(fake.calls) == calls  # type: ignore[attr-defined]
    facts.write_text(FACTS.replace("- Drinks oolong tea every afternoon\n", ""), encoding="utf-8")
    edited = app.sync()
    assert edited.modified == 1 and edited.deleted == 0
    kiln = entry_key("Prefers the kiln at cone six for stoneware")
    assert set(_entry_rows(app)) == {YUHANG, f"Memory/facts.md#{kiln}"}
    facts.unlink()
    app.indexing.index_now(["Memory/facts.md"])  # the watcher's path: one file gone
    assert _entry_rows(app) == {}


def test_only_marked_files_in_scope_are_entry_files(vault: Path, make_app: Builder) -> None:
    (vault / "Projects" / "plain.md").write_text(FACTS, encoding="utf-8")
    (vault / "Projects" / "typed.md").write_text(
        "---\ntype: entries\nentry_type: user\n---\n- Likes dark themes\n", encoding="utf-8")
    (vault / "Memory" / "list.md").write_text("- a plain list\n- of things\n", encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    assert _entry_rows(app) == {f"Projects/typed.md#{entry_key('Likes dark themes')}": "user"}


def test_user_entries_are_resident_in_every_context(vault: Path, make_app: Builder) -> None:
    (vault / "Memory" / "me.md").write_text(
        "---\ntype: entries\nentry_type: user\n---\n- 我喜欢深色主题 <!--m:subj=主题-->\n"
        "- Works late <!--m:vt=2026-06-01-->\n", encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    context = build_context(app, "", now=NOW, count_recall=False)
    resident = [e.path for e in context.entries if e.section == "resident"]
    assert f"Memory/me.md#{entry_key('我喜欢深色主题')}" in resident
    assert f"Memory/me.md#{entry_key('Works late')}" not in resident  # no longer holds
    assert "我喜欢深色主题" in context.text


def test_check_finds_no_drift_and_context_carries_the_entry(vault: Path, make_app: Builder
                                                            ) -> None:
    (vault / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    report = app.consistency().check()
    assert not [f for f in report.findings if "#" in getattr(f.drift, "path", "")], report.findings
    context = build_context(app, "oolong tea afternoon", now=NOW, count_recall=False)
    assert OOLONG in [e.path for e in context.entries]
    assert "Drinks oolong tea every afternoon" in context.text


def _indexed(path: str) -> IndexedFile:
    return IndexedFile(path, "note", 1, 1, "h", "id", None)


def test_entry_rows_follow_their_file() -> None:
    index = {p: _indexed(p) for p in (
        "Memory/a.md", "Memory/a.md#00000001", "Memory/a.md#00000002",
        "Memory/b.md", "Memory/b.md#00000003")}
    plan = plan_sync([FileEntry("Memory/a.md", 1, 1, "note")], index)
    assert plan.deleted == ("Memory/b.md",)  # entry rows are not files
    assert stale_entry_paths(index, plan.deleted, {"Memory/a.md": {"Memory/a.md#00000001"}},
                             ["Memory/a.md"]) == ["Memory/a.md#00000002", "Memory/b.md#00000003"]
    # a file read again that is no longer an entry file loses all its entry rows
    assert stale_entry_paths(index, (), {}, ["Memory/a.md"]) == [
        "Memory/a.md#00000001", "Memory/a.md#00000002"]
