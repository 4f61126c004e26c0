"""BM25 over whole notes: the lexical list that sees a question's words spread over a note.

LanceDB's full-text index scores one chunk at a time, so a chat session whose answer is
spread over several turns ("the bike I bought" in one, "the repair" in another) never scores
for both words at once. :class:`NoteBm25` scores each note as one document (title, aliases
and every chunk body) with the ``bm25s`` library (Xing Han Lù, "BM25S: Orders of magnitude
faster lexical search via eager sparse scoring", 2024; Lucene's BM25, k1 1.5, b 0.75, the
library's defaults).

Tokens (:func:`bm25_tokens`): NFKC, case-folded words outside the CJK scripts (combining
marks kept inside a word), English stop words left out; runs of CJK characters as
overlapping character pairs (the usual unit of Chinese and Japanese retrieval without a
word segmenter), a lone character as itself.

:class:`NoteLexicon` keeps the tokens of every chunk by its content hash, so a new snapshot
of the index re-reads and re-tokenizes only the chunks that changed. With a folder to keep it
in (:mod:`magma.note_bm25_files`), the index is saved once built (a rebuild at most every
:data:`SAVE_GAP_S`, and at the close) and read back memory-mapped at the next start when it
indexes the same notes (:func:`spec_fingerprint`);
the tokens of its chunks, saved beside it, seed the next build instead of staying in the
heap.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

import bm25s
import numpy as np
import structlog
from bm25s.stopwords import STOPWORDS_EN

from config.errors import DreamdError
from magma.chunking import asking_turns
from magma.gc_pause import trim_heap
from magma.note_bm25_files import NoteBm25Files, SavedNoteBm25
from magma.text import CJK_RANGES

# bm25s sets its logger to debug on import and logs each index it builds; only its
# warnings are news to a user.
logging.getLogger("bm25s").setLevel(logging.WARNING)

__all__ = [
    "BM25_WAIT_S",
    "NOT_SAVED",
    "REBUILD_GAP_FACTOR",
    "SAVE_GAP_S",
    "STOP_CHECK_EVERY",
    "STOP_SAVE_MAX_S",
    "TOKENS_VERSION",
    "TOP_MARGIN",
    "BuildStopped",
    "NoteBm25",
    "NoteBm25Builder",
    "NoteLexicon",
    "TermCounts",
    "best_rows",
    "bm25_tokens",
    "spec_fingerprint",
]

log = structlog.get_logger("dreamd.note_bm25")

#: How long a search waits for the first index of a store (seconds; our choice: a vault of
#: a few hundred notes builds within it; 6,000 notes, 24 MB, take ~8 s on one core, which no
#: search should wait for).
BM25_WAIT_S = 0.25
#: How long it waits for the index of a new snapshot when an older one can answer (seconds;
#: our choice: the index of a small vault after an edit, and a tenth of a search's budget).
BM25_STALE_WAIT_S = 0.05
#: A new snapshot's index is built only once this many times the last build's time has
#: passed since that build ended; until then the last index answers (its notes no longer in
#: the snapshot are never returned: the search keeps only the snapshot's notes). A rebuild
#: reads every note again: 0.5 s of CPU at 6,914 notes (the help vault and 1,000 memories,
#: ``bench/note_bm25_rebuild.py``; 1.6 s before it was built from counts), so an assistant
#: searching after every save of a 100,000-note vault would keep a core busy. At 9 the
#: rebuilds take at most a tenth of one core (our choice); the vector and full-text lists
#: always see the newest snapshot.
REBUILD_GAP_FACTOR = 9.0
#: A rebuilt index is saved (:mod:`magma.note_bm25_files`) only once this long has passed
#: since the saved one was written (seconds; our choice); else a timer saves it when that
#: time comes, or the close does (:data:`STOP_SAVE_MAX_S`), whichever is first. Each save
#: writes the whole score matrix again (301 MB at 100,000 notes, ``bench/big_vault.py``:
#: every note's scores move with any note's length and any word's document frequency; 317
#: MB a save in all, the unchanged chunk tokens linked), and a vault edited without pause
#: is rebuilt every 2-3 minutes there (:data:`REBUILD_GAP_FACTOR`): up to ~7 GB an hour of
#: disk writes if each were saved (411 MB each before the links), ~0.65 GB so. A saved
#: index older than the vault costs a start that finds it only a rebuild from its chunk
#: tokens (the changed chunks read: 14.7 s of CPU at 100,000 notes) instead of reading it
#: (0.7 s), however old. The first index a process builds is saved at once, whatever the
#: gap: held, it would serve from the heap with its lexicon (at 100,000 notes 288 MB of
#: score matrix and 169 MB of token arrays that a saved index keeps on disk) for up to this
#: long after a start, and a start writes one save at most.
SAVE_GAP_S = 1800.0
#: The close saves an index held only when the last save took at most this long (seconds;
#: our choice: a third of the daemon's own wait at exit, ``daemon.runner.EXIT_WAIT_S``). At
#: 100,000 notes a save writes 317 MB: 7.3-14.8 s of wall time (3.2-3.6 s of CPU) on the
#: loaded disk it was measured on (``bench/note_bm25_rebuild.py --saved``); a slower save
#: is left to the next start's rebuild.
STOP_SAVE_MAX_S = 10.0
#: Chunks tokenized (or notes assembled) between two looks at whether the build was stopped
#: (our choice: tokenizing 256 chunks takes well under 0.1 s, so a closed process ends that
#: soon; the look itself is one ``Event.is_set``).
STOP_CHECK_EVERY = 256

#: Times the words of the asking side of a chat-like chunk (the user's own turns,
#: :func:`magma.chunking.asking_turns`) count again in its note's document (0: once, as
#: every word). A question asks what the user said; an assistant's long answer around it
#: dilutes it. Measured on the pooled LongMemEval oracle (``bench/fusion_ablation.py --set
#: oracle``, the list at 1.0, no vector floor; recall@5 / @10 / all@10): 0: 0.719 / 0.801 /
#: 0.709, 1: 0.723 / 0.805 / 0.711, 2: 0.726 / 0.809 / 0.717, 3: 0.721 / 0.810 / 0.713,
#: the user's words alone: 0.723 / 0.803 / 0.713.
ASKING_TURN_REPEAT = 2

#: Pseudo-relevance feedback (RM3-like; Lavrenko & Croft, 2001; Abdul-Jaleel et al., 2004):
#: the :data:`FEEDBACK_TERMS` words that weigh most in the first :data:`FEEDBACK_DOCS`
#: notes of a query (by their BM25 weight there, the query's own words left out) are asked
#: again, each at its weight over the heaviest's, times this share (0: off). Off, measured
#: on the pooled LongMemEval oracle (``bench/fusion_ablation.py --set oracle``, recall@5 /
#: @10 / all@10): 0: 0.723 / 0.805 / 0.711, 0.3: 0.718 / 0.810 / 0.715, 0.6: 0.712 /
#: 0.808 / 0.719; what it adds at ten hits it takes from the first five.
FEEDBACK_SHARE = 0.0
FEEDBACK_DOCS = 3
FEEDBACK_TERMS = 10
#: Folders whose notes :meth:`NoteBm25.top` keeps marked for the next search of that folder
#: (our choice: a user searches a few folders; a mark costs a byte a note).
FOLDERS_KEPT = 16
#: Notes ranked by a note-level search per note asked for, and the factor by which that
#: grows when ``keep`` refuses too many of them (:func:`best_rows`; our choice: a search
#: hiding more than three in four of its best notes is rare, and costs one more pass).
TOP_MARGIN = 4

#: The vocabulary is renumbered when it holds this many times the tokens in use (our
#: choice: a note edited a thousand times with new words must not keep them all).
VOCABULARY_SLACK = 2

#: What a build indexes: note path -> (its title, aliases and memory name and description,
#: the content hashes of its chunks).
NoteSpec = Mapping[str, tuple[str, Sequence[str]]]

#: The generation (:meth:`NoteBm25Builder.generation`) of a build whose index is not saved.
NOT_SAVED = -1

#: Raised whenever :func:`bm25_tokens` or what a chunk adds to its note's document
#: (:data:`ASKING_TURN_REPEAT`) gives other tokens: an index saved before is built again.
TOKENS_VERSION = 1

#: Combining marks that belong inside a word (``\\w`` leaves them out): the combining
#: diacritics and the Indic, Thai, Lao and Myanmar blocks (Unicode 15.1 ``Blocks.txt``).
_MARKS = "\u0300-\u036f\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f"
_RUN = re.compile(f"[{CJK_RANGES}]+|(?:[^\\W{CJK_RANGES}]|[{_MARKS}])+")
_CJK_RUN = re.compile(f"[{CJK_RANGES}]")
#: English stop words: the ``bm25s`` library's list (33 words, from scikit-learn's).
_STOP = frozenset(STOPWORDS_EN)


def bm25_tokens(text: str) -> list[str]:
    """Tokens of ``text`` for BM25: ``"Renew the passport 续签护照"`` ->
    ``["renew", "passport", "续签", "签护", "护照"]``."""
    out: list[str] = []
    for run in _RUN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK_RUN.match(run):
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run not in _STOP:
            out.append(run)
    return out


def spec_fingerprint(notes: NoteSpec) -> str:
    """What an index of ``notes`` is the index of, as a hex SHA-256: every note's path, labels
    and chunks' content hashes (in path order), :data:`TOKENS_VERSION`,
    :data:`ASKING_TURN_REPEAT`, the BM25 parameters (Lucene's, k1 1.5, b 0.75: the library's
    defaults, :class:`_CountedBm25`) and the ``bm25s`` version; fields parted by NUL, notes by
    newline. 100,000 notes (928,739 chunks, ``bench/big_vault.py``): 0.2 s of CPU."""
    head = f"{TOKENS_VERSION}\0{ASKING_TURN_REPEAT}\0lucene\0{1.5}\0{0.75}\0{bm25s.__version__}"
    lines = [head, *("\0".join([path, notes[path][0], *notes[path][1]]) for path in sorted(notes))]
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class TermCounts:
    """One document of a :class:`NoteBm25` index: its distinct token ids (``int32``,
    ascending), how often each occurs (``int32``, same length) and its length in tokens."""

    ids: np.ndarray
    counts: np.ndarray
    length: int

    @classmethod
    def of(cls, token_ids: Sequence[int] | np.ndarray) -> TermCounts:
        """The counts of a document given as its token ids, in order."""
        tokens = np.asarray(token_ids, dtype=np.int32)
        ids, counts = np.unique(tokens, return_counts=True)
        return cls(ids.astype(np.int32, copy=False), counts.astype(np.int32), int(tokens.size))


@dataclass(frozen=True, slots=True)
class _Corpus:
    """What ``bm25s.BM25.index`` takes as "an object with the ``ids`` and ``vocab``
    attributes": here each document is a :class:`TermCounts`."""

    ids: list[TermCounts]
    vocab: dict[str, int]


