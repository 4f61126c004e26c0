"""From diary to memory over a year: promotion precision and recall, and the time per night.

    .venv/bin/python bench/diary_bench.py [--days 365] [--seed 21] [--workdir DIR] [--json OUT]

1. Generate ``--days`` daily notes (``Daily/YYYY-MM-DD.md``, English and Chinese on alternate
   days), each with everyday diary lines (noise) and, every fifth day, a durable fact (a
   rule) about a project of its own; and, every seventh day, an assistant session (a Claude
   Code transcript, ``claude/projects/p/<session>.jsonl``, written on its day) in which the
   user states a durable rule of the same shape about another project, among chatter and a
   one-off decision. The plan says which facts must become memories: the *durable* ones are
   searched on three days with three different queries (each naming the project with other
   words of the fact) in the following fortnight; the *decoys* (facts just as durable in
   their words) are searched on two days only; a few noise lines and one-off decisions are
   searched once. Index the vault once.
2. Live the year: each day, that day's session is written, that day's searches run through
   the real search pipeline (``App.search`` at noon, which counts the recalls), then a night
   of light, REM and deep sleep (:class:`daemon.dream_sleep.SleepCycle`) at 22:00, timed.
3. Report the promotion against the plan (precision: promoted snippets that were planned
   durable facts; recall: durable facts promoted; for all facts, for those of the notes and
   for those said in sessions), the time per night (median, max), and a second night with
   nothing new: the files of the vault, the transcripts and the state must not change.

The embedder is the token-hash fake of the tests (the votes are word matches of the query
and the snippet, not meaning; retrieval quality is measured by ``search_bench``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))

from fakes import TokenHashEmbedder  # noqa: E402

from daemon.app import App, load, sleep_cycle  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402

START = date(2026, 1, 1)
_EN_SUBJECTS = ["billing service", "search index", "mobile client", "release train",
                "payments API", "staging cluster", "onboarding flow", "audit log",
                "feature flags", "backup job", "image pipeline", "invoice export",
                "metrics dashboard", "webhook relay", "auth gateway", "cache layer",
                "report builder", "sync worker", "email digest", "label printer"]
_EN_RULES = ["must always run the {x} migration check before a deploy",
             "must never ship without a rollback plan for the {x}",
             "should always pin the {x} client version in the lockfile"]
_EN_REASONS = ["a silent change broke {y} last quarter", "{y} was down for a day in spring",
               "the {y} lost a week of data once"]
_ZH_SUBJECTS = ["账单服务", "搜索索引", "移动客户端", "发布列车", "支付接口", "测试集群",
                "注册流程", "审计日志", "功能开关", "备份任务", "图片管线", "发票导出",
                "监控面板", "回调中继", "认证网关", "缓存层", "报表生成", "同步进程"]
_ZH_RULES = ["以后{x}上线前务必先跑迁移检查", "今后{x}发布必须附带回滚方案",
             "{x}的客户端版本一律锁定"]
_NOISE_EN = ["Coffee with {n} about the {t}.", "Read an article on {t}.",
             "Lunch at the {t} place with {n}.", "Walked home past the {t}."]
_NOISE_ZH = ["和{n}喝咖啡聊了{t}。", "读了一篇关于{t}的文章。", "中午和{n}去吃{t}。"]
_NAMES = ["Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun"]
_TOPICS = ["harbour", "garden", "museum", "noodle", "bakery", "river", "market", "library",
           "tram", "bridge", "festival", "orchard"]
_SYLLABLES = ["ka", "zor", "vel", "mi", "tan", "quo", "rix", "lo", "bren", "sa", "dor",
              "ny", "pel", "gar", "u", "ith"]
_ZH_TOPICS = ["面馆", "书店", "花园", "博物馆", "集市", "河边", "图书馆", "电车"]


def _codename(rng: random.Random, taken: set[str]) -> str:
    """A made-up project name (three syllables), new in this year: each durable fact is about
    one thing of its own, as a team's projects are."""
    while True:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()
        if name not in taken:
            taken.add(name)
            return name


def _fact(rng: random.Random, day: int, name: str) -> tuple[str, list[str]]:
    """A durable fact of day ``day`` about project ``name``, and three queries that name it
    with other words of the fact each time."""
    if day % 2 == 0:
        x = f"{name} {rng.choice(_EN_SUBJECTS)}"
        y = rng.choice(_EN_SUBJECTS)
        rule = rng.choice(_EN_RULES).format(x=x)
        text = rule[0].upper() + rule[1:] + ": " + rng.choice(_EN_REASONS).format(y=y) + "."
        words = [w.strip(":.,") for w in text.split()
                 if len(w.strip(":.,")) > 3 and w.strip(":.,") != name]
        return text, [f"{name} {' '.join(words[i:i + 2])}" for i in (1, 3, 5)]
    x = f" {name} {rng.choice(_ZH_SUBJECTS)}"  # a Latin name between spaces, as most write it
    text = (rng.choice(_ZH_RULES).format(x=x) + "，上次出过故障。").strip()
    at = text.index(name) + len(name) + 1  # (after the space)
    return text, [f"{name} {text[at:at + 4]}", f"{name} {text[at + 3:at + 7]}",
                  f"{name} {text[at + 6:at + 10]}"]


