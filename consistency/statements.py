"""The user's own statements worth a diary line: rules, preferences and decisions.

What ``dreamd flush`` keeps from a session before Claude Code compacts or ends it, without a
model: a sentence the user typed that carries

- a **rule** — the force of a rule (:func:`magma.layers.has_rule_force`: must, never, always,
  务必, 禁止 …) in the shape of an instruction: an imperative ("Always run the linter", "Never
  push to main", "Don't mock the database"), a modal ("tests must use a real database", "we
  should never …"), a standing order ("from now on …") or a Chinese instruction word (务必,
  必须, 禁止, 不要, 千万, 切勿, 严禁, 请勿, 不许, 不准, 别再, 一律, 今后, "以后…都/要" …);
- a **preference** — "I prefer …", "I'd rather …", "I (really) like/love/hate …", "my
  favourite …", 我喜欢, 我更喜欢, 我偏好, 我习惯, 我讨厌, 我倾向 …;
- a **decision** — "we decided …", "let's go with …", "we'll use …", "settled on …",
  决定, 就用, 定了, 采用, 改用, 拍板 ….

Questions (``?``, ``？``, ``吗``/``呢`` at the end) are never statements; neither are very short
fragments (fewer than :data:`MIN_CHARS` characters) or long pastes (more than
:data:`MAX_CHARS`: a log or a file, not a sentence). The word lists are dreamd's, chosen on
the phrasing of the memory samples in ``../shared/corpora/memory-samples`` (Claude Code
``feedback_*`` files, OpenClaw day notes in Chinese and Japanese). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from magma.layers import has_rule_force

__all__ = ["MAX_CHARS", "MIN_CHARS", "Statement", "StatementKind", "standing_statements"]

StatementKind = Literal["rule", "preference", "decision"]

#: Shortest sentence kept, in characters ("Use uv." is 7; a Chinese rule "不要用mock" is 7).
MIN_CHARS = 6
#: Longest sentence kept, in characters (longer is a paste, not something said).
MAX_CHARS = 400

_IMPERATIVE = re.compile(
    r"^(?:please\s+|pls\s+|and\s+|also\s+|so\s+|ok(?:ay)?,?\s+)?(?:always|never|don'?t|do not|"
    r"avoid|make sure|remember to|stop|no more|use|prefer|keep|write|run|put|stick to)\b",
    re.IGNORECASE)
_MODAL = re.compile(
    r"\b(?:must(?:n'?t| not)?|shall not|should (?:always|never|not)|have to|has to|"
    r"need to always|from now on|going forward|from here on|henceforth|"
    r"(?:is|are) (?:forbidden|required|mandatory)|(?:we|you) (?:always|never)|no longer"
    # "I always use pnpm", "I never use yarn": a habit told as a rule, not a past event
    r"|I (?:always|never) (?!\w+ed\b|(?:saw|did|had|was|went|got|made|knew|thought|said|"
    r"heard|found|came|took|gave|told|felt|meant|understood|expected)\b))\b",
    re.IGNORECASE)
_ZH_RULE = re.compile(
    r"务必|必须|千万|禁止|不要|切勿|严禁|绝不|请勿|不许|不准|别再|一律|从现在起|今后"
    r"|(?:以后|往后)[^，。！？,.!?]{0,12}?(?:都|一律|请|要|别|不能)|永远不|总是要|每次都要|记得要")
_PREFERENCE = re.compile(
    r"\bI(?:'d| would)? (?:really |much |strongly |generally |usually )?(?:prefer|rather|like|love|"
    r"hate|dislike|enjoy|don'?t like|do not like|can'?t stand)\b|\bmy (?:preference|"
    r"favou?rite)\b|\bprefer(?:red|s)? \w+ (?:over|to|instead)\b"
    r"|我(?:更|比较|很|最|不太|不|一般|通常)?(?:喜欢|偏好|习惯|讨厌|倾向|偏爱)|我的偏好",
    re.IGNORECASE)
_DECISION = re.compile(
    r"\b(?:we|I)(?:'ve| have)? (?:decided|chose|picked|agreed)\b|\bdecision\b|"
    r"\blet'?s (?:go with|use|stick with|keep|switch to|drop|stay with|move to)\b|"
    r"\bwe(?:'ll| will| are going to) (?:go with|use|stick with|switch to|drop|move to)\b|"
    r"\bgoing with\b|\bsettled on\b"
    r"|决定|就用|定了|选定|采用|改用|确定用|拍板|就这么办",
    re.IGNORECASE)
#: Where a sentence ends: . ! ? and their full-width forms, ; ；, a line break.
#: A sentence ends at a full stop, "!" or "?" (a semicolon joins two clauses of one sentence:
#: "Never push directly to main; open a PR instead." is one rule with its reason).
_SENTENCE = re.compile(r"[^\n.!?。！？]+(?:[.!?。！？]+|$)", re.MULTILINE)
_QUESTION = re.compile(r"(?:[?？]|[吗呢嘛][。.!！]?)\s*$")
#: Markup the client wraps around what it adds to a prompt (``<system-reminder>``,
#: ``<command-name>``, ``<local-command-stdout>`` …): not the user's words.
_TAGGED = re.compile(r"<([a-z][a-z0-9_-]*)(?:\s[^>]*)?>.*?</\1>", re.DOTALL | re.IGNORECASE)
_FENCED = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Statement:
    """One sentence of the user's that carries a rule, preference or decision."""

    kind: StatementKind
    text: str


def _kind(sentence: str) -> StatementKind | None:
    if _DECISION.search(sentence):
        return "decision"
    if _PREFERENCE.search(sentence):
        return "preference"
    if _ZH_RULE.search(sentence):
        return "rule"
    if has_rule_force(sentence) and (_IMPERATIVE.search(sentence) or _MODAL.search(sentence)):
        return "rule"
    return None


def _sentences(text: str) -> list[str]:
    text = _FENCED.sub("\n", _TAGGED.sub("\n", text))
    found = []
    for match in _SENTENCE.finditer(text):
        sentence = " ".join(match.group().split()).lstrip("-*>•# ").strip()
        if sentence:
            found.append(sentence)
    return found


def standing_statements(text: str) -> list[Statement]:
    """The sentences of ``text`` (one message the user typed) that carry a rule, a
    preference or a decision, in order, each once (module docstring). Markup the client
    added (tags such as ``<system-reminder>…</system-reminder>``) and fenced code are
    skipped."""
    found: list[Statement] = []
    seen: set[str] = set()
    for sentence in _sentences(text):
        if not MIN_CHARS <= len(sentence) <= MAX_CHARS or _QUESTION.search(sentence):
            continue
        kind = _kind(sentence)
        key = sentence.casefold()
        if kind is not None and key not in seen:
            seen.add(key)
            found.append(Statement(kind, sentence))
    return found
