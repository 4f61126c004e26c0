"""Versions of an entry (daemon.entry_versions): each line the indexer reads changed is a
version of ``file.md#key``; history, diff and rollback work on that one line.

Real files and a real store; the embedder is the token-hash fake (not about meaning).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccb.entries import entry_key
from daemon.app import App

Builder = Callable[..., tuple[App, object]]
NOW = datetime(2026, 6, 20, 9, 0, tzinfo=UTC)
FACTS = (
    "# 关于我\r\n\r\n"
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\r\n"
    "- Drinks oolong tea every afternoon\r\n"
)
YUHANG = f"Memory/facts.md#{entry_key('我在余杭区')}"
FIRST = "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->"
CLOSED = "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2;vt=2026-06-20-->"


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    (vault / "Memory" / "facts.md").write_bytes(FACTS.encode("utf-8"))
    application, _ = make_app(vault)
    application.sync()
    application.memories(clock=lambda: NOW).remember("我在西湖区", type="project",
                                                     subject="所在地")
    return application


def test_each_change_of_a_line_is_a_version_with_its_origin(app: App) -> None:
    versions = app.history().history(YUHANG)
    assert [(v.n, v.origin) for v in versions] == [(1, "user-edit"), (2, "api")]
    assert app.versions.content(versions[0].memory_id, 1) == FIRST.encode("utf-8")
    assert app.versions.content(versions[0].memory_id, 2) == CLOSED.encode("utf-8")
    diff = app.history().diff(YUHANG, 1)
    assert f"-{FIRST}" in diff and f"+{CLOSED}" in diff
    # another line of the file has a history of its own, untouched
    tea = f"Memory/facts.md#{entry_key('Drinks oolong tea every afternoon')}"
    assert [v.n for v in app.history().history(tea)] == [1]
    # an entry's history follows its line: dreamd check does not take it for a lost file
    report = app.consistency().check()
    assert not [f for f in report.findings if "#" in str(getattr(f.drift, "memory_key", ""))]


def test_rollback_writes_that_line_back_and_nothing_else(app: App, vault: Path) -> None:
    facts = vault / "Memory" / "facts.md"
    before = facts.read_bytes()
    result = app.history().rollback(YUHANG, 1)
    assert (result.path, result.restored) == (YUHANG, 1)
    after = facts.read_bytes()
    assert after == before.replace(CLOSED.encode("utf-8"), FIRST.encode("utf-8"))
    assert b"\r\n" in after and after.count(b"\n") == before.count(b"\n")
    versions = app.history().history(YUHANG)
    assert [(v.n, v.origin) for v in versions][-1] == (3, "rollback")
    app.history().rollback(YUHANG, 2)  # a rollback can itself be rolled back
    assert facts.read_bytes() == before


def test_a_forgotten_line_comes_back_by_rollback(app: App, vault: Path) -> None:
    facts = vault / "Memory" / "facts.md"
    tea = f"Memory/facts.md#{entry_key('Drinks oolong tea every afternoon')}"
    text = facts.read_bytes()
    facts.write_bytes(text.replace(b"- Drinks oolong tea every afternoon\r\n", b""))
    app.sync()
    app.history().rollback(tea, 1)
    assert facts.read_bytes().endswith(b"- Drinks oolong tea every afternoon\r\n")


def test_history_diff_and_rollback_from_the_command_line(tmp_path: Path) -> None:
    """As a user runs them (real subprocesses, the real embedding model)."""
    vault = tmp_path / "cli-vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Memory" / "facts.md").write_bytes(FACTS.encode("utf-8"))
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "DREAMD_VAULT__PATH": str(vault)}

    def dreamd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-m", "daemon", *args], cwd=repo,
                              env=env, capture_output=True, text=True, check=False,
                              timeout=300)

    assert dreamd("sync").returncode == 0
    moved = dreamd("remember", "我在西湖区", "--subject", "所在地")
    assert moved.returncode == 0, moved.stderr
    shown = dreamd("history", YUHANG)
    assert shown.returncode == 0 and "api" in shown.stdout, shown.stderr
    diff = dreamd("diff", YUHANG, "1", "2")
    assert diff.returncode == 0 and "vt=" in diff.stdout, diff.stderr
    back = dreamd("rollback", YUHANG, "--to", "1")
    assert back.returncode == 0, back.stderr
    assert FIRST in (vault / "Memory" / "facts.md").read_text(encoding="utf-8")
    missing = dreamd("rollback", YUHANG, "--to", "9")
    assert missing.returncode != 0 and "no version 9" in missing.stderr
    assert "Traceback" not in missing.stderr
    gone = dreamd("forget", YUHANG, "--yes")
    assert gone.returncode == 0 and "versions from the history" in gone.stdout, gone.stderr
    after = dreamd("history", YUHANG)
    assert after.returncode != 0 and "Traceback" not in after.stderr
