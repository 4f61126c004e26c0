"""Staged swaps: many atomic writes made durable together, in the order that keeps each safe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ccb.atomic_batch as atomic_batch
from ccb.atomic_batch import STAGED_SUFFIX, StagedSwaps, sweep_staged
from ccb.scan import VaultFilter
from ccb.writer import NoteWriter


def test_staged_bytes_are_swapped_in_and_nothing_is_left(tmp_path: Path) -> None:
    files = {tmp_path / f"n{i}.md": f"new {i}\n".encode() for i in range(20)}
    for i, path in enumerate(files):
        if i % 2:
            path.write_bytes(f"old {i}\n".encode())
    swaps = StagedSwaps()
    swaps.stage(files)
    assert len(list(tmp_path.glob(f"*{STAGED_SUFFIX}"))) == 20
    displaced = [swaps.swap(path, data) for path, data in files.items()]
    swaps.finish()
    assert displaced == [None if i % 2 == 0 else f"old {i}\n".encode() for i in range(20)]
    assert {p: p.read_bytes() for p in files} == files
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in files)


def test_bytes_not_staged_take_the_ordinary_path(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    swaps = StagedSwaps()
    swaps.stage({target: b"planned"})
    assert swaps.swap(target, b"merged") == b"old"  # not what was staged: written on its own
    swaps.finish()
    assert target.read_bytes() == b"merged"
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]  # the unused staged file went


def test_displaced_files_go_only_after_their_folder_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    monkeypatch.setattr(atomic_batch, "_fsync_folder", lambda f: events.append("fsync"))
    real_remove = atomic_batch._remove
    monkeypatch.setattr(atomic_batch, "_remove",
                        lambda tmp: (events.append("remove"), real_remove(tmp)))
    files = {tmp_path / f"n{i}.md": b"new" for i in range(3)}
    for path in files:
        path.write_bytes(b"old")
    swaps = StagedSwaps()
    swaps.stage(files)
    for path, data in files.items():
        swaps.swap(path, data)
    assert events == []  # no fsync and no removal per swap
    swaps.finish()
    assert events == ["fsync", "remove", "remove", "remove"]  # one folder, then the old files


def test_staged_names_are_ignored_by_the_vault_scan() -> None:
    assert VaultFilter().is_ignored(f"Memory/.note.md.x1y2{STAGED_SUFFIX}")


KILLED = textwrap.dedent('''
    import os, signal, sys
    from pathlib import Path
    from ccb.atomic_batch import StagedSwaps
    folder, swapped = Path(sys.argv[1]), int(sys.argv[2])
    files = {folder / f"n{i}.md": f"new {i}\\n".encode() * 50 for i in range(10)}
    swaps = StagedSwaps()
    swaps.stage(files)
    for path, data in list(files.items())[:swapped]:
        swaps.swap(path, data)
    os.kill(os.getpid(), signal.SIGKILL)  # before finish: no folder fsync, nothing removed
''')


@pytest.mark.parametrize("swapped", [0, 4, 10])
def test_a_batch_killed_part_way_leaves_each_file_whole_and_the_next_one_sweeps(
    tmp_path: Path, swapped: int,
) -> None:
    folder = tmp_path / "Memory"
    folder.mkdir()
    old = {folder / f"n{i}.md": f"old {i}\n".encode() * 50 for i in range(10)}
    for path, data in old.items():
        path.write_bytes(data)
    child = subprocess.run([sys.executable, "-c", KILLED, str(folder), str(swapped)],
                           env={**os.environ}, capture_output=True, text=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr
    for i, path in enumerate(old):
        assert path.read_bytes() == (f"new {i}\n" if i < swapped else f"old {i}\n").encode() * 50
    strays = list(folder.glob(f"*{STAGED_SUFFIX}"))
    assert len(strays) == 10  # the staged files not swapped in, and the displaced ones
    assert sweep_staged(tmp_path) == 10
    assert sorted(folder.iterdir()) == sorted(old)


def test_the_writer_stages_a_batch_and_sweeps_what_a_killed_one_left(tmp_path: Path) -> None:
    vault, state = tmp_path / "vault", tmp_path / "state"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Notes").mkdir()
    stray = vault / "Memory" / f".x.md.abc{STAGED_SUFFIX}"
    stray.write_bytes(b"left by a killed batch")
    for name in ("Memory/a.md", "Memory/b.md", "Notes/c.md"):
        (vault / name).write_bytes(b"old\n")
    writer = NoteWriter(vault, state)
    edits = {"Memory/a.md": b"new a\n", "Memory/b.md": b"new b\n", "Notes/c.md": b"new c\n"}
    with writer.batch(stage=edits, within="Memory"):
        # Notes/ is outside the folder: written the ordinary way
        assert len(list((vault / "Memory").glob(f"*{STAGED_SUFFIX}"))) == 2
        assert not list((vault / "Notes").glob(f"*{STAGED_SUFFIX}"))
        assert not stray.exists()
        for name, data in edits.items():
            assert writer.write(name, data, base=b"old\n").status == "written"
    assert {p.relative_to(vault).as_posix(): p.read_bytes()
            for p in vault.rglob("*") if p.is_file()} == edits


def test_without_syncfs_each_staged_file_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(atomic_batch, "_SYNCFS", None)
    monkeypatch.setattr(atomic_batch.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    swaps = StagedSwaps()
    swaps.stage({tmp_path / f"n{i}.md": b"new" for i in range(3)})
    assert len(synced) == 3
    swaps.finish()
