"""A dream decides alike with and without its quick reading paths: plain frontmatter blocks
read without the YAML parser (:func:`ccb.frontmatter.plain_block`, and the edits' key spans
from it), memory files parsed without their markdown outline (``parse_note(markdown=False)``),
its records written on one line, the derived re-check not reading again a file the dream
read that names no lineage and finding the memory files in one walk
(:func:`daemon.dream_recheck.memory_files`), and the plan's edits starting from the bytes read
for it (:func:`daemon.dream_records.unchanged_bytes`). Real files, a real store; the
token-hash fake embedder (the decisions here are by content hash, words, type and subject,
not meaning)."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import snapshot, write_memory

import ccb.frontmatter as frontmatter
import ccb.frontmatter_edit as frontmatter_edit
import daemon.dream as dream
import daemon.dream_recheck as dream_recheck
import daemon.dream_records as dream_records
from ccb.writer import NoteWriter
from daemon.app import App
from daemon.dream import DIARY_FILE, DreamReport
from daemon.dream_recheck import DerivedRecheck, memory_files
from daemon.dream_records import STATE_FILE, Read, Seen, gather, unchanged_bytes
from daemon.dream_restore import Restorer

Builder = Callable[..., tuple[App, object]]
CLOCK = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)
UNREADABLE = (b"---\nname: broken\ntype: user\nsubject: [unclosed\n---\n"
              b"A memory that does not read.\n")


def _odd_vault(vault: Path) -> None:
    """Duplicates, a supersession and old projects among odd files: a BOM, CRLF line
    endings, Chinese text, quoted values, a block list, a note without frontmatter and a
    memory whose frontmatter does not parse."""
    write_memory(vault, "uses-pnpm", "Use pnpm for installs.", subject="tools.pm", days_old=10)
    write_memory(vault, "pnpm-again", "use **pnpm** for installs", subject="tools.pm",
                 days_old=2)
    write_memory(vault, "api-timeout", "The payments API timeout is 30s.", type="project",
                 subject="api.timeout", days_old=8)
    write_memory(vault, "api-timeout-now", "The payments API timeout is 60s.", type="project",
                 subject="api.timeout", days_old=1)
    write_memory(vault, "old-launch", "The spring launch plan.", type="project",
                 subject="launch", days_old=200)
    write_memory(vault, "过敏", "用户对花生过敏。", subject="健康.过敏", days_old=6)
    write_memory(vault, "过敏-再次", "用户对花生过敏。", subject="健康.过敏", days_old=3)
    memory = vault / "Memory"
    bom = memory / "bom-note.md"
    write_memory(vault, "bom-note", "Deploys go out on Tuesdays.", type="project",
                 subject="deploy.day", days_old=300)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    crlf = memory / "crlf-note.md"
    write_memory(vault, "crlf-note", "The build runs on CI only.", type="project",
                 subject="build.where", days_old=250)
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    (memory / "quoted.md").write_bytes(
        b'---\nname: "Quoted: a name"\ntype: \'project\'\nsubject: "ops # on call"\n'
        b"created: 2026-01-02T03:04:05Z\nderived_from:\n  - \"[[uses-pnpm]]\"\n---\n"
        b"The on-call rota is in the wiki.\n")
    (memory / "plain-note.md").write_bytes(b"Just a note in the memory folder, no properties.\n")
    (memory / "unreadable.md").write_bytes(UNREADABLE)


@pytest.fixture
def twins(vault: Path, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """The odd vault twice, files and modification times alike."""
    _odd_vault(vault)
    other = tmp_path / "twin"
    shutil.copytree(vault, other, symlinks=True)  # (copy2: the same modification times)
    yield vault, other


def _dream(make_app: Builder, vault: Path) -> tuple[DreamReport, App]:
    frontmatter._kept_yaml.cache_clear()  # nothing read by the other dream is kept
    app, _ = make_app(vault)
    return app.dreamer(index=lambda paths: True, clock=lambda: CLOCK).dream(force=True), app


def _without_quick_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block through the YAML parser, every memory file with its markdown read, every
    file read again by the derived re-check."""
    monkeypatch.setattr(frontmatter, "plain_block", lambda raw: None)
    monkeypatch.setattr(frontmatter_edit, "plain_block", lambda raw: None)
    read = dream_records.read_note_bytes

    def full(root: Path, rel: str, **kwargs: Any) -> Any:
        return read(root, rel, **{**kwargs, "markdown": True})

    monkeypatch.setattr(dream_records, "read_note_bytes", full)
    monkeypatch.setattr(DerivedRecheck, "_unchanged_without_lineage",
                        lambda self, path, file: False)
    monkeypatch.setattr(dream_recheck, "memory_files", _memory_files_through_pathlib)
    monkeypatch.setattr(dream, "unchanged_bytes", lambda root, path, read: None)