def _session(rng: random.Random, index: int, day: date, fact: str) -> list[dict[str, Any]]:
    """A day's session in the shape Claude Code writes: prompts and replies, a tool result;
    the user says ``fact`` once, a one-off decision and a question."""
    noon = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=10)
    said = [f"Can you look at the failing job? {fact} Thanks.",
            f"Let's use the {rng.choice(_TOPICS)} palette for the slides.",
            "Why is the build so slow today?"]
    entries: list[dict[str, Any]] = []
    for k, text in enumerate(said):
        at = (noon + timedelta(minutes=7 * k)).isoformat(timespec="seconds")
        entries.append({"type": "user", "sessionId": f"s{index}", "timestamp": at + "Z",
                        "message": {"role": "user", "content": text}})
        entries.append({"type": "user", "sessionId": f"s{index}", "timestamp": at + "Z",
                        "message": {"role": "user", "content": [
                            {"type": "tool_result", "tool_use_id": f"t{k}",
                             "content": "never mind this output"}]}})
        entries.append({"type": "assistant", "sessionId": f"s{index}", "timestamp": at + "Z",
                        "message": {"role": "assistant", "content": [
                            {"type": "text", "text": "Done. You must always check the log."}]}})
    return entries


def generate(vault: Path, days: int, seed: int) -> dict[str, Any]:
    """Write the notes; return the plan: ``searches`` ``{day index: [query]}``, ``durable``
    and ``decoys`` (fact texts), ``sessions`` ``{day index: transcript entries}`` (written
    on their day by :func:`run`) and ``said`` (the facts said in sessions)."""
    rng = random.Random(seed)
    folder = vault / "Daily"
    folder.mkdir(parents=True, exist_ok=True)
    searches: dict[int, list[str]] = {}
    durable: list[str] = []
    decoys: list[str] = []
    sessions: dict[int, list[dict[str, Any]]] = {}
    said: list[str] = []
    taken: set[str] = set()
    for index in range(days):
        day = START + timedelta(days=index)
        zh = index % 2 == 1
        lines = []
        for k in range(rng.randint(4, 7)):
            template = rng.choice(_NOISE_ZH if zh else _NOISE_EN)
            noise = template.format(n=rng.choice(_NAMES),
                                    t=rng.choice(_ZH_TOPICS if zh else _TOPICS))
            lines.append(f"- {8 + k:02d}:{rng.randint(0, 59):02d} {noise}")
            if rng.random() < 0.05:  # a noise line looked up once
                searches.setdefault(index + rng.randint(0, 5), []).append(noise)
        if index % 5 == 0 and index + 14 < days:
            text, queries = _fact(rng, index, _codename(rng, taken))
            lines.insert(rng.randint(0, len(lines)), f"- 21:{rng.randint(10, 59)} {text}")
            chosen = sorted(rng.sample(range(1, 14), 3 if index % 15 else 2))
            (durable if len(chosen) == 3 else decoys).append(text)
            for offset, query in zip(chosen, queries, strict=False):
                searches.setdefault(index + offset, []).append(query)
        heading = "## 记录" if zh else "## Notes"
        (folder / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n{heading}\n" + "\n".join(lines) + "\n", encoding="utf-8")
    spoken = random.Random(seed + 1)  # (the notes' plan stays what it was without sessions)
    for index in range(3, days - 14, 7):
        day = START + timedelta(days=index)
        text, queries = _fact(spoken, index, _codename(spoken, taken))
        sessions[index] = _session(spoken, index, day, text)
        said.append(text)
        chosen = sorted(spoken.sample(range(1, 14), 3 if index % 21 != 3 else 2))
        (durable if len(chosen) == 3 else decoys).append(text)
        for offset, query in zip(chosen, queries, strict=False):
            searches.setdefault(index + offset, []).append(query)
        if spoken.random() < 0.3:  # the one-off decision looked up once
            decision = sessions[index][3]["message"]["content"]
            searches.setdefault(index + spoken.randint(1, 5), []).append(decision)
    return {"searches": searches, "durable": durable, "decoys": decoys,
            "sessions": sessions, "said": said}


def _fingerprint(*places: Path) -> str:
    """A hash of the files of ``places`` (folders, or files themselves)."""
    digest = hashlib.sha256()
    for place in places:
        files = [place] if place.is_file() else sorted(p for p in place.rglob("*")
                                                       if p.is_file())
        for path in files:
            digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


def run(days: int, seed: int, workdir: Path) -> dict[str, Any]:
    vault = workdir / "vault"
    projects = workdir / "claude" / "projects" / "p"
    projects.mkdir(parents=True, exist_ok=True)
    plan = generate(vault, days, seed)
    app = App.create(load(None, None, {
        "vault.path": str(vault), "time.zone": "UTC",
        "storage.data_dir": str(workdir / "data"),
        "dream.transcripts": str(workdir / "claude" / "projects" / "*" / "*.jsonl")}),
        embedder=TokenHashEmbedder())
    app.sync()
    nights: list[float] = []
    searched = found = 0
    for index in range(days):
        noon = datetime.combine(START + timedelta(days=index), datetime.min.time(), UTC) \
            + timedelta(hours=12)
        if index in plan["sessions"]:  # the day's session, written that day
            transcript = projects / f"s{index:03d}.jsonl"
            transcript.write_text("".join(json.dumps(e) + "\n" for e in plan["sessions"][index]),
                                  encoding="utf-8")
            os.utime(transcript, (noon.timestamp(), noon.timestamp()))
        for query in plan["searches"].get(index, []):
            hits = app.search(query, limit=10, now=noon)
            searched += 1
            found += any(h.path.startswith("Daily/") for h in hits)
        cycle = sleep_cycle(app, clock=lambda n=noon: n + timedelta(hours=10))
        t0 = time.perf_counter()
        cycle.run()
        nights.append(time.perf_counter() - t0)
    state = cycle.state()
    store = app.snippet_recaller.store
    texts = {s.key: s.body for s in store.snippets()}
    promoted = [texts.get(k, "") for k, v in state.items() if v.get("status") == "promoted"]
    hits = sum(1 for body in promoted if any(fact in body for fact in plan["durable"]))
    recalled = sum(1 for fact in plan["durable"] if any(fact in body for body in promoted))
    noted = [f for f in plan["durable"] if f not in plan["said"]]
    noted_promoted = [b for b in promoted if not any(f in b for f in plan["said"])]
    noted_hits = sum(1 for b in noted_promoted if any(f in b for f in noted))
    noted_recalled = sum(1 for f in noted if any(f in b for b in promoted))
    spoken = [f for f in plan["durable"] if f in plan["said"]]
    spoken_promoted = [b for b in promoted if any(f in b for f in plan["said"])]
    spoken_hits = sum(1 for b in spoken_promoted if any(f in b for f in spoken))
    spoken_recalled = sum(1 for f in spoken if any(f in b for b in promoted))
    before = _fingerprint(vault, projects.parent, app.state_dir / "dream-snippets.json")
    # the same evening an hour later: nothing was written, searched or said since
    later = datetime.combine(START + timedelta(days=days - 1), datetime.min.time(), UTC) \
        + timedelta(hours=23)
    again = sleep_cycle(app, clock=lambda: later).run()
    second_changed = _fingerprint(vault, projects.parent,
                                  app.state_dir / "dream-snippets.json") != before
    app.close()
    return {
        "days": days, "searches": searched, "searches_finding_a_daily_note": found,
        "snippets": len(texts), "planned_durable": len(plan["durable"]),
        "decoys": len(plan["decoys"]), "promoted": len(promoted),
        "precision": round(hits / len(promoted), 3) if promoted else None,
        "recall": round(recalled / len(plan["durable"]), 3) if plan["durable"] else None,
        "diary_planned_durable": len(noted),
        "diary_promoted": len(noted_promoted),
        "diary_precision": round(noted_hits / len(noted_promoted), 3) if noted_promoted else None,
        "diary_recall": round(noted_recalled / len(noted), 3) if noted else None,
        "sessions": len(plan["sessions"]),
        "transcript_snippets": sum(1 for s in store.snippets() if s.origin == "transcript"),
        "session_planned_durable": len(spoken),
        "session_promoted": len(spoken_promoted),
        "session_precision": round(spoken_hits / len(spoken_promoted), 3)
        if spoken_promoted else None,
        "session_recall": round(spoken_recalled / len(spoken), 3) if spoken else None,
        "night_s_median": round(statistics.median(nights), 3),
        "night_s_max": round(max(nights), 3),
        "second_night_promoted": len(again.promoted),
        "second_night_changed_files": second_changed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    configure_logging(level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.days, args.seed, args.workdir or Path(tmp))
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
