"""``forget`` in the dream diary: each line naming the memory, and only those, says a memory
was forgotten; the diary keeps its shape. Real files through the one writer."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from ccb.writer import NoteWriter
from daemon.forget_traces import scrub_diary

DIARY = """# Dream diary

## 2026-11-30 03:00 UTC

<!-- dream 01ABC -->
Read 12 memories: 10 unchanged since the last dream (skipped), 2 updated, 0 added.

- [[Memory/ferry-times|ferry]] superseded by [[ferry-times-winter]] (changed value: 07:10 → 07:40)
- Archived [[ferry-times-winter-2]]: exact duplicate of [[ferry-times-winter]]
  1. [[Ferry-Times#Weekdays]] kept as it is
- Rebuilt MEMORY.md: 12 entries
"""


def test_each_line_naming_the_memory_says_it_was_forgotten(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Memory" / "DREAMS.md").write_text(DIARY, encoding="utf-8")
    writer = NoteWriter(vault, tmp_path / "state")
    assert scrub_diary(writer, "Memory/DREAMS.md", "ferry-times", date(2026, 12, 4),
                       origin="api")
    lines = (vault / "Memory" / "DREAMS.md").read_text(encoding="utf-8").splitlines()
    assert lines[7] == "- A memory was forgotten on 2026-12-04."
    assert lines[8].startswith("- Archived [[ferry-times-winter-2]]")  # another memory
    assert lines[9] == "  1. A memory was forgotten on 2026-12-04."  # its list shape kept
    assert lines[:7] == DIARY.splitlines()[:7] and lines[10:] == DIARY.splitlines()[10:]
    assert not scrub_diary(writer, "Memory/DREAMS.md", "ferry-times", date(2026, 12, 4),
                           origin="api")  # nothing left to take out: nothing written


def test_no_diary_is_no_write(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    writer = NoteWriter(tmp_path / "vault", tmp_path / "state")
    assert not scrub_diary(writer, "Memory/DREAMS.md", "x", date(2026, 12, 4), origin="api")
    assert not (tmp_path / "vault" / "Memory").exists()
