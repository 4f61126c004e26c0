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
``holdout.jsonl`` was written apart and only measured; ``blind3``–``blind11.jsonl`` (1,920
pairs) were written by helpers who saw neither the rules nor the other sets, each measured
first as it came (blind3–7, blind10 and blind11 were then read for what the rules missed;
blind8 and blind9 were only measured). ``blind13.jsonl`` (220 pairs, written blind like
the others) is about memories of several facts and names that extend or resemble other
names; its label ``partial_change`` (an older memory of several facts, a newer that changes
one of them) is right only when both are kept and listed as a possible contradiction.
``blind14.jsonl`` (168 pairs) holds what the other sets lacked: look-alikes of one subject
("3 bedrooms" / "3 bathrooms"), memories that count several things ("a dog and two cats"),
and paraphrases of the kinds the rules missed, written fresh after reading those misses and
measured before any rule changed (125 of 168 right, duplicates 0.74, contradictions 0.60,
11 merges of two facts, 9 supersessions of a fact that still holds).
``blind15.jsonl`` (300 pairs) holds merges of two facts and supersessions of a fact that
still holds, written apart from the rules and measured before any rule changed (234 of 300
right, duplicates 0.79, contradictions 0.74, 13 merges of two facts, 6 supersessions of a
fact that still holds); its wrong merges and supersessions were then read by family.
``blind16.jsonl`` (300 pairs, written apart from the rules and from every other set) was
measured first at 246 of 300 right (duplicates 0.75, paraphrases 0.55, contradictions 0.89,
4 merges of two facts, 6 supersessions of a fact that still holds), then again after the
rules of blind15 and of blind3–14's misses (244 right, duplicates 0.73, contradictions
0.88, 4, 5) and never read pair by pair: the share of what rules fitted to earlier sets
bring to unseen pairs.
``family56.jsonl`` (135 pairs) holds, by family, what the rules were changed for after
blind16: a change told with when it happened ("I moved to Lisbon last month"), the state a
change leads to said as it stands ("I live in Lisbon now"), a memory that says one fact twice
after a merge, and the wrong merges and supersessions of the development sets read by cause
(whose person, one version, a thing free of it, a home beside an origin, two things named by
how often, a fallback, tools of two kinds, a spare, another animal), each with look-alikes
that keep their verdict.
``family57.jsonl`` holds families written fresh for a cause before any rule changed for it,
measured before and after: one thing of a kind a user keeps one of (an editor, a phone, a
browser, CI) replaced by another, told as an event, with "now" or as a new one got ("My
editor is Neovim" / "VS Code now", "我的手机是华为" / "换成苹果手机了"), a count of one on
one side only ("step by step" / "one step at a time"), and relations of several values told
again in other words ("Owns a cat and a dog" / "Has a dog and also a cat at home"), and one
record of one day told again with another amount ("October: 3 releases" / "October: 4
releases"), news of another product ("Firefox now supports vertical tabs"), and the user
ending a thing the older memory names ("I work at Stripe" / "Left Stripe last month"), each
with look-alikes.
``breakit3.jsonl`` and ``breakit4.jsonl`` hold two break-it rounds' inputs,
byte for byte. ``breakit5.jsonl`` (115 pairs, English, Chinese and mixed) holds what
assistants write of real projects, written before any rule changed for it: quantities in
other units and number forms (30 min / half an hour, 1,000 / 1k / 一千), dates in other
formats, times and zones, hedges ("mostly", "usually", 不太), the scope of a negation ("don't
only", "never … unless" / "always … even for"), lists in another order or of other items,
settings on and off, env var names, paths, people and roles, look-alikes of another entity
or attribute, and commit SHAs, UUIDs and digests in prose (none of them a credential):
measured first at 94 of 115 right, 6 merges of two facts. Each file is also decided, in
the same run, by the string rule that decided before the pair judgement
(``bench/string_rule.py``: bigram overlap, a shared subject, ``contradiction_reason``) as
the baseline.

``--remember`` drives the product instead: one vault, each pair under an owner of its own
(so pairs never meet), ``MemoryService.remember`` of the old memory on its day and then of
the new one on its day, through the real store and model; the outcome is what the files say
(merged, superseded, linked as a possible pair, or two memories). ``--dream`` writes both
memories of every pair as files (no subject unless the pair has one), indexes the vault and
runs one dream over it, and reads the outcome from the files the same way. Both given:
``remember`` then the dream, each file in turn.

``--cache FILE`` keeps the vectors in an SQLite file, keyed by the model and a SHA-256 of
the text embedded: a rerun after a change of the rules embeds nothing again (the model runs
some 80 texts a second on two threads, six minutes for every set). The vectors are the
model's own; the figures are the same with and without it.

``--latency N`` measures ``remember`` in process with N live memories (user statements of
LongMemEval, ``../shared/corpora``), p50 / p95 of 40 new facts (wall, and CPU of the calling
thread; then CPU and wall per remember of the whole loop, every thread, the index writes that
follow the answers included), against baselines measured
in the same run: the embedder alone on one memory, a bare stat walk of the memory folder,
the string rule that decided before the pair judgement (``contradiction_reason`` and a
bigram overlap over every memory), and ``python -c pass``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from ccb.memory_file import NewMemory, content_hash_normalised, render_memory, slugify  # noqa: E402
from ccb.parse import parse_note  # noqa: E402
from consistency.duplicates import (  # noqa: E402
    Decision,
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
    derived_description,
    derived_name,
)
from magma.chunking import chunk_note  # noqa: E402
from magma.embedder import UniversalSentenceEncoder  # noqa: E402

PAIRS = sorted((ROOT / "bench" / "write_pairs").glob("*.jsonl"))


def _fields(side: dict[str, object]) -> tuple[str, str, str, str]:
    body = str(side["text"]).strip()
    name = str(side.get("name") or derived_name(body))
    description = derived_description(body)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    data = render_memory(NewMemory(name=name, description=description, type=side["type"],  # type: ignore[arg-type]
                                   id="X", created=at, updated=at, body=body + "\n",
                                   subject=side.get("subject")))  # type: ignore[arg-type]
    note = parse_note(f"Memory/{slugify(name)}.md", data)
    return chunk_note(note)[0].embed_text, name, description, body


def outcome_of(decision: object) -> str:
    if isinstance(decision, Duplicate | Update):
        return "duplicate"
    if isinstance(decision, Supersede):
        return "contradiction"
    if isinstance(decision, Series):
        return "series"
    if isinstance(decision, Possible):
        return f"possible {decision.kind}"
    return "distinct"


def right_outcome(label: str, outcome: str) -> bool:
    """Was ``outcome`` the right action for a pair labelled ``label``? A ``partial_change``
    (an older memory of several facts, a newer that changes one and leaves the rest) is
    right only kept apart and listed: merged it states two values, superseded it hides the
    facts that still hold."""
    if label == "partial_change":
        return outcome == "possible contradiction"
    if label in {"distinct", "series"}:
        return outcome in {"distinct", "series", "possible duplicate", "possible contradiction"}
    return outcome == label


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=PAIRS)
    parser.add_argument("--show", action="store_true", help="print every pair decided wrong")
    parser.add_argument("--remember", action="store_true",
                        help="drive MemoryService.remember over the pairs (real store)")
    parser.add_argument("--dream", action="store_true",
                        help="write the pairs as files and run one dream over them")
    parser.add_argument("--cache", type=Path, metavar="FILE",
                        help="keep the vectors in this SQLite file for the next run")
    parser.add_argument("--latency", type=int, metavar="N", default=0,
                        help="remember p50/p95 with N live memories, with baselines")
    args = parser.parse_args()
    if args.latency:
        return _latency(args.latency)
    if args.remember or args.dream:
        for path in args.files:
            rows = _writable([json.loads(line) for line in
                              path.read_text(encoding="utf-8").splitlines() if line.strip()],
                             path.name)
            for dream in [False] * args.remember + [True] * args.dream:
                outcomes = _through_product(rows, dream=dream)
                _report(f"{path.name} ({'dream' if dream else 'remember'})", rows,
                        outcomes, args.show)
        return 0
    embedder = UniversalSentenceEncoder(threads=2)
    for path in args.files:
        rows = read_pairs(path)
        vectors = embed_pairs(embedder, rows, args.cache)
        outcomes, whys, times = [], [], []
        for i, row in enumerate(rows):
            started = time.perf_counter()
            decision = decide_pair(row, vectors[2 * i], vectors[2 * i + 1])
            times.append((time.perf_counter() - started) * 1000)
            outcomes.append(outcome_of(decision))
            whys.append(decision.why.explain() if decision.why else "")
        _report(path.name, rows, outcomes, args.show, whys)
        baseline = [string_rule_outcome(row, float(vectors[2 * i] @ vectors[2 * i + 1]))
                    for i, row in enumerate(rows)]
        _report(f"{path.name}, baseline: the string rule before the judgement", rows,
                baseline, False)
        times.sort()
        print(f"  decide() per pair: p50 {times[len(times) // 2]:.2f} ms, "
              f"p95 {times[int(len(times) * 0.95)]:.2f} ms (claims read in the call)")
    return 0


def string_rule_outcome(row: dict, cosine: float) -> str:
    """What the earlier rule did with a pair: a candidate when the bigram Dice is ≥ 0.65 or
    the cosine ≥ 0.9, confirmed only by the same type and subject (none: only an identical
    text is a duplicate), then superseded when :func:`string_rule.contradiction_reason`
    finds a changed value, else merged."""
    from string_rule import bigram_similarity, contradiction_reason

    old, new = row["old"], row["new"]
    if old["type"] != new["type"]:
        return "distinct"
    a, b = str(old["text"]).strip(), str(new["text"]).strip()
    if content_hash_normalised(a) == content_hash_normalised(b) and (
            old.get("subject") == new.get("subject") or not new.get("subject")):
        return "duplicate"
    subject_a = " ".join(str(old.get("subject") or "").casefold().split())
    subject_b = " ".join(str(new.get("subject") or "").casefold().split())
    if not subject_a or subject_a != subject_b:
        return "distinct"
    if bigram_similarity(a, b) < 0.65 and cosine < 0.9:
        return "distinct"
    return "contradiction" if contradiction_reason(a, b) else "duplicate"


def read_pairs(path: Path) -> list[dict]:
    """The labelled pairs of one ``write_pairs/*.jsonl`` file that can be written as memory
    files; a pair the product refuses to write (a lone surrogate in a break-it input) is
    left out and counted on stderr."""
    from config.errors import DreamdError

    rows, refused = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        try:
            _fields(row["old"]), _fields(row["new"])
        except DreamdError:
            refused.append(row["id"])
            continue
        rows.append(row)
    if refused:
        print(f"{path.name}: {len(refused)} pairs refused as memories (not judged): "
              f"{', '.join(refused)}", file=sys.stderr)
    return rows


def embed_pairs(embedder: UniversalSentenceEncoder, rows: list[dict],
                cache: Path | None = None) -> np.ndarray:
    """``float32[2 * len(rows), 512]``: old then new memory of each pair, first chunks; from
    and into ``cache`` (an SQLite file, see ``--cache``) when given."""
    texts = [_fields(r[s])[0] for r in rows for s in ("old", "new")]
    if cache is None:
        return embedder.embed(texts)
    import hashlib
    import sqlite3

    keys = [hashlib.sha256(f"{embedder.model_id}\0{t}".encode()).hexdigest() for t in texts]
    with sqlite3.connect(cache) as db:
        db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")
        found = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            found.update(db.execute(f"SELECT key, vector FROM vectors WHERE key IN "
                                    f"({','.join('?' * len(chunk))})", chunk).fetchall())
        missing = sorted({k: i for i, k in enumerate(keys) if k not in found}.values())
        if missing:
            fresh = embedder.embed([texts[i] for i in missing])
            for i, row in zip(missing, fresh, strict=True):
                found[keys[i]] = np.asarray(row, dtype=np.float32).tobytes()
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                           [(keys[i], found[keys[i]]) for i in missing])
    return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])


