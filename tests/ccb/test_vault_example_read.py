"""The demo vault reads as intended: expected notes, ignored folders, one memory per type."""

from __future__ import annotations

import filecmp
import re
from pathlib import Path

import pytest
from ulid import ULID

from ccb.model import ScanResult
from ccb.scan import VaultFilter, read_note, scan_vault

EXPECTED_NOTES = {
    "Welcome.md",
    "Baking/Sourdough starter.md",
    "Baking/Rye loaf.md",
    "Projects/Project Kiln.md",
    "Projects/Glaze test tiles.md",
    "Reading list.md",
    "People/Mei Lin.md",
    "Meetings/2026-11-24 Kiln kickoff.md",
    "Meetings/2026-11-27 Weekly sync.md",
    "关于睡眠的笔记.md",
    "周末计划.md",
    "Health/Running log.md",
    "Daily/2026-11-23.md",
    "Daily/2026-11-24.md",
    "Daily/2026-11-25.md",
    "Daily/2026-11-27.md",
    "Memory/MEMORY.md",
}
CASES = [
    "01-yaml-iso-dates",
    "03-dump-reorders-keys-drops-comments",
    "04-utf8-bom",
    "05-crlf-and-eof-fence",
    "06-dashes-inside-frontmatter-and-body",
    "08-yaml11-booleans",
    "10-empty-frontmatter-and-values",
    "15-sync-conflict-copies",
]


@pytest.fixture(scope="module")
def scanned(vault_example: Path) -> ScanResult:
    return scan_vault(vault_example, VaultFilter.for_vault(vault_example))


def test_expected_notes_and_attachment(scanned: ScanResult) -> None:
    paths = {e.path for e in scanned.entries}
    assert paths >= EXPECTED_NOTES
    assert "Attachments/sourdough-crumb.png" in paths
    kinds = {e.path: e.kind for e in scanned.entries}
    assert kinds["Attachments/sourdough-crumb.png"] == "attachment"
    assert scanned.problems == ()


def test_ignored_folders(scanned: ScanResult, vault_example: Path) -> None:
    paths = [e.path for e in scanned.entries]
    assert (vault_example / ".obsidian/app.json").is_file()
    assert (vault_example / "Archive/Ignored/Old draft.md").is_file()
    assert (vault_example / ".trash/Deleted idea.md").is_file()
    assert not [p for p in paths if p.startswith((".obsidian/", ".trash/", "Archive/Ignored/"))]
    assert not [p for p in paths if "/." in p or p.startswith(".")]
    assert "Archive/2025 retrospective.md" in paths
    assert {c.conflict_of for c in scanned.conflict_copies} == {
        "edge-cases/15-sync-conflict-copies/Meeting notes.md",
        "edge-cases/15-sync-conflict-copies/Reading list.md",
    }


def test_every_note_parses_and_memories_cover_all_types(
    scanned: ScanResult, vault_example: Path
) -> None:
    memories = {}
    for entry in scanned.entries:
        if entry.kind != "note":
            continue
        note = read_note(vault_example, entry.path)
        if not entry.path.startswith("edge-cases/10-"):
            assert note.problems == (), entry.path
        if note.memory is not None and entry.path.startswith("Memory/"):
            memories[entry.path] = note.memory
    assert sorted(m.type for m in memories.values()) == ["feedback", "project", "reference", "user"]
    for path, meta in memories.items():
        assert meta.id is not None
        assert ULID.from_str(meta.id)  # a real ULID
        assert meta.description and meta.subject and meta.created and meta.version == 1
        assert path == f"Memory/{re.sub(r'[^a-z0-9]+', '-', meta.name.lower()).strip('-')}.md"


def test_memory_index_lists_every_memory(vault_example: Path) -> None:
    index = read_note(vault_example, "Memory/MEMORY.md")
    lines = [line for line in index.body.splitlines() if line.startswith("- [")]
    assert len(lines) == 4
    for line in lines:
        match = re.fullmatch(r"- \[(.+)\]\((.+\.md)\) — (.+)", line)
        assert match, line
        memory = read_note(vault_example, f"Memory/{match.group(2)}")
        assert memory.memory is not None
        assert (memory.memory.name, memory.memory.description) == (match.group(1), match.group(3))


def test_links_tags_and_embeds(vault_example: Path) -> None:
    sourdough = read_note(vault_example, "Baking/Sourdough starter.md")
    assert "hydration" in sourdough.body
    assert ("sourdough-crumb.png", "embed") in {
        (link.target, link.kind) for link in sourdough.links
    }
    assert {"baking", "baking/bread", "sourdough"} <= set(sourdough.tags)
    assert "Levain" in sourdough.aliases
    sleep = read_note(vault_example, "关于睡眠的笔记.md")
    assert "睡眠" in sleep.tags and "睡眠/记录" in sleep.tags
    kiln = read_note(vault_example, "Projects/Project Kiln.md")
    assert any(link.target == "" and link.subpath == "Budget" for link in kiln.links)
    assert any(link.line == -1 and link.target == "Mei Lin" for link in kiln.links)
    assert "- [ ] Wind the Kanthal A1 elements" in kiln.body
    rye = read_note(vault_example, "Baking/Rye loaf.md")
    assert any(link.is_block_ref for link in rye.links)


def test_png_is_valid(vault_example: Path) -> None:
    data = (vault_example / "Attachments/sourdough-crumb.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")


@pytest.mark.parametrize("case", CASES)
def test_edge_cases_are_byte_for_byte_copies(
    vault_example: Path, cases_dir: Path, case: str
) -> None:
    source = cases_dir / case / "vault"
    copy = vault_example / "edge-cases" / case
    source_files = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    copy_files = sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
    assert source_files == copy_files
    _, mismatch, errors = filecmp.cmpfiles(
        source, copy, [str(p) for p in source_files], shallow=False
    )
    assert (mismatch, errors) == ([], [])
