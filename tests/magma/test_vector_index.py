"""``magma.vector_index``: the exact, float16 and int8 forms of the in-memory chunk vectors."""

from __future__ import annotations

import numpy as np
import pytest

from magma.catalogue import _converted
from magma.embedder import normalise_rows
from magma.vector_index import (
    BLOCK_ROWS,
    SCRATCH_ROWS,
    ExactVectors,
    Float16Vectors,
    Int8Vectors,
    VectorForm,
    VectorLimits,
    chunk_vectors,
    compact_scores,
    filled,
    in_form,
    vector_form,
)


def _rows(n: int, dims: int = 64, seed: int = 3) -> np.ndarray:
    return normalise_rows(np.random.default_rng(seed).normal(size=(n, dims)))


@pytest.mark.parametrize("dtype", [np.int8, np.float16])
@pytest.mark.parametrize("count", [0, 1, SCRATCH_ROWS, 3 * SCRATCH_ROWS + 5])
def test_compact_scores_equal_the_products_of_the_up_cast_rows(dtype: type, count: int) -> None:
    rng = np.random.default_rng(count)
    rows = (rng.integers(-127, 128, size=(4 * SCRATCH_ROWS, 64)) if dtype is np.int8
            else rng.normal(size=(4 * SCRATCH_ROWS, 64))).astype(dtype)
    one = rng.normal(size=64).astype(np.float32)
    four = rng.normal(size=(64, 4)).astype(np.float32)
    index = rng.integers(0, len(rows), size=count)  # any order, repeats allowed
    wide = rows.astype(np.float64)
    assert np.allclose(compact_scores(rows, one, index), wide[index] @ one, rtol=1e-4,
                       atol=1e-3)
    assert compact_scores(rows, four, index).shape == (count, 4)
    assert np.allclose(compact_scores(rows, four, index), wide[index] @ four, rtol=1e-4,
                       atol=1e-3)
    assert np.allclose(compact_scores(rows[:count], one), wide[:count] @ one, rtol=1e-4,
                       atol=1e-3)


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


def test_beside_the_index_the_rows_take_the_form_asked_for() -> None:
    assert vector_form(100, 1_000, ann_above=100) == "float32"
    assert vector_form(101, 1_000, ann_above=100) == "int8"
    assert vector_form(101, 1_000, ann_above=100, ann_form="float16") == "float16"
    assert vector_form(1_001, 1_000, ann_above=100, ann_form="float16") == "int8"
    assert vector_form(10**6, 10**7) == "float32"  # no index: exact up to compact_above
    assert VectorLimits(ann_above=5, ann_form="float16").form(6) == "float16"
    assert chunk_vectors(_rows(6), 100, ann_above=5).form == "int8"


@pytest.mark.parametrize("form", ["float32", "float16", "int8"])
def test_every_form_scores_chosen_rows_as_it_scores_all(form: VectorForm) -> None:
    matrix = _rows(BLOCK_ROWS + 9)
    vectors = in_form(matrix, form)
    query = matrix[5]
    index = np.asarray([BLOCK_ROWS + 8, 0, 5, 17, BLOCK_ROWS - 1] * 7000, dtype=np.int64)
    assert np.allclose(vectors.scores_at(index, query), vectors.scores(query)[index],
                       atol=1e-6)
    assert np.allclose(vectors.scores(query), matrix @ query, atol=0.01)
    assert np.allclose(vectors.rows([3, 4]), matrix[[3, 4]], atol=0.01)
    assert vectors.scores_at(np.zeros(0, dtype=np.int64), query).shape == (0,)


@pytest.mark.parametrize("form", ["float32", "float16", "int8"])
def test_a_followed_index_keeps_its_form_and_equals_one_built_whole(form: VectorForm) -> None:
    matrix, fresh = _rows(50), _rows(4, seed=9)
    keep = np.asarray([0, 3, 7, 49], dtype=np.int64)
    followed = in_form(matrix, form).followed(keep, fresh)
    whole = in_form(np.concatenate([matrix[keep], fresh]), form)
    assert followed.form == form and len(followed) == 8
    every = np.arange(8)
    assert np.array_equal(followed.rows(every), whole.rows(every))
    # nothing fresh (an empty read is (0, 1)), nothing kept
    assert len(in_form(matrix, form).followed(keep, np.zeros((0, 1), np.float32))) == 4
    assert np.array_equal(in_form(matrix, form).followed(np.zeros(0, np.int64), fresh)
                          .rows(np.arange(4)), in_form(fresh, form).rows(np.arange(4)))


@pytest.mark.parametrize("announced", [0, 90, 100, 130])
@pytest.mark.parametrize("form", ["float32", "float16", "int8"])
def test_an_index_filled_batch_by_batch_equals_one_built_whole(
        form: VectorForm, announced: int) -> None:
    # the table's row count is read before its batches: a write in between may make it
    # more or fewer than the batches hold
    matrix = _rows(100)
    built = filled(form, announced, (matrix[s : s + 30] for s in range(0, 100, 30)))
    whole = in_form(matrix, form)
    assert built.form == form and len(built) == 100
    assert np.array_equal(built.rows(np.arange(100)), whole.rows(np.arange(100)))
    assert len(filled(form, 5, iter([]))) == 0


def test_float16_keeps_the_exact_order_of_close_rows() -> None:
    matrix = _rows(5_000, dims=128, seed=4)
    half = Float16Vectors(matrix.astype(np.float16))
    assert half.nbytes == matrix.nbytes // 2
    query = _rows(1, dims=128, seed=8)[0]
    assert np.abs(half.scores(query) - matrix @ query).max() < 2e-3
    assert list(np.argsort(-half.scores(query))[:10]) == list(np.argsort(-(matrix @ query))[:10])


@pytest.mark.parametrize(("was", "form"), [("float32", "int8"), ("int8", "float32"),
                                           ("float32", "float16")])
def test_rows_changing_form_over_a_batch_equal_rows_built_whole(was: VectorForm,
                                                                form: VectorForm) -> None:
    # the store's index built or dropped: a followed snapshot converts its rows block by
    # block into the new form, with the batch's fresh rows after them
    matrix, fresh = _rows(BLOCK_ROWS + 20), _rows(3, seed=11)
    keep = list(range(5, BLOCK_ROWS + 20))
    old = in_form(matrix, was)
    converted = _converted(old, keep, fresh, form)
    whole = in_form(np.concatenate([old.rows(np.asarray(keep)), fresh]), form)
    every = np.arange(len(keep) + 3)
    assert converted.form == form and len(converted) == len(keep) + 3
    assert np.array_equal(converted.rows(every), whole.rows(every))
    assert len(_converted(old, range(4), None, form)) == 4