def decide_pair(row: dict, old_vector: np.ndarray, new_vector: np.ndarray) -> Decision:
    """:func:`consistency.duplicates.decide` of a pair's new memory against its old one, as
    ``remember`` calls it (fields derived as ``remember`` derives them)."""
    old, new = row["old"], row["new"]
    _, oname, odesc, obody = _fields(old)
    _, nname, ndesc, nbody = _fields(new)
    facts = MemoryFacts(
        id="old", type=old["type"], subject=old.get("subject"), name=oname,
        description=odesc, body=obody, content_hash=content_hash_normalised(obody),
        embedding=old_vector, written=date.fromisoformat(old["created"]))
    draft = MemoryDraft(
        type=new["type"], subject=new.get("subject"), name=nname, description=ndesc,
        body=nbody, content_hash=content_hash_normalised(nbody),
        embedding=new_vector, written=date.fromisoformat(new["created"]))
    return decide(draft, [facts])


def _report(title: str, rows: list[dict], outcomes: list[str], show: bool,
            whys: list[str] | None = None) -> None:
    stats: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    wrong_merges = wrong_supersessions = 0
    misses = []
    for n, (row, outcome) in enumerate(zip(rows, outcomes, strict=True)):
        ok = right_outcome(row["label"], outcome)
        subject = "subject" if row["old"].get("subject") else "no subject"
        for key in ("all", row["label"], f"{row['label']} / {row['kind']}",
                    f"{row['label']} / {row['lang']}", f"{row['label']} / {subject}"):
            stats[key][0] += ok
            stats[key][1] += 1
        wrong_merges += outcome == "duplicate" and row["label"] != "duplicate"
        wrong_supersessions += outcome == "contradiction" and row["label"] in {
            "distinct", "series", "partial_change"}
        if not ok:
            why = f" ({whys[n]})" if whys and whys[n] else ""
            misses.append(f"{row['id']} {row['label']}/{row['kind']}: {outcome}{why} | "
                          f"{row['old']['text']!r} | {row['new']['text']!r}")
    print(f"== {title}: {len(rows)} pairs")
    for key in sorted(stats, key=lambda k: (k != "all", k)):
        right, total = stats[key]
        print(f"  {key:40s} {right:4d}/{total:<4d} {right / total:.2f}")
    print(f"  merges of two different facts: {wrong_merges}; supersessions of a fact that "
          f"still holds: {wrong_supersessions}")
    if show:
        print("\n".join("  " + m for m in misses))


