"""Write-time duplicate handling: is a new memory a duplicate, an update, a contradiction or new?

Pure functions of typed values; no clock, no store, no model. The caller (``remember``, the
Extractor, the dream, the checker) gives the draft and the currently stored memories with their
content hashes and, when it has them, their embeddings (the first chunk's vector).

:func:`decide`:

1. **Exact duplicate.** Same normalised content hash (:func:`normalised_hash` of
   :func:`normalise_text`), same type, no explicit subject that differs → :class:`Duplicate`;
   nothing is written.
2. **Candidates by meaning.** The :data:`CANDIDATES_BY_COSINE` nearest memories by cosine, the
   :data:`CANDIDATES_BY_WORDS` whose words share most with the draft's (Dice ≥
   :data:`CANDIDATE_LEXICAL`; order-free, normalised words: :mod:`consistency.claims`), and
   every memory of the same subject. Neither a subject nor identical wording is needed.
3. **Judged.** Each candidate pair goes through :func:`consistency.judgement.judge_pair`
   (values, polarity, frame, events, languages); the best verdict decides: a duplicate merges
   (:class:`Update`; :func:`merge_bodies` keeps every sentence), a contradiction supersedes
   (:class:`Supersede`; both files stay), two dated events are a :class:`Series`, an unsure
   pair is :class:`Possible` (both kept and linked), else :class:`New`.
4. **Never two versions in one memory.** A duplicate that keeps some sentences word for word
   and edits another (:func:`edited_sentence`) is only :class:`Possible`.

Measured on the labelled pairs of ``bench/write_pairs`` with ``bench/write_decisions.py``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Literal, TypeAlias

import numpy as np

from ccb.memory_file import content_hash_normalised, normalise_text
from ccb.model import MemoryType
from consistency.claims import Claim, dice, dice_each, read_claim
from consistency.judgement import MemorySide, PairJudgement, judge_pair, subject_key
from consistency.lifecycle import MemoryState, is_current
from magma.text import HAN_RANGES

__all__ = [
    "Decision",
    "Duplicate",
    "MemoryDraft",
    "MemoryFacts",
    "New",
    "Possible",
    "Series",
    "Supersede",
    "Update",
    "Vectors",
    "claim_of",
    "claim_text",
    "cosine_similarity",
    "decide",
    "judge",
    "merge_bodies",
    "normalise_text",
    "normalised_hash",
    "split_sentences",
]



# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """A memory about to be written.

    ``content_hash`` is the caller's hash of the *normalised* memory text (see
    :func:`normalised_hash`); ``embedding`` is a 1-D float vector of the memory text (any
    width, need not be normalised) or ``None`` when no model ran; ``written`` the day it is
    written (dates without a year, "yesterday"); ``claim`` the read claim when the caller has
    it (else it is read from the text).
    """

    type: MemoryType
    subject: str | None
    name: str
    description: str
    body: str
    content_hash: str
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    written: date | None = None
    claim: Claim | None = field(default=None, compare=False, repr=False)
    #: Where the memory was read from (``Daily/2026-06-15.md:5-8``): its ``derived_from``.
    derived_from: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class MemoryFacts:
    """A stored memory as the duplicate test sees it: a draft's fields plus ``id`` and validity.

    ``state`` is what decides whether it is current (status, ``valid_to``, ``expires``): only
    memories current on the day the draft is written (:meth:`current_on`, the one rule of
    :func:`consistency.lifecycle.is_current`) take part in :func:`decide`. ``subject_inferred``:
    dreamd wrote the subject from the text (a hint, not the writer's word).
    """

    id: str
    type: MemoryType
    subject: str | None
    name: str
    description: str
    body: str
    content_hash: str
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    state: MemoryState = field(default_factory=MemoryState)
    written: date | None = None
    subject_inferred: bool = False
    claim: Claim | None = field(default=None, compare=False, repr=False)

    def current_on(self, day: date | None) -> bool:
        """Is the memory current on ``day`` (:func:`consistency.lifecycle.is_current`)? An
        unknown day is read as after every date: a ``valid_to`` or ``expires`` set at all
        makes it not current then."""
        return is_current(self.state, day or date.max)


@dataclass(frozen=True, slots=True)
class Duplicate:
    """The draft is already stored (same normalised content hash): write nothing."""

    existing_id: str
    why: PairJudgement | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Update:
    """The draft restates a stored fact: merge into ``existing_id`` (the sentences only the
    draft has are added)."""

    existing_id: str
    why: PairJudgement | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Supersede:
    """The draft contradicts ``existing_id`` (same slot, changed value or polarity).

    Write the draft as a new memory that supersedes the old one; keep both. ``reason`` is a
    human-readable line for the dream diary, e.g. ``"changed value: 30 s → 60 s"``.
    """

    existing_id: str
    reason: str
    why: PairJudgement | None = field(default=None, compare=False)
    #: Other memories the draft may contradict (an older memory of several facts, one of
    #: them the one superseded): linked as possible contradictions, never superseded.
    also_contradicts: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Series:
    """The draft and ``existing_id`` are two events of one kind on two days: both stay live,
    each current for its own day."""

    existing_id: str
    why: PairJudgement | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Possible:
    """Unsure: the draft may be a duplicate of, or contradict, ``existing_id``. Both are kept
    and linked both ways; ``dreamd check`` lists the pair until the user settles it."""

    existing_id: str
    kind: Literal["duplicate", "contradiction"]
    why: PairJudgement | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class New:
    """Nothing stored is the same fact: write the draft as a new memory. ``why`` is the
    judgement of the closest candidate, ``nearest_id`` that candidate, when there was one."""

    why: PairJudgement | None = field(default=None, compare=False)
    nearest_id: str | None = field(default=None, compare=False)


#: The rules of a possible contradiction that read the same fact changed (a value, a
#: polarity, a word, one statement of several): an older memory so judged beside the one a
#: draft supersedes is linked to the draft (:attr:`Supersede.also_contradicts`); a change
#: told in other words ("told changed") is too loose a reason to write a link.
_SAME_FACT_RULES = frozenset({"changed value", "polarity", "changed word",
                              "one statement turned", "one statement told changed"})

#: The closed set of answers of :func:`decide`.
Decision: TypeAlias = Duplicate | Update | Supersede | Series | Possible | New


# --------------------------------------------------------------------------- normalisation

_WHITESPACE = re.compile(r"\s+")


def normalised_hash(text: str) -> str:
    """SHA-256 hex digest of :func:`normalise_text` of ``text`` (the one used by memory files)."""
    return content_hash_normalised(text)


def claim_text(memory: MemoryDraft | MemoryFacts) -> str:
    """What a memory claims: its description and body, one per line. The name is a title
    (``Build notes 2``), so a changed value is never read from it."""
    description, body = memory.description.strip(), memory.body.strip()
    if not description or normalise_text(description).rstrip("…") in normalise_text(body):
        return body or description  # the description repeats the body's first sentence
    return "\n".join(p for p in (description, body) if p)


# --------------------------------------------------------------------------- similarity


def cosine_similarity(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    """Cosine of two 1-D vectors in ``[-1, 1]``; ``None`` when either is missing or all zeros.

    Raises ``ValueError`` when the widths differ (vectors of two different models).
    """
    if a is None or b is None:
        return None
    va = np.asarray(a, dtype=np.float64).ravel()
    vb = np.asarray(b, dtype=np.float64).ravel()
    if va.shape != vb.shape:
        raise ValueError(f"consistency: embeddings of different widths ({va.size} vs {vb.size})")
    norm = float(np.linalg.norm(va)) * float(np.linalg.norm(vb))
    if norm == 0.0 or not math.isfinite(norm):
        return None
    return max(-1.0, min(1.0, float(np.dot(va, vb)) / norm))


_HAN = HAN_RANGES


# --------------------------------------------------------------------------- decision


#: How many of the nearest memories by cosine are judged, beside the memories that share
#: the draft's words (Dice ≥ :data:`CANDIDATE_LEXICAL`, at most :data:`CANDIDATES_BY_WORDS`
#: of them, most alike first) and every memory of its subject.
CANDIDATES_BY_COSINE = 8
CANDIDATE_LEXICAL = 0.3
#: Most memories judged for sharing the draft's words (the most alike by Dice, ties by id;
#: our choice, twice :data:`CANDIDATES_BY_COSINE`). Without a cap every one at Dice ≥ 0.3 was
#: judged, and the pairs a dream judges grew with the square of a group of templated
#: memories. Measured on the planted sets of ``bench/dream_bench.py`` (the consolidation
#: plan of what a dream reads, captured): 2,000 memories, 38 actions, and 10,000 memories,
#: 867 actions, the same with and without the cap.
CANDIDATES_BY_WORDS = 16

_RANK = {"duplicate": 0, "contradiction": 1, "series": 2, "possible_contradiction": 3,
         "possible_duplicate": 4, "distinct": 5}


def claim_of(memory: MemoryDraft | MemoryFacts) -> Claim:
    """The read claim of a memory (its :func:`claim_text`), from the memory when it has one."""
    return memory.claim or read_claim(claim_text(memory), written=memory.written)


#: A caller's store of vectors as :func:`_cosines` reads them: by ``id`` of an embedding,
#: the embedding itself (so that its id is not taken by another), its float64 form and norm.
Vectors = dict[int, tuple[np.ndarray, np.ndarray, float]]


def _vector(embedding: np.ndarray, kept: Vectors | None) -> tuple[np.ndarray, float]:
    """``embedding`` as float64 and its norm, from ``kept`` when it holds them."""
    if kept is not None:
        hit = kept.get(id(embedding))
        if hit is not None and hit[0] is embedding:
            return hit[1], hit[2]
    vector = np.asarray(embedding, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(vector))
    if kept is not None:
        kept[id(embedding)] = (embedding, vector, norm)
    return vector, norm


def _cosines(draft: MemoryDraft, memories: Sequence[MemoryFacts],
             kept: Vectors | None = None) -> list[float | None]:
    """:func:`cosine_similarity` of the draft with each memory, the draft's vector and norm
    taken once, each memory's from ``kept`` when given (the same arithmetic, so the same
    values)."""
    if draft.embedding is None:
        return [None] * len(memories)
    va, norm_a = _vector(draft.embedding, kept)
    out: list[float | None] = []
    for memory in memories:
        if memory.embedding is None:
            out.append(None)
            continue
        vb, norm_b = _vector(memory.embedding, kept)
        if va.shape != vb.shape:
            raise ValueError(f"consistency: embeddings of different widths ({va.size} vs "
                             f"{vb.size})")
        norm = norm_a * norm_b
        out.append(None if norm == 0.0 or not math.isfinite(norm)
                   else max(-1.0, min(1.0, float(np.dot(va, vb)) / norm)))
    return out


def judge(draft: MemoryDraft, memory: MemoryFacts, cosine: float | None = None) -> PairJudgement:
    """:func:`consistency.judgement.judge_pair` of ``memory`` (old) and ``draft`` (new)."""
    if cosine is None:
        cosine = cosine_similarity(draft.embedding, memory.embedding)
    return judge_pair(
        MemorySide(memory.type, memory.subject, claim_of(memory), memory.subject_inferred),
        MemorySide(draft.type, draft.subject, claim_of(draft)), cosine=cosine)


def decide(
    draft: MemoryDraft,
    existing: Sequence[MemoryFacts],
    *,
    vectors: Vectors | None = None,
) -> Decision:
    """Decide what writing ``draft`` means given the ``existing`` memories.

    Only memories current on the day the draft is written (:meth:`MemoryFacts.current_on`
    of ``draft.written``) are considered. Equal
    ``content_hash`` → :class:`Duplicate`. Otherwise the candidates — the
    :data:`CANDIDATES_BY_COSINE` nearest by cosine, the :data:`CANDIDATES_BY_WORDS` whose
    tokens share most with the draft's (Dice ≥ :data:`CANDIDATE_LEXICAL`, ties by id), every
    memory of the same subject — are judged
    (:func:`consistency.judgement.judge_pair`), and the best verdict decides, in the order
    duplicate (:class:`Update`), contradiction (:class:`Supersede`), series
    (:class:`Series`), possible contradiction or duplicate (:class:`Possible`); else
    :class:`New`. Ties go to the most similar candidate, then the smallest id. Neither a
    subject nor identical wording is needed.
    ``vectors`` (a dict the caller keeps, empty at first) keeps each embedding's float64 form
    and norm for the next call: a dream decides thousands of memories against the same
    older ones (222,744 norms over the planted 10,000 memories of ``bench/dream_bench.py``).
    Deterministic; raises ``ValueError`` only when two embeddings have different widths.
    """
    current = [m for m in existing if m.current_on(draft.written)]
    subject = subject_key(draft.subject)
    same_hash = sorted(
        m.id for m in current
        if m.content_hash == draft.content_hash and m.type == draft.type
        and not (subject and subject_key(m.subject) not in {None, subject}
                 and not m.subject_inferred))
    if same_hash:
        return Duplicate(same_hash[0])
    if not current:
        return New()
    new_claim = claim_of(draft)
    draft = replace(draft, claim=new_claim)
    cosines = _cosines(draft, current, vectors)
    order = sorted(range(len(current)), key=lambda i: (-(cosines[i] or 0.0), current[i].id))
    chosen = set(order[:CANDIDATES_BY_COSINE])
    others: list[int] = []
    for i, memory in enumerate(current):
        if bool(subject) and subject_key(memory.subject) == subject:
            chosen.add(i)
        else:
            others.append(i)
    overlaps = dice_each(new_claim.tokens, (claim_of(current[i]).tokens for i in others))
    alike = [(-overlap, current[i].id, i) for i, overlap in zip(others, overlaps, strict=True)
             if overlap >= CANDIDATE_LEXICAL]
    chosen.update(i for _o, _id, i in sorted(alike)[:CANDIDATES_BY_WORDS])
    judged = [(judge(draft, current[i], cosines[i]), current[i]) for i in sorted(chosen)]
    judged.sort(key=lambda item: (_RANK[item[0].verdict], -item[0].similarity, item[1].id))
    best, memory = judged[0]
    if best.verdict == "duplicate" and best.rule != "same words":
        edited = edited_sentence(memory.body, draft.body)
        if edited is not None:
            # the same memory with one sentence changed: merging would state both versions
            return Possible(memory.id, "contradiction", edited)
    match best.verdict:
        case "duplicate":
            return Update(memory.id, best)
        case "contradiction":
            return Supersede(memory.id, best.reason(), best, tuple(
                other.id for judged_other, other in judged[1:]
                if judged_other.verdict == "possible_contradiction"
                and judged_other.rule in _SAME_FACT_RULES))
        case "series":
            return Series(memory.id, best)
        case "possible_contradiction":
            return Possible(memory.id, "contradiction", best)
        case "possible_duplicate":
            return Possible(memory.id, "duplicate", best)
    return New(best, memory.id)


#: A new sentence this close (Dice of its words) to a stored one is an edit of it.
EDITED_SENTENCE_LEXICAL = 0.5


def edited_sentence(old_body: str, new_body: str) -> PairJudgement | None:
    """In a memory written again with some sentences kept word for word, a sentence that
    replaces words or values of a stored one ("step 150 runs lint" / "step 150 skips lint",
    a changed flag in a code line): what a merge must not append, since the memory would
    then state both. ``None`` when every new sentence is new information, or when no
    sentence was kept (a restatement, judged as a whole)."""
    seen = {_sentence_key(x) for x in split_sentences(old_body)}
    new_sentences = split_sentences(new_body)
    added = [x for x in new_sentences if _sentence_key(x) not in seen]
    if not added or len(added) == len(new_sentences):
        return None  # nothing kept word for word: a restatement, judged as a whole
    olds = [(x, read_claim(x)) for x in split_sentences(old_body) if _sentence_key(x)]
    for sentence in added:
        claim = read_claim(sentence)
        near = [(dice(claim.tokens, c.tokens), x, c) for x, c in olds]
        near = [n for n in near if n[0] >= EDITED_SENTENCE_LEXICAL]
        if not near:
            continue
        _score, text, closest = max(near, key=lambda n: n[0])
        replaced = _replaced_words(closest, claim)
        if replaced:
            why = judge_pair(MemorySide("user", None, closest),
                             MemorySide("user", None, claim), cosine=None)
            return PairJudgement("possible_contradiction", "edited sentence", None, why.lexical,
                                 why.slot, (f"{text} → {sentence}"[:160],))
    return None


def _replaced_words(old: Claim, new: Claim) -> bool:
    """Does ``new`` replace words or values of ``old`` (each has words or values the other
    lacks), not only reorder or add some?"""
    a, b = _said(old), _said(new)
    return bool(a - b) and bool(b - a)


def _said(claim: Claim) -> set[str]:
    """A claim's words, values, polarity concepts with their signs, and denied words."""
    return (set(claim.tokens) | {f"{c}{sorted(s)}" for c, s in claim.concepts.items()}
            | {f"¬{w}" for w in claim.negated})


