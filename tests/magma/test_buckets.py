"""Buckets (:mod:`magma.buckets`) hold what a dict of sets holds, after any run of adds and
discards, with a key's one value held as itself."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from magma.buckets import bucket_add, bucket_discard, members

_STEPS = st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "b", "c"]),
                            st.sampled_from(["x.md", "y.md", "z.md", "Z.md"])), max_size=40)


@given(_STEPS)
def test_buckets_hold_what_a_dict_of_sets_holds(steps: list[tuple[bool, str, str]]) -> None:
    index: dict[str, str | set[str]] = {}
    reference: dict[str, set[str]] = {}
    for add, key, value in steps:
        if add:
            bucket_add(index, key, value)
            reference.setdefault(key, set()).add(value)
        else:
            bucket_discard(index, key, value)
            reference.get(key, set()).discard(value)
            if not reference.get(key, True):
                del reference[key]
        assert {k: set(members(v)) for k, v in index.items()} == reference
        assert all(isinstance(v, str) for k, v in index.items() if len(reference[k]) == 1)
    assert members(index.get("nowhere")) == ()
