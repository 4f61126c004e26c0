"""The retrieval pipeline behind ``dreamd search``, ``dreamd context`` and the MCP tools.

DESIGN.md § Retrieval. One search runs:

1. **Intent** (:mod:`magma.intent`): rules in English and Chinese say which memory types and
   layers a query targets and which days it is about; the answer is cached (``cache``:
   TTL and size; off when ``cache.enabled`` or ``retrieval.intent_analysis.cache_enabled``
   is). When the rules are unsure and an LLM is configured
   (``retrieval.intent_analysis.enable_llm``), the LLM is asked *beside* the stages: its answer
   is used when it arrives before they end and clears ``llm_confidence_threshold``, and is
   cached for the next time; a search never waits for it.
2. **Progressive stages with deadlines** (``retrieval.progressive_search``), each run in a
   worker thread; a stage that misses its deadline is skipped (its late result is dropped),
   never waited for:

   - *ccb-fast* (in memory): note titles, aliases, memory names and descriptions, tags — the
     query's words and whole names; plus, for a time expression, the notes dated in that
     range. When the query *is* one note's name, title or alias, that note leads the hits,
     and the search stops there when one hit is asked for (``-n 1``; ``-n 10`` goes on for
     the notes about it, unless the names found a whole ranking already).
   - *magma-extend*: LanceDB vector and full-text search, plus the memories of the types the
     intent targets and the L2 rules, ranked by cosine over an in-memory matrix of memory
     embeddings; for a question that names several events or things apart ("which came
     first, the A or the B?", :func:`magma.question_shape.event_phrases`), the notes nearest
     each part, fused by reciprocal rank into one list (``phrases``). It stops the search
     when both retrievers put the same note first with a cosine of at least
     :data:`CONFIDENT_COSINE` and the stages found a whole ranking (or the one hit asked
     for).
   - *full-fusion*: the graph step (``retrieval.graph_step``, :mod:`daemon.graph_stage`):
     by default a personalized PageRank walk from the best notes so far and the notes
     their matched passages link to, over links either way, mentions and shared subjects,
     which lifts the best notes and the note nearest them in the fusion; or the notes
     linked with the best notes (``one_hop``); or nothing (``off``). A query that names
     only a time has no passage to walk on from: the walk does not run for it.

   One exception to skipping: a stage that misses its deadline while the stages before it
   found fewer notes than asked for may finish within the search's whole budget (the sum of
   the deadlines, 1.2 s by default): on a busy machine a late answer beats a short one.

3. **Fusion** (:mod:`daemon.rerank`, always, in memory): weighted reciprocal rank fusion of
   every list (:data:`LIST_WEIGHTS`), the Generative Agents score (relevance, recency by the
   later of the note's date and its last recall, importance from :mod:`magma.layers`), a
   bonus for notes inside the query's time range; the hits in score order with copies
   dropped, and never without a note plain hybrid search ranks in its top five.
   Archived, superseded and expired memories and the dream diary are left out unless the
   caller asks for them (``include_hidden``) or for a past day (``as_of``: what was current
   then).

The first :data:`RANK_DEPTH` hits never depend on how many are asked for: the stages and the
fusion always work that deep, and a longer list goes on with a deeper ranking after them.

The catalogue, the memory matrix and the link graph are read from the store once and kept
until the store's table versions change.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from functools import partial
from itertools import chain, compress, repeat
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from ccb.model import DIARY_FILE
from ccb.names import nfc_key
from ccb.owner import Owner
from ccb.templates import template_locations
from config.errors import DreamdError
from config.settings import Settings, Stage, intent_cache_enabled, user_zone
from consistency.lifecycle import (
    LifecyclePolicy,
    MemoryState,
    is_current,
)
from daemon.graph_stage import (
    GRAPH_SEEDS,
    PAGERANK_SEEDS,
    GraphHit,
    graph_of,
    linking_seeds,
    neighbours_of,
    one_hop,
    pagerank_walk,
    restart_weights,
    seed_passages,
)
from daemon.llm import ChatClient
from daemon.pool_call import PoolCall
from daemon.rerank import LIST_WEIGHTS, Reranker, is_large
from daemon.verifier import FusionVerifier, in_background
from magma.catalogue import (
    STOPWORDS,
    CatalogueEntry,
    Snapshot,
    ann_rows,
    chunks_at_rows,
    follow_snapshot,
    living_scores,
    norm,
    read_snapshot,
    tokens,
)
from magma.embedder import Embedder
from magma.fusion import Weights, weighted_rrf
from magma.gc_pause import trim_heap
from magma.graph_step import NoteGraph
from magma.intent import (
    NO_INTENT,
    Intent,
    IntentCache,
    analyze_intent,
    llm_messages,
    parse_llm_intent,
)
from magma.ivf_keeper import IvfKeeper
from magma.layers import L2_RULES
from magma.note_bm25 import BM25_WAIT_S, NoteBm25, NoteBm25Builder, NoteSpec
from magma.question_shape import event_phrases
from magma.recalls import RecallStats
from magma.search import CANDIDATE_FACTOR, SearchHit, collapse_to_notes
from magma.store import INDEX_FILE_NAMES, ChunkCandidate, MagmaStore, search_filter
from magma.text import cjk_phrases, has_own_words, holds_phrases
from magma.vector_index import VectorLimits
from magma.vector_ivf import IVF_SHARE, nearest_rows, scores_many

__all__ = [
    "CONFIDENT_COSINE",
    "LIST_WEIGHTS",
    "NAMED",
    "RANK_DEPTH",
    "VECTOR_NOISE_COSINE",
    "CatalogueEntry",
    "Retriever",
    "SearchResult",
    "SearchTrace",
    "StageTrace",
]

log = structlog.get_logger("dreamd.retrieval")

#: Cosine at which the two retrievers agreeing on the first note ends the search after
#: magma-extend (our choice: the multilingual USE model puts paraphrases at 0.6 and above).
CONFIDENT_COSINE = 0.6
#: Least cosine for an L2 rule or a routed memory to join the candidates by meaning alone
#: (our choice: unrelated texts sit below 0.2 with the default model, loosely related ones
#: from about 0.3).
RULE_MIN_COSINE = 0.3
ROUTED_MIN_COSINE = 0.2
#: Best cosine under which the vector list found nothing: when the full text found the
#: query's words, the vector list is not fused (our choice, from the same measurement as
#: :data:`RULE_MIN_COSINE`: unrelated texts sit below 0.2 with the default model). Measured
#: on the Chinese help vault (``bench/zh_questions.py``, 18 questions): "提交信息" (commit
#: message) has no match by meaning (best cosine 0.19); the vector's noise, fused, put the
#: one note that holds the words tenth; without it (and without its cosines in relevance,
#: :mod:`daemon.rerank`) first: dreamd hit@1 / hit@5 / MRR@10 0.833 / 0.944 / 0.894 ->
#: 0.889 / 1.000 / 0.944 (plain hybrid 0.889 / 0.944 / 0.917).
VECTOR_NOISE_COSINE = 0.2
#: Rows a filtered search asks the store's vector index for, per row it ranks, when the
#: store applies the filter (LanceDB's prefilter): 2, so that the rows the store cannot
#: tell apart (layers, hidden memories, the dream diary) may be dropped after (our choice).
FILTER_MARGIN = 2
#: Most times more rows a filtered search asks the index for when the store cannot apply
#: its filter (layers only): as many more as the filter's share of the rows is small, up to
#: 8 (our choice: a filter allowing fewer rows than ``retrieval.filtered_scan_rows`` scores
#: its rows itself; past 8× the index's search costs more than that scan).
FILTER_OVERSAMPLE = 8
#: How long a search that has found nothing when its budget (the sum of its stages'
#: deadlines) is spent waits for its late stage, in budgets: 2.5, 3 s with the default
#: stages, within the 5 s a hook's request is given (:data:`daemon.client.HOOK_TIMEOUT_S`).
#: An empty answer tells an assistant there is nothing to know; on the 100,000-note bench
#: index with the real model at load ~7, 28 of 100 questions came back empty at the budget
#: (``bench/scale_bench.py --rows search``). Our choice, bounded by the hook's timeout.
EMPTY_WAIT_FACTOR = 2.5
#: Longest query searched, in characters (our choice: a question is far shorter; a pasted
#: page would take seconds to embed: 0.3 s per 10,000 characters here).
MAX_QUERY_CHARS = 2000
#: Chunks a note needs to be in the note-level BM25 list (our choice, measured: see the
#: list's weight in :data:`daemon.rerank.LIST_WEIGHTS`).
NOTE_BM25_MIN_CHUNKS = 2
#: In a vault with the note-level BM25 list (:func:`daemon.rerank.is_large`), each part of a
#: question that names events apart (the parts list, :func:`_by_phrases`) is also ranked by
#: its words over whole notes (1) or by meaning only (0). Among hundreds of sessions on like
#: topics a short part ("the pride parade") is near many notes by meaning, and its words
#: find the one that names it. Measured on the pooled LongMemEval oracle (470 questions, 940
#: sessions; ``bench/fusion_ablation.py --set oracle``, searches now the same from one run
#: to the next): recall@5 / @10 / all@10 0.726 / 0.809 / 0.717 at 0, 0.730 / 0.811 / 0.719
#: at 1 (knowledge-update @5 0.861 -> 0.868, multi-session all@10 0.537 -> 0.545; plain
#: hybrid 0.652 / 0.761 / 0.647, BM25 0.656 / 0.748 / 0.660). A LongMemEval_S vault of ~50
#: sessions and the layer probes are small vaults: unchanged.
PHRASE_WORDS = 1
#: Stages of each engine (``retrieval.default_strategy`` turns the other engine's off).
CCB_STAGES = frozenset({"ccb-fast"})
MAGMA_STAGES = frozenset({"magma-extend", "full-fusion"})
#: How long the LLM's thread waits for the query's embedding to cache its answer with it, in
#: seconds (our choice: a query embeds in milliseconds; a stuck model must not hold it).
EMBED_WAIT_S = 5.0
#: Recall statistics are re-read at most this often (seconds); the pipeline's own recalls
#: are added as they happen.
RECALL_REFRESH_S = 60.0
#: Notes of one level of ccb-fast's word count sorted whole, beyond four times those asked
#: for (:func:`_path_order`; our choice: a sort of a few dozen paths costs microseconds).
SORTED_WHOLE = 64
#: Folders whose notes a snapshot keeps listed (:func:`folder_of`; our choice: a user
#: searches a few folders).
FOLDERS_KEPT = 16
#: Why a note the query names exactly was found (``--explain``, a hit's ``why``).
NAMED = "the note of that name"
#: A word no note holds.
_NO_PATHS: frozenset[str] = frozenset()
#: Hits ranked the same whatever the number asked for: the stages and the fusion always
#: work at least this deep, so ``-n 1`` is the first hit of ``-n 10``, and ``-n 50`` starts
#: with those ten (our choice: the CLI's and the benchmarks' default of 10 hits; a deeper
#: list costs a second pass of the stages). Before, the depth followed ``limit``: "提交信息"
#: on a vault of Chinese daily notes ranked another fifth hit at ``-n 5`` than at ``-n 10``.
RANK_DEPTH = 10


@dataclass(frozen=True, slots=True)
class _Query:
    """One search's inputs to its stages, whatever depth they are run at."""

    snap: Snapshot
    text: str
    keep: Callable[[str], bool]
    memory_types: Collection[str] | None
    path_prefix: str | None
    owner: Owner | None
    layered: bool
    embedding: PoolCall[np.ndarray] | None
    started: float  # time.perf_counter() when the search began

