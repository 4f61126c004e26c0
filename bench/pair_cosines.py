"""How far the embedding alone can tell a paraphrase from a look-alike, on the labelled pairs.

usage: .venv/bin/python bench/pair_cosines.py [bench/write_pairs/blind9.jsonl ...]

For each pair file: the cosine of the two memories' first chunks (USE multilingual v3, as
``remember`` embeds them) and a margin score (the cosine over the mean cosine of each side's
:data:`K` nearest memories among every other file's memories: the neighbourhood a vault gives;
Artetxe & Schwenk 2019, "Margin-based parallel corpus mining"). Printed: the AUC of each
score for *paraphrase and cross-lingual duplicates* against *distinct pairs* (look-alikes,
other subjects, related facts) and against *contradictions*: the chance that a duplicate
scores above the other pair. 0.5 is a coin; a threshold on a score whose AUC is near it
cannot decide duplicates without merging other facts. Nothing is timed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from write_decisions import PAIRS, embed_pairs, read_pairs

from magma.embedder import UniversalSentenceEncoder

#: Neighbours that make a memory's neighbourhood for the margin (LASER's k = 4).
K = 4


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties counted half."""
    if not len(positive) or not len(negative):
        return float("nan")
    above = (positive[:, None] > negative[None, :]).mean()
    tied = (positive[:, None] == negative[None, :]).mean()
    return float(above + 0.5 * tied)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args()
    every = sorted(Path(p) for p in PAIRS if "breakit" not in Path(p).name
                   and "adversarial" not in Path(p).name)
    files = args.files or every
    embedder = UniversalSentenceEncoder(threads=2)
    rows = {path: read_pairs(path) for path in {*every, *files}}
    vectors = {path: embed_pairs(embedder, rows[path]) for path in rows}
    print(f"{'file':18} {'dup vs distinct: cos':>22} {'margin':>7} {'dup vs contra: cos':>20} "
          f"{'margin':>7}")
    for path in files:
        background = np.concatenate([vectors[p] for p in rows if p != path])
        pair_vectors = vectors[path]
        old, new = pair_vectors[0::2], pair_vectors[1::2]
        cosine = np.einsum("ij,ij->i", old, new)

        def neighbourhood(x: np.ndarray, bg: np.ndarray = background) -> np.ndarray:
            return np.sort(x @ bg.T, axis=1)[:, -K:].mean(axis=1)

        margin = cosine / ((neighbourhood(old) + neighbourhood(new)) / 2)
        labels = [(r["label"], r["kind"]) for r in rows[path]]
        dup = np.array([lab == "duplicate" and kind in {"paraphrase", "crosslingual"}
                        for lab, kind in labels])
        distinct = np.array([lab == "distinct" for lab, _ in labels])
        contra = np.array([lab == "contradiction" for lab, _ in labels])
        print(f"{path.name:18} {auc(cosine[dup], cosine[distinct]):22.2f} "
              f"{auc(margin[dup], margin[distinct]):7.2f} "
              f"{auc(cosine[dup], cosine[contra]):20.2f} {auc(margin[dup], margin[contra]):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
