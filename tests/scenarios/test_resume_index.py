"""A cold index killed part-way and run again continues where it stopped: no chunk is embedded
twice.

A subprocess indexes a vault of generated notes (``App.sync``, commits every
``sync.write_batch_files`` notes) with the token-hash FAKE embedder behind the product's own
embedding cache (this test is about which chunks reach the model, not about meaning); the fake
appends the hash of every text it embedded to a log (once it has the vectors). In the first
run the process SIGKILLs itself as the model is called for the fourth time: three batches'
answers are in and the fourth is not, a point that does not depend on how loaded the machine
is (a kill timed from outside raced the cache's own write on a busy machine, where a chunk
the model had answered but nobody had kept yet was rightly embedded again). The test runs
the same index again to the end and reads the log: every chunk text reached the model once
(what was embedded before the kill came back from the store or the embedding cache), and the
index holds every note. Both runs read ahead (240 files to read, 20 per batch: the next
batch is read while this one is embedded and written, :mod:`daemon.read_ahead`), so the kill
also finds a batch read and not yet embedded.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fakes import TokenHashEmbedder

from config.errors import MassDeleteError
from daemon.app import App, load

pytestmark = pytest.mark.scenario

REPO = Path(__file__).resolve().parents[2]
NOTES = 240
BATCH_FILES = 20
#: The first run kills itself as the model is called this many times (three answers are in).
KILL_AT_CALL = 4

CHILD = """
import hashlib, os, signal, sys
sys.path[:0] = [{repo!r}, {support!r}]
from fakes import TokenHashEmbedder
from daemon.app import App, load

KILL_AT = int(sys.argv[1])

class Logged(TokenHashEmbedder):
    calls = 0

    def embed(self, texts):
        Logged.calls += 1
        if Logged.calls == KILL_AT:
            os.kill(os.getpid(), signal.SIGKILL)
        vectors = super().embed(texts)
        with open({log!r}, "a", encoding="utf-8") as out:  # what the model answered
            out.write("".join(hashlib.sha256(t.encode()).hexdigest() + "\\n" for t in texts))
            out.flush()
            os.fsync(out.fileno())
        return vectors

class Phases:
    def phase(self, name, total):
        print("phase", name, total, flush=True)

    def advance(self, units=1):
        pass

app = App.create(load(None, None, {{"vault.path": {vault!r},
                                    "sync.write_batch_files": {batch}}}), embedder=Logged())
report = app.sync(progress=Phases())
print("notes", report.added, "embedded", report.chunks_embedded, flush=True)
"""


def _vault(root: Path) -> Path:
    root.mkdir()
    for n in range(NOTES):
        (root / f"note {n:03d}.md").write_text(
            f"# Note {n}\n\nThe kiln log of day {n} says the glaze batch {n * 7} cooled "
            f"slowly.\n\n## Later\n\nEntry {n}: the shelf {n % 13} held the tiles of "
            f"order {n * 31}.\n", encoding="utf-8")
    return root


def _run(script: Path, env: dict[str, str], kill_at: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(script), str(kill_at)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_a_killed_cold_index_resumes_without_embedding_a_chunk_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path / "vault")
    log = tmp_path / "embedded.log"
    script = tmp_path / "index.py"
    script.write_text(CHILD.format(repo=str(REPO), support=str(REPO / "tests" / "support"),
                                   log=str(log), vault=str(vault), batch=BATCH_FILES),
                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMD_")}
    env.update({"DREAMD_STORAGE__DATA_DIR": str(tmp_path / "data"),
                "DREAMD_CONFIG": str(tmp_path / "config.toml"), "LANCEDB_LOG": "error"})
    first = _run(script, env, KILL_AT_CALL)
    out, _ = first.communicate(timeout=600)
    assert first.returncode == -signal.SIGKILL, f"the index was not stopped part-way:\n{out}"
    assert f"phase indexing {NOTES}" in out  # read ahead, not every note read first
    before = Counter(log.read_text(encoding="utf-8").split())
    assert sum(before.values()) > 0

    second = _run(script, env, 0)
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out
    assert "phase indexing " in out
    embedded = Counter(log.read_text(encoding="utf-8").split())
    twice = {h: n for h, n in embedded.items() if n > 1}
    assert twice == {}, f"{len(twice)} chunk texts embedded twice"
    assert sum(embedded.values()) > sum(before.values())  # the second run did the rest

    for key, value in env.items():  # the index now holds every note, each chunk once
        if key.startswith("DREAMD_"):
            monkeypatch.setenv(key, value)
    app = App.create(load(None, None, {"vault.path": str(vault)}),
                     embedder=TokenHashEmbedder())
    indexed = {p for p, f in app.store.file_index().items() if f.kind == "note"}
    assert indexed == {f"note {n:03d}.md" for n in range(NOTES)}
    assert sum(1 for _ in app.store.chunk_hashes()) == len(set(app.store.chunk_hashes()))
    app.close()


def test_a_resumed_cold_index_applies_deletions_made_while_it_was_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index goes in path order: killed after its first batches, it holds the notes of
    the first folder only. The user deletes that folder (an old archive) before the index
    is run again: most of what is indexed is gone, but the walk finds every other note of
    the vault there, which an unmounted drive never shows. The resumed index applies the
    deletions and indexes the rest; it is not refused as a mass delete (before: "40 of 40
    indexed files (100%) are gone from the vault", asking for --allow-mass-delete)."""
    vault = _vault(tmp_path / "vault")
    archive = vault / "Archive"
    archive.mkdir()
    for n in range(40):  # first in path order: "Archive/…" < "note …"
        (vault / f"note {n:03d}.md").rename(archive / f"note {n:03d}.md")
    log = tmp_path / "embedded.log"
    script = tmp_path / "index.py"
    script.write_text(CHILD.format(repo=str(REPO), support=str(REPO / "tests" / "support"),
                                   log=str(log), vault=str(vault), batch=BATCH_FILES),
                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMD_")}
    env.update({"DREAMD_STORAGE__DATA_DIR": str(tmp_path / "data"),
                "DREAMD_CONFIG": str(tmp_path / "config.toml"), "LANCEDB_LOG": "error"})
    first = _run(script, env, 3)  # two batches in: the 40 notes of Archive/
    out, _ = first.communicate(timeout=600)
    assert first.returncode == -signal.SIGKILL, f"the index was not stopped part-way:\n{out}"
    shutil.rmtree(archive)

    second = _run(script, env, 0)
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out
    for key, value in env.items():
        if key.startswith("DREAMD_"):
            monkeypatch.setenv(key, value)
    app = App.create(load(None, None, {"vault.path": str(vault)}),
                     embedder=TokenHashEmbedder())
    indexed = {p for p, f in app.store.file_index().items() if f.kind == "note"}
    assert indexed == {f"note {n:03d}.md" for n in range(40, NOTES)}
    app.close()

    # deletions with nothing new found are still refused (what an unmounting drive shows)
    for n in range(100, NOTES):
        (vault / f"note {n:03d}.md").unlink()
    app = App.create(load(None, None, {"vault.path": str(vault)}),
                     embedder=TokenHashEmbedder())
    with pytest.raises(MassDeleteError, match="140 of 200 indexed files"):
        app.sync()
    app.close()
