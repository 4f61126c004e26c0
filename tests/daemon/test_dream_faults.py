"""A dream killed part-way and run again ends where an uninterrupted dream ends.

Each trial copies one planted vault and its data folder, runs a dream in a real subprocess that
SIGKILLs itself right before its k-th file write (no cleanup, no flush: a power cut as far as
dreamd can tell), then runs the dream again in a new process. The vault must then be byte for
byte what an uninterrupted dream made of another copy (the diary's dream id aside), and no file
may be missing. Both processes use one fixed "now", so timestamps compare.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from daemon_harness import snapshot, write_memory

from daemon.app import App

Builder = Callable[..., tuple[App, object]]
NOW = "2026-11-30T03:00:00+00:00"

CHILD = textwrap.dedent('''
    import os, signal, sys
    from datetime import datetime
    import numpy as np
    from ccb.writer import NoteWriter
    from daemon.app import App, load

    vault, data_dir, now, kill_at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    os.environ["DREAMD_STORAGE__DATA_DIR"] = data_dir
    writes = 0
    original = NoteWriter.write

    def write(self, *args, **kwargs):
        global writes
        writes += 1
        if writes == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, *args, **kwargs)

    NoteWriter.write = write

    class SameModelAsTheIndex:  # the store was built by the test's token-hash embedder
        model_id, dims = "test-token-hash", 64
        def embed(self, texts):
            raise RuntimeError("this process never embeds")

    app = App.create(load(None, None, {"vault.path": vault}), embedder=SameModelAsTheIndex())
    clock = lambda: datetime.fromisoformat(now)
    report = app.dreamer(index=lambda paths: False, clock=clock).dream()
    print('RESULT', writes, report.resumed)
''')


def run_child(vault: Path, data: Path, kill_at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, str(vault), str(data), NOW,
                           str(kill_at)], capture_output=True, text=True, timeout=120)


def comparable(files: dict[str, bytes]) -> dict[str, bytes]:
    """Files with the dream's id and the wall-clock stamp of conflict copies' names masked
    (the copies keep the demo's ``MEMORY.md``, which this state folder never wrote)."""
    return {re.sub(r"\.conflict-\d{8}-\d{6}", ".conflict-STAMP", path):
            re.sub(rb"<!-- dream [0-9A-Z]{26} -->", b"<!-- dream ID -->", data)
            for path, data in files.items()}


@pytest.fixture
def planted_copy(
    tmp_path: Path, vault: Path, make_app: Builder,
) -> Callable[[str], tuple[Path, Path]]:
    for i in range(6):
        write_memory(vault, f"pnpm-{i}", "Use pnpm for installs." if i % 2 else
                     "use **pnpm** for installs", subject="tools.pm", days_old=10 - i)
    write_memory(vault, "timeout-a", "The payments API timeout is 30s.", type="project",
                 subject="api.timeout", days_old=8)
    write_memory(vault, "timeout-b", "The payments API timeout is 60s.", type="project",
                 subject="api.timeout", days_old=2)
    write_memory(vault, "lint-a", "Run the linter before every commit.", type="project",
                 subject="lint", days_old=9)
    write_memory(vault, "lint-b", "Run the linter before every commit. It catches typos.",
                 type="project", subject="lint", days_old=3)
    write_memory(vault, "launch", "The spring launch plan.", type="project", subject="launch",
                 days_old=400)
    app, _ = make_app(vault, **{"dream.max_change_free": 100})
    app.sync()
    data = Path(app.settings.storage.data_dir)

    def copy(name: str) -> tuple[Path, Path]:
        target = tmp_path / name
        shutil.copytree(vault, target / "vault")
        shutil.copytree(data, target / "data")
        # The state folder is keyed by the vault's path: move it under the copy's key.
        return target / "vault", target / "data"

    return copy


def test_killed_dreams_end_like_an_uninterrupted_one(
    planted_copy: Callable[[str], tuple[Path, Path]],
) -> None:
    vault, data = planted_copy("whole")
    done = run_child(vault, data, kill_at=0)
    assert done.returncode == 0, done.stderr
    total_writes = int(done.stdout.split('RESULT')[-1].split()[0])
    assert total_writes >= 8
    expected = comparable(snapshot(vault))
    for kill_at in sorted({1, 2, total_writes // 2, total_writes - 1, total_writes}):
        trial, trial_data = planted_copy(f"killed-{kill_at}")
        before = set(snapshot(trial))
        killed = run_child(trial, trial_data, kill_at)
        assert killed.returncode == -9, (kill_at, killed.stdout, killed.stderr)
        again = run_child(trial, trial_data, kill_at=0)
        assert again.returncode == 0, again.stderr
        after = comparable(snapshot(trial))
        assert before <= set(after), f"kill at write {kill_at}: a file went missing"
        assert after == expected, (
            f"kill at write {kill_at}: differs in "
            f"{sorted(p for p in after if after.get(p) != expected.get(p))}")
