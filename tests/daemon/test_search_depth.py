"""The first hits of a search never depend on how many hits are asked for, and a template is no
note of a day.

Real notes: the Chinese half of the Obsidian help vault (``../shared/corpora/obsidian-help/zh``)
and kepano's vault (``../shared/corpora/kepano-obsidian``, 28 templates with ``{{date}}``),
copied as they are. The FAKE token-hash embedder (``tests/support/fakes.py``) is used: these
tests are about the order of a ranking and about dates, not about meaning.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes import TokenHashEmbedder

from daemon.app import App
from daemon.retrieval import RANK_DEPTH

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
#: Questions a user of the help vault asks, in Chinese (the help's own words and plain ones).
QUESTIONS = ["提交信息", "如何同步笔记", "插件", "怎样发布网站", "快捷键怎么设置", "关系图谱",
             "从印象笔记导入", "属性的类型", "端到端加密", "如何恢复删除的文件"]


@pytest.fixture(scope="module")
def help_zh(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path,
            ) -> Iterator[App]:
    from daemon.app import load

    root = tmp_path_factory.mktemp("help-zh")
    vault = root / "vault"
    shutil.copytree(corpora_dir / "obsidian-help" / "zh", vault, symlinks=True)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(root / "data")}),
                     embedder=TokenHashEmbedder())
    app.sync()
    yield app
    app.close()


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_first_hits_are_the_same_whatever_the_number_asked_for(
        help_zh: App, question: str) -> None:
    """``-n 5`` had ranked another fifth hit than ``-n 10`` (the stages' depth and the
    hybrid floor followed the number asked for)."""

    def paths(limit: int) -> list[str]:
        return [h.path for h in help_zh.search(question, limit=limit, count_recall=False,
                                              now=NOW)]

    ten = paths(RANK_DEPTH)
    for limit in (1, 2, 3, 5, 7):
        assert paths(limit) == ten[:limit], limit
    assert paths(25)[:RANK_DEPTH] == ten


@pytest.fixture
def kepano(tmp_path: Path, corpora_dir: Path,
           make_app: Callable[..., tuple[App, TokenHashEmbedder]]) -> Iterator[tuple[App, Path]]:
    vault = tmp_path / "vault"
    shutil.copytree(corpora_dir / "kepano-obsidian", vault, symlinks=True)
    stamp = NOW.timestamp()
    for path in vault.rglob("*.md"):  # every file just edited, as in a fresh copy or sync
        os.utime(path, (stamp, stamp))
    app, _ = make_app(vault)
    app.sync()
    yield app, vault
    app.close()


def test_a_template_has_no_day_and_no_recency(kepano: tuple[App, Path]) -> None:
    """kepano's ``Templates/`` forms (``created: {{date}}``) had their file's modification day
    and a recency of 1.0: they crowded the hits of every loosely related question."""
    app, _ = kepano
    entries = app.retriever.entries()
    templates = [p for p in entries if p.startswith("Templates/")]
    assert len(templates) > 20
    assert all(entries[p].day is None and entries[p].dated is None for p in templates)
    hits = app.search("meeting notes", limit=10, count_recall=False, now=NOW)
    for hit in hits:
        if hit.path.startswith("Templates/"):
            assert "recency: none, no date known" in hit.why, hit


def test_the_configured_templates_folder_and_a_placeholder_mark_a_template(
        kepano: tuple[App, Path]) -> None:
    """The Templates plugin's folder (``.obsidian/templates.json``) and the Daily notes
    template are templates whatever their folder is named; so is a note whose title or
    properties hold a placeholder."""
    app, vault = kepano
    (vault / "Forms").mkdir()
    (vault / "Forms" / "Weekly review.md").write_text(
        "## Wins\n\n## Next week\n", encoding="utf-8")
    (vault / "Setup").mkdir()
    (vault / "Setup" / "Day.md").write_text("## Log\n\n## Gratitude\n", encoding="utf-8")
    (vault / "Stray form.md").write_text("---\ncreated: \"{{date}}\"\n---\n# Stray\n\nA form.\n",
                                         encoding="utf-8")
    (vault / "Plain note.md").write_text("# Plain\n\nA note.\n", encoding="utf-8")
    config = vault / ".obsidian"
    config.mkdir(exist_ok=True)
    (config / "templates.json").write_text(json.dumps({"folder": "Forms/"}), encoding="utf-8")
    (config / "daily-notes.json").write_text(json.dumps({"template": "Setup/Day"}),
                                             encoding="utf-8")
    app.sync()
    entries = app.retriever.entries()
    for path in ("Forms/Weekly review.md", "Setup/Day.md", "Stray form.md"):
        assert entries[path].day is None, path
    assert entries["Plain note.md"].day is not None


@pytest.fixture(scope="module")
def help_zh_meaning(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path,
                    ) -> Iterator[App]:
    """Part of the Chinese help vault (getting started, teams, contributing, Obsidian itself,
    the help page: 36 notes), indexed with the REAL default model: the next test is about
    what the model's cosines mean."""
    from daemon.app import load

    root = tmp_path_factory.mktemp("help-zh-model")
    vault = root / "vault"
    source = corpora_dir / "obsidian-help" / "zh"
    for folder in ("快速入门", "团队", "助力 Obsidian", "Obsidian"):
        shutil.copytree(source / folder, vault / folder, symlinks=True)
    shutil.copy2(source / "帮助与支持.md", vault / "帮助与支持.md")
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(root / "data")}))
    app.sync()
    yield app
    app.close()