class _CountedBm25(bm25s.BM25):
    """``bm25s``'s index built from :class:`TermCounts` with a few array operations, through
    ``build_index_from_ids``, the hook the library documents for building its index another
    way. Its own build counts each document's tokens in Python (``collections.Counter``),
    a Python object per token: a rebuild of the 6,914-note bench vault took 1.6 s of CPU,
    0.5 s this way (``bench/note_bm25_rebuild.py``); the first build of the 100,000 notes of
    ``bench/big_vault.py``, tokenizing included, 115 s and +2.9 GB of RSS while it ran, 81 s
    and +1.0 GB this way. Each document's scores are written where they go in the
    token-major matrix, with no array over every entry but the matrix's own. The score
    matrix is the same, value for value (the same float64 expression per entry, the same
    ``math.log`` per document frequency; tested against the library's build); only the
    library's defaults (Lucene's BM25) are built this way."""

    def build_index_from_ids(self, unique_token_ids: list[int],
                             corpus_token_ids: Sequence[TermCounts], show_progress: bool = False,
                             leave_progress: bool = False) -> dict[str, object]:
        if self.method != "lucene" or self.idf_method != "lucene":
            raise ValueError(f"only Lucene's BM25 is built from counts, not {self.method}")
        self.nonoccurrence_array = None  # (as the library's build, for Lucene's BM25)
        docs = corpus_token_ids
        n_docs, n_vocab = len(docs), len(unique_token_ids)
        lengths = np.array([d.length for d in docs])
        avg_doc_len = lengths.mean()  # (as the library: float64)
        frequencies = np.zeros(n_vocab, dtype=np.int64)
        for d in docs:
            frequencies[d.ids] += 1  # (a document's ids are distinct)
        distinct, inverse = np.unique(frequencies, return_inverse=True)
        # Lucene's idf, math.log once per distinct document frequency (as the library)
        idf = np.array([math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) if df else 0.0
                        for df in distinct.tolist()])[inverse].astype(self.dtype)
        k1, b = self.k1, self.b
        norm = k1 * ((1 - b) + b * lengths / avg_doc_len)  # float64, per document
        # each document's scores go straight to their places in the token-major matrix:
        # documents in order, so each token's documents ascend (the library's order)
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(frequencies, out=indptr[1:])
        free = indptr[:-1].copy()
        data = np.empty(int(indptr[-1]), dtype=self.dtype)
        indices = np.empty(int(indptr[-1]), dtype=self.int_dtype)
        for row, d in enumerate(docs):
            at = free[d.ids]
            free[d.ids] += 1
            tf = d.counts.astype(self.dtype).astype(np.float64)
            data[at] = (idf[d.ids] * (tf / (norm[row] + tf))).astype(self.dtype)
            indices[at] = row
        return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}


