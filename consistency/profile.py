"""The distilled profile, pure parts: which memories it is made from, what the model is asked,
and whether every sentence of its answer is said by the sources it cites.

The profile is one short, pinned ``user`` memory ("works late, prefers Go and dark themes,
tests against real databases") distilled by the dream from the user's scattered ``user``
memories (issue 22). It is marked by its subject, :data:`PROFILE_SUBJECT`, so the dream's
consolidation and ``remember``'s dedupe never take it for one of its sources.

Every sentence names the sources it comes from (their numbers in the prompt); the body lists
them as wikilinks after the sentence, so each sentence is traceable in Obsidian. The fact
check is the synthesis check (:func:`consistency.synthesis.dropped_facts`) turned around: a
name, number, date or code span of a sentence that none of its cited sources contains is
something no source says, and the draft is rejected.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from consistency.synthesis import dropped_facts

__all__ = [
    "MAX_SENTENCES",
    "MAX_SOURCES",
    "MIN_SOURCES",
    "PROFILE_NAME",
    "PROFILE_SUBJECT",
    "SOURCE_MAX_CHARS",
    "ProfileSentence",
    "ProfileSource",
    "parse_profile",
    "profile_body",
    "profile_prompt",
    "sources_hash",
    "unsupported_facts",
]

#: The subject that marks the profile memory (dreamd's own name space: no user subject).
PROFILE_SUBJECT = "dreamd.profile"
#: The profile memory's name (its file is ``<memory folder>/profile.md`` when free).
PROFILE_NAME = "Profile"
#: Fewer ``user`` memories than this: no profile (one memory is its own profile).
MIN_SOURCES = 2
#: Most ``user`` memories read, newest first (dreamd's choice: one prompt a small local
#: model's context holds: 40 × :data:`SOURCE_MAX_CHARS` ≈ 24,000 characters).
MAX_SOURCES = 40
#: Characters of one source's body in the prompt.
SOURCE_MAX_CHARS = 600
#: Most sentences kept in the profile ("one short memory").
MAX_SENTENCES = 8


@dataclass(frozen=True, slots=True)
class ProfileSource:
    """A ``user`` memory the profile is made from: its vault path, name, body and the hash
    of its file (what "the sources changed" compares)."""

    path: str
    name: str
    body: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class ProfileSentence:
    """One sentence of the profile and the sources it cites (indices into the sources)."""

    text: str
    sources: tuple[int, ...]


def sources_hash(sources: Sequence[ProfileSource]) -> str:
    """sha256 hex of the sources' paths and file hashes, order-free: the profile is
    regenerated only when this changes."""
    pairs = sorted(f"{s.path}\0{s.content_hash}" for s in sources)
    return hashlib.sha256("\n".join(pairs).encode("utf-8")).hexdigest()


def profile_prompt(sources: Sequence[ProfileSource]) -> list[dict[str, str]]:
    """Chat messages asking for the profile as numbered sentences citing their sources."""
    listed = "\n\n".join(
        f"### {i} ({s.name})\n{s.body.strip()[:SOURCE_MAX_CHARS]}"
        for i, s in enumerate(sources, start=1))
    return [
        {"role": "system", "content": (
            "You distil a person's memory notes about themselves into a short profile: "
            f"at most {MAX_SENTENCES} short sentences about their preferences, habits and "
            "ways of working. Say only what the notes say; keep every name, number and code "
            "span exactly as written; add nothing. After each sentence list the numbers of "
            "the notes it comes from. Answer with one JSON object only: "
            '{"sentences": [{"text": "...", "sources": [1, 2]}]}')},
        {"role": "user", "content": listed},
    ]


def parse_profile(reply: str, source_count: int) -> list[ProfileSentence]:
    """The sentences of a profile reply (a JSON object, possibly fenced). Raises
    ``ValueError`` naming what is wrong: no JSON, no sentences, more than
    :data:`MAX_SENTENCES`, a sentence without text or without a source, a source number
    outside ``1..source_count``."""
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the reply holds no JSON object")
    data = json.loads(text[start:end + 1])
    items = data.get("sentences") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError("the reply has no 'sentences'")
    if len(items) > MAX_SENTENCES:
        raise ValueError(f"the reply has {len(items)} sentences (at most {MAX_SENTENCES})")
    return [_sentence(item, source_count) for item in items]


def _sentence(item: object, source_count: int) -> ProfileSentence:
    if not isinstance(item, dict):
        raise ValueError("a sentence is not an object")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a sentence has no text")
    cited = item.get("sources")
    if not isinstance(cited, list) or not cited:
        raise ValueError(f"the sentence {' '.join(text.split())!r} cites no source")
    numbers: list[int] = []
    for number in cited:
        if isinstance(number, bool) or not isinstance(number, int) \
                or not 1 <= number <= source_count:
            raise ValueError(f"the sentence {' '.join(text.split())!r} cites {number!r}, "
                             f"not a note number (1..{source_count})")
        if number - 1 not in numbers:
            numbers.append(number - 1)
    return ProfileSentence(" ".join(text.split()), tuple(numbers))


def unsupported_facts(sentence: ProfileSentence, sources: Sequence[ProfileSource]
                      ) -> list[str]:
    """Names, numbers, dates and code spans of ``sentence`` that none of the sources it
    cites contains (:func:`consistency.synthesis.dropped_facts`, turned around), sorted."""
    cited = "\n".join(f"{sources[i].name}\n{sources[i].body}" for i in sentence.sources)
    return dropped_facts([sentence.text], cited)


def profile_body(sentences: Sequence[ProfileSentence], links: Sequence[str]) -> str:
    """The profile's markdown body: one list item per sentence, followed by the links
    (``links[i]``: the i-th source's wikilink) of the sources it cites."""
    return "\n".join(
        f"- {s.text} ({', '.join(links[i] for i in s.sources)})" for s in sentences) + "\n"
