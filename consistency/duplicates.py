"""Write-time duplicate handling: is a new memory a duplicate, an update, a contradiction or new?

Pure functions of typed values; no clock, no store, no model. The caller (the writer queue,
``remember``, the dream) gives the draft and the currently stored memories with their content
hashes and, when it has them, their embeddings.

Method (DESIGN.md "Dreaming", the issue "memories that write themselves safely"):

1. **Exact duplicate.** Same normalised content hash (the caller hashes
   :func:`normalise_text` of the memory text, e.g. with :func:`normalised_hash`) → the existing
   memory is returned as :class:`Duplicate`; nothing is written.
2. **Near-duplicate candidates.** Character-bigram **Dice** coefficient
   (``2·|A∩B| / (|A|+|B|)`` over the *multisets* of character bigrams of the normalised text,
   whitespace removed) ``≥ 0.65``, **or** embedding cosine ``≥ 0.9``. Both thresholds come from
   the issue. Character bigrams need no word segmentation, so they work for Chinese (most
   Chinese words are two characters) as well as for English. Dice rather than Jaccard because
   it is the usual string-similarity measure for short texts (Sørensen–Dice, as in the
   ``string-similarity`` family), it weighs the shared part against the average length rather
   than the union, and it is monotone in Jaccard (``J = D / (2 − D)``; 0.65 Dice ≈ 0.48
   Jaccard), so the choice only fixes the scale of the threshold.
3. **Confirmation.** A candidate is the *same fact* only when ``type`` and ``subject`` are equal
   (subjects compared case- and whitespace-insensitively; a missing subject never confirms).
   Different subject or type → unrelated → :class:`New`.
4. **Changed value or negation.** A confirmed candidate whose text differs in a *value* is a
   contradiction → :class:`Supersede` (keep both, the old one gets ``valid_to``); otherwise it
   is the same fact restated → :class:`Update` (merge with :func:`merge_bodies`). Checked, in
   both directions (so the test is symmetric), by :func:`contradiction_reason`:

   - *named values*: weekdays and months (``every Friday`` → ``every Thursday``);
   - *numbers*: numbers, quantities, dates and versions (units ``s/ms/min/h/d/%`` and their
     Chinese forms normalised) where each side has a value the other lacks (``30s`` → ``60s``;
     adding a number to a restatement is not a change);
   - *polarity*: a word that is asserted on one side and negated on the other. The negated
     words are the next two content words after a negation (``not``, ``never``, ``don't``,
     ``avoid``, ``disable``, ``instead of``, ``rather than``, ``over`` after *prefer*; Chinese
     ``不 别 不要 禁止 不再 而不是 而非 …``) within the clause. So ``use pnpm, not npm`` vs
     ``use npm, not pnpm`` (same words, different order), ``always`` vs ``never``, ``do`` vs
     ``don't``, ``enable`` vs ``disable`` are caught;
   - *substituted value*: a short replacement (1–3 words, or Chinese characters) of words that
     appear nowhere in the other text, right after a value slot (``prefer``, ``use``, ``is``,
     ``set … to``, ``in``, ``with`` …; Chinese ``偏好 喜欢 用 使用 是 为 设为 改为 默认 …``) or
     between known antonyms: ``prefers dark mode`` vs ``prefers light mode``.

Known failure modes (deliberately not handled; a dream or a human review catches them):

- paraphrases with low bigram overlap and no embedding are not candidates (→ :class:`New`);
- changed values expressed in words (``thirty seconds`` vs ``a minute``) outside a value slot;
- a substitution of a synonym right after a value slot (``uses Postgres`` vs ``uses Postgresql``)
  reads as a changed value (the safe side: :class:`Supersede` keeps both memories);
- sarcasm, irony, conditionals (``never, unless …``) and negations in Chinese words such as
  ``不同``/``不错``;
- multi-fact memories: one changed value among many facts supersedes the whole memory, and a
  memory that adds a second fact to a first one is an :class:`Update` of it;
- memories without a ``subject`` are only ever caught as exact duplicates.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Literal, TypeAlias

import numpy as np

from ccb.memory_file import clean_text as _clean
from ccb.memory_file import content_hash_normalised, normalise_text
from ccb.model import MemoryType
from consistency.claims import Claim, dice, read_claim
from consistency.judgement import MemorySide, PairJudgement, judge_pair, subject_key

__all__ = [
    "DEFAULT_BIGRAM_THRESHOLD",
    "DEFAULT_COSINE_THRESHOLD",
    "Decision",
    "Duplicate",
    "MemoryDraft",
    "MemoryFacts",
    "New",
    "Possible",
    "Series",
    "Supersede",
    "Update",
    "bigram_similarity",
    "claim_of",
    "claim_text",
    "contradiction_reason",
    "cosine_similarity",
    "decide",
    "fact_text",
    "judge",
    "merge_bodies",
    "normalise_text",
    "normalised_hash",
    "split_sentences",
]

#: Character-bigram Dice threshold for a near-duplicate candidate (from the issue).
DEFAULT_BIGRAM_THRESHOLD = 0.65
#: Embedding cosine threshold for a near-duplicate candidate (from the issue; DESIGN.md measured
#: a paraphrase/unrelated gap of ≈0.66 for USE multilingual v3, so 0.9 is "same statement").
DEFAULT_COSINE_THRESHOLD = 0.9


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


@dataclass(frozen=True, slots=True)
class MemoryFacts:
    """A stored memory as the duplicate test sees it: a draft's fields plus ``id`` and validity.

    A memory is *current* when ``valid_to`` is unset and ``superseded`` is false; only current
    memories take part in :func:`decide`. ``subject_inferred``: dreamd wrote the subject from
    the text (a hint, not the writer's word).
    """

    id: str
    type: MemoryType
    subject: str | None
    name: str
    description: str
    body: str
    content_hash: str
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    valid_to: date | datetime | None = None
    superseded: bool = False
    written: date | None = None
    subject_inferred: bool = False
    claim: Claim | None = field(default=None, compare=False, repr=False)

    @property
    def is_current(self) -> bool:
        """True when neither ``valid_to`` nor ``superseded`` is set."""
        return self.valid_to is None and not self.superseded


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


def fact_text(memory: MemoryDraft | MemoryFacts) -> str:
    """The text a memory is compared by: non-empty name, description and body, one per line."""
    parts = (memory.name, memory.description, memory.body)
    return "\n".join(p.strip() for p in parts if p.strip())


# --------------------------------------------------------------------------- similarity


def _bigrams(text: str) -> Counter[str]:
    squeezed = _WHITESPACE.sub("", normalise_text(text))
    if len(squeezed) < 2:
        return Counter([squeezed]) if squeezed else Counter()
    return Counter(squeezed[i : i + 2] for i in range(len(squeezed) - 1))


def bigram_similarity(a: str, b: str) -> float:
    """Dice coefficient of the character-bigram multisets of ``a`` and ``b``, in ``[0, 1]``.

    Texts are normalised (:func:`normalise_text`) and whitespace is removed first; a text of one
    character counts as that one "bigram". Two texts that are empty after normalisation score
    1.0, one empty text scores 0.0. Symmetric.
    """
    grams_a, grams_b = _bigrams(a), _bigrams(b)
    total = sum(grams_a.values()) + sum(grams_b.values())
    if total == 0:
        return 1.0
    shared = sum((grams_a & grams_b).values())
    return 2.0 * shared / total


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


# --------------------------------------------------------------------------- contradiction

_UNITS = {
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "秒": "s", "秒钟": "s",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms", "毫秒": "ms",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min", "分钟": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "小时": "h",
    "d": "d", "day": "d", "days": "d", "天": "d",
    "%": "%", "percent": "%",
}  # fmt: skip
_NUMBER = re.compile(
    r"(?<![0-9])v?(\d+(?:[.,:/-]\d+)*)"
    r"(?:\s?(%|毫秒|秒钟|秒|分钟|小时|天|[a-z]+))?"
)
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Latin words (with an inner apostrophe), numbers with dots, single Han characters.
_TOKEN = re.compile(rf"[a-z0-9]+(?:['.][a-z0-9]+)*|[{_HAN}]")
_CLAUSE_BREAK = re.compile(r"[,;:!?()\[\]\n，；：！？。、（）]|\.(?!\d)|\bbut\b|但是|但")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _words(
    "a an the to of in on at for with by and or is are be was were it its this that "
    "do does did should must will would can could i we you they he she my our your their "
    "all every any some as from into than then so also just very"
)
_NEGATIONS_EN = _words(
    "not never no don't dont doesn't doesnt didn't didnt won't wont cannot can't cant "
    "shouldn't shouldnt mustn't mustnt isn't aren't avoid avoids avoiding without disable "
    "disables disabled disabling stop stopped nor"
)
_PREFER = _words("prefer prefers preferred preferring favour favor favours favors")
# Chinese negation markers, longest first (matched on the text before tokenising).
_NEGATIONS_ZH = ("而不是", "而非", "不要", "不再", "不用", "不能", "禁止", "避免", "没有", "无需",
                 "别", "勿", "不", "非")  # fmt: skip
#: Content words (a Han run counts as one) after a negation that it negates; set by hand on
#: the test table (1 misses "don't use npm", 3 reaches into the next phrase).
_NEGATION_WINDOW = 2

_SLOTS_EN = _words(
    "prefer prefers preferred like likes use uses using used is are be set to default "
    "defaults via with choose chooses chose pick picks want wants in on at mode theme "
    "switch switched"
)
_SLOTS_ZH = ("偏好", "喜欢", "使用", "用", "是", "为", "设为", "改为", "设置为", "默认", "选择",
             "选", "在", "换成")  # fmt: skip
_ANTONYMS = frozenset(
    frozenset(p)
    for p in (
        ("dark", "light"), ("on", "off"), ("true", "false"), ("yes", "no"),
        ("enable", "disable"), ("enabled", "disabled"), ("allow", "deny"), ("always", "never"),
        ("tabs", "spaces"), ("before", "after"), ("min", "max"), ("minimum", "maximum"),
        ("more", "less"), ("local", "remote"), ("public", "private"), ("sync", "async"),
        ("深", "浅"), ("开", "关"), ("启", "禁"), ("多", "少"), ("前", "后"), ("大", "小"),
    )
)  # fmt: skip
_SYNONYMS = {
    "like": "prefer", "likes": "prefer", "liked": "prefer", "prefers": "prefer",
    "preferred": "prefer", "favour": "prefer", "favor": "prefer", "favours": "prefer",
    "favors": "prefer", "uses": "use", "using": "use", "used": "use", "utilise": "use",
    "utilize": "use", "employ": "use",
}  # fmt: skip


_ARTICLES = frozenset({"the", "a", "an", "my", "our", "your"})


def _stem(token: str) -> str:
    token = _SYNONYMS.get(token, token)
    for suffix in ("ing", "ed", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


_SLOT_STEMS = frozenset(_stem(w) for w in _SLOTS_EN)


def _values(text: str) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for match in _NUMBER.finditer(text):
        unit = _UNITS.get(match.group(2) or "", "")
        found.add((match.group(1).replace(",", "."), unit))
    return found


def _number_reason(a: str, b: str) -> str | None:
    va, vb = _values(a), _values(b)
    only_a, only_b = va - vb, vb - va
    if only_a and only_b:
        old = ", ".join(n + u for n, u in sorted(only_a))
        new = ", ".join(n + u for n, u in sorted(only_b))
        return f"value changed: {old} → {new}"
    return None


# Days and months are values with names: "every Friday" → "every Thursday" is a changed value
# wherever it stands (no value slot needed).
_NAMED_VALUES = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march"
    r"|april|june|july|august|september|october|november|december)s?\b"
    r"|(?:星期|周|礼拜)[一二三四五六日天]|(?:十[一二]|[一二三四五六七八九十])月"
)


def _named_value_reason(a: str, b: str) -> str | None:
    va = {m.group().rstrip("s") for m in _NAMED_VALUES.finditer(a)}
    vb = {m.group().rstrip("s") for m in _NAMED_VALUES.finditer(b)}
    only_a, only_b = va - vb, vb - va
    if only_a and only_b:
        return f"value changed: {', '.join(sorted(only_a))} → {', '.join(sorted(only_b))}"
    return None


def _units_of(clause: str) -> list[str]:
    """Words of a clause: ``¬`` markers, Latin words, and whole Han runs as one unit each."""
    return re.findall(rf"¬|[a-z0-9]+(?:['.][a-z0-9]+)*|[{_HAN}]+", clause)


def _unit_tokens(unit: str) -> list[str]:
    """Comparable tokens of a unit: the stemmed word, or the character bigrams of a Han run."""
    if re.match(f"[{_HAN}]", unit):
        return [unit[i : i + 2] for i in range(max(1, len(unit) - 1))]
    return [] if unit in _STOPWORDS else [_stem(unit)]


def _polarities(text: str) -> dict[str, set[bool]]:
    """Map each content token of ``text`` to the polarities (True: asserted) it appears with."""
    marked = text
    for marker in _NEGATIONS_ZH:
        marked = marked.replace(marker, " ¬ ")
    marked = re.sub(r"\binstead of\b|\brather than\b", " ¬ ", marked)
    result: dict[str, set[bool]] = {}
    for clause in _CLAUSE_BREAK.split(marked):
        pending = 0
        seen_prefer = False
        for unit in _units_of(clause):
            if unit == "¬" or unit in _NEGATIONS_EN or (unit == "over" and seen_prefer):
                pending = _NEGATION_WINDOW
                continue
            seen_prefer = seen_prefer or unit in _PREFER
            tokens = _unit_tokens(unit)
            if not tokens:
                continue
            for token in tokens:
                result.setdefault(token, set()).add(pending == 0)
            pending = max(0, pending - 1)
    return result


def _polarity_reason(a: str, b: str) -> str | None:
    pa, pb = _polarities(a), _polarities(b)
    negated_a = {w for w, p in pa.items() if p == {False}}
    negated_b = {w for w, p in pb.items() if p == {False}}
    if negated_a & negated_b:
        # Both texts negate the same thing: flips elsewhere are word order, not meaning.
        return None
    flipped = sorted(w for w in pa.keys() & pb.keys() if len(pa[w] | pb[w]) == 2
                     and len(pa[w]) == 1 and len(pb[w]) == 1)  # fmt: skip
    if flipped:
        return "negation flipped: " + ", ".join(flipped[:3])
    return None


def _diff_tokens(text: str) -> list[str]:
    return [_stem(t) for t in _TOKEN.findall(text)]


def _is_value_word(token: str) -> bool:
    # Numbers are the number check's business; stopwords carry no value.
    return token not in _STOPWORDS and not any(c.isdigit() for c in token)


def _in_slot(tokens: list[str], start: int) -> bool:
    before = [t for t in tokens[max(0, start - 3) : start] if t not in _ARTICLES]
    if before and before[-1] in _SLOT_STEMS:
        return True
    tail = "".join(tokens[max(0, start - 3) : start])
    return any(tail.endswith(slot) for slot in _SLOTS_ZH)


def _substitution_reason(a: str, b: str) -> str | None:
    ta, tb = _diff_tokens(a), _diff_tokens(b)
    set_a, set_b = set(ta), set(tb)
    matcher = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or not (1 <= i2 - i1 <= 3 and 1 <= j2 - j1 <= 3):
            continue
        old = [t for t in ta[i1:i2] if t not in set_b and _is_value_word(t)]
        new = [t for t in tb[j1:j2] if t not in set_a and _is_value_word(t)]
        if not old or not new:
            continue
        antonym = any(frozenset((x, y)) in _ANTONYMS for x in old for y in new)
        if antonym or _in_slot(ta, i1):
            joiner = "" if any(re.match(f"[{_HAN}]", t) for t in old + new) else " "
            return f"value changed: {joiner.join(old)} → {joiner.join(new)}"
    return None


def contradiction_reason(a: str, b: str) -> str | None:
    """Why texts ``a`` and ``b`` state different values of one fact, or ``None`` if they agree.

    Checks changed numbers/quantities/dates/versions, negation flips and substituted values
    (see the module docstring). Symmetric in whether it returns ``None``: both argument orders
    are tried. The reason names the old (``a``) side first when that order finds it.
    """
    ca, cb = _clean(a), _clean(b)
    for check in (_number_reason, _named_value_reason, _polarity_reason, _substitution_reason):
        reason = check(ca, cb) or check(cb, ca)
        if reason:
            return reason
    return None


# --------------------------------------------------------------------------- decision


#: How many of the nearest memories by cosine are judged, beside every memory that shares
#: the draft's words (Dice ≥ :data:`CANDIDATE_LEXICAL`) or its subject.
CANDIDATES_BY_COSINE = 8
CANDIDATE_LEXICAL = 0.3

_RANK = {"duplicate": 0, "contradiction": 1, "series": 2, "possible_contradiction": 3,
         "possible_duplicate": 4, "distinct": 5}


def claim_of(memory: MemoryDraft | MemoryFacts) -> Claim:
    """The read claim of a memory (its :func:`claim_text`), from the memory when it has one."""
    return memory.claim or read_claim(claim_text(memory), written=memory.written)


def _cosines(draft: MemoryDraft, memories: Sequence[MemoryFacts]) -> list[float | None]:
    if draft.embedding is None:
        return [None] * len(memories)
    return [cosine_similarity(draft.embedding, m.embedding) for m in memories]


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
) -> Decision:
    """Decide what writing ``draft`` means given the ``existing`` memories.

    Only current memories (:attr:`MemoryFacts.is_current`) are considered. Equal
    ``content_hash`` → :class:`Duplicate`. Otherwise the candidates — the
    :data:`CANDIDATES_BY_COSINE` nearest by cosine, every memory whose tokens share Dice
    ≥ :data:`CANDIDATE_LEXICAL` with the draft, every memory of the same subject — are judged
    (:func:`consistency.judgement.judge_pair`), and the best verdict decides, in the order
    duplicate (:class:`Update`), contradiction (:class:`Supersede`), series
    (:class:`Series`), possible contradiction or duplicate (:class:`Possible`); else
    :class:`New`. Ties go to the most similar candidate, then the smallest id. Neither a
    subject nor identical wording is needed.
    Deterministic; raises ``ValueError`` only when two embeddings have different widths.
    """
    current = [m for m in existing if m.is_current]
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
    cosines = _cosines(draft, current)
    order = sorted(range(len(current)), key=lambda i: (-(cosines[i] or 0.0), current[i].id))
    chosen = set(order[:CANDIDATES_BY_COSINE])
    for i, memory in enumerate(current):
        if i in chosen:
            continue
        same_subject = bool(subject) and subject_key(memory.subject) == subject
        if same_subject or dice(new_claim.tokens, claim_of(memory).tokens) >= CANDIDATE_LEXICAL:
            chosen.add(i)
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
            return Supersede(memory.id, best.reason(), best)
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