@dataclass(frozen=True, slots=True)
class NoteBm25:
    """A BM25 index over ``paths`` (one document per note)."""

    paths: tuple[str, ...]
    _index: bm25s.BM25 | None
    #: Called when the index's arrays turn out damaged at a search (a saved index's).
    _broken: Callable[[], None] | None = None
    #: Which of ``paths`` are in each folder searched (:meth:`top`'s ``prefix``), by folder.
    _folders: dict[str, np.ndarray] = field(default_factory=dict, compare=False)

    @classmethod
    def saved(cls, saved: SavedNoteBm25, broken: Callable[[], None] | None = None
              ) -> NoteBm25:
        """The index read back from its folder (:mod:`magma.note_bm25_files`);
        ``broken()`` is called when a search finds its files damaged."""
        return cls(saved.paths, saved.index if saved.paths else None, broken)

    @classmethod
    def build(cls, documents: Mapping[str, Sequence[str]]) -> NoteBm25:
        """Index ``documents`` (note path -> its tokens, :func:`bm25_tokens`)."""
        vocabulary: dict[str, int] = {}
        ids = {path: [vocabulary.setdefault(t, len(vocabulary)) for t in tokens]
               for path, tokens in documents.items()}
        return cls.from_ids(ids, vocabulary)

    @classmethod
    def from_ids(cls, documents: Mapping[str, Sequence[int] | np.ndarray],
                 vocabulary: Mapping[str, int]) -> NoteBm25:
        """Index ``documents`` (note path -> its tokens as ids of ``vocabulary``, token ->
        id, ids ``0..len(vocabulary)-1``)."""
        return cls.from_counts({p: TermCounts.of(ids) for p, ids in documents.items()},
                               vocabulary)

    @classmethod
    def from_counts(cls, documents: Mapping[str, TermCounts], vocabulary: Mapping[str, int]
                    ) -> NoteBm25:
        """Index ``documents`` (note path -> the counts of its tokens, ids of
        ``vocabulary`` as in :meth:`from_ids`)."""
        paths = tuple(p for p, counts in documents.items() if counts.length)
        if not paths:
            return cls((), None)
        index = _CountedBm25()
        index.index(_Corpus([documents[p] for p in paths], dict(vocabulary)),
                    create_empty_token=False, show_progress=False)
        return cls(paths, index)

    def top(self, query: str, n: int, keep: Callable[[str], bool], prefix: str | None = None
            ) -> list[tuple[str, float]]:
        """The ``n`` best notes for ``query`` that ``keep`` allows -> ``(path, score)``,
        best first (equal scores in index order); notes that share no token with the query
        (nor, with :data:`FEEDBACK_SHARE`, with its feedback words) are not returned.
        ``prefix``: the folder ``keep`` allows, if it asks one: the notes outside it are
        left out at once, not each asked of ``keep`` (a folder of a thousand notes among
        100,000 asked ``keep`` of thousands of notes before it)."""
        if self._index is None or n <= 0:
            return []
        ids = self._index.get_tokens_ids(bm25_tokens(query))
        if not ids:
            return []
        try:
            scores = self._index.get_scores_from_ids(ids)
            if FEEDBACK_SHARE > 0:
                scores = scores + FEEDBACK_SHARE * self._feedback(scores, ids)
        except (IndexError, ValueError) as error:  # a saved file damaged under the mapping
            log.warning("search.note_bm25_unreadable", error=str(error)[:300],
                        hint="the index is built again")
            if self._broken is not None:
                self._broken()
            return []
        rows = np.flatnonzero(scores > 0.0)  # only these are ranked: no sort of the rest
        if prefix:
            rows = rows[self._in_folder(prefix)[rows]]
        take = max(n * TOP_MARGIN, TOP_MARGIN)
        while True:
            order, whole = best_rows(rows, scores, take)
            found: list[tuple[str, float]] = []
            for row in order.tolist():
                if keep(self.paths[row]):
                    found.append((self.paths[row], float(scores[row])))
                    if len(found) >= n:
                        return found
            if whole:
                return found
            take *= TOP_MARGIN  # ``keep`` refused too many of the best: rank more of them

    def _in_folder(self, prefix: str) -> np.ndarray:
        """``bool[notes]``: which notes' paths start with ``prefix``, kept for the next
        search of that folder (:data:`FOLDERS_KEPT` folders at most)."""
        mask = self._folders.get(prefix)
        if mask is None:
            if len(self._folders) >= FOLDERS_KEPT:
                self._folders.clear()
            mask = np.fromiter((p.startswith(prefix) for p in self.paths), dtype=bool,
                               count=len(self.paths))
            self._folders[prefix] = mask
        return mask


    def _feedback(self, scores: np.ndarray, asked: Sequence[int]) -> np.ndarray:
        """Each note's score for the feedback words of a query whose first scores are
        ``scores`` (its token ids ``asked``), ``float[notes]``."""
        assert self._index is not None
        matrix = self._index.scores
        data, docs, starts = matrix["data"], matrix["indices"], matrix["indptr"]
        first = np.argsort(-scores, kind="stable")[:FEEDBACK_DOCS]
        first = first[scores[first] > 0]
        extra = np.zeros(len(scores), dtype=np.float32)
        if not len(first):
            return extra
        at = np.nonzero(np.isin(docs, first))[0]
        tokens = np.searchsorted(starts, at, side="right") - 1
        weight = np.bincount(tokens, weights=data[at], minlength=len(starts) - 1)
        weight[np.asarray(list(asked), dtype=np.int64)] = 0.0
        chosen = np.argsort(-weight, kind="stable")[:FEEDBACK_TERMS]
        chosen = chosen[weight[chosen] > 0]
        if not len(chosen):
            return extra
        for token, share in zip(chosen.tolist(), (weight[chosen] / weight[chosen[0]]).tolist(),
                                strict=True):
            span = slice(starts[token], starts[token + 1])
            extra[docs[span]] += np.float32(share) * data[span]
        return extra


