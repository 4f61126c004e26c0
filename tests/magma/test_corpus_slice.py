"""A slice of the real obsidian-help corpus, parsed by ccb.parse, chunked and stored (fake
embedder: this test is about chunking, storage and link resolution, not meaning)."""

from __future__ import annotations

from pathlib import Path

from ccb.parse import parse_note
from magma.chunking import chunk_note
from magma.search import fulltext_only
from magma.store import MagmaStore, NoteRecord


def test_english_help_notes_round_trip(
    store: MagmaStore, embedder: object, corpora_dir: Path
) -> None:
    corpus = corpora_dir / "obsidian-help" / "en"
    files = sorted(corpus.rglob("*.md"))
    assert files
    records = []
    for file in files:
        note = parse_note(file.relative_to(corpus).as_posix(), file.read_bytes())
        chunks = chunk_note(note)
        assert chunks and all(len(c.text) <= 1500 for c in chunks)
        vectors = embedder.embed([c.embed_text for c in chunks])  # type: ignore[attr-defined]
        stat = file.stat()
        records.append(NoteRecord(note, note.path, stat.st_size, stat.st_mtime_ns, chunks, vectors))
    before = store.versions()
    store.apply(upserts=records)
    grown = {t: v - before[t] for t, v in store.versions().items()}
    # a delete and an append of the batch's chunks and links, one merge of the file rows;
    # chunks has one more: the full-text index built on the first rows
    assert grown == {"files": 1, "chunks": 3, "links": 2}
    counts = store.counts()
    assert counts.notes == len(files)
    assert counts.chunks == sum(len(r.chunks) for r in records)
    # the help vault links to itself: most links resolve (some point at other languages/files)
    assert counts.unresolved_links < counts.links / 4
    index = store.file_index()
    assert all(index[r.note.path].content_hash == r.note.content_hash for r in records)
    assert fulltext_only(store, "canvas", limit=3)
