"""Fusion and the final pick of a search: one score per candidate note, then the hits.

The third step of :mod:`daemon.retrieval`. Every ranked list the stages found is fused by
weighted reciprocal rank fusion (:data:`daemon.retrieval.LIST_WEIGHTS`); each candidate then
gets the Generative Agents score (Park et al., 2023: relevance, recency by the later of the
note's date and its last recall, importance from :mod:`magma.layers`), a bonus in the
layers the query targets, and the lead of the notes of a time when the query names nothing
else. The hits are the best scores, copies
dropped (near-identical text, :func:`magma.text.near_identical`), and the re-ranking only
adds: every note plain hybrid search ranks in its top :data:`HYBRID_FLOOR`, and in a vault
of fewer than :data:`MANY_NOTES` notes the vector its top :data:`VECTOR_FLOOR`, is among
them (unless the query names only a time), and a note plain hybrid and the relevance both
rank in their first :data:`AGREED_FLOOR` is not pushed out of them by a day's recency.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np

from ccb.dates import as_date
from config.settings import Settings
from consistency.lifecycle import (
    LifecycleMemory,
    LifecyclePolicy,
    MemoryState,
    RecallStats,
    feedback_priority,
    is_current,
)
from magma.catalogue import chunks_at_rows
from magma.fusion import Weights, mmr, recency, weighted_rrf
from magma.intent import Intent
from magma.layers import L2_RULES, LAYER_WORDS, importance
from magma.search import SearchHit, make_snippet
from magma.store import MagmaStore
from magma.text import CopyForm, copy_form, same_copy

if TYPE_CHECKING:
    from daemon.retrieval import _Found
    from magma.catalogue import CatalogueEntry, Snapshot

__all__ = ["AGREED_FLOOR", "CCB_LISTS", "CLEARLY_FRESHER", "DIVERSITY_LAMBDA", "HYBRID_FLOOR",
           "LEADING_LISTS", "LEAD_WORDS", "LIST_WEIGHTS", "MAGMA_LISTS", "MANY_NOTES",
           "RECENCY_OFF_IN_RANGE", "VECTOR_FLOOR", "Reranker", "best_row", "is_large"]

#: The engine behind each ranked list: CCB is the files themselves (names, titles, aliases,
#: descriptions, tags and dates, read into memory), MAGMA the index (vectors, full text, the
#: memory embeddings and the link graph).
CCB_LISTS = frozenset({"names", "time"})
MAGMA_LISTS = frozenset({"vector", "full-text", "note-bm25", "phrases", "routed", "rules",
                         "graph", "graph-walk"})
#: Weights of the ranked lists in the fusion (our choice): the two retrievers, the name
#: match and the memories the intent targets count fully; the notes dated in the query's
#: time range (ranked by date, not by meaning), the L2 rules ranked by meaning and the
#: graph neighbours of ``retrieval.graph_step = one_hop`` count half (they are context, not
#: matches). The PageRank walk's list (``graph-walk``) adds no rank weight: its note is
#: lifted to just below the best match instead (:data:`daemon.graph_stage.NEAR_CAP`: as a
#: ranked list at weight 0.5 or 1.0 it found few linked answers; see there). Measured on 60
#: LongMemEval_S dev questions: the time list at 1.0 and leading with the name list
#: ("ccb first") put 20 of a month's sessions above the two that answered "how much have
#: I made from selling eggs this month?"; at 0.5, not leading: recall@10 0.950 -> 0.967.
#: The note-level BM25 list (:mod:`magma.note_bm25`) counts fully in a vault of
#: :data:`MANY_NOTES` notes or more, and is never built in a smaller one. In a vault of
#: ~50 sessions it lowered recall: on 111 LongMemEval_S dev questions
#: (``bench/fusion_ablation.py``) at 1.0 recall@5 / @10 / all@10 0.961 / 0.984 / 0.964 ->
#: 0.942 / 0.974 / 0.937 (0.5: 0.947 / 0.978 / 0.946), on 40 of them (the first 20
#: multi-session and 20 temporal-reasoning) 0.933 / 0.988 / 0.975 -> 0.892 / 0.988 / 0.975
#: (0.5: 0.925 / 0.988 / 0.975), and on the layer probes (112 files) L1 hit@5 8 -> 7; there
#: the vector alone is the strongest list (0.948 / 0.988 at 40) and lexical evidence then
#: outweighs it two to one. In one vault of many sessions on like topics the words tell
#: them apart: the pooled oracle (940 sessions, 470 questions, ``--set oracle``; the user's
#: own turns counted three times, :data:`magma.note_bm25.ASKING_TURN_REPEAT`) 0.692 / 0.769
#: / 0.657 -> 0.723 / 0.805 / 0.711 with the list at 1.0 and the vector floor off
#: (``bench/longmemeval_bench.py --set oracle --deadline-x 20``, all systems in one run:
#: BM25 0.656 / 0.748 / 0.660, plain hybrid 0.651 / 0.761 / 0.647; runs differ by up to
#: 0.004, as copies of a session tie), 0.721 / 0.779 / 0.681 with the floor on. At 0.5:
#: 0.708 / 0.794 / 0.696 (without the user's turns counted again). The time list adds
#: no weight either:
#: its notes are always scored (:data:`TIME_CANDIDATES`) and lead a query that names only
#: a time (:data:`TIME_ONLY_LEAD`); on the 66 temporal-reasoning questions of the dev half
#: ("what did I do two weeks ago?", whose day is approximate) the list at 0.5 with
#: :data:`TIME_BONUS` 0.5 gave recall@5 0.870, at 0 and 0: 0.898 (plain hybrid 0.912), and
#: the layer probes' L1 hit@5 went 8 -> 9 of 10.
#: The parts list (``phrases``: the notes nearest each event a question names apart,
#: :func:`magma.question_shape.event_phrases`) counts half: on 155 LongMemEval_S dev
#: questions (all 65 multi-session, all 66 temporal-reasoning, 6 of each other type;
#: ``bench/fusion_ablation.py``) recall@5 0.933 without it, 0.937 at 0.5 and at 0.25,
#: 0.935 at 1.0 (multi-session 0.947 -> 0.955, temporal-reasoning 0.909 -> 0.912, plain
#: hybrid 0.942 / 0.912); recall@10 0.980 and all@10 0.955 at each weight.
LIST_WEIGHTS: Mapping[str, float] = {
    "vector": 1.0, "full-text": 1.0, "note-bm25": 1.0, "phrases": 0.5, "names": 1.0,
    "time": 0.0, "routed": 1.0, "rules": 0.5, "graph": 0.5, "graph-walk": 0.0,
}

#: Share of importance that counts at zero relevance; the rest grows with relevance (our
#: choice: without it a pinned rule filled a top-5 slot of every unrelated search).
IMPORTANCE_FLOOR = 0.25

#: Share of the cosine in relevance (the rest is the fused rank), both min-max scaled. Our
#: choice, measured: 0.1 is enough for a match only the vector can see (an English question,
#: a Chinese note) to lead over full-text noise; a larger share lowered LongMemEval recall@10
#: (0.5: 0.742; 0.15: 0.750; 0: 0.757 but the cross-lingual match fell to fifth).
COSINE_SHARE = 0.15

#: Bonus for a note dated inside the query's time range, times ``0.5 + relevance / 2``: 0,
#: measured (see :data:`LIST_WEIGHTS`; 0.5 / 0.25 / 0.1 each lowered temporal-reasoning
#: recall@5 against 0). A question's words find its notes; a time it names only orders a
#: query that names nothing else.
TIME_BONUS = 0.0

#: Added to a note inside the time range of a query that asks for nothing but that time
#: (``Intent.time_only``: "what did I get done yesterday"): the time's notes come first,
#: ordered among themselves by the rest of their score. Our choice: more than the rest of a
#: score can hold with every weight at its default (1 + 0.2 + 0.3, plus the bonuses).
TIME_ONLY_LEAD = 2.5

#: Recency is not counted for a question that names a time besides other words ("what
#: charity event did I take part in a month ago?", "how many weddings this year?"): the
#: time named, not today, is what it asks about, and a session of last week has no claim
#: over the one of the month named. A query of a time alone still orders that time's notes
#: by recency among the rest (:data:`TIME_ONLY_LEAD`). Measured on the 107 multi-session
#: and temporal-reasoning LongMemEval_S dev questions (``bench/fusion_ablation.py``):
#: see :data:`VECTOR_FLOOR` for the run.
#: Not counting it for a question about the order of events or the time between them as
#: well ("which did I start first, …", "how many days passed between …", "how long had I
#: …"; tried on the 155 dev questions of :data:`LIST_WEIGHTS`' parts list) moved no figure
#: with the parts list on, and without it lost an evidence session at ten hits
#: (temporal-reasoning recall@10 0.971 -> 0.967): recency still counts there.
RECENCY_OFF_IN_RANGE = True

#: Bonus, times the note's relevance, for a note in a layer the query's intent targets (our
#: choice: about what importance adds to a rule; scaled by relevance so a wrongly routed
#: query never lifts an unrelated note).
LAYER_BONUS = 0.25

#: MMR's λ in the final pick: 1 keeps the score order, so distinct notes are never pushed
#: down for being alike (two sessions that each hold part of an answer are alike); copies
#: are still dropped (``fusion.semantic_similarity_threshold`` and near-identical text).
#: Measured on 60 LongMemEval_S dev questions, with the other changes of this rule:
#: λ 0.85 recall@5 0.933, 1.0: 0.947 (multi-session 0.897 -> 0.930).
DIVERSITY_LAMBDA = 1.0

#: Candidates scored per hit asked for, and at least (our choice: enough for the bonuses to
#: lift a note from the third page of the fused list).
CANDIDATES_PER_HIT = 3
MIN_CANDIDATES = 30
#: Notes dated in the query's time range that are always scored (our choice: the ccb-fast
#: stage lists 20 at least; 0 turns it off).
TIME_CANDIDATES = 20

#: Plain hybrid's top this many notes are always among the hits (the re-ranking adds, it
#: never removes): recall@10 never falls below plain hybrid's recall@5. Not for a query that
#: names only a time (``Intent.time_only``): its words match nothing, the time's notes lead.
HYBRID_FLOOR = 5
#: A note that plain hybrid search and the relevance (every list fused, and the cosine:
#: :func:`_relevance`) both rank in their first this many is among the first this many hits,
#: unless what passes it does so on relevance, on importance or on a clearly fresher date
#: (:data:`CLEARLY_FRESHER`): recency orders the first five; where both rankings agree it
#: does not choose them by a day (0: off). Before it, on the LongMemEval_S dev question "How
#: often do I attend yoga classes to help with my anxiety?", the session that says "three
#: times a week" (Nov 30: plain hybrid #4, relevance #5) came sixth, behind one of Dec 1
#: without the answer (plain hybrid #7, relevance #6, recency 0.74 against 0.72; scores
#: 1.023 and 1.021). Measured against the rule off (``bench/fusion_ablation.py``, deadlines
#: ×20): the 36 knowledge-update dev questions recall@5 0.972 -> 0.986 (plain hybrid 0.986),
#: @10 / all@10 1.000 / 1.000 both; the 214 dev questions indexed (``--ids``) 0.961 ->
#: 0.963 (that question alone moved), 0.988 / 0.977 both; the pooled oracle (``--set
#: oracle``) 0.730 / 0.811 / 0.719 both, no question's figure moved. Tried and worse,
#: without the bound on freshness (recency, or any bonus, passing it by however much): the
#: pooled oracle recall@5 0.730 -> 0.718 (14 questions lost an evidence session, 2 gained:
#: there the asker's own session, days from the question, was lifted over another user's
#: that both rankings put first), a multi-session dev question lost one (see
#: :data:`CLEARLY_FRESHER`), and the layer probes' L2 and L3 search hit@5 fell 9 -> 8 (a
#: stressed rule in the fifth place gave it up to a garden log); bounded by a score gap
#: under 0.02 (a near tie, as :data:`PRIORITY_BONUS`) instead of by freshness: pooled 0.727
#: (3 lost); plain hybrid's whole first five kept against notes neither ranking puts there:
#: pooled 0.709. The ten hits stay the same ten: the rule only chooses which five lead.
AGREED_FLOOR = 5
#: How much fresher (recency from 0 to 1, as ``--explain`` shows it) a note must be to pass
#: one of :data:`AGREED_FLOOR`'s by recency: a day newer is not newer. 0.05 is two to three
#: days at the default half-life (30 days) for notes of the last two weeks, four for notes a
#: month old; our choice, between the yoga question's day (0.74 against 0.72) and the five
#: days (0.98 against 0.87) by which a multi-session dev question's evidence session ("How
#: many projects have I led or am currently leading?") passes a session both rankings put
#: fifth, which it should. Measured: 0.10 the same; 0.15 lost an evidence session on the
#: pooled oracle (recall@5 0.730 -> 0.728).
CLEARLY_FRESHER = 0.05
#: The vector list's top this many are kept the same way: the strongest single list at
#: ten hits (an evidence session the vector ranks second was pushed out by word matches).
#: Measured on 111 LongMemEval_S dev questions, vector alone 0.993 / 0.982 (recall@10 /
#: all@10): floor 0: 0.984 / 0.964, 3: 0.989 / 0.973, 5: 0.993 / 0.982, 6: same; recall@5
#: 0.961 at each (vector 0.946). On the 107 multi-session and temporal-reasoning dev
#: questions (``bench/fusion_ablation.py``), 5 still lost an evidence session the vector
#: ranks seventh and no word list finds ("the total weight of the new feed I purchased"):
#: recall@10 / all@10 0.978 / 0.944 at 5, 0.984 / 0.953 at 8 and at 10 (vector 0.980 /
#: 0.944, plain hybrid 0.978 / 0.944; multi-session all@10 0.969 -> 0.985); recall@5 the same.
#: On all 246 dev questions (``--variant vf10:VECTOR_FLOOR=10``), 8 -> 10: knowledge-update
#: recall@10 / all@10 0.986 / 0.972 -> 1.000 / 1.000 (vector 1.000 / 1.000: a "new Instant
#: Pot" the vector alone ranks tenth for "what new kitchen gadget did I invest in"),
#: overall all@10 0.967 -> 0.972, temporal-reasoning recall@10 0.971 -> 0.967 (plain hybrid
#: 0.961), recall@5 the same (9 gave what 8 gave). In a small vault the vector's top ten is
#: the strongest list at ten hits.
VECTOR_FLOOR = 10
#: A note of the vector's top :data:`VECTOR_FLOOR` is kept that way only when its cosine is
#: within this of the vector's best (1.0: always). In a vault of many notes on like topics
#: the vector's lower places are near-ties (cosines 0.37-0.39 under a best of 0.50), and
#: kept by the floor they pushed out notes both retrievers found. Measured in one run each
#: (``bench/fusion_ablation.py``, deadlines ×20): the pooled oracle (470 questions, 940
#: sessions, ``--set oracle``) recall@5 / @10 / all@10 0.692 / 0.770 / 0.657 at 1.0,
#: 0.692 / 0.781 / 0.677 at 0.05, 0.691 / 0.778 / 0.672 at 0.08, 0.691 / 0.777 / 0.668 at
#: 0.12 (the floor off, :data:`VECTOR_FLOOR` 0: 0.694 / 0.791 / 0.689); 40 LongMemEval_S
#: dev questions (the first 20 multi-session and 20 temporal-reasoning, ``--ids``) 0.933 /
#: 0.988 / 0.975 at 1.0 and at 0.08, at 0.05 and with the floor off 0.933 / 0.975 / 0.950
#: (a temporal question's second session, vector 0.975 / 0.975, lost). But on the layer
#: probes (``bench/layer_probes.py --no-deadlines``, 112 files) L2 search hit@5 fell 9 -> 8
#: at 0.08 and at 0.12 (a rule the vector ranks fifth, well below its best: "add some debug
#: logging to the signup endpoint…"), and a dental appointment went 7th -> 10th: in a small
#: vault the vector's lower places are what the floor is for. Off until a rule tells the two
#: apart. A vault of :data:`MANY_NOTES` or more has no vector floor at all (a margin from
#: the median cosine of the vector's list up to its best tells the pooled oracle's lower
#: places no better: with the note list, 0.3 of that span gave 0.714 / 0.786 / 0.687,
#: 0.5 gave 0.718 / 0.789 / 0.696, the floor off 0.719 / 0.801 / 0.709).
VECTOR_FLOOR_MARGIN = 1.0
#: Notes indexed from which a vault counts as large: the note-level BM25 list is fused
#: (:data:`LIST_WEIGHTS`) and the vector floor (:data:`VECTOR_FLOOR`) is off (0: every
#: vault is large). A vault of a few dozen notes on unlike topics is the vector's: its top
#: places are the notes about the question. Among hundreds on like topics (a user's own
#: sessions) its lower places are near-ties and the words tell the notes apart. Measured on
#: the two sizes of :data:`LIST_WEIGHTS` (a LongMemEval_S vault of ~50 sessions and the
#: probe vault of 112 files: both better small; the pooled oracle of 940: better large,
#: floor off alone 0.694 / 0.791 / 0.689); 300, between them, is our choice, not fitted.
MANY_NOTES = 300

#: Score added to a note the leading engine found, under ``both-priority-ccb`` and
#: ``both-priority-magma`` (our choice: enough to settle a near tie, about a tenth of what a
#: rank or two in the fused list is worth; never enough to lift a clearly weaker match).
PRIORITY_BONUS = 0.02
#: Factor on the score of a memory that is no longer current (superseded, archived, expired),
#: which only ``--all`` shows: it ranks below a current memory about as relevant, so the
#: fact that holds comes before the one it replaced (our choice, from a break-it round: a
#: tenth was not enough — a question in the old memory's own words, or in Chinese about an
#: English pair, scored it first by 0.1–0.3; a half keeps history below what holds now).
HISTORY_FACTOR = 0.5
#: Factor of a template's score (:func:`magma.catalogue.is_template_note`) when the question
#: does not ask for one (:data:`ASKS_TEMPLATE`): a blank form states nothing, yet holds the
#: words of what it is a form of ("categories: Books", "## Notes"), and a question about the
#: user's books put kepano's Book Template first. Halved, as a hidden memory is (our choice):
#: after the notes that answer, before the ones that do not.
TEMPLATE_FACTOR = 0.5
#: What ``--explain`` says of the recency of a note without a known day (no date of its own,
#: and a file time that says nothing: a template, a file written in a copy of the vault,
#: :mod:`magma.file_dates`), which ``recency 0.00`` would read as a very old note.
RECENCY_NONE = "recency: none, no date known"
#: A question that asks for a template ("my meeting template", "会议模板", "templating
#: the weekly review", "my Templater scripts", "会議のテンプレート").
ASKS_TEMPLATE = re.compile(r"(?i)\btemplat|模板|模版|テンプレ")

#: The lists whose notes get :data:`PRIORITY_BONUS` under each strategy: CCB leads with its
#: name matches, not with the time range's notes (ranked by date, they are no match).
LEADING_LISTS = {"both-priority-ccb": CCB_LISTS - {"time"}, "both-priority-magma": MAGMA_LISTS}
#: What a hit's ``why`` says of :data:`PRIORITY_BONUS`, by strategy.
LEAD_WORDS = {"both-priority-ccb": "found by its name or title: first on a near tie",
              "both-priority-magma": "found by meaning or words: first on a near tie"}
#: A list of plain hybrid search by what it ranks (a hit's ``why``).
_BY = {"vector": "by meaning", "full-text": "by your words"}



def is_large(snap: Snapshot) -> bool:
    """Does the index of ``snap`` hold at least :data:`MANY_NOTES` notes?"""
    return len(snap.rows_by_path) >= MANY_NOTES


class Reranker:
    """Scores the candidates of one search and picks the hits (the module docstring).

    ``recall_stats()`` gives each note's recall statistics; ``store`` reads the text of the
    chunks shown; :attr:`weights` are the α of the score (``retrieval.weights``). Thread
    use: like :class:`daemon.retrieval.Retriever`, one search at a time.
    """

    def __init__(self, *, store: MagmaStore, settings: Settings, weights: Weights,
                 policy: LifecyclePolicy,
                 recall_stats: Callable[[], Mapping[str, RecallStats]]) -> None:
        self._store = store
        self._settings = settings
        self.weights = weights
        self._policy = policy
        self._recall_stats = recall_stats


    def fuse(
        self, snap: Snapshot, text: str, intent: Intent, found: _Found,
        keep: Callable[[str], bool], limit: int, moment: datetime, today: date,
        include_hidden: bool, strategy: str = "both-priority-ccb",
    ) -> tuple[list[SearchHit], int, int]:
        """The hits of one search -> ``(hits, candidates scored, copies dropped)``.

        Hits are picked for at least :data:`HYBRID_FLOOR` places and cut to ``limit``: a
        shorter list is the start of a longer one (``-n 1`` is the first of ``-n 5``), and the
        notes plain hybrid search ranks in its top places are kept among the first five."""
        width, limit = max(limit, HYBRID_FLOOR), max(limit, 0)
        fused = weighted_rrf(found.lists, LIST_WEIGHTS, k=self._settings.retrieval.rrf_k)
        for path, extra in found.lift.items():  # the graph walk's share (daemon.graph_stage)
            fused[path] = fused.get(path, 0.0) + extra
        paths = _candidates(fused, found, keep, width)
        vectors = _candidate_vectors(snap, found, paths)
        paths = [p for p in paths if p in vectors or p in found.chunks]
        if not paths:
            return [], 0, 0
        # a vector list that found nothing (daemon.retrieval.VECTOR_NOISE_COSINE) is not
        # fused; its cosines rank nothing either
        query = found.vector if "vector" in found.lists else None
        # a note led by a section without words has no cosine of its own to add
        relevance = _relevance(paths, fused, {p: v for p, v in vectors.items()
                                              if p not in found.hollow}, query)
        scores, notes, recent = self._scores(snap, paths, relevance, intent, found, moment,
                                             today, strategy,
                                             asks_template=ASKS_TEMPLATE.search(text) is not None)
        fusion = self._settings.fusion

        forms: dict[str, CopyForm | None] = {}
        by_text: dict[str, CopyForm] = {}

        def form(path: str) -> CopyForm | None:
            # each candidate's text normalised once a search: copies of one note are asked
            # about with each other again and again (at 100,000 notes, ~27 pairs a search),
            # and a text its copies share once (the same object: a copy at once)
            if path not in forms:
                chunk = found.chunks.get(path)
                text = None if chunk is None else chunk.body or chunk.text
                if text is not None and text not in by_text:
                    by_text[text] = copy_form(text)
                forms[path] = None if text is None else by_text[text]
            return forms[path]

        def is_copy(a: str, b: str) -> bool:
            # one read of every candidate's text at the first pair to compare, not one a
            # pair (translations of one note sit close: dozens of pairs a search)
            self._read_texts(snap, found, paths)
            first, second = form(a), form(b)
            return first is not None and second is not None and (
                first is second or same_copy(first, second))

        duplicate_at = (fusion.semantic_similarity_threshold
                        if fusion.enable_semantic_deduplication and not include_hidden
                        else None)  # --all shows every copy, archived duplicates too
        groups = {p: snap.entries[p].owner or "" for p in paths}  # owners' facts apart
        # two notes of one chunk each with the same words under two titles (a template and
        # the note made from it, a note saved twice) are one hit whatever their cosine: each
        # chunk's vector carries its note's title, and "2023-09-30 > Notes" is far from
        # "Daily Note Template > Notes". Notes of more chunks can share one ("**User:**
        # Thanks! **Assistant:** Enjoy." ends many a chat) and say different things.
        whole = [p for p in paths if len(snap.rows_by_path.get(p, ())) == 1]
        if duplicate_at is not None:
            self._read_texts(snap, found, whole)
        words = {p: _words_of(f) for p in whole if duplicate_at is not None
                 and (f := form(p)) is not None and f.tokens}
        picked, dropped = mmr(
            paths, scores, vectors, limit=width, lambda_=DIVERSITY_LAMBDA,
            duplicate_at=duplicate_at, groups=groups, is_copy=is_copy, same_words=words)

        def copies(a: str, b: str) -> bool:  # mmr's test of a pair, for notes it never met
            if duplicate_at is None or groups[a] != groups[b]:
                return False
            if a in words and words.get(a) == words.get(b):
                return True
            return a in vectors and b in vectors \
                and _cosine(vectors[a], vectors[b]) >= duplicate_at and is_copy(a, b)

        if not intent.time_only:  # a query of a time alone has no words to match
            picked = _with_hybrid_top(picked, found, scores, dropped, width,
                                      self._settings.retrieval.rrf_k, copies,
                                      large=is_large(snap))
            picked = _with_agreed_top(picked, found, scores, recent, relevance,
                                      self._settings.retrieval.rrf_k,
                                      CLEARLY_FRESHER * self.weights.recency,
                                      hidden={p for p in paths if _hidden_reason(
                                          snap.entries[p], today) is not None})
        picked = _with_named_first(picked, found, paths, dropped)[:limit]
        self._read_texts(snap, found, dict(picked))
        hits = [self._hit(snap, text, found, path, value, notes[path], today, include_hidden)
                for path, value in picked if path in found.chunks]
        # a chunk gone since the snapshot was read leaves its note out
        return hits, len(paths), len(dropped)

    def _scores(self, snap: Snapshot, paths: Sequence[str], relevance: Mapping[str, float],
                intent: Intent, found: _Found, moment: datetime, today: date, strategy: str,
                *, asks_template: bool = False,
                ) -> tuple[dict[str, float], dict[str, list[str]], dict[str, float]]:
        """Each candidate's score (relevance, recency, importance, the bonuses), the
        reasons ``--explain`` shows for it, and the part of the score that is recency;
        ``asks_template``: the question asks for a template (:data:`TEMPLATE_FACTOR`)."""
        stats = self._recall_stats()
        half_life = self._settings.retrieval.recency_half_life_days
        led = {p for name in LEADING_LISTS.get(strategy, frozenset())
               for p in found.lists.get(name, ())}
        scores: dict[str, float] = {}
        notes: dict[str, list[str]] = {}
        recent: dict[str, float] = {}
        # a question about a time it names is about that time, not about today
        dated = intent.time_range is not None and not intent.time_only and RECENCY_OFF_IN_RANGE
        for path in paths:
            entry = snap.entries[path]
            rel = relevance[path]
            recall = stats.get(entry.memory_id or entry.note_id, RecallStats())
            last = entry.day
            if recall.last is not None:
                recalled = recall.last.astimezone(moment.tzinfo).date()
                last = recalled if last is None or recalled > last else last
            fresh = 0.0 if dated else recency((today - last).days if last is not None
                                              else None, half_life)
            # Votes are distinct queries: the same question asked again is not a new vote.
            weight = importance(entry.prior, salient=entry.salient,
                                recalls=recall.distinct_queries,
                                priority=self._priority(entry, recall, moment))
            # Importance lifts what is related to the query: a stressed rule wins a loosely
            # related question, and does not crowd every unrelated answer (it is in every
            # assembled context anyway).
            score = (self.weights.relevance * rel + self.weights.recency * fresh
                     + self.weights.importance * weight * (IMPORTANCE_FLOOR
                                                            + (1 - IMPORTANCE_FLOOR) * rel))
            extra: list[str] = []
            if intent.time_range is not None and entry.dated is not None \
                    and intent.time_range.start <= entry.dated <= intent.time_range.end:
                score += TIME_BONUS * (0.5 + rel / 2)
                # the expression as the question said it ("in september 2023", "上周")
                extra.append(f"within the time asked ({intent.time_range.label})")
                if intent.time_only:
                    score += TIME_ONLY_LEAD
                    extra.append("only a time asked")
            if entry.layer in intent.layers:
                score += LAYER_BONUS * rel
                extra.append(f"{LAYER_WORDS.get(entry.layer, entry.layer)}: the kind of note "
                             "asked for")
            if path in led:
                score += PRIORITY_BONUS
                extra.append(LEAD_WORDS[strategy])
            recent[path] = self.weights.recency * fresh
            if entry.memory_type is not None and _hidden_reason(entry, today) is not None:
                score *= HISTORY_FACTOR  # shown by --all: after what holds now
                recent[path] *= HISTORY_FACTOR
            if entry.template and not asks_template:
                score *= TEMPLATE_FACTOR
                recent[path] *= TEMPLATE_FACTOR
                extra.append("a template, not asked for")
            scores[path] = score
            notes[path] = [*extra, f"importance {weight:.2f} of 1",
                           "recency: not counted, a time is named" if dated
                           else RECENCY_NONE if last is None else f"recency {fresh:.2f} of 1"]
        return scores, notes, recent

    def _hit(self, snap: Snapshot, text: str, found: _Found, path: str, value: float,
             notes: list[str], today: date, include_hidden: bool) -> SearchHit:
        chunk = found.chunks[path]
        why = [*found.why.get(path, []), *notes]
        if path in found.kept:
            why.append(f"kept near the top: {found.kept[path]}")
        if include_hidden:
            reason = _hidden_reason(snap.entries[path], today)
            if reason:
                why.append(reason)
        entry = snap.entries[path]
        return SearchHit(
            path=path, title=(entry.name or chunk.title if entry.memory_type else chunk.title),
            heading=chunk.heading_path or None,
            snippet=make_snippet(chunk.body or chunk.text, text), score=value,
            why=tuple(why), memory_type=chunk.memory_type, note_id=chunk.note_id)

    def _read_texts(self, snap: Snapshot, found: _Found, paths: Iterable[str]) -> None:
        """Read the chunk text of each of ``paths`` found by its best chunk's row only."""
        rows = {found.rows[p]: p for p in paths if p in found.rows and p not in found.texts}
        if rows:
            found.texts.update(rows.values())
            wanted = {snap.chunk_ids[row]: p for row, p in rows.items()}
            for chunk in chunks_at_rows(self._store, snap, rows):
                found.chunks[wanted[chunk.chunk_id]] = chunk


    def _priority(self, entry: CatalogueEntry, recall: RecallStats, moment: datetime) -> float:
        if entry.memory_type != "feedback" or entry.layer == L2_RULES:
            return 1.0
        props = entry.properties
        memory = LifecycleMemory(
            id=entry.memory_id or entry.path, path=entry.path, type="feedback",
            created=as_date(props.get("created")), updated=as_date(props.get("updated")),
            recall=recall)
        return feedback_priority(memory, moment, self._policy)




