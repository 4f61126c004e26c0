"""The record of a process's own batches (:class:`magma.store_memo.StoreChanges`), which lets
the search's catalogue follow a batch instead of reading the store whole."""

from __future__ import annotations

from magma.store_memo import StoreChanges, StoreDelta


def v(files: int, chunks: int, links: int) -> dict[str, int]:
    return {"files": files, "chunks": chunks, "links": links}


def test_a_chain_of_batches_gives_the_union_of_their_paths() -> None:
    changes = StoreChanges()
    changes.record(v(1, 1, 1), v(2, 2, 2), {"a.md"}, same_paths=True)
    changes.record(v(2, 2, 2), v(3, 4, 3), {"b.md", "c.md"}, same_paths=False)
    assert changes.since(v(1, 1, 1), v(3, 4, 3)) == StoreDelta(
        frozenset({"a.md", "b.md", "c.md"}), same_paths=False)
    assert changes.since(v(2, 2, 2), v(3, 4, 3)) == StoreDelta(
        frozenset({"b.md", "c.md"}), same_paths=False)
    assert changes.since(v(1, 1, 1), v(2, 2, 2)) == StoreDelta(frozenset({"a.md"}), True)
    assert changes.since(v(3, 4, 3), v(3, 4, 3)) == StoreDelta(frozenset(), True)


def test_a_commit_not_recorded_breaks_the_chain() -> None:
    changes = StoreChanges()
    changes.record(v(1, 1, 1), v(2, 2, 2), {"a.md"}, same_paths=True)
    # another process committed (2 -> 3), then this one wrote again
    changes.record(v(3, 3, 3), v(4, 4, 4), {"b.md"}, same_paths=True)
    assert changes.since(v(1, 1, 1), v(4, 4, 4)) is None
    assert changes.since(v(1, 1, 1), v(3, 3, 3)) is None
    assert changes.since(v(3, 3, 3), v(4, 4, 4)) == StoreDelta(frozenset({"b.md"}), True)
    assert changes.since(v(0, 0, 0), v(4, 4, 4)) is None  # older than anything recorded


def test_forgotten_or_fallen_out_batches_mean_a_full_read() -> None:
    changes = StoreChanges(size=2)
    for n in range(1, 4):
        changes.record(v(n, n, n), v(n + 1, n + 1, n + 1), {f"{n}.md"}, same_paths=True)
    assert changes.since(v(1, 1, 1), v(4, 4, 4)) is None  # the first fell out
    assert changes.since(v(2, 2, 2), v(4, 4, 4)) == StoreDelta(frozenset({"2.md", "3.md"}),
                                                               True)
    changes.forget()
    assert changes.since(v(2, 2, 2), v(4, 4, 4)) is None
    changes.record(v(4, 4, 4), v(4, 4, 4), {"x.md"}, same_paths=True)  # no commit: nothing
    assert changes.since(v(4, 4, 4), v(5, 5, 5)) is None


def test_the_rows_kept_for_the_graph_are_bounded_and_a_rewrite_drops_the_older() -> None:
    """:class:`magma.store_memo.WrittenRows`: what a batch wrote is kept while there is room
    (a batch larger than the room keeps none: the graph reads it back); a later batch that
    changes a kept path drops what was kept of it; :meth:`take` empties it."""
    from magma.store_memo import WrittenNote, WrittenRows

    def note(path: str, content_hash: str = "h") -> WrittenNote:
        return WrittenNote(content_hash, type("Row", (), {"path": path})(), (), None)

    rows = WrittenRows(size=3)
    rows.after({"a.md", "b.md"}, [note("a.md"), note("b.md")])
    assert rows.room == 1
    rows.after({"a.md"}, [])  # rewritten by a batch that kept none of its rows
    assert set(rows.take()) == {"b.md"} and rows.room == 3
    rows.after({"c.md"}, [note("c.md")])
    rows.after({"x.md", "y.md", "z.md", "w.md"}, [])  # more than the room: read back
    assert set(rows.take()) == {"c.md"}
