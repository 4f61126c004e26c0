"""Graph step bench: does the full-fusion stage's graph step find answers that sit one or two
links away from the note a question's words match, without hurting ordinary questions?

usage: nice -n 5 .venv/bin/python bench/graph_step_bench.py [--workdir DIR] [--corpus DIR]
                                                          [--lang en] [--per-kind 40] [--seed 23]
                                                          [--no-deadlines] [--json OUT]

1. Copy ``<corpus>/<lang>`` (``--corpus``, default ``../shared/corpora/obsidian-help``;
   ``--lang en``: the English help vault, 173 notes that link densely) byte for byte into
   ``<workdir>/vault`` and index it with the default embedding model (about a minute on
   two cores; kept in ``--workdir`` and reused while the corpus and language are the same).
2. Draw the questions (``bench/graph_step_questions.py``: a documented rule, seed
   ``--seed``): ``--per-kind`` each of *one-link* (the answer is linked from the passage
   whose words the question takes, and holds none of them), *two-links* (the answer is one
   link further) and *control* (the answer is the matched note itself). They are written to
   ``bench/graph_step_questions.json``.
3. Ask every question of three retrievers over the same index, in one loop (the order of
   the three rotates per question): ``retrieval.graph_step`` = ``off``, ``one_hop`` and
   ``pagerank`` (its walk on the vault graph the app's keeper holds, as in the daemon);
   ``limit=10`` (the CLI's default), no recall statistics.
4. Print, per kind and variant: hit@5 (an answer among the first five), recall@5 (share of
   the answers among the first five), MRR (1 / rank of the first answer in the ten; 0 when
   none), and the full-fusion stage's time (p50 / p95 ms, the searches where it ran) with
   how often it ran. ``--no-deadlines`` multiplies every stage's deadline by 100 (retrieval
   quality alone, as ``bench/layer_probes.py`` does). Writes JSON to ``--json`` (default
   ``bench/results/graph_step_bench.json``). Never fails on a figure: it reports.
5. The walk alone, from each question's matched note (``source``): the walk's graph derived
   from the vault graph the writer keeps (``magma.graph_step.step_graph`` of
   ``GraphKeeper.graph()``, what the first search after a batch derives), then p50 / p95 ms of
   ``magma.graph_step.personalized_pagerank`` (numpy power iteration on the part within two
   links) against networkx's pure-Python ``_pagerank_python`` on the same part with the same
   personalization (networkx's public ``pagerank`` needs scipy, which dreamd does not
   install), and the largest difference of their scores over the walks whose part is the
   whole graph (elsewhere networkx counts only the part's edges in a node's degree).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from graph_step_questions import Question, questions  # noqa: E402

from daemon.app import App, load  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402
from daemon.retrieval import Retriever  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-help"
QUESTIONS = REPO / "bench" / "graph_step_questions.json"
VARIANTS = ("off", "one_hop", "pagerank")
KINDS = ("one-link", "two-links", "link (both)", "control")
TOP = 5
LIMIT = 10


def isolate(workdir: Path) -> Path:
    """Make ``workdir`` and point this process's dreamd at it alone (no ``DREAMD_*`` of the
    user's, the index in ``<workdir>/data``, no config file; quiet logs)."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ["LANCEDB_LOG"] = "error"
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(workdir / "data")
    os.environ["DREAMD_CONFIG"] = str(workdir / "no-config.toml")
    configure_logging("warning", "console")
    return workdir


def prepare(workdir: Path, corpus: Path) -> tuple[App, dict[str, Any]]:
    """The indexed copy of the vault ``corpus`` in ``workdir`` (made once, then reused)."""
    vault, marker = workdir / "vault", workdir / "prepared.json"
    wanted = {"corpus": str(corpus.resolve())}
    done = json.loads(marker.read_text()) if marker.exists() else {}
    if {k: done.get(k) for k in wanted} != wanted:
        for part in ("vault", "data"):
            shutil.rmtree(workdir / part, ignore_errors=True)
        shutil.copytree(corpus, vault)
        done = dict(wanted)
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    started = time.perf_counter()
    report = app.sync()
    app.indexing.graph_keeper.graph()  # held, as the daemon holds it from its warm-up
    if "index_s" not in done:
        done.update(files=report.files_total, chunks=report.chunks_embedded,
                    index_s=round(time.perf_counter() - started, 1))
        marker.write_text(json.dumps(done, indent=1))
    return app, done


