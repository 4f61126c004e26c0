"""The candidates :func:`consistency.duplicates.decide` would judge, found for a whole group at
once.

A dream decides each memory of a comparison group against the older ones of that group
(:func:`consistency.dream.plan_consolidation`); groups joined by meaning hold thousands of
memories (4,126 in the planted 10,000-memory set of ``bench/dream_bench.py``). ``decide``
judges only some of the memories it is given: the :data:`~consistency.duplicates.
CANDIDATES_BY_COSINE` nearest by cosine, the :data:`~consistency.duplicates.
CANDIDATES_BY_WORDS` whose claim tokens share most with the draft's (Dice ≥
:data:`~consistency.duplicates.CANDIDATE_LEXICAL`), every memory of the same subject, and it
answers :class:`~consistency.duplicates.Duplicate` for one of the same
normalised content hash. Giving ``decide`` a superset of those members gives the same answer
as giving it all of them (its orderings break every tie by id), so :class:`GroupScores`
finds that superset with a matrix product per block of members (:data:`COSINE_BLOCK`) for
the cosines and one count over a token index for the Dice overlaps, instead of ``decide``
computing a cosine, a Dice and a subject key in Python for every pair (quadratic in the
group: 13.6 million pairs there).

The cosines of the matrix product may differ from ``decide``'s pairwise ones in the last
bits, so the nearest are taken with a margin (:data:`COSINE_MARGIN`): a member whose cosine
is that close to the last one kept is kept too. ``decide`` then judges the superset exactly.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from consistency.duplicates import (
    CANDIDATE_LEXICAL,
    CANDIDATES_BY_COSINE,
    CANDIDATES_BY_WORDS,
    cosine_similarity,
)
from consistency.judgement import subject_key

__all__ = ["COSINE_MARGIN", "GroupMember", "GroupScores"]

#: Cosines this close to the last of the nearest are kept as well (float64 rounding of a
#: 512-wide dot product is below 1e-13; the margin is far above it and far below any
#: threshold of the judgement, which are given to two decimals).
COSINE_MARGIN = 1e-9
#: At most this many members tied (within the margin) with the last of the nearest are kept
#: beyond it, in the order ``decide`` uses (its own cosine of each, then id: equal vectors
#: are equal there, while a matrix product may part them in the last bits).
TIED_KEPT = 64
#: Members whose cosines with the members before them are taken in one matrix product. A
#: dream asks for the members of a group in order, each against earlier ones; one product
#: per block of members reads the group's rows once per block instead of once per member
#: (the planted 10,000-memory set of ``bench/dream_bench.py``: :meth:`GroupScores.candidates`
#: took 5.3 s of CPU over 9,602 calls with one product per member, 2.6 s with blocks of 128;
#: ``time.process_time`` around each call, on a shared 2-core machine). Our choice: a block
#: of 128 x 4,126 float64 cosines is 4 MB.
COSINE_BLOCK = 128


class GroupMember(Protocol):
    """What :class:`GroupScores` reads of a memory."""

    @property
    def id(self) -> str: ...

    @property
    def subject(self) -> str | None: ...

    @property
    def content_hash(self) -> str: ...

    @property
    def embedding(self) -> np.ndarray | None: ...


class GroupScores:
    """Pair scores of one group's members, for choosing what ``decide`` needs to see.

    ``tokens(id)`` gives a member's claim tokens (a multiset, as
    :func:`consistency.claims.dice` counts them); :meth:`retoken` takes new ones after the
    member's body changed (a merge). Members are addressed by id.
    """

    def __init__(self, members: Sequence[GroupMember],
                 tokens: Callable[[str], Sequence[str]]) -> None:
        self._ids = [m.id for m in members]
        self._row = {mid: i for i, mid in enumerate(self._ids)}
        self._subjects = _codes([subject_key(m.subject) for m in members])
        self._hashes = _codes([m.content_hash for m in members])
        self._unit, self._has_vector, self.exact = _unit_rows(members)
        self._vectors = [m.embedding for m in members]
        # cosines of members [start, start + COSINE_BLOCK) with members [0, their end)
        self._block_start = -1
        self._block = np.zeros((0, 0))
        self._postings: dict[tuple[str, int], set[int]] = defaultdict(set)
        # each posting as an array, made when first counted, dropped when its set changes
        self._arrays: dict[tuple[str, int], np.ndarray] = {}
        self._keys: list[list[tuple[str, int]]] = [[] for _ in members]
        self._sizes = np.zeros(len(members), dtype=np.int64)
        for i, mid in enumerate(self._ids):
            self._index(i, tokens(mid))

    def retoken(self, member_id: str, tokens: Sequence[str]) -> None:
        """``member_id``'s claim now has ``tokens`` (its body changed)."""
        row = self._row[member_id]
        for key in self._keys[row]:
            self._postings[key].discard(row)
            self._arrays.pop(key, None)
        self._index(row, tokens)

    def _index(self, row: int, tokens: Sequence[str]) -> None:
        # A multiset overlap as a set overlap: the k-th copy of a token is its own key, so
        # sum(min(count_a, count_b)) is the number of keys both have.
        keys = [(token, k) for token, n in Counter(tokens).items() for k in range(n)]
        self._keys[row] = keys
        self._sizes[row] = len(keys)
        for key in keys:
            self._postings[key].add(row)
            self._arrays.pop(key, None)

    def row(self, member_id: str) -> int:
        """The row of ``member_id`` (its place in the members given)."""
        return self._row[member_id]

    def candidates(self, row: int, rows: np.ndarray) -> list[int]:
        """The rows among ``rows`` (int64) that ``decide(member, others)`` may judge or
        answer with, ascending: a superset of its nearest by cosine, its lexical and
        same-subject candidates and its same-hash duplicates."""
        if len(rows) == 0:
            return []
        keep = self._nearest(row, rows) | self._lexical(row, rows)
        same = self._hashes[rows] == self._hashes[row]
        if self._subjects[row] >= 0:
            same |= self._subjects[rows] == self._subjects[row]
        keep.update(rows[same].tolist())
        return sorted(keep)

    def _nearest(self, row: int, rows: np.ndarray) -> set[int]:
        if len(rows) <= CANDIDATES_BY_COSINE:
            return set(rows.tolist())
        if self._has_vector[row]:
            values = self._cosines(row, rows)
            values[~self._has_vector[rows]] = 0.0  # decide: an unknown cosine counts 0.0
        else:
            values = np.zeros(len(rows))
        last = np.partition(values, len(rows) - CANDIDATES_BY_COSINE)[
            len(rows) - CANDIDATES_BY_COSINE]
        above = rows[values > last + COSINE_MARGIN]
        tied = np.nonzero(np.abs(values - last) <= COSINE_MARGIN)[0].tolist()
        if len(tied) > TIED_KEPT:
            # which of the tied ones decide keeps is its own order (its cosine, then id):
            # two equal vectors may differ in the last bits of a matrix product
            exact = {i: self._exact_cosine(row, int(rows[i])) for i in tied}
            order = sorted(tied, key=lambda i: (-exact[i], self._ids[rows[i]]))
        else:
            order = tied
        return set(above.tolist()) | {int(rows[i]) for i in order[:TIED_KEPT]}

    def _cosines(self, row: int, rows: np.ndarray) -> np.ndarray:
        """``float64[len(rows)]``: cosines of ``row``'s unit vector with ``rows``' (a copy),
        equal to :func:`~consistency.duplicates.cosine_similarity` up to the last bits
        (:data:`COSINE_MARGIN`)."""
        start = row - row % COSINE_BLOCK
        if start != self._block_start:
            stop = min(start + COSINE_BLOCK, len(self._ids))
            self._block = self._unit[start:stop] @ self._unit[:stop].T
            self._block_start = start
        if int(rows.max()) < self._block.shape[1]:
            return self._block[row - start][rows]
        # later members (a dream asks for them to join its groups,
        # :func:`consistency.dream._meaning_pairs`): one product of those rows
        return self._unit[rows] @ self._unit[row]

    def _exact_cosine(self, row: int, other: int) -> float:
        """The cosine ``decide`` orders by (an unknown one counts 0.0)."""
        return cosine_similarity(self._vectors[row], self._vectors[other]) or 0.0

    def _posting(self, key: tuple[str, int]) -> np.ndarray:
        """``int64[]``: the rows holding ``key`` (a token's k-th copy)."""
        array = self._arrays.get(key)
        if array is None:
            array = np.fromiter(self._postings[key], dtype=np.int64)
            self._arrays[key] = array
        return array

    def lexical(self, row: int, rows: np.ndarray) -> set[int]:
        """The rows among ``rows`` (int64) whose tokens share most with ``row``'s (Dice ≥
        :data:`~consistency.duplicates.CANDIDATE_LEXICAL`, at most
        :data:`~consistency.duplicates.CANDIDATES_BY_WORDS` and the ties beside the last):
        ``decide``'s candidates by words, vectors or not."""
        return self._lexical(row, rows) if len(rows) else set()

    def _lexical(self, row: int, rows: np.ndarray) -> set[int]:
        size = self._sizes[row]
        if size == 0:
            return set()  # dice of an empty multiset is 0.0
        hits = [self._posting(key) for key in self._keys[row]]
        overlap = np.bincount(np.concatenate(hits), minlength=len(self._ids))[rows] \
            if hits else np.zeros(len(rows), dtype=np.int64)
        totals = self._sizes[rows] + size
        dice = np.where(self._sizes[rows] > 0, 2.0 * overlap / np.maximum(totals, 1), 0.0)
        alike = dice >= CANDIDATE_LEXICAL - 1e-12
        if np.count_nonzero(alike) <= CANDIDATES_BY_WORDS:
            return set(rows[alike].tolist())
        values = dice[alike]
        last = np.partition(values, len(values) - CANDIDATES_BY_WORDS)[
            len(values) - CANDIDATES_BY_WORDS]
        found = rows[alike]
        above = found[values > last + 1e-12]
        tied = np.nonzero(np.abs(values - last) <= 1e-12)[0]
        order = sorted(tied.tolist(), key=lambda i: self._ids[found[i]])
        return set(above.tolist()) | {int(found[i]) for i in order[:TIED_KEPT]}


def _codes(keys: Sequence[str | None]) -> np.ndarray:
    """``int64[n]``: one code per distinct key, ``-1`` for ``None``."""
    seen: dict[str, int] = {}
    return np.array([-1 if k is None else seen.setdefault(k, len(seen)) for k in keys],
                    dtype=np.int64)


def _unit_rows(members: Sequence[GroupMember]) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(float64[n, dims] unit rows, bool[n] has a usable vector, exact)``; zero rows where
    a member has no vector or a zero one. ``exact`` is False when two widths differ (vectors
    of two models: ``decide`` raises on such a pair, so it must see every member)."""
    vectors = [m.embedding for m in members]
    widths = {np.asarray(v).size for v in vectors if v is not None}
    width = max(widths, default=1)
    unit = np.zeros((len(members), width), dtype=np.float64)
    has = np.zeros(len(members), dtype=bool)
    for i, vector in enumerate(vectors):
        if vector is None:
            continue
        flat = np.asarray(vector, dtype=np.float64).ravel()
        norm = float(np.linalg.norm(flat)) if flat.size == width else 0.0
        if norm > 0.0 and np.isfinite(norm):
            unit[i] = flat / norm
            has[i] = True
    return unit, has, len(widths) <= 1
