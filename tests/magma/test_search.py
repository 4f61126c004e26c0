"""Hybrid search with a real LanceDB store (fake embedder: these tests are about retrieval
plumbing, fusion and filters, not meaning)."""

from __future__ import annotations

from collections.abc import Callable

from ccb.model import MemoryMeta, Note
from magma.search import fulltext_only, hybrid_search, make_snippet, vector_only
from magma.store import MagmaStore, NoteRecord

NoteOf = Callable[..., Note]
RecordOf = Callable[..., NoteRecord]


def _fill(store: MagmaStore, note_of: NoteOf, record_of: RecordOf) -> None:
    notes = [
        note_of(
            "Projects/Sourdough.md",
            "# Feeding\nFeed the starter flour and water at a 1:5:5 ratio every morning.\n"
            "# Baking\nBake the loaf at 250 degrees with steam.",
        ),
        note_of(
            "Dev/Config.md",
            "Set userIgnoreFilters in the app config to hide folders from search.",
        ),
        note_of("Dev/ULID.md", "The memory id is ULID 01JCW3ZK8Q6ZC0R9Y1N2M3P4QX."),
        note_of("日记/睡眠.md", "我最近的睡眠质量很差，晚上总是醒来。"),
        note_of(
            "Memory/prefers-tea.md",
            "The user prefers green tea in the morning.",
            memory=MemoryMeta(type="user", name="Prefers tea", description="Green tea"),
        ),
        note_of(
            "Memory/no-mocks.md",
            "Integration tests use a real database, never mocks. Tea breaks are fine.",
            memory=MemoryMeta(type="feedback", name="No mocks", description="Real DB"),
        ),
        note_of("It's Bob's.md", "Bob's note about the garden and tomatoes."),
    ]
    store.apply(upserts=[record_of(n) for n in notes])


def test_blank_query_finds_nothing(store: MagmaStore, embedder: object) -> None:
    assert hybrid_search(store, embedder, "   \n") == []  # type: ignore[arg-type]


def test_empty_store_finds_nothing(store: MagmaStore, embedder: object) -> None:
    assert hybrid_search(store, embedder, "anything") == []  # type: ignore[arg-type]


def test_exact_identifiers_are_found_by_full_text(
    store: MagmaStore, embedder: object, note_of: NoteOf, record_of: RecordOf
) -> None:
    _fill(store, note_of, record_of)
    for query, path in [
        ("userIgnoreFilters", "Dev/Config.md"),
        ("01JCW3ZK8Q6ZC0R9Y1N2M3P4QX", "Dev/ULID.md"),
        ("睡眠", "日记/睡眠.md"),
        ("sourdough", "Projects/Sourdough.md"),  # title words are indexed too
    ]:
        hits = fulltext_only(store, query)
        assert hits and hits[0].path == path, query
        top = hybrid_search(store, embedder, query)[0]  # type: ignore[arg-type]
        assert top.path == path
        assert any(w.startswith("full-text #1") for w in top.why)


def test_hit_shape_and_fusion(
    store: MagmaStore, embedder: object, note_of: NoteOf, record_of: RecordOf
) -> None:
    _fill(store, note_of, record_of)
    hits = hybrid_search(store, embedder, "starter flour ratio", limit=3)  # type: ignore[arg-type]
    top = hits[0]
    assert top.path == "Projects/Sourdough.md"
    assert top.title == "Sourdough"
    assert top.heading == "Feeding"
    assert "1:5:5" in top.snippet and "\n" not in top.snippet
    assert len(top.why) == 2 and top.why[0].startswith("vector #1 (cos ")
    assert top.score == max(h.score for h in hits)
    assert len({h.path for h in hits}) == len(hits)  # one hit per note
    vec = vector_only(store, embedder, "starter flour ratio", limit=2)  # type: ignore[arg-type]
    assert vec[0].path == "Projects/Sourdough.md" and 0 < vec[0].score <= 1.0001


def test_filters_are_pushed_down(
    store: MagmaStore, embedder: object, note_of: NoteOf, record_of: RecordOf
) -> None:
    _fill(store, note_of, record_of)
    hits = hybrid_search(store, embedder, "tea", memory_types={"user"})  # type: ignore[arg-type]
    assert [h.path for h in hits] == ["Memory/prefers-tea.md"]
    assert hits[0].memory_type == "user"
    assert hybrid_search(store, embedder, "tea", memory_types=set()) == []  # type: ignore[arg-type]
    in_dev = hybrid_search(store, embedder, "config search", path_prefix="Dev/")  # type: ignore[arg-type]
    assert in_dev and all(h.path.startswith("Dev/") for h in in_dev)
    quoted = hybrid_search(store, embedder, "garden", path_prefix="It's")  # type: ignore[arg-type]
    assert [h.path for h in quoted] == ["It's Bob's.md"]


def test_query_syntax_is_plain_text(
    store: MagmaStore, embedder: object, note_of: NoteOf, record_of: RecordOf
) -> None:
    _fill(store, note_of, record_of)
    for query in ['"tomatoes', "Bob's", "a:b OR (c", "tomatoes AND", "*", "'"]:
        hybrid_search(store, embedder, query)  # type: ignore[arg-type]  # must not raise
    assert hybrid_search(store, embedder, "Bob's tomatoes")[0].path == "It's Bob's.md"  # type: ignore[arg-type]


def test_rows_added_after_the_index_are_found(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    # shared case 20: the FTS index is built with the first rows; later rows must be found
    store.apply(upserts=[record_of(note_of("first.md", "apples and pears"))])
    store.apply(upserts=[record_of(note_of("later.md", "quinces arrived later"))])
    assert [h.path for h in fulltext_only(store, "quinces")] == ["later.md"]
    assert store.counts().fts_unindexed_rows == 1
    store.maintain()
    assert store.counts().fts_unindexed_rows == 0
    assert [h.path for h in fulltext_only(store, "quinces")] == ["later.md"]
    # a deleted note disappears from full-text results at once
    store.apply(deletes=["later.md"])
    assert fulltext_only(store, "quinces") == []


def test_snippet_is_one_short_line_around_the_match() -> None:
    text = "intro " * 100 + "the needle\nis here " + "outro " * 100
    snippet = make_snippet(text, "needle")
    assert len(snippet) <= 200 and "\n" not in snippet and "needle" in snippet
    assert make_snippet("short\ntext", "x") == "short text"
    long_cjk = "无关" * 200 + "睡眠质量" + "无关" * 200
    assert "睡眠" in make_snippet(long_cjk, "睡眠质量怎么样")