def _memory_files_through_pathlib(root: Path, memory_folder: str
                                  ) -> list[tuple[str, os.stat_result]]:
    """The memory files as the re-check found them before :func:`memory_files`: sorted
    ``rglob("*.md")``, then its tests of each path."""
    folder = root / memory_folder
    found = []
    for file in sorted(folder.rglob("*.md")) if folder.is_dir() else ():
        inner = file.relative_to(folder).parts
        if inner in (("MEMORY.md",), (DIARY_FILE,)) or file.is_symlink() \
                or any(p.startswith(".") for p in inner) or not file.is_file():
            continue
        found.append((file.relative_to(root).as_posix(), file.lstat()))
    return found


def _records(app: App) -> dict[str, Any]:
    """The dream's records, without the modification times of the files it wrote."""
    state = json.loads((app.state_dir / STATE_FILE).read_text(encoding="utf-8"))
    return {path: {k: v for k, v in record.items() if k != "mtime_ns"}
            for path, record in state["memories"].items()}


def test_a_dream_decides_alike_with_and_without_its_quick_reading(
    twins: tuple[Path, Path], make_app: Builder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    quick_vault, slow_vault = twins
    quick, quick_app = _dream(make_app, quick_vault)
    with monkeypatch.context() as patch:
        _without_quick_paths(patch)
        slow, slow_app = _dream(make_app, slow_vault)
    assert quick.plan.changes == slow.plan.changes
    assert quick.plan.edits == slow.plan.edits
    assert quick.plan.counts == slow.plan.counts
    assert quick.written == slow.written
    diary = f"Memory/{DIARY_FILE}"
    quick_files, slow_files = snapshot(quick_vault), snapshot(slow_vault)
    assert {p: d for p, d in quick_files.items() if p != diary} == \
        {p: d for p, d in slow_files.items() if p != diary}
    assert _records(quick_app) == _records(slow_app)
    # what it did: the duplicates merged (the Chinese pair too), the BOM and CRLF files
    # archived with their BOM and line endings, the unreadable memory left as it was
    assert quick.plan.counts["merged"] >= 2 and quick.plan.counts["superseded"] >= 1
    assert quick_files["Memory/bom-note.md"].startswith(b"\xef\xbb\xbf---\n")
    assert b"status: archived\r\n" in quick_files["Memory/crlf-note.md"]
    assert b"\n" not in quick_files["Memory/crlf-note.md"].replace(b"\r\n", b"")
    assert b"status: archived" in quick_files["Memory/过敏-再次.md"]
    assert quick_files["Memory/unreadable.md"] == UNREADABLE
    assert "Memory/unreadable.md" not in _records(quick_app)
    assert quick_files["Memory/plain-note.md"] == \
        b"Just a note in the memory folder, no properties.\n"


def test_the_recheck_reads_again_only_a_file_that_may_name_a_lineage(vault: Path,
                                                                     tmp_path: Path) -> None:
    """A file the dream read, unchanged since and naming no lineage, is not read again by
    the derived re-check unless another file names one; then every file is read, and the
    re-check sees what it sees without the dream's knowledge."""
    _odd_vault(vault)
    (vault / "Memory/quoted.md").unlink()  # (the one file naming a lineage)
    writer = NoteWriter(vault, tmp_path / "state")
    restorer = Restorer(writer=writer, memory_folder="Memory", state_dir=tmp_path / "state")
    seen: Seen = {}
    gather(writer.root, "Memory", {}, seen)
    reads: list[str] = []
    read = writer.read

    def counted(path: str) -> bytes | None:
        reads.append(path)
        return read(path)

    writer.read = counted  # type: ignore[method-assign]

    def recheck(known: Seen) -> DerivedRecheck:
        return DerivedRecheck(writer=writer, memory_folder="Memory", restorer=restorer,
                              clock=lambda: CLOCK, seen=known)

    assert recheck(seen)._read({}) == {}
    assert reads == []  # every memory file known, none names a lineage
    assert recheck({})._read({}) == {}
    assert reads  # without the dream's knowledge: each file read
    crlf = vault / "Memory/crlf-note.md"
    crlf.write_bytes(crlf.read_bytes().replace(b"valid_to:",
                                               b"derived_from:\r\n  - x\r\nvalid_to:"))
    reads.clear()
    found = recheck(seen)._read({})
    assert "Memory/crlf-note.md" in found and "Memory/uses-pnpm.md" in found
    assert found == recheck({})._read({})


def test_the_memory_files_are_those_pathlib_finds_in_its_order(vault: Path) -> None:
    """Subfolders, dot folders and files, a link to a file and to a folder, a folder named
    like a note, a pipe, ``MEMORY.md`` and ``DREAMS.md`` at the top and below it, names
    whose order by path and by string differ (``a-b.md`` / ``a/b.md``), Chinese, a BOM."""
    _odd_vault(vault)
    memory = vault / "Memory"
    for rel in ("a/b.md", "a-b.md", "a/c/MEMORY.md", "a/DREAMS.md", ".hidden/x.md", ".dot.md",
                "a/.x/y.md", "笔记/过敏.md", "Z.md", "upper.MD", "a b/c.md", "MEMORY.md"):
        (memory / rel).parent.mkdir(parents=True, exist_ok=True)
        (memory / rel).write_bytes(b"\xef\xbb\xbf---\nname: x\ntype: user\n---\nbody\r\n")
    (memory / "folder.md").mkdir()
    (memory / "folder.md" / "inside.md").write_bytes(b"x")
    (memory / "link.md").symlink_to(memory / "Z.md")
    (memory / "linked").symlink_to(memory / "a", target_is_directory=True)
    os.mkfifo(memory / "pipe.md")
    root = vault.resolve()
    quick = memory_files(root, "Memory")
    slow = _memory_files_through_pathlib(root, "Memory")
    assert [p for p, _ in quick] == [p for p, _ in slow]
    assert [s.st_ino for _, s in quick] == [s.st_ino for _, s in slow]
    paths = [p for p, _ in quick]
    assert paths.index("Memory/a-b.md") > paths.index("Memory/a/b.md")
    assert "Memory/a/c/MEMORY.md" in paths and "Memory/笔记/过敏.md" in paths
    assert memory_files(root, "Nowhere") == []


def test_the_bytes_read_for_the_plan_are_given_again_only_while_the_file_is_unchanged(
        vault: Path) -> None:
    _odd_vault(vault)
    root = vault.resolve()
    read: Read = {}
    gather(root, "Memory", {}, {}, read)
    crlf, bom = "Memory/crlf-note.md", "Memory/bom-note.md"
    assert unchanged_bytes(root, crlf, read) == (root / crlf).read_bytes()
    assert unchanged_bytes(root, bom, read) == (root / bom).read_bytes()
    assert unchanged_bytes(root, "Memory/unreadable.md", read) == UNREADABLE
    assert unchanged_bytes(root, "Memory/nothing.md", read) is None
    assert unchanged_bytes(root, crlf, None) is None
    time.sleep(0.05)  # (a later status-change time than the read's)
    # the same size and modification time, written in place: its status change tells
    stat = (root / crlf).stat()
    data = (root / crlf).read_bytes()
    (root / crlf).write_bytes(data.replace(b"CI only", b"CI ONLY"))
    os.utime(root / crlf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert unchanged_bytes(root, crlf, read) is None
    # swapped in by an editor (a new file, the same bytes): read again
    (root / "Memory/過.tmp").write_bytes((root / bom).read_bytes())
    (root / "Memory/過.tmp").replace(root / bom)
    assert unchanged_bytes(root, bom, read) is None
