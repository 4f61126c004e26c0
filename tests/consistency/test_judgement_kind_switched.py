"""One thing of a kind a user keeps one of at a time (an editor, a phone, a browser, CI)
replaced by another, through the product's real model and a real store.

A family users met: "My editor is Neovim" / "VS Code now", "Our CI runs on Jenkins" /
"Switched CI to GitHub Actions last week", "My phone is an iPhone 12" / "Got a new Pixel 8",
"我的手机是华为" / "换成苹果手机了" were read as two unrelated facts or only listed: two
product names share no word and the cosine of such pairs sits at 0.1–0.4
(``bench/write_pairs/family57.jsonl`` holds the family as pairs). Each table is in English
and Chinese, with and without a subject, with the look-alikes that must stay apart: two of
a kind held at once, someone else's, "also", a thing of another kind, a try with no change,
an older memory that names more than the one replaced, news of another product ("Firefox
now supports vertical tabs").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_pairs import judged_as, remembered_pair

from ccb.parse import parse_note
from consistency.kinds import products
from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("text", "beside", "named"), [
    ("My editor is Neovim.", "", {("editor", "neovim")}),
    ("Switched CI to GitHub Actions last week.", "", {("ci", "github actions")}),
    ("Our code is hosted on GitHub.", "", set()),
    ("换成苹果手机了。", "", {("phone", "iphone")}),
    ("我的手机是苹果。", "", {("phone", "iphone")}),
    ("我喜欢吃苹果。", "", set()),
    ("小米粥当早饭。", "", set()),
    ("家里的平板是小米的。", "我的手机是华为。", set()),
    ("Switched to Zed a few weeks ago.", "", set()),
    ("Switched to Zed a few weeks ago.", "Emacs is my main editor.", {("editor", "zed")}),
    ("我用的手机是iPhone 12。", "", {("phone", "iphone")}),
    ("I use vim and tmux.", "", {("editor", "vim")}),
    ("The browser's edge case.", "", set()),
])
def test_products_a_memory_names(text: str, beside: str, named: set[tuple[str, str]]) -> None:
    assert products(text, beside) == named


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # one of a kind replaced, told as an event, with "now", or as a new one got
    ("My editor is Neovim.", "VS Code now.", None, "contradiction"),
    ("My editor is Neovim.", "VS Code now.", "editor", "contradiction"),
    ("I write everything in Sublime Text.", "Moved over to PyCharm last month.", None,
     "contradiction"),
    ("Our CI runs on Jenkins.", "Switched CI to GitHub Actions last week.", None,
     "contradiction"),
    ("CI: Travis", "We migrated CI to CircleCI.", "ci", "contradiction"),
    ("My phone is an iPhone 12.", "Got a new Pixel 8.", None, "contradiction"),
    ("Firefox is my browser.", "I use Brave as my browser now.", None, "contradiction"),
    ("我的手机是华为。", "换成苹果手机了。", None, "contradiction"),
    ("手机用的是小米", "现在用华为了", "phone", "contradiction"),
    ("我一直用 Emacs 写代码。", "编辑器已经改用 VS Code 了。", None, "contradiction"),
    ("我们的 CI 跑在 Jenkins 上。", "CI 上周迁到了 GitHub Actions。", None, "contradiction"),
    # told by the older only (out of order): listed, never superseded on it
    ("Switched to VS Code last month.", "My editor is Neovim.", None, "kept apart"),
    # the older names more than the one replaced: the rest still holds
    ("I use an iPhone 15 and a MacBook Air.", "Replaced my phone with a Pixel 8.", None,
     "possible_contradiction"),
    ("用 iPhone 15 和 MacBook Air。", "手机换成了华为 Mate 60。", None,
     "possible_contradiction"),
    # two of a kind at once, someone else's, also, another kind, a try: both hold
    ("My work phone is an iPhone 12.", "My personal phone is a Pixel 8.", None, "kept apart"),
    ("My phone is an iPhone 12.", "My wife just got a new Pixel 8.", None, "kept apart"),
    ("I use Neovim.", "I also use VS Code for Java.", None, "kept apart"),
    ("Our CI runs on Jenkins.", "Our code is hosted on GitHub.", None, "kept apart"),
    ("Our CI runs on Jenkins.", "The mobile team's CI runs on Bitrise.", None, "kept apart"),
    ("I use Neovim.", "Tried VS Code once and didn't like it.", None, "kept apart"),
    ("My phone is an iPhone 12.", "My laptop is a ThinkPad X1.", None, "kept apart"),
    ("我的工作手机是华为。", "私人手机是苹果。", None, "kept apart"),
    ("我用小米手机。", "我老婆现在用华为手机。", None, "kept apart"),
    ("我的手机是华为。", "家里的平板是小米的。", None, "kept apart"),
    ("浏览器一直用 Chrome。", "测试时也会用 Firefox 看兼容性。", None, "kept apart"),
    # news of another product of the kind, with "now" or "new": the user's own still holds
    ("I use Neovim.", "New VS Code release adds Copilot chat.", None, "kept apart"),
    ("Chrome is my browser.", "Firefox now supports vertical tabs.", None, "kept apart"),
    ("Chrome is my browser.", "Firefox now supports vertical tabs.", "browser", "kept apart"),
    ("My phone is an iPhone 12.", "The new Pixel 9 launches in August.", None, "kept apart"),
    ("Our CI runs on Jenkins.", "GitHub Actions now offers ARM runners.", None, "kept apart"),
    ("我的手机是华为。", "小米新出的手机现在卖得很火。", None, "kept apart"),
    ("编辑器用的是 Vim。", "VS Code 新版本现在自带 AI 补全。", None, "kept apart"),
    # the user's own switch, in the first person or by a verb of use: a change
    ("My phone is an iPhone 12.", "I'm on a Pixel 8 now.", None, "contradiction"),
    ("我用华为手机。", "入手了小米手机，现在天天用。", None, "contradiction"),
    # the same one said again: one memory
    ("My editor is Neovim.", "I use Neovim as my editor.", None, "duplicate"),
    ("Our CI runs on Jenkins.", "Jenkins is our CI.", None, "duplicate"),
    ("我的手机是华为。", "用的是华为手机。", "phone", "duplicate"),
])
def test_one_of_a_kind_replaced(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                                subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


def test_remember_supersedes_the_editor_replaced(real_embedder: UniversalSentenceEncoder,
                                                 tmp_path: Path) -> None:
    folder, first, second = remembered_pair(real_embedder, tmp_path, "Our CI runs on Jenkins.",
                                            "Switched CI to GitHub Actions last week.")
    assert (first.action, second.action) == ("created", "superseded")
    old = parse_note(first.path, (folder.parent / first.path).read_bytes())
    assert old.memory is not None and old.memory.valid_to is not None
    assert (folder.parent / second.path).exists()  # both files stay
