"""Note-level BM25: a note is one document, so words spread over its chunks score together."""

from __future__ import annotations

import itertools
from pathlib import Path

import bm25s
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from magma.note_bm25 import NoteBm25, NoteLexicon, TermCounts, best_rows, bm25_tokens


@pytest.mark.parametrize(("text", "tokens"), [
    ("Renew the passport", ["renew", "passport"]),
    ("The API listens on PORT 8080.", ["api", "listens", "port", "8080"]),
    ("续签护照", ["续签", "签护", "护照"]),
    ("用 pnpm 管理依赖", ["用", "pnpm", "管理", "理依", "依赖"]),
    ("東京の天気", ["東京", "京の", "の天", "天気"]),  # kana and Han: one run
    ("Café déjà-vu", ["café", "déjà", "vu"]),
    ("", []),
    ("the and of", []),  # stop words only
])
def test_tokens(text: str, tokens: list[str]) -> None:
    assert bm25_tokens(text) == tokens


def _index(notes: dict[str, str]) -> NoteBm25:
    return NoteBm25.build({path: bm25_tokens(text) for path, text in notes.items()})


def test_words_spread_over_a_note_score_together() -> None:
    index = _index({
        "trip.md": "We rented a kayak on Monday. " * 3 + "Then the train to Lisbon.",
        "kayak.md": "A kayak is a small boat. Kayak paddles are double bladed.",
        "lisbon.md": "Lisbon is the capital of Portugal.",
        "bread.md": "Feed the starter at 1:1:1.",
    })
    ranked = index.top("kayak trip to Lisbon", 10, lambda _: True)
    assert ranked[0][0] == "trip.md"
    assert {p for p, _ in ranked} == {"trip.md", "kayak.md", "lisbon.md"}  # no zero scores
    assert all(a[1] >= b[1] for a, b in itertools.pairwise(ranked))


def test_chinese_words_are_found_by_their_character_pairs() -> None:
    index = _index({"a.md": "下个月要续签护照，记得带照片。", "b.md": "护士说明天复查。",
                    "c.md": "Renew the passport next month."})
    assert [p for p, _ in index.top("护照什么时候续签", 10, lambda _: True)] == ["a.md"]


def test_keep_filters_and_limits() -> None:
    index = _index({f"n{i}.md": f"kiln firing log {i}" for i in range(30)})
    ranked = index.top("kiln", 5, lambda p: p != "n0.md")
    assert len(ranked) == 5 and "n0.md" not in {p for p, _ in ranked}
    assert index.top("kiln", 0, lambda _: True) == []
    assert index.top("glaze", 5, lambda _: True) == []  # no shared token
    assert index.top("the", 5, lambda _: True) == []  # stop words only
    assert NoteBm25.build({}).top("kiln", 5, lambda _: True) == []
    assert NoteBm25.build({"blank.md": []}).top("kiln", 5, lambda _: True) == []


@given(st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.25, 7.0]), min_size=0, max_size=60),
       st.integers(min_value=1, max_value=70), st.integers(min_value=0, max_value=2**16))
def test_the_best_rows_are_a_full_stable_sort_cut_short(
        values: list[float], take: int, seed: int) -> None:
    """``best_rows`` ranks the same first rows as a stable sort of all of them, ties (few
    score values, so many) in row order, and says when it ranked them all."""
    rng = np.random.default_rng(seed)
    scores = np.zeros(len(values) + 5)
    rows = np.sort(rng.choice(len(scores), size=len(values), replace=False))
    scores[rows] = values
    full = rows[np.argsort(-scores[rows], kind="stable")]
    order, whole = best_rows(rows, scores, take)
    assert len(order) >= min(take, len(rows))
    assert order.tolist() == full[: len(order)].tolist()
    assert whole == (len(order) == len(rows))


@given(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=60),
       st.sets(st.integers(0, 59), max_size=58))
