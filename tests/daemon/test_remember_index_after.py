"""A ``remember``'s index write follows its answer (:mod:`daemon.index_writer`): a search in
the same process waits for it, the next ``remember`` judges against the memory just written
without waiting, a process that exits writes it first, and a process killed before it leaves
a file on disk that the next reconcile indexes.

The background writer is held back (``_held``) until something waits for it: a reader that
did not wait would read the store without the memory, and the test would see it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest
from fakes import TokenHashEmbedder

import daemon.memories as memories_module
import daemon.memory_pool as memory_pool
from ccb.frontmatter_edit import set_properties
from daemon.app import App, load
from daemon.index_writer import BackgroundIndex
from daemon.memory_pool import first_chunk_hash
from magma.store_tables import StoreTables

REPO = Path(__file__).resolve().parents[2]
SUPPORT = REPO / "tests" / "support"
Builder = Callable[..., tuple[App, TokenHashEmbedder]]


def _held(app: App) -> list[str]:
    """Hold ``app``'s background index writer until a thread other than the writer waits for
    it; returns the list that names each such wait (the caller's thread name)."""
    background: BackgroundIndex = app.indexing.background
    gate = threading.Event()
    write, settle = background._write, background.settle
    waits: list[str] = []

    def held(paths: list[str]) -> bool:
        assert gate.wait(timeout=60), "nothing waited for the index write"
        return write(paths)

    def waiting(timeout_s: float | None = None) -> None:
        if threading.current_thread().name != "dreamd-index-write":
            waits.append(threading.current_thread().name)
            gate.set()
        settle(timeout_s)

    background._write = held  # type: ignore[method-assign]
    background.settle = waiting  # type: ignore[method-assign]
    return waits


def test_a_search_right_after_remember_finds_the_memory(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    app.sync()
    waits = _held(app)
    made = app.memories().remember("The greenhouse valve code is tamarind-4471.",
                                   type="reference")
    assert waits == []  # answered before its index write
    assert app.indexing.background.pending
    hits = app.search("greenhouse valve tamarind-4471", limit=5)
    assert waits and made.path in [hit.path for hit in hits]
    assert not app.indexing.background.pending


def test_the_next_remember_is_judged_against_the_memory_not_indexed_yet(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second of two remembers in a row (a paraphrase, ``bench/write_pairs/dev.jsonl``
    dev-044, judged by the real model's vectors) is the same memory while the first one's
    index write still waits: the judgement reads the memory file and the vector kept of it,
    not the index. (An update then waits for that write before it changes the file: its
    version is recorded first.)"""
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    app.sync()
    waits = _held(app)
    real_decide = memories_module.decide
    monkeypatch.setattr(memories_module, "decide", lambda *args, **kwargs: (
        waits.append("judged"), real_decide(*args, **kwargs))[1])
    first = app.memories().remember("The team's standup is at 9:30 every weekday.",
                                    type="project", subject="project.standup.time")
    second = app.memories().remember("Daily standup: weekdays, 9:30 a.m.", type="project",
                                     subject="project.standup.time")
    assert first.action == "created"
    assert second.action in {"duplicate", "updated"} and second.path == first.path
    assert second.candidate == first.path and "cosine" in (second.judgement or "")
    assert waits[:2] == ["judged", "judged"]  # both judged before anything waited
    app.close()  # the pending write goes in before the engines close
    assert first.path in app.open_store.file_index()


def _child(vault: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Run ``body`` in a new Python process with ``app`` (fake embedder, ``vault``) built."""
    script = textwrap.dedent("""\
        import os, signal, sys
        sys.path[:0] = [{repo!r}, {support!r}]
        from fakes import TokenHashEmbedder
        from daemon.app import App, load
        app = App.create(load(None, None, {{"vault.path": {vault!r}}}),
                         embedder=TokenHashEmbedder())
        """).format(repo=str(REPO), support=str(SUPPORT), vault=str(vault)) + \
        textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=os.environ.copy(), cwd=REPO)


def _said(stdout: str) -> list[str]:
    """The words after ``remembered`` on the child's line saying so (its logs around it)."""
    return next(line.split()[1:] for line in stdout.splitlines()
                if line.startswith("remembered "))


def test_a_process_that_exits_after_remember_writes_the_index_first(
        vault: Path, make_app: Builder) -> None:
    """No close, no wait: the interpreter's exit waits for the writer (not a daemon
    thread)."""
    app, _ = make_app(vault)
    app.sync()
    done = _child(vault, """\
        made = app.memories().remember("The attic hatch key is marigold-2210.", type="reference")
        print("remembered", made.path, app.indexing.background.pending, flush=True)
        """)
    assert done.returncode == 0, done.stderr[-2000:]
    path, pending = _said(done.stdout)
    assert pending == "True"  # it had not been written when remember answered
    fresh, _ = make_app(vault)
    # (the child's log is on its stdout: what its writer did, or the error it logged)
    assert path in fresh.store.file_index(), done.stdout[-6000:] + done.stderr[-2000:]
    assert path in [hit.path for hit in fresh.search("attic hatch marigold-2210", limit=5)]


def test_an_exit_waits_for_a_write_that_uses_a_thread_pool(
        vault: Path, make_app: Builder) -> None:
    """LanceDB 0.41 hands each write to a ``concurrent.futures`` pool, and the interpreter's
    exit refuses new work to every pool before it joins the threads: the writer, still at
    work when the main thread ended, lost the memory's index write. The exit now waits for
    the writer first. Here the writer reaches a pool of its own 0.5 s after the end."""
    app, _ = make_app(vault)
    app.sync()
    done = _child(vault, """\
        import time
        from concurrent.futures import ThreadPoolExecutor
        pool = ThreadPoolExecutor(max_workers=1)
        background = app.indexing.background
        write = background._write
        def late(paths):
            time.sleep(0.5)  # the main thread has ended by now
            pool.submit(lambda: None).result()
            return write(paths)
        background._write = late
        made = app.memories().remember("The cellar lamp switch is behind the cider rack.",
                                       type="reference")
        print("remembered", made.path, background.pending, flush=True)
        """)
    assert done.returncode == 0, done.stderr[-2000:]
    path, pending = _said(done.stdout)
    assert pending == "True"
    fresh, _ = make_app(vault)
    assert path in fresh.store.file_index(), done.stdout[-6000:] + done.stderr[-2000:]


def test_a_version_record_that_fails_unexpectedly_leaves_the_index_write_to_go_in(
        vault: Path, make_app: Builder) -> None:
    """Whatever a version record raises (here a RuntimeError, as a LanceDB error may be), the
    index write after it still goes in, and so do the writes asked for after that one."""
    app, _ = make_app(vault)
    app.sync()
    background: BackgroundIndex = app.indexing.background
    gate = threading.Event()

    def broken() -> None:
        gate.wait(timeout=60)
        raise RuntimeError("commit conflict")

    background.submit((), broken)
    made = app.memories().remember("The boathouse padlock code is quince-5183.",
                                   type="reference")
    gate.set()
    app.indexing.settle()
    assert made.path in app.store.file_index()
    background.submit((), broken)
    later = app.memories().remember("The shed's spare fuse is a 13 amp one.", type="reference")
    gate.set()
    app.indexing.settle()
    assert later.path in app.store.file_index()


def test_the_cli_remember_writes_the_index_before_it_exits(
        vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    app.sync()
    boot = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
            "import daemon_harness as module\nsys.exit(module.cli_worker())\n")
    done = subprocess.run(
        [sys.executable, "-c", boot, str(SUPPORT), str(REPO)], capture_output=True, text=True,
        timeout=300, cwd=REPO, env={**os.environ, "NO_COLOR": "1"},
        input=json.dumps(["remember", "The boat trailer lock is 8143.", "--type", "reference",
                          "--vault", str(vault), "--json"]) + "\n")
    assert done.returncode == 0, done.stderr[-2000:]
    path = json.loads(done.stdout.split("\n", 1)[1])["path"]
    fresh, _ = make_app(vault)
    assert path in fresh.store.file_index()


def test_a_process_killed_before_the_index_write_leaves_a_file_the_next_sync_indexes(
        vault: Path, make_app: Builder) -> None:
    """SIGKILL between the file write and the index write: the memory is on disk, the
    index does not hold it, and the next reconcile (``dreamd sync``, a daemon's start)
    indexes it; a search finds it then."""
    app, _ = make_app(vault)
    app.sync()
    done = _child(vault, """\
        import threading
        answered = threading.Event()
        def killed(paths):
            answered.wait()
            os.kill(os.getpid(), signal.SIGKILL)
        app.indexing.background._write = killed
        made = app.memories().remember("The cellar pump code is juniper-6602.", type="reference")
        print("remembered", made.path, flush=True)
        answered.set()
        signal.pause()
        """)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    (path,) = _said(done.stdout)
    assert b"juniper-6602" in (vault / path).read_bytes()
    fresh, _ = make_app(vault)
    assert path not in fresh.store.file_index()  # the kill came first
    fresh.sync()
    assert path in fresh.store.file_index()
    assert path in [hit.path for hit in fresh.search("cellar pump juniper-6602", limit=5)]


def test_a_process_stopped_by_sigterm_after_remember_writes_the_index_first(
        vault: Path, make_app: Builder) -> None:
    """SIGTERM (an MCP client stopping its stdio server) right after remember answered, the
    index write still pending: the command's handler (:func:`daemon.entry.exit_on_sigterm`)
    lets the write go in before the process ends."""
    app, _ = make_app(vault)
    app.sync()
    done = _child(vault, """\
        import threading
        from daemon.entry import SIGTERM_EXIT, exit_on_sigterm
        exit_on_sigterm()
        answered = threading.Event()
        write = app.indexing.background._write
        def after_the_answer(paths):
            answered.wait()
            return write(paths)
        app.indexing.background._write = after_the_answer
        made = app.memories().remember("The shed padlock code is tamarind-4417.",
                                       type="reference")
        print("remembered", made.path, flush=True)
        answered.set()
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()
        """)
    assert done.returncode == 143, done.stderr[-2000:]
    (path,) = _said(done.stdout)
    fresh, _ = make_app(vault)
    assert path in fresh.store.file_index()  # no sync needed
    assert path in [hit.path for hit in fresh.search("shed padlock tamarind-4417", limit=5)]


def test_each_remember_is_a_version_whatever_follows_before_its_index_write(
        vault: Path, make_app: Builder) -> None:
    """A memory written, updated by the next remember and edited by hand, all before the
    first index write: the history holds the memory as written and as updated (the bytes
    each remember wrote, recorded on the background writer before its index write) and as
    edited (recorded as that index write reads it)."""
    app, _ = make_app(vault)
    app.sync()
    waits = _held(app)
    first = app.memories().remember("Always add a 30 s timeout to the billing API client.",
                                    type="feedback", subject="billing.timeout")
    update = app.memories().remember("Always add a 30 s timeout to the billing API client. "
                                     "Log every retry with the request id.",
                                     type="feedback", subject="billing.timeout")
    assert update.action == "updated" and update.path == first.path
    file = vault / first.path
    file.write_bytes(file.read_bytes().replace(b"request id", b"request id and the status"))
    assert waits == [] and app.indexing.background.pending
    app.sync()
    versions = app.versions.all_versions({first.memory_id})[first.memory_id]
    assert [(v.n, v.origin) for v in versions] == [(1, "api"), (2, "api"), (3, "user-edit")]
    assert b"request id" not in app.versions.content(first.memory_id, 1)
    assert b"request id.\n" in app.versions.content(first.memory_id, 2)
    assert b"and the status" in app.versions.content(first.memory_id, 3)


#: dev-044 of ``bench/write_pairs/dev.jsonl`` (a paraphrase: the same memory).
STANDUP = "The team's standup is at 9:30 every weekday."
STANDUP_AGAIN = "Daily standup: weekdays, 9:30 a.m."


def _judged_then(app: App, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """:func:`_held`'s list, with ``judged`` added each time ``remember`` judges."""
    waits = _held(app)
    real_decide = memories_module.decide
    monkeypatch.setattr(memories_module, "decide", lambda *args, **kwargs: (
        waits.append("judged"), real_decide(*args, **kwargs))[1])
    return waits


def test_a_remember_while_a_memory_is_written_again_still_judges_against_it(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index write of a memory deletes its chunk rows and appends them again (two
    commits, :meth:`magma.store_tables.StoreTables.rewrite_groups`). A ``remember`` judged
    in between reads the table without them, and no vector is kept of the memory: it embeds
    the memory's first chunk itself and finds it (the paraphrase dev-044, by the real
    model's vectors), without waiting for that write."""
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    app.sync()
    first = app.memories().remember(STANDUP, type="project", subject="project.standup.time")
    app.indexing.settle()
    store = app.open_store
    store.recent_vectors.drop(set(store.chunk_hashes([first.path]).values()))
    file = vault / first.path  # its properties edited: its rows written again, same text
    file.write_bytes(set_properties(file.read_bytes(), {"tags": ["team"]}, path=first.path))
    between, go_on = threading.Event(), threading.Event()
    rewrite = StoreTables.rewrite_groups

    def halfway(table: Any, group: str, data: Any, groups: list[str], *,
                empty: Collection[str] = ()) -> None:
        if table.name != "chunks":
            return rewrite(table, group, data, groups, empty=empty)
        rewrite(table, group, data.slice(0, 0), groups, empty=empty)  # the delete
        between.set()
        assert go_on.wait(timeout=60), "the test never let the write go on"
        table.add(data)
        return None

    monkeypatch.setattr(StoreTables, "rewrite_groups", staticmethod(halfway))
    waits: list[str] = []
    real_decide, settle = memories_module.decide, app.indexing.background.settle
    monkeypatch.setattr(memories_module, "decide", lambda *args, **kwargs: (
        waits.append("judged"), real_decide(*args, **kwargs))[1])

    def waiting(timeout_s: float | None = None) -> None:
        if threading.current_thread().name != "dreamd-index-write":
            waits.append(threading.current_thread().name)
            go_on.set()
        settle(timeout_s)

    app.indexing.background.settle = waiting  # type: ignore[method-assign]
    app.indexing.index_soon([first.path])
    assert between.wait(timeout=60)
    assert not store.chunk_hashes([first.path])  # its rows are gone for a moment
    second = app.memories().remember(STANDUP_AGAIN, type="project",
                                     subject="project.standup.time")
    assert waits[:1] == ["judged"]  # judged before anything waited for the write
    assert second.candidate == first.path and "cosine" in (second.judgement or "")
    assert second.action in {"duplicate", "updated"} and second.path == first.path
    assert first.path in [hit.path for hit in app.search("team standup", limit=5)]
    assert store.chunk_hashes([first.path])  # the search waited: the rows are back
    app.close()


def test_many_vectors_missing_wait_for_the_pending_write(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More vectors missing than a ``remember`` embeds itself
    (:data:`daemon.memory_pool.EMBED_UNINDEXED`, here 0): it waits for the pending index
    write, then reads them from the table, and the memory just written is judged by its
    vector all the same."""
    monkeypatch.setattr(memory_pool, "EMBED_UNINDEXED", 0)
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    app.sync()
    waits = _judged_then(app, monkeypatch)
    first = app.memories().remember(STANDUP, type="project", subject="project.standup.time")
    store = app.open_store
    kept = first_chunk_hash(app.memories().find(first.memory_id).note)
    store.recent_vectors.drop([kept])  # not kept: in the table once the write is in
    assert waits == ["judged"] and app.indexing.background.pending
    second = app.memories().remember(STANDUP_AGAIN, type="project",
                                     subject="project.standup.time")
    assert waits[1:3] == ["MainThread", "judged"]  # waited, then judged
    assert second.candidate == first.path and "cosine" in (second.judgement or "")
    app.close()


def test_a_forget_right_after_two_remembers_leaves_history_and_index_in_step(
        vault: Path, make_app: Builder) -> None:
    """A newer memory forgotten while both remembers' version records and index writes
    still wait: the older one is current again, and ``check`` finds the file, its
    history and its index row in step (the forget waits for them before it writes)."""
    app, _ = make_app(vault)
    app.sync()
    waits = _held(app)
    service = app.memories()
    old = service.remember("The office wifi password rotates every Monday.",
                           type="project", subject="office.wifi.rotation")
    new = service.remember("The office wifi password rotates every Friday.",
                           type="project", subject="office.wifi.rotation")
    assert new.superseded == old.path and waits == []
    writer, delete = service.writer, service.writer.delete
    background = app.indexing.background

    def delete_then_let_the_writer_run(*args: Any, **kwargs: Any) -> Any:
        done = delete(*args, **kwargs)
        waits.append("forget")
        if background.pending:  # the waiting writes run now, amid the forget's own writes
            threading.Thread(target=background.settle, name="reader").start()
            background.settle(30.0)
        return done

    writer.delete = delete_then_let_the_writer_run  # type: ignore[method-assign]
    service.forget(new.memory_id)
    assert "forget" in waits
    report = app.consistency().check()
    assert report.clean, report.findings
