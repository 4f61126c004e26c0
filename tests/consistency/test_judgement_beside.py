"""Supersessions of a fact that still holds and merges of two facts, by family, through the
product's real model and a real store.

The wrong supersessions of the development pair sets (every ``bench/write_pairs`` file but
the held-out ``blind16`` and ``blind17``), read by family: the thing a changed value or sign
is said of replaced beside it ("服务器有 32 *核*" / "… 32 GB *内存*"), what happened in two
years of the past ("Visited Japan in 2019" / "… in 2023"), a reading of the span that ends on
the day written ("In the past month I ran 80 km"), a number past reading, a change told of
another thing ("We moved *the database* to AWS" / "… *the CI* to GitHub Actions") and a rule
for another scope ("… for the *OSS repo*" / "… for the *internal repo*"); and, of the
merges of two facts, one number counted of two kinds of thing ("24 *本*书" / "24 *部*电影").
Each family is a table with the look-alikes that must still supersede or merge, in English
and Chinese.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_pairs import judged_as, remembered_pair

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the thing counted or measured beside the value replaced: two attributes of one thing
    ("服务器有 32 核。", "服务器有 32 GB 内存。", "possible_contradiction"),
    ("The server has 32 cores.", "The server has 32 GB of memory.", "kept apart"),
    ("服务器有 32 核。", "服务器有 64 核。", "contradiction"),
    ("The server has 32 cores.", "The server has 64 cores.", "contradiction"),
    # an antonym beside a changed value names which measure ("日活" / "月活")
    ("产品日活 10万", "产品月活 50万", "possible_contradiction"),
    ("Daily active users: 100k.", "Monthly active users: 500k.", "kept apart"),
    ("产品日活 10万", "产品日活 15万", "contradiction"),
    ("Daily active users: 100k.", "Daily active users: 150k.", "contradiction"),
    # two people of one family, each with a year
    ("1899 年曾祖父出生", "1901 年曾祖母出生", "possible_contradiction"),
    ("Great-grandfather was born in 1899.", "Great-grandmother was born in 1901.", "kept apart"),
    # a rule's sign changed beside another thing: two rules
    ("Remove trailing whitespace.", "Keep trailing commas.", "possible_contradiction"),
    ("删除行尾空格。", "保留行尾逗号。", "possible_contradiction"),
    ("Remove trailing whitespace.", "Keep trailing whitespace.", "contradiction"),
    ("删除行尾空格。", "保留行尾空格。", "contradiction"),
    # the words of the change itself are no other thing: a changed word, the sign reworded,
    # a particle (不用*再*), the leftover characters of a region's name (华*东* 1 / 华*北* 2)
    ("Prefers window seats on flights.", "Prefers aisle seats on flights.", "contradiction"),
    ("Include a TL;DR at the top of long answers.",
     "Don't put a TL;DR at the top of long answers.", "contradiction"),
    ("发版前要在钉钉群里通知测试同学。", "发版前不用再在钉钉群里通知测试同学了。", "contradiction"),
    ("服务部署在阿里云华东 1（杭州）。", "服务部署在阿里云华北 2（北京）。", "contradiction"),
])
def test_another_thing_beside_a_change_is_no_sure_change(real_embedder, old: str, new: str,
                                                         verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # what happened, told in the past tense, in a year of its own: both may hold
    ("Visited Japan in 2019.", "Visited Japan in 2023.", "possible_contradiction"),
    ("2019年去过日本。", "2023年去了日本。", "kept apart"),
    ("I moved to Berlin in 2019.", "I moved to Munich in 2023.", "possible_contradiction"),
    # what happens once in a life, a plan moved, a correction: one fact changed
    ("Born in 1990.", "Born in 1991.", "contradiction"),
    ("我1990年出生。", "我1991年出生。", "contradiction"),
    ("The launch is planned for 2025.", "The launch moved to 2026.", "contradiction"),
    ("Graduated in 2019.", "Correction: graduated in 2020.", "contradiction"),
])
def test_two_years_of_the_past_are_two_events(real_embedder, old: str, new: str,
                                              verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a reading of the span that ends on the day written (Jan 1 / Jan 20): two readings
    ("In the past month I ran 80 km.", "In the past month I ran 95 km.", "series"),
    ("过去一个月跑了 80 公里", "过去一个月跑了 95 公里", "series"),
    # a rate is a standing fact: its change supersedes
    ("I run 80 km a month.", "I run 95 km a month.", "contradiction"),
    ("每月跑 80 公里", "每月跑 95 公里", "contradiction"),
    # a number past a float's range is not read exactly: no sure change of it
    ("Budget is 1" + "0" * 400, "Budget is 5.", "possible_contradiction"),
    ("Budget is 5000.", "Budget is 6000.", "contradiction"),
])
def test_readings_and_numbers_past_reading(real_embedder, old: str, new: str,
                                           verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # each tells a change of another thing: two changes, both hold
    ("We moved the database to AWS.", "We moved the CI to GitHub Actions.",
     "possible_contradiction"),
    ("把数据库迁到了 AWS。", "把 CI 迁到了 GitHub Actions。", "kept apart"),
    ("Switched unit tests from Jest to Vitest.", "Switched the linter from ESLint to Biome.",
     "kept apart"),
    ("We moved the database to AWS.", "We moved the database to GCP.", "contradiction"),
    ("把数据库迁到了 AWS。", "把数据库迁到了 GCP。", "contradiction"),
    ("Switched unit tests from Jest to Vitest.", "Switched unit tests from Jest to Mocha.",
     "contradiction"),
    # each says what it holds for, and that differs: two rules
    ("Commit messages in English for the OSS repo.",
     "Commit messages in Chinese for the internal repo.", "possible_contradiction"),
    ("开源仓库的提交信息用英文。", "内部仓库的提交信息用中文。", "kept apart"),
    ("Always write a changelog entry for release 4",
     "Always write a changelog entry for release 9", "possible_contradiction"),
    ("Use tabs for Go code.", "Use spaces for Python code.", "kept apart"),
    # one scope, or a scope that is the value (a month, a time, a count): the change
    ("Use Node 18 for the frontend.", "Use Node 20 for the frontend.", "contradiction"),
    ("Use 2 spaces for indentation.", "Use 4 spaces for indentation.", "contradiction"),
    ("Planning the Japan trip for October.", "Planning the Japan trip for April.",
     "contradiction"),
    ("Set the reminder for 9am.", "Set the reminder for 10am.", "contradiction"),
    ("Book the room for 2 weeks.", "Book the room for 3 weeks.", "contradiction"),
    ("Max batch size that fits on the A100 for the ranking model is 64.",
     "Max batch size that fits on the A100 for the ranking model is 32.", "contradiction"),
])
def test_another_thing_changed_or_another_scope(real_embedder, old: str, new: str,
                                                verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one number, each with a Chinese measure word of another kind: two things counted
    ("2023 年读了 24 本书", "2023 年看了 24 部电影", "possible_duplicate"),
    ("2023 年读了 24 本书", "2023 年写了 24 篇博客", "possible_duplicate"),
    ("In 2023 I read 24 books.", "In 2023 I watched 24 films.", "kept apart"),
    # the same measure word, the same thing: one fact
    ("2023 年读了 24 本书", "2023年读了24本书。", "duplicate"),
    ("2023 年一共读了 24 本书。", "2023 年读完了 24 本书。", "duplicate"),
    ("Read 24 books in 2023.", "2023 年读了 24 本书。", "duplicate"),
])
def test_one_number_of_two_things_is_never_merged(real_embedder, old: str, new: str,
                                                  verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one version said more exactly: the same line, perhaps; listed, never superseded
    ("Uses Python 3.", "Uses Python 3.12.", "possible_duplicate"),
    ("项目用 Python 3。", "项目用 Python 3.12。", "possible_duplicate"),
    ("Uses Node 18.", "Uses Node 18.19.", "possible_duplicate"),
    # another minor version, or a change told: the change
    ("Uses Python 3.1.", "Uses Python 3.12.", "contradiction"),
    ("Uses Python 3.11.", "Uses Python 3.12.", "contradiction"),
    ("项目用 Python 3.10。", "项目用 Python 3.12。", "contradiction"),
    ("Uses Node 18.", "Upgraded to Node 18.19.", "contradiction"),
])
def test_a_version_said_more_exactly_is_no_sure_change(real_embedder, old: str, new: str,
                                                       verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "kept"), [
    ("服务器有 32 核。", "服务器有 32 GB 内存。", True),
    ("Remove trailing whitespace.", "Keep trailing commas.", True),
    ("Visited Japan in 2019.", "Visited Japan in 2023.", True),
    ("We moved the database to AWS.", "We moved the CI to GitHub Actions.", True),
    ("In the past month I ran 80 km.", "In the past month I ran 95 km.", True),
    ("The server has 32 cores.", "The server has 64 cores.", False),
    ("我1990年出生。", "我1991年出生。", False),
])
def test_remember_keeps_both_or_supersedes_in_a_real_store(
        real_embedder: UniversalSentenceEncoder, tmp_path: Path, old: str, new: str,
        kept: bool) -> None:
    """Through ``remember``, the real model and a real store: a pair of the families above
    keeps both memories live (linked or apart, none superseded); its look-alike
    supersedes."""
    memory, first, second = remembered_pair(real_embedder, tmp_path, old, new)
    assert first.action == "created"
    if kept:
        assert second.action == "created" and second.superseded is None, second
    else:
        assert second.action == "superseded" and second.superseded == first.path, second
    # nothing is ever deleted (MEMORY.md is the index of the memories)
    assert len([f for f in memory.glob("*.md") if f.name != "MEMORY.md"]) == 2
