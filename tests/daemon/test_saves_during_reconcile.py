"""Saves made while a reconcile runs are indexed between its commits (:mod:`daemon.interleave`),
and the reconcile leaves them as they were synced: nothing lost, nothing indexed twice with
an older content, nothing stale.

At the level of the syncer: a real vault (the demo vault, 20 English and 20 Chinese notes of
the Obsidian help vault byte for byte, an entry file in the memory folder) and a real LanceDB
store; the embedder is the token-hash fake (these tests are about which rows are written,
not about meaning). The "user" acts once, from inside the reconcile's interleave, on notes
the reconcile has committed already and on notes it has not (the next ones, read ahead and
being embedded), on memory files, and syncs what it touched as the daemon's watcher batch
would. Then the index must equal the disk, a second reconcile must find nothing to do, ids
must be kept, and the memory history must end with what is on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import daemon_harness as harness
import pytest

from ccb.entry_notes import is_entry_path
from ccb.scan import scan_vault
from daemon.app import App
from daemon.interleave import Interleave, Overtaken
from daemon.sync import RootsSyncer, SyncReport

Builder = Callable[..., tuple[App, object]]
REPO = Path(__file__).resolve().parents[2]
BATCH = 8
MEMORY = "Memory/prefers-metric-units.md"
ENTRIES = "Memory/facts.md"
HELP = ("Help/", "帮助/")
FACTS = (
    "# 关于我\n\n"
    "- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- Prefers the kiln at cone six for stoneware <!--m:subj=kiln.cone-->\n"
    "- Drinks oolong tea every afternoon\n"
)


def _vault(root: Path, corpora: Path) -> Path:
    shutil.copytree(REPO / "vault_example", root, symlinks=True)
    help_vault = corpora / "obsidian-help"
    for language, folder in (("en", "Help"), ("zh", "帮助")):  # before and after Memory/
        for note in sorted((help_vault / language).rglob("*.md"))[:20]:
            target = root / folder / note.relative_to(help_vault)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(note, target)
    (root / ENTRIES).write_text(FACTS, encoding="utf-8")
    return root


def _append(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(f"\n{line}\n")


class User:
    """Acts once, from the reconcile's interleave, as soon as ``passed()`` names the notes
    the reconcile is past (``None`` until then): edits, deletes and renames notes it is past
    and notes it has not reached (``ahead``: the next ones, read ahead or being embedded),
    renames a folder it has not finished, edits a memory and the entry file, then syncs
    every path it touched (what the watcher's batch does) and returns them."""

    def __init__(self, app: App, syncer: RootsSyncer, order: list[str],
                 passed: Callable[[], set[str] | None]) -> None:
        self.app, self.syncer, self.order, self._passed = app, syncer, order, passed
        self.done = False
        self.calls = 0
        self.memory_passed: bool | None = None
        self.ids: dict[str, str] = {}  # path now -> the note id it must keep
        self.gone: list[str] = []
        self.before: dict[str, bytes] = {}  # memory path -> its bytes before the edit

    def __call__(self) -> list[str]:
        self.calls += 1
        if self.done:
            return []
        past = self._passed()
        if past is None:
            return []
        self.done = True
        time.sleep(0.2)  # the read-ahead thread has read the next batch by now
        index = self.app.store.file_index()
        plain = [p for p in self.order if p.startswith(HELP)]
        passed = [p for p in plain if p in past]
        ahead = [p for p in plain if p not in past]
        assert len(passed) >= 4 and len(ahead) >= 6, (passed, ahead)
        self.memory_passed = MEMORY in past
        root = self.app.vault_root
        touched: list[str] = []
        for path in (passed[0], passed[-1], ahead[0], ahead[1]):
            _append(root / path, f"Edited while the vault was being indexed: {path} 索引中")
            touched.append(path)
        for path in (passed[1], ahead[2]):
            (root / path).unlink()
            self.gone.append(path)
            touched.append(path)
        (root / "Renamed").mkdir()
        for n, path in enumerate((passed[2], ahead[3])):
            new = f"Renamed/{n} {Path(path).name}"
            known = index.get(path)
            if known is not None and known.content_hash == hashlib.sha256(
                    (root / path).read_bytes()).hexdigest():
                self.ids[new] = known.note_id  # the same bytes moved: the note keeps its id
            (root / path).rename(root / new)
            self.gone.append(path)
            touched += [path, new]
        # a folder the reconcile has not finished, renamed (no event for its files)
        folder = next(str(Path(p).parent) for p in reversed(ahead)
                      if Path(p).parent not in {Path(q).parent for q in ahead[:4]})
        (root / folder).rename(root / f"{folder} moved")
        self.gone += [p for p in self.order if p.startswith(folder + "/")]
        touched += [folder, f"{folder} moved"]
        self.before[MEMORY] = (root / MEMORY).read_bytes()
        (root / MEMORY).write_bytes(self.before[MEMORY].replace(
            b"round to kitchen-friendly numbers", b"round to the nearest 5 g"))
        (root / ENTRIES).write_text(FACTS.replace("- Drinks oolong tea every afternoon\n",
                                                  "- Drinks jasmine tea after lunch\n"), "utf-8")
        touched += [MEMORY, ENTRIES]
        self.syncer.sync_paths(touched)
        synced = self.app.store.file_index()
        for path in (ahead[0], ahead[1]):  # the batch's ids stay (new to the index or not)
            self.ids[path] = synced[path].note_id
        return touched


def _in_step(app: App, syncer: RootsSyncer, report: SyncReport, user: User,
             copy_root: Path, make_app: Builder) -> None:
    # (an entry row, file.md#key, is no file: checked below against a fresh index)
    assert [p for p in harness.index_vs_disk(app) if not is_entry_path(p.split(": ", 1)[1])] \
        == []
    # (the harness chunks an entry file whole: its chunks are checked against a fresh index)
    assert harness.store_integrity(app) in ([], [f"chunks differ from disk: {ENTRIES}"])
    index = app.store.file_index()
    for path, note_id in user.ids.items():
        assert index[path].note_id == note_id, path
    read_problems = {p.path for p in report.problems if p.kind == "read"}
    assert not read_problems & set(user.gone), read_problems
    assert not set(report.changed_paths) & set(user.ids), "written over by the reconcile"
    # the memory's history ends with what is on disk; the older bytes never come after it
    key = "01M83T8CHRJ08VQRXNY5QM93GF"
    contents = [app.versions.content(key, v.n) for v in app.versions.history(key)]
    now = (app.vault_root / MEMORY).read_bytes()
    assert contents[-1] == now and user.before[MEMORY] not in contents[contents.index(now):]
    # the entry rows are those a fresh index of the same files gives
    shutil.copytree(app.vault_root, copy_root, symlinks=True)
    fresh, _ = make_app(copy_root)
    fresh.sync()
    entries = {p: f.content_hash for p, f in index.items() if "#" in p}
    assert entries and entries == {p: f.content_hash for p, f in fresh.store.file_index().items()
                                   if "#" in p}
    assert app.store.chunk_hashes() == fresh.store.chunk_hashes()  # every chunk, entries too
    fresh.close()
    # and a reconcile now has nothing to do
    again = syncer.reconcile()
    assert (again.added, again.modified, again.deleted, again.renamed) == (0, 0, 0, ()), again


@pytest.mark.parametrize("moment", ["memory not reached", "memory passed"])
def test_saves_during_a_first_index_are_kept(
        tmp_path: Path, make_app: Builder, corpora_dir: Path, moment: str) -> None:
    root = _vault(tmp_path / "vault", corpora_dir)
    app, _ = make_app(root, **{"sync.write_batch_files": BATCH})
    syncer = app.indexing.make_syncer()
    order = [e.path for e in scan_vault(root, app.vault_filter).entries]
    assert order.index(MEMORY) >= 2 * BATCH  # (the English help notes come first)

    def committed() -> set[str] | None:
        indexed = set(app.store.file_index())
        ready = MEMORY in indexed if moment == "memory passed" else len(indexed) >= 2 * BATCH
        return indexed if ready else None

    user = User(app, syncer, order, committed)
    report = syncer.reconcile(interleave=Interleave(user))  # cold: read ahead, batch by batch
    assert user.done and user.memory_passed is (moment == "memory passed")
    assert any(path.startswith("Renamed/0 ") for path in user.ids)  # a passed note moved
    assert user.calls > len(order) // BATCH  # let in at every commit
    _in_step(app, syncer, report, user, tmp_path / "copy", make_app)
    app.close()


def test_saves_while_a_reconcile_reads_every_note_first(
        tmp_path: Path, make_app: Builder, corpora_dir: Path) -> None:
    """A reconcile that removes something reads every changed note before it writes (renames
    are paired across the whole vault): the user's saves come in between two reads, over
    notes it has read already (not written yet) and notes it has not."""
    root = _vault(tmp_path / "vault", corpora_dir)
    app, _ = make_app(root, **{"sync.write_batch_files": BATCH})
    syncer = app.indexing.make_syncer()
    syncer.reconcile()
    order = [e.path for e in scan_vault(root, app.vault_filter).entries]
    notes = [p for p in order if p.startswith(HELP)]
    for path in notes:  # every help note changed while no daemon ran, one deleted
        _append(root / path, "A line written while no daemon ran.")
    (root / notes[-1]).unlink()
    _append(root / MEMORY, "Also: oven temperatures in °C.")
    reads = [p for p in order if p in {*notes[:-1], MEMORY}]  # the reconcile's, in order
    calls: list[int] = []

    def read_so_far() -> set[str] | None:
        calls.append(1)  # one call after each note read
        return set(reads[:len(calls)]) if len(calls) >= len(reads) // 3 else None

    user = User(app, syncer, reads, read_so_far)
    report = syncer.reconcile(interleave=Interleave(user))
    assert user.done and user.memory_passed is False
    _in_step(app, syncer, report, user, tmp_path / "copy", make_app)
    app.close()


def test_overtaken_covers_a_path_its_folder_and_its_entry_rows() -> None:
    left = Overtaken(["Help/zh/快速入门/", "Memory/facts.md", "notes:Inbox/Today.md"])
    assert "Help/zh/快速入门/创建库.md" in left and "Help/zh/快速入门" in left
    assert "Help/zh/快速入门 moved/创建库.md" not in left and "Help/zh" not in left
    assert "Memory/facts.md#0a1b2c3d" in left and "Memory/facts.md" in left
    assert "Memory/other.md#0a1b2c3d" not in left
    assert "notes:Inbox/Today.md" in left and "Inbox/Today.md" not in left
    assert not Overtaken() and "anything.md" not in Overtaken()


def test_an_interleave_called_within_its_own_work_does_nothing() -> None:
    calls: list[int] = []

    def run() -> list[str]:
        calls.append(1)
        interleave()  # the batch goes through the same syncer, which calls it again
        assert interleave.running
        return ["a.md"]

    interleave = Interleave(run)
    interleave()
    assert calls == [1] and not interleave.running and "a.md" in interleave.overtaken


# --------------------------------------------------------------------------- dreamd run

#: ``dreamd ARGS`` as the console script runs it, with the daemon's FAKE embedder (the store
#: is built with it: this test is about when a save is indexed, not about meaning).
_CLI = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "import daemon.app as app_module\n"
    "from daemon_harness import load_fake_embedder\n"
    "app_module.make_embedder = lambda loaded: load_fake_embedder()  # FAKE\n"
    "from daemon.cli import main\n"
    "sys.argv = ['dreamd', *sys.argv[2:]]\n"
    "main()\n"
)
QUOKKA = "Field notes/Quokka census.md"


