"""Each part of the search's fusion, switched on and off, on the LongMemEval_S dev questions.

    .venv/bin/python bench/fusion_ablation.py --workdir /tmp/lme [--per-type N]
        [--set dev|oracle] [--variant NAME:SETTING=VALUE,...]... [--json OUT]

Reads the indexes ``bench/longmemeval_bench.py --set dev --workdir DIR`` built (a question
whose index is missing is indexed first, as that bench does) and asks every question once per
*variant*: dreamd's full pipeline (``App.search``, deadlines ×20 so quality is read apart from
latency) with some of its constants changed in this process only. A variant is
``NAME:SETTING=VALUE,...``; a SETTING is ``w.<list>`` (that list's weight in
``daemon.rerank.LIST_WEIGHTS``; at 0 the list adds nothing to a note's fused score), the name
of a constant of ``daemon.rerank`` (``TIME_BONUS``, ``HYBRID_FLOOR``, ``COSINE_SHARE``, …),
as ``retrieval.NAME``, of ``daemon.retrieval`` (``retrieval.NOTE_BM25_MIN_CHUNKS``), as
``question_shape.NAME``, of ``magma.question_shape`` (``question_shape.MIN_PHRASE_WORDS``),
as ``note_bm25.NAME``, of ``magma.note_bm25`` (``note_bm25.FEEDBACK_SHARE``), or
``weights.<α>`` (``retrieval.weights`` of the score: ``relevance``, ``recency``,
``importance``).
Without ``--variant``: ``as-is`` and one variant per list weight at 0 and at half.
``--set oracle`` asks the 470 oracle questions against the pooled index that
``bench/longmemeval_bench.py --set oracle --workdir DIR`` built (all 940 sessions in one vault;
built first when missing), a copy of an evidence session counting as that session, as there.

Output: recall@5, recall@10 and recall_all@10 per question type and overall, one column per
baseline of that bench (BM25, vector, plain hybrid, on the same index) and per variant
(metrics as in ``bench/longmemeval_bench.py``), and the JSON of every ranking (``--json``,
default ``bench/results/fusion_ablation.json``). Never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import longmemeval_bench as lme  # noqa: E402

from daemon import rerank, retrieval  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402
from magma import note_bm25, question_shape  # noqa: E402
from magma.fusion import Weights  # noqa: E402

Variant = tuple[str, dict[str, float]]
#: The α of the score a variant may set as ``weights.<α>`` (:class:`magma.fusion.Weights`).
SCORE_WEIGHTS = frozenset(field.name for field in fields(Weights))
#: Where a setting's constant lives: ``TIME_BONUS`` (the re-ranking), ``retrieval.X``.
MODULES: dict[str, Any] = {"rerank": rerank, "retrieval": retrieval,
                           "question_shape": question_shape, "note_bm25": note_bm25}


def parse_variant(text: str) -> Variant:
    """``"half-bm25:w.note-bm25=0.5,TIME_BONUS=0.25"`` -> ``("half-bm25", {...})``. Raises
    ValueError for a setting that is neither a list weight nor a constant of the re-ranking."""
    name, _, body = text.partition(":")
    settings: dict[str, float] = {}
    for part in filter(None, body.split(",")):
        key, _, value = part.partition("=")
        module, _, constant = key.rpartition(".")
        known = (key[2:] in rerank.LIST_WEIGHTS if key.startswith("w.")
                 else constant in SCORE_WEIGHTS if module == "weights"
                 else isinstance(getattr(MODULES.get(module or "rerank"), constant, None),
                                 int | float))
        if not known:
            raise ValueError(f"unknown setting {key!r} in variant {text!r}")
        settings[key] = float(value)
    return name or text, settings


def default_variants() -> list[Variant]:
    out: list[Variant] = [("as-is", {})]
    for name, weight in rerank.LIST_WEIGHTS.items():
        out.append((f"no-{name}", {f"w.{name}": 0.0}))
        out.append((f"half-{name}", {f"w.{name}": weight / 2}))
    return out


@contextmanager
def applied(settings: Mapping[str, float],
            reranker: rerank.Reranker | None = None) -> Iterator[None]:
    """The re-ranking with ``settings`` for the duration (list weights changed in place: the
    retrieval module holds the same mapping; ``weights.<α>`` on ``reranker``'s score)."""
    weights: dict[str, float] = rerank.LIST_WEIGHTS  # type: ignore[assignment]
    saved_weights, saved = dict(weights), {}
    alphas = reranker.weights if reranker is not None else None
    try:
        for key, value in settings.items():
            if key.startswith("w."):
                weights[key[2:]] = value
            elif key.startswith("weights."):
                if reranker is None:
                    raise ValueError(f"{key}: no re-ranking to set it on")
                reranker.weights = replace(reranker.weights, **{key[8:]: value})
            else:
                module, _, constant = key.rpartition(".")
                target = MODULES[module or "rerank"]
                saved[key] = getattr(target, constant)
                setattr(target, constant, type(saved[key])(value))
        yield
    finally:
        weights.clear()
        weights.update(saved_weights)
        if reranker is not None and alphas is not None:
            reranker.weights = alphas
        for key, value in saved.items():
            module, _, constant = key.rpartition(".")
            setattr(MODULES[module or "rerank"], constant, value)


def warm_up(app: Any, variants: Sequence[Variant]) -> None:
    """The bench's warm-up under each variant's settings: a list a variant turns on (the
    note-level BM25's index) is built before its first question, not during it."""
    lme.warm_up(app)
    for _, settings in variants:
        with applied(settings, app.retriever.reranker):
            lme.warm_up(app)


def run(instances: Sequence[Mapping[str, Any]], folder: Path, data_dir: Path,
        variants: Sequence[Variant]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    timings = lme.Timings()
    for n, instance in enumerate(instances, start=1):
        question = lme.question_of(instance)
        haystack = list(lme.sessions_of([instance]).values())
        safe = lme._UNSAFE_RE.sub("_", question.question_id)
        app, paths = lme.build_index(folder / safe, haystack, timings, data_dir, 20.0)
        warm_up(app, variants)
        row: dict[str, Any] = {"question_id": question.question_id,
                               "question_type": question.question_type,
                               "evidence": list(question.evidence), "ranked": {},
                               "scores": {}}
        bm25 = lme.Bm25Index({s.session_id: lme.session_body(s) for s in haystack})
        for name, ranker in lme.rankers(app, paths, bm25, {}).items():
            if name != "dreamd":  # the baselines, on the same index
                row["ranked"][name] = ranker(question)
                row["scores"][name] = lme.scores_of(row["ranked"][name], question.evidence)
        for name, settings in variants:
            with applied(settings, app.retriever.reranker):
                hits = app.search(question.question, limit=max(lme.KS), count_recall=False,
                                  now=question.asked_at)
            ranked = lme.sessions_in(hits, paths)
            row["ranked"][name] = ranked
            row["scores"][name] = lme.scores_of(ranked, question.evidence)
        rows.append(row)
        app.close()
        print(f"  {n}/{len(instances)} {question.question_id}", flush=True)
    return rows


def run_pooled(instances: Sequence[Mapping[str, Any]], folder: Path, data_dir: Path,
               variants: Sequence[Variant], limit: int | None) -> list[dict[str, Any]]:
    """The oracle questions against one vault of every session (``--set oracle``)."""
    pool = list(lme.sessions_of(instances).values())
    kept, _ = lme.select(instances, limit)
    app, paths = lme.build_index(folder, pool, lme.Timings(), data_dir, 20.0)
    warm_up(app, variants)
    bm25 = lme.Bm25Index({s.session_id: lme.session_body(s) for s in pool})
    copies = lme.same_text(pool)

    def scored(ranked: list[str], evidence: Sequence[str]) -> dict[str, float]:
        return lme.scores_of([copies.get(i, i) for i in ranked],
                             [copies.get(i, i) for i in evidence])

    baselines = {n: r for n, r in lme.rankers(app, paths, bm25, {}).items() if n != "dreamd"}
    rows: list[dict[str, Any]] = []
    for instance in kept:
        question = lme.question_of(instance)
        row: dict[str, Any] = {"question_id": question.question_id,
                               "question_type": question.question_type,
                               "question": question.question,
                               "evidence": list(question.evidence), "ranked": {},
                               "scores": {}}
        for name, ranker in baselines.items():
            row["ranked"][name] = ranker(question)[:max(lme.KS)]
            row["scores"][name] = scored(row["ranked"][name], question.evidence)
        for name, settings in variants:
            with applied(settings, app.retriever.reranker):
                hits = app.search(question.question, limit=max(lme.KS), count_recall=False,
                                  now=question.asked_at)
            row["ranked"][name] = lme.sessions_in(hits, paths)
            row["scores"][name] = scored(row["ranked"][name], question.evidence)
        rows.append(row)
    app.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workdir", type=Path, required=True,
                        help="the workdir of a longmemeval_bench.py --set dev run")
    parser.add_argument("--data", type=Path, default=lme.DATA)
    parser.add_argument("--per-type", type=int, default=None)
    parser.add_argument("--set", choices=("dev", "oracle"), default="dev",
                        help="dev: LongMemEval_S dev, a vault per question; oracle: pooled")
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--ids", default=None,
                        help="only these question ids: a comma list, or @FILE, one per line")
    parser.add_argument("--variant", action="append", type=parse_variant, default=None)
    parser.add_argument("--json", type=Path,
                        default=REPO / "bench" / "results" / "fusion_ablation.json")
    args = parser.parse_args()
    os.environ.setdefault("LANCEDB_LOG", "error")
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    data_dir = args.workdir / "data"
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(data_dir)
    os.environ["DREAMD_CONFIG"] = str(args.workdir / "no-config.toml")
    configure_logging("warning", "console")
    variants = args.variant or default_variants()
    if args.set == "oracle":
        rows = run_pooled(lme.load_oracle(args.data), args.workdir / "oracle", data_dir,
                          variants, args.questions)
    else:
        instances = lme.load_s_dev(args.data)
        if args.ids:
            text = Path(args.ids[1:]).read_text() if args.ids.startswith("@") else args.ids
            wanted = set(text.replace(",", "\n").split())
            instances = [i for i in instances if i["question_id"] in wanted]
        kept, _ = lme.select(instances, args.questions, args.per_type)
        rows = run(kept, args.workdir / "dev", data_dir, variants)
    summary = lme.summarise(rows)
    names = [*(s for s in lme.SYSTEMS if s != "dreamd"), *(name for name, _ in variants)]
    for metric in ("recall@5", "recall@10", "recall_all@10"):
        print(f"\n{metric}\n\n| type | n | " + " | ".join(names) + " |")
        print("|---|---|" + "---|" * len(names))
        for kind, entry in summary.items():
            print(f"| {kind} | {entry['n']} | "
                  + " | ".join(f"{entry[v][metric]:.3f}" for v in names) + " |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"variants": dict(variants), "summary": summary,
                                     "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