@dataclass(frozen=True, slots=True)
class StageTrace:
    """One stage of one search: ``status`` is ``ran``, ``ran late: too little found
    before it``, ``skipped: deadline``, ``skipped: error`` (logged),
    ``skipped: confident`` (an earlier stage answered), ``skipped: no query vector``,
    ``off`` or ``off: retrieval.graph_step`` (full-fusion with the graph step off);
    ``elapsed_ms`` wall time until it answered or was given up; ``found`` notes it proposed."""

    name: str
    status: str
    elapsed_ms: float
    found: int = 0


@dataclass(frozen=True, slots=True)
class SearchTrace:
    """How one search went, for ``dreamd search --explain``, status, metrics and the
    benchmarks. ``intent_cache``: ``hit``, ``semantic-hit``, ``miss`` or ``off``;
    ``verifier_dropped``: hits the FusionVerifier judged irrelevant (their paths in
    ``verifier_paths``); ``strategy``: ``retrieval.default_strategy``; ``intent_llm``: what
    the intent LLM did (``off``, ``asked: …``, ``answered in time``, failures). The verifier, when
    configured, is the last entry of ``stages`` (``verifier``). ``transcripts``: how the
    statements of assistant sessions listed after the hits were found
    (:mod:`daemon.transcript_hits`; ``off`` when the search did not ask for them)."""

    intent: Intent
    stages: tuple[StageTrace, ...]
    total_ms: float
    candidates: int
    duplicates_dropped: int
    intent_cache: str = "off"
    verifier_dropped: int = 0
    verifier_paths: tuple[str, ...] = ()
    strategy: str = "both-priority-ccb"
    intent_llm: str = "off"
    transcripts: str = "off"


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits (best first) and how they were found."""

    hits: list[SearchHit]
    trace: SearchTrace


@dataclass(slots=True)
class _Found:
    lists: dict[str, list[str]] = field(default_factory=dict)
    chunks: dict[str, ChunkCandidate] = field(default_factory=dict)
    why: dict[str, list[str]] = field(default_factory=dict)
    cosine: dict[str, float] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)  # best chunk row, when no text yet
    texts: set[str] = field(default_factory=set)  # paths whose row's chunk text is read
    kept: dict[str, str] = field(default_factory=dict)  # put back, and why ("#8 by meaning")
    lift: dict[str, float] = field(default_factory=dict)  # added to the fused rank score
    hollow: set[str] = field(default_factory=set)  # led the vector by a section without words
    confident: bool = False
    named: str | None = None  # the one note the query names exactly (it leads the hits)
    vector: np.ndarray | None = None


def _allowed(
    entry: CatalogueEntry, types: set[str] | None, path_prefix: str | None,
    owner: Owner | None, include_hidden: bool, day: date, past: bool,
) -> bool:
    """May ``entry`` be shown for a search: its type, folder, owner, and whether it is
    current on ``day`` (``include_hidden``: archived and superseded memories too). The dream
    diary (``DREAMS.md``) never is: what a dream did is not read back as a memory."""
    if types is not None and entry.memory_type not in types:
        return False
    if path_prefix and not entry.path.startswith(path_prefix):
        return False
    base = entry.path.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    if base == DIARY_FILE:
        return False
    if owner is not None:
        if base in INDEX_FILE_NAMES:
            return False
        if entry.memory_type is not None and not owner.sees(entry.owner):
            return False
    if include_hidden:
        return True
    return entry.memory_type is None or is_current(
        MemoryState.of(entry.properties, past=past), day, past=past)


class Retriever:
    """The pipeline over one store (module docstring). Thread use: one search at a time
    (the App is not thread-safe); the stages' own threads only read. ``kept_graph``: the
    graph step's view of the vault graph the writer keeps in step
    (:meth:`magma.graph_keeper.GraphKeeper.step_graph`); without one, or while it holds
    none, the graph step reads the graph of the index (:func:`daemon.graph_stage.graph_of`)."""

    def __init__(
        self, *, store: MagmaStore, embedder: Embedder, settings: Settings,
        recall_stats: Callable[[], Mapping[str, RecallStats]],
        chat: ChatClient | None = None, verifier: FusionVerifier | None = None,
        clock: Callable[[], float] = time.monotonic,
        kept_graph: Callable[[], NoteGraph | None] | None = None,
        vector_folder: Path | None = None,
    ) -> None:
        self._store = store
        self._vector_folder = vector_folder
        self._kept_graph = kept_graph
        self._embedder = embedder
        self._settings = settings
        self._zone = user_zone(settings)
        self._recall_source = recall_stats
        self._chat = chat
        self._verifier = verifier
        self._clock = clock
        cache = settings.cache
        self._intents = IntentCache(
            ttl_s=cache.ttl_hours * 3600, max_size=cache.max_size,
            semantic_threshold=cache.semantic_threshold, clock=clock,
        ) if intent_cache_enabled(settings) else None
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dreamd-search")
        # llm.intent.concurrency calls in flight at most (0: no limit); a query whose
        # question would exceed it goes on with the rules alone
        self._llm_limit = settings.llm.intent.concurrency
        self._llm_calls: list[Future[Intent | None]] = []
        self._llm_error: str | None = None  # the last question's failure, for --explain
        self._snapshot: Snapshot | None = None
        self._snapshot_lock = threading.Lock()
        self._ivf = IvfKeeper(vector_folder, store.model_id)  # its training, off the path
        self._bm25 = NoteBm25Builder(store.chunk_bodies, store.note_index, store.versions)
        self._recalls: dict[str, RecallStats] = {}
        self._recalls_at: float | None = None
        self._warm = False
        self.searched_at: float | None = None  # the last answer's clock (runner.trim_now)
        weights = settings.retrieval.weights
        self._reranker = Reranker(
            store=store, settings=settings, weights=Weights(
                relevance=weights.relevance, recency=weights.recency,
                importance=weights.importance),
            policy=LifecyclePolicy(decay_factor=settings.lifecycle.decay_factor,
                                   decay_period_days=settings.lifecycle.decay_period_days),
            recall_stats=self._recall_stats)

    # ------------------------------------------------------------------ public

    @property
    def reranker(self) -> Reranker:
        """The fusion and final pick of every search (:attr:`Reranker.weights`: the α)."""
        return self._reranker

    @property
    def intent_cache(self) -> IntentCache | None:
        """The intent cache (``None`` when ``cache.enabled`` or
        ``retrieval.intent_analysis.cache_enabled`` is off)."""
        return self._intents

    def close(self) -> None:
        """Stop the stage threads (a stage still running finishes in the background)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._bm25.close()
        if self._verifier is not None:
            self._verifier.close()

    def warm(self, bm25_wait_s: float = BM25_WAIT_S) -> None:
        """Load what the first search would otherwise load inside its deadlines: the
        catalogue, the memory matrix, the link graph, the embedding model and the full-text
        index; wait up to ``bm25_wait_s`` seconds for the note-level BM25 index (it goes on
        being built in the background). The first :meth:`search` calls it; deadlines time
        searching, not loading. Raises :class:`DreamdError` subclasses from the store or
        the model."""
        snap = self.snapshot()
        if self._settings.retrieval.graph_step == "pagerank":
            graph_of(self._store, snap, self._kept_graph)
        else:
            neighbours_of(self._store, snap)
        _note_index(self._bm25, snap, bm25_wait_s, fresh=True)
        self._embedder.embed(["warm up"])
        self._store.fulltext_candidates("warm up", limit=1)
        self._recall_stats()
        trim_heap()  # what the loads let go: 100,000 notes, RSS once warm 2,030 -> 1,632 MB
        self._warm = True

    def snapshot(self) -> Snapshot:
        """The catalogue and memory matrix for the store's current table versions: followed
        from the last one over this process's own batches (a batch of a few notes costs a
        read of those notes), else read whole (:func:`_snapshot_of`)."""
        versions = self._store.versions()
        with self._snapshot_lock:
            snap = self._snapshot
            if snap is None or snap.versions != versions:
                snap = _snapshot_of(self._store, snap, versions, self._zone, self._settings,
                                    self._vector_folder)
            snap = self._ivf.adopt(snap)  # the IVF once trained (the store's index till then)
            self._snapshot = snap
            return snap

    def wait_for_ivf(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for the in-memory IVF's training or row
        assignment under way (:class:`magma.ivf_keeper.IvfKeeper`) and take it into the
        snapshot -> whether the snapshot searches it now, or needs none (benches and tests:
        a search never waits; the store's index answers meanwhile)."""
        if self.snapshot().ivf_wanted is None:
            return True
        self._ivf.wait(timeout_s)
        return self.snapshot().ivf_wanted is None

    def forget_snapshot(self) -> None:
        """Let go of the snapshot (a forget: its vector rows hold the forgotten notes', and a
        file of them, :mod:`magma.vector_file`, goes with it) and of the IVF's centroids, means
        of those rows (:meth:`magma.ivf_keeper.IvfKeeper.forget`); the next search reads it."""
        with self._snapshot_lock:
            self._snapshot = None
            self._ivf.forget()

    def entries(self) -> Mapping[str, CatalogueEntry]:
        """Every indexed note by path (the current snapshot)."""
        return self.snapshot().entries

    def last_entries(self) -> Mapping[str, CatalogueEntry]:
        """Every indexed note by path as the last search read them (no check of the store's
        versions: what that search's hits came from); empty before the first search."""
        snap = self._snapshot
        return snap.entries if snap is not None else {}

    def note_recalls(self, memory_ids: Collection[str], at: datetime) -> None:
        """Count recalls the caller just recorded in the store, without re-reading it."""
        for memory_id in memory_ids:
            old = self._recalls.get(memory_id, RecallStats())
            self._recalls[memory_id] = RecallStats(
                count=old.count + 1, distinct_queries=old.distinct_queries,
                last=at if old.last is None or at > old.last else old.last, days=old.days)

    def search(
        self, query: str, *, limit: int = 10, memory_types: Collection[str] | None = None,
        path_prefix: str | None = None, owner: Owner | None = None,
        include_hidden: bool = False, as_of: date | None = None, now: datetime | None = None,
        layers: Collection[int] | None = None,
    ) -> SearchResult:
        """The pipeline -> at most ``limit`` hits, best first, with a trace; the first
        :data:`RANK_DEPTH` are the same whatever ``limit`` is.

        ``memory_types`` (an empty collection finds nothing), ``path_prefix`` and ``owner``
        filter as in :func:`magma.search.hybrid_search`; ``layers`` keeps notes of those
        layers (1–5, :mod:`magma.layers`). ``now`` (aware; default the clock)
        dates recency and time expressions; ``as_of`` shows what was current on that day.
        Raises :class:`config.errors.StoreError` or :class:`config.errors.EmbeddingError`
        when the store or the model fails outside a stage's deadline.
        """
        # Lone surrogates cannot be encoded for the model; a pasted page is cut to its start.
        text = query.encode("utf-8", "replace").decode("utf-8").strip()[:MAX_QUERY_CHARS]
        moment = (now or datetime.now(self._zone)).astimezone(self._zone)
        today = as_of or moment.date()  # the user's day (time.zone)
        if not text or limit < 1 or (memory_types is not None and not memory_types) \
                or (layers is not None and not layers):
            trace = SearchTrace(NO_INTENT, (), 0.0, 0, 0)
            return SearchResult([], trace)
        if not self._warm:
            self.warm()
        started = time.perf_counter()
        snap = self.snapshot()
        path_prefix = folder_of(snap, path_prefix)[0] if path_prefix else path_prefix
        strategy = self._settings.retrieval.default_strategy
        cfg = self._settings.retrieval.progressive_search
        magma = next((s for s in cfg.stages if s.name == "magma-extend"), None)
        # The query's embedding, started at once in a worker: magma-extend searches with it
        # (within its own deadline), and the intent cache matches queries by meaning with it.
        embedding: PoolCall[np.ndarray] | None = None
        if strategy != "ccb-only":
            embedding = PoolCall(self._pool, partial(self._embed, text))
        wait_s = magma.timeout_ms / 1000 if magma is not None and cfg.enabled else None
        intent, llm_future, cached, cache_it = self._intent(text, moment.date(), embedding,
                                                            wait_s)
        types = set(memory_types) if memory_types is not None else None

        keep = partial(self._keep, snap, layers, types, path_prefix, owner, include_hidden,
                       today, as_of is not None)
        asked = _Query(snap=snap, text=text, keep=keep, memory_types=memory_types,
                       path_prefix=path_prefix, owner=owner, layered=layers is not None,
                       embedding=embedding, started=started)
        # The first RANK_DEPTH hits are ranked alike whatever ``limit`` asks: every depth
        # the stages and the fusion use is at least RANK_DEPTH, and a longer list is that
        # ranking followed by the rest of a ranking as deep as asked.
        found, traces = self._gather(asked, intent, RANK_DEPTH, limit)
        if llm_future is not None and llm_future.done() and llm_future.exception() is None:
            better = llm_future.result()
            if better is not None:
                intent = better
        if self._intents is not None and cache_it:
            self._intents.put(text, moment.date(), intent, found.vector)
        hits, candidates, dropped = self._reranker.fuse(
            snap, text, intent, found, keep, RANK_DEPTH, moment, today, include_hidden,
            strategy)
        if limit > RANK_DEPTH:
            deeper, traces = self._gather(asked, intent, limit, limit)
            more, candidates, dropped = self._reranker.fuse(
                snap, text, intent, deeper, keep, limit, moment, today, include_hidden,
                strategy)
            shown = {hit.path for hit in hits}
            hits += [hit for hit in more if hit.path not in shown]
        hits = hits[:limit]
        judged: tuple[str, ...] = ()
        if self._verifier is not None and hits:
            verdicts = self._verifier.verify(text, hits)
            hits, judged = verdicts.kept, verdicts.dropped
            traces.append(StageTrace("verifier", verdicts.status(), verdicts.elapsed_ms))
        trace = SearchTrace(intent, tuple(traces), (time.perf_counter() - started) * 1000,
                            candidates, dropped, intent_cache=cached,
                            verifier_dropped=len(judged), verifier_paths=judged,
                            strategy=strategy, intent_llm=self._llm_state(llm_future))
        log.debug("search.done", stages=[f"{t.name}:{t.status}" for t in traces],
                  total_ms=round(trace.total_ms, 1), hits=len(hits))
        self.searched_at = self._clock()
        return SearchResult(hits, trace)

    def _gather(self, query: _Query, intent: Intent, depth: int, asked_for: int
                ) -> tuple[_Found, list[StageTrace]]:
        """Run the stages for a ranking ``depth`` notes deep -> what they found and their
        traces (each stage asked for ``max(its own limit, depth)`` notes). A stage past its
        deadline may still answer when the stages before it found fewer than ``asked_for``
        notes (the caller's ``limit``: the wait is for a short answer, as the caller
        measures it)."""
        found = _Found()

        def stage_fn(name: str, want: int) -> Callable[[], _Found]:
            return self._stage_fn(name, query.snap, query.text, intent, want, found,
                                  query.memory_types, query.path_prefix, query.owner,
                                  query.keep, query.layered, query.embedding)

        traces = _run_stages(self._settings, self._pool, stage_fn, found, query, depth,
                             asked_for)
        return found, traces

    # ------------------------------------------------------------------ intent

    def _embed(self, text: str) -> np.ndarray:
        return np.asarray(self._embedder.embed([text])[0], dtype=np.float32)

    def _intent(
        self, text: str, today: date, embedding: PoolCall[np.ndarray] | None,
        wait_s: float | None,
    ) -> tuple[Intent, Future[Intent | None] | None, str, bool]:
        """The query's intent, a pending LLM question (or ``None``), how the intent cache
        answered (``hit``, ``semantic-hit``, ``miss``, ``off``) and whether the search should
        cache the intent (not when the LLM answers it later, or could not be asked). The
        cache is searched by meaning only when the rules are unsure (a sure rule answer costs
        microseconds); the embedding is waited for at most ``wait_s`` (magma-extend's
        deadline)."""
        cfg = self._settings.retrieval.intent_analysis
        rules = analyze_intent(text, today) if cfg.enable_rules else NO_INTENT
        sure = rules.confidence >= cfg.rule_confidence_threshold
        cached_as = "off"
        if self._intents is not None:

            def vector() -> np.ndarray | None:
                if sure or embedding is None:
                    return None
                try:
                    return embedding.result(timeout=wait_s)
                except (FutureTimeout, DreamdError):
                    return None

            # A query close in meaning answers only with the same days: "what did I do
            # yesterday" and "... last week" embed close together.
            cached, cached_as = self._intents.lookup(
                text, today, vector, accept=lambda i: i.time_range == rules.time_range)
            if cached is not None:
                return cached, None, cached_as, False
        intent = rules if sure else NO_INTENT
        if cfg.enable_llm and self._chat is not None and not sure:
            return intent, self._ask(text, today, embedding), cached_as, False
        return intent, None, cached_as, cached_as == "miss"

    def _llm_state(self, asked: Future[Intent | None] | None) -> str:
        """What the intent LLM did for this search, for ``--explain``."""
        cfg = self._settings.retrieval.intent_analysis
        if not cfg.enable_llm:
            return "off"
        if self._chat is None:
            return "off: llm.intent is not enabled"
        last = f"; the last question failed: {self._llm_error}" if self._llm_error else ""
        if asked is None:
            return f"not asked (the rules or the cache answered, or one is in flight){last}"
        if asked.done() and asked.exception() is None:
            answer = asked.result()
            return "answered in time" if answer is not None else \
                f"answered, unsure or unusable: rules used{last}"
        return f"asked: the answer is cached for the next search{last}"

    def llm_pending(self) -> int:
        """Intent questions to the LLM still in flight."""
        with self._snapshot_lock:
            self._llm_calls = [f for f in self._llm_calls if not f.done()]
            return len(self._llm_calls)

    def _ask(self, text: str, today: date, embedding: PoolCall[np.ndarray] | None
             ) -> Future[Intent | None] | None:
        """Ask the LLM beside the stages, within ``llm.intent.concurrency``; ``None`` when
        the limit is reached (the search goes on with the rules; the question is not
        cached, so a later search may ask it)."""
        pending = self.llm_pending()
        if self._llm_limit and pending >= self._llm_limit:
            return None
        # a daemon thread: a slow endpoint never keeps a finished search's process alive
        future = in_background(functools.partial(self._ask_llm, text, today, embedding))
        with self._snapshot_lock:
            self._llm_calls.append(future)
        return future

    def _ask_llm(self, text: str, today: date, embedding: PoolCall[np.ndarray] | None
                 ) -> Intent | None:
        assert self._chat is not None
        threshold = self._settings.retrieval.intent_analysis.llm_confidence_threshold
        try:
            reply = self._chat.chat(llm_messages(text, today))
            intent = parse_llm_intent(reply, today)
        except Exception as error:
            # whatever it does, search goes on with the rules; nothing is cached, so a later
            # search asks again (a timeout or a 429 passes)
            log.info("search.llm_intent_failed", error=f"{type(error).__name__}: {error}")
            self._llm_error = str(error)
            return None
        self._llm_error = None
        if intent is None or intent.confidence < threshold:
            intent = None
        if self._intents is not None:
            vector = None
            if embedding is not None:  # else cached for this query's words alone
                with contextlib.suppress(FutureTimeout, DreamdError):
                    vector = embedding.result(timeout=EMBED_WAIT_S)
            self._intents.put(text, today, intent or NO_INTENT, vector)
        return intent

    # ------------------------------------------------------------------ stages

    def _stage_fn(
        self, name: str, snap: Snapshot, text: str, intent: Intent, want: int, found: _Found,
        memory_types: Collection[str] | None, path_prefix: str | None, owner: Owner | None,
        keep: Callable[[str], bool], layered: bool = False,
        embedding: PoolCall[np.ndarray] | None = None,
    ) -> Callable[[], _Found]:
        if name == "ccb-fast":
            return lambda: _ccb_fast(snap, text, intent, want, keep, path_prefix)
        if name == "magma-extend":
            return lambda: self._magma_extend(snap, text, intent, want, memory_types,
                                              path_prefix, owner, keep, layered, embedding)
        fused = weighted_rrf(found.lists, LIST_WEIGHTS)
        best = [p for p in sorted(fused, key=lambda p: (-fused[p], p)) if keep(p)]
        vector = found.vector
        known = {p for ranked in found.lists.values() for p in ranked}
        if self._settings.retrieval.graph_step == "pagerank":
            if intent.time_only:  # no words matched: no passage to walk on from
                return _Found
            seeds = {p: fused[p] for p in best[:PAGERANK_SEEDS]}
            rows, chunks = dict(found.rows), dict(found.chunks)

            def walk() -> _Found:
                graph = graph_of(self._store, snap, self._kept_graph)
                passages = seed_passages(self._store, snap, list(seeds), rows, chunks)
                restart = restart_weights(snap, seeds, passages)
                return _graph_part(pagerank_walk(snap, graph, seeds, restart, vector, keep,
                                                 fused, linking_seeds(snap, passages)),
                                   "graph-walk")

            return walk
        return lambda: _graph_part(one_hop(
            snap, neighbours_of(self._store, snap), best[:GRAPH_SEEDS], vector,
            lambda p: p not in known and keep(p)))

    def _magma_extend(
        self, snap: Snapshot, text: str, intent: Intent, want: int,
        memory_types: Collection[str] | None, path_prefix: str | None, owner: Owner | None,
        keep: Callable[[str], bool], layered: bool = False,
        embedding: PoolCall[np.ndarray] | None = None,
    ) -> _Found:
        part = _Found()
        n = want * CANDIDATE_FACTOR
        # handed to the pool, or run here when no worker is free (:mod:`daemon.pool_call`)
        words_future = PoolCall(self._pool, partial(
            self._store.fulltext_candidates, text, limit=n, memory_types=memory_types,
            path_prefix=path_prefix, owner=owner))  # (vectors: the in-memory rows')
        filtered = (memory_types is not None or bool(path_prefix) or owner is not None
                    or layered)
        where = search_filter(memory_types, path_prefix, owner)
        phrases = event_phrases(text) if LIST_WEIGHTS.get("phrases", 0.0) > 0 else []
        # the parts are embedded and searched beside the full text and the whole question;
        # beside the in-memory IVF, searched with the question in one pass
        batched = snap.partitions is not None
        phrases_future = PoolCall(self._pool, partial(
            _embedded if batched else _by_phrases, self._embedder, snap, phrases, n, keep,
            filtered, where, path_prefix)) if phrases else None
        vector = embedding.result() if embedding is not None else self._embed(text)
        part.vector = vector
        nearest, by_phrases = _nearest_parts(snap, vector, phrases, phrases_future, n, keep,
                                             filtered, where, path_prefix)
        by_vector = _vector_part(self._store, snap, vector, nearest, part)
        by_words = collapse_to_notes(_phrases_first(words_future.result(), text))
        by_notes = _note_index(self._bm25, snap).top(
            text, n, notes_kept := _of_chunks(snap, keep), path_prefix)
        if by_vector and (by_vector[0][2] >= VECTOR_NOISE_COSINE or not by_words):
            part.lists["vector"] = [path for path, _, _ in by_vector]
        part.lists["full-text"] = [c.path for c in by_words]
        if by_notes:
            part.lists["note-bm25"] = [path for path, _ in by_notes]
        if by_phrases is not None:
            index = _note_index(self._bm25, snap) if by_notes and PHRASE_WORDS else None
            _add_phrases(part, _fuse_phrases(by_phrases(), index, n, notes_kept,
                                             path_prefix))
        for rank, (path, score) in enumerate(by_notes, start=1):
            part.why.setdefault(path, []).append(
                f"#{rank} by your words across the whole note ({score:.1f})")
        for rank, cand in enumerate(by_words, start=1):
            part.chunks.setdefault(cand.path, cand)
            part.why.setdefault(cand.path, []).append(f"#{rank} by your words")
        _add_memories(part, snap, vector, intent, want, keep)
        if by_vector and by_words and by_vector[0][0] == by_words[0].path \
                and by_vector[0][2] >= CONFIDENT_COSINE:
            part.confident = True
        return part

    # ------------------------------------------------------------------ helpers

    def _keep(self, snap: Snapshot, layers: Collection[int] | None,
              types: set[str] | None, path_prefix: str | None, owner: Owner | None,
              include_hidden: bool, today: date, past: bool, path: str) -> bool:
        """May the note at ``path`` be shown for this search (its layer, type, folder,
        owner and visibility on ``today``)?"""
        entry = snap.entries.get(path)
        if entry is None or (layers is not None and entry.layer not in layers):
            return False
        return _allowed(entry, types, path_prefix, owner, include_hidden, today, past)

    def _recall_stats(self) -> Mapping[str, RecallStats]:
        now = self._clock()
        if self._recalls_at is None or now - self._recalls_at > RECALL_REFRESH_S:
            try:
                self._recalls = dict(self._recall_source())
            except DreamdError as error:
                log.warning("search.recalls_unread", error=str(error))
            self._recalls_at = now
        return self._recalls



def _add_memories(part: _Found, snap: Snapshot, vector: np.ndarray, intent: Intent, want: int,
                  keep: Callable[[str], bool]) -> None:
    """Memories by meaning into ``part``, from the in-memory matrix: those the intent
    targets (list ``routed``), and the L2 rules (``rules``: a rule must surface even for a
    loosely related question)."""
    if not snap.memory_paths:
        return
    sims = snap.memory_matrix @ np.asarray(vector, dtype=np.float32)
    best: dict[str, float] = {}
    for path, sim in zip(snap.memory_paths, sims.tolist(), strict=True):
        if sim > best.get(path, -1.0):
            best[path] = sim
    ranked = sorted(best, key=lambda p: -best[p])
    routed = [p for p in ranked if intent.types and best[p] >= ROUTED_MIN_COSINE
              and snap.entries[p].memory_type in intent.types and keep(p)][:want]
    rules = [p for p in ranked if best[p] >= RULE_MIN_COSINE
             and snap.entries[p].layer == L2_RULES and keep(p)][:want]
    for name, paths in (("routed", routed), ("rules", rules)):
        if paths:
            part.lists[name] = paths
            for p in paths:
                part.cosine.setdefault(p, best[p])
                label = "the kind of memory asked for" if name == "routed" \
                    else "a rule you set"
                part.why.setdefault(p, []).append(
                    f"{label}, near in meaning (similarity {best[p]:.2f})")


def _snapshot_of(store: MagmaStore, snap: Snapshot | None, versions: dict[str, int],
                 zone: tzinfo, settings: Settings, folder: Path | None) -> Snapshot:
    """The snapshot of ``store`` at ``versions``: ``snap`` followed over this process's own
    batches since (their paths re-read only), else read whole, with the vault's template
    settings read again; the int8 rows beside the store's IVF index kept in a file in
    ``folder`` (:mod:`magma.vector_file`; ``None``: in the heap). Raises
    :class:`StoreError`."""
    delta = None if snap is None else store.changes_since(snap.versions)
    vault = settings.vault
    limits = VectorLimits.of(settings.retrieval, folder)
    templates = template_locations(vault.path, vault.config_folder) \
        if vault.path is not None else frozenset()
    if snap is None or delta is None:
        return read_snapshot(store, versions, zone, limits=limits, templates=templates)
    return follow_snapshot(store, snap, delta, versions, zone, limits=limits,
                           templates=templates)


def stored_prefix(paths: Iterable[str], prefix: str | None) -> str | None:
    """``prefix`` (a folder, ``"Café/"``) as the indexed paths spell it: a vault synced from a
    Mac stores names decomposed (NFD), the user types them composed (NFC); the two compare
    equal in NFC (:func:`ccb.names.nfc_key`). ``prefix`` itself when a path starts with it or
    none matches in NFC either. One pass over ``paths`` (``str.startswith`` each), and one
    NFC form each only when no path starts with ``prefix`` as typed."""
    if not prefix:
        return prefix
    paths = list(paths)
    if any(map(str.startswith, paths, repeat(prefix))):  # in C: no Python frame a path
        return prefix
    wanted = nfc_key(prefix)
    for path in paths:
        if nfc_key(path).startswith(wanted):
            return next((path[:end] for end in range(len(path) + 1)
                         if nfc_key(path[:end]) == wanted), prefix)
    return prefix


def folder_of(snap: Snapshot, prefix: str) -> tuple[str, list[str]]:
    """The folder ``prefix`` (as typed) as the paths of ``snap`` spell it
    (:func:`stored_prefix`) and the notes of ``snap.rows_by_path`` in it, in that order;
    kept on ``snap`` for the next search of that folder (:data:`FOLDERS_KEPT` at most): a
    search of a folder then asks ``keep`` of its notes only, not of 100,000 (~50 ms)."""
    found = snap.folders.get(prefix)
    if found is None:
        stored = stored_prefix(snap.entries, prefix) or prefix
        found = (stored, list(compress(snap.rows_by_path,
                                       map(str.startswith, snap.rows_by_path, repeat(stored)))))
        if len(snap.folders) >= FOLDERS_KEPT:
            snap.folders.clear()
        snap.folders[prefix] = found
    return found


def _nearest(snap: Snapshot, vector: np.ndarray, n: int, keep: Callable[[str], bool],
             filtered: bool, where: str = "", prefix: str | None = None
             ) -> list[tuple[str, int, float]]:
    """The ``n`` notes nearest to ``vector`` by their best chunk -> ``(path, row, cosine)``,
    best first (:func:`_ranked_rows`). With ``filtered`` (types, folder, owner or layers
    asked for; ``where``: the part of the filter the store can apply,
    :func:`magma.store.search_filter`) every allowed note is considered; else the best rows
    are taken first and hidden notes dropped after; ``prefix``: the folder ``keep`` allows,
    if it asks one (the notes outside it are never asked of ``keep``)."""
    if not snap.chunk_count:
        return []
    rows, sims = _ranked_rows(snap, vector, n, keep, filtered, where, prefix)
    return _notes_of(snap, rows, sims, n, keep, filtered)


def _notes_of(snap: Snapshot, rows: np.ndarray, sims: np.ndarray, n: int,
              keep: Callable[[str], bool], filtered: bool) -> list[tuple[str, int, float]]:
    """The first ``n`` notes of ranked ``rows`` (their cosines ``sims``) by their best row ->
    ``(path, row, cosine)``; unfiltered, the notes ``keep`` refuses dropped."""
    found: list[tuple[str, int, float]] = []
    seen: set[str] = set()
    for row, sim in zip(rows.tolist(), sims.tolist(), strict=True):
        path = snap.chunk_paths[row]
        if path in seen:
            continue
        seen.add(path)
        if filtered or keep(path):
            found.append((path, row, float(sim)))
            if len(found) >= n:
                break
    return found


def _evidence_first(store: MagmaStore, snap: Snapshot, vector: np.ndarray,
                    nearest: list[tuple[str, int, float]], part: _Found
                    ) -> list[tuple[str, int, float]]:
    """``nearest`` (:func:`_nearest`) with each note ranked by its best chunk that says
    something of its own (:func:`magma.text.has_own_words`), and the notes with none after
    all the others, in their order (their paths in ``part.hollow``). The chunks read are
    kept in ``part`` (a search shows them).

    A section that holds only its heading, an embed or list marks (a template's ``## Notes``
    and ``-``, a daily note's ``![[Daily.base]]``) is embedded as its title and heading
    path: close to any question that names "notes", and leading it over every note that
    answers. A memory, a note with a description and a note whose body is blank (embedded
    as its title and properties, :func:`magma.chunking.chunk_note`) keep their rank."""
    if not nearest:
        return nearest
    wanted = {snap.chunk_ids[row]: path for path, row, _ in nearest}
    for chunk in chunks_at_rows(store, snap, (row for _, row, _ in nearest)):
        part.chunks[wanted[chunk.chunk_id]] = chunk
        part.texts.add(wanted[chunk.chunk_id])

    def hollow(chunk: ChunkCandidate | None) -> bool:
        if chunk is None or not chunk.body.strip() or has_own_words(chunk.body):
            return False
        entry = snap.entries.get(chunk.path)
        return entry is None or (entry.memory_type is None and not entry.description
                                 and not entry.properties.get("description"))

    led = [path for path, _, _ in nearest if hollow(part.chunks.get(path))]
    if not led:
        return nearest
    # a note led by a wordless section is ranked by its other sections that say something
    better: dict[str, tuple[int, float]] = {}
    rows = {snap.chunk_ids[row]: row for path in led for row in snap.rows_by_path.get(path, ())}
    others = [c for c in store.chunks_of(led, with_vectors=False)
              if c.chunk_id in rows and not hollow(c)]
    if others:
        sims = snap.chunk_vectors.scores_at(
            np.asarray([rows[c.chunk_id] for c in others], dtype=np.int64),
            np.asarray(vector, dtype=np.float32))
        for chunk, sim in zip(others, sims.tolist(), strict=True):
            if sim > better.get(chunk.path, (0, -np.inf))[1]:
                better[chunk.path] = (rows[chunk.chunk_id], sim)
                part.chunks[chunk.path] = chunk
    kept = [(p, *better[p]) if p in better else (p, row, sim) for p, row, sim in nearest]
    part.hollow.update(p for p in led if p not in better)
    return sorted(kept, key=lambda hit: (hit[0] in part.hollow, -hit[2]))


def _vector_part(store: MagmaStore, snap: Snapshot, vector: np.ndarray,
                 nearest: list[tuple[str, int, float]], part: _Found
                 ) -> list[tuple[str, int, float]]:
    """``nearest`` by :func:`_evidence_first`, each note's row, cosine and rank kept in
    ``part``."""
    ranked = _evidence_first(store, snap, vector, nearest, part)
    for rank, (path, row, sim) in enumerate(ranked, start=1):
        part.rows[path] = row
        part.cosine[path] = sim
        wordless = ", a section without words" if path in part.hollow else ""
        part.why.setdefault(path, []).append(
            f"#{rank} by meaning (similarity {sim:.2f}{wordless})")
    return ranked


def _ranked_rows(snap: Snapshot, vector: np.ndarray, n: int, keep: Callable[[str], bool],
                 filtered: bool, where: str = "", prefix: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Chunk rows best first and their cosines with ``vector`` (``int64[k]``,
    ``float32[k]``): unfiltered, the ``max(8n, 64)`` best, from the store's vector index
    when the snapshot has one (:func:`magma.catalogue.ann_rows`, scored on its rows; a
    failing index is logged and every row scanned instead), else from a scan of every
    in-memory row (one matrix product, in blocks for compact rows); filtered, the allowed
    rows (:func:`_filtered_rows`). Equal cosines keep row order."""
    if snap.partitions is not None:
        return _ranked_many(snap, np.asarray(vector, dtype=np.float32)[None, :], n, keep,
                            filtered, prefix)[0]
    take = min(snap.chunk_count, max(n * 8, 64))
    if filtered:
        return _filtered_rows(snap, vector, n, take, keep, where, prefix)
    near = _ann_rows(snap, vector, take, "")
    if near is not None:
        return near
    sims = living_scores(snap, vector)  # a dead row never ranks
    top = np.sort(np.argpartition(-sims, take - 1)[:take])  # equal cosines in row order
    order = top[np.argsort(-sims[top], kind="stable")]
    return order, sims[order]


def _filtered_rows(snap: Snapshot, vector: np.ndarray, n: int, take: int,
                   keep: Callable[[str], bool], where: str, prefix: str | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The rows a filtered search ranks, best first, with their cosines. Without the store's
    vector index: every allowed row, from a scan of every in-memory row. With it: when the
    filter allows more rows than ``limits.filtered_scan_rows``, the index's best rows
    matching ``where`` (:data:`FILTER_MARGIN` × ``take`` of them; :data:`FILTER_OVERSAMPLE`
    times more at most when ``where`` is empty, as for the filter's share of the rows), the
    rows ``keep`` refuses dropped; else, or when those hold fewer than ``n`` notes, every
    allowed row scored on its in-memory row (no scan of the others). ``prefix``: the folder
    ``keep`` allows, if it asks one: the notes outside it are not asked of ``keep`` (100,000
    calls of it cost ~50 ms a filtered search)."""
    index, notes = _allowed_rows(snap, keep, prefix)
    if not len(index):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if snap.ann is None:
        sims = snap.chunk_vectors.scores(vector)[index]
    else:
        if len(index) > snap.limits.filtered_scan_rows:
            more = 1 if where else min(FILTER_OVERSAMPLE,
                                       -(-snap.chunk_count // len(index)))
            near = _ann_rows(snap, vector, take * FILTER_MARGIN * more, where)
            if near is not None:
                passed = np.asarray([keep(snap.chunk_paths[r]) for r in near[0].tolist()],
                                    dtype=bool)
                rows, sims = near[0][passed], near[1][passed]
                if len({snap.chunk_paths[r] for r in rows.tolist()}) >= min(n, notes):
                    return rows, sims
        sims = snap.chunk_vectors.scores_at(index, vector)
    order = np.argsort(-sims, kind="stable")
    return index[order], sims[order]


def _allowed_rows(snap: Snapshot, keep: Callable[[str], bool], prefix: str | None = None
                  ) -> tuple[np.ndarray, int]:
    """The rows of the notes ``keep`` allows (``int64[k]``, note by note) and how many notes
    they are; ``prefix``: the folder ``keep`` allows, if it asks one (the notes outside it
    are not asked of ``keep``)."""
    allowed: list[int] = []
    notes = 0
    for path in folder_of(snap, prefix)[1] if prefix else snap.rows_by_path:
        if keep(path):
            allowed.extend(snap.rows_by_path[path])
            notes += 1
    return np.asarray(allowed, dtype=np.int64), notes


def _ranked_many(snap: Snapshot, vectors: np.ndarray, n: int, keep: Callable[[str], bool],
                 filtered: bool, prefix: str | None = None
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_ranked_rows` of each of ``vectors`` (``float32[q, dims]``) through the IVF
    over the in-memory rows (``snap.partitions``, :func:`magma.vector_ivf.nearest_rows`),
    every vector in one pass: unfiltered, each vector's ``max(8n, 64)`` best rows of its
    :data:`magma.vector_ivf.IVF_SHARE` of the partitions; filtered, the allowed rows of
    those when the filter allows more than ``limits.filtered_scan_rows`` and they hold
    ``n`` notes (or every allowed note), else every allowed row scored."""
    assert snap.partitions is not None
    take = min(snap.chunk_count, max(n * 8, 64))
    if not filtered:
        return nearest_rows(snap.partitions, snap.chunk_vectors, vectors, take, IVF_SHARE)
    index, notes = _allowed_rows(snap, keep, prefix)
    if not len(index):
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        return [empty for _ in vectors]
    found: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(vectors)
    if len(index) > snap.limits.filtered_scan_rows:
        mask = np.zeros(len(snap.chunk_vectors), dtype=bool)
        mask[index] = True
        near = nearest_rows(snap.partitions, snap.chunk_vectors, vectors, take, IVF_SHARE,
                            allowed=mask)
        enough = min(n, notes)
        found = [(rows, sims) if len({snap.chunk_paths[r] for r in rows.tolist()}) >= enough
                 else None for rows, sims in near]
    lacking = [i for i, hit in enumerate(found) if hit is None]
    if lacking:
        scores = scores_many(snap.chunk_vectors, index, vectors[lacking])
        for i, column in zip(lacking, scores.T, strict=True):
            order = np.argsort(-column, kind="stable")
            found[i] = (index[order], column[order])
    return [hit for hit in found if hit is not None]


def _embedded(embedder: Embedder, _snap: Snapshot, phrases: Sequence[str], *_: object
              ) -> np.ndarray:
    """The vectors of ``phrases`` (``float32[k, dims]``; :func:`_by_phrases`'s arguments,
    only the embedder and the phrases used). Raises
    :class:`config.errors.EmbeddingError`."""
    return np.asarray(embedder.embed(list(phrases)), dtype=np.float32)


def _nearest_parts(snap: Snapshot, vector: np.ndarray, phrases: Sequence[str],
                   parts: PoolCall[Any] | None, n: int, keep: Callable[[str], bool],
                   filtered: bool, where: str = "", prefix: str | None = None
                   ) -> tuple[list[tuple[str, int, float]],
                              Callable[[], Mapping[str, list[str]]] | None]:
    """The notes nearest the question's ``vector`` (:func:`_nearest`) and what the parts of
    the question find, asked for when wanted (``parts``: the call searching them,
    :func:`_by_phrases`; ``None``: no parts). Beside the IVF over the in-memory rows
    ``parts`` embeds them only (:func:`_embedded`), and the question and its parts are
    searched in one pass (:func:`_ranked_many`)."""
    if parts is None or snap.partitions is None or not snap.chunk_count:
        return (_nearest(snap, vector, n, keep, filtered, where, prefix),
                parts.result if parts is not None else None)
    vectors = np.vstack([np.asarray(vector, dtype=np.float32)[None, :], parts.result()])
    found = [_notes_of(snap, rows, sims, n, keep, filtered)
             for rows, sims in _ranked_many(snap, vectors, n, keep, filtered, prefix)]
    by_phrase = {phrase: [path for path, _, _ in hits]
                 for phrase, hits in zip(phrases, found[1:], strict=True)}
    return found[0], lambda: by_phrase


def _ann_rows(snap: Snapshot, vector: np.ndarray, limit: int, where: str
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """The store's vector index's best ``limit`` rows matching ``where`` and their cosines
    on the snapshot's rows, best first, equal cosines in row order
    (:func:`magma.catalogue.ann_rows`); ``None`` without an index, or when it fails
    (logged)."""
    if snap.ann is None:
        return None
    try:
        return ann_rows(snap, vector, limit, where or None)
    except DreamdError as error:
        log.warning("search.vector_index_failed", error=str(error))
        return None


def _by_phrases(embedder: Embedder, snap: Snapshot, phrases: Sequence[str], n: int,
                keep: Callable[[str], bool], filtered: bool, where: str = "",
                prefix: str | None = None) -> dict[str, list[str]]:
    """The notes nearest each of ``phrases`` (the events a question names apart,
    :func:`magma.question_shape.event_phrases`, embedded in one call) -> ``{phrase: paths,
    nearest first}``, at most ``n`` each. Raises :class:`config.errors.EmbeddingError` when
    the model fails."""
    vectors = np.asarray(embedder.embed(list(phrases)), dtype=np.float32)
    return {phrase: [path for path, _, _ in _nearest(snap, vector, n, keep, filtered, where,
                                                     prefix)]
            for phrase, vector in zip(phrases, vectors, strict=True)}


def _fuse_phrases(near: Mapping[str, list[str]], words: NoteBm25 | None, n: int,
                  keep: Callable[[str], bool], prefix: str | None = None
                  ) -> list[tuple[str, str]]:
    """The notes each part of a question finds (``near``: by meaning, :func:`_by_phrases`;
    with ``words``, the note-level BM25 index, also by the part's words over the notes
    ``keep`` allows) fused by reciprocal rank fusion into one list -> ``(path, the phrase it
    ranks best for)``, best first, at most ``n``."""
    lists = list(near.items())
    if words is not None:
        lists += [(phrase, [path for path, _ in words.top(phrase, n, keep, prefix)])
                  for phrase in near]
    best: dict[str, tuple[int, str]] = {}
    for phrase, paths in lists:
        for rank, path in enumerate(paths):
            if path not in best or rank < best[path][0]:
                best[path] = (rank, phrase)
    fused = weighted_rrf({str(i): paths for i, (_, paths) in enumerate(lists)}, {})
    return [(path, best[path][1]) for path in sorted(fused, key=lambda p: (-fused[p], p))[:n]]


def _add_phrases(part: _Found, by_phrase: Sequence[tuple[str, str]]) -> None:
    """The parts' list (:func:`_by_phrases`) into ``part``: list ``phrases`` and each note's
    reason."""
    part.lists["phrases"] = [path for path, _ in by_phrase]
    for path, phrase in by_phrase:
        part.why.setdefault(path, []).append(f"part of the question: {phrase!r}")


def _phrases_first(chunks: Sequence[ChunkCandidate], text: str) -> list[ChunkCandidate]:
    """The full-text chunks, those holding every CJK phrase of the query as written
    (:func:`magma.text.cjk_phrases`) first, BM25 order kept within each part. The full-text
    index segments Chinese into words and ORs them: "提交信息" (commit message) matched 提交
    and 信息 apart, and a note using both words often, never together, outranked the one
    note that holds the phrase. A query without CJK keeps BM25's order."""
    phrases = cjk_phrases(text)
    if not phrases:
        return list(chunks)
    return sorted(chunks, key=lambda c: not holds_phrases(c.body or c.text, phrases))


def _ccb_fast(snap: Snapshot, text: str, intent: Intent, want: int,
              keep: Callable[[str], bool], prefix: str | None = None) -> _Found:
    """The ccb-fast stage: names, titles, aliases and descriptions by their words, and the
    notes dated in the query's time range, from the in-memory catalogue (``prefix``: the
    folder ``keep`` allows, if it asks one)."""
    part = _Found()
    words = {t for t in tokens(text) if t not in STOPWORDS}
    exact = {p for p in snap.names.get(norm(text), set()) if keep(p)}
    ranked = sorted(exact)[:want]  # before every note of some of the words
    if words and len(ranked) < want:
        ranked += _by_words(snap, words, exact, want - len(ranked), keep, prefix)
    if ranked:
        part.lists["names"] = ranked
        for path in ranked:
            part.why[path] = [NAMED if path in exact else "your words in its title, aliases "
                              "or description"]
    if intent.time_range is not None:
        start, end = intent.time_range.start, intent.time_range.end
        dated = [e for e in snap.entries.values()
                 if e.dated is not None and start <= e.dated <= end and keep(e.path)]
        dated.sort(key=lambda e: (-(e.layer == 4), -e.dated.toordinal() if e.dated else 0,
                                  e.path))
        part.lists["time"] = [e.path for e in dated[: max(want, 20)]]
        for e in dated[: max(want, 20)]:
            part.why.setdefault(e.path, []).append(f"dated {e.dated}")
    # one note of that exact name answers; several (translations, namesakes) do not
    part.confident = len(exact) == 1
    part.named = next(iter(exact)) if part.confident else None
    return part


def _by_words(snap: Snapshot, words: Collection[str], exact: Collection[str], want: int,
              keep: Callable[[str], bool], prefix: str | None = None) -> list[str]:
    """At most ``want`` notes outside ``exact`` whose names, titles, aliases or descriptions
    hold half of ``words`` (distinct) or more, those holding more first, then by path;
    ``keep`` is asked of them in that order only until ``want`` are kept (``prefix``: the
    folder ``keep`` allows, if it asks one: the others are never asked about).

    A word of many notes (a year, a folder's name) lists tens of thousands at 100,000 notes,
    so the notes are taken level by level, most words first: a note holding ``c`` of ``k``
    words lacks at most ``k - c`` of them, so it is in one of the ``k - c + 1`` shortest
    postings at least. Each level meets the notes of one more posting; of those, the notes
    of ``c`` words are the ones in every longer posting too (a set intersection, in C); the
    notes met at the levels above are counted (each once) when the search goes below them.
    It stops at the level where ``want`` are kept: the name "2023 05 20 ba4db050_1" counts
    the few notes of ``ba4db050_1``, not the 60,000 of ``2023``."""
    lists = sorted((snap.postings.get(word, _NO_PATHS) for word in words), key=len)
    least = (len(lists) + 1) // 2  # n / len(words) >= 0.5
    seen: set[str] = set()
    counted: dict[int, list[str]] = {}
    newest: set[str] | frozenset[str] = _NO_PATHS
    kept: list[str] = []
    for level in range(len(lists), least - 1, -1):
        if newest:  # the notes first met one level up, counted now that it is passed
            for path, n in Counter(chain.from_iterable(held & newest for held in lists)
                                   ).items():
                counted.setdefault(n, []).append(path)
        first = len(lists) - level  # the posting this level meets
        newest = lists[first] - seen if seen else lists[first]
        if level > least:
            seen |= newest
        longer = lists[first + 1:]
        level_paths: Iterable[str] = chain(
            counted.get(level, ()), newest.intersection(*longer) if longer else newest)
        if prefix:
            level_paths = (path for path in level_paths if path.startswith(prefix))
        for path in _path_order(list(level_paths), want - len(kept) + len(exact)):
            if path not in exact and keep(path):
                kept.append(path)
                if len(kept) == want:
                    return kept
    return kept


def _path_order(paths: Collection[str], first: int) -> Iterator[str]:
    """``paths`` in path order, the first ``first`` picked without sorting the rest (a
    level of tens of thousands of notes is sorted only when more than those are asked
    for)."""
    if len(paths) <= 4 * first + SORTED_WHOLE:
        yield from sorted(paths)
        return
    head = heapq.nsmallest(first, paths)  # == sorted(paths)[:first]
    yield from head
    yield from sorted(paths)[len(head):]


def _note_index(builder: NoteBm25Builder, snap: Snapshot, wait_s: float = BM25_WAIT_S, *,
                fresh: bool = False) -> NoteBm25:
    """The note-level BM25 index of ``snap`` (built only while its list has a weight, in a
    vault of :data:`daemon.rerank.MANY_NOTES` notes or more)."""
    if LIST_WEIGHTS.get("note-bm25", 0.0) <= 0 or not is_large(snap):
        return NoteBm25((), None)
    return builder.index_for(snap.versions, functools.partial(_note_spec, snap), wait_s,
                             fresh=fresh)


def _of_chunks(snap: Snapshot, keep: Callable[[str], bool]) -> Callable[[str], bool]:
    """``keep``, for the notes of at least :data:`NOTE_BM25_MIN_CHUNKS` chunks: the full text
    scores a note of one chunk as a whole already; one of several can hold the words apart."""
    return lambda p: len(snap.rows_by_path.get(p, ())) >= NOTE_BM25_MIN_CHUNKS and keep(p)


def _note_spec(snap: Snapshot) -> NoteSpec:
    """What the note-level BM25 index of ``snap`` holds: each note's labels (title, aliases,
    a memory's name and description) and its chunks' content hashes."""
    hashes: dict[str, list[str]] = {}
    for path, content_hash in zip(snap.chunk_paths, snap.chunk_hashes, strict=True):
        hashes.setdefault(path, []).append(content_hash)
    return {path: (" ".join(filter(None, [e.title, *e.aliases, e.name, e.description])),
                   hashes.get(path, [])) for path, e in snap.entries.items()}


def _merge(into: _Found, part: _Found) -> int:
    before = {p for ranked in into.lists.values() for p in ranked}
    for name, ranked in part.lists.items():
        into.lists[name] = ranked
    for path, chunk in part.chunks.items():
        if into.chunks.setdefault(path, chunk) is chunk and path in part.texts:
            into.texts.add(path)
    into.hollow |= part.hollow
    for path, sim in part.cosine.items():
        into.cosine.setdefault(path, sim)
    for path, row in part.rows.items():
        into.rows.setdefault(path, row)
    for path, why in part.why.items():
        into.why.setdefault(path, []).extend(why)
    for path, extra in part.lift.items():
        into.lift[path] = into.lift.get(path, 0.0) + extra
    if part.vector is not None:
        into.vector = part.vector
    into.confident = into.confident or part.confident
    into.named = into.named or part.named
    after = {p for ranked in into.lists.values() for p in ranked}
    return len(after - before)





def _graph_part(hits: Sequence[GraphHit], name: str = "graph") -> _Found:
    """The full-fusion stage's part: the graph step's notes as the list ``name``, with
    their lifts."""
    part = _Found()
    if hits:
        part.lists[name] = [h.path for h in hits]
    for hit in hits:
        if hit.lift:
            part.lift[hit.path] = hit.lift
        part.rows.setdefault(hit.path, hit.row)
        part.cosine[hit.path] = hit.cosine
        part.why.setdefault(hit.path, []).append(hit.why)
    return part


def _skip_reason(name: str, configured: bool, strategy: str, progressive: bool,
                 found: _Found, graph_step: str = "pagerank", enough: bool = True
                 ) -> str | None:
    """Why stage ``name`` does not run (its trace status), or ``None``: it runs.
    ``enough``: the stages before it found as many notes as the caller needs
    (:func:`_enough`); an earlier stage sure of its answer ends the search only then
    (``dreamd search Kyoto -n 10`` lists the notes about Kyoto after the one named so, ``-n
    1`` stops at it)."""
    if not configured:
        return "off"
    if name == "full-fusion" and graph_step == "off":
        return "off: retrieval.graph_step"
    if (strategy == "ccb-only" and name in MAGMA_STAGES) or \
            (strategy == "magma-only" and name in CCB_STAGES):
        return f"off: {strategy}"
    if progressive and found.confident and enough:
        return "skipped: confident"
    if name == "full-fusion" and found.vector is None:
        return "skipped: no query vector"
    return None


def _run_stages(settings: Settings, pool: ThreadPoolExecutor,
                stage_fn: Callable[[str, int], Callable[[], _Found]], found: _Found,
                query: _Query, depth: int, asked_for: int) -> list[StageTrace]:
    """The stage loop of :meth:`Retriever._gather`: each stage in order, skipped or run in
    ``pool`` within its deadline, its part merged into ``found`` -> the stages' traces."""
    cfg = settings.retrieval.progressive_search
    stages: dict[str, Stage] = {s.name: s for s in cfg.stages}
    strategy = settings.retrieval.default_strategy
    total_budget_s = sum(s.timeout_ms for s in cfg.stages) / 1000
    traces: list[StageTrace] = []
    for name in ("ccb-fast", "magma-extend", "full-fusion"):
        stage = stages.get(name)
        skip = _skip_reason(name, stage is not None, strategy, cfg.enabled, found,
                            settings.retrieval.graph_step,
                            enough=not found.confident
                            or _found_count(found, query.keep) >= _enough(asked_for, depth))
        if skip is not None or stage is None:
            traces.append(StageTrace(name, skip or "off", 0.0))
            continue
        t0 = time.perf_counter()
        future = pool.submit(stage_fn(name, max(stage.limit or depth, depth)))
        part, status = _await_stage(
            future, name, stage.timeout_ms / 1000 if cfg.enabled else None,
            (query.started + total_budget_s, query.started + total_budget_s * EMPTY_WAIT_FACTOR),
            lambda: _found_count(found, query.keep), asked_for)
        elapsed = (time.perf_counter() - t0) * 1000
        if part is None:
            traces.append(StageTrace(name, status, elapsed))
            continue
        if name in CCB_STAGES and strategy == "both-priority-magma":
            # MAGMA leads: an exact name neither ends the search nor leads the hits
            part.confident, part.named = False, None
        added = _merge(found, part)
        traces.append(StageTrace(name, status, elapsed, added))
    return traces


def _enough(asked_for: int, depth: int) -> int:
    """Notes the stages before a stage must have found for an earlier stage's sure answer
    to end the search: the one hit asked for (``-n 1``: the note named leads every longer
    list too, :func:`daemon.rerank._with_named_first`), else a whole ranking ``depth`` deep,
    so that a list of 3 is the start of a list of 10 (a stage skipped for one and run for
    the other would rank the places after the first apart)."""
    return 1 if asked_for == 1 else depth


def _found_count(found: _Found, keep: Callable[[str], bool]) -> int:
    """Notes the stages so far found that may be shown."""
    return len({p for ranked in found.lists.values() for p in ranked if keep(p)})


def _await_stage(future: Future[_Found], name: str, deadline_s: float | None,
                 until: tuple[float, float], shown: Callable[[], int], asked_for: int
                 ) -> tuple[_Found | None, str]:
    """A stage's part and its trace status. A failing stage (the store mid-compaction, the
    model) is skipped like a late one: the other stages still answer. A late stage is
    skipped, unless the earlier stages found fewer notes than asked for (``shown()`` <
    ``asked_for``): then a short answer is worse than a late one, and the stage may run on
    until the whole search's budget (the sum of every stage's deadline: ``until[0]``, on the
    ``time.perf_counter`` clock) is spent; and when they found none at all, until
    ``until[1]`` (:data:`EMPTY_WAIT_FACTOR` budgets)."""
    try:
        return future.result(timeout=deadline_s), "ran"
    except DreamdError as error:
        log.warning("search.stage_failed", stage=name, error=str(error))
        return None, "skipped: error"
    except FutureTimeout:
        count = shown()
        waits = [(bound, status) for bound, status, wanted in (
            (until[0], "ran late: too little found before it", count < asked_for),
            (until[1], "ran late: nothing found before it", count == 0)) if wanted]
        for bound, status in waits:
            left_s = bound - time.perf_counter()
            if left_s > 0:
                try:
                    return future.result(timeout=left_s), status
                except (FutureTimeout, DreamdError):
                    continue
        log.info("search.stage_skipped", stage=name,
                 deadline_ms=round((deadline_s or 0) * 1000))
        return None, "skipped: deadline"
