"""Layer probes: does each layer's memory come back for a query that needs it?

usage: .venv/bin/python bench/layer_probes.py [--workdir DIR] [--today YYYY-MM-DD] [--no-deadlines]
                                              [--transcripts] [--json OUT]

Method: ``bench/probe_set.py`` writes ``vault_example/`` plus the probe files (memories of every
type, notes, daily notes and session logs dated relative to ``--today``, default today) into
``<workdir>/vault`` (a new temp folder by default); one ``App.sync`` indexes it with the
default embedding model (a few seconds); then, in the same process, each of the 40 probes
(10 per layer) is asked:

- L1 identity & preferences, L2 constraints & rules: the expected memory must be in the
  *resident* section of ``daemon.context.build_context(app, query)`` (DESIGN.md: L1/L2 are in
  every context). Before that function exists, the fallback is "in the top 10 of
  ``app.search``". The search rank is reported too.
- L3 facts & lessons, L4 events: the rank of the expected path in ``app.search(query,
  limit=10)``; hit@5 and hit@10.

Searches run with ``count_recall=False`` (and ``now`` = ``--today`` at the current time of
day, when the search takes ``now``), so the probes leave no recall statistics behind.
Stage deadlines are the configured ones (what a user gets); on a busy machine a stage given up
for its deadline can empty a result, so the count of such searches is printed, and
``--no-deadlines`` (every stage's ``timeout_ms`` × 100) measures retrieval quality alone.
Prints one table row per layer (hits / 10) and every miss with its query; writes JSON to
``bench/results/layer_probes.json``. Target for the finished system: L2 10/10. Never fails
on a miss: it reports.

``--transcripts`` also puts one statement of an assistant session per probe in the snippet
tables (the probe's own query said as a rule, "From now on, remember: …", with its vector of
the default model: the statement a query matches best, the hardest case) and asks each probe
with the session statements listed (``transcripts=True``, :mod:`daemon.transcript_hits`);
the table is of those searches, and each probe is also asked without them in the same run:
the count of probes whose vault hits differ between the two is printed (the statements
must never push a vault hit out), with the statements listed per search.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from harness_loader import isolated_base  # noqa: E402
from probe_set import LAYERS, Probe, write_probe_vault  # noqa: E402

from daemon.app import App, load  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402

try:  # the context assembly may not exist yet in this tree
    import daemon.context as _context_module
except ImportError:  # pragma: no cover - depends on the tree
    _context_module = None  # type: ignore[assignment]
build_context: Any = getattr(_context_module, "build_context", None)


def _accepts(func: Any, name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _search(app: App, query: str, now: dt.datetime, transcripts: bool = False
            ) -> tuple[list[Any], float]:
    kwargs: dict[str, Any] = {"limit": 10, "count_recall": False}
    if _accepts(app.search, "now"):
        kwargs["now"] = now
    if transcripts:
        kwargs["transcripts"] = True
    start = time.perf_counter()
    hits = app.search(query, **kwargs)
    return hits, (time.perf_counter() - start) * 1000


def _context(app: App, query: str, now: dt.datetime) -> Any:
    assert build_context is not None
    kwargs: dict[str, Any] = {}
    for name, value in (("now", now), ("count_recall", False)):
        if _accepts(build_context, name):
            kwargs[name] = value
    return build_context(app, query, **kwargs)


def _in_resident(context: Any, path: str) -> tuple[bool, str | None]:
    """Is ``path`` in the resident section? And which section holds it (``None``: none)."""
    entries = getattr(context, "entries", None)
    if entries is not None:
        sections = [getattr(e, "section", None) for e in entries if getattr(e, "path", "") == path]
        return "resident" in sections, (sections[0] if sections else None)
    text = getattr(context, "text", str(context))
    return path in text, ("text" if path in text else None)


def _plant_statements(app: App, probes: list[Probe], today: dt.date) -> int:
    """One session statement per probe, its query said as a rule, with the default model's
    vector, in the snippet tables (``--transcripts``) -> how many."""
    from consistency.snippet_cut import cut_statements

    label = "~/.claude/projects/-probe/probe-session.jsonl"
    snippets = cut_statements(label, today, [
        (n, f"From now on, remember: {p.query}") for n, p in enumerate(probes, start=1)])
    store = app.snippet_recaller.store
    store.replace_notes({label: snippets})
    vectors = app.embedder.embed([s.text for s in snippets])
    store.keep_vectors(app.embedder.model_id,
                       {s.key: vectors[i] for i, s in enumerate(snippets)}, ())
    return len(snippets)


def probe_one(app: App, probe: Probe, now: dt.datetime, transcripts: bool = False
              ) -> dict[str, Any]:
    hits, ms = _search(app, probe.query, now, transcripts)
    raw = [h for h in hits if getattr(h, "origin", "vault") == "transcript"]
    vault_hits = [h for h in hits if h not in raw]
    paths = [h.path for h in vault_hits]
    rank = paths.index(probe.expected_path) + 1 if probe.expected_path in paths else None
    row: dict[str, Any] = {
        "layer": probe.layer, "query": probe.query, "expected": probe.expected_path,
        "note": probe.note, "rank": rank, "search_ms": round(ms, 1), "top3": paths[:3],
        "vault_paths": paths, "transcript_hits": len(raw),
    }
    if transcripts:  # the same search without the statements, in the same run
        plain, _ = _search(app, probe.query, now)
        row["vault_paths_without_transcripts"] = [h.path for h in plain]
    trace = getattr(app, "last_search_trace", None)
    intent = getattr(trace, "intent", None)
    stages = getattr(trace, "stages", None)
    if stages is not None:
        row["stages"] = [f"{getattr(st, 'name', '?')}: {getattr(st, 'status', '?')} "
                         f"({getattr(st, 'elapsed_ms', 0.0):.0f} ms)" for st in stages]
    if intent is not None:
        row["intent"] = {"types": sorted(getattr(intent, "types", ())),
                         "layers": sorted(getattr(intent, "layers", ())),
                         "time_range": str(getattr(intent, "time_range", None))}
    if probe.layer in ("L1", "L2"):
        if build_context is not None:
            context = _context(app, probe.query, now)
            resident, section = _in_resident(context, probe.expected_path)
            row.update(hit=resident, judged_by="build_context resident", section=section,
                       context_tokens=getattr(context, "tokens", None))
        else:
            row.update(hit=rank is not None, judged_by="search top 10 (no build_context yet)")
    else:
        row.update(hit=rank is not None and rank <= 10, judged_by="search rank")
    row["hit@5"] = rank is not None and rank <= 5
    row["hit@10"] = rank is not None and rank <= 10
    return row


def _lift_deadlines() -> None:
    """Set ``DREAMD_RETRIEVAL__PROGRESSIVE_SEARCH__STAGES`` to the configured stages with
    every ``timeout_ms`` × 100 (no-op when this tree has no progressive search)."""
    retrieval = load(None, None, {}).settings.retrieval
    progressive = getattr(retrieval, "progressive_search", None)
    if progressive is None:
        return
    stages = [{**stage.model_dump(), "timeout_ms": stage.timeout_ms * 100}
              for stage in progressive.stages]
    os.environ["DREAMD_RETRIEVAL__PROGRESSIVE_SEARCH__STAGES"] = json.dumps(stages)


def _deadline_skips(rows: list[dict[str, Any]]) -> int:
    return sum(any("deadline" in st for st in r.get("stages", ())) for r in rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for layer in LAYERS:
        mine = [r for r in rows if r["layer"] == layer]
        out[layer] = {
            "probes": len(mine),
            "hits": sum(r["hit"] for r in mine),
            "hit@5": sum(r["hit@5"] for r in mine),
            "hit@10": sum(r["hit@10"] for r in mine),
            "mrr@10": round(sum(1 / r["rank"] for r in mine if r["rank"]) / max(1, len(mine)), 3),
            "judged_by": mine[0]["judged_by"] if mine else "",
        }
    return out


def render(summary: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    lines = ["| layer | hits | judged by | search hit@5 | search hit@10 | MRR@10 |",
             "|---|---|---|---|---|---|"]
    for layer, s in summary.items():
        lines.append(f"| {layer} | {s['hits']}/{s['probes']} | {s['judged_by']} | "
                     f"{s['hit@5']}/{s['probes']} | {s['hit@10']}/{s['probes']} | "
                     f"{s['mrr@10']:.3f} |")
    misses = [r for r in rows if not r["hit"]]
    lines.append("")
    lines.append(f"misses ({len(misses)}):" if misses else "no misses")
    for r in misses:
        where = f"search rank {r['rank']}" if r["rank"] else "not in search top 10"
        if r.get("section"):
            where += f", in context as {r['section']}"
        top = ", ".join(r["top3"]) or "no hits at all"
        lines.append(f"- {r['layer']} {r['query']!r} → {r['expected']} ({where}; top: {top})")
        if not r["top3"] and r.get("stages"):
            lines.append(f"    stages: {'; '.join(r['stages'])}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None,
                        help="folder for the vault and index (default: a new temp folder, "
                        "removed afterwards); an existing vault there is rewritten")
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    parser.add_argument("--no-deadlines", action="store_true",
                        help="every search stage's deadline × 100: quality without load noise")
    parser.add_argument("--transcripts", action="store_true",
                        help="plant a session statement per probe and list statements "
                        "after the vault's hits (module docstring)")
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/layer_probes.json")
    args = parser.parse_args()

    base = isolated_base("dreamd-layer-probes-")  # also clears the caller's DREAMD_* variables
    workdir = args.workdir or base
    if args.workdir is not None:
        base.rmdir()
    for part in ("vault", "data"):
        shutil.rmtree(workdir / part, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(workdir / "data")
    os.environ["DREAMD_CONFIG"] = str(workdir / "no-config.toml")
    configure_logging("warning", "console")
    if args.no_deadlines:
        _lift_deadlines()

    vault = workdir / "vault"
    probes = write_probe_vault(vault, args.today)
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    started = time.perf_counter()
    report = app.sync()
    index_s = time.perf_counter() - started
    now = dt.datetime.combine(args.today, dt.datetime.now(dt.UTC).timetz())
    _search(app, "warm up the model", now)
    planted = _plant_statements(app, probes, args.today) if args.transcripts else 0

    rows = [probe_one(app, probe, now, args.transcripts) for probe in probes]
    summary = summarise(rows)
    result = {
        "today": args.today.isoformat(),
        "files": report.files_total if hasattr(report, "files_total") else None,
        "index_s": round(index_s, 2),
        "build_context": build_context is not None,
        "search_has_trace": hasattr(app, "last_search_trace"),
        "deadlines": "lifted (x100)" if args.no_deadlines else "configured",
        "searches_with_a_stage_skipped_for_deadline": _deadline_skips(rows),
        "search_ms_p50": round(statistics.median(r["search_ms"] for r in rows), 1),
        "summary": summary,
        "probes": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
    print(f"probe vault: {result['files']} files indexed in {index_s:.1f} s; today "
          f"{args.today}; build_context: {'yes' if build_context else 'not yet (fallback)'}")
    print(render(summary, rows))
    skipped = _deadline_skips(rows)
    print(f"deadlines {result['deadlines']}: {skipped} of {len(rows)} probe searches had a "
          "stage given up for its deadline" + (" (try --no-deadlines)" if skipped and
                                                not args.no_deadlines else ""))
    if args.transcripts:
        moved = sum(r["vault_paths"] != r["vault_paths_without_transcripts"] for r in rows)
        listed = [r["transcript_hits"] for r in rows]
        print(f"session statements: {planted} planted; listed per search min {min(listed)} "
              f"median {statistics.median(listed):g} max {max(listed)}; probes whose vault "
              f"hits differ with them listed: {moved} of {len(rows)}")
        result["transcripts"] = {"planted": planted, "listed": listed,
                                 "vault_hits_differ": moved}
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str)
                             + "\n")
    print(f"JSON: {args.json}")
    if args.workdir is None:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
