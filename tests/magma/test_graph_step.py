"""The graph step's graph, read from the vault graph, and its personalized PageRank (pure)."""

from __future__ import annotations

import numpy as np
import pytest

from magma.graph_step import (
    SUBJECT_BAND,
    note_graph,
    personalized_pagerank,
    step_graph,
    subject_pairs,
)
from magma.store import GraphFileRow, LinkRecord
from magma.vault_graph import VaultGraph


def test_the_graph_is_undirected_weighted_and_drops_self_loops() -> None:
    graph = note_graph([("a", "b"), ("b", "a"), ("a", "a")], [("b", "c")])
    assert graph.nodes == ("a", "b", "c") and graph.edges == 2
    assert graph.neighbours("a") == ["b"] and graph.neighbours("b") == ["a", "c"]
    assert graph.neighbours("zzz") == []
    # a pair given twice (a link each way) weighs 2
    assert graph.degree.tolist() == [2.0, 3.0, 1.0]


def _exact(graph_pairs: list[tuple[str, str]], seeds: dict[str, float], damping: float
           ) -> dict[str, float]:
    """Personalized PageRank solved directly: (1 - d) (I - d W)^-1 s."""
    graph = note_graph(graph_pairs)
    n = len(graph.nodes)
    walk = np.zeros((n, n))
    for i in range(n):
        for k in range(graph.offsets[i], graph.offsets[i + 1]):
            walk[graph.targets[k], i] = graph.weights[k] / graph.degree[i]
    restart = np.zeros(n)
    for path, weight in seeds.items():
        restart[graph.index[path]] = weight / sum(seeds.values())
    solved = (1 - damping) * np.linalg.solve(np.eye(n) - damping * walk, restart)
    return dict(zip(graph.nodes, solved.tolist(), strict=True))


def test_pagerank_equals_the_exact_solution_when_the_walk_reaches_everything() -> None:
    pairs = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("a", "e")]
    seeds = {"a": 2.0, "d": 1.0}
    found = personalized_pagerank(note_graph(pairs), seeds, hops=10, tolerance=1e-12,
                                  iterations=500)
    exact = _exact(pairs, seeds, 0.85)
    assert found.keys() == exact.keys()
    for path, value in exact.items():
        assert found[path] == pytest.approx(value, abs=1e-9)
    assert sum(found.values()) == pytest.approx(1.0)


def test_pagerank_falls_with_distance_and_stops_at_the_hops() -> None:
    path = [("n0", "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n4")]
    found = personalized_pagerank(note_graph(path), {"n0": 1.0}, hops=2)
    assert set(found) == {"n0", "n1", "n2"}
    assert found["n1"] > found["n2"] > 0 and found["n0"] > found["n2"]
    assert sum(found.values()) <= 1.0
    assert personalized_pagerank(note_graph(path), {"elsewhere": 1.0}) == {}
    assert personalized_pagerank(note_graph(path), {}) == {}
    capped = personalized_pagerank(note_graph(path), {"n0": 1.0}, max_nodes=2)
    assert set(capped) == {"n0", "n1"}
    with pytest.raises(ValueError, match="damping"):
        personalized_pagerank(note_graph(path), {"n0": 1.0}, damping=1.0)


def test_a_note_linked_from_two_seeds_outranks_one_linked_from_one() -> None:
    pairs = [("s1", "shared"), ("s2", "shared"), ("s1", "only1"), ("s2", "only2")]
    found = personalized_pagerank(note_graph(pairs), {"s1": 1.0, "s2": 1.0})
    assert found["shared"] > found["only1"] == pytest.approx(found["only2"])


def _memory(path: str, text: str, **props: object) -> GraphFileRow:
    return GraphFileRow(path, "note", path, (), "project", {"description": text, **props})


