"""A save costs what it changed, not what the vault holds: the ``edges`` table rewrites only
the changed notes' rows, the in-memory vectors take the new rows after the ones they hold
(no copy of them), the search's graph view is patched, and a one-shot sync compacts the
tables only once enough writes wait — and search answers as a fresh process does.

Real LanceDB store and files in tmp_path (a copy of the demo vault); the token-hash fake
embedder (nothing here is about meaning)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from lineage_files import write_memory

import magma.graph_keeper as graph_keeper
from daemon.app import App
from magma.graph_step import NoteGraph, step_graph
from magma.store_tables import MAINTAIN_FRAGMENTS, MAINTAIN_UNINDEXED_ROWS
from magma.vector_index import ExactVectors, Float16Vectors, Int8Vectors

Builder = Callable[..., tuple[App, object]]


def _append(vault: Path, path: str, line: str) -> None:
    with (vault / path).open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}\n")


def _warm(app: App) -> None:
    """What the running daemon loads once it watches (daemon.client_desk), in its order."""
    app.indexing.graph_keeper.graph()
    app.indexing.graph_keeper.step_graph()
    app.search("warm up", limit=10, count_recall=False)


def _same_view(view: NoteGraph | None, fresh: NoteGraph) -> None:
    assert view is not None
    assert view.nodes == fresh.nodes
    assert dict(view.index) == dict(fresh.index)
    assert view.edges == fresh.edges
    for name in ("offsets", "targets", "weights", "degree"):
        assert np.array_equal(getattr(view, name), getattr(fresh, name)), name


def _writes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[dict[str, str]], Any]]:
    """Every ``write_rows`` of the graph keeper: its rows and the nodes they are of."""
    calls: list[tuple[list[dict[str, str]], Any]] = []
    real = graph_keeper.write_rows

    def spy(store: Any, rows: list[dict[str, str]], nodes: Any, *args: Any) -> int:
        calls.append((rows, None if nodes is None else set(nodes)))
        return real(store, rows, nodes, *args)

    monkeypatch.setattr(graph_keeper, "write_rows", spy)
    return calls


def test_a_save_rewrites_only_the_saved_note_s_edge_rows(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, _ = make_app(vault)
    app.sync()
    writes = _writes(monkeypatch)
    again, _ = make_app(vault)  # a new process on an index in step: its warm-up writes nothing
    _warm(again)
    assert writes == []

    _append(vault, "Baking/Rye loaf.md", "Rested the dough overnight.")
    assert again.indexing.index_now(["Baking/Rye loaf.md"])
    assert len(writes) == 1
    rows, nodes = writes[0]
    assert nodes == {"note:Baking/Rye loaf.md"}
    assert {row["src"] for row in rows} == {"note:Baking/Rye loaf.md"}

    # a link added to a new target: the note's rows and the new target's node only
    _append(vault, "Baking/Rye loaf.md", "See [[Never written yet]].")
    assert again.indexing.index_now(["Baking/Rye loaf.md"])
    assert writes[1][1] == {"note:Baking/Rye loaf.md", "unresolved:never written yet"}


def test_the_search_s_graph_view_is_patched_and_equals_a_fresh_one(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, _ = make_app(vault)
    app.sync()
    _warm(app)
    keeper = app.indexing.graph_keeper
    derived: list[int] = []
    real = graph_keeper.step_graph
    monkeypatch.setattr(graph_keeper, "step_graph",
                        lambda graph: derived.append(1) or real(graph))
    edits: list[Callable[[], list[str]]] = [
        lambda: (_append(vault, "Welcome.md", "Also see [[Rye loaf]] and [[Mei Lin]]."),
                 ["Welcome.md"])[1],
        lambda: ((vault / "Baking/Flatbread.md").write_text(
            "# Flatbread\nLike [[Rye loaf]], from [[Sourdough starter]].\n", "utf-8"),
            ["Baking/Flatbread.md"])[1],
        lambda: ((vault / "Baking/Rye loaf.md").unlink(), ["Baking/Rye loaf.md"])[1],
        lambda: [write_memory(vault, "flatbread-on-sundays", "Flatbread on Sundays",
                              derived_from="kiln-first-firing-in-january")],
        lambda: ((vault / "Baking/Flatbread.md").unlink(), ["Baking/Flatbread.md"])[1],
    ]
    for edit in edits:
        assert app.indexing.index_now(edit())
        _same_view(keeper.step_graph(), step_graph(keeper.graph()))
    assert derived == []  # patched each time, never derived again


def test_the_daemon_s_warm_up_gives_search_the_graph_it_holds(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the daemon's own warm-up (daemon.client_desk): the vault graph is built once, and the
    # search takes its view from it instead of reading the edges table into a second graph
    import daemon.graph_stage as graph_stage
    from daemon.client_desk import ClientDesk

    first, _ = make_app(vault)
    first.sync()
    first.close()
    app, _ = make_app(vault)  # a daemon started on an index in step: nothing to build
    app.sync()
    read_whole: list[int] = []
    real = graph_stage.current_graph
    monkeypatch.setattr(graph_stage, "current_graph",
                        lambda store: read_whole.append(1) or real(store))
    running = SimpleNamespace(app=app, lock=threading.RLock(), stopping=True)
    ClientDesk(running)._warm_up()  # type: ignore[arg-type]  # (stopping: no API opened)
    snap = app.retriever.snapshot()
    assert snap.graph is not None and snap.graph is app.indexing.graph_keeper.step_graph()
    assert read_whole == []


def test_a_save_appends_its_vector_rows_without_copying_the_others(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    app.sync()
    _warm(app)
    snaps = [app.retriever.snapshot()]
    for i, path in enumerate(["Welcome.md", "Baking/Rye loaf.md", "Welcome.md"]):
        _append(vault, path, f"zqxsaved{i} rye crumb")
        assert app.indexing.index_now([path])
        hits = app.search(f"zqxsaved{i}", limit=5, count_recall=False)
        assert hits and hits[0].path == path
        snaps.append(app.retriever.snapshot())
    _, second, third = (s.chunk_vectors for s in snaps[1:])
    assert isinstance(second, ExactVectors) and isinstance(third, ExactVectors)
    kept = second.matrix.copy()
    # the later saves wrote their rows into the room after the first's: no copy
    assert np.shares_memory(second.matrix, third.matrix)
    assert np.array_equal(second.matrix, kept) and len(third) > len(second)
    last = snaps[-1]
    assert len(last.dead) == len(snaps[0].rows_by_path["Welcome.md"]) + len(
        snaps[0].rows_by_path["Baking/Rye loaf.md"]) + len(snaps[1].rows_by_path["Welcome.md"])
    assert last.chunk_count == len(last.chunk_paths) - len(last.dead)
    assert all(last.chunk_paths[r] == "" for r in last.dead.tolist())

    fresh, _ = make_app(vault)  # another process reads the store whole
    for query in ["rye crumb", "zqxsaved2", "sourdough starter", "kiln firing", "睡眠"]:
        ours = [(h.path, round(h.score, 6)) for h in app.search(query, count_recall=False)]
        theirs = [(h.path, round(h.score, 6)) for h in fresh.search(query, count_recall=False)]
        assert ours == theirs, query


def test_a_one_shot_sync_compacts_only_once_enough_writes_wait(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    app.sync()  # a first index: the full-text index is built at once
    assert app.store.counts().fts_unindexed_rows == 0
    _append(vault, "Welcome.md", "zqxwaiting")
    app.sync()
    assert app.store.counts().fts_unindexed_rows > 0  # not compacted for one save
    assert [h.path for h in app.search("zqxwaiting", count_recall=False)][:1] == ["Welcome.md"]
    # each save of another note leaves its rows in a data fragment of their own
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")
                   if "Memory" not in p.parts and "Archive" not in p.parts)
    assert len(notes) > MAINTAIN_FRAGMENTS
    for i, path in enumerate(notes[:MAINTAIN_FRAGMENTS]):
        _append(vault, path, f"zqxmore{i}")
        app.sync()
        if app.store.counts().fts_unindexed_rows == 0:
            break
    else:
        pytest.fail("the writes waiting were never compacted")


def test_a_first_sync_in_many_batches_leaves_no_chunk_outside_the_full_text_index(
    tmp_path: Path, make_app: Builder
) -> None:
    # the full-text index is made with the first batch; the batches after it append rows
    # that every full-text search scans one by one until they are folded in (9,141 of them
    # on a 940-note vault: 2.4 s a search instead of 33 ms)
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(60):
        paragraphs = "\n\n".join(f"Paragraph {n} of this note: tern{i}x{n} plover{i}x{n}."
                                   for n in range(30))
        (vault / f"Note {i:02d}.md").write_text(f"# Note {i}\n\n{paragraphs}\n",
                                                encoding="utf-8")
    app, _ = make_app(vault, **{"sync.write_batch_files": 5, "sync.chunk_max_chars": 80})
    app.sync()
    counts = app.store.counts()
    assert counts.chunks == 60 * 30 and counts.chunks - 5 * 30 >= MAINTAIN_UNINDEXED_ROWS
    assert counts.fts_unindexed_rows == 0
    hits = app.search("plover42x17", count_recall=False)
    assert [h.path for h in hits][:1] == ["Note 42.md"]


def test_appending_writes_into_the_room_of_the_last_index_only() -> None:
    rng = np.random.default_rng(7)

    def unit(rows: int) -> np.ndarray:
        matrix = rng.normal(size=(rows, 8)).astype(np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

    base = unit(5)
    for start in (ExactVectors(base), Float16Vectors(base.astype(np.float16)),
                  Int8Vectors.of(base)):
        one = start.appended(unit(3))  # copied once into arrays with room after them
        two = one.appended(unit(2))  # written into that room
        kept = one.rows(np.arange(len(one))).copy()
        side = one.appended(unit(4))  # not the last: its own copy, `two` untouched
        assert (len(one), len(two), len(side)) == (8, 10, 12)
        assert np.array_equal(one.rows(np.arange(8)), kept)
        assert np.array_equal(two.rows(np.arange(8)), kept)
        assert np.array_equal(side.rows(np.arange(8)), kept)
        assert not np.array_equal(two.rows(np.arange(8, 10)), side.rows(np.arange(8, 10)))
        assert one.appended(np.zeros((0, 1), np.float32)) is one  # a delete adds nothing
        scores = two.scores(base[0])
        assert scores.shape == (10,) and abs(float(scores[0]) - 1.0) < 0.02
