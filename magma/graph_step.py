"""The graph step of search: personalized PageRank from the best notes so far (pure).

:func:`step_graph` reads the vault graph (:mod:`magma.vault_graph`, the one graph the
daemon keeps in step, :mod:`magma.graph_keeper`) as the walk's :class:`NoteGraph`: the
indexed notes (memories are notes too; attachments, tags, subjects, unresolved targets and
the index files are not) joined by three kinds of undirected edge, each of weight 1 (a pair
joined twice weighs 2):

- ``links_to`` / ``embeds``: a wikilink, embed or markdown link that resolves, either way
  (one edge however many links join the pair);
- ``mentions``: a memory whose text names another note's title, alias or memory name, as
  whole words (the vault graph's ``mentions`` edges, :mod:`magma.graph_mentions`);
- ``same_subject``: memories whose ``subject`` property is the same (the memories of one
  ``subject:`` node of the vault graph), each joined with the next :data:`SUBJECT_BAND` of
  its subject in path order (a subject of a hundred memories is not a hundred-square
  clique; :func:`subject_pairs`).

:func:`personalized_pagerank` walks it from seed notes (Haveliwala, "Topic-sensitive
PageRank", WWW 2002; Jeh & Widom 2003): at each step the walk follows an edge (in proportion
to its weight, over the node's whole degree) with probability :data:`DAMPING`, or jumps back
to a seed in proportion to the seed's weight. It runs on the part of the graph within
:data:`HOPS` edges of the seeds (at most :data:`MAX_NODES` nodes, nearest first): the walk
restarts often enough that a farther note would get almost nothing; mass walking out of that
part is lost, which only scales the scores. Power iteration on the sparse edges with numpy,
at most :data:`ITERATIONS` rounds or until the scores move less than :data:`TOLERANCE` (L1).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ccb.model import DIARY_FILE, MEMORY_INDEX_FILE
from magma.gc_pause import collector_paused

__all__ = [
    "DAMPING",
    "HOPS",
    "ITERATIONS",
    "MAX_NODES",
    "MIN_MENTION_CHARS",
    "SUBJECT_BAND",
    "TOLERANCE",
    "NoteGraph",
    "has_subject",
    "note_graph",
    "patched_step_graph",
    "personalized_pagerank",
    "step_graph",
    "subject_pairs",
]

#: Probability that the walk follows an edge rather than jumping back to a seed (Page et
#: al.'s 0.85, as networkx's ``pagerank`` default).
DAMPING = 0.85
#: How far from the seeds the walk runs, in edges: the notes one and two links away.
HOPS = 2
#: Most nodes of the part walked (our choice: a hub note two links away reaches most of a
#: densely linked vault; nearest nodes are kept first).
MAX_NODES = 3000
#: Most power-iteration rounds and the L1 change at which it stops (our choice: at damping
#: 0.85 the change shrinks by about 0.85 a round, 50 rounds leave under 0.1 %).
ITERATIONS = 50
TOLERANCE = 1e-6
#: Shortest title, alias or name a memory can mention, in characters (our choice: shorter
#: names, "AI", "Go", are ordinary words in a memory's text).
MIN_MENTION_CHARS = 4
#: Memories of one subject joined with each memory: the next this many in path order.
SUBJECT_BAND = 8


@dataclass(frozen=True, slots=True)
class NoteGraph:
    """Undirected weighted graph over note paths in compressed sparse rows: the neighbours of
    node ``i`` are ``targets[offsets[i]:offsets[i + 1]]`` with ``weights`` alike;
    ``degree[i]`` is the sum of its weights. ``edges`` counts each undirected edge once."""

    nodes: tuple[str, ...]
    index: Mapping[str, int]
    offsets: np.ndarray  # int64[n + 1]
    targets: np.ndarray  # int64[2 × edges]
    weights: np.ndarray  # float64[2 × edges]
    degree: np.ndarray  # float64[n]
    edges: int

    def neighbours(self, path: str) -> list[str]:
        """The notes joined with ``path`` (none for a note not in the graph), in node order."""
        i = self.index.get(path)
        if i is None:
            return []
        return [self.nodes[j] for j in self.targets[self.offsets[i]:self.offsets[i + 1]]]


def note_graph(*pairs: Iterable[tuple[str, str]]) -> NoteGraph:
    """The graph of the undirected edges ``pairs`` (each an iterable of ``(a, b)`` paths: the
    links, mentions and same-subject pairs); self-loops are dropped, a pair given twice
    weighs 2. O(edges log edges)."""
    weight: dict[tuple[str, str], float] = {}
    for group in pairs:
        for a, b in group:
            if a == b:
                continue
            key = (a, b) if a < b else (b, a)
            weight[key] = weight.get(key, 0.0) + 1.0
    nodes = tuple(sorted({p for key in weight for p in key}))
    index = {path: i for i, path in enumerate(nodes)}
    n, m = len(nodes), len(weight)
    src = np.empty(2 * m, dtype=np.int64)
    dst = np.empty(2 * m, dtype=np.int64)
    w = np.empty(2 * m, dtype=np.float64)
    for k, ((a, b), value) in enumerate(weight.items()):
        src[2 * k], dst[2 * k], src[2 * k + 1], dst[2 * k + 1] = index[a], index[b], index[b], \
            index[a]
        w[2 * k] = w[2 * k + 1] = value
    order = np.lexsort((dst, src))
    src, dst, w = src[order], dst[order], w[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    degree = np.bincount(src, weights=w, minlength=n).astype(np.float64)
    return NoteGraph(nodes, index, offsets, dst, w, degree, m)


#: The vault graph's node id prefix of a note or memory (:func:`magma.graph.node_id`).
_NOTE = "note:"
#: Files that index the memory folder: they name every memory, so they join nothing.
_INDEX_NAMES = frozenset({MEMORY_INDEX_FILE, DIARY_FILE})


def _step_note(node: str) -> str | None:
    """The path of a vault graph node the walk goes through (a note or memory, not an
    index file), else ``None``; interned (:func:`sys.intern`): the view held beside the
    vault graph holds the one path object the graph keeps of each file, not one of its own
    (the vault graph interns its paths, :mod:`magma.vault_graph`)."""
    if not node.startswith(_NOTE):
        return None
    path = node[len(_NOTE):]
    return None if path.rsplit("/", 1)[-1] in _INDEX_NAMES else sys.intern(path)


def step_graph(graph: nx.MultiDiGraph) -> NoteGraph:
    """The walk's graph of the vault graph ``graph`` (module docstring): one pass over its
    edges, O(edges log edges)."""
    paths = {node: _step_note(node) for node in graph}
    links: set[tuple[str, str]] = set()
    mentions: set[tuple[str, str]] = set()
    subjects: dict[str, str] = {}
    with collector_paused():
        for u, near in graph.adjacency():
            a = paths[u]
            if a is None:
                continue
            for v, keyed in near.items():
                b = paths[v]
                for data in keyed.values():
                    relation = data.get("relation")
                    if relation == "same_subject":
                        subjects[a] = v
                    elif b is None or a == b:
                        continue
                    elif relation in ("links_to", "embeds"):
                        links.add((a, b) if a < b else (b, a))
                    elif relation == "mentions":
                        mentions.add((a, b))
        return note_graph(links, mentions, subject_pairs(subjects))


def has_subject(graph: nx.MultiDiGraph, path: str) -> bool:
    """Has note ``path`` a ``same_subject`` edge in ``graph`` (a memory with a subject)?"""
    node = _NOTE + path
    return node in graph and any(data.get("relation") == "same_subject"
                                 for _, _, data in graph.out_edges(node, data=True))


def _adjacency(graph: nx.MultiDiGraph, path: str) -> dict[str, float] | None:
    """The walk's neighbours of note ``path`` with their weights, as :func:`step_graph`
    counts them, from its edges in ``graph`` either way; ``{}`` when it is not in the graph;
    ``None`` when it has a subject (a subject's pairs depend on all its memories)."""
    node = _NOTE + path
    if node not in graph:
        return {}
    links: set[str] = set()
    weight: dict[str, float] = {}
    for near in (graph.succ[node], graph.pred[node]):
        for other, keyed in near.items():
            b = _step_note(other)
            for data in keyed.values():
                relation = data.get("relation")
                if relation == "same_subject":
                    return None
                if b is None or b == path:
                    continue
                if relation in ("links_to", "embeds"):
                    links.add(b)
                elif relation == "mentions":
                    weight[b] = weight.get(b, 0.0) + 1.0
    for b in links:
        weight[b] = weight.get(b, 0.0) + 1.0
    return weight


def patched_step_graph(view: NoteGraph, graph: nx.MultiDiGraph, changed: Iterable[str]
                       ) -> NoteGraph | None:
    """:func:`step_graph` of ``graph`` from ``view``, the step graph of ``graph`` before the
    vault graph nodes ``changed`` (:meth:`magma.vault_graph.VaultGraph.take_changed`: every
    node whose own row or outgoing edges changed) changed: the pairs of the changed notes
    are counted again from their edges either way and every other pair is kept, in
    O(changed notes' edges) plus a few passes of numpy over the view's arrays (no pass of
    Python over the graph). Equal to :func:`step_graph` of ``graph`` (nodes, order, edges,
    weights). ``None`` when a changed node is a subject's or a memory with a subject (the
    caller derives the view again)."""
    touched: dict[str, dict[str, float]] = {}
    for node in changed:
        if node.startswith("subject:"):
            return None
        path = _step_note(node)
        if path is None:
            continue
        adjacency = _adjacency(graph, path)
        if adjacency is None:
            return None
        touched[path] = adjacency
    if not touched:
        return view
    n = len(view.nodes)
    union = list(view.nodes)
    spot = dict(view.index)  # the union's indices: the view's, then nodes new to it

    def at(path: str) -> int:
        found = spot.get(path)
        if found is None:
            found = spot[path] = len(union)
            union.append(path)
        return found

    inside = np.zeros(n, dtype=bool)
    inside[[view.index[p] for p in touched if p in view.index]] = True
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(view.offsets))
    keep = ~(inside[src] | inside[view.targets])
    pairs: dict[tuple[int, int], float] = {}
    for a, adjacency in touched.items():
        for b, value in adjacency.items():
            i, j = at(a), at(b)
            pairs[(i, j)] = pairs[(j, i)] = value  # the same pair counted from either end
    added = sorted(pairs)
    new_src = np.asarray([i for i, _ in added], dtype=np.int64)
    new_dst = np.asarray([j for _, j in added], dtype=np.int64)
    new_w = np.asarray([pairs[k] for k in added], dtype=np.float64)
    kept_src, kept_dst, kept_w = src[keep], view.targets[keep], view.weights[keep]
    degree = np.bincount(kept_src, weights=kept_w, minlength=len(union)) + \
        np.bincount(new_src, weights=new_w, minlength=len(union))
    if len(union) == n and bool((degree > 0).all()):
        remap = None  # the same notes: the view's indices hold
        nodes, index = view.nodes, view.index
    else:
        nodes = tuple(sorted(union[i] for i in np.flatnonzero(degree > 0).tolist()))
        index = {path: i for i, path in enumerate(nodes)}
        remap = np.asarray([index.get(path, -1) for path in union], dtype=np.int64)
        kept_src, kept_dst = remap[kept_src], remap[kept_dst]
        new_src, new_dst = remap[new_src], remap[new_dst]
    m = len(nodes)
    # both sorted by (source, target) in path order (the remap keeps the order): merge
    kept_key = kept_src * m + kept_dst
    new_key = new_src * m + new_dst
    order = np.argsort(new_key, kind="stable")
    new_key, new_src, new_dst, new_w = new_key[order], new_src[order], new_dst[order], \
        new_w[order]
    where = np.searchsorted(kept_key, new_key)
    all_src = np.insert(kept_src, where, new_src)
    all_dst = np.insert(kept_dst, where, new_dst)
    all_w = np.insert(kept_w, where, new_w)
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(all_src, minlength=m), out=offsets[1:])
    weights = np.bincount(all_src, weights=all_w, minlength=m).astype(np.float64)
    return NoteGraph(nodes, index, offsets, all_dst, all_w, weights, len(all_dst) // 2)


def subject_pairs(subjects: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(memory, memory)`` pairs of one subject: ``subjects`` maps a memory's path to its
    subject key; each is joined with the next :data:`SUBJECT_BAND` of its subject by path."""
    groups: dict[str, list[str]] = {}
    for path, subject in subjects.items():
        groups.setdefault(subject, []).append(path)
    found: list[tuple[str, str]] = []
    for members in groups.values():
        members.sort()
        for i, path in enumerate(members):
            found.extend((path, other) for other in members[i + 1:i + 1 + SUBJECT_BAND])
    return found


def _around(graph: NoteGraph, seeds: Sequence[int], hops: int, max_nodes: int) -> list[int]:
    """The nodes within ``hops`` edges of ``seeds``, nearest first, at most ``max_nodes``."""
    chosen = list(dict.fromkeys(seeds))[:max_nodes]
    seen = set(chosen)
    frontier = chosen
    for _ in range(hops):
        nxt: list[int] = []
        for node in frontier:
            for other in graph.targets[graph.offsets[node]:graph.offsets[node + 1]].tolist():
                if other not in seen:
                    seen.add(other)
                    nxt.append(other)
                    if len(seen) >= max_nodes:
                        return chosen + nxt
        chosen += nxt
        frontier = nxt
    return chosen


def _part_edges(graph: NoteGraph, part: Sequence[int], local: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges among the nodes of ``part`` (``local``: each node's place in ``part``, -1
    outside it) -> their sources and targets as places in ``part`` and the share of the
    source's degree each carries, node by node in ``part``'s order, each node's edges in
    the graph's order: one gather over every edge of the part (a loop over 3,000 nodes
    cost ~10 ms a search)."""
    nodes = np.asarray(part, dtype=np.int64)
    lo = graph.offsets[nodes]
    counts = graph.offsets[nodes + 1] - lo
    at = np.arange(int(counts.sum()), dtype=np.int64) \
        + np.repeat(lo - (np.cumsum(counts) - counts), counts)
    inside = local[graph.targets[at]]
    kept = inside >= 0
    src = np.repeat(np.arange(len(part), dtype=np.int64), counts)[kept]
    share = graph.weights[at][kept] / np.repeat(graph.degree[nodes], counts)[kept]
    return src, inside[kept], share


def personalized_pagerank(
    graph: NoteGraph, seeds: Mapping[str, float], *, damping: float = DAMPING,
    hops: int = HOPS, max_nodes: int = MAX_NODES, iterations: int = ITERATIONS,
    tolerance: float = TOLERANCE,
) -> dict[str, float]:
    """Personalized PageRank from ``seeds`` (path -> positive weight; the weights are made to
    sum to 1) -> ``{path: score}`` for every node of the part walked (module docstring),
    seeds included; scores sum to at most 1. Seeds not in the graph are ignored; none left:
    ``{}``. Raises ``ValueError`` for a damping outside [0, 1)."""
    if not 0 <= damping < 1:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    start = {graph.index[p]: w for p, w in seeds.items() if p in graph.index and w > 0}
    if not start:
        return {}
    part = _around(graph, sorted(start, key=lambda i: (-start[i], i)), hops, max_nodes)
    local = np.full(len(graph.nodes), -1, dtype=np.int64)
    local[part] = np.arange(len(part))
    src, dst, share = _part_edges(graph, part, local)
    restart = np.zeros(len(part))
    total = sum(start.values())
    for node, w in start.items():
        restart[local[node]] = w / total
    scores = restart.copy()
    for _ in range(iterations):
        walked = np.bincount(dst, weights=scores[src] * share, minlength=len(part))
        new = (1 - damping) * restart + damping * walked
        moved = float(np.abs(new - scores).sum())
        scores = new
        if moved < tolerance:
            break
    return {graph.nodes[node]: float(scores[i]) for i, node in enumerate(part)}