@pytest.mark.slow
def test_a_chinese_term_no_note_matches_by_meaning_is_found_by_its_words(
        help_zh_meaning: App) -> None:
    """"提交信息" (commit message) is written in one note only (``git commit -m "你的提交信息"``
    in 同步笔记); no note is near it by meaning (best cosine 0.19): the vector's noise,
    fused, had ranked that note below four that hold neither word together."""
    hits = help_zh_meaning.search("提交信息", limit=5, count_recall=False, now=NOW)
    assert hits[0].path == "快速入门/同步笔记.md", [h.path for h in hits]


@pytest.mark.parametrize(("query", "asks"), [
    ("my book template", True),
    ("which templates do I have", True),
    ("templating the weekly review", True),
    ("my Templater scripts for meetings", True),
    ("读书笔记模板", True),
    ("会议模版", True),
    ("会議のテンプレート", True),
    ("which books have I read", False),
    ("我读过哪些书", False),
    ("contemplating a move to Kyoto", False),  # a word that holds the letters, not the word
])
def test_a_question_asks_for_a_template_in_any_form_of_the_word(query: str, asks: bool) -> None:
    from daemon.rerank import ASKS_TEMPLATE

    assert (ASKS_TEMPLATE.search(query) is not None) is asks


def test_the_templater_folder_holds_templates_and_a_note_about_templates_is_a_note(
        tmp_path: Path, make_app: Callable[..., tuple[App, TokenHashEmbedder]]) -> None:
    """Templater's folder (``plugins/templater-obsidian/data.json``) holds templates, which come
    after the notes unless the question asks for one; a note titled "Template engines
    compared" is a note. The FAKE embedder: the test is about which notes are templates."""
    vault = tmp_path / "vault"
    (vault / "Meta" / "Forms").mkdir(parents=True)
    (vault / "References").mkdir()
    (vault / "Notes").mkdir()
    templater = vault / ".obsidian" / "plugins" / "templater-obsidian" / "data.json"
    templater.parent.mkdir(parents=True)
    templater.write_text(json.dumps({"templates_folder": "Meta/Forms"}), encoding="utf-8")
    (vault / "Meta" / "Forms" / "Book.md").write_text(
        "---\ncategories:\n  - \"[[Books]]\"\nauthor:\n---\n## Books notes\n", encoding="utf-8")
    (vault / "References" / "Dune.md").write_text(
        "---\ncategories:\n  - \"[[Books]]\"\nauthor: \"[[Frank Herbert]]\"\n---\n",
        encoding="utf-8")
    (vault / "Notes" / "Template engines compared.md").write_text(
        "Jinja and Mako templates for books and pages: Jinja wins.\n", encoding="utf-8")
    app, _ = make_app(vault)
    try:
        app.sync()
        entries = app.retriever.entries()
        assert entries["Meta/Forms/Book.md"].template
        assert not entries["Notes/Template engines compared.md"].template
        assert not entries["References/Dune.md"].template
        why = {h.path: h.why for h in app.search("books", limit=5, count_recall=False)}
        assert "a template, not asked for" in why["Meta/Forms/Book.md"]
        assert "a template, not asked for" not in why["Notes/Template engines compared.md"]
        asked = {h.path: h.why for h in app.search("templating books", limit=5,
                                                   count_recall=False)}
        assert "a template, not asked for" not in asked["Meta/Forms/Book.md"]
    finally:
        app.close()
