"""What withholding hand-written credentials costs the indexer, on a real vault.

usage: python bench/credential_bench.py [--corpus ../shared/corpora/obsidian-help] [--repeat 3]

Reads every note of the corpus (read only: nothing is copied or written), then measures, best
of ``--repeat`` passes, the indexer's per-note work without a store or an embedder:

1. the baseline: ``parse_note`` + ``chunk_note`` of every note (what a sync does to a changed
   note before embedding it);
2. :func:`consistency.withheld.withhold_credentials` of every note (one ``find_secrets`` pass
   over the frontmatter block and one over the body), and its share of the baseline.

Also checks that a note in which nothing is found is indexed byte for byte as before (the
same chunks and chunk hashes), and lists the notes where something was found, by line and
preview only (false positives show up here). Prints a table and writes JSON to
``bench/results/credential_bench.json``. Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccb.parse import parse_note  # noqa: E402
from ccb.scan import VaultFilter, scan_vault  # noqa: E402
from consistency.withheld import withhold_credentials  # noqa: E402
from magma.chunking import chunk_note  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path,
                        default=ROOT.parent / "shared" / "corpora" / "obsidian-help")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scan = scan_vault(args.corpus, VaultFilter())
    files = [(e.path, (args.corpus / e.path).read_bytes()) for e in scan.entries
             if e.kind == "note"]
    megabytes = sum(len(data) for _, data in files) / 1e6

    baseline_s = withhold_s = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        notes = [parse_note(path, data) for path, data in files]
        chunks = [chunk_note(note) for note in notes]
        baseline_s = min(baseline_s, time.perf_counter() - started)
        started = time.perf_counter()
        withheld = [withhold_credentials(note) for note in notes]
        withhold_s = min(withhold_s, time.perf_counter() - started)

    found = [(w.note.path, [f.describe() for f in w.found]) for w in withheld if w.found]
    clean_same = all(
        [c.content_hash for c in chunk_note(w.note)] == [c.content_hash for c in before]
        for w, before in zip(withheld, chunks, strict=True) if not w.found)
    results = {
        "corpus": str(args.corpus), "notes": len(files), "megabytes": round(megabytes, 1),
        "parse_and_chunk_ms": round(baseline_s * 1000, 1),
        "withhold_ms": round(withhold_s * 1000, 1),
        "withhold_us_per_note": round(withhold_s / max(len(files), 1) * 1e6, 1),
        "withhold_mb_per_s": round(megabytes / withhold_s, 1) if withhold_s else None,
        "share_of_parse_and_chunk": round(withhold_s / baseline_s, 3) if baseline_s else None,
        "notes_with_credentials": len(found), "found": found[:50],
        "clean_notes_chunked_as_before": clean_same,
    }
    for key, value in results.items():
        if key != "found":
            print(f"{key:>28}: {value}")
    for path, where in found[:20]:
        print(f"  found: {path}: {', '.join(where)}")
    out = ROOT / "bench" / "results" / "credential_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
