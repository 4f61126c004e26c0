"""What the vault graph a daemon holds costs in memory, part by part, on an indexed vault.

    DREAMD_STORAGE__DATA_DIR=DATA .venv/bin/python bench/graph_memory.py INDEXED_VAULT

Reads the files and links of the index (``magma.store.graph_reads``) and builds the vault
graph from them (``VaultGraph.build``, what the daemon's ``GraphKeeper`` holds for its life),
printing the process's RSS after each step (after a garbage collection and glibc's
``malloc_trim``, so that freed pages count as freed), then lets each part of the graph go in
turn (the networkx graph, the mention index, the links, the files, the link resolver) and
prints what each gave back. Linux with glibc only. The index may be one built with the fake
embedder (``bench/scale_bench.py --structure-only``): the graph is built from files and links
only, the same whatever the vectors; the model is never loaded.
"""
import ctypes
import gc
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))

from fakes import TokenHashEmbedder  # noqa: E402

from daemon.app import App, load  # noqa: E402
from magma.graph_keeper import memory_texts  # noqa: E402
from magma.store import graph_reads  # noqa: E402
from magma.vault_graph import VaultGraph  # noqa: E402


def rss() -> float:
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return psutil.Process().memory_info().rss / 2**20


def main() -> None:
    app = App.create(load(None, None, {"vault.path": sys.argv[1]}),
                     embedder=TokenHashEmbedder())
    start = rss()
    print(f"start: {start:,.0f} MB")
    began = time.perf_counter()
    files, links = graph_reads(app.store)
    texts = memory_texts(app.store)
    read = rss()
    print(f"rows read: {len(files):,} files, {len(links):,} links: +{read - start:,.0f} MB "
          f"({time.perf_counter() - began:.1f} s)")
    began = time.perf_counter()
    held = VaultGraph.build(files, links, texts)
    took = time.perf_counter() - began
    print(f"VaultGraph.build: {took:.1f} s; {held.graph.number_of_nodes():,} nodes, "
          f"{held.graph.number_of_edges():,} edges")
    del files, links, texts
    before = rss()
    print(f"the graph held (rows let go): +{before - start:,.0f} MB; given back as each part"
          " is let go, in this order (a string shared by parts goes with the last):")
    for name, parts in (("networkx graph", ("graph",)), ("mention index", ("_mentions",)),
                        ("links by source", ("_links", "_by_key")), ("files", ("_files",)),
                        ("link resolver", ("_resolver",))):
        for part in parts:
            setattr(held, part, None)
        after = rss()
        print(f"  {name:18s} {before - after:7,.0f} MB")
        before = after
    del held
    print(f"  {'the rest':18s} {before - rss():7,.0f} MB")


if __name__ == "__main__":
    main()
