"""What the vault graph a daemon holds costs in memory, part by part, on an indexed vault, and
how long its build, the graph step's walks and an edit take.

    DREAMD_STORAGE__DATA_DIR=DATA .venv/bin/python bench/graph_memory.py INDEXED_VAULT [--walks N]

Reads the files and links of the index (``magma.store.graph_reads``) and builds the vault
graph from them (``VaultGraph.build``, what the daemon's ``GraphKeeper`` holds for its life)
and the graph step's view of it (``magma.graph_step.step_graph``, held beside it), printing
the process's RSS after each step (after a garbage collection, glibc's ``malloc_trim`` and
Arrow's ``release_unused``, so that freed pages count as freed: the rows read and let go
leave +165 MB at 100,000 notes without the last, 69 MB with it). Then the times: ``--walks``
walks of the graph step (``personalized_pagerank`` and the one-hop ``neighbours``) from
notes of the view drawn with a fixed seed (p50 / p95 ms), and as many edits (a note's
links replaced, ``VaultGraph.upsert``, then the view patched, ``patched_step_graph``; p50 /
p95 ms). Times are CPU times of this process (``time.process_time``: a machine shared with
other work slows the wall clock, not these). Then what each part holds by
``sys.getsizeof`` (an object held by two parts counted with the first), and last, lets each
part of the graph go in turn (the view, the networkx graph, the mention index, the links,
the files, the link resolver) and prints what RSS each gave back. Linux with glibc only. The
index may be one built with the fake embedder (``bench/scale_bench.py --structure-only``):
the graph is built from files and links only, the same whatever the vectors; the model is
never loaded.
"""
import argparse
import ctypes
import gc
import random
import statistics
import sys
import time
from pathlib import Path

import psutil
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))

from fakes import TokenHashEmbedder  # noqa: E402

from daemon.app import App, load  # noqa: E402
from magma.graph_keeper import graph_reads_of, memory_texts  # noqa: E402
from magma.graph_step import patched_step_graph, personalized_pagerank, step_graph  # noqa: E402
from magma.store import graph_reads  # noqa: E402
from magma.vault_graph import VaultGraph  # noqa: E402

#: The parts let go in turn, by the attributes that hold them (a part a version of the graph
#: does not have is let go as nothing).
_PARTS = (("networkx graph", ("graph",)), ("mention index", ("_mentions",)),
          ("links by source", ("_links", "_by_key")), ("files", ("_files",)),
          ("link resolver", ("_resolver",)))


def rss() -> float:
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    pa.default_memory_pool().release_unused()
    return psutil.Process().memory_info().rss / 2**20


def _deep(obj: object, seen: set[int]) -> int:
    """``sys.getsizeof`` of ``obj`` and of everything it holds that ``seen`` does not name
    yet (then named there): each object counts once, with the first part that holds it."""
    total, stack = 0, [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type) or callable(item):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        stack.extend(gc.get_referents(item))
    return total


def _sizes(held: VaultGraph) -> None:
    """What each part of ``held`` holds by ``sys.getsizeof`` (:func:`_deep`, in this order)."""
    graph = held.graph
    seen: set[int] = set()
    parts = [("node ids", list(graph._node)), ("node attributes", graph._node),
             ("out-edges", graph._succ), ("in-edges", graph._pred)]
    parts += [(name.lstrip("_"), getattr(held, name)) for name in
              ("_resolver", "_mentions", "_files", "_links", "_by_key", "_shared")
              if hasattr(held, name)]
    print("held by sys.getsizeof (a part shares what an earlier part holds):")
    total = 0
    for name, part in parts:
        size = _deep(part, seen)
        total += size
        print(f"  {name:18s} {size / 2**20:7,.1f} MB")
    print(f"  {'all of these':18s} {total / 2**20:7,.1f} MB")


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {1000 * statistics.median(ordered):.2f} ms, p95 {1000 * p95:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault")
    parser.add_argument("--walks", type=int, default=200)
    args = parser.parse_args()
    app = App.create(load(None, None, {"vault.path": args.vault}),
                     embedder=TokenHashEmbedder())
    start = rss()
    print(f"start: {start:,.0f} MB")
    began = time.process_time()
    files, links = graph_reads(app.store)
    texts = memory_texts(app.store)
    read = rss()
    print(f"rows read: {len(files):,} files, {len(links):,} links: +{read - start:,.0f} MB "
          f"({time.process_time() - began:.1f} s)")
    began = time.process_time()
    held = VaultGraph.build(files, links, texts)
    took = time.process_time() - began
    held.take_changed()
    print(f"VaultGraph.build: {took:.1f} s; {held.graph.number_of_nodes():,} nodes, "
          f"{held.graph.number_of_edges():,} edges")
    rng = random.Random(52)
    edited = rng.sample(sorted(f.path for f in files if f.kind != "attachment"), args.walks)
    del files, links, texts
    graph_only = rss()
    print(f"the graph held (rows let go): +{graph_only - start:,.0f} MB")
    began = time.process_time()
    view = step_graph(held.graph)
    print(f"step_graph: {time.process_time() - began:.1f} s; {len(view.nodes):,} notes, "
          f"{view.edges:,} edges; the view held: +{rss() - graph_only:,.0f} MB")
    # read again once the rows are let go: rows kept from the first read would hold whole
    # arenas of the allocator with them
    rows, its_links = graph_reads_of(app.store, edited)
    by_src: dict[str, list] = {}
    for link in its_links:
        by_src.setdefault(link.src, []).append(link)
    edits = [(f, by_src.get(f.path, [])) for f in rows]
    seeds = rng.sample(sorted(view.nodes), args.walks)  # notes the walk's graph joins
    walks, hops = [], []
    for path in seeds:
        began = time.process_time()
        personalized_pagerank(view, {path: 1.0})
        walks.append(time.process_time() - began)
        began = time.process_time()
        view.neighbours(path)
        hops.append(time.process_time() - began)
    print(f"pagerank walk ({len(seeds)} seeds): {_ms(walks)}; one hop: {_ms(hops)}")
    steps = []
    for file, its_links in edits:
        began = time.process_time()
        held.upsert(file, its_links[1:])  # one link fewer
        view = patched_step_graph(view, held.graph, held.take_changed()) or \
            step_graph(held.graph)
        steps.append(time.process_time() - began)
    print(f"edit (upsert, view patched; {len(edits)} edits): {_ms(steps)}")
    del edits, seeds, rows, its_links, by_src
    _sizes(held)
    before = rss()
    print(f"the graph and its view held: +{before - start:,.0f} MB; given back as each part"
          " is let go, in this order (a string shared by parts goes with the last):")
    del view
    after = rss()
    print(f"  {'step view':18s} {before - after:7,.0f} MB")
    before = after
    for name, parts in _PARTS:
        for part in parts:
            if hasattr(held, part):
                setattr(held, part, None)
        after = rss()
        print(f"  {name:18s} {before - after:7,.0f} MB")
        before = after
    del held
    print(f"  {'the rest':18s} {before - rss():7,.0f} MB")


if __name__ == "__main__":
    main()
