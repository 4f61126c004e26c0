"""``magma.vector_index``: the exact and the int8 form of the in-memory chunk vectors."""

from __future__ import annotations

import numpy as np
import pytest

from magma.embedder import normalise_rows
from magma.vector_index import (
    BLOCK_ROWS,
    ExactVectors,
    Int8Vectors,
    chunk_vectors,
    vector_form,
)


def _rows(n: int, dims: int = 64, seed: int = 3) -> np.ndarray:
    return normalise_rows(np.random.default_rng(seed).normal(size=(n, dims)))


def test_the_form_changes_above_the_threshold_only() -> None:
    assert vector_form(100, 100) == "float32"
    assert vector_form(101, 100) == "int8"
    assert vector_form(0, 0) == "float32"
    assert chunk_vectors(_rows(5), 5).form == "float32"
    assert chunk_vectors(_rows(6), 5).form == "int8"


def test_int8_rows_and_scores_stay_within_half_a_step_per_component() -> None:
    matrix = _rows(BLOCK_ROWS + 7)  # more than one block
    compact = Int8Vectors.of(matrix)
    exact = ExactVectors(matrix)
    assert compact.nbytes < exact.nbytes / 3.5
    assert len(compact) == len(exact) == len(matrix)
    step = np.abs(matrix).max(axis=1) / 127.0
    assert np.all(np.abs(compact.rows(np.arange(len(matrix))) - matrix)
                  <= step[:, None] / 2 + 1e-7)
    query = matrix[-1]
    gap = np.abs(compact.scores(query) - exact.scores(query))
    assert gap.max() < 0.01
    assert int(np.argmax(compact.scores(query))) == len(matrix) - 1


def test_rows_keep_the_shape_asked_for() -> None:
    compact = Int8Vectors.of(_rows(10))
    assert compact.rows(3).shape == (64,)
    assert compact.rows([1, 2]).shape == (2, 64)
    assert compact.rows(3).dtype == np.float32


def test_an_empty_index_and_a_zero_row() -> None:
    empty = chunk_vectors(np.zeros((0, 1), dtype=np.float32), 0)
    assert len(empty) == 0 and empty.scores(np.zeros(1, dtype=np.float32)).shape == (0,)
    zero = Int8Vectors.of(np.zeros((2, 4), dtype=np.float32))
    assert np.all(zero.rows([0, 1]) == 0.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_int8_keeps_the_exact_top_ten(seed: int) -> None:
    matrix = _rows(5_000, dims=128, seed=seed)
    queries = _rows(20, dims=128, seed=seed + 10)
    compact, exact = Int8Vectors.of(matrix), ExactVectors(matrix)
    found = [len(set(np.argsort(-compact.scores(q))[:10]) & set(np.argsort(-exact.scores(q))[:10]))
             for q in queries]
    assert sum(found) / (10 * len(queries)) >= 0.98