# --------------------------------------------------------------------------- merging

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_BLOCK_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|#{1,6}\s+|>\s*)+")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences: at line ends, after ``. ! ?`` plus whitespace, after
    ``。！？``. Pieces are stripped; blank pieces are dropped. Order is kept."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(p.strip() for p in _SENTENCE_END.split(line) if p.strip())
    return out


_CJK_SPACE = re.compile(rf"(?<=[{_HAN}])\s+|\s+(?=[{_HAN}])")


def _sentence_key(sentence: str) -> str:
    """A sentence as compared when merging: markers, case and spacing (also between Chinese
    and Latin text, "用 pnpm" / "用pnpm") and its closing punctuation do not count."""
    key = normalise_text(_BLOCK_MARKER.sub("", sentence))
    return _CJK_SPACE.sub("", key).rstrip(".。!！?？;；")


def _join_sentences(sentences: list[str]) -> str:
    out = sentences[0]
    for sentence in sentences[1:]:
        out += ("" if out.endswith(("。", "！", "？")) else " ") + sentence
    return out


def merge_bodies(old: str, new: str) -> str:
    """Merge two bodies of one fact without losing or repeating a sentence.

    ``old`` is kept byte for byte; the sentences of ``new`` whose normalised form (list, quote
    and heading markers dropped, :func:`normalise_text`) is not already present are appended
    as a new paragraph, keeping ``new``'s lines. Returns ``old`` unchanged when ``new`` adds
    nothing. Every sentence of both inputs is in the result (up to normalisation).
    """
    seen = {_sentence_key(s) for s in split_sentences(old)}
    kept_lines: list[str] = []
    for line in new.splitlines():
        kept: list[str] = []
        for sentence in (p.strip() for p in _SENTENCE_END.split(line)):
            key = _sentence_key(sentence)
            if sentence and key and key not in seen:
                seen.add(key)
                kept.append(sentence)
        if kept:
            kept_lines.append(_join_sentences(kept))
    if not kept_lines:
        return old
    head = old.rstrip()
    addition = "\n".join(kept_lines)
    return f"{head}\n\n{addition}\n" if head else f"{addition}\n"
