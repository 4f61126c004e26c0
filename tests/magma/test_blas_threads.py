"""The BLAS thread count for a block (:mod:`magma.blas_threads`): a small embedding call
runs on one thread, and its vectors are those of a batch on OpenBLAS's own count."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from magma.blas_threads import _local_setter, blas_threads
from magma.embedder import SMALL_CALL, UniversalSentenceEncoder


def _count() -> int:
    """The count set now (0: none, OpenBLAS's own), read by setting it back."""
    setter = _local_setter()
    assert setter is not None
    now = setter(0)
    setter(now)
    return now


@pytest.mark.skipif(_local_setter() is None,
                    reason="numpy's BLAS here is not an OpenBLAS that takes a count")
def test_the_count_holds_in_the_block_and_is_put_back() -> None:
    before = _count()
    with blas_threads(1):
        assert _count() == 1
        with blas_threads(3):
            assert _count() == 3
        assert _count() == 1
    assert _count() == before


@pytest.mark.skipif(_local_setter() is None,
                    reason="numpy's BLAS here is not an OpenBLAS that takes a count")
def test_blocks_of_two_threads_at_once_leave_the_count_as_it_was() -> None:
    """The count is the process's: each block puts back what it found, one at a time."""
    before = _count()
    seen: list[int] = []

    def blocks(count: int) -> None:
        for _ in range(200):
            with blas_threads(count):
                seen.append(_count() - count)

    threads = [threading.Thread(target=blocks, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(seen) == {0}  # each block ran on its own count
    assert _count() == before


@pytest.mark.slow
def test_a_text_alone_gets_the_vector_it_gets_in_a_big_batch() -> None:
    """One text (one BLAS thread) and the same text in a batch of more than
    :data:`magma.embedder.SMALL_CALL` (OpenBLAS's own count): the same vector."""
    encoder = UniversalSentenceEncoder()
    texts = [f"Water the fern on the north window every {n} days." for n in range(SMALL_CALL)]
    texts.append("The team's standup is at 9:30 every weekday.")
    batch = encoder.embed(texts)
    alone = np.vstack([encoder._embed_new([text]) for text in texts[-3:]])
    np.testing.assert_allclose(batch[-3:], alone, atol=1e-5)
