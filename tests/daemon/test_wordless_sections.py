"""Sections without words of their own (a template's ``## Notes`` and ``-``, a daily note's
``![[Daily.base]]``, a category note that is one embedded base) on real files: kepano's vault
and Obsidian's help, copied byte for byte, beside notes and memories that answer in a line.
Real LanceDB store and the real embedding model (these tests are about meaning)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccb.memory_file import NewMemory, render_memory
from daemon.app import App, load
from magma.fusion import mmr
from magma.text import has_own_words

pytestmark = pytest.mark.slow

KEPANO = ["Readme.md", "Templates/Daily Note Template.md", "Daily/2023-09-30.md",
          "Daily/2023-09-12.md", "Templates/Recipe Template.md", "Categories/Recipes.md",
          "Categories/Books.md", "Templates/Job Interview Template.md",
          "References/Steph Ango.md", "References/Kyoto.md",
          "Notes/Evergreen notes turn ideas into objects that you can manipulate.md",
          "References/Brown butter nectarine tart.md"]
HELP = ["Files and folders/Manage notes.md", "User interface/Status bar.md"]
WORDLESS = {"Templates/Daily Note Template.md", "Daily/2023-09-30.md", "Daily/2023-09-12.md",
            "Templates/Recipe Template.md", "Categories/Recipes.md", "Categories/Books.md",
            "Templates/Job Interview Template.md", "References/Steph Ango.md",
            "References/Kyoto.md"}
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
#: A note made from kepano's job interview template, one section filled in, one left empty.
INTERVIEW = ("---\ncategories:\n  - \"[[Meetings]]\"\n---\n## Questions and topics\n\n"
             "- Asked how they would shard the billing database once it outgrows one "
             "Postgres primary\n- 账单数据库将来怎样分片\n\n## Notes\n\n- \n")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Iterator[App]:
    root = tmp_path_factory.mktemp("wordless")
    vault = root / "vault"
    for rel in KEPANO:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpora_dir / "kepano-obsidian" / rel, vault / rel)
    for rel in HELP:
        (vault / "Help" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpora_dir / "obsidian-help" / "en" / rel, vault / "Help" / rel)
    (vault / "Meetings").mkdir()
    (vault / "Meetings" / "Interview with Dana.md").write_text(INTERVIEW, encoding="utf-8")
    for day, line in (("2024-01-02", "Fired the bisque kiln to cone 04 overnight."),
                      ("2024-01-03", "Glazed the mugs from the kiln in celadon.")):
        (vault / "Daily" / f"{day}.md").write_text(
            f"## Notes\n\n![[Daily.base]]\n\n## Log\n\n{line}\n", encoding="utf-8")
    (vault / "Memory").mkdir()
    (vault / "Memory" / "use-pnpm.md").write_bytes(render_memory(NewMemory(
        name="use pnpm", description="Use pnpm, not npm", type="feedback",
        id="01JD0000000000000000000PNP", created=NOW, updated=NOW, valid_from=NOW.date(),
        source="user", body="Use pnpm, not npm.\n")))
    built = App.create(load(None, None, {"vault.path": str(vault), "time.zone": "UTC",
                                         "storage.data_dir": str(root / "data"),
                                         "retrieval.progressive_search.enabled": False}))
    built.sync()
    yield built
    built.close()


def _paths(app: App, query: str, limit: int = 10) -> list[str]:
    return [hit.path for hit in app.search(query, limit=limit, count_recall=False)]


@pytest.mark.parametrize("query", [
    "how do I organize my notes into categories", "如何整理我的笔记", "where do I keep my notes",
    "我的笔记放在哪里"])
def test_a_section_without_words_never_leads(app: App, query: str) -> None:
    paths = _paths(app, query)
    assert paths[0] not in WORDLESS, paths
    assert len(WORDLESS & set(paths[:5])) <= 1, paths


def test_the_same_words_under_two_titles_come_back_once(app: App) -> None:
    # the template and the day made from it: "## Notes ![[Daily.base]]" both, cosine 0.64
    paths = _paths(app, "daily notes base", limit=20)
    daily = {"Templates/Daily Note Template.md", "Daily/2023-09-30.md", "Daily/2023-09-12.md"}
    assert len(daily & set(paths)) == 1, paths


@pytest.mark.parametrize(("query", "answer"), [
    ("should I use npm or pnpm", "Memory/use-pnpm.md"),
    ("用 npm 还是 pnpm", "Memory/use-pnpm.md"),
    ("how do I rename a note", "Help/Files and folders/Manage notes.md"),
    ("如何重命名笔记", "Help/Files and folders/Manage notes.md"),
    ("what does the status bar show", "Help/User interface/Status bar.md"),
    ("brown butter nectarine tart", "References/Brown butter nectarine tart.md"),
])
def test_a_short_or_embedding_note_that_answers_is_still_first(app: App, query: str,
                                                               answer: str) -> None:
    assert _paths(app, query)[0] == answer


@pytest.mark.parametrize("query", ["how would they shard the billing database",
                                   "账单数据库怎么分片"])
def test_a_note_with_an_empty_section_is_found_by_the_one_it_filled(app: App,
                                                                    query: str) -> None:
    hits = app.search(query, limit=5, count_recall=False)
    assert hits[0].path == "Meetings/Interview with Dana.md"
    assert hits[0].heading == "Questions and topics"


def test_a_note_that_is_one_embed_is_still_found_by_its_name(app: App) -> None:
    assert "Categories/Recipes.md" in _paths(app, "Recipes", limit=3)


@pytest.mark.parametrize(("text", "own"), [
    ("## Notes\n\n![[Daily.base]]", False), ("## Notes\n\n- ", False), ("## 笔记\n- ", False),
    ("- [ ] {{date}}", False), ("![[Recipes.base]]", False), ("---\n> \n| | |", False),
    ("<% tp.date.now() %>", False), ("![cat](cat.png)", False), ("%% hidden %%", False),
    ("## Ingredients\n\n- \n\n## Directions\n\n- ", False), ("# Title only", False),
    ("Use pnpm, not npm", True), ("## Notes\n- [[Kiln]]", True), ("用 pnpm", True),
    ("- 42", True), ("#daily", True), ("## 整理笔记\n把笔记按类别归档", True),
    ("## Notes\n\n![[Daily.base]]\n\nFired the kiln.", True),
])
def test_own_words(text: str, own: bool) -> None:
    assert has_own_words(text) is own


@pytest.mark.parametrize(("words", "groups", "kept"), [
    ({"a": 1, "b": 1}, None, ["a", "c"]),           # the same words: one hit
    ({"a": 1, "b": 2}, None, ["a", "b", "c"]),       # other words: both
    ({"a": 1, "b": 1}, {"a": "me", "b": "you", "c": "me"}, ["a", "b", "c"]),  # two owners
    ({"a": 1}, None, ["a", "b", "c"]),               # no words known: no twin
])
def test_mmr_same_words(words: dict[str, int], groups: dict[str, str] | None,
                        kept: list[str]) -> None:
    vectors = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [0.7, 0.7]}
    picked, _ = mmr(["a", "b", "c"], {"a": 3.0, "b": 2.0, "c": 1.0}, vectors, limit=3,
                    groups=groups, same_words=words)
    assert sorted(p for p, _ in picked) == kept
    assert [p for p, _ in mmr(["a", "b"], {"a": 2.0, "b": 1.0}, vectors, limit=2,
                              duplicate_at=None, same_words={"a": 1, "b": 1})[0]] == ["a", "b"]



def test_two_notes_that_share_one_section_are_both_found(app: App) -> None:
    paths = _paths(app, "what happened with the kiln and the glaze", limit=10)
    assert {"Daily/2024-01-02.md", "Daily/2024-01-03.md"} <= set(paths), paths
