"""A note's properties are words of its note: kepano's vault, copied byte for byte, where a
reference note is often nothing but its properties (``loc: [[Kyoto]]``, ``type: [[Shrines]]``),
and a template holds the words of what it is a form of. Beside it, notes in Chinese written
the same way. Real LanceDB store and the real embedding model (these tests are about meaning).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.app import App, load

pytestmark = pytest.mark.slow

#: Notes of properties only, in Chinese, as a vault in kepano's style holds them.
ZH = {
    "参考/伏见稻荷大社.md": "---\n类别:\n  - \"[[地点]]\"\n类型:\n  - \"[[神社]]\"\n地区:\n"
                           "  - \"[[京都]]\"\n  - \"[[日本]]\"\ncreated: 2023-09-14\n---\n",
    "参考/锦市场.md": "---\n类别:\n  - \"[[地点]]\"\n类型:\n  - \"[[市场]]\"\n地区:\n"
                     "  - \"[[京都]]\"\n---\n",
    "参考/外滩.md": "---\n类别:\n  - \"[[地点]]\"\n地区:\n  - \"[[上海]]\"\n---\n",
    "参考/京都.md": "---\n类别:\n  - \"[[地点]]\"\n类型:\n  - \"[[城市]]\"\n---\n",
    "笔记/晚饭.md": "今天在家做了番茄炒蛋，味道不错。\n",
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Iterator[App]:
    vault = tmp_path_factory.mktemp("properties") / "vault"
    shutil.copytree(corpora_dir / "kepano-obsidian", vault)
    for rel, text in ZH.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    built = App.create(load(None, None, {"vault.path": str(vault), "time.zone": "UTC"}))
    built.sync()
    yield built
    built.close()


def top(app: App, query: str, limit: int = 5) -> list[str]:
    return [hit.path for hit in app.search(query, limit=limit, count_recall=False)]


@pytest.mark.parametrize("query", ["which places did I visit in Kyoto",
                                   "places I went to in Kyoto"])
def test_the_notes_located_in_a_city_answer_a_question_about_it(app: App, query: str) -> None:
    assert {"References/Fushimi Inari.md", "Notes/2023 Japan Trip.md"} <= set(top(app, query, 3))


def test_a_chinese_question_finds_the_places_of_a_city_by_their_properties(app: App) -> None:
    found = top(app, "我在京都去过哪些地方", 4)
    assert {"参考/伏见稻荷大社.md", "参考/锦市场.md"} <= set(found)
    assert "参考/外滩.md" not in found[:2]


def test_a_template_comes_after_the_notes_unless_a_template_is_asked_for(app: App) -> None:
    books = top(app, "which books have I read", 5)
    assert "References/Out of Control.md" in books
    assert books.index("References/Out of Control.md") < books.index(
        "Templates/Book Template.md") if "Templates/Book Template.md" in books else True
    assert top(app, "my book template", 1) == ["Templates/Book Template.md"]
    assert top(app, "读书笔记模板", 3)[0].startswith("Templates/")