def retriever(app: App, step: str, no_deadlines: bool) -> Retriever:
    """A retriever over ``app``'s index with ``retrieval.graph_step = step``."""
    overrides: dict[str, object] = {"vault.path": str(app.vault_root),
                                    "retrieval.graph_step": step}
    if no_deadlines:
        stages = app.settings.retrieval.progressive_search.stages
        overrides["retrieval.progressive_search.stages"] = [
            {"name": s.name, "limit": s.limit, "timeout_ms": s.timeout_ms * 100} for s in stages]
    settings = load(None, None, overrides).settings
    return Retriever(store=app.store, embedder=app.embedder, settings=settings,
                     recall_stats=lambda: {}, kept_graph=app.indexing.graph_keeper.step_graph)


def pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def measure(found: dict[str, Retriever], asked: list[Question]) -> dict[str, Any]:
    """Every question of ``asked`` to every retriever of ``found`` -> per-question rows."""
    rows: list[dict[str, Any]] = []
    names = list(found)
    for i, question in enumerate(asked):
        row: dict[str, Any] = {"kind": question.kind, "text": question.text,
                               "expected": list(question.expected)}
        for name in names[i % len(names):] + names[:i % len(names)]:
            result = found[name].search(question.text, limit=LIMIT)
            paths = [h.path for h in result.hits]
            stage = next((t for t in result.trace.stages if t.name == "full-fusion"), None)
            row[name] = {
                "ranks": [paths.index(p) + 1 if p in paths else None
                          for p in question.expected],
                "stage": stage.status if stage else "none",
                "stage_ms": stage.elapsed_ms if stage else 0.0,
                "found": stage.found if stage else 0,
            }
        rows.append(row)
    return {"rows": rows}


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per kind and variant: n, hit@5, recall@5, MRR, and the stage's times."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for kind in KINDS:
        chosen = [r for r in rows if r["kind"] == kind or (
            kind == "link (both)" and r["kind"] in ("one-link", "two-links"))]
        if not chosen:
            continue
        out[kind] = {}
        for name in VARIANTS:
            ranks = [r[name]["ranks"] for r in chosen]
            hit = [any(x is not None and x <= TOP for x in rs) for rs in ranks]
            recall = [sum(x is not None and x <= TOP for x in rs) / len(rs) for rs in ranks]
            firsts = [min((x for x in rs if x is not None), default=None) for rs in ranks]
            ran = [r[name]["stage_ms"] for r in chosen if r[name]["stage"].startswith("ran")]
            out[kind][name] = {
                "n": len(chosen), "hit@5": statistics.fmean(hit),
                "recall@5": statistics.fmean(recall),
                "mrr": statistics.fmean(1 / x if x else 0.0 for x in firsts),
                "stage_ran": len(ran), "stage_p50_ms": pct(ran, 50),
                "stage_p95_ms": pct(ran, 95),
            }
    return out


def walk_timings(app: App, found: Retriever, asked: list[Question]) -> dict[str, float]:
    """The walk alone, ours against networkx's, from each question's matched note."""
    import networkx as nx
    from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

    from magma.graph_step import HOPS, personalized_pagerank, step_graph

    started = time.perf_counter()
    graph = step_graph(app.indexing.graph_keeper.graph())  # the view a batch derives
    build_ms = (time.perf_counter() - started) * 1000
    ours: list[float] = []
    theirs: list[float] = []
    gap, whole = 0.0, 0
    for question in asked:
        seed = question.source[0]
        if seed not in graph.index:
            continue
        t0 = time.perf_counter()
        mine = personalized_pagerank(graph, {seed: 1.0}, tolerance=1e-10, iterations=200)
        ours.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        part = nx.Graph()
        part.add_nodes_from(mine)
        for node in mine:
            i = graph.index[node]
            part.add_weighted_edges_from(
                (node, graph.nodes[j], float(w)) for j, w in zip(
                    graph.targets[graph.offsets[i]:graph.offsets[i + 1]].tolist(),
                    graph.weights[graph.offsets[i]:graph.offsets[i + 1]].tolist(),
                    strict=True) if graph.nodes[j] in mine)
        other = _pagerank_python(part, alpha=0.85, personalization={seed: 1.0}, tol=1e-10,
                                 max_iter=200, weight="weight")
        theirs.append((time.perf_counter() - t0) * 1000)
        # networkx walks the part alone (its degrees count edges inside it): the scores
        # agree where the part is the whole reachable graph, and rank alike otherwise
        if len(mine) == len(graph.nodes):
            whole += 1
            total = sum(mine.values())
            gap = max(gap, *(abs(mine[n] / total - other[n]) for n in mine))
    return {"graph_nodes": len(graph.nodes), "graph_edges": graph.edges,
            "graph_build_ms": build_ms, "hops": HOPS, "walks": len(ours),
            "ours_p50_ms": pct(ours, 50), "ours_p95_ms": pct(ours, 95),
            "networkx_p50_ms": pct(theirs, 50), "networkx_p95_ms": pct(theirs, 95),
            "whole_graph_walks": whole, "max_score_gap_whole_graph": gap}


