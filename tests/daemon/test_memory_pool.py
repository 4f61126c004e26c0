"""The memory pool's looks at the memory folder: one walk for memory files and entries, and
the recheck of the files a ``remember`` has just written (one stat each instead of a walk).

Real files in a tmp folder; no store, no model (the pool reads and parses files only).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from ccb.memory_file import NewMemory, render_memory
from daemon.memory_pool import MemoryPool

AT = datetime(2026, 6, 20, 9, 0, tzinfo=UTC)
FACTS = (
    "# 关于我\n\n"
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- The kiln shelf is 40 cm wide <!--m:subj=kiln.shelf;vf=2026-03-01-->\n"
)


def _memory(body: str, memory_id: str) -> bytes:
    return render_memory(NewMemory(name=body[:40], description=body, type="user",
                                   id=memory_id, created=AT, updated=AT, body=body + "\n"))


def _bodies(pool: MemoryPool, **kwargs: object) -> dict[str, str]:
    return {s.path: s.note.body.strip() for s in pool.memories(**kwargs)}  # type: ignore[arg-type]


def _vault(tmp_path: Path) -> tuple[Path, MemoryPool]:
    folder = tmp_path / "Memory"
    folder.mkdir()
    (folder / "a.md").write_bytes(_memory("The office is on floor 3", "01A"))
    (folder / "b.md").write_bytes(_memory("Lunch is at noon", "01B"))
    (folder / "facts.md").write_text(FACTS, encoding="utf-8")
    return tmp_path, MemoryPool(tmp_path, "Memory")


def test_one_look_gives_the_memory_files_and_the_entries_as_two_looks_do(tmp_path: Path
                                                                           ) -> None:
    root, pool = _vault(tmp_path)
    files, entries = pool.memories_and_entries()
    again = MemoryPool(root, "Memory")
    assert [s.path for s in files] == [s.path for s in again.memories()] \
        == ["Memory/a.md", "Memory/b.md"]
    assert [s.path for s in entries] == [s.path for s in again.entries()]
    assert len(entries) == 2 and all(s.path.startswith("Memory/facts.md#") for s in entries)


def test_a_recheck_reads_the_files_written_and_leaves_the_others_to_the_next_walk(
        tmp_path: Path) -> None:
    root, pool = _vault(tmp_path)
    pool.memories()  # the first look walks the folder
    folder = root / "Memory"
    (folder / "c.md").write_bytes(_memory("The printer is on floor 2", "01C"))  # "written"
    (folder / "a.md").write_bytes(_memory("The office is on floor 4", "01A"))  # "written"
    (folder / "b.md").write_bytes(_memory("Lunch is at one", "01B"))  # by hand meanwhile
    os.utime(folder / "b.md", ns=(1, 1))
    rechecked = _bodies(pool, recheck=["Memory/c.md", "Memory/a.md"])
    assert rechecked == {"Memory/a.md": "The office is on floor 4",
                         "Memory/b.md": "Lunch is at noon",  # not looked at: as before
                         "Memory/c.md": "The printer is on floor 2"}
    assert _bodies(pool)["Memory/b.md"] == "Lunch is at one"  # the next walk sees it


def test_a_recheck_admits_what_the_walk_admits(tmp_path: Path) -> None:
    root, pool = _vault(tmp_path)
    pool.memories()
    folder = root / "Memory"
    (folder / "a.md").unlink()  # gone
    (folder / "a.sync-conflict-20260620-090000-ABCDEF1.md").write_bytes(
        _memory("The office is on floor 5", "01A"))  # a conflict copy
    (folder / ".hidden.md").write_bytes(_memory("A dot file", "01D"))
    (folder / "notes.txt").write_bytes(_memory("Not markdown", "01E"))
    (folder / "MEMORY.md").write_text("# Memory index\n", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "d.md").write_bytes(_memory("Parking is in the basement", "01F"))
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "e.md").write_bytes(_memory("Outside the folder", "01G"))
    (folder / "linked").symlink_to(root / "elsewhere", target_is_directory=True)
    written = ["Memory/a.md", "Memory/a.sync-conflict-20260620-090000-ABCDEF1.md",
               "Memory/.hidden.md", "Memory/notes.txt", "Memory/MEMORY.md", "Memory/sub/d.md",
               "Memory/linked/e.md", "elsewhere/e.md"]
    rechecked = sorted(_bodies(pool, recheck=written))
    assert rechecked == sorted(_bodies(MemoryPool(root, "Memory"))) \
        == ["Memory/b.md", "Memory/sub/d.md"]


def test_a_recheck_before_any_walk_walks(tmp_path: Path) -> None:
    _root, pool = _vault(tmp_path)
    assert sorted(_bodies(pool, recheck=[])) == ["Memory/a.md", "Memory/b.md"]
