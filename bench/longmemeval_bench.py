"""Retrieval quality on LongMemEval: BM25, vector, hybrid and dreamd's search, same index.

    .venv/bin/python bench/longmemeval_bench.py [--set both] [--workdir DIR]

Data: LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term
Interactive Memory", ICLR 2025), the local copy in ``../shared/corpora/longmemeval`` (see its
``FORMAT.md``; ``--data`` to point elsewhere). An instance is one question, its type, its
``question_date``, a haystack of dated chat sessions and the ids of the evidence sessions
(``answer_session_ids``).

Method:

1. Each chat session becomes one note ``Sessions/<YYYY-MM-DD>-<session id>.md`` with
   frontmatter ``date`` (the session's date) and ``session`` (its id), a title line
   ``# Chat session <date>`` and one paragraph per turn (``**User:** …`` / ``**Assistant:** …``).
   The notes are indexed by dreamd itself (``App.sync``, the default embedding model) in an
   isolated data folder under ``--workdir``; a rerun with the same workdir reuses the index.
2. ``oracle`` set, **pooled**: an oracle instance holds only its own evidence sessions, so
   retrieval inside one instance would be trivially perfect. Instead all 940 unique sessions
   of the 500 oracle instances go into ONE vault and every question is asked against the
   whole pool: its 1–6 evidence sessions must be found among 940. (8 sessions appear in
   several instances under different dates; the pool keeps the first date met.)
3. ``s`` set: each LongMemEval_S instance of ``s_sample/`` (~40–50 sessions) gets its own vault
   and index, and its question is asked there, as in the paper.
4. Four systems per question, each asked once for 10 hits (recall@5 reads the first 5):
   ``bm25`` — the bm25s library (Xing Han Lù, "BM25S: Orders of magnitude faster lexical
   search via eager sparse scoring", 2024; defaults k1=1.5, b=0.75, Lucene idf) over one
   document per session: the note's text below its frontmatter, lowercased, bm25s's English
   stopwords, no stemmer; documents scoring 0 are not returned.
   ``vector`` — ``magma.search.vector_only`` (notes ranked by their best chunk's cosine).
   ``hybrid`` — ``magma.search.hybrid_search`` (vector + full text, plain reciprocal rank
   fusion, none of the pipeline's filtering or scoring).
   ``dreamd`` — ``App.search(question, count_recall=False, now=<question_date as UTC>)``,
   the full pipeline (recency and time expressions count from the day the question is
   asked). Recall votes are never counted. Its stages have deadlines
   (``retrieval.progressive_search``, 100/300/800 ms by default); a stage that misses one is
   skipped, so on a loaded machine dreamd may return fewer hits: the run counts those
   questions, and ``--deadline-x`` scales the deadlines to read quality apart from latency.
   Hits that are not session notes are dropped before the cut.
   With ``--graph-steps``, also ``dreamd:off``, ``dreamd:one_hop`` and ``dreamd:pagerank``:
   the retrieval pipeline (``daemon.retrieval.Retriever``, what ``App.search`` runs, its
   graph step walking the vault graph the app keeps) with ``retrieval.graph_step`` set to
   each, over the same index in the same run.

Metrics, per question type and overall, per system: recall@k (k = 5, 10) = mean over questions
of |evidence sessions in the top k| / |evidence sessions|, a session with an evidence
session's turns counting as that session (:func:`same_text`: the pooled oracle holds 79
abstention copies; no LongMemEval_S haystack holds a copy); recall_all@10 = fraction of
questions with every evidence session in the top 10. Abstention questions (id ending in
``_abs``) are skipped, as LongMemEval's own retrieval evaluation does; the count is reported.

Output: a markdown table per set on stdout, and per-question rankings, summaries and wall
times (index, BM25 index, queries per system) in ``--json`` (default
``bench/results/longmemeval.json``). ``--questions N`` takes the first N instances of each set
(the oracle pool still holds all 940 sessions).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import inspect
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from daemon.app import App, load  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402
from magma.search import SearchHit, hybrid_search, vector_only  # noqa: E402

DATA = REPO.parent / "shared" / "corpora" / "longmemeval"
ORACLE_FILE = "longmemeval_oracle.json"
S_DEV_FILE = "longmemeval_s_dev.json.gz"
S_FOLDER = "s_sample"
SESSIONS_FOLDER = "Sessions"

#: Cut-offs of the metrics; every system is asked once for ``max(KS)`` hits.
KS = (5, 10)
SYSTEMS: tuple[str, ...] = ("bm25", "vector", "hybrid", "dreamd")
#: ``--graph-steps``: dreamd's pipeline once per ``retrieval.graph_step``, over the same index.
GRAPH_STEPS = ("off", "one_hop", "pagerank")
ABSTENTION_SUFFIX = "_abs"
#: Bumped when the note format changes, so an old index is rebuilt.
NOTE_FORMAT = 1
INDEX_MARKER = "indexed.json"

_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_-]+")
_DATE_RE = re.compile(r"(\d{4})/(\d{2})/(\d{2})\D+?(\d{1,2}):(\d{2})")


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Session:
    """One chat session: id, day, and its turns as ``(role, content)`` pairs."""

    session_id: str
    day: dt.date
    turns: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Question:
    """One LongMemEval question; ``evidence`` holds the ids of its evidence sessions."""

    question_id: str
    question_type: str
    question: str
    asked_at: dt.datetime
    evidence: tuple[str, ...]

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith(ABSTENTION_SUFFIX)


def parse_stamp(stamp: str) -> dt.datetime:
    """``"2023/05/28 (Sun) 19:47"`` -> aware UTC datetime. Raises ValueError otherwise."""
    match = _DATE_RE.match(stamp.strip())
    if match is None:
        raise ValueError(f"longmemeval: not a date: {stamp!r}")
    year, month, day, hour, minute = (int(g) for g in match.groups())
    return dt.datetime(year, month, day, hour, minute, tzinfo=dt.UTC)


def question_of(instance: Mapping[str, Any]) -> Question:
    return Question(
        question_id=str(instance["question_id"]),
        question_type=str(instance["question_type"]),
        question=str(instance["question"]),
        asked_at=parse_stamp(str(instance["question_date"])),
        evidence=tuple(str(s) for s in instance["answer_session_ids"]),
    )


def sessions_of(instances: Iterable[Mapping[str, Any]]) -> dict[str, Session]:
    """Unique sessions of ``instances`` by id, in order of first appearance (a session met
    again under another date keeps the first date)."""
    found: dict[str, Session] = {}
    for instance in instances:
        for sid, stamp, turns in zip(instance["haystack_session_ids"],
                                     instance["haystack_dates"],
                                     instance["haystack_sessions"], strict=True):
            sid = str(sid)
            if sid not in found:
                found[sid] = Session(sid, parse_stamp(str(stamp)).date(), tuple(
                    (str(t["role"]), str(t["content"])) for t in turns))
    return found


def same_text(sessions: Iterable[Session]) -> dict[str, str]:
    """Each session id -> the first id met whose session has the same turns: a copy of a
    conversation is that conversation, whatever day it is filed under. LongMemEval's
    abstention instances (``*_abs``) reuse their original's sessions word for word under
    ids of their own, some on another day (79 pairs among the 940 pooled oracle sessions;
    37 on the same day); a search that shows one copy and drops the other (as dreamd's
    search drops copies) has found the evidence."""
    first: dict[tuple[tuple[str, str], ...], str] = {}
    out: dict[str, str] = {}
    for session in sessions:
        out[session.session_id] = first.setdefault(session.turns, session.session_id)
    return out


def load_oracle(data: Path) -> list[dict[str, Any]]:
    """The 500 oracle instances (``longmemeval_oracle.json``), in file order."""
    instances: list[dict[str, Any]] = json.loads((data / ORACLE_FILE).read_text("utf-8"))
    return instances


def load_s_dev(data: Path) -> list[dict[str, Any]]:
    """The 264 LongMemEval_S instances of the development half (``longmemeval_s_dev.json.gz``,
    its full haystacks; the other half is kept back to measure with)."""
    with gzip.open(data / S_DEV_FILE, "rt", encoding="utf-8") as handle:
        instances: list[dict[str, Any]] = json.load(handle)
    return instances


def load_s_sample(data: Path) -> list[dict[str, Any]]:
    """The LongMemEval_S instances of ``s_sample/``, one per file, by file name."""
    instances = []
    for path in sorted((data / S_FOLDER).glob("*.json")):
        loaded = json.loads(path.read_text("utf-8"))
        instances.extend(loaded if isinstance(loaded, list) else [loaded])
    return instances


# ---------------------------------------------------------------------------- notes


def note_path(session: Session) -> str:
    """Vault-relative path ``Sessions/<YYYY-MM-DD>-<id>.md`` (id reduced to ``[A-Za-z0-9_-]``)."""
    safe = _UNSAFE_RE.sub("_", session.session_id).strip("_") or "session"
    return f"{SESSIONS_FOLDER}/{session.day.isoformat()}-{safe}.md"


def session_body(session: Session) -> str:
    """The note's text below the frontmatter: title line, then one paragraph per turn."""
    parts = [f"# Chat session {session.day.isoformat()}"]
    for role, content in session.turns:
        speaker = "User" if role == "user" else "Assistant"
        parts.append(f"**{speaker}:** {content.strip()}")
    return "\n\n".join(parts) + "\n"