class BuildStopped(Exception):
    """A build of a :class:`NoteBm25` index was stopped (its process is closing it)."""


class NoteLexicon:
    """The tokens of every chunk seen, by content hash, to build :class:`NoteBm25` indexes:
    token ids (``int32``, 4 bytes a token: ~16 MB for the 4 million tokens of a 6,000-note
    vault) of one vocabulary, renumbered when it holds :data:`VOCABULARY_SLACK` times the
    tokens in use.

    Thread use: one build at a time (:class:`NoteBm25Builder` has one thread).
    """

    def __init__(self, vocabulary: Mapping[str, int] | None = None,
                 chunks: Mapping[str, np.ndarray] | None = None) -> None:
        """An empty lexicon, or one that knows ``chunks`` (content hash -> token ids of
        ``vocabulary``, token -> id: a saved index's, :meth:`SavedNoteBm25.chunk_tokens`)."""
        self._vocabulary: dict[str, int] = dict(vocabulary or {})
        self._by_hash: dict[str, np.ndarray] = dict(chunks or {})
        self._checked = len(self._vocabulary)  # vocabulary size at the last look for unused

    @property
    def chunks(self) -> Mapping[str, np.ndarray]:
        """The token ids of every chunk known, by content hash (read only)."""
        return self._by_hash

    @property
    def vocabulary_size(self) -> int:
        """Distinct tokens known (those of removed chunks too, until renumbered)."""
        return len(self._vocabulary)

    def missing(self, hashes: Iterable[str]) -> set[str]:
        """The content hashes among ``hashes`` whose tokens are not known yet."""
        return {h for h in hashes if h not in self._by_hash}

    def learn(self, bodies: Mapping[str, str], stop: Callable[[], bool] = lambda: False) -> None:
        """Tokenize chunk ``bodies`` (content hash -> body text). Raises
        :class:`BuildStopped` when ``stop()`` turns true (every chunk learnt so far is kept
        whole)."""
        for n, (content_hash, body) in enumerate(bodies.items()):
            if n % STOP_CHECK_EVERY == 0 and stop():
                raise BuildStopped
            ids = self._ids(body)
            said = asking_turns(body) if ASKING_TURN_REPEAT > 0 else ""
            if said:
                ids = np.concatenate([ids, *([self._ids(said)] * ASKING_TURN_REPEAT)])
            self._by_hash[content_hash] = ids

    def build(self, notes: NoteSpec, stop: Callable[[], bool] = lambda: False) -> NoteBm25:
        """Index ``notes`` (path -> (its title and aliases, its chunks' content hashes));
        tokens of chunks no longer in any note are forgotten. Raises :class:`KeyError` for
        a content hash that was never learnt, :class:`BuildStopped` when ``stop()`` turns
        true before the index is made."""
        if stop():
            raise BuildStopped
        live = {h for _, hashes in notes.values() for h in hashes}
        missing = live - set(self._by_hash)
        if missing:
            raise KeyError(f"note bm25: chunk {sorted(missing)[0]} never learnt")
        for stale in set(self._by_hash) - live:
            del self._by_hash[stale]
        if len(self._vocabulary) > 1.5 * self._checked:  # counting the used ones costs
            if len(self._vocabulary) > VOCABULARY_SLACK * max(self._used(), 1):
                self._compact()
            self._checked = len(self._vocabulary)
        documents: dict[str, TermCounts] = {}
        for n, (path, (label, hashes)) in enumerate(notes.items()):
            if n % STOP_CHECK_EVERY == 0 and stop():
                raise BuildStopped
            documents[path] = TermCounts.of(np.concatenate([self._ids(label),
                                                            *(self._by_hash[h] for h in hashes)]))
        if stop():
            raise BuildStopped
        return NoteBm25.from_counts(documents, self._vocabulary)

    def _used(self) -> int:
        arrays = list(self._by_hash.values())
        return int(np.unique(np.concatenate(arrays)).size) if arrays else 0

    def _compact(self) -> None:
        """Drop the tokens no chunk holds any more and renumber the rest."""
        arrays = list(self._by_hash.values())
        used = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, np.int32)
        remap = np.full(len(self._vocabulary), -1, dtype=np.int32)
        remap[used] = np.arange(used.size, dtype=np.int32)
        self._vocabulary = {t: int(remap[i]) for t, i in self._vocabulary.items()
                            if remap[i] >= 0}
        self._by_hash = {h: remap[ids] for h, ids in self._by_hash.items()}

    def _ids(self, text: str) -> np.ndarray:
        vocabulary = self._vocabulary
        return np.fromiter((vocabulary.setdefault(t, len(vocabulary))
                            for t in bm25_tokens(text)), dtype=np.int32)


