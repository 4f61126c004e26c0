"""A dream keeps a pair it is unsure of as ``remember`` does: both memories stay live, each
names the other under ``possible_duplicate`` / ``possible_contradiction``, ``dreamd check``
lists the pair with the evidence, ``dreamd conflicts resolve`` settles it, and a dream with
nothing changed writes nothing. Through the product's real model, a real store and real
files.

The table is written for this test (not taken from ``bench/write_pairs``): English and
Chinese, with and without a subject; pairs unsure whether a rule was said again in other
words ("Keep functions short." / "Functions should be under 50 lines."), whose values traded
places ("Room 204 is quiet and Room 305 is loud." / the rooms swapped), or where one value of
a memory of several changed ("Staging uses port 5432 and production uses port 6432." /
"Production uses port 7432."); and, beside them, pairs the rules are sure of (merged,
superseded, two facts), which get no link. Each pair is one owner's, so pairs never meet.

Last, a dream judges a changed memory with the memories that share its words, as
``remember`` does, not only with its eight nearest by meaning (:data:`BY_WORDS`).
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from ulid import ULID

from ccb.memory_file import NewMemory, render_memory
from ccb.owner import parse_owner
from ccb.parse import parse_note
from daemon.app import App, load
from daemon.memories import derived_description, derived_name
from magma.embedder import UniversalSentenceEncoder
from magma.lineage import link_stem

#: (old, new, subject or None, what both must do: "possible_duplicate",
#: "possible_contradiction", or "sure": merged, superseded or kept apart without a link).
PAIRS: list[tuple[str, str, str | None, str]] = [
    # English, no subject
    ("Room 204 is quiet and Room 305 is loud.", "Room 204 is loud and Room 305 is quiet.",
     None, "possible_contradiction"),
    ("Staging uses port 5432 and production uses port 6432.", "Production uses port 7432.",
     None, "possible_contradiction"),
    ("The Berlin office has 40 people and the Paris office has 25.",
     "The Paris office has 30 people.", None, "possible_contradiction"),
    ("Keep pull requests small.", "Pull requests should stay under 400 lines.", None,
     "possible_duplicate"),
    # English, with a subject
    ("Alice reviews the backend and Bob reviews the frontend.",
     "Bob reviews the backend and Alice reviews the frontend.", "review.owners",
     "possible_contradiction"),
    ("Staging uses port 5432 and production uses port 6432.", "Production uses port 7432.",
     "db.ports", "possible_contradiction"),
    ("Keep functions short.", "Functions should be under 50 lines.", "code.functions",
     "possible_duplicate"),
    # Chinese, no subject
    ("周一练腿，周三练背。", "周一练背，周三练腿。", None, "possible_contradiction"),
    ("北京办公室有四十人，上海办公室有二十五人。", "上海办公室有三十人。", None,
     "possible_contradiction"),
    ("咖啡馆八点开门，隔壁面包店七点开门。", "隔壁面包店六点开门。", None,
     "possible_contradiction"),
    ("尽量少写注释。", "只在意图不明显的地方写注释。", None, "possible_duplicate"),
    ("提交信息要写清楚。", "提交信息第一行不超过五十个字。", None, "possible_duplicate"),
    # Chinese, with a subject
    ("小李周二值班，小张周四值班。", "小李周四值班，小张周二值班。", "oncall",
     "possible_contradiction"),
    ("咖啡馆八点开门，隔壁面包店七点开门。", "隔壁面包店六点开门。", "shop.hours",
     "possible_contradiction"),
    ("拉取请求要小。", "拉取请求不超过四百行。", "pr.size", "possible_duplicate"),
    ("函数要短。", "函数不超过五十行。", "code.functions", "possible_duplicate"),
    # sure: no link (a change, a restatement, two facts)
    ("The staging database listens on port 5433.", "Staging DB moved to port 6543.", None,
     "sure"),
    ("Don't push directly to main.", "Do not push to main directly.", None, "sure"),
    ("我哥哥在北京工作。", "我表妹在上海读书。", None, "sure"),
    ("我住在杭州。", "我住在苏州。", "home.city", "sure"),
]

OLD_DAY = datetime(2026, 5, 1, 9, tzinfo=UTC)
NEW_DAY = datetime(2026, 7, 1, 9, tzinfo=UTC)
KEYS = ("possible_duplicate", "possible_contradiction")


def _owner(n: int) -> str:
    return f"pair{n:02d}"


def _vault(root: Path) -> tuple[Path, list[tuple[str, str]]]:
    """A vault with both memories of every pair as files (owner per pair); their paths."""
    vault = root / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    paths = []
    for n, (old, new, subject, _want) in enumerate(PAIRS):
        pair = []
        for side, text, at in (("old", old, OLD_DAY), ("new", new, NEW_DAY)):
            rel = f"Memory/p{n:02d}-{side}.md"
            when = at + timedelta(days=n)
            (vault / rel).write_bytes(render_memory(NewMemory(
                name=derived_name(text), description=derived_description(text), type="user",
                id=str(ULID()), created=when, updated=when, body=text + "\n",
                subject=subject, owner=_owner(n))))
            pair.append(rel)
        paths.append((pair[0], pair[1]))
    return vault, paths


def _files(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


def _only_links_added(before: bytes, after: bytes, key: str) -> bool:
    """Is ``after`` ``before`` with only the lines of the property ``key`` added (or a link
    appended to it), in the frontmatter, every other byte kept?"""
    a = before.decode().splitlines(keepends=True)
    b = after.decode().splitlines(keepends=True)
    end = b.index("---\n", 1)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b).get_opcodes():
        if tag == "equal":
            continue
        if tag != "insert" or i1 != i2 or j2 > end:
            return False
        if not all(line.startswith((f"{key}:", "  - ", "- ")) for line in b[j1:j2]):
            return False
    return True


def _outcome(vault: Path, old: str, new: str) -> str:
    notes = [parse_note(p, (vault / p).read_bytes()) for p in (old, new)]
    for key in KEYS:
        names = [[link_stem(str(v)) for v in (n.properties.get(key) or [])] for n in notes]
        if names[0] or names[1]:
            both = names[0] == [link_stem(new)] and names[1] == [link_stem(old)]
            return key if both else f"{key} one way: {names}"
    return "sure"


@pytest.fixture(scope="module")
def dreamed(real_embedder: UniversalSentenceEncoder, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[App, Path, list[tuple[str, str]], dict[str, bytes], dict[str, bytes]]:
    """The vault after one dream: the app, the vault, the pairs' paths, the files before
    the dream and after it."""
    root = tmp_path_factory.mktemp("possible")
    vault, paths = _vault(root)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(root / "data")}),
                     embedder=real_embedder)
    app.sync()
    before = _files(vault)
    app.dreamer().dream(force=True)
    yield app, vault, paths, before, _files(vault)
    app.close()


def test_a_dream_links_an_unsure_pair_both_ways_and_keeps_both(dreamed) -> None:
    _app, vault, paths, before, after = dreamed
    wrong = []
    for (old, new), (old_text, new_text, subject, want) in zip(paths, PAIRS, strict=True):
        got = _outcome(vault, old, new)
        if want != "sure" and got != want:
            wrong.append(f"{old_text!r} / {new_text!r} ({subject}): want {want}, got {got}")
        if want == "sure" and got != "sure":
            wrong.append(f"{old_text!r} / {new_text!r} ({subject}): linked ({got})")
    assert not wrong, "\n".join(wrong)
    for (old, new), (*_texts, want) in zip(paths, PAIRS, strict=True):
        if want == "sure":
            continue
        for path in (old, new):  # both live, both files kept, only the link lines added
            note = parse_note(path, after[path])
            assert note.memory is not None and note.memory.valid_to is None
            assert not note.memory.supersedes and "merged_into" not in note.properties
            assert note.memory.status != "archived"
            assert _only_links_added(before[path], after[path], want), path


def test_the_diary_names_each_linked_pair(dreamed) -> None:
    _app, vault, paths, _before, _after = dreamed
    diary = (vault / "Memory" / "DREAMS.md").read_text(encoding="utf-8")
    for (old, new), (*_texts, want) in zip(paths, PAIRS, strict=True):
        if want != "sure":
            assert f"[[{Path(new).stem}]] and [[{Path(old).stem}]] as a " \
                   f"{want.replace('_', ' ')}" in diary


def test_check_lists_each_linked_pair_with_its_evidence(dreamed) -> None:
    app, _vault, paths, _before, _after = dreamed
    report = app.consistency().check()
    listed = {f.drift.paths: f.drift for f in report.findings if f.kind == "possible_pair"}
    for (old, new), (*_texts, want) in zip(paths, PAIRS, strict=True):
        if want == "sure":
            assert tuple(sorted((old, new))) not in listed
            continue
        drift = listed.get(tuple(sorted((old, new))))
        assert drift is not None and drift.kind == want, (old, new, drift)
        assert drift.evidence and "cosine" in drift.evidence, drift


def test_a_second_dream_with_nothing_changed_writes_nothing(dreamed) -> None:
    app, vault, _paths, _before, after = dreamed
    report = app.dreamer().dream(force=True)
    assert report.written == () and not report.diary
    assert _files(vault) == after


def test_the_dream_links_as_remember_does(real_embedder: UniversalSentenceEncoder,
                                          tmp_path: Path, dreamed) -> None:
    _app, dreamt_vault, paths, _before, _after = dreamed
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(tmp_path / "data")}),
                     embedder=real_embedder)
    try:
        app.sync()
        differ = []
        for n, ((old, new, subject, _want), (old_path, new_path)) in enumerate(
                zip(PAIRS, paths, strict=True)):
            results = [app.memories(parse_owner(_owner(n)), clock=lambda at=at: at).remember(
                text, type="user", subject=subject)
                for text, at in ((old, OLD_DAY + timedelta(days=n)),
                                 (new, NEW_DAY + timedelta(days=n)))]
            remembered = results[1].linked_as or "sure"
            dreamt = _outcome(dreamt_vault, old_path, new_path)
            if remembered != dreamt:
                differ.append(f"{old!r} / {new!r} ({subject}): remember {remembered}, "
                              f"dream {dreamt}")
    finally:
        app.close()
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_conflicts_resolve_settles_a_pair_the_dream_linked(
        real_embedder: UniversalSentenceEncoder, tmp_path: Path, language: str) -> None:
    """Each answer settles its pair; the next dream leaves the settled pairs as they are
    (one settled as two facts is not linked again) and then a dream writes nothing."""
    vault, paths = _vault(tmp_path)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(tmp_path / "data")}),
                     embedder=real_embedder)
    try:
        app.sync()
        app.dreamer().dream(force=True)
        unsure = [n for n, (old, *_rest, want) in enumerate(PAIRS)
                  if want != "sure" and (old.isascii() == (language == "en"))]
        settled = dict(zip(unsure, ("same", "changed", "different", "different"),
                           strict=False))
        for n, answer in settled.items():
            old, new = paths[n]
            service = app.memories(parse_owner(_owner(n)))
            message = service.settle_pair(new, answer)  # type: ignore[arg-type]
            assert new in message and old in message
        app.sync()
        app.dreamer().dream(force=True)
        for n, answer in settled.items():
            old, new = paths[n]
            notes = [parse_note(p, (vault / p).read_bytes()) for p in (old, new)]
            assert not any(k in note.properties for note in notes for k in KEYS), (n, answer)
            if answer == "same":
                assert notes[1].properties["merged_into"] == f"[[{Path(old).stem}]]"
            elif answer == "changed":
                assert notes[0].memory and notes[0].memory.valid_to is not None
            else:
                assert notes[0].memory and notes[1].memory
                assert notes[0].memory.valid_to is None and notes[1].memory.valid_to is None
        report = app.consistency().check()
        listed = {f.drift.paths for f in report.findings if f.kind == "possible_pair"}
        assert not {tuple(sorted(paths[n])) for n in settled} & listed
        assert {tuple(sorted(paths[n])) for n in unsure if n not in settled} <= listed
        files = _files(vault)
        assert app.dreamer().dream(force=True).written == ()
        assert _files(vault) == files
    finally:
        app.close()


# --------------------------------------------------------------------------- by words

#: (new memory and its subject, the older memory that says it again in other forms —
#: no subject, list markers, emphasis, arrows, word order, CJK spacing —, the memories of
#: the same owner nearer to the new one by meaning, each of its own subject: other
#: environments, two facts for the rules, more than the eight ``decide`` judges by cosine).
_ENVS_EN = ["production", "test", "dev", "QA", "local", "sandbox", "demo", "preview", "UAT",
            "CI", "DR"]
_ENVS_ZH = [("生产", "production"), ("测试", "test"), ("开发", "dev"), ("本地", "local"),
            ("沙箱", "sandbox"), ("演示", "demo"), ("预览", "preview"), ("验收", "uat"),
            ("灾备", "dr"), ("集成", "ci"), ("性能", "perf")]
BY_WORDS: list[tuple[tuple[str, str], str, list[tuple[str, str]]]] = [
    (("The staging database listens on port 6543.", "staging database"),
     "- staging DB → port **6543**",
     [(f"The {env} database listens on port {5432 + i}.", f"{env.lower()} database")
      for i, env in enumerate(_ENVS_EN)]),
    (("The staging database listens on port 6543.", "staging database"),
     "**6543** is the port the staging DB listens on.",
     [(f"The {env} database listens on port {5432 + i}.", f"{env.lower()} database")
      for i, env in enumerate(_ENVS_EN)]),
    (("预发布数据库监听6543端口。", "staging database"), "- **预发布** 数据库：6543",
     [(f"{zh}数据库监听{5432 + i}端口。", f"{en} database")
      for i, (zh, en) in enumerate(_ENVS_ZH)]),
]
START = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _by_words_vault(root: Path, embedder: UniversalSentenceEncoder
                    ) -> tuple[Path, App, list[str]]:
    vault = root / "vault"
    (vault / "Memory").mkdir(parents=True)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(root / "data")}),
                     embedder=embedder)
    return vault, app, [f"words{n}" for n in range(len(BY_WORDS))]


def _write(vault: Path, rel: str, text: str, subject: str | None, owner: str, day: int) -> None:
    when = START + timedelta(days=day)
    (vault / rel).write_bytes(render_memory(NewMemory(
        name=derived_name(text), description=derived_description(text), type="user",
        id=str(ULID()), created=when, updated=when, body=text + "\n", subject=subject,
        owner=owner)))


def test_a_dream_judges_a_memory_with_those_that_share_its_words_as_remember_does(
        real_embedder: UniversalSentenceEncoder, tmp_path: Path) -> None:
    """The older memory that says the same is farther by meaning than eight others of the
    owner: ``remember`` finds it by its words and merges; so does the dream (it judged the
    nearest eight by meaning only, and kept both)."""
    import numpy as np

    vault, app, owners = _by_words_vault(tmp_path / "dream", real_embedder)
    try:
        for owner, ((_new, _subject), old, others) in zip(owners, BY_WORDS, strict=True):
            _write(vault, f"Memory/{owner}-old.md", old, None, owner, 0)
            for i, (text, subject) in enumerate(others):
                _write(vault, f"Memory/{owner}-f{i:02d}.md", text, subject, owner, 1 + i)
        app.sync()
        app.dreamer().dream(force=True)
        for owner, ((new, subject), _old, _others) in zip(owners, BY_WORDS, strict=True):
            _write(vault, f"Memory/{owner}-new.md", new, subject, owner, 40)
        app.sync()
        for owner, (_new, _old, others) in zip(owners, BY_WORDS, strict=True):
            paths = [f"Memory/{owner}-{s}.md" for s in
                     ("new", "old", *(f"f{i:02d}" for i in range(len(others))))]
            vectors = app.indexing.first_chunk_vectors(paths)
            unit = {p: v / np.linalg.norm(v) for p, v in vectors.items()}
            cosines = [float(unit[paths[0]] @ unit[p]) for p in paths[1:]]
            nearer = sum(c > cosines[0] for c in cosines[1:])
            assert nearer >= 8, f"{owner}: the older memory is among the 8 nearest ({nearer})"
        app.dreamer().dream(force=True)
        dreamt = []
        for owner in owners:
            note = parse_note(f"Memory/{owner}-new.md",
                              (vault / "Memory" / f"{owner}-new.md").read_bytes())
            merged = note.properties.get("merged_into")
            dreamt.append(link_stem(str(merged)) if merged else None)
    finally:
        app.close()
    vault, app, owners = _by_words_vault(tmp_path / "remember", real_embedder)
    try:
        app.sync()
        remembered = []
        for owner, ((new, subject), old, others) in zip(owners, BY_WORDS, strict=True):
            def service(day: int, owner: str = owner):
                return app.memories(parse_owner(owner),
                                    clock=lambda: START + timedelta(days=day))
            first = service(0).remember(old, type="user")
            for i, (text, other_subject) in enumerate(others):
                service(1 + i).remember(text, type="user", subject=other_subject)
            result = service(40).remember(new, type="user", subject=subject)
            remembered.append(result.action == "updated" and result.path == first.path)
    finally:
        app.close()
    assert remembered == [True] * len(BY_WORDS)
    assert dreamt == [f"{owner}-old" for owner in owners], dreamt