def test_top_past_many_refused_notes_is_the_full_ranking_filtered(
        n: int, best_refused: int, refused: set[int]) -> None:
    """When ``keep`` refuses most of the best notes, ``top`` ranks more of them until it has
    ``n`` or none is left: the same as filtering a full ranking (scores tie in threes)."""
    index = _index({f"n{i:02d}.md": "kiln " * (1 + i % 20) + "firing log" for i in range(60)})
    everything = index.top("kiln firing", 60, lambda _: True)
    hidden = {f"n{i:02d}.md" for i in refused} | {p for p, _ in everything[:best_refused]}

    def keep(path: str) -> bool:
        return path not in hidden

    assert index.top("kiln firing", n, keep) == [hit for hit in everything
                                                 if keep(hit[0])][:n]


def test_a_folder_asked_of_top_leaves_the_same_notes_as_keep_alone() -> None:
    """``top`` told the folder ``keep`` allows returns what ``keep`` alone gives: ties (the
    copies of a note) in index order, look-alike folders ("日记/" and "日记本/", "a/" and
    "a.md", "A/") kept apart, a folder no note is in, and the folder's notes marked once."""
    notes = {}
    for i in range(12):
        for folder in ("", "a/", "A/", "日记/", "日记本/", "a/b/"):
            notes[f"{folder}n{i % 5}-{i}.md"] = f"kiln firing log {i % 3} 窑炉 烧制"
    notes["a.md"] = "kiln kiln kiln"
    index = _index(notes)
    for query in ("kiln firing", "log 1", "窑炉", "glaze"):
        for folder in ("a/", "A/", "日记/", "日记本/", "a/b/", "a", "Z/"):
            for dropped in (set(), {f"{folder}n0-0.md", f"{folder}n1-6.md"}):
                def keep(path: str, folder: str = folder, dropped: set[str] = dropped) -> bool:
                    return path.startswith(folder) and path not in dropped

                for n in (1, 4, 40):
                    assert index.top(query, n, keep, folder) == index.top(query, n, keep), \
                        (query, folder, n)
    assert set(index._folders) == {"a/", "A/", "日记/", "日记本/", "a/b/", "a", "Z/"}


def test_the_lexicon_tokenizes_each_chunk_once_and_forgets_what_left() -> None:
    lexicon = NoteLexicon()
    assert lexicon.missing(["h1", "h2"]) == {"h1", "h2"}
    lexicon.learn({"h1": "sourdough starter feeding", "h2": "rye loaf"})
    assert lexicon.missing(["h1", "h2", "h3"]) == {"h3"}
    index = lexicon.build({"a.md": ("Sourdough", ["h1"]), "b.md": ("Rye", ["h2"])})
    assert index.top("rye", 5, lambda _: True)[0][0] == "b.md"
    # b.md is gone: its chunk's tokens go too
    lexicon.build({"a.md": ("Sourdough", ["h1"])})
    assert lexicon.missing(["h1", "h2"]) == {"h2"}
    with pytest.raises(KeyError):
        lexicon.build({"c.md": ("C", ["never-learnt"])})


def test_the_builder_indexes_the_newest_snapshot_and_serves_the_last_one_meanwhile() -> None:
    import threading

    from magma.note_bm25 import NoteBm25Builder

    bodies = {"h1": "sourdough starter", "h2": "rye loaf", "h3": "kiln firing"}
    gate = threading.Event()

    def read(hashes: object) -> dict[str, str]:
        gate.wait(10)
        return bodies

    builder = NoteBm25Builder(read)
    try:
        assert builder.index(None).top("rye", 5, lambda _: True) == []  # nothing built yet
        first = builder.submit(lambda: {"a.md": ("A", ["h1"])})
        second = builder.submit(lambda: {"b.md": ("B", ["h2"])})  # waits behind the first
        third = builder.submit(lambda: {"c.md": ("C", ["h3"])})
        assert second.cancelled()  # never built: a newer snapshot came
        assert builder.index(second, wait_s=0.01).top("rye", 5, lambda _: True) == []
        gate.set()
        assert first.result(10) is not None
        newest = builder.index(third, 10, fresh=True)
        assert [p for p, _ in newest.top("kiln", 5, lambda _: True)] == ["c.md"]
        assert [p for p, _ in builder.index(second).top("kiln", 5, lambda _: True)] \
            == ["c.md"]  # a cancelled build is answered by the last one built
    finally:
        builder.close()


