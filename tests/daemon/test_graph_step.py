"""The full-fusion stage's graph step (``retrieval.graph_step``) on a real store.

The embedder is the tests' token-hash FAKE: these tests are about which note the graph brings
in, not about meaning; a question shares no word with the note it should find, so neither the
vector nor the full text can find that note.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fakes import TokenHashEmbedder

from daemon import rerank
from daemon.app import App
from daemon.graph_stage import graph_of
from daemon.rerank import _with_hybrid_top
from daemon.retrieval import _Found

MakeApp = Callable[..., tuple[App, TokenHashEmbedder]]

NOTES = {
    "Bread notes.md": "---\naliases: [Sourdough starter feeding schedules]\n---\n"
                      "# Bread notes\n\nThe oven preheats for an hour before baking.\n\n"
                      "My sourdough starter lives in the pantry; its feeding and hydration "
                      "schedules are in [[Flour blends]].\n",
    "Flour blends.md": "# Flour blends\n\nWholemeal rye and spelt, forty parts in a hundred. "
                       "Bought from [[Mill suppliers]].\n",
    "Mill suppliers.md": "# Mill suppliers\n\nStone ground at the valley cooperative.\n",
    "Pantry inventory.md": "# Pantry inventory\n\nThe pantry holds tins and beans.\n",
    "Cat care.md": "# Cat care\n\nFeeding the cat twice a day.\n",
    "Running log.md": "# Running log\n\nHydration matters on long runs.\n",
    "Garden.md": "# Garden\n\nWatering schedules for the tomatoes.\n",
    "Sourdough history.md": "# Sourdough history\n\nA bread leavened by wild yeast.\n",
}
QUESTION = "sourdough starter pantry feeding hydration schedules"


def _vault(root: Path) -> Path:
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _top(app: App, k: int) -> list[str]:
    return [h.path for h in app.search(QUESTION, limit=10, count_recall=False)][:k]


@pytest.mark.parametrize("step", ["pagerank", "one_hop", "off"])
def test_the_note_a_matched_passage_links_to_comes_in_under_pagerank_only(
        tmp_path: Path, make_app: MakeApp, step: str) -> None:
    app, _ = make_app(_vault(tmp_path), **{"retrieval.graph_step": step})
    app.sync()
    top = _top(app, 3)
    assert top[0] == "Bread notes.md"
    assert ("Flour blends.md" in top) is (step == "pagerank")
    stages = {t.name: t.status for t in app.last_search_trace.stages}  # type: ignore[union-attr]
    assert stages["full-fusion"] == ("off: retrieval.graph_step" if step == "off" else "ran")
    if step == "pagerank":
        hit = next(h for h in app.search(QUESTION, limit=10, count_recall=False)
                   if h.path == "Flour blends.md")
        assert any(why.startswith("along the links from Bread notes") for why in hit.why)
    app.close()


def test_the_graph_joins_links_mentions_and_memories_of_one_subject(
        tmp_path: Path, make_app: MakeApp) -> None:
    vault = _vault(tmp_path)
    (vault / "Memory").mkdir()
    for stem, subject, body in [
            ("starter-feeding", "baking.starter", "Feed the starter at 8 am; see Flour blends."),
            ("starter-jar", "Baking Starter", "The starter jar is the tall one.")]:
        (vault / "Memory" / f"{stem}.md").write_text(
            f"---\nname: {stem}\ndescription: {body}\ntype: project\nsubject: {subject}\n"
            f"---\n{body}\n", encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    retriever = app.retriever
    graph = graph_of(app.store, retriever.snapshot())
    assert graph.neighbours("Bread notes.md") == ["Flour blends.md"]  # the link, either way
    assert set(graph.neighbours("Flour blends.md")) == {
        "Bread notes.md", "Mill suppliers.md", "Memory/starter-feeding.md"}  # a mention
    assert "Memory/starter-jar.md" in graph.neighbours("Memory/starter-feeding.md")  # subject
    app.close()


def test_two_copies_below_the_limit_do_not_both_come_back() -> None:
    found = _Found(lists={"vector": ["a", "x", "x2"], "full-text": ["a", "x", "x2"]})
    scores = {"a": 1.0, "b": 0.9, "c": 0.8, "d": 0.7, "x": 0.5, "x2": 0.49}
    picked = [("a", 1.0), ("b", 0.9), ("c", 0.8), ("d", 0.7)]
    both = _with_hybrid_top(picked, found, scores, {}, 4, 60)
    assert {p for p, _ in both} == {"a", "b", "x", "x2"}  # without a copy test: both back
    found.kept.clear()
    one = _with_hybrid_top(picked, found, scores, {}, 4, 60,
                           lambda p, q: {p, q} == {"x", "x2"})
    assert {p for p, _ in one} == {"a", "b", "c", "x"}
    assert found.kept == {"x": "#2 by meaning and words together"}


def test_the_vector_floor_keeps_only_notes_near_the_vectors_best(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a margin set (:data:`daemon.rerank.VECTOR_FLOOR_MARGIN`, off by default), a note
    the vector ranks high but far below its best cosine is not forced among the hits; one
    near the best is."""
    top = ["a", "b", "c", "d", "e"]  # both retrievers' first five: plain hybrid's top
    found = _Found(lists={"vector": [*top, "near", "far"], "full-text": top},
                   cosine={"a": 0.50, "b": 0.49, "c": 0.48, "d": 0.47, "e": 0.46,
                           "near": 0.45, "far": 0.38})
    scores = {"a": 1.0, "b": 0.9, "c": 0.8, "d": 0.7, "e": 0.6, "y": 0.5, "z": 0.4,
              "near": 0.1, "far": 0.05}
    picked = [(p, scores[p]) for p in [*top, "y", "z"]]
    monkeypatch.setattr(rerank, "VECTOR_FLOOR_MARGIN", 0.08)
    out = _with_hybrid_top(picked, found, scores, {}, 7, 60)
    assert {p for p, _ in out} == {*top, "y", "near"}  # near took the last place, far none
    assert found.kept == {"near": "#6 by meaning"}


