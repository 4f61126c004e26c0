"""The full-fusion stage of search: notes near the best notes so far in the vault's graph.

``retrieval.graph_step`` chooses how near is found:

- ``pagerank`` (default): personalized PageRank (:mod:`magma.graph_step`) over links
  either way, mentions and shared subjects of the one vault graph the writer keeps in step
  (:func:`graph_of`), restarting at the :data:`PAGERANK_SEEDS` best
  notes so far (by fused score) and at the notes linked from the passages of theirs the
  query matched (:func:`restart_weights`); the seeds and the best other note it reaches
  get a lift added to their fused score in proportion to their PageRank
  (:func:`pagerank_walk`): a question whose words match a passage that links on finds the
  note linked, and the match itself stays first.
- ``one_hop``: the notes linked either way with the :data:`GRAPH_SEEDS` best notes that no
  earlier list found, best cosine first (:func:`one_hop`).
- ``off``: the stage does not run.

Measured with ``bench/graph_step_bench.py`` (questions whose answer is one or two links from
the note their words match, drawn from the English obsidian-help vault; see
:data:`PAGERANK_SEEDS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ccb.markdown import extract_links
from daemon.rerank import best_row
from magma.catalogue import Snapshot, chunks_at_rows, link_written, linked
from magma.graph_keeper import current_graph
from magma.graph_step import NoteGraph, personalized_pagerank, step_graph
from magma.store import INDEX_FILE_NAMES, ChunkCandidate, MagmaStore

__all__ = [
    "GRAPH_MAX",
    "GRAPH_SEEDS",
    "NEAR_CAP",
    "NEAR_LIFTED",
    "PAGERANK_SEEDS",
    "PASSAGE_SHARE",
    "GraphHit",
    "graph_of",
    "linking_seeds",
    "neighbours_of",
    "one_hop",
    "pagerank_walk",
    "passage_links",
    "restart_weights",
    "seed_passages",
]

#: How many of the best notes so far one-hop expansion expands, and how many neighbours it
#: adds (our choice, as first built).
GRAPH_SEEDS = 3
GRAPH_MAX = 10
#: The walk: it starts from the :data:`PAGERANK_SEEDS` best notes so far; :data:`PASSAGE_SHARE`
#: of a seed's restart weight goes to the notes linked from the seed's passages the query
#: matched; of those, the :data:`NEAR_LIFTED` the walk scores highest are lifted to
#: :data:`NEAR_CAP` × the best seed's fused score: just after the best match.
#:
#: Our choices, measured with ``bench/graph_step_bench.py --no-deadlines`` (English
#: obsidian-help; 40 one-link, 40 two-link and 40 control questions; figures are recall@5 of
#: one-link / control hit@5, with off at 0.037 / 0.975) and ``bench/layer_probes.py``
#: (search hit@5 and MRR of the 40 probes; off and one_hop: L1 9/10, 0.627). The walk's
#: notes as a ranked list in the fusion (weight 0.5 or 1.0): without the notes earlier lists
#: found, no change; with them and without the seeds, 0.113–0.163 / 0.575–0.800; with the
#: seeds, weight 1.0: 0.163 / 0.975 (a note one list ranks first outweighs it). As a lift
#: of every note the walk reaches, in proportion to its PageRank (twice the best seed's
#: fused score at the best seed's PageRank, a non-seed capped at 0.8 of that): 0.250 /
#: 0.925; the seeds and the best 1, 2 or 3 other notes: 0.375 / 0.950, 0.450 / 0.925,
#: 0.275 / 0.925, but the probes fell (L1 7/10, MRR 0.480: a lifted seed leaves the
#: importance and layer bonuses nothing to reorder). Without lifting the seeds, the best
#: other note placed at 0.8, 0.9, 0.95, 0.98, 1.0 × the best seed's fused score: 0.050,
#: 0.113, 0.338, 0.350, 0.400 / 0.950 (control MRR 0.790, 0.790, 0.788, 0.782, 0.777 against
#: 0.790 off); two notes at 0.95: 0.300 / 0.950; taking the walk's best note anywhere, not
#: only among the passages' links: 0.312 / 0.950 (two-link 0.025 against 0) and the same
#: probes; this rule leaves the probes as off leaves them. Passage share, every note lifted
#: (lift 1): 0 → 0.138 / 0.925, 0.5 → 0.225 / 0.900; the seeds and two others lifted: 0.5 →
#: 0.450 / 0.925, 0.8 → 0.475 / 0.925, and one seed instead of three 0.425 / 0.875.
#: The whole stage took 5.4 / 15.6 ms (p50 / p95) there, most of it reading the matched
#: passages' chunks (two cores shared, load 8).
#: The lift is to the seed whose passage links to the note, not the best seed (a demo query
#: on ``vault_example`` put a project the fourth hit links to second, above two notes about
#: the question): one-link recall@5 0.300 → 0.225, both kinds 0.150 → 0.113, control hit@5
#: 0.950 as before, one_hop and off 0 (the same bench, one run).
PAGERANK_SEEDS = 3
PASSAGE_SHARE = 0.5
NEAR_CAP = 0.95
NEAR_LIFTED = 1


@dataclass(frozen=True, slots=True)
class GraphHit:
    """A note the graph step proposes: its best chunk ``row`` by cosine to the query, that
    ``cosine``, and why (``--explain``)."""

    path: str
    row: int
    cosine: float
    why: str
    lift: float = 0.0


def neighbours_of(store: MagmaStore, snap: Snapshot) -> dict[str, set[str]]:
    """Notes linked either way (wikilinks, embeds, markdown links that resolve; not through
    tags: a tag joins too many notes to mean "related"), index files left out; read once per
    snapshot. Raises :class:`config.errors.StoreError`."""
    if snap.neighbours is None or snap.link_targets is None:
        pairs = store.link_pairs()
        # the paths as the catalogue spells them, one string each (100,000 notes, 382,301
        # links: 111 -> 54 MB for these two maps)
        own = {path: path for path in snap.entries}
        sources = [own.get(p, p) for p in pairs.column("src").to_pylist()]
        resolved: list[Any] = [p if p is None else own.get(p, p)
                                  for p in pairs.column("resolved").to_pylist()]
        written: dict[str, dict[str, str]] = {}
        for src, target, path in zip(sources, pairs.column("target").to_pylist(), resolved,
                                     strict=True):
            written.setdefault(src, {})[link_written(target)] = path
        snap.link_targets = written
        snap.neighbours = linked(sources, resolved, snap.entries)
    return snap.neighbours


def passage_links(snap: Snapshot, src: str, body: str) -> list[str]:
    """The notes the links in ``body`` (a chunk of ``src``: wikilinks, embeds and markdown
    links, resolved as the index resolved them) point to, ``src`` and index files left out,
    in the order written. Needs :func:`neighbours_of` run on ``snap``."""
    table = (snap.link_targets or {}).get(src, {})
    found: list[str] = []
    for link in extract_links(body):  # the vault's own link reader: code and URLs left out
        path = table.get(link_written(link.target))
        if path is not None and path != src and _is_note(snap, path) and path not in found:
            found.append(path)
    return found


def seed_passages(store: MagmaStore, snap: Snapshot, seeds: Sequence[str],
                  rows: Mapping[str, int], chunks: Mapping[str, ChunkCandidate]
                  ) -> dict[str, list[str]]:
    """Each seed's passages the query matched: the chunk full text found (``chunks``) and the
    chunk nearest the query by cosine (``rows``, read from the store when not in
    ``chunks``) -> ``{seed: [body, …]}``. Raises :class:`config.errors.StoreError`."""
    passages: dict[str, list[str]] = {s: [] for s in seeds}
    wanted: dict[str, str] = {}
    read: list[int] = []
    for seed in seeds:
        chunk = chunks.get(seed)
        if chunk is not None:
            passages[seed].append(chunk.body or chunk.text)
        row = rows.get(seed)
        if row is not None and (chunk is None or snap.chunk_ids[row] != chunk.chunk_id):
            wanted[snap.chunk_ids[row]] = seed
            read.append(row)
    if wanted:
        for chunk in chunks_at_rows(store, snap, read):
            passages[wanted[chunk.chunk_id]].append(chunk.body or chunk.text)
    return passages


def restart_weights(snap: Snapshot, seeds: Mapping[str, float],
                    passages: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Where the walk restarts: each seed with its weight, of which :data:`PASSAGE_SHARE`
    goes in equal parts to the notes its matched passages link to (a question's words
    matched the passage that points on)."""
    restart: dict[str, float] = {}
    for seed, weight in seeds.items():
        targets = list(dict.fromkeys(t for body in passages.get(seed, ())
                                     for t in passage_links(snap, seed, body)))
        share = PASSAGE_SHARE if targets else 0.0
        restart[seed] = restart.get(seed, 0.0) + weight * (1 - share)
        for target in targets:
            restart[target] = restart.get(target, 0.0) + weight * share / len(targets)
    return restart


