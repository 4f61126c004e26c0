"""Fixtures for the MAGMA tests: a real LanceDB store in tmp_path and a fake embedder."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from ccb.model import Heading, Link, MemoryMeta, Note
from magma.chunking import chunk_note
from magma.store import MagmaStore, NoteRecord

FAKE_DIMS = 64
_TOKEN_RE = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """FAKE embedder: a bag of hashed lower-cased tokens, L2-normalised.

    It is a fake because the tests using it are not about meaning (storage, fusion, filters);
    texts sharing words get similar vectors, which is all they need. Deterministic.
    """

    model_id = "fake-hash-v1"
    dims = FAKE_DIMS

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), FAKE_DIMS), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN_RE.findall(text.lower()):
                digest = hashlib.sha256(token.encode("utf-8")).digest()
                sign = 1.0 if digest[1] % 2 else -1.0
                out[row, digest[0] % FAKE_DIMS] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def store(tmp_path: Path) -> MagmaStore:
    return MagmaStore.open(
        str(tmp_path / "magma"), vault_path="/vault", model_id=HashEmbedder.model_id, dims=FAKE_DIMS
    )


def headings_of(body: str) -> tuple[Heading, ...]:
    """ATX headings outside code fences (a stand-in for ccb.parse, good enough for tests)."""
    found: list[Heading] = []
    fence = False
    for i, line in enumerate(body.split("\n")):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        match = re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)
        if match and not fence:
            found.append(Heading(len(match.group(1)), match.group(2), i))
    return tuple(found)


def make_note(
    path: str,
    body: str,
    *,
    title: str | None = None,
    links: Sequence[Link] = (),
    tags: Sequence[str] = (),
    aliases: Sequence[str] = (),
    memory: MemoryMeta | None = None,
    properties: dict[str, object] | None = None,
) -> Note:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return Note(
        path=path,
        title=title or stem,
        body=body,
        content_hash=hashlib.sha256(body.encode()).hexdigest(),
        properties=properties or {},  # type: ignore[arg-type]
        tags=tuple(tags),
        aliases=tuple(aliases),
        links=tuple(links),
        headings=headings_of(body),
        memory=memory,
    )


def make_record(
    note: Note, embedder: HashEmbedder, *, note_id: str | None = None, mtime_ns: int = 1
) -> NoteRecord:
    chunks = chunk_note(note)
    vectors = embedder.embed([c.embed_text for c in chunks])
    return NoteRecord(note, note_id or note.path, len(note.body), mtime_ns, chunks, vectors)


@pytest.fixture
def record_of(embedder: HashEmbedder) -> Callable[..., NoteRecord]:
    def build(note: Note, **kwargs: object) -> NoteRecord:
        return make_record(note, embedder, **kwargs)  # type: ignore[arg-type]

    return build


@pytest.fixture(scope="session")
def note_of() -> Callable[..., Note]:
    """``note_of(path, body, **fields)`` builds a Note like ccb.parse would (headings found)."""
    return make_note
