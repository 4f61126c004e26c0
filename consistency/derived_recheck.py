"""Re-checking a memory derived from a source that changed (pure).

``dreamd check`` lists a live memory derived from a changed source
(:class:`consistency.graph_checks.ChangedSource`); the dream settles each one whose *direct*
source changed — a synthesis, a profile, anything with ``derived_from`` — with
:func:`derived_rechecks`:

- its remaining sources are its ``derived_from`` memories that did not change (live: not
  superseded or merged outside the derivation, not archived, not gone) and do not derive
  from it, directly or through others (a loop of derivations never makes a memory its own
  support); a source merged into a keeper (an exact duplicate the dream merged, a memory
  absorbed by hand) is followed to the keeper: the keeper is a remaining source and takes
  the merged one's place in ``derived_from`` (``followed``); when every changed source is
  such a merge and the keepers hold every fact and statement of it, nothing the memory was
  derived from is lost, and it is kept as it is, only its links moved;
- it is **still supported** when it has a remaining source, every name, number, date and
  code span it states (:func:`unsupported_facts`: the fact check of every synthesis,
  :func:`consistency.synthesis.dropped_facts`, read on :func:`fact_text`) is in one of
  them, each statement of its body is found in one remaining source's own text
  (:func:`unheld_statements`: a memory without a name or a number in it is not held by
  anything), and it repeats nothing only a changed source said (:func:`stale_facts`): the dream
  then takes the changed sources out of its ``derived_from`` (and clears
  ``forgotten_sources``), saying so in the diary;
- otherwise it is **unsupported**: with an LLM it is derived again from the remaining
  sources under the same fact check; without one, or when the answer fails the check, it is
  archived (recoverable) and the remaining sources it had archived into itself come back.

No loop: each outcome removes the finding (the changed source leaves ``derived_from``, or
the memory is archived, and an archived memory is never re-checked). The dream re-checks again
after each round, so a memory derived from one archived in this round (a profile of a summary
of a superseded memory) is settled by the same dream; each memory is re-checked at most once
per dream, so the rounds end (at most one per memory). A chain of derivations that loops is
walked once (:func:`consistency.graph_checks.graph_drifts` keeps a visited set).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from consistency.claims import read_claim, stem
from consistency.graph_checks import ChangedSource, graph_drifts
from consistency.synthesis import dropped_facts
from magma.graph import node_id
from magma.text import text_tokens

__all__ = ["Recheck", "derived_rechecks", "fact_text", "stale_facts", "unheld_statements",
           "unsupported_facts"]


def fact_text(text: str) -> str:
    """``text`` as its facts are read: markdown heading lines left out (``## What`` is
    structure, not a fact) and each line ending a sentence (a capitalised word that starts a
    line is not taken for a name)."""
    return ".\n".join(line for line in text.splitlines()
                      if line.strip() and not line.lstrip().startswith("#"))


def unsupported_facts(said: str, sources: Sequence[str]) -> list[str]:
    """The names, numbers, dates and code spans of ``said`` that no text of ``sources``
    holds (case-insensitive), sorted."""
    return dropped_facts([fact_text(said)], "\n".join(sources))


#: Where a memory's body is cut into statements: line ends and sentence or clause ends
#: (``.`` before a space or the end, ``!``, ``?``, ``;`` and their CJK forms).
_STATEMENT_END = re.compile(r"\n|[.](?=\s|$)|[!?;。！？；]")
#: Words that state nothing alone (function words, English and Chinese; our choice, after
#: :data:`consistency.claims`' stopwords).
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "to", "of", "in", "on", "at", "for", "with", "by", "and", "or", "is",
    "are", "be", "been", "was", "were", "am", "it", "its", "this", "that", "these", "those",
    "do", "does", "did", "i", "we", "you", "they", "he", "she", "me", "us", "him", "them",
    "my", "our", "your", "their", "his", "her", "as", "from", "into", "than", "then", "so",
    "also", "just", "very", "really", "all", "every", "any", "some", "each", "will", "would",
    "can", "could", "may", "might", "should", "must", "have", "has", "had", "there", "here",
    "about", "over", "up", "out", "if", "when", "while", "which", "who", "what", "where",
    "how", "why", "because", "since", "via", "per", "only", "too", "more", "most", "much",
    "many")) | frozenset("的了着过吧呢吗啊呀嘛就也都还又很太挺最我你他她它们这那个是"
                          "在和与及或把被给让对中请里到")


def _words(text: str) -> set[str]:
    """The content words of ``text``: case-folded tokens (each CJK character one), function
    words out, light English stems (:func:`consistency.claims.stem`; ``retried`` and
    ``retries`` both ``retry``)."""
    found = set()
    for token in text_tokens(text):
        if token in _FUNCTION_WORDS:
            continue
        word = stem(token)
        found.add(word[:-1] + "y" if word.endswith("i") and len(word) > 3 else word)
    return found


def unheld_statements(body: str, sources: Sequence[str]) -> list[str]:
    """The statements of ``body`` (:func:`fact_text` cut at :data:`_STATEMENT_END`) whose
    content words (:func:`_words`) no single text of ``sources`` holds all of, stripped, in
    order. Empty when every statement is found in one source's own text."""
    held = [_words(source) for source in sources]
    found = []
    for part in _STATEMENT_END.split(fact_text(body)):
        words = _words(part)
        if words and not any(words <= source for source in held):
            found.append(part.strip())
    return found


