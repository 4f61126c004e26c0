"""Checks on the memory lineage graph, each on real memory files written into tmp_path and
parsed by ``ccb.parse`` (real networkx, no fakes)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from lineage_files import read_lineage, write_memory

from consistency.arbiter import Report, decide
from consistency.graph_checks import (
    FORGOTTEN,
    ChangedSource,
    DanglingLineage,
    JunkLineage,
    MergedIntoCycle,
    SupersededTwice,
    SupersedesCycle,
    graph_drifts,
    junk_lineage,
    names_nothing,
)
from magma.lineage import LineageMemory, lineage_graph


def _drifts(root: Path) -> list[object]:
    return list(graph_drifts(lineage_graph(read_lineage(root))))


def test_a_supersedes_loop_is_reported_once_with_its_chain(tmp_path: Path) -> None:
    write_memory(tmp_path, "b", "B", supersedes="c")
    write_memory(tmp_path, "a", "A", supersedes="b")
    write_memory(tmp_path, "c", "C", supersedes="a")
    write_memory(tmp_path, "自己", "自己", supersedes="自己")  # a memory superseding itself
    write_memory(tmp_path, "fine", "Fine", supersedes="a")  # leads into the loop, not part
    found = _drifts(tmp_path)
    assert SupersedesCycle("Memory/a.md", ("Memory/a.md", "Memory/b.md", "Memory/c.md")) \
        in found
    assert SupersedesCycle("Memory/自己.md", ("Memory/自己.md",)) in found
    assert sum(isinstance(d, SupersedesCycle) for d in found) == 2
    report = decide(found[0])  # type: ignore[arg-type]
    assert isinstance(report, Report)
    assert "Memory/a.md → Memory/b.md → Memory/c.md → Memory/a.md" in report.hint


def test_a_memory_superseded_by_two(tmp_path: Path) -> None:
    write_memory(tmp_path, "old", "Old")
    write_memory(tmp_path, "one", "One", supersedes="old")
    write_memory(tmp_path, "two", "Two")
    write_memory(tmp_path, "old2", "Old two", superseded_by=["two"])
    write_memory(tmp_path, "three", "Three", supersedes="old2")
    # the old side names its successor too: still one successor, not two
    write_memory(tmp_path, "kept", "Kept", superseded_by="one")
    write_memory(tmp_path, "one_b", "One b", supersedes="kept")
    found = [d for d in _drifts(tmp_path) if isinstance(d, SupersededTwice)]
    assert found == [SupersededTwice("Memory/kept.md", ("Memory/one.md", "Memory/one_b.md")),
                     SupersededTwice("Memory/old2.md", ("Memory/three.md", "Memory/two.md"))]


def test_dangling_lineage_links_name_the_property(tmp_path: Path) -> None:
    write_memory(tmp_path, "new", "New", supersedes="gone-for-good",
                 status="archived", merged_into="No such keeper")
    write_memory(tmp_path, "旧的", "旧的", superseded_by="不存在")
    found = [d for d in _drifts(tmp_path) if isinstance(d, DanglingLineage)]
    assert found == [
        DanglingLineage("Memory/new.md", "merged_into", "[[No such keeper]]"),
        DanglingLineage("Memory/new.md", "supersedes", "[[gone-for-good]]"),
        DanglingLineage("Memory/旧的.md", "superseded_by", "[[不存在]]"),
    ]
    assert names_nothing(found) == {("Memory/new.md", "no such keeper"),  # type: ignore[arg-type]
                                    ("Memory/new.md", "gone-for-good"),
                                    ("Memory/旧的.md", "不存在")}


def test_derived_from_a_changed_source_lists_the_chain(tmp_path: Path) -> None:
    write_memory(tmp_path, "s1", "Source one")
    write_memory(tmp_path, "s2", "Source two", status="archived", archived_reason="project done")
    write_memory(tmp_path, "s3", "Source three")
    write_memory(tmp_path, "newer", "Newer", supersedes="s3")
    write_memory(tmp_path, "profile", "Profile", derived_from=["s1", "s2", "s3", "forgotten"])
    write_memory(tmp_path, "digest", "Digest", derived_from="profile")
    found = [d for d in _drifts(tmp_path) if isinstance(d, ChangedSource)]
    assert found == [
        ChangedSource("Memory/digest.md", ("Memory/digest.md", "Memory/profile.md",
                                           "Memory/s2.md"), "archived (project done)"),
        ChangedSource("Memory/digest.md", ("Memory/digest.md", "Memory/profile.md",
                                           "Memory/s3.md"), "superseded by Memory/newer.md"),
        ChangedSource("Memory/digest.md", ("Memory/digest.md", "Memory/profile.md",
                                           "[[forgotten]]"), "not found (forgotten or renamed)"),
        ChangedSource("Memory/profile.md", ("Memory/profile.md", "Memory/s2.md"),
                      "archived (project done)"),
        ChangedSource("Memory/profile.md", ("Memory/profile.md", "Memory/s3.md"),
                      "superseded by Memory/newer.md"),
        ChangedSource("Memory/profile.md", ("Memory/profile.md", "[[forgotten]]"),
                      "not found (forgotten or renamed)"),
    ]
    # a source derived from nothing is reported once: as a changed source, not also dangling
    assert not any(isinstance(d, DanglingLineage) for d in _drifts(tmp_path))


def test_what_the_derivation_itself_did_to_its_sources_is_no_change(tmp_path: Path) -> None:
    """A synthesis archives its sources into itself and supersedes them: that is the
    derivation, not a change since."""
    for stem in ("m1", "m2"):
        write_memory(tmp_path, stem, stem, status="archived", archived_reason="synthesised",
                     merged_into="synthesis")
    write_memory(tmp_path, "synthesis", "Synthesis", supersedes=["m1", "m2"],
                 derived_from=["m1", "m2"])
    assert _drifts(tmp_path) == []
    write_memory(tmp_path, "m2", "m2", status="archived", archived_reason="synthesised",
                 merged_into="synthesis", superseded_by="correction")
    write_memory(tmp_path, "correction", "Correction", supersedes="m2")
    assert _drifts(tmp_path) == [
        SupersededTwice("Memory/m2.md", ("Memory/correction.md", "Memory/synthesis.md")),
        ChangedSource("Memory/synthesis.md", ("Memory/synthesis.md", "Memory/m2.md"),
                      "superseded by Memory/correction.md")]


def test_a_loop_of_derivations_is_walked_once(tmp_path: Path) -> None:
    write_memory(tmp_path, "x", "X", derived_from="y")
    write_memory(tmp_path, "y", "Y", derived_from="z")
    write_memory(tmp_path, "z", "Z", derived_from=["x", "gone"])
    found = [d for d in _drifts(tmp_path) if isinstance(d, ChangedSource)]
    assert [(d.path, d.chain[-1]) for d in found] == [
        ("Memory/x.md", "[[gone]]"), ("Memory/y.md", "[[gone]]"), ("Memory/z.md", "[[gone]]")]
    assert found[0].chain == ("Memory/x.md", "Memory/y.md", "Memory/z.md", "[[gone]]")


def test_an_archived_derived_memory_is_not_flagged(tmp_path: Path) -> None:
    write_memory(tmp_path, "src", "Src", status="archived", archived_reason="project done")
    write_memory(tmp_path, "old-summary", "Old summary", status="archived",
                 archived_reason="superseded", derived_from="src")
    assert _drifts(tmp_path) == []


def test_a_large_lineage_checks_in_linear_time(tmp_path: Path) -> None:
    """2,000 memories in one long supersedes chain with a loop at its end, and a derivation
    fan: one cycle found whole (strongly connected components, one walk per derived
    memory). Its time is measured in ``bench/graph_bench.py``, never asserted here."""
    n = 2000
    for i in range(n):
        write_memory(tmp_path, f"m{i}", f"M{i}", supersedes=f"m{i + 1}" if i + 1 < n else "m0")
    write_memory(tmp_path, "fan", "Fan", derived_from=[f"m{i}" for i in range(0, n, 10)])
    found = graph_drifts(lineage_graph(read_lineage(tmp_path)))
    cycles = [d for d in found if isinstance(d, SupersedesCycle)]
    assert len(cycles) == 1 and len(cycles[0].chain) == n


def test_a_forgotten_source_leaves_a_count_that_flags_the_chain(tmp_path: Path) -> None:
    write_memory(tmp_path, "profile", "Profile", derived_from="s1")
    write_memory(tmp_path, "s1", "S1")
    (tmp_path / "Memory/profile.md").write_text(
        (tmp_path / "Memory/profile.md").read_text(encoding="utf-8").replace(
            "version: 1\n", "version: 1\nforgotten_sources: 2\n"), encoding="utf-8")
    write_memory(tmp_path, "digest", "Digest", derived_from="profile")
    found = [d for d in _drifts(tmp_path) if isinstance(d, ChangedSource)]
    assert found == [
        ChangedSource("Memory/digest.md", ("Memory/digest.md", "Memory/profile.md", FORGOTTEN),
                      "2 of its sources forgotten"),
        ChangedSource("Memory/profile.md", ("Memory/profile.md", FORGOTTEN),
                      "2 of its sources forgotten")]


_STEMS = ["a", "b", "c", "d", "e"]


@given(st.dictionaries(
    st.sampled_from(_STEMS),
    st.tuples(st.sampled_from(["active", "archived"]),
              st.dictionaries(st.sampled_from(["supersedes", "superseded_by", "merged_into",
                                               "derived_from"]),
                              st.lists(st.sampled_from([*_STEMS, "gone"]), min_size=1,
                                       max_size=3), max_size=4)),
    min_size=1))
@settings(max_examples=200, deadline=None)
def test_any_lineage_checks_in_finite_time_and_every_chain_follows_edges(
    memories: dict[str, tuple[str, dict[str, list[str]]]],
) -> None:
    """Loops of every kind, written by hand: the check ends, and each reported chain is a
    path of the graph (derived_from edges, then the changed source)."""
    facts = [LineageMemory(f"Memory/{stem}.md", stem, status=status,
                           links=tuple((prop, f"[[{t}]]") for prop, targets in links.items()
                                       for t in targets))
             for stem, (status, links) in memories.items()]
    graph = lineage_graph(facts)
    node = {graph.nodes[n].get("path", f"[[{n.split(':', 1)[1]}]]"): n for n in graph.nodes}
    for drift in graph_drifts(graph):
        if isinstance(drift, ChangedSource):
            steps = [node[p] for p in drift.chain]
            assert all(graph.has_edge(u, v, key="derived_from") for u, v in pairwise(steps))
            assert len(set(steps)) == len(steps)  # no memory twice: no loop
        elif isinstance(drift, SupersedesCycle):
            loop = [node[p] for p in (*drift.chain, drift.chain[0])]
            assert all(graph.has_edge(u, v, key="supersedes") for u, v in pairwise(loop))


def test_a_promoted_diary_line_names_its_evidence_not_a_memory(tmp_path) -> None:
    """A diary line promoted by deep sleep keeps its evidence in ``derived_from``
    (``Daily/2026-12-04.md:11``, a transcript's ``~/…jsonl:42``): lines of raw material, not a
    memory that was forgotten. ``check`` stays clean."""
    write_memory(tmp_path, "rule", "Rule", derived_from=[
        "Daily/2026-12-04.md:11", "memory/2026-06-15.md:5-8",
        "~/.claude/projects/x/abc.jsonl:42"])
    assert _drifts(tmp_path) == []


def test_a_merged_into_loop_is_reported_and_changes_no_source(tmp_path: Path) -> None:
    """Memories merged into each other round a loop (two, three, one naming itself): each
    loop is reported once with its chain, and a memory derived from one of them is not
    "derived from a changed source" — a loop says nothing about which memory was kept."""
    write_memory(tmp_path, "a", "A", merged_into="b")
    write_memory(tmp_path, "b", "B", merged_into="a")
    write_memory(tmp_path, "x", "X", merged_into="y")
    write_memory(tmp_path, "y", "Y", merged_into="z")
    write_memory(tmp_path, "z", "Z", merged_into="x")
    write_memory(tmp_path, "自己", "自己", merged_into="自己")
    write_memory(tmp_path, "s1", "S1", supersedes="s2")
    write_memory(tmp_path, "s2", "S2", supersedes="s1")
    write_memory(tmp_path, "summary", "Summary", derived_from=["a", "y", "自己", "s1"])
    found = _drifts(tmp_path)
    assert [d for d in found if isinstance(d, MergedIntoCycle)] == [
        MergedIntoCycle("Memory/a.md", ("Memory/a.md", "Memory/b.md")),
        MergedIntoCycle("Memory/x.md", ("Memory/x.md", "Memory/y.md", "Memory/z.md")),
        MergedIntoCycle("Memory/自己.md", ("Memory/自己.md",))]
    assert not [d for d in found if isinstance(d, ChangedSource)]
    hint = decide(found[0]).hint  # type: ignore[arg-type,union-attr]
    assert "ignored" in hint and "none of them is current" not in hint
    # a merge out of the loop is a change all the same
    write_memory(tmp_path, "a", "A", merged_into=["b", "kept"])
    write_memory(tmp_path, "kept", "Kept")
    changed = [d for d in _drifts(tmp_path) if isinstance(d, ChangedSource)]
    assert [(d.chain, d.change) for d in changed] == [
        (("Memory/summary.md", "Memory/a.md"), "merged into Memory/kept.md")]


def test_lineage_values_that_are_no_link_are_reported_once_each(tmp_path: Path) -> None:
    """A number, a mapping, an empty list item, in ``supersedes``, ``superseded_by`` or
    ``derived_from``: reported with the value as written, never an edge; an empty property
    (``supersedes:``) is no value and not reported."""
    folder = tmp_path / "Memory"
    folder.mkdir()
    head = "---\nname: {0}\ndescription: {0}\ntype: project\n"
    for stem, lineage in {"number": "supersedes: 42\n", "mapping": "superseded_by: {a: 1}\n",
                          "empty-item": 'derived_from:\n  - null\n  - "[[number]]"\n',
                          "empty": "supersedes:\n", "fine": 'supersedes: [[number]]\n',
                          "中文": "supersedes: 3.5\n"}.items():
        (folder / f"{stem}.md").write_text(head.format(stem) + lineage + "---\nText.\n",
                                           encoding="utf-8")
    memories = read_lineage(tmp_path)
    assert junk_lineage(memories) == [
        JunkLineage("Memory/empty-item.md", "derived_from", "null"),
        JunkLineage("Memory/mapping.md", "superseded_by", '{"a": 1}'),
        JunkLineage("Memory/number.md", "supersedes", "42"),
        JunkLineage("Memory/中文.md", "supersedes", "3.5")]
    graph = lineage_graph(memories)
    assert {(u, v, k) for u, v, k in graph.edges(keys=True)} == {
        ("note:Memory/empty-item.md", "note:Memory/number.md", "derived_from"),
        ("note:Memory/fine.md", "note:Memory/number.md", "supersedes")}
    assert "no link" in decide(junk_lineage(memories)[0]).hint  # type: ignore[union-attr]