def _writable(rows: list[dict], name: str) -> list[dict]:
    """The pairs whose two texts ``remember`` takes (:func:`ccb.memory_text.
    checked_memory_text`: one of only emoji is refused, nothing written); the others are
    left out of both ``--remember`` and ``--dream`` and counted on stderr."""
    from ccb.memory_text import checked_memory_text
    from config.errors import MemoryTextError
    from config.settings import MEMORY_MAX_CHARS

    kept, refused = [], []
    for row in rows:
        try:
            for side in ("old", "new"):
                checked_memory_text(str(row[side]["text"]), max_chars=MEMORY_MAX_CHARS)
        except MemoryTextError:
            refused.append(row["id"])
            continue
        kept.append(row)
    if refused:
        print(f"{name}: {len(refused)} pairs refused by remember (not judged): "
              f"{', '.join(refused)}", file=sys.stderr)
    return kept


def _isolated(prefix: str) -> Path:
    """A temp folder with dreamd's state and config inside it (nothing of the user's)."""
    import os
    import tempfile

    base = Path(tempfile.mkdtemp(prefix=prefix))
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ.update({"DREAMD_STORAGE__DATA_DIR": str(base / "data"),
                       "DREAMD_CONFIG": str(base / "config.toml"), "LANCEDB_LOG": "error"})
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return base