def _words_of(form: CopyForm) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """What two texts share when they are the same words (:func:`magma.text.copy_form`)."""
    return form.tasks, form.values, form.tokens


def _candidate_vectors(snap: Snapshot, found: _Found, paths: Sequence[str]
                       ) -> dict[str, np.ndarray]:
    """Every candidate's vector, from the in-memory index: its row's (the vector list's),
    its chunk's (the one full text found: its row, else the vector the store gave with it),
    or its best chunk's by cosine (the text is read for the hits only)."""
    vectors: dict[str, np.ndarray] = {}
    for path in paths:
        chunk = found.chunks.get(path)
        row = found.rows.get(path)
        if row is None and chunk is not None:
            row = next((r for r in snap.rows_by_path.get(path, ())
                        if snap.chunk_ids[r] == chunk.chunk_id), None)
        if row is not None:
            vectors[path] = snap.chunk_vectors.rows(row)
        elif chunk is not None and chunk.vector is not None:
            vectors[path] = np.asarray(chunk.vector, dtype=np.float32)
        else:
            row, _ = best_row(snap, path, found.vector)
            if row is not None:
                found.rows[path] = row
                vectors[path] = snap.chunk_vectors.rows(row)
    return vectors


def _candidates(fused: Mapping[str, float], found: _Found, keep: Callable[[str], bool],
                limit: int) -> list[str]:
    """The notes scored: the best :data:`CANDIDATES_PER_HIT` per hit asked for (at least
    :data:`MIN_CANDIDATES`) by fused rank, and, up to :data:`TIME_CANDIDATES` of them, the
    notes dated in the query's time range (they add nothing to the fusion, yet lead a query
    that names only a time)."""
    ranked = [p for p in sorted(fused, key=lambda p: (-fused[p], p)) if keep(p)]
    pool = ranked[: max(limit * CANDIDATES_PER_HIT, MIN_CANDIDATES)]
    chosen = set(pool)
    for path in found.lists.get("time", [])[:TIME_CANDIDATES]:
        if path not in chosen and keep(path):
            pool.append(path)
            chosen.add(path)
    return pool


