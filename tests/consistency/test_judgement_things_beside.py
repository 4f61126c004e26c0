"""Two things of a relation that holds several at once, told in other words, through the
product's real model: two allergens are two facts.

"peanut allergy since childhood" / "pollen allergy since a kid" was merged into one memory
(a paraphrase at cosine 0.70): the rest of the two memories is reworded ("since childhood" /
"since a kid"), so the words around the allergen do not line up and no rule saw one thing
said in place of another. ``bench/write_pairs/family58.jsonl`` holds the family, in English
and Chinese, with and without a subject: allergens, languages spoken, pets, cities visited,
each with the same thing told again in other words (a duplicate that must still merge).
Measured with ``bench/write_decisions.py`` before the rule: 22 of 28 right, 3 merges of two
facts (and f57-086 of ``family57.jsonl``); after: 25 of 28, none, no duplicate lost on
dev, family56, family57, holdout, adversarial or family58.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from write_decisions import (  # noqa: E402
    decide_pair,
    embed_pairs,
    outcome_of,
    read_pairs,
    right_outcome,
)

from magma.embedder import UniversalSentenceEncoder  # noqa: E402

#: Pairs of the family still decided wrong, for causes of their own (not two things beside
#: a relation): a count said on one side ("一只猫" / "我家的猫"), a city visited read as a
#: changed value (成都 / 重庆), "visited" / "went to" read as two relations.
STILL_WRONG = {"f58-024", "f58-026", "f58-027"}


@pytest.fixture(scope="module")
def decided(real_embedder: UniversalSentenceEncoder) -> dict[str, tuple[dict, str]]:
    rows = read_pairs(REPO / "bench" / "write_pairs" / "family58.jsonl")
    vectors = embed_pairs(real_embedder, rows)
    return {row["id"]: (row, outcome_of(decide_pair(row, vectors[2 * i], vectors[2 * i + 1])))
            for i, row in enumerate(rows)}


def test_two_things_beside_a_relation_of_several_are_two_facts(
        decided: dict[str, tuple[dict, str]]) -> None:
    wrong = {pid: (row["old"]["text"], row["new"]["text"], row["label"], outcome)
             for pid, (row, outcome) in decided.items()
             if not right_outcome(row["label"], outcome)}
    assert set(wrong) <= STILL_WRONG, wrong
    merges = [pid for pid, (row, outcome) in decided.items()
              if outcome == "duplicate" and row["label"] != "duplicate"]
    assert not merges


@pytest.mark.parametrize("pid", ["f58-001", "f58-002", "f58-009", "f58-010", "f58-011",
                                 "f58-012", "f58-013", "f58-014"])
def test_the_allergens(decided: dict[str, tuple[dict, str]], pid: str) -> None:
    """Peanut / pollen (the pair users met, byte for byte, and with a subject) apart; the
    same allergen in other words ("Peanut allergy" / "allergic to peanuts") one memory."""
    row, outcome = decided[pid]
    assert right_outcome(row["label"], outcome), (row["old"]["text"], row["new"]["text"],
                                                  outcome)
