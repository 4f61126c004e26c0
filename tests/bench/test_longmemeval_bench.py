"""``bench/longmemeval_bench.py``: session notes, metrics, BM25 and one tiny end-to-end run.

Three synthetic LongMemEval-shaped instances (made up here, not the real data set): two share a
session, one is an abstention question. The end-to-end test embeds their five short sessions
with the real model.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import longmemeval_bench as lme
import pytest

from ccb.parse import parse_note
from magma.embedder import USE_DIMS, USE_MODEL_ID
from magma.embedding_cache import EmbeddingCache


def _turn(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content, "has_answer": False}


KAYAK = [_turn("user", "I bought a red kayak last weekend and took it to Lake Union."),
         _turn("assistant", "Lake Union is a lovely place to paddle.")]
SOURDOUGH = [_turn("user", "My sourdough starter is called Bubbles and I feed it rye flour."),
             _turn("assistant", "Rye flour makes a lively starter.")]
TAXES = [_turn("user", "Can you explain how quarterly estimated taxes work?"),
         _turn("assistant", "You pay four times a year: April, June, September, January.")]
GARDEN = [_turn("user", "Tomatoes in my garden split after the heavy rain."),
          _turn("assistant", "Uneven watering makes tomatoes crack.")]
CAT = [_turn("user", "My cat Miso/Mochi? (we argue) sleeps on the radiator."),
       _turn("assistant", "Cats love warm spots.")]

INSTANCES: list[dict[str, Any]] = [
    {"question_id": "q1", "question_type": "single-session-user",
     "question": "What colour is the kayak I bought?", "answer": "red",
     "question_date": "2023/05/28 (Sun) 19:47",
     "haystack_session_ids": ["s_kayak", "s_taxes"],
     "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/01 (Mon) 10:00"],
     "haystack_sessions": [KAYAK, TAXES], "answer_session_ids": ["s_kayak"]},
    {"question_id": "q2", "question_type": "multi-session",
     "question": "What is my sourdough starter called and what did my tomatoes do?",
     "answer": "Bubbles; they split", "question_date": "2023/06/10 (Sat) 08:05",
     "haystack_session_ids": ["s_sourdough", "s_garden", "s_taxes"],
     "haystack_dates": ["2023/06/01 (Thu) 09:00", "2023/06/02 (Fri) 18:30",
                        "2023/05/01 (Mon) 10:00"],
     "haystack_sessions": [SOURDOUGH, GARDEN, TAXES],
     "answer_session_ids": ["s_sourdough", "s_garden"]},
    {"question_id": "q3_abs", "question_type": "single-session-user",
     "question": "What is my dog's name?", "answer": "You never mentioned a dog.",
     "question_date": "2023/06/11 (Sun) 12:00",
     "haystack_session_ids": ["s_cat/1"], "haystack_dates": ["2023/06/03 (Sat) 07:15"],
     "haystack_sessions": [CAT], "answer_session_ids": ["s_cat/1"]},
]


def test_dates_parse_to_aware_utc() -> None:
    assert lme.parse_stamp("2023/05/28 (Sun) 19:47") == dt.datetime(
        2023, 5, 28, 19, 47, tzinfo=dt.UTC)
    with pytest.raises(ValueError, match="not a date"):
        lme.parse_stamp("yesterday")


def test_pool_keeps_each_session_once_with_its_first_date() -> None:
    pool = lme.sessions_of(INSTANCES)
    assert list(pool) == ["s_kayak", "s_taxes", "s_sourdough", "s_garden", "s_cat/1"]
    assert pool["s_taxes"].day == dt.date(2023, 5, 1)
    assert pool["s_kayak"].turns[0] == ("user", KAYAK[0]["content"])


def test_session_notes_parse_with_their_date_and_id(tmp_path: Path) -> None:
    pool = lme.sessions_of(INSTANCES)
    paths = lme.write_sessions(tmp_path, pool.values())
    assert paths["Sessions/2023-06-03-s_cat_1.md"] == "s_cat/1"  # id made file-name safe
    assert sorted(paths.values()) == sorted(pool)
    for path, sid in paths.items():
        note = parse_note(path, (tmp_path / path).read_bytes())
        assert note.problems == (), note.problems
        assert str(note.properties["date"]) == pool[sid].day.isoformat()
        assert note.properties["session"] == sid
        assert note.headings[0].text == f"Chat session {pool[sid].day.isoformat()}"
    kayak = (tmp_path / "Sessions/2023-05-20-s_kayak.md").read_text()
    assert "**User:** I bought a red kayak" in kayak
    assert "\n\n**Assistant:** Lake Union is a lovely place to paddle.\n" in kayak
    # rewriting a smaller pool removes the notes of sessions that left it
    lme.write_sessions(tmp_path, [pool["s_kayak"]])
    assert [p.name for p in (tmp_path / "Sessions").iterdir()] == ["2023-05-20-s_kayak.md"]


def test_recall_metrics_on_a_known_ranking() -> None:
    ranked = ["a", "x", "y", "z", "w", "b", "v", "u", "t", "s", "c"]
    evidence = ["a", "b", "c"]
    assert lme.recall_at(ranked, evidence, 5) == pytest.approx(1 / 3)
    assert lme.recall_at(ranked, evidence, 10) == pytest.approx(2 / 3)
    assert not lme.all_at(ranked, evidence, 10)
    assert lme.scores_of(["b", "a"], ["a", "b"]) == {
        "recall@5": 1.0, "recall@10": 1.0, "recall_all@10": 1.0}
    rows = [
        {"question_type": "t1", "scores": {"s": lme.scores_of(ranked, evidence)}},
        {"question_type": "t1", "scores": {"s": lme.scores_of(["a"], ["a"])}},
        {"question_type": "t2", "scores": {"s": lme.scores_of([], ["a"])}},
    ]
    summary = lme.summarise(rows)
    assert list(summary) == ["t1", "t2", "overall"]
    assert summary["t1"]["n"] == 2
    assert summary["t1"]["s"]["recall@5"] == pytest.approx((1 / 3 + 1) / 2)
    assert summary["overall"]["s"]["recall@10"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert summary["overall"]["s"]["recall_all@10"] == pytest.approx(1 / 3)
    table = lme.markdown_table(summary, ["s"])
    assert "| **overall** | 3 | 0.444 | 0.556 | 0.333 |" in table


def test_a_copy_of_an_evidence_session_counts_as_that_session() -> None:
    """An abstention instance reuses its original's session (its turns, on another day)
    under another id: a system that shows the copy has found the evidence; the ranking is
    kept as returned."""
    copy = {**INSTANCES[0], "question_id": "q1_abs", "haystack_session_ids": ["s_kayak_abs"],
            "haystack_dates": ["2023/05/22 (Mon) 09:00"], "haystack_sessions": [KAYAK],
            "answer_session_ids": ["s_kayak_abs"]}
    pool = lme.sessions_of([*INSTANCES, copy])
    copies = lme.same_text(pool.values())
    assert copies["s_kayak_abs"] == "s_kayak" and copies["s_taxes"] == "s_taxes"
    questions = [lme.question_of(INSTANCES[0])]
    systems = {"bm25": lambda q: ["s_kayak_abs", "s_taxes"],
               "vector": lambda q: ["s_taxes", "s_garden"]}
    rows = lme.ask(questions, systems, lme.Timings(), {}, copies)
    assert rows[0]["scores"]["bm25"]["recall@5"] == 1.0
    assert rows[0]["scores"]["vector"]["recall@5"] == 0.0
    assert rows[0]["ranked"]["bm25"] == ["s_kayak_abs", "s_taxes"]  # as returned
    assert lme.ask(questions, systems, lme.Timings(), {})[0]["scores"]["bm25"][
        "recall@5"] == 0.0  # without the copies, only the id counts


def test_abstention_questions_are_skipped() -> None:
    kept, skipped = lme.select(INSTANCES, None)
    assert [i["question_id"] for i in kept] == ["q1", "q2"]
    assert skipped == 1
    assert lme.select(INSTANCES, 1) == ([INSTANCES[0]], 0)


def test_bm25_ranks_sessions_by_words() -> None:
    pool = lme.sessions_of(INSTANCES)
    bm25 = lme.Bm25Index({sid: lme.session_body(s) for sid, s in pool.items()})
    assert bm25.search("red kayak", 10) == ["s_kayak"]  # zero scores are not returned
    assert bm25.search("the of and", 10) == []  # stopwords only
    assert bm25.search("sourdough tomatoes", 10)[:2] in (["s_sourdough", "s_garden"],
                                                        ["s_garden", "s_sourdough"])


def test_deadline_multiplier_scales_every_stage(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    plain = lme.make_app(tmp_path / "vault", tmp_path / "data")
    slow = lme.make_app(tmp_path / "vault", tmp_path / "data", deadline_x=10)
    before = plain.settings.retrieval.progressive_search.stages
    after = slow.settings.retrieval.progressive_search.stages
    assert [s.name for s in after] == [s.name for s in before]
    assert [s.timeout_ms for s in after] == [s.timeout_ms * 10 for s in before]


@pytest.mark.slow
def test_pooled_run_end_to_end(tmp_path: Path) -> None:
    # generous deadlines: a loaded test machine must not skip the pipeline's stages
    result = lme.run_pooled(INSTANCES, tmp_path / "oracle", None, deadline_x=20,
                            data_dir=tmp_path / "data")
    assert result["questions"] == 2
    assert result["skipped_abstention"] == 1
    assert result["sessions"] == 5
    assert result["timings"]["indexes_built"] == 1
    rows = {r["question_id"]: r for r in result["rows"]}
    for system in lme.SYSTEMS:
        ranked = rows["q1"]["ranked"][system]
        assert set(ranked) <= set(lme.sessions_of(INSTANCES)), system
        assert rows["q1"]["scores"][system]["recall@10"] == 1.0, system
        if system != "dreamd":  # the pipeline's own scoring (recency, MMR) may reorder
            assert ranked[0] == "s_kayak", system
    assert result["summary"]["overall"]["n"] == 2
    assert all(r["dreamd_stages"] for r in result["rows"])  # the pipeline's stage statuses
    assert result["dreamd_empty"] <= result["dreamd_deadline_skips"]
    again = lme.run_pooled(INSTANCES, tmp_path / "oracle", None,  # the index is reused
                           data_dir=tmp_path / "data")
    assert again["timings"]["indexes_reused"] == 1
    assert again["timings"]["indexes_built"] == 0


@pytest.mark.slow
def test_dev_questions_end_to_end(tmp_path: Path, corpora_dir: Path) -> None:
    """Three questions of the development half, each in its own ~48-session vault, the real
    model; the second run of the same questions in a new workdir embeds nothing (the user's
    embedding cache is in the shared data folder)."""
    instances = lme.load_s_dev(corpora_dir / "longmemeval")
    assert len(instances) == 264
    kinds = ("multi-session", "knowledge-update", "temporal-reasoning")
    chosen = [next(i for i in instances if i["question_type"] == kind
                   and not i["question_id"].endswith("_abs")) for kind in kinds]
    result = lme.run_separate(chosen, tmp_path / "dev", None, deadline_x=20,
                              data_dir=tmp_path / "data")
    assert result["questions"] == 3 and result["timings"]["indexes_built"] == 3
    for row in result["rows"]:
        for system in lme.SYSTEMS:
            assert row["ranked"][system], (row["question_id"], system)
            assert set(row["ranked"][system]) <= set(chosen[0]["haystack_session_ids"]) | {
                s for i in chosen for s in i["haystack_session_ids"]}
    assert result["summary"]["overall"]["dreamd"]["recall@10"] > 0.5
    cache = EmbeddingCache.for_model(tmp_path / "data", USE_MODEL_ID, USE_DIMS, 2**30)
    cached = cache.stats()["rows"]
    assert cached > 100
    again = lme.run_separate(chosen, tmp_path / "dev-again", None, deadline_x=20,
                             data_dir=tmp_path / "data")
    assert again["timings"]["indexes_built"] == 3
    assert [r["ranked"] for r in again["rows"]] == [r["ranked"] for r in result["rows"]]
    assert cache.stats()["rows"] == cached  # nothing new was embedded
