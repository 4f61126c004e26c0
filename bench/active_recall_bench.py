"""Active recall's time per prompt over a year of raw layer: words alone, and words with vectors.

    .venv/bin/python bench/active_recall_bench.py [--days 365] [--prompts 60] [--seed 21]

``dreamd context --hook`` has :data:`daemon.active_recall.DEADLINE_S` (1.5 s) for the raw
diary lines a prompt matches (issue 21). This bench cuts the ``--days`` daily notes of
``bench/diary_bench.py`` into snippets, puts them in a real snippet store (LanceDB in a temp
folder) with a 512-wide unit vector each (the default model's width; random, as only the time
is measured here: what the vectors find is measured by
``tests/scenarios/test_active_recall.py`` with the real model), and times
:meth:`daemon.active_recall.ActiveRecall.recall` for ``--prompts`` of the year's planned
searches, without a model in memory (words) and with one (words + vectors: the prompt's
vector from a stand-in that answers at once, as the daemon's model does for a prompt its
search just embedded). The baselines, measured in the same run: reading the snippets, and
reading the vectors, alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import diary_bench  # noqa: E402

from consistency.snippet_cut import cut_snippets  # noqa: E402
from daemon.active_recall import DEADLINE_S, ActiveRecall  # noqa: E402
from magma.snippet_store import SnippetStore  # noqa: E402

DIMS = 512


class _RandomModel:
    """A stand-in model already in memory: a random unit vector per text (timing only)."""

    model_id = "bench-random-512"
    dims = DIMS

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = self._rng.standard_normal((len(texts), DIMS)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _ms(run: Callable[[], object], times: int = 1) -> list[float]:
    out = []
    for _ in range(times):
        t0 = time.perf_counter()
        run()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values), 1), "max_ms": round(max(values), 1)}


def run(days: int, prompts: int, seed: int, workdir: Path) -> dict[str, Any]:
    plan = diary_bench.generate(workdir / "vault", days, seed)
    snippets = {}
    for index in range(days):
        day = diary_bench.START + timedelta(days=index)
        path = f"Daily/{day.isoformat()}.md"
        text = (workdir / "vault" / path).read_text(encoding="utf-8")
        snippets[path] = cut_snippets(path, text, day)
    store = SnippetStore.open(str(workdir / "store"))
    store.replace_notes(snippets)
    model = _RandomModel(seed)
    keys = [s.key for found in snippets.values() for s in found]
    store.keep_vectors(model.model_id, dict(zip(keys, model.embed(keys), strict=True)), ())
    queries = [q for day in sorted(plan["searches"]) for q in plan["searches"][day]][:prompts]
    state = workdir / "state"
    state.mkdir()
    words = ActiveRecall(lambda: store, state, deadline_s=30)
    both = ActiveRecall(lambda: store, state, deadline_s=30, embedder=lambda: model)
    words.recall(queries[0])  # first reads open the tables' files
    both.recall(queries[0])
    return {
        "days": days, "snippets": len(keys), "prompts": len(queries),
        "words": _summary([x for q in queries for x in _ms(lambda q=q: words.recall(q))]),
        "words_and_vectors": _summary([x for q in queries
                                       for x in _ms(lambda q=q: both.recall(q))]),
        "baseline_read_snippets": _summary(_ms(store.snippets, 10)),
        "baseline_read_vectors": _summary(_ms(lambda: store.vectors(model.model_id), 10)),
        "deadline_ms": DEADLINE_S * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.days, args.prompts, args.seed, Path(tmp))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