def graph_of(store: MagmaStore, snap: Snapshot,
             kept: Callable[[], NoteGraph | None] | None = None) -> NoteGraph:
    """The graph step's graph of ``snap``: the view of the vault graph
    (:func:`magma.graph_step.step_graph`) the writer keeps in step (``kept``: its
    :meth:`magma.graph_keeper.GraphKeeper.step_graph`), or, where none is kept, of the
    graph of the index (:func:`magma.graph_keeper.current_graph`: its ``edges`` table when
    in step); once per snapshot. The links table's targets as written are read with it
    (:func:`neighbours_of`): the walk restarts at what a matched passage links to
    (:func:`passage_links`). Raises :class:`config.errors.StoreError`."""
    neighbours_of(store, snap)
    if snap.graph is None:
        view = kept() if kept is not None else None
        snap.graph = view if view is not None else step_graph(current_graph(store))
    return snap.graph


def _is_note(snap: Snapshot, path: str) -> bool:
    return path in snap.entries and path.rsplit("/", 1)[-1] not in INDEX_FILE_NAMES


def _title(snap: Snapshot, path: str) -> str:
    entry = snap.entries.get(path)
    return entry.title if entry is not None else path


def one_hop(snap: Snapshot, neighbours: Mapping[str, set[str]], seeds: Sequence[str],
            vector: np.ndarray | None, keep: Callable[[str], bool]) -> list[GraphHit]:
    """Neighbours of ``seeds`` that ``keep`` allows (the caller leaves out what earlier
    lists found), best cosine first, at most :data:`GRAPH_MAX`."""
    parent: dict[str, str] = {}
    for seed in seeds:
        for other in sorted(neighbours.get(seed, ())):
            if other not in parent and other not in seeds and keep(other):
                parent[other] = seed
    hits: list[GraphHit] = []
    for path, seed in parent.items():
        row, sim = best_row(snap, path, vector)
        if row is not None:
            hits.append(GraphHit(path, row, sim, f"linked with {_title(snap, seed)}"))
    hits.sort(key=lambda h: -h.cosine)
    return hits[:GRAPH_MAX]


