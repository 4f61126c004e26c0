"""A path that is not a vault folder, and a vault that refuses writes, as a user meets them:
real ``python -m daemon`` subprocesses. Each is one line on stderr and the exit code of the
error tree, at once (``run`` and ``mcp`` used to serve forever, or exit 0), and nothing is made
or changed: no state folder, no store, no record for a refused path; no file, no temp file
and no half-done dream in a read-only vault (``tests/support/read_only.py`` makes it really
read-only, also when the suite runs as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from read_only import drop_override, unwritable_for_children

from config.errors import VaultError
from config.settings import state_dir
from daemon.app import App, load
from daemon.dream_journal import JOURNAL_FILE

REPO = Path(__file__).resolve().parents[2]


def dreamd(*args: str, preexec: Callable[[], None] | None = None, timeout: float = 300,
           python: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``python PYTHON -m daemon ARGS``."""
    return subprocess.run([sys.executable, *python, "-m", "daemon", *args], cwd=REPO,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, check=False, preexec_fn=preexec)


#: The note a command gives, once, when it finds no daemon for a vault one served before.
NO_DAEMON = "dreamd: no daemon is running for this vault"


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line dreamd said on stderr (besides the once-only note :data:`NO_DAEMON`)."""
    lines = [line for line in done.stderr.strip().splitlines()
             if not line.startswith(NO_DAEMON)]
    assert len(lines) == 1 and lines[0].startswith("dreamd: "), done.stderr
    return lines[0]


@pytest.mark.parametrize(("action", "args"), [
    ("run", ["run", "{missing}"]),
    ("run", ["run", "{file}"]),
    ("mcp", ["mcp", "--vault", "{missing}"]),
    ("mcp", ["mcp", "--http", "--port", "0", "--vault", "{file}"]),
    ("conflicts", ["conflicts", "--vault", "{missing}"]),
    ("service install", ["service", "install", "--dry-run", "{missing}"]),
    ("sync", ["sync", "{file}"]),
    ("search", ["search", "kiln", "--vault", "{missing}"]),
    ("status", ["status", "--vault", "{file}"]),
    ("dream", ["dream", "--vault", "{missing}"]),
])
def test_a_path_that_is_not_a_vault_folder_is_refused_at_once(
    tmp_path: Path, isolated_dreamd: Path, action: str, args: list[str],
) -> None:
    missing, file = tmp_path / "nonexistent", tmp_path / "note.md"
    file.write_text("# a note, not a vault\n", encoding="utf-8")
    argv = [arg.format(missing=missing, file=file) for arg in args]
    done = dreamd(*argv, timeout=60)
    assert done.returncode == 4, done.stderr
    line = one_line(done)
    named = file if "{file}" in args else missing
    assert line.startswith(f"dreamd: {action} {named}: "), line
    assert ("not a folder" if named == file else "vault folder is missing") in line
    assert "nothing was created" in line
    # no state folder (index, sessions, locks) and no record of where the path leads
    assert not (isolated_dreamd / "data" / "vaults").exists()
    assert not list((isolated_dreamd / "xdg-cache").rglob("*.json"))
    assert not missing.exists()


@pytest.mark.parametrize("args", [
    ["search", "kiln", "--vault", "{empty}"], ["note", "窑温 1240 °C", "--vault", "{empty}"],
    ["remember", "kiln at 1240 °C", "--vault", "{empty}"], ["sync", "{empty}"],
    ["sync", "--vault", "{empty}"], ["run", "{empty}"], ["status", "--vault", "{empty}"],
    ["init", "{empty}"], ["service", "install", "--dry-run", "{empty}"],
])
@pytest.mark.parametrize("empty", ["", " ", "\t"])
def test_an_empty_vault_path_is_refused_not_read_as_the_working_folder(
    tmp_path: Path, isolated_dreamd: Path, args: list[str], empty: str,
) -> None:
    # --vault "$VAULT" with the variable unset: Path("") is ".", and the working folder (not
    # a vault, not indexed) got the daily note, the memory and an index
    here = tmp_path / "working folder"
    here.mkdir()
    done = subprocess.run([sys.executable, "-m", "daemon",
                           *(arg.format(empty=empty) for arg in args)], cwd=here,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 4, done.stderr
    assert "the vault's folder is empty" in one_line(done)
    assert "Traceback" not in done.stderr
    assert not list(here.iterdir())
    assert not (isolated_dreamd / "data" / "vaults").exists()
    assert not (isolated_dreamd / "config.toml").exists()


@pytest.mark.parametrize(("name", "said"), [
    ("Notes\nold", "Notes\\x0aold"), ("Notes\told", "Notes\\x09old"),
    ("笔记\r\n", "笔记\\x0d\\x0a"), ("Notes old", "Notes old"),
])
def test_a_vault_path_with_a_line_break_is_still_refused_in_one_line(
    tmp_path: Path, isolated_dreamd: Path, name: str, said: str,
) -> None:
    for args in (["status", "--vault", str(tmp_path / name)], ["sync", str(tmp_path / name)]):
        done = dreamd(*args, timeout=60)
        assert done.returncode == 4, done.stderr
        assert f"{tmp_path / said}: vault folder is missing" in one_line(done)


#: What a refusal must not wait for: the application, the store and the model's numerics.
HEAVY = ("daemon.app", "lancedb", "numpy")


@pytest.mark.parametrize("args", [
    ["sync", "{missing}"], ["run", "{file}"], ["search", "kiln", "--vault", "{missing}"],
    ["context", "--query", "kiln", "--vault", "{missing}"],
    ["remember", "kiln at 1240 °C", "--vault", "{file}"], ["note", "窑温", "--vault", "{missing}"],
    ["show", "kiln", "--vault", "{missing}"], ["forget", "kiln", "--yes", "--vault", "{missing}"],
    ["history", "kiln", "--vault", "{file}"], ["conflicts", "--vault", "{missing}"],
    ["dream", "--vault", "{missing}"], ["mcp", "--vault", "{missing}"],
    ["status", "--vault", "{file}"], ["check", "--vault", "{missing}"],
])
def test_a_path_that_is_not_a_vault_folder_is_refused_before_the_store_or_model_loads(
    tmp_path: Path, args: list[str],
) -> None:
    # the refusal took 14-16 s on a loaded machine: all of it importing the application
    missing, file = tmp_path / "不存在", tmp_path / "note.md"
    file.write_text("# a note, not a vault\n", encoding="utf-8")
    argv = [arg.format(missing=missing, file=file) for arg in args]
    done = dreamd(*argv, timeout=60, python=("-X", "importtime"))
    assert done.returncode == 4, done.stderr
    imported = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert "daemon.cli" in imported  # (the importtime report is there to read)
    assert not set(HEAVY) & set(imported), done.stderr[-2000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("dreamd: ")]
    assert len(said) == 1 and ("vault folder is missing" in said[0] or
                               "not a folder" in said[0]), said


def test_the_service_of_a_vault_deleted_since_can_still_be_looked_at(tmp_path: Path) -> None:
    done = dreamd("service", "status", str(tmp_path / "deleted"))
    assert done.returncode == 0 and "not installed" in done.stdout, done.stderr


def test_the_app_refuses_a_path_before_it_makes_anything(tmp_path: Path) -> None:
    missing = tmp_path / "Notse"
    loaded = load(None, None, {"vault.path": str(missing)})
    with pytest.raises(VaultError, match=f"^sync {missing}: vault folder is missing"):
        App.create(loaded, action="sync")
    assert not state_dir(loaded.settings).exists()
    # without an action the app is built (service status and uninstall of a deleted vault)
    assert App.create(loaded, action=None).vault_root == missing


EXPIRED = """---
name: Pottery meetup
description: The meetup at the community hall
type: project
id: 01M83T8CHRJ08VQRXNY5QM93ZZ
created: 2026-01-23T09:02:11Z
updated: 2026-01-23T09:02:11Z
version: 1
valid_from: 2026-01-23
expires: 2026-03-01
source: user
---
The pottery meetup is on March 1st at the community hall.
"""


@pytest.mark.slow
def test_remember_and_dream_in_a_read_only_vault_are_one_line_and_change_nothing(
    tmp_path: Path, isolated_dreamd: Path,
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    memory = vault / "Memory"
    (memory / "pottery-meetup.md").write_text(EXPIRED, encoding="utf-8")  # a dream archives it
    assert dreamd("sync", str(vault)).returncode == 0
    before = {p.name: p.read_bytes() for p in memory.iterdir()}
    state = state_dir(load(None, None, {"vault.path": str(vault)}).settings)
    with unwritable_for_children(memory):
        remembered = dreamd("remember", "The wheel needs a new belt.", "--vault", str(vault),
                            preexec=drop_override)
        dreamt = dreamd("dream", "--force", "--vault", str(vault), preexec=drop_override)
    for done in (remembered, dreamt):
        assert done.returncode == 4, done.stderr
        line = one_line(done)
        assert f"{memory} is not writable (permission denied)" in line, line
        assert "chmod u+w" in line and "nothing was written" in line
    assert {p.name: p.read_bytes() for p in memory.iterdir()} == before  # no temp file either
    assert not (state / JOURNAL_FILE).exists()  # no dream left half-done for the next one
    # writable again: the same dream archives the expired memory
    again = dreamd("dream", "--force", "--vault", str(vault))
    assert again.returncode == 0, again.stderr
    assert b"status: archived" in (memory / "pottery-meetup.md").read_bytes()


@pytest.mark.slow
def test_a_file_named_as_the_memory_folder_is_reported_and_left_alone(
    tmp_path: Path, isolated_dreamd: Path,
) -> None:
    # a plain file "Memory" at the vault root was a NotADirectoryError traceback from sync,
    # remember and dream
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text("# Kiln\nThe kiln fires at cone 6.\n", encoding="utf-8")
    (vault / "Memory").write_bytes(b"x\n")
    synced = dreamd("sync", str(vault))
    assert synced.returncode == 0, synced.stderr
    assert "Traceback" not in synced.stderr
    assert "Memory: memory: a file where the memory folder Memory/ should be" in synced.stdout
    remembered = dreamd("remember", "The wheel needs a new belt.", "--vault", str(vault))
    dreamt = dreamd("dream", "--force", "--vault", str(vault))
    for done in (remembered, dreamt):
        assert done.returncode == 4, done.stderr
        line = one_line(done)
        assert f"{vault / 'Memory'} is a file, not a folder" in line, line
        assert "nothing was written" in line
    assert (vault / "Memory").read_bytes() == b"x\n"
    assert sorted(p.name for p in vault.iterdir()) == ["Memory", "kiln.md"]