def _relevance(paths: Sequence[str], fused: Mapping[str, float],
               vectors: Mapping[str, np.ndarray], query: np.ndarray | None) -> dict[str, float]:
    """Relevance in [0, 1]: the fused rank score, min-max scaled over the candidates as Park
    et al. scale each of their three scores, blended with the cosine of the note's best
    chunk (:data:`COSINE_SHARE`): reciprocal rank fusion sees ranks only, so a note the
    vector ranks first at cosine 0.40 would otherwise lose to one that full-text noise and
    the vector both rank sixth."""
    top, low = max(fused[p] for p in paths), min(fused[p] for p in paths)
    span = top - low
    cosine = {p: float(vectors[p] @ query) for p in paths
              if query is not None and p in vectors}
    c_top, c_low = max(cosine.values(), default=0.0), min(cosine.values(), default=0.0)
    c_span = c_top - c_low
    out: dict[str, float] = {}
    for path in paths:
        rel = (fused[path] - low) / span if span > 0 else 1.0
        if path in cosine and c_span > 0:
            rel = (1 - COSINE_SHARE) * rel + COSINE_SHARE * (cosine[path] - c_low) / c_span
        out[path] = rel
    return out


def _with_hybrid_top(picked: list[tuple[str, float]], found: _Found, scores: Mapping[str, float],
                     dropped: Mapping[str, str], limit: int, rrf_k: int,
                     copies: Callable[[str, str], bool] | None = None,
                     large: bool = False) -> list[tuple[str, float]]:
    """``picked`` with every note plain hybrid search (the vector and full-text lists fused
    alone) ranks in its top :data:`HYBRID_FLOOR`, the vector's top :data:`VECTOR_FLOOR`
    (those within :data:`VECTOR_FLOOR_MARGIN` of its best cosine), and the first of each
    of the two lists (a Chinese note only the vector can match, at cosine 0.40 against
    0.14), among the hits: one the re-ranking pushed out takes the place of the last hit not
    so protected. A copy of a hit stays out: one MMR dropped
    (``dropped``), and one ``copies(hit, note)`` finds among notes MMR never compared, those
    below the limit (two copies both below it would otherwise both come back). Records the
    notes put back in ``found.kept``."""
    plain = weighted_rrf({name: found.lists.get(name, []) for name in ("vector", "full-text")},
                         {}, k=rrf_k)
    firsts = [next((p for p in found.lists.get(name, ()) if p in scores), None)
              for name in ("vector", "full-text")]  # what each retriever ranks first
    ranked = [p for p in sorted(plain, key=lambda p: (-plain[p], p)) if p in scores]
    by_vector = [p for p in found.lists.get("vector", ()) if p in scores]
    if by_vector and VECTOR_FLOOR_MARGIN < 1.0:
        best = max(found.cosine.get(p, 0.0) for p in by_vector)
        by_vector = [p for p in by_vector
                     if found.cosine.get(p, 0.0) >= best - VECTOR_FLOOR_MARGIN]
    why: dict[str, str] = {}  # what each protected note is kept for, first reason first
    for name, path in zip(("vector", "full-text"), firsts, strict=True):
        if path is not None:
            why.setdefault(path, f"#1 {_BY[name]}")
    for rank, path in enumerate(ranked[:HYBRID_FLOOR], start=1):
        why.setdefault(path, f"#{rank} by meaning and words together")
    for rank, path in enumerate(by_vector[:0 if large else VECTOR_FLOOR], start=1):
        why.setdefault(path, f"#{rank} by meaning")
    top = list(why)[:max(limit, 1)]
    chosen = {p for p, _ in picked}
    missing = [p for p in top if p not in chosen and p not in dropped]
    if not missing:
        return picked
    low, high = min(scores.values()), max(scores.values())
    out = list(picked)
    for path in missing:
        if copies is not None and any(copies(other, path) for other, _ in out):
            continue
        if len(out) >= limit:
            last = next((i for i in range(len(out) - 1, -1, -1) if out[i][0] not in top), None)
            if last is None:
                break
            del out[last]
        value = DIVERSITY_LAMBDA * ((scores[path] - low) / (high - low) if high > low else 1.0)
        out.append((path, value))
        found.kept[path] = why[path]
    return sorted(out, key=lambda item: -item[1])