def stale_facts(said: str, changed: Sequence[str], held: Sequence[str]) -> list[str]:
    """What ``said`` still states of the ``changed`` sources alone: their names, numbers,
    dates and code spans (:func:`unsupported_facts`) and the values a memory's words are read
    into (:func:`consistency.claims.read_claim`: "我的猫现在叫*咪咪*"), found in ``said`` and in
    none of the sources that ``held``, sorted. A summary that repeats a superseded value is
    never "still supported" by its other sources (the facts they hold are not all it says)."""
    lowered, kept = said.casefold(), "\n".join(held).casefold()
    found = set()
    for text in changed:
        candidates = set(unsupported_facts(text, held))
        candidates |= {v.text for v in read_claim(text).values if len(v.text) >= 2}
        found |= {c for c in candidates if c.casefold() in lowered and c.casefold() not in kept}
    return sorted(found)


@dataclass(frozen=True, slots=True)
class Recheck:
    """A live memory ``path`` whose direct sources ``changed`` (``(source, change)``: a vault
    path, ``[[stem]]`` for one naming no memory, or :data:`FORGOTTEN`); its ``remaining``
    sources (paths: never one derived from it) and the facts and statements of it none of
    them holds (``unsupported``); ``followed``: the keepers (paths, among ``remaining``)
    that changed sources were merged into, which take their place in ``derived_from``."""

    path: str
    changed: tuple[tuple[str, str], ...]
    remaining: tuple[str, ...]
    unsupported: tuple[str, ...]
    followed: tuple[str, ...] = ()

    @property
    def supported(self) -> bool:
        """Still supported by its remaining sources (module docstring)."""
        return bool(self.remaining) and not self.unsupported


def _sources(graph: nx.MultiDiGraph, path: str) -> list[str]:
    node = node_id("note", path)
    return sorted(str(graph.nodes[v].get("path")) for _, v, k in graph.out_edges(node, keys=True)
                  if k == "derived_from" and graph.nodes[v].get("kind") == "memory")


def _derived_from_it(graph: nx.MultiDiGraph, path: str) -> set[str]:
    """The paths of the memories derived from ``path``, directly or through others, and
    ``path`` itself (never a support of it)."""
    derived = nx.DiGraph()
    derived.add_edges_from((u, v) for u, v, k in graph.edges(keys=True) if k == "derived_from")
    node = node_id("note", path)
    below = nx.ancestors(derived, node) if node in derived else set()
    return {path, *(str(graph.nodes[n].get("path")) for n in below)}


def _keepers(graph: nx.MultiDiGraph, path: str) -> list[str]:
    """The live memories ``path`` was merged into, through a chain of merges (a keeper merged
    on is followed to its own keeper; each memory met once, so a loop of merges ends), by
    path."""
    seen, queue, found = {node_id("note", path)}, deque([node_id("note", path)]), set()
    while queue:
        for _, keeper, kind in graph.out_edges(queue.popleft(), keys=True):
            if kind != "merged_into" or keeper in seen or \
                    graph.nodes[keeper].get("kind") != "memory":
                continue
            seen.add(keeper)
            if graph.nodes[keeper].get("status") == "archived":
                queue.append(keeper)
            else:
                found.add(str(graph.nodes[keeper].get("path")))
    return sorted(found)


def _held_by_keepers(graph: nx.MultiDiGraph, source: str, texts: Mapping[str, str],
                     bodies: Mapping[str, str] | None) -> bool:
    """``source`` was merged into keepers that hold every fact and statement of it (an exact
    duplicate merged): nothing it said is lost, so what derives from it stands as it is,
    its link moved to the keepers."""
    keepers = [texts.get(k, "") for k in _keepers(graph, source)]
    text = texts.get(source, "")
    body = bodies.get(source, "") if bodies is not None else text
    return bool(keepers) and not unsupported_facts(text, keepers) \
        and not unheld_statements(body, keepers)


def derived_rechecks(graph: nx.MultiDiGraph, texts: Mapping[str, str],
                     bodies: Mapping[str, str] | None = None) -> list[Recheck]:
    """One :class:`Recheck` per live memory of ``graph`` (a lineage graph,
    :mod:`magma.lineage`) whose direct source changed, by path. ``texts``: each memory's
    name, description and body, by path (a source without one holds nothing); ``bodies``:
    each memory's body, whose statements must be found in a source, by path (``None``: its
    text)."""
    changed: dict[str, dict[str, str]] = {}
    for drift in graph_drifts(graph):
        if isinstance(drift, ChangedSource) and len(drift.chain) == 2 and \
                not drift.change.startswith("not found"):
            # a source that names no memory (a note, a memory renamed) is the check's to
            # list, never a reason to archive what the user wrote
            changed.setdefault(drift.path, {})[drift.chain[1]] = drift.change
    found = []
    for path, sources in sorted(changed.items()):
        own = _derived_from_it(graph, path)
        followed = tuple(sorted({k for s, change in sources.items()
                                 if change.startswith("merged into")
                                 for k in _keepers(graph, s)} - own - set(sources)))
        remaining = tuple(sorted({*(s for s in _sources(graph, path)
                                    if s not in sources and s not in own), *followed}))
        said, held = texts.get(path, ""), [texts.get(s, "") for s in remaining]
        body = bodies.get(path, "") if bodies is not None else said
        unsupported: tuple[str, ...] = ()
        if not followed or not all(_held_by_keepers(graph, s, texts, bodies)
                                   for s in sources):
            unsupported = tuple(sorted({*unsupported_facts(said, held), *stale_facts(
                said, [texts.get(s, "") for s in sources], held)})) + tuple(
                s for s in unheld_statements(body, held) if s)
        found.append(Recheck(path, tuple(sorted(sources.items())), remaining, unsupported,
                             followed))
    return found
