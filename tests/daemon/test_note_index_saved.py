"""The note-level BM25 index of a large vault (``rerank.MANY_NOTES``, lowered here) saved in
the vault's state folder and read back at the next start (:mod:`magma.note_bm25_files`):
nothing forgotten stays in it, and a damaged file is built again. Real LanceDB and files in
``tmp_path``; the fake embedder (``make_app``), as the tests are not about meaning."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from daemon import rerank
from daemon.app import App
from magma import note_bm25_files
from magma.note_bm25_files import NOTE_INDEX_FOLDER

#: What a hit found by its words across the whole note says (its ``why``).
WHOLE_NOTE = "by your words across the whole note"

Builder = Callable[..., tuple[App, object]]
_SECTION = "Filler about the weather and the roads, nothing else of note here. " * 5
#: Long enough for a build on a busy machine (seconds).
WAIT_S = 60.0


@pytest.fixture(autouse=True)
def _large(monkeypatch: pytest.MonkeyPatch, vault: Path) -> None:
    monkeypatch.setattr(rerank, "MANY_NOTES", 1)  # this small vault counts as large
    (vault / "Trip log.md").write_text(
        f"# Trip log\n\n## Monday\n\n{_SECTION}\nWe rented a tandem kayak.\n\n"
        f"## Thursday\n\n{_SECTION}\nThe night train reached Porto at dawn.\n",
        encoding="utf-8")


def files_holding(root: Path, word: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


def bm25_why(app: App, query: str, path: str) -> str:
    hit = next(h for h in app.search(query, limit=10, count_recall=False) if h.path == path)
    return "; ".join(hit.why)


def test_a_restarted_app_reads_the_saved_index(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    try:
        app.sync()
        app.retriever.warm(bm25_wait_s=WAIT_S)
        saved = app.state_dir / NOTE_INDEX_FOLDER
        assert len(list(saved.glob("index-*"))) == 1
    finally:
        app.close()
    app, _ = make_app(vault)
    try:
        with capture_logs() as logs:
            app.retriever.warm(bm25_wait_s=WAIT_S)
        loaded = [e for e in logs if e["event"] == "search.note_bm25_loaded"]
        assert loaded and loaded[0]["same"] is True
        assert f"#1 {WHOLE_NOTE}" in bm25_why(app, "kayak Porto", "Trip log.md")
    finally:
        app.close()


def test_a_forgotten_memory_leaves_no_word_in_any_file_of_the_data_folder(
    vault: Path, make_app: Builder,
) -> None:
    marker = "quillwortine"  # a made-up word, in no other note
    app, _ = make_app(vault)
    try:
        app.sync()
        service = app.memories()
        made = service.remember(f"The boathouse key is kept under the {marker} pot.",
                                type="reference")
        app.indexing.settle()
        app.retriever.warm(bm25_wait_s=WAIT_S)
        data = app.settings.storage.data_dir
        saved = app.state_dir / NOTE_INDEX_FOLDER
        assert [p for p in files_holding(data, marker) if saved in p.parents]  # its vocabulary
        service.forget(made.memory_id)
        assert files_holding(data, marker) == []
        # the next index is built and saved without it
        app.retriever.warm(bm25_wait_s=WAIT_S)
        assert len(list(saved.glob("index-*"))) == 1
        assert files_holding(data, marker) == []
        assert f"#1 {WHOLE_NOTE}" in bm25_why(app, "kayak Porto", "Trip log.md")
    finally:
        app.close()


def test_a_deleted_note_leaves_the_saved_index_when_the_next_one_is_saved(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rebuild soon after a save serves from the heap and writes nothing; the stop saves
    it, without the deleted note's words or path, linking the chunk token files that did
    not change instead of writing them again (one chunk a group, as in a large vault)."""
    monkeypatch.setattr(note_bm25_files, "BUCKET_CHUNKS", 1)
    marker = "brackenmoorish"  # a made-up word, in no other note
    (vault / "Lagoon.md").write_text(
        f"# Lagoon\n\n## Birds\n\n{_SECTION}\nHerons at the {marker} inlet.\n\n"
        f"## Boats\n\n{_SECTION}\nTwo skiffs.\n", encoding="utf-8")
    app, _ = make_app(vault)
    saved = app.state_dir / NOTE_INDEX_FOLDER
    try:
        app.sync()
        app.retriever.warm(bm25_wait_s=WAIT_S)
        assert files_holding(saved, marker)
        before = {p.name: p.stat() for p in saved.glob("index-*/*")}
        (vault / "Lagoon.md").unlink()
        app.sync()
        app.retriever.warm(bm25_wait_s=WAIT_S)
        assert f"#1 {WHOLE_NOTE}" in bm25_why(app, "kayak Porto", "Trip log.md")
        after = {p.name: p.stat() for p in saved.glob("index-*/*")}
        assert {n: (s.st_ino, s.st_mtime_ns) for n, s in after.items()} == \
            {n: (s.st_ino, s.st_mtime_ns) for n, s in before.items()}  # nothing written
    finally:
        app.close()
    assert len(list(saved.glob("index-*"))) == 1
    assert files_holding(saved, marker) == []
    assert files_holding(saved, "Lagoon") == []  # nor its path
    tokens = {p.name: p.stat().st_ino for p in saved.glob("index-*/tokens-*.npy")}
    kept = {n for n in tokens if n in before}
    assert kept and {tokens[n] for n in kept} == {before[n].st_ino for n in kept}
    assert len(kept) < len(tokens) or len(tokens) < len(
        [n for n in before if n.startswith("tokens-")])  # the note's own were not kept


