"""How many of the places a context gives to what the query finds hold evidence, with and
without the relevance floor (``daemon.context.RELEVANCE_FLOOR``): LongMemEval questions asked
of their pooled evidence sessions.

    .venv/bin/python bench/context_floor_bench.py [--workdir DIR] [--every 9] [--offset 0]

Data and vault: the pooled LongMemEval oracle of ``bench/longmemeval_bench.py`` (all 940
evidence sessions of its 500 questions as dated notes in one vault, indexed by dreamd;
abstention questions skipped). Questions: every ``--every``-th of the 470 others from
``--offset`` (two offsets give two disjoint sets: one to choose a floor on, one to check
it). Each is asked as ``dreamd context --query`` asks (``App.search``, 10 hits, the
question's day as now, no recall counted); a session that is a copy of an evidence session
counts as it (:func:`longmemeval_bench.same_text`).

Per floor (a share of the first hit's score a later hit must reach to be kept; 0: none):
places kept, places holding evidence, evidence recall (evidence sessions kept / evidence
sessions), questions that lost an evidence session the floor-less list had. Then the
contexts themselves (``build_context``, the default budget), without the floor and with the
shipped one: retrieved entries and those that are evidence. Stage deadlines are multiplied
by ``--deadline-x`` (20: quality apart from a loaded machine's latency).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import longmemeval_bench as lme  # noqa: E402

from daemon import context as context_module  # noqa: E402
from daemon.context import build_context  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402

FLOORS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
_COS = re.compile(r"vector #\d+ \(cos ([0-9.]+)\)")


def _kept(hits: list[dict[str, Any]], floor: float) -> list[dict[str, Any]]:
    if not hits:
        return []
    top = hits[0]["score"]
    return [h for n, h in enumerate(hits) if n == 0 or h["score"] >= floor * top]


def sweep(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per floor: places, evidence places, evidence recall, questions losing evidence."""
    table = []
    for floor in FLOORS:
        places = evidence_places = lost = 0
        recall = 0.0
        for row in rows:
            whole = {h["session"] for h in row["hits"] if h["evidence"]}
            kept = _kept(row["hits"], floor)
            found = {h["session"] for h in kept if h["evidence"]}
            places += len(kept)
            evidence_places += sum(h["evidence"] for h in kept)
            recall += len(found) / len(set(row["evidence"]))
            lost += bool(whole - found)
        n = len(rows)
        table.append({"floor": floor, "places": places / n,
                      "evidence_places": evidence_places / n,
                      "share": evidence_places / places if places else 0.0,
                      "recall": recall / n, "questions_losing_evidence": lost})
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/dreamd-context-floor"))
    parser.add_argument("--every", type=int, default=9)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--deadline-x", type=float, default=20.0)
    parser.add_argument("--data", type=Path, default=lme.DATA)
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/context_floor.json")
    args = parser.parse_args()
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("LANCEDB_LOG", "error")
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    data_dir = workdir / "data"
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(data_dir)
    os.environ["DREAMD_CONFIG"] = str(workdir / "no-config.toml")
    configure_logging("warning", "console")

    instances = lme.load_oracle(args.data)
    pool = list(lme.sessions_of(instances).values())
    copies = lme.same_text(pool)
    kept, _ = lme.select(instances, None)
    questions = [lme.question_of(i) for i in kept][args.offset::args.every]
    started = time.perf_counter()
    app, paths = lme.build_index(workdir / "oracle", pool, lme.Timings(), data_dir,
                                 args.deadline_x)
    print(f"{len(questions)} questions, {len(pool)} sessions; index "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    lme.warm_up(app)
    shipped = context_module.RELEVANCE_FLOOR
    rows: list[dict[str, Any]] = []
    contexts = {"none": [0, 0, 0.0], "shipped": [0, 0, 0.0]}
    for q in questions:
        evidence = {copies.get(e, e) for e in q.evidence}
        hits = app.search(q.question, limit=10, count_recall=False, now=q.asked_at)
        listed = []
        for hit in hits:
            session = copies.get(paths.get(hit.path, ""), paths.get(hit.path, ""))
            cos = next((float(m.group(1)) for w in hit.why if (m := _COS.search(w))), None)
            listed.append({"session": session, "score": hit.score, "cos": cos,
                           "evidence": session in evidence})
        rows.append({"question_id": q.question_id, "type": q.question_type,
                     "evidence": sorted(evidence), "hits": listed})
        for name, floor in (("none", 0.0), ("shipped", shipped)):
            context_module.RELEVANCE_FLOOR = floor
            built = build_context(app, q.question, count_recall=False, now=q.asked_at)
            entries = [e for e in built.entries if e.section == "retrieved"]
            found = {copies.get(paths.get(e.path, ""), "") for e in entries} & evidence
            contexts[name][0] += len(entries)
            contexts[name][1] += sum(copies.get(paths.get(e.path, ""), "") in evidence
                                     for e in entries)
            contexts[name][2] += len(found) / len(evidence)
        context_module.RELEVANCE_FLOOR = shipped
    table = sweep(rows)
    n = len(rows)
    print("| floor | places | evidence places | evidence share | evidence recall | "
          "questions losing evidence |\n|---|---|---|---|---|---|")
    for line in table:
        print(f"| {line['floor']:.2f} | {line['places']:.2f} | {line['evidence_places']:.2f} | "
              f"{line['share']:.3f} | {line['recall']:.3f} | "
              f"{line['questions_losing_evidence']} |")
    for name, (entries, evidence_entries, recall) in contexts.items():
        floor = 0.0 if name == "none" else shipped
        print(f"context ({name}, floor {floor}): {entries / n:.2f} retrieved entries, "
              f"{evidence_entries / n:.2f} of them evidence, evidence recall {recall / n:.3f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "questions": n, "every": args.every, "offset": args.offset,
        "deadline_x": args.deadline_x, "shipped_floor": shipped, "sweep": table,
        "contexts": contexts, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
