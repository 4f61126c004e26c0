"""Entries in a dream (daemon.dream_entries): lines of an entry file are merged and
superseded like memory files, each by one edit of its own line; real files, a real store.

The embedder is the token-hash fake (conftest): consolidation decides by content hash,
the words, type and subject, not by meaning.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ccb.entries import entry_key
from daemon.app import App

Builder = Callable[..., tuple[App, object]]
NOW = datetime(2026, 6, 21, 9, 0, tzinfo=UTC)

FACTS = (
    "# 关于我\n\n"
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- Run the linter before every commit <!--m:subj=lint;vf=2026-03-01-->\n"
    "- Drinks oolong tea every afternoon\n"
    "- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90-->\n"
    "- run the linter before every commit. <!--m:subj=lint;vf=2026-04-01-->\n"
)
LINT = entry_key("Run the linter before every commit")
LINT_AGAIN = entry_key("run the linter before every commit.")
YUHANG, XIHU = entry_key("我在余杭区"), entry_key("我在西湖区")


def _diff(before: bytes, after: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    old = tmp_path / "before.md"
    old.write_bytes(before)
    run = subprocess.run(["git", "diff", "--no-index", "--no-color", "-U0", str(old),
                          str(after)], capture_output=True, check=False, timeout=30)
    body = [x for x in run.stdout.decode().splitlines()
            if not x.startswith(("---", "+++", "@@", "diff", "index"))]
    return [x[1:] for x in body if x.startswith("-")], [x[1:] for x in body if x.startswith("+")]


def test_a_dream_merges_and_supersedes_entries_one_line_each(
        vault: Path, make_app: Builder, tmp_path: Path) -> None:
    facts = vault / "Memory" / "facts.md"
    facts.write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    before = facts.read_bytes()
    report = app.dreamer(clock=lambda: NOW).dream(force=True)
    assert report.plan.counts["merged"] >= 1 and report.plan.counts["superseded"] >= 1
    removed, added = _diff(before, facts, tmp_path)
    assert sorted(removed) == sorted([
        "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->",
        "- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90-->",
        "- run the linter before every commit. <!--m:subj=lint;vf=2026-04-01-->"])
    assert sorted(added) == sorted([
        "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2;vt=2026-06-20-->",
        f"- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90;sup={YUHANG}-->",
        f"- run the linter before every commit. <!--m:subj=lint;vf=2026-04-01;"
        f"merged_into={LINT}-->"])
    # the merged line and the superseded one are hidden; the keepers are found
    found = [h.path for h in app.search("linter before every commit", count_recall=False,
                                        now=NOW)]
    assert f"Memory/facts.md#{LINT}" in found
    assert f"Memory/facts.md#{LINT_AGAIN}" not in found
    places = [h.path for h in app.search("我在西湖区", count_recall=False, now=NOW)]
    assert f"Memory/facts.md#{XIHU}" in places and f"Memory/facts.md#{YUHANG}" not in places
    diary = (vault / "Memory" / "DREAMS.md").read_text(encoding="utf-8")
    assert f"[[facts]] `#{LINT_AGAIN}`" in diary
    # a second dream finds nothing more to do
    again = app.dreamer(clock=lambda: NOW).dream(force=True)
    assert again.plan.counts["merged"] == 0 and again.plan.counts["superseded"] == 0


def test_a_dream_reads_each_memory_file_once_and_still_finds_the_entries(
        vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries are looked for in the files that are not memory files: a memory file
    the dream has just read is not read a second time for entries it cannot have."""
    import daemon.dream_records as records
    import daemon.memory_pool as pool

    (vault / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    reads: list[str] = []
    for module in (records, pool):
        original = module.read_note_bytes

        def counted(root: Path, rel: str, original: Callable[..., Any] = original,
                    **kwargs: Any) -> Any:
            reads.append(rel)
            return original(root, rel, **kwargs)

        monkeypatch.setattr(module, "read_note_bytes", counted)
    plan = app.dreamer(clock=lambda: NOW).plan()
    memory_files = [p.relative_to(vault).as_posix() for p in (vault / "Memory").glob("*.md")
                    if p.name not in {"MEMORY.md", "DREAMS.md", "facts.md"}]
    assert memory_files
    assert all(reads.count(p) == 1 for p in memory_files), reads
    assert plan.counts["merged"] >= 1 and plan.counts["superseded"] >= 1  # the entries'