def test_a_new_snapshot_waits_its_turn_once_an_index_serves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild starts only REBUILD_GAP_FACTOR times the last build's time after it ended;
    meanwhile the last index answers, and a fresh ask (the warm-up) never waits its turn."""
    import magma.note_bm25 as note_bm25
    from magma.note_bm25 import NoteBm25Builder

    bodies = {"h1": "sourdough starter", "h2": "rye loaf"}
    builds: list[object] = []

    def read(hashes: object) -> dict[str, str]:
        builds.append(hashes)
        return bodies

    monkeypatch.setattr(note_bm25, "REBUILD_GAP_FACTOR", 1e9)  # never due again
    builder = NoteBm25Builder(read)
    try:
        first = builder.index_for("v1", lambda: {"a.md": ("A", ["h1"])}, 10)
        assert [p for p, _ in first.top("starter", 5, lambda _: True)] == ["a.md"]
        later = builder.index_for("v2", lambda: {"b.md": ("B", ["h2"])}, 10)
        assert later.top("rye", 5, lambda _: True) == []  # v2 not built: v1 answers
        assert [p for p, _ in later.top("starter", 5, lambda _: True)] == ["a.md"]
        fresh = builder.index_for("v2", lambda: {"b.md": ("B", ["h2"])}, 10, fresh=True)
        assert [p for p, _ in fresh.top("rye", 5, lambda _: True)] == ["b.md"]
        monkeypatch.setattr(note_bm25, "REBUILD_GAP_FACTOR", 0.0)
        builder.index_for("v2", lambda: {"b.md": ("B", ["h2"])}, 10)  # built: due at once
        builder._next_build_at = 0.0
        newest = builder.index_for("v3", lambda: {"c.md": ("C", ["h1", "h2"])}, 10)
        assert [p for p, _ in newest.top("rye", 5, lambda _: True)] == ["c.md"]
    finally:
        builder.close()


def test_a_store_that_cannot_be_read_leaves_the_last_index_serving() -> None:
    from magma.note_bm25 import NoteBm25Builder
    from magma.store import StoreError

    calls: list[object] = []

    def read(hashes: object) -> dict[str, str]:
        calls.append(hashes)
        if len(calls) > 1:
            raise StoreError("magma: read chunks: disk gone")
        return {"h1": "sourdough starter"}

    builder = NoteBm25Builder(read)
    try:
        assert builder.submit(lambda: {"a.md": ("A", ["h1"])}).result(10) is not None
        failed = builder.submit(lambda: {"a.md": ("A", ["h1"]), "b.md": ("B", ["h2"])})
        assert failed.result(10) is None
        assert [p for p, _ in builder.index(failed).top("starter", 5, lambda _: True)] \
            == ["a.md"]
    finally:
        builder.close()


def test_tokens_keep_combining_marks_and_compare_in_nfkc() -> None:
    assert bm25_tokens("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]
    assert bm25_tokens("cafe\u0301") == bm25_tokens("café") == ["café"]


def test_a_note_edited_many_times_does_not_keep_every_word_it_ever_had() -> None:
    lexicon = NoteLexicon()
    for n in range(300):
        body = f"edit {n} " + " ".join(f"token{n}x{i}" for i in range(20))
        lexicon.learn({f"h{n}": body})
        index = lexicon.build({"a.md": ("A", [f"h{n}"])})
    assert [p for p, _ in index.top("token299x3", 5, lambda _: True)] == ["a.md"]
    assert index.top("token0x3", 5, lambda _: True) == []
    assert lexicon.vocabulary_size < 200  # ≈ 22 in use; at most twice that and a margin


def test_what_the_user_said_weighs_more_than_the_answer_around_it() -> None:
    filler = "Here are some ideas about travel, maps and timetables. " * 6
    lexicon = NoteLexicon()
    bodies = {
        "h-user": f"**User:** I rented a tandem kayak last week.\n\n**Assistant:** {filler}",
        "h-answer": f"**User:** Any ideas for the week?\n\n**Assistant:** {filler} A kayak.",
    }
    lexicon.learn(bodies)
    index = lexicon.build({"said.md": ("Said", ["h-user"]),
                           "answered.md": ("Answered", ["h-answer"])})
    ranked = index.top("kayak", 2, lambda p: True)
    assert [path for path, _ in ranked] == ["said.md", "answered.md"]
    assert ranked[0][1] > ranked[1][1] * 1.2


def test_feedback_words_find_a_note_without_the_querys_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from magma import note_bm25
    index = _index({"a.md": "bike repair shop chain gears", "b.md": "bike chain gears oil",
                    "c.md": "cooking pasta sauce", "d.md": "gears oil change car"})
    assert {p for p, _ in index.top("bike", 5, lambda p: True)} == {"a.md", "b.md"}
    monkeypatch.setattr(note_bm25, "FEEDBACK_SHARE", 0.5)
    monkeypatch.setattr(note_bm25, "FEEDBACK_DOCS", 2)
    found = [p for p, _ in index.top("bike", 5, lambda p: True)]
    assert sorted(found[:2]) == ["a.md", "b.md"] and found[2:] == ["d.md"]  # gears, oil


CLOSING_CHILD = """
import sys, threading
sys.path.insert(0, {repo!r})
from magma.note_bm25 import NoteBm25Builder

