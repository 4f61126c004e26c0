"""Sync over the real vaults in ../shared/corpora: every note indexed or reported, none changed.

The embedder is the token-hash fake (conftest): these tests are about coverage and safety on
real files, not about meaning, and the real model would take minutes on 5,914 notes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from ccb.scan import VaultFilter, scan_vault
from daemon.app import App

Builder = Callable[..., tuple[App, object]]


def _hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["obsidian-help", "kepano-obsidian", "memory-samples"])
def test_every_note_is_indexed_or_reported_and_no_file_changes(
    name: str, make_app: Builder, corpora_dir: Path
) -> None:
    root = corpora_dir / name
    before = _hashes(root)
    app, _ = make_app(root)
    report = app.sync()

    scan = scan_vault(root, VaultFilter.for_vault(root))
    notes = {e.path for e in scan.entries if e.kind == "note"}
    index = app.store.file_index()
    reported = {p.path for p in report.problems}
    assert notes <= index.keys() | reported
    assert all(p.reason for p in report.problems)
    # problems are reported, yet the note is still searchable text where it could be decoded
    assert {p.path for p in report.problems if p.kind in {"yaml", "properties"}} <= index.keys()
    assert report.added == len(scan.entries)
    assert _hashes(root) == before

    if name == "kepano-obsidian":
        # its templates' placeholders (created: {{date}}) are read as text, and the files
        # are reported as templates (their frontmatter is no YAML until filled in), never
        # as files that do not read
        assert {p.kind for p in report.problems if p.path.startswith("Templates/")} \
            == {"template"}
        assert index["Templates/Recipe Template.md"]
    if name == "obsidian-help":
        assert len(notes) == 5914  # every markdown file of the corpus (its README says 5,914)
