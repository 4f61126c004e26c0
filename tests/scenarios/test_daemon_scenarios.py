"""The daemon on a real vault under scripted edits, and the systemd notification protocol.

The daemon runs through ``daemon_harness.py`` with the token-hash FAKE embedder: these tests
are about files, events and rows (a 6,000-note vault with the real model would take minutes
to index), not meaning. Every wait is bounded; nothing asserts on timings.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest

pytestmark = pytest.mark.scenario


def settle(vault: Path, what: str, timeout_s: float = 240.0) -> None:
    h.wait_until(lambda: h.index_vs_disk(h.fresh_app(vault)), lambda p: not p,
                 timeout_s=timeout_s, what=f"index == disk after {what}", every_s=1.0)


def found(vault: Path, token: str) -> set[str]:
    """Notes whose text holds ``token`` (one word: full-text search splits on punctuation)."""
    from magma.search import fulltext_only

    return {hit.path for hit in fulltext_only(h.fresh_app(vault).store, token, limit=50)}


def git(vault: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   cwd=vault, check=True, capture_output=True, timeout=120)


@pytest.mark.slow
def test_scripted_edits_on_the_obsidian_help_vault(
    corpora_dir: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    if shutil.which("git") is None:
        pytest.fail("git is needed for the branch checkout step")
    vault = tmp_path / "help"
    shutil.copytree(corpora_dir / "obsidian-help", vault)
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(process)
    process.wait_state("watching", timeout_s=600)
    settle(vault, "start-up")

    # 1. bulk copy-in of 1,000 notes
    sources = sorted(vault.rglob("*.md"))[:1000]
    imported = vault / "Imported"
    imported.mkdir()
    for i, source in enumerate(sources):
        text = source.read_text(encoding="utf-8")
        (imported / f"{i:04d} {source.name}").write_text(
            f"{text}\n\nzqimport{i:04d}\n", encoding="utf-8")
    settle(vault, "copying in 1,000 notes")
    assert found(vault, "zqimport0999") == {f"Imported/0999 {sources[999].name}"}

    # 2. rename a folder of about 50 notes (children send no events)
    sizes = Counter(p.parent for p in vault.rglob("*.md") if p.parent != imported)
    folder = min(sizes, key=lambda f: abs(sizes[f] - 50))
    ids = {p: f.note_id for p, f in h.fresh_app(vault).store.file_index().items()
           if p.startswith(folder.relative_to(vault).as_posix() + "/")}
    folder.rename(folder.with_name(folder.name + " (renamed)"))
    settle(vault, f"renaming {folder.name} ({sizes[folder]} notes)")
    after = h.fresh_app(vault).store.file_index()
    old_prefix = folder.relative_to(vault).as_posix()
    for path, note_id in ids.items():
        moved = old_prefix + " (renamed)" + path.removeprefix(old_prefix)
        assert after[moved].note_id == note_id

    # 3. an editor-style atomic save
    target = imported / f"0000 {sources[0].name}"
    temp = imported / f".{target.name}.swp"
    temp.write_text("# Saved atomically\n\nzqatomicsave\n", encoding="utf-8")
    temp.replace(target)
    settle(vault, "an atomic save")
    assert found(vault, "zqatomicsave") == {target.relative_to(vault).as_posix()}

    # 4. git checkout of another branch: hundreds of files change at once
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "vault")
    git(vault, "checkout", "-q", "-b", "other")
    for path in sorted(imported.glob("*.md"))[:300]:
        path.write_text(path.read_text(encoding="utf-8") + "\nzqbranchmark\n", encoding="utf-8")
    for path in sorted(imported.glob("*.md"))[300:350]:
        path.unlink()
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "other")
    settle(vault, "editing on a branch")
    git(vault, "checkout", "-q", "main")
    settle(vault, "checking out main again")
    assert found(vault, "zqbranchmark") == set()
    git(vault, "checkout", "-q", "other")
    settle(vault, "checking out the other branch")
    assert len(found(vault, "zqbranchmark")) == 50  # limit of the query, at least 50 hits

    # 5. delete 200 notes
    doomed = sorted(imported.glob("*.md"))[:200]
    for path in doomed:
        path.unlink()
    settle(vault, "deleting 200 notes")
    index = h.fresh_app(vault).store.file_index()
    assert not {p.relative_to(vault).as_posix() for p in doomed} & index.keys()

    assert process.stop() == 0, process.log_tail()
    assert h.store_integrity(h.fresh_app(vault)) == []


def test_systemd_hears_ready_watchdog_and_stopping(
    vault: Path, tmp_path: Path, daemons: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real AF_UNIX datagram socket stands where systemd's notify socket would be."""
    address = str(tmp_path / "notify.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(address)
    server.settimeout(1.0)
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(process)
    heard: list[str] = []

    def listen() -> list[str]:
        with contextlib.suppress(TimeoutError):
            heard.append(server.recv(4096).decode())
        return heard

    h.wait_until(listen, lambda msgs: any(m.startswith("WATCHDOG=1") for m in msgs),
                 timeout_s=120, what="READY=1 then WATCHDOG=1 on the notify socket", every_s=0)
    assert "READY=1" in heard and heard.index("READY=1") < heard.index("WATCHDOG=1")
    assert process.stop() == 0
    while True:
        try:
            heard.append(server.recv(4096).decode())
        except (TimeoutError, OSError):
            break
    assert "STOPPING=1" in heard
    server.close()