def _failed(build: Future[NoteBm25 | None]) -> bool:
    """Did ``build`` end without an index (a failed read: the next search tries again)?"""
    return build.done() and not build.cancelled() and build.result() is None


@dataclass(frozen=True, slots=True)
class _Held:
    """An index built and not saved yet, with what its save needs."""

    fingerprint: str
    notes: NoteSpec
    built: NoteBm25
    generation: int


class NoteBm25Builder:
    """Builds :class:`NoteBm25` indexes off the search path, one at a time, in its own
    thread, from a :class:`NoteLexicon` kept across builds; the last index built serves
    while the next is built.

    ``read_bodies(hashes)`` gives ``{content_hash: body}`` of those chunks (``None``: every
    chunk), e.g. :meth:`magma.store.MagmaStore.chunk_bodies`. With ``files``
    (:class:`magma.note_bm25_files.NoteBm25Files`) the first build reads the index saved
    there when it indexes the same notes (:func:`spec_fingerprint`), else builds from the
    chunk tokens saved with it (only the chunks not among them are read); an index built
    is saved and served memory-mapped, its lexicon left on disk until the next build, once
    :data:`SAVE_GAP_S` has passed since the saved one was written (else it serves from the
    heap and is saved when the gap has passed, or by :meth:`close`), and at once when this
    builder has served none from its files yet (a start that found the saved one stale). A
    save that failed (a full disk, a read-only folder) is tried again once the gap has
    passed since, not at every build.
    ``current()`` gives the key of the store's snapshot now (its table versions,
    :meth:`magma.store.MagmaStore.versions`): the index of an older one is not saved, as a
    forget since may have taken one of its notes.
    """

    def __init__(self, read_bodies: Callable[[Collection[str] | None], Mapping[str, str]],
                 files: NoteBm25Files | None = None,
                 current: Callable[[], object] | None = None) -> None:
        self._read_bodies = read_bodies
        self._files = files
        self._current = current
        self._saved: SavedNoteBm25 | None = None  # the index on disk this process serves
        self._looked = files is None  # has the first build looked for a saved index?
        self._lexicon: NoteLexicon | None = None  # None: seeded from _saved when needed
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dreamd-bm25")
        self._last = NoteBm25((), None)
        self._lock = threading.Lock()
        self._key: object = None  # the snapshot the newest build is of
        self._pending: Future[NoteBm25 | None] | None = None  # the newest build
        self._next_build_at = 0.0  # time.monotonic() from which a rebuild may start
        self._stop = threading.Event()  # set by close(): a build under way gives up
        self._work = threading.Lock()  # held by a build or a save (they share the lexicon)
        self._held: _Held | None = None  # the newest index built and not saved yet
        self._timer: threading.Timer | None = None  # saves _held once SAVE_GAP_S passed
        self._mapped_once = False  # has this process served an index read from its files?
        self._failed_at: float | None = None  # when a save last failed (time.time())

    def generation(self) -> int:
        """The forgets counted by the saved index's folder
        (:meth:`magma.note_bm25_files.NoteBm25Files.generation`; 0 without one)."""
        return self._files.generation() if self._files is not None else 0

    def index_for(self, key: object, spec: Callable[[], NoteSpec],
                  wait_s: float = BM25_WAIT_S, *, fresh: bool = False) -> NoteBm25:
        """The index of the snapshot ``key`` names (a store's table versions, say): its
        build of the notes ``spec()`` names starts the first time the key is asked for (once
        an index was built, not before :data:`REBUILD_GAP_FACTOR` times the last build's time
        has passed since it ended, unless ``fresh``: till then the last index answers); then
        as :meth:`index`."""
        with self._lock:
            due = fresh or not self._last.paths or time.monotonic() >= self._next_build_at
            if self._pending is None or _failed(self._pending) or (key != self._key and due):
                self._key = key
                # the forgets counted, then whether the snapshot is the store's now: a
                # forget after the count stops the save; one before it was in the snapshot
                generation = self.generation()
                current = self._current is None or key == self._current()
                self.submit(spec, generation if current else NOT_SAVED)
            pending = self._pending
        return self.index(pending, wait_s, fresh=fresh)

    def submit(self, spec: Callable[[], NoteSpec], generation: int | None = None
               ) -> Future[NoteBm25 | None]:
        """Start a build of the notes ``spec()`` names -> its future (``None`` when the
        bodies could not be read; the failure is logged). A build still waiting for the
        thread is cancelled: only the newest snapshot is worth indexing. ``generation``: the
        saved index folder's forgets counted before the snapshot ``spec`` reads was taken
        (default: now; :data:`NOT_SAVED`: the index is not saved)."""
        if self._pending is not None:
            self._pending.cancel()  # no-op once it runs or ran
        if generation is None:
            generation = self.generation()
        self._pending = self._pool.submit(self._build, spec, generation)
        return self._pending

    def index(self, pending: Future[NoteBm25 | None] | None,
              wait_s: float = BM25_WAIT_S, *, fresh: bool = False) -> NoteBm25:
        """The index ``pending`` builds, waiting for it up to ``wait_s`` seconds (at most
        :data:`BM25_STALE_WAIT_S` once an index was built, unless ``fresh``), else the last
        one built (empty before the first)."""
        if pending is not None:
            if self._last.paths and not fresh:
                wait_s = min(wait_s, BM25_STALE_WAIT_S)
            with contextlib.suppress(FutureTimeout, CancelledError):
                built = pending.result(timeout=wait_s)
                if built is not None:
                    return built
        return self._last

    def close(self, *, save: bool = True) -> None:
        """Stop the build thread: a build waiting for it is cancelled, a build under way
        gives up within :data:`STOP_CHECK_EVERY` chunks or notes (or once the store's read
        it is in returns). Python joins the thread when the process exits, so a one-shot
        command that asked for an index it had no time to use (``dreamd search`` in a big
        vault without the daemon) no longer waits for it to be built before it ends. With
        ``save``, an index built and not saved yet (:data:`SAVE_GAP_S`) is saved now, unless
        a build or a save is under way (the close never waits for one) or the last save took
        longer than :data:`STOP_SAVE_MAX_S`."""
        self._stop.set()
        if self._timer is not None:
            self._timer.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if not save or self._held is None or self._files is None:
            return
        took = self._files.save_seconds()
        if took is not None and took > STOP_SAVE_MAX_S:
            log.info("search.note_bm25_not_saved", reason="its last save took too long to "
                     "wait for at the close", seconds=took)
        elif self._work.acquire(blocking=False):
            try:
                self._save_held()
            finally:
                self._work.release()

    def _save_later(self) -> None:
        """The timer's: save the index held once :data:`SAVE_GAP_S` passed, in the build
        thread (after a build under way)."""
        with contextlib.suppress(RuntimeError):  # (closed meanwhile)
            self._pool.submit(self._save_held_now)

    def _save_held_now(self) -> None:
        with self._work:
            self._save_held()

    def _save_held(self) -> None:
        """Save the index held (the caller holds ``_work``) and serve it mapped."""
        held, self._held = self._held, None
        if held is None or self._files is None or self._lexicon is None:
            return
        try:
            chunks = {h: self._lexicon.chunks[h]
                      for _, hashes in held.notes.values() for h in hashes}
        except KeyError:  # (a failed build since forgot some: the next build saves)
            return
        mapped = self._saved_as(held.fingerprint, held.built, chunks, held.generation)
        if mapped is None:
            return
        with self._lock:
            if self._last is held.built:
                self._last = mapped
            if self._pending is not None and self._pending.done() and \
                    not self._pending.cancelled() and self._pending.result() is held.built:
                done: Future[NoteBm25 | None] = Future()
                done.set_result(mapped)
                self._pending = done
        trim_heap()

    def _build(self, spec: Callable[[], NoteSpec], generation: int = 0) -> NoteBm25 | None:
        with self._work:
            return self._build_now(spec, generation)

    def _build_now(self, spec: Callable[[], NoteSpec], generation: int) -> NoteBm25 | None:
        started = time.monotonic()
        try:
            built = self._index_of(spec(), generation)
            # the build's scaffolding (every note's tokens) stays in the C heap otherwise:
            # 100,000 notes, 3.0 GB of RSS after the build, 2.3 GB once trimmed
            trim_heap()
        except BuildStopped:
            return None
        except (DreamdError, KeyError) as error:  # a store gone, a chunk changed meanwhile
            log.warning("search.note_bm25_failed", error=str(error))
            return None
        except Exception as error:  # an optional list must never fail a search
            log.exception("search.note_bm25_failed", error=repr(error))
            if self._saved is not None:  # (its files may be what failed: never read again)
                self._drop_saved(self._saved)
            return None
        ended = time.monotonic()
        self._next_build_at = ended + REBUILD_GAP_FACTOR * (ended - started)
        self._last = built
        return built

    def _index_of(self, notes: NoteSpec, generation: int) -> NoteBm25:
        """The index of ``notes``: the saved one when it indexes them, else built (and
        saved)."""
        stop = self._stop.is_set
        fingerprint = spec_fingerprint(notes) if self._files is not None else ""
        if not self._looked:
            assert self._files is not None
            self._looked = True
            self._saved = self._files.load()
            if self._saved is not None:
                log.info("search.note_bm25_loaded", notes=len(self._saved.paths),
                         same=self._saved.fingerprint == fingerprint)
        if self._saved is not None and self._saved.fingerprint == fingerprint:
            self._mapped_once = True
            return NoteBm25.saved(self._saved, functools.partial(self._drop_saved, self._saved))
        if self._lexicon is None:  # (views of the saved file: read, never copied whole)
            self._lexicon = NoteLexicon(self._saved.index.vocab_dict,
                                        self._saved.chunk_tokens()) \
                if self._saved is not None else NoteLexicon()
        lexicon = self._lexicon
        hashes = [h for _, chunk_hashes in notes.values() for h in chunk_hashes]
        missing = lexicon.missing(hashes)
        if missing:
            every = len(missing) * 2 > len(hashes)  # one scan beats many IN lists
            lexicon.learn(self._read_bodies(None if every else missing), stop)
        built = lexicon.build(notes, stop)
        if self._files is None:
            return built
        self._held = None
        if built._index is None:  # no words left: neither may a saved index keep any
            if self._saved is not None:
                self._files.discard()
                self._saved = None
            return built
        if generation == NOT_SAVED:
            return built
        # saved at once after a forget (nothing written), and the first time this process
        # serves an index: a start that found the saved one stale would otherwise hold the
        # rebuilt one in the heap for up to SAVE_GAP_S (100,000 notes: ~450 MB of RSS)
        written = self._files.written() if self._mapped_once else None
        if self._failed_at is not None:  # a full disk, a read-only folder: not at every build
            written = max(written or 0.0, self._failed_at)
        wait_s = 0.0 if written is None else SAVE_GAP_S - (time.time() - written)
        if wait_s > 0:  # saved later (a timer, or the close)
            self._held = _Held(fingerprint, notes, built, generation)
            if self._timer is None or not self._timer.is_alive():
                self._timer = threading.Timer(wait_s, self._save_later)
                self._timer.daemon = True
                self._timer.start()
            return built
        return self._saved_as(fingerprint, built, lexicon.chunks, generation) or built

    def _saved_as(self, fingerprint: str, built: NoteBm25, chunks: Mapping[str, np.ndarray],
                  generation: int) -> NoteBm25 | None:
        """Save ``built`` -> it read back mapped (``None``: not saved, it serves from the
        heap)."""
        assert self._files is not None and built._index is not None
        started = time.monotonic()
        try:
            saved = self._files.save(fingerprint, built.paths, built._index, chunks,
                                     generation)
        except (OSError, ValueError) as error:  # a full disk: the index serves from the heap
            log.warning("search.note_bm25_not_saved", error=str(error))
            self._failed_at = time.time()  # tried again once SAVE_GAP_S has passed
            return None
        self._failed_at = None
        if saved is None:
            return None
        log.info("search.note_bm25_saved", notes=len(saved.paths),
                 seconds=round(time.monotonic() - started, 2))
        self._saved, self._lexicon = saved, None  # the heap's copies go
        self._mapped_once = True
        return NoteBm25.saved(saved, functools.partial(self._drop_saved, saved))

    def _drop_saved(self, saved: SavedNoteBm25) -> None:
        """Remove ``saved`` (damaged: a search or a build failed on its arrays) and build
        the index again from the chunks' bodies at the next ask."""
        assert self._files is not None
        with self._lock:
            if self._saved is not saved:
                return  # (dropped already, or replaced by a newer index)
            self._files.remove(saved.fingerprint)
            self._saved, self._lexicon, self._held = None, None, None
            self._last, self._key = NoteBm25((), None), None


def best_rows(rows: np.ndarray, scores: np.ndarray, take: int) -> tuple[np.ndarray, bool]:
    """The first ``take`` or more of ``rows`` (``int64[m]``, ascending) by ``scores[row]``,
    best first, equal scores in row order, and whether that is every row -> the same prefix
    as a stable sort of all of them: the rows scoring at least the ``take``-th best score
    (ties with it all kept) are sorted, the rest only partitioned away (O(m), where a sort of
    the 60,000 notes holding a common word of a 100,000-note vault took most of a note-level
    search)."""
    if take >= len(rows):
        return rows[np.argsort(-scores[rows], kind="stable")], True
    chosen = scores[rows]
    cut = np.partition(chosen, len(chosen) - take)[len(chosen) - take]
    best = rows[chosen >= cut]
    return best[np.argsort(-scores[best], kind="stable")], len(best) == len(rows)