def note_text(session: Session) -> str:
    """The whole note: frontmatter (``date``, ``session``) and :func:`session_body`."""
    return (f"---\ndate: {session.day.isoformat()}\nsession: {json.dumps(session.session_id)}\n"
            f"---\n{session_body(session)}")


def write_sessions(vault: Path, sessions: Iterable[Session]) -> dict[str, str]:
    """Write one note per session under ``vault`` -> ``{path: session id}``. Notes of
    ``Sessions/`` not in ``sessions`` are removed; a file with the same text is left as it is
    (its index rows stay valid). Raises ValueError when two sessions map to one path."""
    paths: dict[str, str] = {}
    for session in sessions:
        path = note_path(session)
        if path in paths:
            raise ValueError(f"longmemeval: {path}: sessions {paths[path]!r} and "
                             f"{session.session_id!r} map to the same note")
        paths[path] = session.session_id
        target = vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = note_text(session).encode("utf-8")
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)
    folder = vault / SESSIONS_FOLDER
    for stale in folder.glob("*.md"):
        if f"{SESSIONS_FOLDER}/{stale.name}" not in paths:
            stale.unlink()
    return paths


def fingerprint(sessions: Iterable[Session]) -> str:
    """SHA-256 over every note's path and text: what an index was built from."""
    digest = hashlib.sha256(f"format {NOTE_FORMAT}\n".encode())
    for session in sessions:
        digest.update(note_path(session).encode())
        digest.update(hashlib.sha256(note_text(session).encode()).digest())
    return digest.hexdigest()