def _with_agreed_top(picked: list[tuple[str, float]], found: _Found,
                     scores: Mapping[str, float], recent: Mapping[str, float],
                     relevance: Mapping[str, float], rrf_k: int, fresher: float,
                     hidden: Iterable[str] = ()) -> list[tuple[str, float]]:
    """``picked`` with every note that plain hybrid search and the relevance
    (:func:`_relevance`) both rank in their first :data:`AGREED_FLOOR` among its first
    :data:`AGREED_FLOOR`, unless what is above it is there on relevance, importance or a
    clearly fresher date. Such a note takes the place of the last of them that the relevance
    does not rank so high, that is above it by recency alone (without its share of recency,
    ``recent``, it would score below) and by less than ``fresher`` of it; that note comes
    next. The first places are in the order of their scores, and each place keeps its value,
    so the scores shown keep their order. A note shown only as history (``hidden``: its score
    was halved on purpose) is not kept so."""
    k = AGREED_FLOOR
    if k <= 0 or len(picked) <= k:
        return picked
    plain = weighted_rrf({name: found.lists.get(name, []) for name in ("vector", "full-text")},
                         {}, k=rrf_k)
    by_plain = [p for p in sorted(plain, key=lambda p: (-plain[p], p)) if p in scores][:k]
    by_relevance = set(sorted(relevance, key=lambda p: (-relevance[p], p))[:k])
    shown_as_history = set(hidden)

    def passed_by_recency(above: str, path: str) -> bool:
        return (above not in by_relevance
                and scores[above] - recent[above] < scores[path] - recent[path]
                and recent[above] - recent[path] < fresher)

    order = [p for p, _ in picked]
    pushed: list[str] = []
    for rank, path in enumerate(by_plain, start=1):
        if path not in by_relevance or path in shown_as_history or path not in order \
                or order.index(path) < k:
            continue
        out = next((i for i in range(k - 1, -1, -1) if passed_by_recency(order[i], path)),
                   None)
        if out is None:
            continue
        pushed.append(order[out])
        order[out] = path
        found.kept.setdefault(path, f"#{rank} by meaning and words together, and in the "
                                    f"first {k} by relevance")
    if not pushed:
        return picked
    head = sorted(order[:k], key=lambda p: -scores[p])
    after = sorted(pushed, key=lambda p: -scores[p])
    order = [*head, *after, *(p for p in order[k:] if p not in head)]
    return list(zip(order, (value for _, value in picked), strict=True))