def test_the_walk_reads_links_mentions_and_subjects_of_the_vault_graph() -> None:
    files = [
        GraphFileRow("Notes/Kiln.md", "note", "Kiln", ("pottery",), None,
                     {"aliases": ["Kiln wiring checklist"]}),
        GraphFileRow("Notes/Glaze.md", "note", "Glaze", (), None, {}),
        GraphFileRow("Notes/Go.md", "note", "Go", (), None, {}),
        GraphFileRow("Notes/tile.png", "attachment", "tile.png", (), None, {}),
        _memory("Memory/pottery.md", "Check the Kiln  wiring checklist before firing; "
                "glazes are not glaze-free. Go on. Pottery again.", subject="studio.kiln"),
        _memory("Memory/firing.md", "Firing at dawn.", subject="Studio Kiln"),
        GraphFileRow("Memory/MEMORY.md", "note", "Memory", (), None, {}),
    ]
    links = [LinkRecord("Notes/Glaze.md", "Kiln", "wikilink", None, None, 1),
             LinkRecord("Notes/Glaze.md", "Kiln", "wikilink", "Firing", None, 2),
             LinkRecord("Notes/Kiln.md", "Glaze", "wikilink", None, None, 1),
             LinkRecord("Notes/Kiln.md", "tile.png", "embed", None, None, 2),
             LinkRecord("Notes/Kiln.md", "Kiln", "wikilink", None, None, 3),
             LinkRecord("Notes/Kiln.md", "ghost", "wikilink", None, None, 4),
             LinkRecord("Memory/MEMORY.md", "pottery", "wikilink", None, None, 1)]
    graph = step_graph(VaultGraph.build(files, links).graph)
    assert graph.neighbours("Memory/pottery.md") == [
        "Memory/firing.md", "Notes/Glaze.md", "Notes/Kiln.md"]  # subject, two mentions
    assert graph.neighbours("Notes/Kiln.md") == ["Memory/pottery.md", "Notes/Glaze.md"]
    weights = dict(zip(graph.neighbours("Notes/Kiln.md"), graph.weights[
        graph.offsets[graph.index["Notes/Kiln.md"]]:].tolist(), strict=False))
    assert weights == {"Memory/pottery.md": 1.0, "Notes/Glaze.md": 1.0}  # links either way: 1
    assert "Memory/MEMORY.md" not in graph.index and "Notes/tile.png" not in graph.index
    assert "Notes/Go.md" not in graph.index  # a name under four characters is not looked for
    assert graph.edges == 4


def test_memories_of_one_subject_are_joined_in_a_band() -> None:
    assert sorted(subject_pairs({"m/a.md": "editor", "m/b.md": "editor", "m/c.md": "shell"})
                  ) == [("m/a.md", "m/b.md")]
    many = {f"m/{i:03}.md": "editor" for i in range(SUBJECT_BAND + 5)}
    graph = note_graph(subject_pairs(many))
    assert len(graph.neighbours("m/000.md")) == SUBJECT_BAND
    assert len(graph.neighbours(f"m/{SUBJECT_BAND + 4:03}.md")) == SUBJECT_BAND


@pytest.mark.parametrize("seed", range(6))
def test_the_walk_reads_the_same_edges_as_node_by_node(seed: int) -> None:
    """The part's edges, gathered at once, are the ones read node by node: same order, same
    shares to the bit (the walk's sums, and so its scores and ties, do not move); graphs with
    hubs, lone pairs, edges given twice, Chinese and accented paths, parts cut short."""
    from magma.graph_step import _around, _part_edges

    rng = np.random.default_rng(seed)
    names = [f"日记/{i}.md" if i % 3 == 0 else f"Crème/{i}.md" for i in range(300)]
    for nodes, edges, cut in ((5, 3, 2), (60, 40, 10), (300, 2000, 3000), (300, 900, 50)):
        ends = rng.integers(0, nodes, (edges, 2))
        ends[: edges // 4, 0] = 0  # a hub
        graph = note_graph([(names[a], names[b]) for a, b in ends.tolist()])
        starts = sorted(set(rng.integers(0, len(graph.nodes), 4).tolist()))
        part = _around(graph, starts, 2, cut)
        local = np.full(len(graph.nodes), -1, dtype=np.int64)
        local[part] = np.arange(len(part))
        sources, targets, shares = [], [], []
        for i, node in enumerate(part):
            lo, hi = graph.offsets[node], graph.offsets[node + 1]
            inside = local[graph.targets[lo:hi]]
            sources.append(np.full(int((inside >= 0).sum()), i, dtype=np.int64))
            targets.append(inside[inside >= 0])
            shares.append(graph.weights[lo:hi][inside >= 0] / graph.degree[node])
        for got, want in zip(_part_edges(graph, part, local),
                             map(np.concatenate, (sources, targets, shares)), strict=True):
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