def _dreamd(*args: str) -> subprocess.CompletedProcess[str]:
    support = Path(__file__).resolve().parents[1] / "support"
    env = {k: v for k, v in os.environ.items() if k != harness.EMBED_DELAY_VAR}
    return subprocess.run([sys.executable, "-c", _CLI, str(support), *args],
                          capture_output=True, text=True, timeout=300, check=False, env=env)


def test_a_note_saved_during_the_first_index_is_found_before_it_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: list[Any],
        corpora_dir: Path) -> None:
    """``dreamd run`` on a vault never indexed (the demo vault and the 173 English notes of
    the Obsidian help vault), the FAKE embedder slowed down so that the first index lasts
    minutes: a note saved once it is under way is found by ``dreamd search`` while it still
    runs; ``dreamd status`` says the daemon is reconciling and how far; SIGTERM ends the
    index between two commits, and the next start finishes it."""
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    help_vault = corpora_dir / "obsidian-help"
    for note in sorted((help_vault / "en").rglob("*.md")):
        target = vault / "Help" / note.relative_to(help_vault)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
    monkeypatch.setenv(harness.EMBED_DELAY_VAR, "0.1")
    monkeypatch.setenv("DREAMD_SYNC__WRITE_BATCH_FILES", "32")  # read ahead, batch by batch
    daemon = harness.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(daemon)
    harness.wait_until(daemon.status, lambda s: s.get("state") == "reconciling" and bool(
        s.get("work")) and s["work"]["done"] > 0, timeout_s=120, what="the first index under way")
    (vault / "Field notes").mkdir()
    (vault / QUOKKA).write_text(
        "# Quokka census\n\nThe quokka lighthouse keeper counts marmalade jars at dawn.\n",
        encoding="utf-8")
    said: list[str] = []

    def search() -> list[str]:
        done = _dreamd("search", "--json", "--limit", "5", "--vault", str(vault),
                       "quokka lighthouse marmalade")
        said.append(done.stderr)
        if done.returncode == 4 and "not indexed yet: the daemon (pid" in done.stderr:
            return []  # (its first commit is not made yet: said so, with how far it got)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)  # (an object: the index is partial, and says so)
        assert answer["index"]["partial"] is True, answer
        return [hit["path"] for hit in answer["hits"]]

    harness.wait_until(search, lambda paths: QUOKKA in paths, timeout_s=120, every_s=0.5,
                       what="dreamd search finds the note saved during the first index")
    during = daemon.status()
    assert during["state"] == "reconciling" and during["work"]["kind"] == "reconcile" \
        and during["work"]["done"] < during["work"]["total"], during
    assert during["last_batch"]["added"] == 1, during
    assert not any("no daemon is running" in text for text in said), said
    shown = _dreamd("status", "--vault", str(vault))
    line = next(ln for ln in shown.stdout.splitlines() if ln.startswith("daemon"))
    assert "reconciling the vault (" in line and " to go " in line, shown.stdout
    assert "never: the daemon is indexing the vault now" in shown.stdout, shown.stdout
    report = json.loads(_dreamd("status", "--json", "--vault", str(vault)).stdout)
    assert report["daemon"]["state"] == "reconciling" and report["last_sync"] is None
    assert report["daemon"]["work"]["kind"] == "reconcile"

    assert daemon.stop(timeout_s=60) == 0  # between two commits, long before the end
    assert [e for e in daemon.events() if e.get("event") == "daemon.reconcile_stopped"]
    monkeypatch.delenv(harness.EMBED_DELAY_VAR)
    again = harness.DaemonProcess.start(vault, tmp_path / "daemon-again.log")
    daemons.append(again)
    again.wait_state("watching", timeout_s=300)
    harness.wait_until(lambda: harness.index_vs_disk(harness.fresh_app(vault)), lambda p: not p,
                       timeout_s=120, what="index == disk", every_s=0.5)
    assert again.stop() == 0