def render(table: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = [f"{'questions':<12} {'graph_step':<9} {'n':>3} {'hit@5':>6} {'rec@5':>6} "
             f"{'MRR':>6} {'ran':>4} {'p50 ms':>7} {'p95 ms':>7}"]
    for kind, by_variant in table.items():
        for name, f in by_variant.items():
            lines.append(
                f"{kind:<12} {name:<9} {f['n']:>3} {f['hit@5']:>6.3f} {f['recall@5']:>6.3f} "
                f"{f['mrr']:>6.3f} {f['stage_ran']:>4} {f['stage_p50_ms']:>7.1f} "
                f"{f['stage_p95_ms']:>7.1f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "dreamd-graph-step-bench")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--per-kind", type=int, default=40)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--no-deadlines", action="store_true")
    parser.add_argument("--json", type=Path,
                        default=REPO / "bench" / "results" / "graph_step_bench.json")
    args = parser.parse_args()
    workdir = isolate(args.workdir)
    app, prepared = prepare(workdir, args.corpus / args.lang)
    print(f"vault {prepared['corpus']}: {prepared['files']} files, {prepared['chunks']} chunks, "
          f"indexed in {prepared['index_s']} s", flush=True)
    pairs = app.store.link_pairs()
    out_links: dict[str, set[str]] = {}
    for src, dst in zip(pairs.column("src").to_pylist(), pairs.column("resolved").to_pylist(),
                        strict=True):
        if dst is not None and dst.endswith(".md"):
            out_links.setdefault(src, set()).add(dst)
    asked = questions(workdir / "vault", out_links, args.seed, per_kind=args.per_kind)
    QUESTIONS.write_text(json.dumps([asdict(q) for q in asked], indent=1, ensure_ascii=False)
                         + "\n", encoding="utf-8")
    print(f"{len(asked)} questions ({QUESTIONS.name})", flush=True)
    found = {name: retriever(app, name, args.no_deadlines) for name in VARIANTS}
    for r in found.values():  # warm each (catalogue, graph, model) outside the loop
        r.search("warm up", limit=LIMIT)
    load_before = os.getloadavg()[0]
    measured = measure(found, asked)
    table = summary(measured["rows"])
    walks = walk_timings(app, found["pagerank"], asked)
    result = {"prepared": prepared, "seed": args.seed, "per_kind": args.per_kind,
              "no_deadlines": args.no_deadlines, "cpus": os.cpu_count(),
              "load_avg_1m_before": round(load_before, 2),
              "load_avg_1m_after": round(os.getloadavg()[0], 2),
              "summary": table, "walk": walks, **measured}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(render(table))
    print(f"graph: {walks['graph_nodes']} nodes, {walks['graph_edges']} edges, derived "
          f"from the kept graph in {walks['graph_build_ms']:.1f} ms; walk from a question's "
          f"matched note "
          f"({walks['walks']} walks, {walks['hops']} links deep): "
          f"ours p50/p95 {walks['ours_p50_ms']:.2f}/{walks['ours_p95_ms']:.2f} ms, "
          f"networkx (pure Python) {walks['networkx_p50_ms']:.2f}/"
          f"{walks['networkx_p95_ms']:.2f} ms")
    print(f"JSON: {args.json}")
    for r in found.values():
        r.close()
    app.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
