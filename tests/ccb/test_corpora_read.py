"""Scan and parse every file of the shared real-world corpora (read-only, in place).

No exception, every problem has a reason, kepano's 28 ``{{date}}`` templates read with their
placeholders as text and their body intact, and no corpus file changes (SHA-256 before and after).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ccb.parse import parse_note
from ccb.scan import VaultFilter, read_note, scan_vault


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _check_corpus(root: Path) -> dict[str, list[str]]:
    """Scan, read every scanned note, parse every ``.md`` even in ignored folders.

    Returns ``{path: [problem kinds]}`` of the parsed notes.
    """
    before = _hashes(root)
    result = scan_vault(root, VaultFilter.for_vault(root))
    assert all(p.reason for p in result.problems)
    for entry in result.entries:
        if entry.kind == "note":
            note = read_note(root, entry.path)
            assert all(p.reason for p in note.problems)
    kinds: dict[str, list[str]] = {}
    for rel in before:
        if rel.lower().endswith(".md"):
            note = parse_note(Path(rel).as_posix(), (root / rel).read_bytes())
            assert all(p.reason and p.path == note.path for p in note.problems)
            kinds[note.path] = [p.kind for p in note.problems]
    assert _hashes(root) == before
    return kinds


def test_kepano_vault(corpora_dir: Path) -> None:
    root = corpora_dir / "kepano-obsidian"
    kinds = _check_corpus(root)
    templated = sorted(rel for rel in kinds if "{{date" in (root / rel).read_text(encoding="utf-8"))
    assert len(templated) == 28
    for rel in templated:  # a template's placeholders are read as text: reported, read
        assert kinds[rel] == ["template"], rel
        data = (root / rel).read_bytes()
        note = parse_note(rel, data)
        assert any("{{date" in str(v) for v in note.properties.values()), rel
        assert note.frontmatter_raw is not None and "{{date" in note.frontmatter_raw
        expected_body = data.decode("utf-8").split("\n---\n", 1)[1] if b"\n---\n" in data else ""
        assert note.body == expected_body.replace("\r\n", "\n")
    assert all(k == [] for rel, k in kinds.items() if rel not in templated), kinds


def test_memory_samples(corpora_dir: Path) -> None:
    root = corpora_dir / "memory-samples"
    kinds = _check_corpus(root)
    korean = "claude-code/1000ssam__claude-config/memory/feedback_pass-means-merge.md"
    assert kinds[korean] == ["yaml"]
    note = parse_note(korean, (root / korean).read_bytes())
    assert "통과" in note.body
    # Claude Code memories, both shapes: top-level ``type`` and ``metadata: type`` (nested).
    memories = {}
    for rel in kinds:
        parsed = parse_note(rel, (root / rel).read_bytes())
        if parsed.memory is not None:
            memories[rel] = parsed.memory.type
    nested = "claude-code/1000ssam__claude-config/memory/feedback_always-report-visual-qa-needed.md"
    assert memories[nested] == "feedback"
    aleslammer = "claude-code/Aleslammer__deathwatch_foundryvtt/.claude/memory/"
    assert {t for rel, t in memories.items() if rel.startswith(aleslammer)} == {
        "user",
        "feedback",
        "project",
        "reference",
    }
    assert [k for rel, k in kinds.items() if rel != korean and k] == []


@pytest.mark.slow
def test_obsidian_help_vault(corpora_dir: Path) -> None:
    root = corpora_dir / "obsidian-help"
    kinds = _check_corpus(root)
    assert len(kinds) > 5000
    problems = {rel: k for rel, k in kinds.items() if k}
    assert problems == {}
    note = read_note(root, "en/Editing and formatting/Properties.md")
    assert note.headings and note.links
