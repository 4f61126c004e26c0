"""A seeded generator of entry files in dreamd's form (English and Chinese text, every
field of the inline metadata, values that do not read), for the round-trip tests."""

from __future__ import annotations

import random
from datetime import date

from ccb.entries import entry_key
from ccb.entry_convert import ENTRIES_HEADER

__all__ = ["generate"]

EN = ("tests", "hit", "a", "real", "database", "prefers", "Go", "dark", "themes", "works",
      "late", "kiln", "fires", "at", "cone", "six", "deploys", "on", "Fridays", "never",
      "100%", "v2.1", "[[Kiln]]", "#tag", "naïve", "café", "x=y;z")
ZH = ("我", "在", "余杭区", "西湖区", "工作", "喜欢", "深色", "主题", "每天", "晚上", "睡觉",
      "测试", "必须", "使用", "真实", "数据库", "，", "。")
SUBJECTS = ("所在地", "testing.database", "tools", "作息", "kiln.cone", "a b", "x;y", "100%")


def _text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return " ".join(rng.choice(EN) for _ in range(rng.randint(1, 9)))
    return "".join(rng.choice(ZH) for _ in range(rng.randint(1, 12)))


def _comment(rng: random.Random, keys: list[str]) -> str | None:
    roll = rng.random()
    if roll < 0.15:
        return None
    if roll < 0.2:
        return ""
    pairs = [f"subj={rng.choice(SUBJECTS).replace(';', '%3B')}"]
    day = date(2026, rng.randint(1, 12), rng.randint(1, 28)).isoformat()
    pairs.append(f"vf={day}" if rng.random() < 0.9 else "vf=tomorrow")
    if rng.random() < 0.3:
        pairs.append(f"vt={date(2026, 12, rng.randint(1, 28)).isoformat()}")
    pairs.append(f"conf={rng.choice(['0.90', '0.5', '1', '0.75'])}")
    if rng.random() < 0.5:
        pairs.append(f"hc={rng.randint(0, 9)}")
    if keys and rng.random() < 0.3:
        pairs.append(f"sup={rng.choice(keys)}")
    if rng.random() < 0.2:
        pairs.append(f"type={rng.choice(['user', 'feedback', 'reference'])}")
    rng.shuffle(pairs)
    return ";".join(pairs)


def generate(seed: int, files: int, per_file: int) -> dict[str, bytes]:
    """Entry files in dreamd's form: English and Chinese text, every field, bad values."""
    rng = random.Random(seed)
    out: dict[str, bytes] = {}
    for number in range(files):
        keys: list[str] = []
        lines = [ENTRIES_HEADER]
        for _ in range(per_file):
            text = _text(rng)
            comment = _comment(rng, keys)
            lines.append(f"- {text}" + (f" <!--m:{comment}-->" if comment is not None else "")
                         + "\n")
            keys.append(entry_key(text))
        folder = "" if number % 2 else "人/"
        out[f"{folder}facts-{number:02d}.md"] = "".join(lines).encode("utf-8")
    return out