def _through_product(rows: list[dict], *, dream: bool) -> list[str]:
    """Each pair through ``remember`` (or one dream over files); the outcome per pair as the
    files tell it."""
    import shutil

    from ccb.owner import parse_owner
    from daemon.app import App, load

    base = _isolated("dreamd-write-decisions-")
    vault = base / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    app.sync()
    paths: list[tuple[str, str]] = []
    if dream:
        for i, row in enumerate(rows):
            pair = []
            for side in ("old", "new"):
                data = _memory_file(row[side], f"p{i:03d}")
                rel = f"Memory/p{i:03d}-{side}.md"
                (vault / rel).write_bytes(data)
                pair.append(rel)
            paths.append((pair[0], pair[1]))
        app.sync()
        app.dreamer().dream(force=True)
    else:
        for i, row in enumerate(rows):
            owner = parse_owner(f"p{i:03d}")
            got = []
            for side in ("old", "new"):
                memory = row[side]
                day = datetime.combine(date.fromisoformat(memory["created"]),
                                       datetime.min.time(), tzinfo=UTC)
                result = app.memories(owner, clock=lambda day=day: day).remember(
                    memory["text"], type=memory["type"], subject=memory.get("subject"),
                    name=memory.get("name"))
                got.append(result)
            first, second = got
            if second.action in {"duplicate", "updated"}:
                paths.append(("=", "="))
            else:
                paths.append((first.path, second.path))
    outcomes = [_outcome_of_files(vault, old, new) for old, new in paths]
    app.close()  # (the index writes after the last answers go in before the folder goes)
    shutil.rmtree(base, ignore_errors=True)
    return outcomes


