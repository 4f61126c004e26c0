"""The ablation bench's variants: list weights, constants of the re-ranking and the score's α."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fusion_ablation as ablation
import pytest

from daemon import rerank


def test_a_variant_names_list_weights_constants_and_score_weights() -> None:
    name, settings = ablation.parse_variant(
        "mix:w.full-text=0.5,VECTOR_FLOOR=8,RECENCY_OFF_IN_RANGE=0,weights.recency=0")
    assert name == "mix"
    assert settings == {"w.full-text": 0.5, "VECTOR_FLOOR": 8.0, "RECENCY_OFF_IN_RANGE": 0.0,
                        "weights.recency": 0.0}
    with pytest.raises(ValueError, match=r"weights\.freshness"):
        ablation.parse_variant("bad:weights.freshness=1")


def test_a_variant_is_applied_for_its_duration_only() -> None:
    floor, off = rerank.VECTOR_FLOOR, rerank.RECENCY_OFF_IN_RANGE
    with ablation.applied({"VECTOR_FLOOR": 3.0, "RECENCY_OFF_IN_RANGE": 0.0}):
        assert rerank.VECTOR_FLOOR == 3 and rerank.RECENCY_OFF_IN_RANGE is False
    assert floor == rerank.VECTOR_FLOOR and rerank.RECENCY_OFF_IN_RANGE is off
    with pytest.raises(ValueError, match="no re-ranking"), \
            ablation.applied({"weights.recency": 0.0}):
        pass


@pytest.mark.slow
def test_pooled_oracle_variants_share_one_index(tmp_path: Path) -> None:
    """``--set oracle``: the questions against one vault of every session, a row per question
    with the baselines and each variant scored (the real model, five short sessions)."""
    def turns(user: str, assistant: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": user, "has_answer": False},
                {"role": "assistant", "content": assistant, "has_answer": False}]

    kayak = turns("I bought a red kayak last weekend and took it to Lake Union.",
                  "Lake Union is a lovely place to paddle.")
    taxes = turns("Can you explain how quarterly estimated taxes work?",
                  "You pay four times a year: April, June, September, January.")
    garden = turns("Tomatoes in my garden split after the heavy rain.",
                   "Uneven watering makes tomatoes crack.")
    instances = [  # made up here, LongMemEval-shaped; the third is an abstention question
        {"question_id": "q1", "question_type": "single-session-user",
         "question": "What colour is the kayak I bought?", "answer": "red",
         "question_date": "2023/05/28 (Sun) 19:47",
         "haystack_session_ids": ["s_kayak", "s_taxes"],
         "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/01 (Mon) 10:00"],
         "haystack_sessions": [kayak, taxes], "answer_session_ids": ["s_kayak"]},
        {"question_id": "q2", "question_type": "single-session-user",
         "question": "What happened to my tomatoes after the rain?", "answer": "they split",
         "question_date": "2023/06/10 (Sat) 08:05",
         "haystack_session_ids": ["s_garden"], "haystack_dates": ["2023/06/02 (Fri) 18:30"],
         "haystack_sessions": [garden], "answer_session_ids": ["s_garden"]},
        {"question_id": "q3_abs", "question_type": "single-session-user",
         "question": "What is my dog's name?", "answer": "You never mentioned a dog.",
         "question_date": "2023/06/11 (Sun) 12:00",
         "haystack_session_ids": ["s_garden"], "haystack_dates": ["2023/06/02 (Fri) 18:30"],
         "haystack_sessions": [garden], "answer_session_ids": ["s_garden"]},
    ]
    variants = [("as-is", {}), ("no-vector", {"w.vector": 0.0})]
    rows = ablation.run_pooled(instances, tmp_path / "oracle", tmp_path / "data", variants,
                               None)
    assert [r["question_id"] for r in rows] == ["q1", "q2"]  # the abstention one skipped
    for row in rows:
        assert set(row["scores"]) == {"bm25", "vector", "hybrid", "as-is", "no-vector"}
    assert rows[0]["scores"]["as-is"]["recall@10"] == 1.0
    assert rerank.LIST_WEIGHTS["vector"] == 1.0  # the variant was undone
