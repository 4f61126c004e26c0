"""Write-time judgement on labelled memory pairs: the same memory, a change, or another fact?

usage: .venv/bin/python bench/write_decisions.py [bench/write_pairs/dev.jsonl ...] [--show]

Each pair of ``bench/write_pairs/*.jsonl`` (English, Chinese and mixed; with and without
subjects; duplicates, contradictions, look-alikes and dated series, labelled by hand) is judged
the way ``dreamd remember`` judges a new memory against a stored one: both are rendered as
memory files, their first chunks embedded with the product's model (USE multilingual v3), and
:func:`consistency.duplicates.decide` answers. Printed per label, kind, language and subject:
how many were decided right (a duplicate merged, a contradiction superseded, a distinct pair
or a series kept apart), and the two errors that cost most: merges of two different facts and
supersessions of a fact that still holds. ``dev.jsonl`` is what the rules were set on;
``holdout.jsonl`` was written apart and only measured.

This bench runs the decision function in process; it does not yet drive ``dreamd remember``
or a dream over files (see the closing note of the issue that added it).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ccb.memory_file import NewMemory, content_hash_normalised, render_memory, slugify  # noqa: E402
from ccb.parse import parse_note  # noqa: E402
from consistency.duplicates import (  # noqa: E402
    Duplicate,
    MemoryDraft,
    MemoryFacts,
    Possible,
    Series,
    Supersede,
    Update,
    decide,
)
from daemon.memories import (  # noqa: E402
    DESCRIPTION_MAX_CHARS,
    NAME_MAX_CHARS,
    _first_words,
    _one_line,
)
from magma.chunking import chunk_note  # noqa: E402
from magma.embedder import UniversalSentenceEncoder  # noqa: E402

PAIRS = sorted((ROOT / "bench" / "write_pairs").glob("*.jsonl"))


def _fields(side: dict[str, object]) -> tuple[str, str, str, str]:
    body = str(side["text"]).strip()
    name = str(side.get("name") or _first_words(body, NAME_MAX_CHARS))
    description = _one_line(_first_words(body, DESCRIPTION_MAX_CHARS))
    at = datetime(2026, 1, 1, tzinfo=UTC)
    data = render_memory(NewMemory(name=name, description=description, type=side["type"],  # type: ignore[arg-type]
                                   id="X", created=at, updated=at, body=body + "\n",
                                   subject=side.get("subject")))  # type: ignore[arg-type]
    note = parse_note(f"Memory/{slugify(name)}.md", data)
    return chunk_note(note)[0].embed_text, name, description, body


def _outcome(decision: object) -> str:
    if isinstance(decision, Duplicate | Update):
        return "duplicate"
    if isinstance(decision, Supersede):
        return "contradiction"
    if isinstance(decision, Series):
        return "series"
    if isinstance(decision, Possible):
        return f"possible {decision.kind}"
    return "distinct"


def _right(label: str, outcome: str) -> bool:
    if label in {"distinct", "series"}:
        return outcome in {"distinct", "series", "possible duplicate", "possible contradiction"}
    return outcome == label


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=PAIRS)
    parser.add_argument("--show", action="store_true", help="print every pair decided wrong")
    args = parser.parse_args()
    embedder = UniversalSentenceEncoder(threads=2)
    for path in args.files:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        texts = [_fields(r[s])[0] for r in rows for s in ("old", "new")]
        vectors = embedder.embed(texts)
        stats: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        wrong_merges = wrong_supersessions = 0
        times: list[float] = []
        misses = []
        for i, row in enumerate(rows):
            old, new = row["old"], row["new"]
            _, oname, odesc, obody = _fields(old)
            _, nname, ndesc, nbody = _fields(new)
            facts = MemoryFacts(
                id="old", type=old["type"], subject=old.get("subject"), name=oname,
                description=odesc, body=obody, content_hash=content_hash_normalised(obody),
                embedding=vectors[2 * i], written=date.fromisoformat(old["created"]))
            draft = MemoryDraft(
                type=new["type"], subject=new.get("subject"), name=nname, description=ndesc,
                body=nbody, content_hash=content_hash_normalised(nbody),
                embedding=vectors[2 * i + 1], written=date.fromisoformat(new["created"]))
            started = time.perf_counter()
            decision = decide(draft, [facts])
            times.append((time.perf_counter() - started) * 1000)
            outcome = _outcome(decision)
            ok = _right(row["label"], outcome)
            subject = "subject" if old.get("subject") else "no subject"
            for key in ("all", row["label"], f"{row['label']} / {row['kind']}",
                        f"{row['label']} / {row['lang']}", f"{row['label']} / {subject}"):
                stats[key][0] += ok
                stats[key][1] += 1
            if outcome == "duplicate" and row["label"] != "duplicate":
                wrong_merges += 1
            if outcome == "contradiction" and row["label"] in {"distinct", "series"}:
                wrong_supersessions += 1
            if not ok:
                why = getattr(decision, "why", None)
                misses.append(f"{row['id']} {row['label']}/{row['kind']}: {outcome}"
                              f" ({why.explain() if why else ''}) | {old['text']!r} | "
                              f"{new['text']!r}")
        print(f"== {path.name}: {len(rows)} pairs")
        for key in sorted(stats, key=lambda k: (k != "all", k)):
            right, total = stats[key]
            print(f"  {key:40s} {right:4d}/{total:<4d} {right / total:.2f}")
        merges = sum(1 for r in rows if r["label"] == "duplicate")
        print(f"  merges of two different facts: {wrong_merges}; supersessions of a fact that "
              f"still holds: {wrong_supersessions}; duplicates: {merges}")
        times.sort()
        print(f"  decide() per pair: p50 {times[len(times) // 2]:.2f} ms, "
              f"p95 {times[int(len(times) * 0.95)]:.2f} ms (claims read in the call)")
        if args.show:
            print("\n".join("  " + m for m in misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
