"""The credential detector: refusals on the blind corpus and speed on real notes.

usage: python bench/secrets_bench.py [--seeds 1234 7 2026]

Prints, per seed of the corpus's templates (``tests/consistency/secrets_blind.jsonl``), the
share of secrets refused and of look-alikes refused, by language; then scans every markdown
file of ``../shared/corpora`` and prints the findings (every one there is a false refusal)
and the throughput in characters per second, beside a baseline measured in the same run: a
plain ``str.count`` of one word over the same texts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "consistency"))

from test_secrets_blind import _rows  # noqa: E402

from consistency.secrets import find_secrets  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1234, 7, 2026])
    args = parser.parse_args()
    for seed in args.seeds:
        rows = _rows(seed)
        for lang in ("en", "zh", "mixed", "all"):
            mine = [r for r in rows if lang == "all" or r["lang"] == lang]
            secrets = [r for r in mine if r["label"] == "secret"]
            benign = [r for r in mine if r["label"] == "benign"]
            found = sum(bool(find_secrets(r["text"])) for r in secrets)
            false = sum(bool(find_secrets(r["text"])) for r in benign)
            print(f"seed {seed} {lang:5s} secrets refused {found}/{len(secrets)} "
                  f"({found / max(len(secrets), 1):.3f}), look-alikes refused "
                  f"{false}/{len(benign)} ({false / max(len(benign), 1):.3f})")
    texts = []
    for path in sorted(CORPORA.rglob("*.md")):
        try:
            texts.append((path, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    chars = sum(len(t) for _p, t in texts)
    started = time.perf_counter()
    baseline = sum(t.count("password") for _p, t in texts)
    base_s = time.perf_counter() - started
    started = time.perf_counter()
    findings = [(p, f) for p, t in texts for f in find_secrets(t)]
    scan_s = time.perf_counter() - started
    print(f"corpora: {len(texts)} files, {chars / 1e6:.1f} M characters; find_secrets "
          f"{scan_s:.2f} s ({chars / scan_s / 1e6:.2f} M chars/s), baseline str.count "
          f"{base_s:.3f} s ({baseline} words); findings {len(findings)}")
    for path, finding in findings[:20]:
        print(f"  {path.relative_to(CORPORA)}: {finding.kind} {finding.preview}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