def test_a_walked_note_is_placed_by_the_note_that_links_to_it(
        tmp_path: Path, make_app: MakeApp) -> None:
    """A note the walk brings in is lifted to just below the seed whose matched passage
    links to it, not the best seed (a new user's demo query put a project linked from the
    fourth hit second): its ``why`` names that seed."""
    notes = {
        "Starter.md": "# Starter\n\nSourdough starter feeding and hydration schedules, "
                      "written down with the dates of every loaf, the oven, the flour, the "
                      "water, the salt and the weather outside.\n",
        "Pantry.md": "# Pantry\n\nThe pantry holds the sourdough jar and its feeding flour; "
                     "the kiln notes are in [[Kiln]].\n",
        "Kiln.md": "# Kiln\n\nGlaze firing at cone six.\n",
        "Sourdough history.md": "# Sourdough history\n\nA bread leavened by wild yeast.\n",
        "Running log.md": "# Running log\n\nHydration matters on long runs.\n",
        "Garden.md": "# Garden\n\nWatering tomatoes.\n",
        "Cat care.md": "# Cat care\n\nTwo meals a day.\n",
    }
    for name, text in notes.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    app, _ = make_app(tmp_path, **{"retrieval.graph_step": "pagerank"})
    app.sync()
    hits = app.search("sourdough starter pantry feeding hydration schedules", limit=10,
                      count_recall=False)
    order = [h.path for h in hits]
    kiln = next(h for h in hits if h.path == "Kiln.md")
    assert any(w.startswith("along the links from Pantry") for w in kiln.why), kiln.why
    assert order.index("Kiln.md") > order.index("Pantry.md"), order
    app.close()


def test_in_a_small_vault_the_vectors_whole_top_ten_is_among_ten_hits() -> None:
    """A note only the vector finds, tenth ("what new kitchen gadget did I invest in" / "my
    new Instant Pot"), is not pushed out by notes both lists rank lower
    (:data:`daemon.rerank.VECTOR_FLOOR`)."""
    by_vector = [f"v{i}" for i in range(1, 11)]
    words = [*by_vector[:5], *(f"w{i}" for i in range(1, 11))]  # both lists' top five agree
    found = _Found(lists={"vector": by_vector, "full-text": words})
    scores = {**{p: 0.5 - i / 100 for i, p in enumerate(by_vector)},
              **{p: 1.0 - i / 100 for i, p in enumerate(words)}}
    picked = sorted(scores.items(), key=lambda item: -item[1])[:10]
    out = {p for p, _ in _with_hybrid_top(picked, found, scores, {}, 10, 60)}
    assert "v10" in out and found.kept["v10"] == "#10 by meaning"