def _memory_file(side: dict, owner: str) -> bytes:
    body = str(side["text"]).strip()
    name = str(side.get("name") or derived_name(body))
    at = datetime.combine(date.fromisoformat(side["created"]), datetime.min.time(), tzinfo=UTC)
    from ulid import ULID

    return render_memory(NewMemory(
        name=name, description=derived_description(body),
        type=side["type"], id=str(ULID()), created=at, updated=at, body=body + "\n",
        subject=side.get("subject"), owner=owner))


def _outcome_of_files(vault: Path, old: str, new: str) -> str:
    if old == "=":
        return "duplicate"
    notes = []
    for rel in (old, new):
        note = parse_note(rel, (vault / rel).read_bytes())
        notes.append(note)
    a, b = (n.memory for n in notes)
    assert a is not None and b is not None
    # a merge archives one with merged_into; a supersession closes one (valid_to) and links
    # it from the other (the lifecycle may archive an old memory: that is neither)
    if notes[0].properties.get("merged_into") or notes[1].properties.get("merged_into"):
        return "duplicate"
    if a.supersedes or b.supersedes:
        return "contradiction"
    for key in ("possible_duplicate", "possible_contradiction"):
        if notes[1].properties.get(key) or notes[0].properties.get(key):
            return key.replace("_", " ")
    return "distinct"


