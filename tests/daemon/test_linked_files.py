"""Symlinks inside the vault and files that are not files (a FIFO), as sync, search, the
memories and ``dreamd check`` see them. Real files in tmp_path and real LanceDB; the
in-process test uses the token-hash fake embedder (it is about which files are indexed, not
meaning), the CLI test runs ``dreamd`` as a subprocess with the real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon.app import App

DREAMD = Path(sys.executable).with_name("dreamd")
Builder = Callable[..., tuple[App, object]]

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")

SKIPPED = [
    ("Alias.md", "symlink", "link to Real.md"),
    ("Memory/heron-alias.md", "symlink", "link to Memory/herons.md"),
    ("pipe.md", "skipped", "a FIFO (named pipe), not a regular file: never opened"),
    ("sub/Deep.md", "symlink", "link to Real.md"),
]


@pytest.fixture
def linked_vault(tmp_path: Path) -> Path:
    """``Real.md`` with two more names (``Alias.md``, ``sub/Deep.md``), a memory with a
    second name, and a FIFO named like a note."""
    vault = tmp_path / "vault"
    (vault / "sub").mkdir(parents=True)
    (vault / "Memory").mkdir()
    (vault / "Real.md").write_text("The heron nests by the reservoir every spring.\n",
                                   encoding="utf-8")
    (vault / "Alias.md").symlink_to("Real.md")
    (vault / "sub" / "Deep.md").symlink_to("../Real.md")
    (vault / "Memory" / "herons.md").write_text(
        "---\nname: Heron watching\ndescription: where the user watches herons\n"
        "type: user\n---\nThe user watches herons at dawn.\n", encoding="utf-8")
    (vault / "Memory" / "heron-alias.md").symlink_to("herons.md")
    os.mkfifo(vault / "pipe.md")
    return vault


def test_a_linked_note_is_indexed_once_under_its_real_path(
        linked_vault: Path, make_app: Builder) -> None:
    app, _ = make_app(linked_vault)
    report = app.sync()
    assert sorted(app.store.file_index()) == ["Memory/herons.md", "Real.md"]
    assert sorted((p.path, p.kind, p.reason) for p in report.problems) == SKIPPED
    hits = app.search("heron reservoir spring", limit=10)
    assert [h.path for h in hits].count("Real.md") == 1
    assert not {h.path for h in hits} & {"Alias.md", "sub/Deep.md"}
    # the memory has one file: its second name is no second memory
    assert app.memories().find("Heron watching").path == "Memory/herons.md"
    assert [s.path for s in app.memories().memories()] == ["Memory/herons.md"]
    app.consistency().fix(automatic_only=True)  # MEMORY.md, written the first time
    checked = app.consistency().check()
    assert checked.clean, checked.findings
    assert sorted((p.path, p.kind, p.reason) for p in checked.skipped) == SKIPPED


def test_check_says_which_files_it_skipped_and_why(linked_vault: Path) -> None:
    env = {**os.environ, "DREAMD_VAULT__PATH": str(linked_vault)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    synced = run("sync")
    assert synced.returncode == 0, synced.stderr
    assert "4 files skipped" in synced.stdout
    assert "Alias.md: symlink: link to Real.md" in synced.stdout
    run("check", "--fix")
    checked = run("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr  # skipped is not drift
    assert "4 files skipped" in checked.stdout
    for path, kind, reason in SKIPPED:
        assert f"{path}: {kind}: {reason}" in checked.stdout
    data = json.loads(run("check", "--json").stdout)
    assert sorted((p["path"], p["kind"], p["reason"]) for p in data["skipped"]) == SKIPPED
