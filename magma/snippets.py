"""Snippets of the raw layer: what they are, their keys, their concepts, how a query matches.

A **snippet** is a few lines of a daily note (or one statement of a transcript) that may one
day earn a memory (issue 21). Light sleep cuts them (:mod:`consistency.snippet_cut`); each
has a stable key (its path, heading and normalised text: lines added above it or a moved line
keep it), its evidence (``memory/2026-06-15.md:5-8``), at most :data:`MAX_TAGS` concept tags
(:func:`concept_tags`) and a starting score (:data:`START_SCORES`). :func:`match_score` says
how well a query matches a snippet (the share of the query's words it holds). Pure.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from bm25s.stopwords import STOPWORDS_EN

from ccb.memory_file import normalise_text
from magma.note_bm25 import bm25_tokens

__all__ = [
    "CONCEPTS",
    "MAX_TAGS",
    "START_SCORES",
    "Snippet",
    "SnippetOrigin",
    "concept_tags",
    "match_score",
    "snippet_key",
    "snippet_tokens",
]

SnippetOrigin = Literal["diary", "transcript"]

#: Most concept tags per snippet (issue 21).
MAX_TAGS = 8
#: The score a snippet starts with, by where it was read (issue 21: diary 0.62, transcript 0.58).
START_SCORES: dict[SnippetOrigin, float] = {"diary": 0.62, "transcript": 0.58}

#: The fixed concept vocabulary tags are taken from first: concept → words that name it
#: (English and Chinese). dreamd's choice, from the subjects of the memory samples in
#: ``../shared/corpora/memory-samples`` (tests, databases, deploys, reviews, style …).
CONCEPTS: dict[str, tuple[str, ...]] = {
    "testing": ("test", "tests", "testing", "pytest", "mock", "mocks", "mocked", "测试", "单测"),
    "database": ("database", "databases", "db", "sql", "sqlite", "postgres", "lancedb",
                 "数据库"),
    "deploy": ("deploy", "deploys", "deployment", "release", "rollout", "部署", "发布", "上线"),
    "review": ("review", "reviews", "pr", "评审", "审查"),
    "git": ("git", "commit", "commits", "branch", "rebase", "merge", "提交", "分支"),
    "ci": ("ci", "pipeline", "github actions", "流水线"),
    "security": ("secret", "secrets", "credential", "credentials", "token", "password",
                 "密钥", "密码", "安全"),
    "performance": ("performance", "latency", "slow", "fast", "性能", "延迟"),
    "style": ("style", "format", "formatting", "lint", "linter", "风格", "格式"),
    "docs": ("docs", "documentation", "readme", "文档"),
    "incident": ("incident", "outage", "failure", "failed", "broke", "故障", "事故", "失败"),
    "dependency": ("dependency", "dependencies", "package", "packages", "pnpm", "npm", "uv",
                   "pip", "依赖"),
    "language": ("python", "typescript", "rust", "go", "java", "中文", "英文"),
    "schedule": ("meeting", "deadline", "standup", "schedule", "会议", "截止"),
}
_COMPOUND = re.compile(r"[A-Za-z0-9]+(?:[-_./][A-Za-z0-9]+)+")
#: Words that say nothing of which line a query is after: Lucene's English stop words
#: (bm25s's list) and the question and pronoun words prompts start with (dreamd's choice).
_STOPWORDS = frozenset(STOPWORDS_EN) | {
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "do", "does",
    "did", "about", "can", "could", "should", "would", "we", "i", "you", "me", "my", "our",
    "us", "your", "have", "has", "had", "was", "were", "been", "any", "some", "tell"}
_ASCII_WORD = re.compile(r"^[a-z0-9]+$")
#: Plain tokens shorter than this are not concepts (``db`` is one through the vocabulary).
_MIN_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Snippet:
    """A cut of the raw layer. ``path`` is the index path of the note (``Daily/…``,
    ``workspace:memory/…``) or of a transcript; ``lines`` the 1-based first and last line
    of the file (a transcript's are its JSONL lines); ``heading`` the heading path (``""``
    at the top); ``body`` the lines' text (times and ``(source: …)`` of diary lines left
    out), one line each; ``text`` the heading and the body ("heading: body"); ``kind`` the
    statement kind of its lines, if any."""

    key: str
    path: str
    day: date
    lines: tuple[int, int]
    heading: str
    body: str
    tags: tuple[str, ...]
    kind: str | None
    origin: SnippetOrigin

    @property
    def text(self) -> str:
        flat = " ".join(self.body.split("\n"))
        return f"{self.heading}: {flat}" if self.heading else flat

    @property
    def evidence(self) -> str:
        """``path:first-last`` (``path:5`` for one line)."""
        first, last = self.lines
        return f"{self.path}:{first}" if first == last else f"{self.path}:{first}-{last}"

    @property
    def start_score(self) -> float:
        return START_SCORES[self.origin]


def snippet_key(path: str, heading: str, body: str) -> str:
    """16 hex characters of SHA-256 over the path, the heading and the normalised body
    (:func:`ccb.memory_file.normalise_text`): the same lines under the same heading of the
    same note keep their key wherever they move in it."""
    raw = "\0".join((path, " ".join(heading.split()).casefold(), normalise_text(body)))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def snippet_tokens(text: str) -> set[str]:
    """The words of ``text`` as search sees them (:func:`magma.note_bm25.bm25_tokens`:
    case-folded, CJK as character pairs), stop words left out: "what do … about" says
    nothing of which line a query is after."""
    return {t for t in bm25_tokens(text) if t not in _STOPWORDS}


def concept_tags(text: str, limit: int = MAX_TAGS) -> tuple[str, ...]:
    """At most ``limit`` concept tags of ``text``, first come first served: concepts of the
    fixed vocabulary (:data:`CONCEPTS`) in the vocabulary's order, then compound words with
    separators (``memory-core``, ``recall.count``), then plain tokens of four characters or
    more and CJK character pairs, in the text's order."""
    tokens = bm25_tokens(text)
    words = set(tokens) | {w.casefold() for w in re.findall(r"[A-Za-z0-9]+", text)}
    folded = text.casefold()
    tags: list[str] = []

    def add(tag: str) -> None:
        if tag and tag not in tags and len(tags) < limit:
            tags.append(tag)

    for concept, names in CONCEPTS.items():
        if any((name in words) if _ASCII_WORD.match(name) else (name in folded)
               for name in names):
            add(concept)
    for compound in _COMPOUND.findall(text):
        add(compound.casefold())
    for token in tokens:
        if len(token) >= _MIN_TOKEN or not token.isascii():
            add(token)
    return tuple(tags)


def match_score(query: str | set[str], snippet: Snippet | set[str]) -> float:
    """The share of the query's words (:func:`snippet_tokens`) the snippet's text or tags
    hold, in [0, 1]; 0 for a query without words."""
    wanted = snippet_tokens(query) if isinstance(query, str) else query
    if not wanted:
        return 0.0
    held = snippet if isinstance(snippet, set) else \
        snippet_tokens(snippet.text) | set(snippet.tags)
    return len(wanted & held) / len(wanted)