def _with_named_first(picked: list[tuple[str, float]], found: _Found,
                      candidates: Collection[str], dropped: Mapping[str, str]
                      ) -> list[tuple[str, float]]:
    """``picked`` with the one note the query names exactly (``found.named``: its name,
    title or alias, :func:`daemon.retrieval._ccb_fast`) in first place, the others after it
    in their order; each place keeps its value, so the scores shown keep their order. A
    search that stops at that note (``-n 1``) and one that goes on (``-n 10``) start alike:
    "Kevin Kelly" in kepano's vault ranked "Well Made 145 Kevin Kelly" above the note of that
    name once the search went on. When the named note was left out as a copy of another
    (``dropped``: copy -> the note kept), it stands in that note's stead. A named note no
    longer a candidate (not shown to this search) changes nothing."""
    named = found.named
    if named is None or named not in candidates or (picked and picked[0][0] == named):
        return picked
    copy_of = dropped.get(named)
    order = [named, *(p for p, _ in picked if p not in (named, copy_of))]
    values = [value for _, value in picked]
    if len(order) > len(values):  # it came in from below the places picked
        values.append(values[-1] if values else 0.0)
    return list(zip(order, values, strict=False))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms > 0 else 0.0


def _hidden_reason(entry: CatalogueEntry, today: date) -> str | None:
    if entry.memory_type is None or is_current(MemoryState.of(entry.properties, past=False), today):
        return None
    status = str(entry.properties.get("status") or "").strip().casefold()
    if status in {"archived", "superseded"}:
        return status
    return "superseded" if entry.properties.get("valid_to") else "expired"


def best_row(snap: Snapshot, path: str, vector: np.ndarray | None
              ) -> tuple[int | None, float]:
    """The note's chunk row nearest ``vector`` (its first chunk without one) and the cosine."""
    rows = snap.rows_by_path.get(path)
    if not rows:
        return None, 0.0
    if vector is None:
        return rows[0], 0.0
    sims = snap.chunk_vectors.rows(rows) @ vector
    best = int(np.argmax(sims))
    return rows[best], float(sims[best])

