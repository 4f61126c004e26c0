"""Sørensen–Dice of two token multisets (:func:`consistency.claims.dice`): twice the shared
count over the sizes, the same for tuples (counts kept) and other iterables."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from consistency.claims import dice

TOKENS = st.lists(st.sampled_from(["a", "b", "c", "d", "name:x", "你好", "⟨number⟩"]), max_size=9)


@given(TOKENS, TOKENS)
def test_dice_is_twice_the_shared_count_over_the_sizes(a: list[str], b: list[str]) -> None:
    ca, cb = Counter(a), Counter(b)
    expected = 0.0 if not a or not b else \
        2.0 * sum(min(n, cb[t]) for t, n in ca.items() if t in cb) / (len(a) + len(b))
    assert dice(tuple(a), tuple(b)) == expected
    assert dice(a, iter(b)) == expected
    assert dice(tuple(b), a) == expected
