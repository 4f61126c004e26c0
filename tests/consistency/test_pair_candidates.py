"""consistency.pair_candidates: the superset of what decide judges, found for a group at once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from consistency.duplicates import CANDIDATES_BY_COSINE, cosine_similarity
from consistency.pair_candidates import COSINE_BLOCK, TIED_KEPT, GroupScores


@dataclass(frozen=True)
class Member:
    id: str
    subject: str | None
    content_hash: str
    embedding: np.ndarray | None


def _group(vectors: list[np.ndarray | None]) -> GroupScores:
    members = [Member(f"m{i:04d}", None, f"h{i}", v) for i, v in enumerate(vectors)]
    return GroupScores(members, lambda _mid: ())


def _decides_nearest(vectors: list[np.ndarray | None], row: int, rows: list[int]) -> set[int]:
    """The CANDIDATES_BY_COSINE members decide judges by cosine: most similar, then id."""
    cos = {r: cosine_similarity(vectors[row], vectors[r]) or 0.0 for r in rows}
    return set(sorted(rows, key=lambda r: (-cos[r], f"m{r:04d}"))[:CANDIDATES_BY_COSINE])


def test_more_ties_than_kept_are_the_ones_decide_orders_first() -> None:
    """Equal vectors give equal cosines to decide (ties go to the smaller id); a matrix
    product may differ in their last bits, which never picks other members."""
    rng = np.random.default_rng(3)
    same = rng.normal(size=64).astype(np.float32)
    vectors: list[np.ndarray | None] = [same.copy() for _ in range(TIED_KEPT + 40)]
    vectors += [rng.normal(size=64).astype(np.float32) for _ in range(20)]
    scores = _group(vectors)
    row = len(vectors) - 1
    rows = np.arange(row, dtype=np.int64)
    found = set(scores.candidates(row, rows))
    assert _decides_nearest(vectors, row, rows.tolist()) <= found
    first = TIED_KEPT + 10  # one of the equal ones: its ties are the other equal ones
    before = np.arange(first, dtype=np.int64)
    assert _decides_nearest(vectors, first, before.tolist()) <= set(
        scores.candidates(first, before))


def test_blocks_of_rows_give_the_nearest_of_any_row() -> None:
    """Rows asked out of order, across blocks, and against later rows, with members that
    have no vector: always a superset of decide's nearest."""
    rng = np.random.default_rng(5)
    n = 2 * COSINE_BLOCK + 17
    vectors: list[np.ndarray | None] = [
        None if i % 11 == 0 else rng.normal(size=32).astype(np.float32) for i in range(n)]
    scores = _group(vectors)
    for row in (n - 1, 3, COSINE_BLOCK + 5, COSINE_BLOCK - 1, 40):
        for rows in (np.arange(row, dtype=np.int64),
                     np.array([r for r in range(n) if r != row], dtype=np.int64)):
            if len(rows) == 0:
                continue
            assert _decides_nearest(vectors, row, rows.tolist()) <= set(
                scores.candidates(row, rows))