def linking_seeds(snap: Snapshot, passages: Mapping[str, Sequence[str]]
                  ) -> dict[str, list[str]]:
    """``{note: [seed, …]}``: the seeds whose matched passages (:func:`seed_passages`) link
    to each note."""
    found: dict[str, list[str]] = {}
    for seed, bodies in passages.items():
        for target in dict.fromkeys(t for body in bodies
                                    for t in passage_links(snap, seed, body)):
            found.setdefault(target, []).append(seed)
    return found


def pagerank_walk(snap: Snapshot, graph: NoteGraph, seeds: Mapping[str, float],
                  restart: Mapping[str, float], vector: np.ndarray | None,
                  keep: Callable[[str], bool], fused: Mapping[str, float],
                  linked_from: Mapping[str, Sequence[str]] | None = None) -> list[GraphHit]:
    """Personalized PageRank restarting at ``restart`` (:func:`restart_weights` of
    ``seeds``: path -> fused score so far) -> the :data:`NEAR_LIFTED` notes linked from the
    seeds' matched passages (``keep`` allows, not seeds) that it scores highest, each lifted
    to :data:`NEAR_CAP` × the fused score of the best seed whose passage links to it
    (``linked_from``, :func:`linking_seeds`; without it, the best seed): just after the note
    that points on, never above a better match than that (``fused``: every note's fused
    score so far; a note already above is not lifted). ``[]`` when no passage links on."""
    if not seeds:
        return []
    scores = personalized_pagerank(graph, restart)
    linked = sorted((p for p in restart if p not in seeds and p in scores and keep(p)),
                    key=lambda p: (-scores[p], p))[:NEAR_LIFTED]
    hits: list[GraphHit] = []
    for path in linked:
        row, sim = best_row(snap, path, vector)
        sources = [s for s in (linked_from or {}).get(path, ()) if s in seeds] or list(seeds)
        lead = max(sources, key=lambda p: (seeds[p], p))
        if row is not None:
            hits.append(GraphHit(
                path, row, sim,
                f"along the links from {_title(snap, lead)} (link score {scores[path]:.3f})",
                lift=max(0.0, NEAR_CAP * seeds[lead] - fused.get(path, 0.0))))
    return hits
