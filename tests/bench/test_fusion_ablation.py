"""The ablation bench's variants: list weights, constants of the re-ranking and the score's α."""

from __future__ import annotations

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
