"""The questions of ``bench/graph_step_bench.py``, drawn from a vault by a fixed rule.

A *link question* names, in a note A's own words, a passage of A that links on; its answer is
the note(s) the passage leads to, one or two links away, and none of the question's words
occurs in an answer note. A *control question* is drawn the same way with the matched note A
itself as the answer. Everything is a function of the vault's files, its resolved links and
``seed`` (``random.Random(seed)``): the same vault and seed give the same questions.

The rule, for a note A (every ``.md`` file; ``MEMORY.md`` and the diary left out):

1. A *passage* is a paragraph of A's body (frontmatter dropped; text between blank lines).
   Its *links* are the ``[[wikilinks]]`` (and ``![[embeds]]``) in it that resolve to another
   note (:class:`magma.graph.LinkResolver`, as the index resolves them).
2. Its *key words*: the words (:func:`magma.catalogue.tokens`) of the passage with every
   ``[[…]]`` removed (link text names its target), at least :data:`MIN_WORD` letters, all
   letters, not a stop word, and not a word of any *excluded* note (a note's words: every
   word of its file and of its path); the :data:`KEY_WORDS` rarest (fewest notes hold them;
   ties: first in the passage), written in the passage's order. A passage with fewer than
   :data:`MIN_KEY_WORDS` such words gives no question.
3. *One link*: a passage of A with 1–:data:`MAX_TARGETS` links; the answers, and the
   excluded notes, are the notes it links to.
4. *Two links*: a passage of A with exactly one link, to M; the answer is one note B that M
   links to (any link kind, as indexed) chosen at random, with B not A and not linked with A
   either way; B is the one excluded note.
5. *Control*: the first passage of A with enough key words and nothing excluded; the answer
   is A.

One question per note A and kind; A is drawn in a seeded shuffle of the notes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from magma.catalogue import STOPWORDS, tokens
from magma.graph import LinkResolver

__all__ = ["KEY_WORDS", "MAX_TARGETS", "MIN_KEY_WORDS", "MIN_WORD", "Question", "questions"]

#: Key words in a question (our choice: a short keyword query, as typed in a search box).
KEY_WORDS = 6
#: Fewest key words a passage must give (our choice: fewer is too vague to match A).
MIN_KEY_WORDS = 4
#: Shortest key word, in letters (our choice: shorter words are mostly function words).
MIN_WORD = 3
#: Most links in a one-link passage (our choice: a longer run of links is a table of
#: contents, not a passage that points somewhere).
MAX_TARGETS = 3

_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_LINK = re.compile(r"!?\[\[([^\]]*)\]\]")
_SKIPPED = {"MEMORY.md", "Diary.md"}


@dataclass(frozen=True, slots=True)
class Question:
    """One question: ``kind`` ``one-link``, ``two-links`` or ``control``; ``text`` the
    query; ``expected`` the answer notes' vault paths; ``source`` note A's path (and the
    bridge note M's for two links)."""

    kind: str
    text: str
    expected: tuple[str, ...]
    source: tuple[str, ...]


def _body(text: str) -> str:
    return _FRONTMATTER.sub("", text.replace("\r\n", "\n"), count=1)


def _passages(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", _body(text)) if p.strip()]


def _link_targets(passage: str, src: str, resolver: LinkResolver) -> list[str]:
    found: list[str] = []
    for raw in _LINK.findall(passage):
        target = raw.split("|", 1)[0].split("#", 1)[0].split("^", 1)[0]
        if not target.strip():
            continue
        path = resolver.resolve(target, src)
        if path is not None and path.endswith(".md") and path != src and path not in found:
            found.append(path)
    return found


def _words(text: str) -> list[str]:
    return [w for w in tokens(text) if len(w) >= MIN_WORD and w.isalpha() and w not in STOPWORDS]


def _key_words(passage: str, excluded: set[str], df: Mapping[str, int]) -> list[str]:
    words = _words(_LINK.sub(" ", passage))
    order: dict[str, int] = {}
    for i, word in enumerate(words):
        if word not in excluded:
            order.setdefault(word, i)
    rarest = sorted(order, key=lambda w: (df.get(w, 0), order[w]))[:KEY_WORDS]
    return sorted(rarest, key=lambda w: order[w])


def questions(vault: Path, out_links: Mapping[str, Iterable[str]], seed: int, *,
              per_kind: int) -> list[Question]:
    """Up to ``per_kind`` questions of each kind from the notes of ``vault`` (module
    docstring). ``out_links``: each note's resolved link targets as indexed (vault paths)."""
    texts = {p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(vault.rglob("*.md")) if p.name not in _SKIPPED}
    resolver = LinkResolver(p.relative_to(vault).as_posix() for p in vault.rglob("*")
                            if p.is_file())
    vocab = {path: set(_words(text)) | set(_words(path)) for path, text in texts.items()}
    df: dict[str, int] = {}
    for held in vocab.values():
        for word in held:
            df[word] = df.get(word, 0) + 1
    near: dict[str, set[str]] = {p: set() for p in texts}
    for src, targets in out_links.items():
        for dst in targets:
            if src in near and dst in near and src != dst:
                near[src].add(dst)
                near[dst].add(src)
    rng = random.Random(seed)
    order = sorted(texts)
    rng.shuffle(order)
    made: dict[str, list[Question]] = {"one-link": [], "two-links": [], "control": []}
    for a in order:
        passages = _passages(texts[a])
        linked = [(p, _link_targets(p, a, resolver)) for p in passages]
        if len(made["one-link"]) < per_kind:
            for passage, targets in linked:
                if not 1 <= len(targets) <= MAX_TARGETS:
                    continue
                words = _key_words(passage, set().union(*(vocab[t] for t in targets)), df)
                if len(words) >= MIN_KEY_WORDS:
                    made["one-link"].append(
                        Question("one-link", " ".join(words), tuple(targets), (a,)))
                    break
        if len(made["two-links"]) < per_kind:
            for passage, targets in linked:
                if len(targets) != 1:
                    continue
                bridge = targets[0]
                far = sorted(b for b in out_links.get(bridge, ())
                             if b in texts and b != a and b not in near[a])
                if not far:
                    continue
                b = rng.choice(far)
                words = _key_words(passage, vocab[b], df)
                if len(words) >= MIN_KEY_WORDS:
                    made["two-links"].append(
                        Question("two-links", " ".join(words), (b,), (a, bridge)))
                    break
        if len(made["control"]) < per_kind:
            for passage in passages:
                words = _key_words(passage, set(), df)
                if len(words) >= MIN_KEY_WORDS:
                    made["control"].append(Question("control", " ".join(words), (a,), (a,)))
                    break
    return [q for kind in ("one-link", "two-links", "control") for q in made[kind]]