def test_a_client_is_told_the_daemon_is_still_indexing_not_that_there_is_none(
        tmp_path: Path) -> None:
    from daemon import client

    status = tmp_path / "daemon.json"
    with pytest.raises(client.NoDaemon):
        client.api_socket(tmp_path)
    for state, work, said in [
        ("reconciling", {"kind": "reconcile", "phase": "indexing", "done": 1024,
                         "total": 5914, "files": 5914},
         "is indexing the vault (1,024 of 5,914 files indexed); notes saved meanwhile"),
        ("reconciling", None, "is reconciling the vault with its index"),
        ("starting", None, "is reconciling the vault with its index"),
    ]:
        status.write_text(json.dumps({"pid": os.getpid(), "state": state, "work": work}),
                          encoding="utf-8")
        with pytest.raises(client.DaemonUnavailable) as raised:
            client.api_socket(tmp_path)
        assert not isinstance(raised.value, client.NoDaemon)  # no second daemon started
        assert f"the daemon (pid {os.getpid()}) {said}" in str(raised.value)
    for pid, state in [(os.getpid(), "watching"), (os.getpid(), "stopped"), (0, "reconciling")]:
        status.write_text(json.dumps({"pid": pid, "state": state}), encoding="utf-8")
        with pytest.raises(client.NoDaemon):
            client.api_socket(tmp_path)
    status.write_text("{not json", encoding="utf-8")
    with pytest.raises(client.NoDaemon):
        client.api_socket(tmp_path)