reached, closed = threading.Event(), threading.Event()

class Bodies(dict):
    # the chunks of a vault too big to tokenize before the process ends: endless here
    def items(self):
        n = 0
        while True:
            if n == 200:
                reached.set()
                closed.wait()
            yield f"h{{n}}", f"kiln glaze firing number {{n}}"
            n += 1

builder = NoteBm25Builder(lambda hashes: Bodies())
builder.index_for("v1", lambda: {{"a.md": ("A", ["h0"])}}, wait_s=0)
assert reached.wait(60)
builder.close()
closed.set()
print("closed", flush=True)
"""


def test_a_closed_builder_lets_its_process_end_before_the_index_is_built() -> None:
    """``dreamd search`` in a big vault without the daemon asks for the note index, answers
    without it, closes: the process must end then, not once every chunk is tokenized (Python
    joins the build thread at exit). The build here never ends by itself."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", CLOSING_CHILD.format(repo=str(repo))],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "closed\n"


def _both_builds(documents: list[list[int]], vocabulary: int) -> tuple[dict, dict]:
    """The score matrix of ``bm25s``'s own build and of dreamd's build from counts."""
    vocab = {f"t{i}": i for i in range(vocabulary)}
    theirs = bm25s.BM25()
    theirs.index((documents, dict(vocab)), create_empty_token=False, show_progress=False)
    ours = NoteBm25.from_counts({f"n{i}.md": TermCounts.of(d) for i, d in enumerate(documents)},
                                vocab)
    assert ours._index is not None
    return theirs.scores, ours._index.scores


def _same_matrix(theirs: dict, ours: dict) -> None:
    assert theirs["num_docs"] == ours["num_docs"]
    for part in ("data", "indices", "indptr"):
        assert theirs[part].dtype == ours[part].dtype, part
        assert np.array_equal(theirs[part], ours[part]), part


@given(st.lists(st.lists(st.integers(0, 40), min_size=1, max_size=60), min_size=1,
                max_size=25))
def test_the_index_built_from_counts_is_the_librarys_value_for_value(
        documents: list[list[int]]) -> None:
    _same_matrix(*_both_builds(documents, 41))  # unused token ids included


def test_the_index_built_from_counts_of_real_notes_is_the_librarys(corpora_dir: Path) -> None:
    vocab: dict[str, int] = {}
    documents = []
    for path in sorted((corpora_dir / "obsidian-help").rglob("*.md"))[:400]:
        tokens = bm25_tokens(path.read_text("utf-8", errors="replace"))
        if tokens:
            documents.append([vocab.setdefault(t, len(vocab)) for t in tokens])
    assert len(documents) > 300
    _same_matrix(*_both_builds(documents, len(vocab)))