@pytest.mark.parametrize("damage", ["data.csc.index.npy", "vocab.index.json",
                                    "tokens-*.npy"])
def test_a_truncated_saved_index_is_logged_and_built_again(
    vault: Path, make_app: Builder, damage: str,
) -> None:
    app, _ = make_app(vault)
    try:
        app.sync()
        app.retriever.warm(bm25_wait_s=WAIT_S)
        (saved,) = (app.state_dir / NOTE_INDEX_FOLDER).glob("index-*")
    finally:
        app.close()
    damaged = next(saved.glob(damage))
    data = damaged.read_bytes()
    damaged.write_bytes(data[: len(data) * 2 // 3])
    app, _ = make_app(vault)
    try:
        with capture_logs() as logs:
            app.retriever.warm(bm25_wait_s=WAIT_S)
        assert [e for e in logs if e["event"] == "search.note_bm25_unreadable"]
        assert f"#1 {WHOLE_NOTE}" in bm25_why(app, "kayak Porto", "Trip log.md")
        assert len(list((app.state_dir / NOTE_INDEX_FOLDER).glob("index-*"))) == 1
    finally:
        app.close()



#: ``dreamd ARGS`` in a subprocess with this small vault counted as large and the fake
#: embedder (the test is about what the user reads on stderr, not about meaning).
_LARGE_CLI = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "from daemon import rerank, cli\n"
    "import daemon.app as app_module\n"
    "from daemon_harness import load_fake_embedder\n"
    "rerank.MANY_NOTES = 1\n"
    "app_module.make_embedder = lambda loaded: load_fake_embedder()  # FAKE: see above\n"
    "sys.argv = ['dreamd', *sys.argv[2:]]\n"
    "cli.main()\n"
)


def test_a_damaged_saved_index_is_one_plain_line_on_the_commands_stderr(
    vault: Path, make_app: Builder,
) -> None:
    import subprocess
    import sys

    app, _ = make_app(vault)
    try:
        app.sync()
        app.retriever.warm(bm25_wait_s=WAIT_S)
        folder = app.state_dir / NOTE_INDEX_FOLDER
    finally:
        app.close()
    support = Path(__file__).resolve().parents[1] / "support"
    for verbose in ([], ["-v"]):
        (saved,) = folder.glob("index-*")  # (the last command built and saved it again)
        damaged = next(saved.glob("vocab.index.json"))
        damaged.write_bytes(damaged.read_bytes()[:20])
        done = subprocess.run(
            [sys.executable, "-c", _LARGE_CLI, str(support), *verbose, "search",
             "kayak Porto", "--vault", str(vault)],
            capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        assert "Trip log.md" in done.stdout
        said = [line for line in done.stderr.splitlines()
                if "note_bm25_unreadable" in line]
        # one line a person reads: no JSON object, no timestamp, no traceback; what
        # happened and what dreamd does about it
        assert len(said) == 1, done.stderr
        assert said[0].startswith("dreamd: warning: search.note_bm25_unreadable: ")
        assert said[0].endswith("; the index is built again")
        assert not any(line.lstrip().startswith("{") for line in done.stderr.splitlines())
        assert "Traceback" not in done.stderr and "timestamp" not in done.stderr
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", done.stderr), done.stderr
