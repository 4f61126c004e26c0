"""The dream's deep phase, pure parts: which memories an LLM may synthesise, what it is asked,
and whether its answer keeps every fact of its sources.

DESIGN.md "Dreaming" and the dreaming issue: at most :data:`MAX_CLUSTERS` clusters per run of at
most :data:`MAX_CLUSTER_SIZE` memories each, only from memories that are not resident, not
pinned, not recent (older than :data:`MIN_AGE_DAYS`) and rarely recalled; a synthesis that drops
a name, a number or a date of its sources is rejected. The same checks guard the Refiner, which
rewrites one memory as What / Why / How to apply, and the wording of a diary line deep sleep
promotes (:func:`wording_problem`: both ways, as a line may be compressed but never added to).

Clusters are memories of one owner and type whose subjects share their first dotted part
(``api.payments.timeout`` and ``api.payments.retries`` → ``api``), members ordered by age; a
memory without a subject is never clustered (nothing says what it is about).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ccb.model import MEMORY_TYPES, MemoryType

__all__ = [
    "MAX_CLUSTERS",
    "MAX_CLUSTER_SIZE",
    "MIN_AGE_DAYS",
    "Candidate",
    "Cluster",
    "ExtractedFact",
    "Synthesis",
    "dropped_facts",
    "extraction_prompt",
    "parse_extraction",
    "parse_synthesis",
    "parse_wording",
    "pick_clusters",
    "refine_prompt",
    "synthesis_prompt",
    "wording_problem",
    "wording_prompt",
]

#: Most clusters synthesised per dream (the dreaming issue).
MAX_CLUSTERS = 4
#: Most memories in one cluster (the dreaming issue).
MAX_CLUSTER_SIZE = 8
#: Memories younger than this are left to settle (the dreaming issue: "not recent (< 4.5 days)").
MIN_AGE_DAYS = 4.5
#: "Low recall": recalled at most this often (dreamd's choice: below the promotion threshold
#: of three distinct queries, a memory nobody keeps asking for).
MAX_RECALLS = 2


@dataclass(frozen=True, slots=True)
class Candidate:
    """A live memory the deep phase may look at."""

    id: str
    path: str
    type: MemoryType
    name: str
    subject: str | None
    owner: str | None
    body: str
    updated: datetime | date | None
    recalls: int = 0
    resident: bool = False
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class Cluster:
    """Memories to be synthesised into one (2 to :data:`MAX_CLUSTER_SIZE`, oldest first)."""

    key: str
    type: MemoryType
    members: tuple[Candidate, ...]


@dataclass(frozen=True, slots=True)
class Synthesis:
    """An LLM's answer for a cluster (or the Refiner's for one memory)."""

    name: str
    description: str
    body: str


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """A fact the Extractor found in a transcript."""

    type: MemoryType
    name: str
    description: str
    body: str
    subject: str | None


def _moment(value: datetime | date | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def pick_clusters(candidates: Sequence[Candidate], now: datetime, *,
                  max_clusters: int = MAX_CLUSTERS, max_size: int = MAX_CLUSTER_SIZE,
                  min_age_days: float = MIN_AGE_DAYS, max_recalls: int = MAX_RECALLS,
                  ) -> list[Cluster]:
    """The clusters for one run: eligible memories (see the module docstring; user memories
    and L2 rules are the caller's to leave out, as ``resident``) grouped by owner, type and
    subject root; the largest groups first, at most ``max_clusters`` of them."""
    groups: dict[tuple[str, str, str], list[Candidate]] = defaultdict(list)
    for memory in candidates:
        updated = _moment(memory.updated)
        if (memory.resident or memory.pinned or memory.recalls > max_recalls
                or not memory.subject or updated is None
                or now - updated < timedelta(days=min_age_days)):
            continue
        root = memory.subject.strip().casefold().split(".", 1)[0]
        groups[((memory.owner or "").casefold(), memory.type, root)].append(memory)
    clusters = []
    for (owner, kind, root), members in groups.items():
        if len(members) < 2:
            continue
        ordered = sorted(members, key=lambda m: (_moment(m.updated) or now, m.id))[:max_size]
        clusters.append(Cluster(f"{owner}/{kind}/{root}", kind, tuple(ordered)))  # type: ignore[arg-type]
    clusters.sort(key=lambda c: (-len(c.members), c.key))
    return clusters[:max_clusters]


# --------------------------------------------------------------------------- fact check

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/-]\d+)*(?:\s?%)?")
_CODE = re.compile(r"`([^`\n]+)`")
# A name: a capitalised word not at a sentence start, an ALL-CAPS acronym, or a word with an
# inner capital or digit (camelCase, snake_case identifiers, pnpm5); Han names are not guessed.
_NAME = re.compile(r"(?<=[^\s.!?:]\s)[A-Z][\w-]+|\b[A-Z]{2,}[\w-]*\b|\b[a-z]+[A-Z_][\w]*\b")


def _facts(text: str) -> set[str]:
    found = {m.group().replace(" ", "") for m in _NUMBER.finditer(text)}
    found |= {m.group(1).strip() for m in _CODE.finditer(text)}
    found |= {m.group() for m in _NAME.finditer(text)}
    return {f for f in found if f}


def dropped_facts(sources: Sequence[str], result: str) -> list[str]:
    """Names, numbers, dates and code spans of ``sources`` that ``result`` does not contain
    (case-insensitive, spaces in numbers ignored), sorted. Empty: nothing was dropped."""
    haystack = result.casefold().replace(" %", "%")
    missing = set()
    for source in sources:
        for fact in _facts(source):
            if fact.casefold() not in haystack:
                missing.add(fact)
    return sorted(missing)


# --------------------------------------------------------------------------- prompts

_JSON_SHAPE = '{"name": "...", "description": "...", "body": "..."}'


def synthesis_prompt(cluster: Cluster) -> list[dict[str, str]]:
    """Chat messages asking for one memory that replaces the cluster's memories."""
    sources = "\n\n".join(f"### Memory {i} ({m.name})\n{m.body.strip()}"
                          for i, m in enumerate(cluster.members, start=1))
    return [
        {"role": "system", "content": (
            "You consolidate a person's long-term memory notes. Merge the memories below into "
            "ONE memory that states every fact they state. Keep every name, number, date, "
            "version and code span exactly as written. Do not add anything. Write the body as "
            "markdown with the sections What, Why and How to apply when the sources give a "
            "reason or a rule. Answer with one JSON object only: " + _JSON_SHAPE)},
        {"role": "user", "content": f"Type: {cluster.type}\n\n{sources}"},
    ]


def refine_prompt(name: str, body: str, created: date | None) -> list[dict[str, str]]:
    """Chat messages asking to restate one memory as What / Why / How to apply."""
    when = f" It was written on {created.isoformat()}; turn relative dates (yesterday, last " \
           "week) into absolute dates." if created else ""
    return [
        {"role": "system", "content": (
            "You tidy a person's long-term memory note. Restate it with the markdown sections "
            "What, Why and How to apply. Keep every fact, name, number, date and code span; "
            "add nothing." + when + " Answer with one JSON object only: " + _JSON_SHAPE)},
        {"role": "user", "content": f"# {name}\n\n{body.strip()}"},
    ]


def wording_prompt(line: str) -> list[dict[str, str]]:
    """Chat messages asking to restate a diary line (``"heading: text"``) deep sleep
    promotes as one stable statement with its reason."""
    return [
        {"role": "system", "content": (
            "You turn a line from a person's own notes into one statement for their long-term "
            "memory: the rule, preference or decision as it stands, then its reason if the "
            "line gives one, after a colon (\"Integration tests use a real database: a mocked "
            "database hid a migration failure last quarter.\"). Keep every name, number, date "
            "and code span exactly as written; add nothing the line does not say; leave out "
            "times of day and filler. Answer with one JSON object only: "
            "{\"statement\": \"...\"}")},
        {"role": "user", "content": line},
    ]


def wording_problem(heading: str, body: str, statement: str) -> str | None:
    """Why ``statement`` may not stand for the line ``body`` under ``heading``
    (:func:`dropped_facts` both ways: a name, number, date or code span of the body it lost,
    or one that neither the heading nor the body holds), else ``None``."""
    lost = dropped_facts([body], statement)
    if lost:
        return "it dropped " + ", ".join(f"`{f}`" for f in lost[:8])
    added = dropped_facts([statement], f"{heading}\n{body}")
    if added:
        return "it added " + ", ".join(f"`{f}`" for f in added[:8])
    return None


def extraction_prompt(transcript: str) -> list[dict[str, str]]:
    """Chat messages asking for durable facts in an assistant session transcript."""
    return [
        {"role": "system", "content": (
            "You read a conversation between a user and a coding assistant and list the "
            "durable facts worth remembering in later sessions: the user's preferences and "
            "identity (type user), rules and corrections the user gave (type feedback), "
            "project facts and decisions (type project), where things are (type reference). "
            "Only what cannot be read from the code or the repository itself; nothing "
            "temporary. Answer with one JSON object only: {\"facts\": [{\"type\": \"...\", "
            "\"name\": \"...\", \"description\": \"...\", \"body\": \"...\", \"subject\": "
            "\"dotted.key\"}]} (an empty list when there is nothing).")},
        {"role": "user", "content": transcript},
    ]


def _json_object(reply: str) -> dict[str, object]:
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the reply holds no JSON object")
    data = json.loads(text[start:end + 1])
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    return data


def parse_synthesis(reply: str) -> Synthesis:
    """The :class:`Synthesis` in an LLM reply (a JSON object, possibly fenced). Raises
    ``ValueError`` naming what is wrong (no JSON, a missing or empty field)."""
    data = _json_object(reply)
    fields = {}
    for key in ("name", "description", "body"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"the reply has no {key!r}")
        fields[key] = value.strip()
    return Synthesis(" ".join(fields["name"].split())[:120],
                     " ".join(fields["description"].split())[:300], fields["body"])


def parse_wording(reply: str) -> str:
    """The statement in a wording reply (a JSON object, possibly fenced), on one line.
    Raises ``ValueError`` when there is none."""
    value = _json_object(reply).get("statement")
    if not isinstance(value, str) or not value.strip():
        raise ValueError("the reply has no 'statement'")
    return " ".join(value.split())


def parse_extraction(reply: str) -> list[ExtractedFact]:
    """The facts in an Extractor reply; entries with an unknown type or an empty body are
    skipped. Raises ``ValueError`` when the reply holds no JSON object with ``facts``."""
    data = _json_object(reply)
    facts = data.get("facts")
    if not isinstance(facts, list):
        raise ValueError("the reply has no 'facts' list")
    out = []
    for item in facts:
        if not isinstance(item, dict):
            continue
        kind, body = item.get("type"), item.get("body")
        if kind not in MEMORY_TYPES or not isinstance(body, str) or not body.strip():
            continue
        name = item.get("name") if isinstance(item.get("name"), str) else ""
        description = item.get("description") if isinstance(item.get("description"), str) \
            else ""
        subject = item.get("subject") if isinstance(item.get("subject"), str) else None
        out.append(ExtractedFact(kind, str(name).strip(), str(description).strip(),
                                 body.strip(), (subject or "").strip() or None))
    return out