@pytest.mark.parametrize("vault", ["/home/me/notes", "/Users/王/笔记 库"])
def test_status_during_a_first_index_says_the_daemon_is_at_it(vault: str) -> None:
    """Not "never (index it: dreamd sync …)" while the daemon indexes the vault: what it is
    doing, how far it got, and what it indexed so far."""
    import io
    from zoneinfo import ZoneInfo

    from rich.console import Console

    from daemon import render
    from daemon.status import StatusReport

    buffer = io.StringIO()
    render.print_status(Console(file=buffer, width=200), StatusReport(
        vault=vault, store="/s/lancedb", state_dir="/s", last_sync=None,
        last_sync_duration_s=None, counts={"files": 1030, "notes": 1024},
        daemon={"pid": 7, "state": "reconciling", "watcher": "inotify", "queue_depth": 0,
                "work": {"kind": "reconcile", "phase": "indexing", "done": 1024,
                         "total": 5914, "files": 5914,
                         "started_at": "2026-12-07T02:01:33+00:00"}}), ZoneInfo("UTC"))
    lines = buffer.getvalue().splitlines()
    assert "last sync: never: the daemon is indexing the vault now (see daemon)" in lines
    assert "daemon: pid 7, reconciling the vault (5,914 files new or changed): 1024 of 5914 " \
        "indexed, 4890 to go (since 02:01:33 UTC), watcher inotify, queue 0" in lines, lines
    assert "files: 1030" in lines and "notes: 1024" in lines
