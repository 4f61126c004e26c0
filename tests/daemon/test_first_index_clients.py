"""Clients of a daemon at the vault's first index (a user trial: a fresh clone, a big vault,
a first index of many minutes).

``dreamd run`` on a vault never indexed (the demo vault and the 173 English notes of the
Obsidian help vault), its FAKE embedder slowed down so that the first index lasts a minute or
more (the embedder of both the daemon and the in-process CLI is the token-hash fake: these
tests are about who answers and what they say, not about meaning). While it runs:

- its local API socket is open and answers ``status``, ``search`` and ``remember`` over the
  real socket (it was closed until the end of the index: every command went in-process);
- ``dreamd search`` (plain and ``--json``) says the index is partial and how far it got;
- ``dreamd check`` says the files not indexed yet are being indexed, not drift to ``--fix``;
- MCP ``memory_search`` says it too (in-process, the daemon's status file as it writes it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import daemon_harness as harness
import pytest

REPO = Path(__file__).resolve().parents[2]

#: ``dreamd ARGS`` as the console script runs it, with the FAKE embedder (module docstring).
_CLI = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "import daemon.app as app_module\n"
    "from daemon_harness import load_fake_embedder\n"
    "app_module.make_embedder = lambda loaded: load_fake_embedder()  # FAKE\n"
    "from daemon.cli import main\n"
    "sys.argv = ['dreamd', *sys.argv[2:]]\n"
    "main()\n"
)
PARTIAL = re.compile(r"^the index is partial: the daemon \(pid (\d+)\) is at the vault's first "
                     r"index, ([\d,]+) of ([\d,]+) files indexed so far; notes not indexed yet "
                     r"are not searched$")


def _dreamd(*args: str) -> subprocess.CompletedProcess[str]:
    support = Path(__file__).resolve().parents[1] / "support"
    env = {k: v for k, v in os.environ.items() if k != harness.EMBED_DELAY_VAR}
    return subprocess.run([sys.executable, "-c", _CLI, str(support), *args],
                          capture_output=True, text=True, timeout=300, check=False, env=env)


def _indexing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: list[Any],
              corpora_dir: Path) -> tuple[Path, harness.DaemonProcess]:
    """A daemon at the first index of a vault, past its first commit."""
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    help_vault = corpora_dir / "obsidian-help"
    for note in sorted((help_vault / "en").rglob("*.md")):
        target = vault / "Help" / note.relative_to(help_vault)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
    monkeypatch.setenv(harness.EMBED_DELAY_VAR, "0.04")
    monkeypatch.setenv("DREAMD_SYNC__WRITE_BATCH_FILES", "32")  # read ahead, batch by batch
    daemon = harness.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(daemon)
    harness.wait_until(daemon.status, lambda s: s.get("state") == "reconciling" and bool(
        s.get("work")) and s["work"]["done"] >= 32, timeout_s=180,
        what="the first index past its first commit")
    return vault, daemon


def _still_indexing(daemon: harness.DaemonProcess) -> None:
    now = daemon.status()
    assert now.get("state") == "reconciling" and now["work"]["done"] < now["work"]["total"], \
        ("the first index ended before the test did: slow the embedder down more", now)


def _served(daemon: harness.DaemonProcess, *argv: str, stdin: str | None = None
            ) -> dict[str, Any]:
    """``argv`` asked of the daemon over its socket, as a client asks it."""
    from daemon import client

    record = json.loads((daemon.state_dir / client.API_RECORD).read_text("utf-8"))
    return client.call(daemon.state_dir, "cli", {
        "argv": list(argv), "settings": record["settings"], "stdin": stdin,
        "terminal": {"tty": False, "columns": 200, "vars": {}}}, timeout=60)


def test_the_socket_answers_while_the_first_index_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: list[Any],
        corpora_dir: Path) -> None:
    """The local API was opened once the start-up reconcile was done: during a first index
    every client answered in-process (loading the model). Now it is open from the start,
    and the reconcile lets the clients in between its commits: ``status``, ``search`` (of
    the partial index, said so) and ``remember`` (indexed at once, and kept by the
    reconcile as it wrote it) are answered by the daemon while it indexes."""
    vault, daemon = _indexing(tmp_path, monkeypatch, daemons, corpora_dir)
    where = str(vault)
    status = _served(daemon, "status", "--json", "--vault", where)
    assert status["exit_code"] == 0, status
    assert json.loads(status["stdout"])["daemon"]["state"] == "reconciling"

    kept = _served(daemon, "remember", "--vault", where, "--type", "user",
                   "The quokka lighthouse keeper counts marmalade jars at dawn")
    assert kept["exit_code"] == 0, kept
    found = _served(daemon, "search", "--json", "--vault", where, "quokka lighthouse marmalade")
    assert found["exit_code"] == 0, found
    answer = json.loads(found["stdout"])
    assert answer["index"]["partial"] is True, answer
    assert answer["index"]["pid"] == daemon.pid
    assert 0 < answer["index"]["indexed"] < answer["index"]["files"], answer
    memory = next(h["path"] for h in answer["hits"] if h["path"].startswith("Memory/"))
    assert (vault / memory).is_file()
    _still_indexing(daemon)
    # a pass of its own over the vault waits for the end of the reconcile (in-process)
    with pytest.raises(Exception, match="once that is done"):
        _served(daemon, "sync", "--vault", where)
    assert not [e for e in daemon.events() if e.get("event") == "api.failed"]

    assert daemon.stop(timeout_s=60) == 0
    monkeypatch.delenv(harness.EMBED_DELAY_VAR)
    again = harness.DaemonProcess.start(vault, tmp_path / "daemon-again.log")
    daemons.append(again)
    again.wait_state("watching", timeout_s=300)
    harness.wait_until(lambda: harness.index_vs_disk(harness.fresh_app(vault)), lambda p: not p,
                       timeout_s=120, what="index == disk", every_s=0.5)
    assert again.stop() == 0


def test_search_during_the_first_index_says_the_index_is_partial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: list[Any],
        corpora_dir: Path) -> None:
    """``dreamd search`` answered from the files indexed so far as if they were the vault;
    it now says the index is partial, and how many files of how many are indexed."""
    vault, daemon = _indexing(tmp_path, monkeypatch, daemons, corpora_dir)
    for asked in (["--json"], []):
        done = _dreamd("search", *asked, "--vault", str(vault), "sourdough starter")
        assert done.returncode == 0, done.stderr
        if asked:
            answer = json.loads(done.stdout)
            assert isinstance(answer, dict), answer  # (a bare list said nothing of it)
            index = answer["index"]
            assert index["partial"] is True and index["pid"] == daemon.pid, index
            assert 0 < index["indexed"] < index["files"], index
            assert PARTIAL.match(index["note"]), index["note"]
        else:
            first = done.stdout.splitlines()[0]
            said = PARTIAL.match(first)
            assert said is not None, done.stdout
            indexed, files = (int(said[n].replace(",", "")) for n in (2, 3))
            assert int(said[1]) == daemon.pid and 0 < indexed < files
    _still_indexing(daemon)
    assert daemon.stop(timeout_s=60) == 0


def test_check_during_the_first_index_says_the_files_are_being_indexed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: list[Any],
        corpora_dir: Path) -> None:
    """``dreamd check`` listed every file not indexed yet as drift, "[re-index, --fix]",
    and asked for ``dreamd check --fix``: the daemon is indexing them. It now says so."""
    vault, daemon = _indexing(tmp_path, monkeypatch, daemons, corpora_dir)
    done = _dreamd("check", "--vault", str(vault))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "--fix" not in done.stdout and "not in the index)" not in done.stdout, done.stdout
    said = next(line for line in done.stdout.splitlines() if line.startswith("being indexed"))
    assert re.match(rf"being indexed: [\d,]+ files not in the index yet: the daemon \(pid "
                    rf"{daemon.pid}\) is at the vault's first index \([\d,]+ of [\d,]+ files "
                    r"indexed so far\) and indexes them; nothing to fix: check again once it "
                    r"is done$", said), said
    report = json.loads(_dreamd("check", "--json", "--vault", str(vault)).stdout)
    waiting = report["indexing"]["not_indexed_yet"]
    assert waiting and all((vault / p).exists() for p in waiting), report["indexing"]
    assert not [i for i in report["items"] if i["kind"] == "missing"], report["items"]
    _still_indexing(daemon)
    assert daemon.stop(timeout_s=60) == 0


def test_mcp_search_says_the_index_is_partial(vault: Path, make_app: Any) -> None:
    """MCP ``memory_search`` of a vault whose daemon is at the first index (its status file,
    as the daemon writes it, and no sync finished yet) says so in a first item; once a
    reconcile has finished, or with no daemon, nothing is said."""
    import anyio
    from mcp import Client

    from daemon.mcp_server import build_server
    from daemon.status import DAEMON_STATUS_FILE, LAST_SYNC_FILE

    app, _ = make_app(vault)
    try:
        app.sync()
        (app.state_dir / LAST_SYNC_FILE).unlink()  # (as the first index's first commits)
        status = app.state_dir / DAEMON_STATUS_FILE

        def search() -> list[dict[str, Any]]:
            async def run() -> Any:
                async with Client(build_server(app)) as mcp:
                    return await mcp.call_tool("memory_search", {"query": "sourdough"})

            result = anyio.run(run)
            said = result.structured_content
            return said.get("result", said) if said is not None else json.loads(
                result.content[0].text)

        for phase, done, total, before, files in [
                ("indexing", 40, 5914, None, 5914 - 40 + 40), ("reading", 0, 120, None, 40 + 120),
                ("indexing", 10, 5900, 30, 30 + 5900), ("indexing", 10, 10, 30, 40)]:
            work = {"kind": "reconcile", "phase": phase, "done": done, "total": total,
                    "files": total, **({"indexed_before": before} if before is not None else {})}
            status.write_text(json.dumps({"pid": os.getpid(), "state": "reconciling",
                                          "work": work}), encoding="utf-8")
            first, *hits = search()
            assert first["index"] == {"partial": True, "indexed": 40, "files": files,
                                      "pid": os.getpid(), "note": first["note"]}, first
            assert PARTIAL.match(first["note"]), first
            assert hits and all("path" in hit for hit in hits)
        status.write_text(json.dumps({"pid": os.getpid(), "state": "watching"}), "utf-8")
        assert all("index" not in item for item in search())
        status.write_text(json.dumps({"pid": 0, "state": "reconciling"}), "utf-8")
        assert all("index" not in item for item in search())
    finally:
        app.close()