# ---------------------------------------------------------------------------- metrics


def recall_at(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """|evidence ∩ ranked[:k]| / |evidence| (ranked = session ids, best first)."""
    wanted = set(evidence)
    return len(wanted & set(ranked[:k])) / len(wanted)


def all_at(ranked: Sequence[str], evidence: Collection[str], k: int) -> bool:
    """Every evidence session is in ``ranked[:k]``."""
    return set(evidence) <= set(ranked[:k])


def scores_of(ranked: Sequence[str], evidence: Collection[str]) -> dict[str, float]:
    """``{"recall@5", "recall@10", "recall_all@10"}`` of one ranking."""
    out = {f"recall@{k}": recall_at(ranked, evidence, k) for k in KS}
    out[f"recall_all@{max(KS)}"] = float(all_at(ranked, evidence, max(KS)))
    return out


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per question type and ``overall``: ``{"n": count, system: {metric: mean}}``, from
    rows ``{"question_type", "scores": {system: {metric: value}}}``."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row["question_type"]), []).append(row)
    ordered = {name: groups[name] for name in sorted(groups)}
    ordered["overall"] = list(rows)
    summary: dict[str, dict[str, Any]] = {}
    for name, members in ordered.items():
        entry: dict[str, Any] = {"n": len(members)}
        if members:
            for system in members[0]["scores"]:
                metrics = members[0]["scores"][system]
                entry[system] = {m: sum(r["scores"][system][m] for r in members) / len(members)
                                 for m in metrics}
        summary[name] = entry
    return summary


def markdown_table(summary: Mapping[str, Mapping[str, Any]], systems: Sequence[str]) -> str:
    """Rows = question types + overall; columns = system × recall@5/@10, then
    recall_all@10 per system."""
    last = max(KS)
    head = ["type", "n"] + [f"{s} @{k}" for s in systems for k in KS] + [
        f"{s} all@{last}" for s in systems]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, entry in summary.items():
        cells = [f"**{name}**" if name == "overall" else name, str(entry["n"])]
        for metric_set in ([(s, f"recall@{k}") for s in systems for k in KS],
                           [(s, f"recall_all@{last}") for s in systems]):
            cells += [f"{entry[s][m]:.3f}" if s in entry else "–" for s, m in metric_set]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- systems


class Bm25Index:
    """bm25s over one document per session (lowercase, English stopwords, no stemmer)."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG on import
        self._bm25s = bm25s
        self.ids = list(documents)
        self.retriever = bm25s.BM25()
        tokens = bm25s.tokenize(list(documents.values()), lower=True, stopwords="en",
                                show_progress=False)
        self.retriever.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        """Session ids, best first, at most ``k``; documents scoring 0 are left out."""
        tokens = self._bm25s.tokenize([query], lower=True, stopwords="en",
                                      return_ids=False, show_progress=False)
        if not tokens[0]:
            return []
        docs, scores = self.retriever.retrieve(tokens, k=min(k, len(self.ids)),
                                               show_progress=False)
        return [self.ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def make_app(vault: Path, data_dir: Path, deadline_x: float = 1.0) -> App:
    """An App on ``vault`` with its index under ``data_dir`` (nothing of the user's dreamd);
    ``deadline_x`` multiplies the deadline of every progressive-search stage."""
    # LongMemEval's stamps carry no zone: they are read as UTC, and so is the user's day
    overrides: dict[str, object] = {"vault.path": vault, "storage.data_dir": data_dir,
                                    "time.zone": "UTC"}
    loaded = load(None, None, overrides)
    if deadline_x != 1.0:
        stages = loaded.settings.retrieval.progressive_search.stages
        overrides["retrieval.progressive_search.stages"] = [
            {**stage.model_dump(), "timeout_ms": max(1, round(stage.timeout_ms * deadline_x))}
            for stage in stages]
        loaded = load(None, None, overrides)
    return App.create(loaded)


def search_kwargs(app: App, asked_at: dt.datetime) -> dict[str, Any]:
    """``{"now": asked_at}`` when ``App.search`` takes ``now``, else ``{}``."""
    return {"now": asked_at} if "now" in inspect.signature(app.search).parameters else {}


def sessions_in(hits: Iterable[SearchHit], paths: Mapping[str, str]) -> list[str]:
    """Session ids of ``hits`` in order; hits that are not session notes are dropped."""
    return [paths[h.path] for h in hits if h.path in paths]


Ranker = Callable[[Question], list[str]]


def step_rankers(app: App, paths: Mapping[str, str]) -> dict[str, Ranker]:
    """``dreamd:<step>`` for each of :data:`GRAPH_STEPS`: the retrieval pipeline of ``app``
    (its store, embedder, settings and kept vault graph) with ``retrieval.graph_step`` =
    ``step``, asked as ``App.search`` asks it (no recall statistics)."""
    from daemon.retrieval import Retriever

    k = max(KS)
    found: dict[str, Ranker] = {}
    for step in GRAPH_STEPS:
        settings = app.settings.model_copy(update={"retrieval": app.settings.retrieval.model_copy(
            update={"graph_step": step})})
        retriever = Retriever(store=app.store, embedder=app.embedder, settings=settings,
                              recall_stats=lambda: {},
                              kept_graph=app.indexing.graph_keeper.step_graph)
        retriever.warm(bm25_wait_s=BM25_BUILD_WAIT_S)

        def rank(q: Question, retriever: Retriever = retriever) -> list[str]:
            return sessions_in(retriever.search(q.question, limit=k, now=q.asked_at).hits,
                               paths)

        found[f"dreamd:{step}"] = rank
    return found


def rankers(app: App, paths: Mapping[str, str], bm25: Bm25Index,
            stages: dict[str, list[str]]) -> dict[str, Ranker]:
    """The four systems (and the :func:`step_rankers` when :data:`SYSTEMS` names them), each
    question -> session ids, best first (at most ``max(KS)``). ``stages`` receives, per
    question id, the status of each stage of dreamd's pipeline
    (``"magma-extend: skipped: deadline"``)."""
    k = max(KS)

    def dreamd(q: Question) -> list[str]:
        hits = app.search(q.question, limit=k, count_recall=False,
                          **search_kwargs(app, q.asked_at))
        trace = getattr(app, "last_search_trace", None)
        stages[q.question_id] = [f"{t.name}: {t.status}" for t in getattr(trace, "stages", ())]
        return sessions_in(hits, paths)

    return {
        "bm25": lambda q: bm25.search(q.question, k),
        "vector": lambda q: sessions_in(
            vector_only(app.store, app.embedder, q.question, limit=k), paths),
        "hybrid": lambda q: sessions_in(
            hybrid_search(app.store, app.embedder, q.question, limit=k,
                          rrf_k=app.settings.retrieval.rrf_k), paths),
        "dreamd": dreamd,
        **(step_rankers(app, paths) if "dreamd:off" in SYSTEMS else {}),
    }


# ---------------------------------------------------------------------------- runs


@dataclass
class Timings:
    index_s: float = 0.0
    index_reused: int = 0
    indexed: int = 0
    chunks_embedded: int = 0
    bm25_index_s: float = 0.0
    query_s: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SYSTEMS, 0.0))


def build_index(
    folder: Path, sessions: Sequence[Session], timings: Timings, data_dir: Path,
    deadline_x: float = 1.0,
) -> tuple[App, dict[str, str]]:
    """Notes of ``sessions`` in ``<folder>/vault``, indexed under ``data_dir`` (one for every
    vault of a run, so the user's embedding cache serves them all); reused as they are when
    ``<folder>/indexed.json`` records the same fingerprint and ``data_dir`` holds an index of
    this vault (a workdir copied to another path is indexed again: the index is kept by the
    vault's path; the embedding cache makes that cheap)."""
    vault, marker = folder / "vault", folder / INDEX_MARKER
    wanted = fingerprint(sessions)
    vault.mkdir(parents=True, exist_ok=True)
    app = make_app(vault, data_dir, deadline_x)
    paths = {note_path(s): s.session_id for s in sessions}
    if (marker.is_file() and json.loads(marker.read_text()).get("fingerprint") == wanted
            and app.indexing.is_indexed()):
        timings.index_reused += 1
        return app, paths
    marker.unlink(missing_ok=True)
    started = time.perf_counter()
    paths = write_sessions(vault, sessions)
    report = app.sync()
    elapsed = time.perf_counter() - started
    timings.index_s += elapsed
    timings.indexed += 1
    timings.chunks_embedded += report.chunks_embedded
    marker.write_text(json.dumps({"fingerprint": wanted, "sessions": len(sessions),
                                  "index_s": elapsed, "chunks": report.chunks_embedded}))
    return app, paths


def ask(questions: Sequence[Question], systems: Mapping[str, Ranker], timings: Timings,
        stages: Mapping[str, list[str]],
        copies: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every question to every system (system by system) -> one row per question.
    ``copies`` (:func:`same_text`) scores a copy of an evidence session as that session;
    the rankings are kept as returned."""
    def canon(ids: Iterable[str]) -> list[str]:
        return [copies.get(i, i) for i in ids] if copies else list(ids)

    rows: list[dict[str, Any]] = [
        {"question_id": q.question_id, "question_type": q.question_type,
         "question": q.question, "evidence": list(q.evidence), "ranked": {}, "scores": {},
         "query_ms": {}} for q in questions]
    for name, rank in systems.items():
        for q, row in zip(questions, rows, strict=True):
            started = time.perf_counter()
            ranked = rank(q)[:max(KS)]
            elapsed = time.perf_counter() - started
            timings.query_s[name] += elapsed
            row["ranked"][name] = ranked
            row["scores"][name] = scores_of(canon(ranked), canon(q.evidence))
            row["query_ms"][name] = round(elapsed * 1000, 2)
    for q, row in zip(questions, rows, strict=True):
        row["dreamd_stages"] = stages.get(q.question_id, [])
    return rows


#: How long a run waits for the note-level BM25 index of a new vault (seconds): quality is
#: read with every list the pipeline has.
BM25_BUILD_WAIT_S = 120.0


def warm_up(app: App) -> None:
    """Load the embedding model and the search's in-memory indexes outside the timed
    queries."""
    app.embedder.embed(["warm up"])
    warm = getattr(app.retriever, "warm", None)
    if warm is not None and "bm25_wait_s" in inspect.signature(warm).parameters:
        warm(bm25_wait_s=BM25_BUILD_WAIT_S)


def select(
    instances: Sequence[Mapping[str, Any]], limit: int | None, per_type: int | None = None
) -> tuple[list[Mapping[str, Any]], int]:
    """First ``limit`` instances (or the first ``per_type`` of each question type) without
    the abstention ones -> (kept, skipped count)."""
    chosen = list(instances[:limit] if limit is not None else instances)
    if per_type is not None:
        seen: dict[str, int] = {}
        picked = []
        for instance in chosen:
            kind = str(instance["question_type"])
            if str(instance["question_id"]).endswith(ABSTENTION_SUFFIX):
                continue
            if seen.get(kind, 0) < per_type:
                seen[kind] = seen.get(kind, 0) + 1
                picked.append(instance)
        return picked, 0
    kept = [i for i in chosen if not str(i["question_id"]).endswith(ABSTENTION_SUFFIX)]
    return kept, len(chosen) - len(kept)


def run_pooled(instances: Sequence[Mapping[str, Any]], folder: Path, limit: int | None,
               deadline_x: float = 1.0, *, data_dir: Path) -> dict[str, Any]:
    """All sessions of ``instances`` in one vault; the selected questions asked against it."""
    timings = Timings()
    pool = list(sessions_of(instances).values())
    kept, skipped = select(instances, limit)
    print(f"oracle: {len(pool)} sessions pooled in one vault, {len(kept)} questions "
          f"({skipped} abstention skipped)", flush=True)
    app, paths = build_index(folder, pool, timings, data_dir, deadline_x)
    started = time.perf_counter()
    bm25 = Bm25Index({s.session_id: session_body(s) for s in pool})
    timings.bm25_index_s = time.perf_counter() - started
    warm_up(app)
    stages: dict[str, list[str]] = {}
    rows = ask([question_of(i) for i in kept], rankers(app, paths, bm25, stages), timings,
               stages, same_text(pool))
    return result_of(rows, skipped, timings, app, sessions=len(pool))


def run_separate(instances: Sequence[Mapping[str, Any]], folder: Path, limit: int | None,
                 deadline_x: float = 1.0, *, data_dir: Path,
                 per_type: int | None = None) -> dict[str, Any]:
    """One vault and index per instance, its own question asked there."""
    timings = Timings()
    kept, skipped = select(instances, limit, per_type)
    print(f"s: {len(kept)} instances, one vault each ({skipped} abstention skipped)",
          flush=True)
    rows: list[dict[str, Any]] = []
    app: App | None = None
    sessions = 0
    for n, instance in enumerate(kept, start=1):
        question = question_of(instance)
        haystack = list(sessions_of([instance]).values())
        sessions += len(haystack)
        safe = _UNSAFE_RE.sub("_", question.question_id)
        app, paths = build_index(folder / safe, haystack, timings, data_dir, deadline_x)
        started = time.perf_counter()
        bm25 = Bm25Index({s.session_id: session_body(s) for s in haystack})
        timings.bm25_index_s += time.perf_counter() - started
        warm_up(app)
        stages: dict[str, list[str]] = {}
        rows += ask([question], rankers(app, paths, bm25, stages), timings, stages,
                    same_text(haystack))
        print(f"  {n}/{len(kept)} {question.question_id}: {len(haystack)} sessions",
              flush=True)
    return result_of(rows, skipped, timings, app, sessions=sessions)


def result_of(rows: list[dict[str, Any]], skipped: int, timings: Timings, app: App | None,
              *, sessions: int) -> dict[str, Any]:
    n = max(len(rows), 1)
    return {
        "questions": len(rows), "skipped_abstention": skipped, "sessions": sessions,
        "now_passed": app is not None and bool(search_kwargs(app, dt.datetime.now(dt.UTC))),
        "dreamd_deadline_skips": sum(any("deadline" in s for s in r["dreamd_stages"])
                                     for r in rows),
        "dreamd_empty": sum(not r["ranked"]["dreamd"] for r in rows),
        "timings": {
            "index_s": round(timings.index_s, 2), "indexes_built": timings.indexed,
            "indexes_reused": timings.index_reused,
            "chunks_embedded": timings.chunks_embedded,
            "bm25_index_s": round(timings.bm25_index_s, 3),
            "query_s": {s: round(v, 3) for s, v in timings.query_s.items()},
            "query_ms_mean": {s: round(v * 1000 / n, 2) for s, v in timings.query_s.items()},
        },
        "summary": summarise(rows),
        "rows": rows,
    }


def report(name: str, result: Mapping[str, Any]) -> str:
    t = result["timings"]
    index = (f"index {t['index_s']:.1f} s ({t['indexes_built']} built, "
             f"{t['chunks_embedded']} chunks embedded; {t['indexes_reused']} reused)")
    queries = ", ".join(f"{s} {t['query_s'][s]:.1f} s ({t['query_ms_mean'][s]:.0f} ms/q)"
                        for s in SYSTEMS)
    return (f"\n## {name}: {result['questions']} questions, {result['sessions']} sessions, "
            f"{result['skipped_abstention']} abstention skipped, now passed: "
            f"{result['now_passed']}\n\n{markdown_table(result['summary'], SYSTEMS)}\n\n"
            f"dreamd: {result['dreamd_deadline_skips']} questions with a stage skipped at its "
            f"deadline, {result['dreamd_empty']} with no hit\n"
            f"wall: {index}; bm25 index {t['bm25_index_s']:.2f} s; queries: {queries}")


def question_ids(spec: str | None) -> set[str] | None:
    """``--ids``: ``None`` (every question), ``"a,b"`` or ``"@FILE"`` (one id a line,
    blank lines ignored) -> the set of ids. Raises OSError when FILE cannot be read."""
    if spec is None:
        return None
    text = Path(spec[1:]).read_text("utf-8") if spec.startswith("@") else spec.replace(",", "\n")
    return {line.strip() for line in text.splitlines() if line.strip()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", choices=("oracle", "s", "dev", "both"), default="both",
                        help="oracle (pooled), s (s_sample/, 20 files), dev (the 264 "
                        "LongMemEval_S questions of longmemeval_s_dev.json.gz), both "
                        "(oracle and s).")
    parser.add_argument("--per-type", type=int, default=None,
                        help="dev/s: the first N questions of each question type.")
    parser.add_argument("--questions", type=int, default=None,
                        help="First N instances of each set (default: all).")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="Keeps vaults and indexes; a rerun reuses them.")
    parser.add_argument("--deadline-x", type=float, default=1.0,
                        help="Multiply dreamd's stage deadlines (default 1: as configured; "
                        "a loaded machine misses them and dreamd returns fewer hits).")
    parser.add_argument("--types", default=None,
                        help="dev: only these question types, comma-separated "
                        "(multi-session,temporal-reasoning).")
    parser.add_argument("--ids", default=None,
                        help="dev: only these question ids, comma-separated, or @FILE with "
                        "one id a line (read with --types and --per-type).")
    parser.add_argument("--graph-step", choices=("pagerank", "one_hop", "off"), default=None,
                        help="dreamd's retrieval.graph_step for the run (default: as "
                        "configured, pagerank).")
    parser.add_argument("--graph-steps", action="store_true",
                        help="Also ask dreamd's pipeline once per retrieval.graph_step (off, "
                        "one_hop, pagerank) over the same index: systems dreamd:<step>.")
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/longmemeval.json")
    args = parser.parse_args()
    if args.graph_steps:
        global SYSTEMS
        SYSTEMS = (*SYSTEMS, *(f"dreamd:{step}" for step in GRAPH_STEPS))
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="dreamd-lme-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("LANCEDB_LOG", "error")
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    data_dir = workdir / "data"
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(data_dir)
    os.environ["DREAMD_CONFIG"] = str(workdir / "no-config.toml")
    if args.graph_step is not None:
        os.environ["DREAMD_RETRIEVAL__GRAPH_STEP"] = args.graph_step
    configure_logging("warning", "console")
    import bm25s

    started = time.perf_counter()
    results: dict[str, Any] = {}
    if args.set in ("oracle", "both"):
        results["oracle"] = run_pooled(load_oracle(args.data), workdir / "oracle",
                                       args.questions, args.deadline_x, data_dir=data_dir)
    if args.set in ("s", "both"):
        results["s"] = run_separate(load_s_sample(args.data), workdir / "s", args.questions,
                                    args.deadline_x, data_dir=data_dir,
                                    per_type=args.per_type)
    if args.set == "dev":
        wanted = set(args.types.split(",")) if args.types else None
        ids = question_ids(args.ids)
        dev = [i for i in load_s_dev(args.data)
               if (wanted is None or i["question_type"] in wanted)
               and (ids is None or i["question_id"] in ids)]
        results["dev"] = run_separate(dev, workdir / "dev", args.questions,
                                      args.deadline_x, data_dir=data_dir,
                                      per_type=args.per_type)
    total = time.perf_counter() - started
    for name, result in results.items():
        print(report(name, result))
    print(f"\ntotal wall {total:.1f} s; workdir {workdir}")
    out = {"k": list(KS), "systems": list(SYSTEMS), "questions_limit": args.questions,
           "deadline_x": args.deadline_x, "graph_step": args.graph_step or "as configured",
           "types": args.types or "all", "ids": args.ids,
           "bm25s_version": bm25s.__version__, "cpus": os.cpu_count(),
           "total_s": round(total, 2), "sets": results}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1, default=str) + "\n")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
