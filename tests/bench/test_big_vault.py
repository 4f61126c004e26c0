"""``bench/big_vault.py``: copies under distinct folders, byte for byte, to an exact count
(the kepano corpus as the base; the LongMemEval sessions are left to the script's own run)."""

from __future__ import annotations

from pathlib import Path

import big_vault
import pytest


def test_copies_fill_up_to_the_count_byte_for_byte(tmp_path: Path, corpora_dir: Path) -> None:
    root = corpora_dir / "kepano-obsidian"
    base = big_vault.corpus_notes(root, "kepano", "kepano-obsidian")
    assert len(base) == 103
    counts = big_vault.write(tmp_path / "v", big_vault.plan(base, 250))
    assert counts["kepano-obsidian"][0] == 103
    assert counts["copies"][0] == 147
    written = sorted(p.relative_to(tmp_path / "v").as_posix()
                     for p in (tmp_path / "v").rglob("*.md"))
    assert len(written) == 250
    assert sum(p.startswith("copy-02/kepano/") for p in written) == 103
    assert sum(p.startswith("copy-03/kepano/") for p in written) == 44
    for item in base[:10]:
        assert item.origin is not None
        data = item.origin.read_bytes()
        assert (tmp_path / "v" / item.path).read_bytes() == data
        assert (tmp_path / "v" / "copy-02" / item.path).read_bytes() == data
    assert sum(size for _, size in counts.values()) == sum(
        p.stat().st_size for p in (tmp_path / "v").rglob("*.md"))


def test_the_plan_is_the_same_every_run(corpora_dir: Path) -> None:
    root = corpora_dir / "kepano-obsidian"
    first = [p.path for p in big_vault.plan(big_vault.corpus_notes(root, "k", "k"), 300)]
    second = [p.path for p in big_vault.plan(big_vault.corpus_notes(root, "k", "k"), 300)]
    assert first == second and len(set(first)) == 300


def test_a_folder_that_is_not_empty_is_refused(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("mine", "utf-8")
    with pytest.raises(SystemExit, match="not empty"):
        big_vault.main([str(tmp_path), "--notes", "1"])
    assert (tmp_path / "note.md").read_text("utf-8") == "mine"
