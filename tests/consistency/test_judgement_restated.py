"""Duplicates and restatements the judgement missed, by family, through the product's real
model and a real store.

The duplicates of the development pair sets (every ``bench/write_pairs`` file but the
held-out ``blind16`` and ``blind17``) that were listed or kept apart, read by cause: one rule
of what is not done told in English and in Chinese at a low cosine ("Never push to main" /
"永远不要直接推送到 main 分支"), a Chinese paraphrase naming the same things ("不要在代码里写死
配置" / "配置别硬编码在代码中"), words the lexicon did not fold ("dark mode" / "dark theme",
"restate" / "repeat", "asleep" / "sleeps", 做饭 / 下厨, 语气 / 口吻, 缩写, 瞎猜), one statement
of a longer memory said again ("Lives in Toronto, works as a nurse at SickKids" / "I'm a
nurse"), a participle said of a thing read as a change told ("400 *changed* lines"), and a
condition ("unless", "except when", 除非) read as a denial. Each family is a table with the
look-alikes that must stay apart: another thing denied, an exception, another branch,
another dish, a person the statement is narrowed to, a liking not said again, a condition
traded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_pairs import judged_as, remembered_pair

from consistency.claims import change_cue_at
from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one denial told in two languages, the denied things the same
    ("Never push to main.", "永远不要直接推送到 main 分支。", "duplicate"),
    ("When suggesting edits, show a diff instead of the whole file.",
     "建议修改代码时只贴 diff，不要贴整个文件。", "duplicate"),
    ("Don't use emojis in commit messages.", "提交信息里不要用 emoji。", "duplicate"),
    # an exception on one side, another thing or another branch denied: apart
    ("Never push to main.", "永远不要直接推送到 main 分支，除非是 hotfix", "kept apart"),
    ("Don't eat pork.", "不吃牛肉。", "kept apart"),
    ("Never push to main.", "永远不要直接推送到 dev 分支。", "kept apart"),
    ("Don't use emojis in commit messages.", "提交信息里不要用中文。", "kept apart"),
    ("Don't put secrets in the README.", "不要把密钥写进日志。", "kept apart"),
])
def test_one_denial_told_in_two_languages(real_embedder, old: str, new: str,
                                          verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the same things named in other Chinese words
    ("不要在代码里写死配置。", "配置别硬编码在代码中。", "duplicate"),
    ("不要在代码里写死端口号。", "端口号别硬编码在代码里。", "duplicate"),
    ("给我的邮件草稿语气要正式一些。", "帮我写邮件时用偏正式的口吻。", "duplicate"),
    ("写邮件语气要正式。", "写邮件口吻要正式。", "duplicate"),
    # one word shared, another thing on each side; another place; another register
    ("早上喝咖啡", "晚上喝茶", "kept apart"),
    ("红烧肉用冰糖。", "糖醋排骨用白砂糖。", "kept apart"),
    ("不要在代码里写死配置。", "配置别写在日志里。", "kept apart"),
    ("给我的邮件草稿语气要正式一些。", "给我的聊天回复语气要随意一些。", "kept apart"),
    ("写邮件语气要正式。", "写邮件口吻要随意。", "kept apart"),
])
def test_a_chinese_paraphrase_of_the_same_things(real_embedder, old: str, new: str,
                                                 verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a setting's mode is its theme; restating is repeating; 下厨 is 做饭
    ("Prefers dark mode everywhere.", "Likes every app in a dark theme.", "duplicate"),
    ("I prefer dark mode in every app.", "Dark theme in all apps, please.", "duplicate"),
    ("用深色模式。", "用深色主题。", "duplicate"),
    ("Don't add comments that just restate the code.",
     "Skip comments that merely repeat what the code does.", "duplicate"),
    ("周末喜欢自己做饭，尤其是川菜。", "周末喜欢下厨，尤其爱做川菜。", "duplicate"),
    # asleep is sleeping: one slot, not two
    ("Usually goes to bed around 11pm.", "Typically asleep by about eleven at night.",
     "duplicate"),
    ("Usually asleep by 11pm.", "Usually sleeps by 11pm.", "duplicate"),
    # 缩写 is an abbreviation, 变量 a variable, 瞎猜 guessing
    ("Don't use abbreviations in commit messages.", "提交信息里不要用缩写。", "duplicate"),
    ("Don't use abbreviations in variable names.", "变量命名不要用缩写。", "duplicate"),
    ("When you're unsure, say so instead of guessing.", "不确定的时候直接说不确定，别瞎猜。",
     "duplicate"),
    ("Don't use abbreviations in variable names.", "变量命名不要用拼音。", "kept apart"),
    ("Don't use abbreviations in variable names.", "提交信息里不要用缩写。", "kept apart"),
    ("Don't guess the user's intent; ask.", "别瞎猜文件路径。", "kept apart"),
    # the value of the setting or the hour changed; another chore; waking is not sleeping
    ("Usually asleep by 11pm.", "Usually asleep by midnight.", "contradiction"),
    ("Usually asleep by 11pm.", "Usually awake by 6am.", "kept apart"),
    ("Prefers dark mode.", "Prefers light theme.", "contradiction"),
    ("I prefer dark mode in every app.", "I prefer light mode in every app.", "contradiction"),
    ("周末喜欢下厨。", "周末喜欢洗碗。", "kept apart"),
])
def test_words_of_one_meaning_fold(real_embedder, old: str, new: str, verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one statement of the longer memory said again, nothing more
    ("Lives in Toronto, works as a nurse at SickKids.", "I'm a nurse.", "duplicate"),
    ("Follows a plant-based diet, no animal products at all.", "Vegan.", "duplicate"),
    ("Lives in Lisbon, works as a teacher at a primary school.", "Works as a teacher.",
     "duplicate"),
    # a person the statement is narrowed to, a liking not said again, someone else, another
    # job: apart
    ("Prefers short replies.", "回复老板要简短，回复客户要详细", "kept apart"),
    ("Likes working with music on.", "Needs total silence to work; music distracts him.",
     "kept apart"),
    ("Lives in Toronto, works as a nurse at SickKids.", "My wife is a nurse.", "kept apart"),
    ("Lives in Toronto, works as a nurse at SickKids.", "I'm a teacher.", "kept apart"),
])
def test_one_statement_said_again(real_embedder, old: str, new: str, verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one statement of the longer memory told again in the past tense ("was", "worked",
    # "lived", 当过) or set in the past (以前, "used to"): perhaps no longer so, not said again
    ("Lives in Toronto, works as a nurse at SickKids.", "I was a nurse.", "kept apart"),
    ("Lives in Toronto, works as a nurse at SickKids.", "I worked as a nurse.", "kept apart"),
    ("Lives in Toronto, works as a nurse at SickKids.", "Lived in Toronto.", "kept apart"),
    ("Lives in Lisbon, works as a teacher at a primary school.", "Was a teacher.",
     "kept apart"),
    ("Follows a plant-based diet, no animal products at all.", "Was vegan.", "kept apart"),
    ("住在多伦多，在 SickKids 当护士。", "我当过护士。", "kept apart"),
    ("住在多伦多，在 SickKids 当护士。", "我曾经是护士。", "kept apart"),
    # the same tense on both sides: said again
    ("Lived in Toronto, worked as a nurse at SickKids.", "I was a nurse.", "duplicate"),
    ("Lives in Toronto, works as a nurse at SickKids.", "I'm a nurse.", "duplicate"),
    ("住在多伦多，在 SickKids 当护士。", "我是护士。", "duplicate"),
])
def test_one_statement_told_in_the_past_is_not_said_again(real_embedder, old: str, new: str,
                                                          verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a rule and the condition it holds under ("unless", "except when", 除非): no denial
    ("Reply in Chinese unless I write in English.", "除非我用英文提问，否则用中文回答。",
     "duplicate"),
    ("Deploy on Fridays unless there is an incident.", "除非有事故，否则周五发布。", "duplicate"),
    # the languages of the rule and of its condition traded, another condition (never
    # merged: listed or superseded), another day
    ("Reply in Chinese unless I write in English.", "除非我用中文提问，否则用英文回答。",
     "listed or changed"),
    ("Reply in English unless I write in Chinese.",
     "Answer in Chinese, except when my message is in English.", "listed or changed"),
    ("Answer in English, except when my message is in Chinese.",
     "Answer in English, except when my message is in Japanese.", "listed or changed"),
    ("Deploy on Fridays unless there is an incident.", "除非有事故，否则周一发布。", "kept apart"),
    # "except" before a thing still denies it
    ("Eats everything except pork.", "Eats everything except beef.", "kept apart"),
    ("Eats everything except pork.", "除了猪肉我什么都吃", "duplicate"),
])
def test_a_rule_under_a_condition(real_embedder, old: str, new: str, verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one exception told as a condition ("unless …", "except when …", 除非) on one side and
    # as a thing excepted ("except in …", "except for …", 除了) on the other: no sign turned
    ("Always use tabs except when editing YAML.", "Use tabs, except in YAML files.",
     "duplicate"),
    ("Use tabs unless the file is YAML.", "Use tabs, except in YAML files.", "duplicate"),
    ("Reply in Chinese, except when writing code comments.",
     "Reply in Chinese, except in code comments.", "duplicate"),
    ("Write commit messages in English unless the repo is Chinese-only.",
     "Write commit messages in English, except for Chinese-only repos.", "duplicate"),
    ("Always use tabs except when editing YAML.", "除了 YAML 文件，都用 tab 缩进。", "kept apart"),
    ("除非是 YAML 文件，否则都用 tab 缩进。", "除了 YAML 文件，都用 tab 缩进。", "duplicate"),
    ("除非是 YAML 文件，否则都用 tab 缩进。", "Use tabs, except in YAML files.", "kept apart"),
    # the rule itself denied, another thing excepted, the value of the rule turned: apart or
    # a change
    ("Use tabs unless editing YAML.", "Never use tabs.", "contradiction"),
    ("Reply in Chinese unless I write in English.", "Never reply in English.", "contradiction"),
    ("Use tabs, except in YAML files.", "Use tabs, except in Makefiles.", "kept apart"),
    ("Use tabs unless editing YAML.", "Use tabs, except in Makefiles.", "kept apart"),
    ("Use tabs unless editing YAML.", "Use spaces, except in YAML files.", "listed or changed"),
    ("Eats everything except pork.", "Eats everything except beef.", "kept apart"),
])
def test_one_exception_told_as_a_condition_or_a_thing_excepted(real_embedder, old: str,
                                                               new: str, verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("text", "told"), [
    # a participle said of the thing after it, after a number or a determiner: a kind of thing
    ("PRs should stay below 400 changed lines.", False),
    ("There are 3 raised beds in the vegetable garden.", False),
    ("The changed files must be reviewed.", False),
    ("Two extended family members live here.", False),
    # the same words telling a change
    ("Rent was raised to 5200.", True),
    ("We moved the CI to GitHub Actions.", True),
    ("Deadline extended.", True),
    ("Keep pull requests under 250 changed lines from now on.", True),
])
def test_a_participle_said_of_a_thing_tells_no_change(text: str, told: bool) -> None:
    assert (change_cue_at(text) is not None) is told


@pytest.mark.parametrize(("old", "new", "verdict"), [
    ("Keep PRs under 400 lines of diff.", "PRs should stay below 400 changed lines.",
     "duplicate"),
    ("Vegetable garden has three raised beds.",
     "There are 3 raised beds in the vegetable garden.", "duplicate"),
    ("Keep PRs under 400 changed lines.", "Keep PRs under 250 changed lines from now on.",
     "contradiction"),
    ("Rent is 4500 a month.", "Rent was raised to 5200 a month.", "contradiction"),
    ("Vegetable garden has three raised beds.", "Vegetable garden has five raised beds.",
     "contradiction"),
])
def test_a_thing_described_by_a_participle_is_told_again(real_embedder, old: str, new: str,
                                                         verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("text", "told"), [
    # a year, a month and year, or an age opening the sentence or a clause: the number is
    # when, the -ed word the verb
    ("In 2015 moved house.", True),
    ("In 2024 moved abroad.", True),
    ("Since 2020 switched careers.", True),
    ("In May 2024 moved overseas.", True),
    ("At 30 changed careers to nursing.", True),
    ("Lives in York; in 2021 moved offices.", True),
    # a pronoun and its quantifier: the subject
    ("We all moved house last year.", True),
    ("They each switched teams.", True),
    # a count or a determiner mid-sentence, even after "at" or a year: a kind of thing
    ("Cap PRs at 400 changed lines.", False),
    ("At most 400 changed lines per PR.", False),
    ("Since 2020, PRs stay below 400 changed lines.", False),
    ("In 2024 the changed files were reviewed weekly.", False),
    ("Review each changed line.", False),
    ("They grow tomatoes in 3 raised beds.", False),
])
def test_a_time_or_a_subject_before_the_verb_is_no_count(text: str, told: bool) -> None:
    assert (change_cue_at(text) is not None) is told


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Lives in Leeds.", "We all moved house; lives in York.", None, "contradiction"),
    ("Lives in Leeds.", "They all moved house; live in York.", None, "contradiction"),
    ("Lives in Leeds.", "Since 2020 moved abroad.", "home", "contradiction"),
    ("Lives in Leeds.", "We all moved abroad.", "home", "contradiction"),
    ("Drives a Honda Civic.", "In 2024 switched cars; drives a Honda Accord.", None,
     "contradiction"),
    ("Drives a Honda Civic.", "In 2024 switched cars; drives a Honda Accord.", "car",
     "contradiction"),
    # the participle of a thing after a time still tells none
    ("Keep PRs under 400 lines of diff.", "Cap PRs at 400 changed lines.", None, "duplicate"),
])
def test_a_move_told_after_a_year_or_a_subject_supersedes(real_embedder, old: str, new: str,
                                                          subject: str | None,
                                                          verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "merged"), [
    ("Never push to main.", "永远不要直接推送到 main 分支。", True),
    ("不要在代码里写死配置。", "配置别硬编码在代码中。", True),
    ("Lives in Toronto, works as a nurse at SickKids.", "I'm a nurse.", True),
    ("Never push to main.", "永远不要直接推送到 main 分支，除非是 hotfix", False),
    ("早上喝咖啡", "晚上喝茶", False),
    ("Prefers short replies.", "回复老板要简短，回复客户要详细", False),
])
def test_remember_merges_the_restatement_in_a_real_store(
        real_embedder: UniversalSentenceEncoder, tmp_path: Path, old: str, new: str,
        merged: bool) -> None:
    """Through ``remember``, the real model and a real store: a restatement of the families
    above is merged into the memory it restates (one memory file); its look-alike is a
    second memory."""
    memory, first, second = remembered_pair(real_embedder, tmp_path, old, new)
    assert first.action == "created"
    files = [f for f in memory.glob("*.md") if f.name != "MEMORY.md"]
    if merged:
        assert second.action in {"duplicate", "updated"}, second
        assert len(files) == 1
    else:
        assert second.action == "created" and second.superseded is None, second
        assert len(files) == 2
