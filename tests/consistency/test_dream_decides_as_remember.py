"""The dream decides as ``remember`` does: memories without a subject, through the product's
real model, a real store and real files.

``remember`` judges a new memory against the memories it is near by meaning however far
(:func:`consistency.duplicates.decide`: its eight nearest by cosine, with or without a
subject); a dream joined a changed memory only with those at cosine 0.55 or more, so a
changed value told in other words ("The staging database listens on port 5433." / "Staging
DB moved to port 6543.") was superseded by ``remember`` and left as two live memories by
the dream (``bench/write_pairs/family57.jsonl``: 39 of 40 such contradictions found by
``remember``, 17 by the dream). The table is written as an assistant writes over MCP: no
subject, English and Chinese, contradictions and duplicates in other words, and look-alikes
that are two facts. All its memories are one owner's, in one vault: each new memory has
every other pair's memories beside it, as in a real vault, and more than the eight
nearest. ``remember`` writes the old memories, then the new ones, a day apart each; the
dream reads the same memories as files written on the same days.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from ulid import ULID

from ccb.memory_file import NewMemory, render_memory
from ccb.parse import parse_note
from daemon.app import App, load
from daemon.memories import derived_description, derived_name
from magma.embedder import UniversalSentenceEncoder
from magma.lineage import link_stem

#: (old, new, what both must do: "duplicate" merged, "contradiction" the new supersedes the
#: old, "apart" both kept live).
PAIRS: list[tuple[str, str, str]] = [
    # a changed value told in other words (the cosine of most sits below 0.55)
    ("The staging database listens on port 5433.", "Staging DB moved to port 6543.",
     "contradiction"),
    ("Sprint planning happens on Mondays.", "We moved sprint planning to Wednesdays.",
     "contradiction"),
    ("My laptop runs Ubuntu 22.04.", "Upgraded the laptop to Ubuntu 24.04.",
     "contradiction"),
    ("The daily standup starts at 9:15.", "Standup is at 10:00 now.", "contradiction"),
    ("I live in Porto.", "Moved to Madrid last month.", "contradiction"),
    ("My editor is Neovim.", "VS Code now.", "contradiction"),
    ("我住在杭州。", "上个月搬到了苏州。", "contradiction"),
    ("周会在周二下午。", "周会改到周四上午了。", "contradiction"),
    ("服务器部署在东京区域。", "服务器已经迁到新加坡区域。", "contradiction"),
    ("我每天跑步五公里。", "现在每天跑十公里。", "contradiction"),
    # the same fact in other words
    ("Always squash commits before merging.", "Before merging, squash the commits.",
     "duplicate"),
    ("The backup job runs every night at 2am.", "Nightly at 2am the backup job runs.",
     "duplicate"),
    ("Don't push directly to main.", "Do not push to main directly.", "duplicate"),
    ("我对花生过敏。", "花生会让我过敏。", "duplicate"),
    ("代码评审至少需要两个人批准。", "每次代码评审都要至少两个人批准。", "duplicate"),
    # two facts that look alike
    ("My sister lives in Lyon.", "My brother lives in Lyon.", "apart"),
    ("The frontend is deployed on Vercel.", "The docs site is deployed on Netlify.", "apart"),
    ("我哥哥在北京工作。", "我表妹在上海读书。", "apart"),
]

OLD_DAY = datetime(2026, 5, 1, 9, tzinfo=UTC)
NEW_DAY = datetime(2026, 7, 1, 9, tzinfo=UTC)


def _app(vault: Path, data: Path, embedder: UniversalSentenceEncoder) -> App:
    return App.create(load(None, None, {"vault.path": str(vault), "storage.data_dir": str(data)}),
                      embedder=embedder)


def _vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    return vault


def _by_remember(root: Path, embedder: UniversalSentenceEncoder) -> list[str]:
    """Each pair's outcome through ``remember`` (every old memory, then every new one)."""
    vault = _vault(root)
    app = _app(vault, root / "data", embedder)
    try:
        app.sync()
        olds = [link_stem(app.memories(clock=lambda n=n: OLD_DAY + timedelta(days=n))
                          .remember(old, type="user").path)
                for n, (old, _new, _label) in enumerate(PAIRS)]
        results = [app.memories(clock=lambda n=n: NEW_DAY + timedelta(days=n))
                   .remember(new, type="user") for n, (_old, new, _label) in enumerate(PAIRS)]
    finally:
        app.close()
    outcomes = []
    for old, result in zip(olds, results, strict=True):
        if result.action in {"duplicate", "updated"}:
            outcome, target = "duplicate", link_stem(result.path)
        elif result.action == "superseded":
            outcome, target = "contradiction", link_stem(result.superseded or "")
        else:
            outcome, target = "apart", old
        outcomes.append(outcome if target == old else f"{outcome} of {target}")
    return outcomes


def _by_dream(root: Path, embedder: UniversalSentenceEncoder) -> list[str]:
    """Each pair's outcome after one dream over the memories written as files."""
    vault = _vault(root)
    stems = []
    for n, (old, new, _label) in enumerate(PAIRS):
        pair = []
        for side, text, at in (("old", old, OLD_DAY), ("new", new, NEW_DAY)):
            stem = f"p{n:02d}-{side}"
            when = at + timedelta(days=n)
            (vault / "Memory" / f"{stem}.md").write_bytes(render_memory(NewMemory(
                name=derived_name(text), description=derived_description(text), type="user",
                id=str(ULID()), created=when,
                updated=when, body=text + "\n")))
            pair.append(stem)
        stems.append(pair)
    app = _app(vault, root / "data", embedder)
    try:
        app.sync()
        app.dreamer().dream(force=True)
    finally:
        app.close()
    links: dict[str, tuple[str, str]] = {}  # stem: (relation, the stem it names)
    for path in (vault / "Memory").glob("p*.md"):
        note = parse_note(f"Memory/{path.name}", path.read_bytes())
        merged = note.properties.get("merged_into")
        if merged:
            links[path.stem] = ("duplicate", link_stem(str(merged)))
        elif note.memory is not None and note.memory.supersedes:
            links[path.stem] = ("contradiction", link_stem(note.memory.supersedes[0]))
    outcomes = []
    for old, new in stems:
        relation, target = links.get(new) or links.get(old) or ("apart", "")
        if relation == "apart" or {target} <= {old, new}:
            outcomes.append(relation)
        else:
            outcomes.append(f"{relation} of {target}")
    return outcomes


def test_the_dream_decides_subjectless_pairs_as_remember_does(
        real_embedder: UniversalSentenceEncoder, tmp_path: Path) -> None:
    remembered = _by_remember(tmp_path / "remember", real_embedder)
    dreamed = _by_dream(tmp_path / "dream", real_embedder)
    table = [f"{old!r} / {new!r}: expected {want}, remember {got_r}, dream {got_d}"
             for (old, new, want), got_r, got_d in zip(PAIRS, remembered, dreamed, strict=True)
             if not want == got_r == got_d]
    assert not table, "\n".join(table)