def _latency(count: int) -> int:
    """remember p50/p95 with ``count`` live memories, and the baselines of the same run."""
    import gzip
    import os
    import random
    import shutil
    import statistics
    import subprocess

    from string_rule import bigram_similarity, contradiction_reason

    from daemon.app import App, load

    base = _isolated("dreamd-remember-latency-")
    corpus = ROOT.parent / "shared" / "corpora" / "longmemeval" / "longmemeval_oracle.json"
    opener = gzip.open if corpus.suffix == ".gz" else open
    with opener(corpus, "rt", encoding="utf-8") as handle:
        questions = json.load(handle)
    sentences: list[str] = []
    for question in questions:
        for session in question["haystack_sessions"]:
            for turn in session:
                if turn["role"] == "user":
                    first = turn["content"].split(". ")[0].strip()
                    if 20 < len(first) < 200 and first not in sentences:
                        sentences.append(first)
    random.Random(7).shuffle(sentences)
    vault = base / "vault"
    (vault / "Memory").mkdir(parents=True)
    at = datetime(2026, 11, 1, tzinfo=UTC)
    from ulid import ULID

    types = ("user", "feedback", "project", "reference")
    for i, text in enumerate(sentences[:count]):
        data = render_memory(NewMemory(
            name=derived_name(text), description=derived_description(text),
            type=types[i % 4], id=str(ULID()), created=at, updated=at, body=text + "\n"))  # type: ignore[arg-type]
        (vault / "Memory" / f"m{i:05d}-{slugify(text[:40])}.md").write_bytes(data)
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    app.sync()
    facts = sentences[count:count + 41]
    app.memories().remember(facts[0], type="user")  # warm: the pool reads every file once
    app.indexing.settle()
    times, cpu = [], []
    process_started, loop_started = time.process_time(), time.perf_counter()
    for text in facts[1:]:
        started, thread_started = time.perf_counter(), time.thread_time()
        app.memories().remember(text, type="user")
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - thread_started) * 1000)
    app.indexing.settle()  # (the index writes that follow the answers, in the totals)
    process_ms = (time.process_time() - process_started) * 1000 / len(times)
    loop_ms = (time.perf_counter() - loop_started) * 1000 / len(times)
    times.sort()
    cpu.sort()

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))]

    embed_ms = []
    for text in facts[1:]:
        started = time.perf_counter()
        app.embedder.embed([text + " (baseline)"])
        embed_ms.append((time.perf_counter() - started) * 1000)
    walk_ms = []
    for _ in range(20):
        started = time.perf_counter()
        sum(1 for _ in os.scandir(vault / "Memory"))
        for entry in os.scandir(vault / "Memory"):
            entry.stat()
        walk_ms.append((time.perf_counter() - started) * 1000)
    string_ms = []
    for text in facts[1:11]:
        started = time.perf_counter()
        for body in sentences[:count]:  # the earlier rule: bigram Dice ≥ 0.65, then reasons
            if bigram_similarity(body, text) >= 0.65:
                contradiction_reason(body, text)
        string_ms.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    python_ms = (time.perf_counter() - started) * 1000
    served = _served_remember(app, vault, sentences[count + 41:count + 82])
    print(f"== remember in process, {count} live memories ({len(times)} new facts)")
    print(f"  remember                       p50 {statistics.median(times):7.1f} ms   "
          f"p95 {pct(times, 0.95):7.1f} ms")
    print(f"  remember, CPU of the caller    p50 {statistics.median(cpu):7.1f} ms   "
          f"p95 {pct(cpu, 0.95):7.1f} ms")
    print(f"  per remember, all threads      CPU {process_ms:7.1f} ms   wall {loop_ms:7.1f} ms "
          "(the index writes after the answers included)")
    print(f"  baseline: embed one memory     p50 {statistics.median(embed_ms):7.1f} ms")
    print(f"  baseline: stat walk of Memory/ p50 {statistics.median(walk_ms):7.1f} ms")
    print(f"  baseline: string rule, all     p50 {statistics.median(string_ms):7.1f} ms "
          "(bigram overlap + contradiction_reason over every memory, no write)")
    print(f"  baseline: python -c pass           {python_ms:7.1f} ms")
    if served:
        print(f"  through the running daemon     p50 {statistics.median(served):7.1f} ms   "
              f"p95 {pct(served, 0.95):7.1f} ms (the local API's round trip, one every "
              "0.5 s; the index write follows the answer)")
    app.close()
    shutil.rmtree(base, ignore_errors=True)
    return 0


def _served_remember(app: Any, vault: Path, facts: list[str]) -> list[float]:
    """``remember`` round trips to a ``dreamd run`` of ``vault``, one every 0.5 s (ms; the
    first one, which reads every memory file into the pool, left out)."""
    import subprocess

    from daemon import client

    daemon = subprocess.Popen([str(Path(sys.executable).with_name("dreamd")), "run",
                               str(vault)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not (app.state_dir / client.API_RECORD).exists():
            if time.monotonic() > deadline or daemon.poll() is not None:
                return []
            time.sleep(0.05)
        times = []
        for n, text in enumerate(facts):
            time.sleep(0.5)  # an assistant's pace: the last write's index work is done
            started = time.perf_counter()
            client.call(app.state_dir, "cli", {
                "argv": ["remember", text, "--type", "user", "--vault", str(vault)],
                "settings": app.settings_fingerprint, "stdin": None, "terminal": {}})
            if n:
                times.append((time.perf_counter() - started) * 1000)
        return sorted(times)
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)


if __name__ == "__main__":
    raise SystemExit(main())
