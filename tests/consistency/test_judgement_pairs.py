"""The write-time judgement on the labelled memory pairs, with the product's real model.

``bench/write_pairs/holdout.jsonl`` (English, Chinese and mixed; with and without subjects)
was written apart from the rules; ``dev.jsonl`` is what they were set on. The floors below
are the issue's targets where the deterministic path reaches them, and today's figures
(rounded down) where it does not yet, so that any loss fails.
"""

from __future__ import annotations

import collections
import sys
from datetime import date
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from judged_pairs import judged_as as _judged_as  # noqa: E402
from write_decisions import (  # noqa: E402
    _fields,
    decide_pair,
    embed_pairs,
    outcome_of,
    read_pairs,
    right_outcome,
)

from consistency.claims import read_claim  # noqa: E402
from consistency.judgement import MemorySide, PairJudgement, judge_pair  # noqa: E402
from magma.embedder import UniversalSentenceEncoder  # noqa: E402

PAIRS = REPO / "bench" / "write_pairs"
#: Pair sets written by helpers who saw neither the rules nor the other sets, each measured
#: first as it came (``bench/write_decisions.py``); blind3–7 and blind10 were then read for
#: what the rules missed; of blind8 and blind9 only the list of wrong supersessions was read
#: (for measurements of two periods, found first in blind10); later the missed duplicates
#: and the wrong merges of blind3–12 were read for rules of wording (a subject named on one
#: side, "now" over the same number, words of the lexicon). Floors: today's figures, so
#: that any loss fails.
BLIND = {
    # name: (duplicate recall, contradiction recall, merges of two facts, wrong supersessions)
    # raised again after "X instead of Y" beside "X, not Y", a double denial of a rule,
    # occurrences counted a week, denied things across languages and "Mac" / "macOS" were
    # read (measured: blind3 0.890, blind6 0.878, blind8 0.811, blind9 0.767, blind10
    # 0.889, blind11 0.783, blind14 0.786; no merge or supersession added)
    # raised after two attributes of one thing (a name / a time or count), words replaced
    # below the floor cosine, one value said of two things and a verb of using in the slot
    # were read (measured: blind3 no merge, blind4 0.900, blind5 0.856, blind7 no wrong
    # supersession, blind11 2 merges, blind12 0.842 and no merge)
    "blind3.jsonl": (0.89, 0.94, 0, 0),
    "blind4.jsonl": (0.9, 0.98, 0, 0),
    "blind5.jsonl": (0.85, 0.94, 1, 0),
    "blind6.jsonl": (0.87, 1.0, 0, 0),
    "blind7.jsonl": (0.91, 0.88, 1, 0),
    "blind8.jsonl": (0.81, 0.92, 0, 0),
    "blind9.jsonl": (0.76, 0.9, 1, 0),
    # first measured as it came: duplicates 0.80, contradictions 0.80, 9 merges, 2
    # supersessions; then read (currencies, units, "every morning", 每周…三次, gluten-free,
    # a measure of another sprint or month)
    "blind10.jsonl": (0.88, 0.92, 3, 0),
    # first measured as it came: 208 of 300, duplicates 0.67, contradictions 0.54, 7 merges,
    # 8 supersessions; then read (a change told in few shared words, "depends on", 会员,
    # 我爸 / 我妈, a place that names the thing beside an unchanged value)
    # (contradictions 0.65 -> 0.63 once merges of two facts were refused, and back to 0.65
    # once the words of change a frame is read without were no longer the four stems the
    # refusal's own check reads: a second module constant of the same name had replaced them)
    "blind11.jsonl": (0.78, 0.65, 1, 0),
    # first measured as it came: 255 of 300, duplicates 0.80, contradictions 0.80, 6 merges,
    # 2 supersessions; then read ("从 X 切到 Y", names in Chinese quotes, "written in" /
    # "deployed on")
    # (contradictions 0.88 -> 0.85 the same way: "已改名为", "My new manager is …" listed;
    # back to 0.88 with the words of change restored)
    "blind12.jsonl": (0.84, 0.88, 0, 0),
    # memories of several facts and names that extend other names; first measured as it
    # came: 112 of 220, duplicates 0.51, contradictions 0.60, a change of one fact kept as a
    # possible contradiction 8 of 60, 11 merges, 16 supersessions; then read (one statement
    # of several turned, told changed or restated; "Alien" / "Aliens", "Polaris Pro")
    # then merges refused where one memory would state two facts (another holder, home and
    # work, an antonym, a change told beside, another thing of one kind): no merge; and
    # supersessions refused where the older tells more (what "still" holds, several things
    # named, dates in clauses of their own) or two of a family are named: 5
    "blind13.jsonl": (0.67, 0.63, 0, 5),
    # look-alikes of one subject, counts of several things, paraphrases of the missed kinds;
    # written after reading the kinds of misses, measured before any rule changed: 125 of
    # 168, duplicates 0.74, contradictions 0.60, 11 merges, 9 supersessions; then an
    # antonym naming which thing ("left knee" / "right knee") and the same words said after
    # another thing ("The *API* has 3 replicas" / "The *worker* …") were read; 2 once the
    # thing beside a changed value was read ("服务器有 32 *核*" / "… 32 GB *内存*")
    "blind14.jsonl": (0.78, 0.79, 2, 2),
}



@pytest.fixture(scope="module")
def judged(real_embedder: UniversalSentenceEncoder) -> dict[str, list[tuple[dict, str, float]]]:
    """Per file: ``(pair, outcome, cosine)`` with ``decide`` as ``remember`` calls it."""
    out: dict[str, list[tuple[dict, str, float]]] = {}
    for name in ("dev.jsonl", "holdout.jsonl", "adversarial.jsonl", "breakit2.jsonl",
                 "breakit3.jsonl", "breakit4.jsonl", "breakit5.jsonl", *BLIND):
        rows = read_pairs(PAIRS / name)
        vectors = embed_pairs(real_embedder, rows)
        out[name] = [(row, outcome_of(decide_pair(row, vectors[2 * i], vectors[2 * i + 1])),
                      float(vectors[2 * i] @ vectors[2 * i + 1]))
                     for i, row in enumerate(rows)]
    return out


def _wrong(rows: list[tuple[dict, str, float]]) -> tuple[list[str], list[str]]:
    """Ids of the merges of two facts, and of the supersessions of a fact that still holds."""
    merges = [r["id"] for r, o, _ in rows if o == "duplicate" and r["label"] != "duplicate"]
    supersessions = [r["id"] for r, o, _ in rows if o == "contradiction"
                     and r["label"] in {"distinct", "series", "partial_change"}]
    return merges, supersessions


def _recall(rows: list[tuple[dict, str, float]], label: str, kind: str | None = None,
            subject: bool | None = None) -> float:
    chosen = [(r, o) for r, o, _ in rows if r["label"] == label
              and (kind is None or r["kind"] == kind)
              and (subject is None or bool(r["old"].get("subject")) == subject)]
    return sum(1 for r, o in chosen if right_outcome(label, o)) / len(chosen)


@pytest.mark.parametrize("name", ["dev.jsonl", "holdout.jsonl"])
def test_never_merges_two_facts_nor_supersedes_one_that_holds(judged, name) -> None:
    rows = judged[name]
    merges, supersessions = _wrong(rows)
    assert merges == [] and supersessions == []


def test_the_break_it_pairs_are_never_merged_and_rarely_superseded(judged) -> None:
    """``adversarial.jsonl``: inputs from an attempt to break the judgement (other entities in
    one frame, other scripts, emoji, signs, corrections). No merge of two facts; of the 15
    "another thing in the same frame" pairs at most 4 are still superseded today."""
    rows = judged["adversarial.jsonl"]
    assert _wrong(rows)[0] == []
    scripts = [r["id"] for r, o, _ in rows if r["kind"] == "other_script"
               and not right_outcome("distinct", o)]
    assert scripts == []
    superseded = [r["id"] for r, o, _ in rows if r["kind"] == "other_entity"
                  and o == "contradiction"]
    assert len(superseded) <= 4, superseded


@pytest.mark.parametrize("name", ["dev.jsonl", "holdout.jsonl"])
def test_contradictions_are_found_with_and_without_a_subject(judged, name) -> None:
    rows = judged[name]
    assert _recall(rows, "contradiction", subject=True) >= 0.85
    assert _recall(rows, "contradiction", subject=False) >= 0.85


@pytest.mark.parametrize("name", ["dev.jsonl", "holdout.jsonl"])
def test_duplicates_restatements_and_the_same_fact_across_languages(judged, name) -> None:
    rows = judged[name]
    assert _recall(rows, "duplicate", "exact") == 1.0
    assert _recall(rows, "duplicate", "restatement") >= 0.9
    assert _recall(rows, "duplicate", "crosslingual") >= 0.7
    assert _recall(rows, "duplicate") >= 0.85


@pytest.mark.parametrize("name", ["dev.jsonl", "holdout.jsonl"])
def test_look_alikes_and_series_stay_apart(judged, name) -> None:
    rows = judged[name]
    assert _recall(rows, "distinct") == 1.0
    assert _recall(rows, "series") == 1.0


def test_a_second_break_it_round_stays_where_it_is(judged) -> None:
    """``breakit2.jsonl``: 156 pairs from a second attempt to break the judgement (English,
    Chinese, German, French, Spanish, Japanese; labels by the one who wrote them). Today:
    one merge of two facts (a Spanish weekday the reader does not know), one supersession
    of a fact that still holds; any loss fails."""
    rows = judged["breakit2.jsonl"]
    merges, supersessions = _wrong(rows)
    assert len(merges) <= 1, merges
    assert len(supersessions) <= 1, supersessions
    assert _recall(rows, "contradiction") >= 0.93  # 0.94 before merges were refused
    assert _recall(rows, "duplicate") >= 0.96


def test_a_fifth_break_it_round_stays_where_it_is(judged) -> None:
    """``breakit5.jsonl``: 115 pairs of what assistants write of real projects (units and
    number forms, dates, zones, hedges, negation scope, lists, settings on and off, env vars,
    paths, roles, commit SHAs and UUIDs), measured first at 94 right with 6 merges of two
    facts (a flag on / off, "rarely" / "all the time", "don't only" / "only", a list that
    lost an item, "manager" / "skip-level manager", an exception overruled). Today: 108
    right, no merge of two facts, no supersession of a fact that holds; any loss fails."""
    rows = judged["breakit5.jsonl"]
    merges, supersessions = _wrong(rows)
    assert merges == [] and supersessions == []
    assert _recall(rows, "contradiction") >= 0.97
    assert _recall(rows, "duplicate") >= 0.88
    assert sum(right_outcome(r["label"], o) for r, o, _ in rows) >= 108


@pytest.mark.parametrize("name", sorted(BLIND))
def test_the_blind_pair_sets_stay_where_they_are(judged, name) -> None:
    duplicates, contradictions, most_merges, most_supersessions = BLIND[name]
    rows = judged[name]
    merges, supersessions = _wrong(rows)
    assert len(merges) <= most_merges, merges
    assert len(supersessions) <= most_supersessions, supersessions
    assert _recall(rows, "duplicate") >= duplicates
    assert _recall(rows, "contradiction") >= contradictions


def test_a_change_of_one_fact_of_several_keeps_the_others(judged) -> None:
    """``blind13.jsonl``, label ``partial_change``: an older memory of several facts, a newer
    that changes one. Right only kept apart and listed (merged, it states two values;
    superseded, the facts that still hold leave the live memories). Today's figure."""
    rows = [(r, o) for r, o, _ in judged["blind13.jsonl"] if r["label"] == "partial_change"]
    kept = sum(o == "possible contradiction" for _r, o in rows)
    assert kept / len(rows) >= 0.66, kept


def test_a_third_break_it_round_stays_where_it_is(judged) -> None:
    """``breakit3.jsonl``: 266 pairs aimed at the lexicon and the newest rules (words with two
    senses, a Chinese side about another person or place, antonyms about other things,
    durations read as frequencies, inputs of 20,000 characters); kept byte for byte, the one
    pair the product refuses to write left out. Today's figures; any loss fails."""
    rows = judged["breakit3.jsonl"]
    merges, supersessions = _wrong(rows)
    # 16 merges before two attributes of one thing and words replaced below the floor
    # cosine were read; measured 14
    assert len(merges) <= 14, merges
    # 20 before the thing beside a changed value or sign, what the past month counts and a
    # number past reading were read; measured 13
    assert len(supersessions) <= 13, supersessions


def test_a_fourth_break_it_round_stays_where_it_is(judged) -> None:
    """``breakit4.jsonl``: 249 pairs from a fourth round, through ``dreamd remember`` (labels
    by the one who wrote them, kept byte for byte): someone else's fact ("I moved to
    Hangzhou" / "my sister also moved to Hangzhou"), "also" with another day ("Never deploy
    on Fridays" / "… on Mondays either"), a fact of another context ("Use pnpm in the web
    repo" / "Use yarn in the docs repo"), another day's schedule, and one fact of several
    changed in sentences of their own. 180 of 249 right, 60 supersessions of a fact that
    still holds and none of 6 partial changes kept when first measured; today's figures,
    any loss fails."""
    rows = judged["breakit4.jsonl"]
    merges, supersessions = _wrong(rows)
    # 6 before the same words said after another thing were read; measured 5
    # 4 before one number counted of two kinds of thing ("24 本书" / "24 部电影"); measured 2
    assert len(merges) <= 2, merges
    # 24 before one value said of two things ("The Berlin office opens at 9" / "The Munich
    # office …") was read; measured 21, and 219 right
    # 10 before two years of the past, a change told of another thing and a rule for
    # another scope were read; measured 3
    assert len(supersessions) <= 3, supersessions
    kept = [r["id"] for r, o, _ in rows if r["label"] == "partial_change"
            and o == "possible contradiction"]
    assert len(kept) >= 5, kept
    right = sum(right_outcome(r["label"], o) for r, o, _ in rows)
    assert right >= 242, right


def test_the_order_two_memories_arrive_in_does_not_change_the_pair(judged) -> None:
    """Judged A then B, and B then A: the same action (merge, supersede or keep both), but
    for at most 1% of the pairs — and never a merge one way and a supersession the other.
    A change told by one memory ("… is now US Eastern") is by design read by its order: the
    newer telling it supersedes, the older telling it is listed as a possible contradiction
    (it arrived out of order, or "now" was emphasis); those flips are not counted. Nor are
    those of a memory of several statements against one of a single statement: a newer that
    carries every fact may supersede, an older of several is never superseded by the change
    of one (:func:`_compound`)."""
    action = {"duplicate": "merge", "contradiction": "supersede"}
    flips: list[tuple[str, str, str]] = []
    total = 0
    for rows in judged.values():
        for row, _outcome, cosine in rows:
            total += 1
            sides = []
            for side in ("old", "new"):
                memory = row[side]
                claim = read_claim(_fields(memory)[3],
                                   written=date.fromisoformat(memory["created"]))
                sides.append(MemorySide(memory["type"], memory.get("subject"), claim))
            forward = judge_pair(sides[0], sides[1], cosine=cosine)
            backward = judge_pair(sides[1], sides[0], cosine=cosine)
            a, b = action.get(forward.verdict, "keep"), action.get(backward.verdict, "keep")
            told = forward.rule == backward.rule == "says it changed" and "merge" not in (a, b)
            if a != b and not told and not _compound(forward) and not _compound(backward):
                flips.append((row["id"], a, b))
    assert not [f for f in flips if {f[1], f[2]} == {"merge", "supersede"}]
    assert len(flips) <= total // 100, flips


def _compound(judgement: PairJudgement) -> bool:
    """Was the pair read statement by statement (an older memory of several statements)?"""
    return judgement.rule.startswith("one statement") or any(
        change.startswith("the older") for change in judgement.changes)


def test_categories_cover_the_issue(judged) -> None:
    kinds = collections.Counter((r["label"], r["lang"]) for rows in judged.values()
                                for r, _, _ in rows)
    assert sum(kinds.values()) >= 200
    for label in ("duplicate", "contradiction", "distinct", "series"):
        assert kinds[(label, "en")] and kinds[(label, "zh")]




@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the newer memory tells the change of what the older is about, in few shared words
    ("Launch date: 2026-03-14.", "Launch slipped to **2026-04-02**.", "contradiction"),
    ("孩子的钢琴课在周三下午。", "孩子的钢琴课改到周六上午了。", "contradiction"),
    ("Infra is provisioned with Terraform.",
     "Switched our infra-as-code from Terraform to Pulumi (TypeScript).", "contradiction"),
    ("数据库连接池大小是 20。", "连接池改成 50 了。", "contradiction"),
    # ... but not of another thing it names before the change
    ("孩子的钢琴课在周三下午。", "孩子的游泳课改到周六上午了。", "possible_contradiction"),
    # two children told apart by birth order are two people
    ("大女儿学钢琴。", "小女儿学钢琴。", "distinct"),
    ("My older daughter plays piano.", "My younger daughter plays piano.", "distinct"),
    # an allergy and not eating its allergen are one fact; the allergy itself can change
    ("儿子对花生过敏。", "我儿子不能吃花生，会过敏。", "duplicate"),
    ("Allergic to peanuts.", "No longer allergic to peanuts.", "contradiction"),
    # relations that hold several values at once
    ("Subscribes to Netflix.", "Subscribes to Disney+.", "distinct"),
    ("The analytics service depends on Kafka.", "The analytics service depends on ClickHouse.",
     "distinct"),
    # an event told with its span is read from its first day: two runs, a series
    ("Ran a pricing A/B test from 2025-06-01 to 2025-06-14.",
     "Ran another pricing A/B test, Sep 8–21, 2025.", "series"),
    # a place before the verb names the thing when the value after it is the same
    ("北京机房的出口带宽是 10G。", "上海机房的出口带宽是 10G。", "possible_contradiction"),
    ("北京机房的出口带宽是 10G。", "北京机房的出口带宽升到 20G 了。", "contradiction"),
    # "don't ever" is "never"; 设为 and 设成 set alike
    ("Never force-push to shared branches.", "Don't ever force-push to a shared branch.",
     "duplicate"),
    ("支付网关的超时时间设为 30 秒。", "支付网关超时设成 30 秒。", "duplicate"),
    # across languages, two memories that each deny something, alike enough
    ("我周末不看工作消息。", "I don't check work messages on weekends.", "duplicate"),
    ("Don't eat pork.", "不吃牛肉。", "kept apart"),
    # products known by a Chinese name: two payment methods a project supports both hold
    ("这个项目支持微信支付。", "这个项目支持支付宝。", "distinct"),
    ("会议纪要都记在飞书文档里。", "Meeting notes go in Feishu docs.", "duplicate"),
    # a measure of one kind said in place of another: another thing said of the subject
    ("The staging database is Postgres 15.", "The staging database is backed up every 6 hours.",
     "kept apart"),
    # two names that differ beside values of other kinds on each side: two attributes of one
    # thing, perhaps (the operating system and the memory); never superseded on the names
    ("The build box runs Debian 12.", "The build box has 64 GB of RAM.", "kept apart"),
    ("家里 NAS 用的是群晖 DS920+。", "家里 NAS 装了 4 块 8TB 硬盘。", "kept apart"),
    # two times of day, each with its own drink: antonyms of the time, not of one thing
    ("早上喝咖啡", "晚上喝茶", "kept apart"),
    # two activities of one person: living and working somewhere, running and swimming
    ("我住在杭州", "我在杭州工作", "distinct"),
    ("我每周跑步三次", "我每周游泳三次", "distinct"),
    ("Lives in Lisbon.", "Works in Lisbon.", "distinct"),
    # "not only X but also Y" states X
    ("The team uses not only Jira but also Linear.", "The team uses Jira.", "duplicate"),
    # a denial and a rule about another value: both may hold
    ("Never deploy on Friday.", "Always deploy on Monday.", "kept apart"),
    # a name in Chinese after 叫, changed; a Chinese name and its pinyin
    ("我的猫叫豆豆", "我的猫现在叫花花", "contradiction"),
    ("我家的狗叫旺财", "My dog is named Wangcai.", "duplicate"),
    # the thing named before the verb changed with the value after it: two things
    ("Home server in Berlin is Atlas.", "Home server in Lisbon is Hermes.", "kept apart"),
    ("Home server is Atlas.", "Home server is Hermes now.", "contradiction"),
    # a date where the other side names who does it: another thing said of the subject
    ("The tax filing is due on April 15.", "The tax filing is handled by our accountant.",
     "kept apart"),
    ("The tax filing is due on April 15.", "The tax filing is now due on May 1.",
     "contradiction"),
    # the word that leads to the value replaced: another thing said of the subject
    ("The billing API is written in Rust.", "The billing API is deployed on Cloud Run.",
     "kept apart"),
    ("The billing API is written in Rust.", "The billing API is now written in Go.",
     "contradiction"),
    # "从 X 切到 Y" tells a change; a name in Chinese quotes is one value
    ("我们用 Jira 管理需求。", "需求管理已经从 Jira 切到了 Linear。", "contradiction"),
    ("播客的名字叫“夜航船”。", "播客改名为“晚风电台”了。", "contradiction"),
    # a sister is a sister in both languages; an older and a younger sister are two people
    ("My sister lives in Lyon.", "我妹妹住在里昂", "duplicate"),
    ("我姐姐住在成都", "我妹妹住在成都", "distinct"),
    ("My brother lives in Oslo.", "我姐姐也住在奥斯陆。", "kept apart"),
    # changes told by "switched to … as my main", "pushed to", 转学, 改回
    ("I use Sublime as my main editor.", "I switched to Zed as my main editor.",
     "contradiction"),
    ("My thesis defense is scheduled for May.", "My thesis defense got pushed to July.",
     "contradiction"),
    ("儿子在西湖区上小学。", "儿子转学到滨江区的小学了。", "contradiction"),
    ("Nginx 监听 8081 端口。", "Nginx 端口改回默认的 80 了。", "contradiction"),
    # both say how it stands now: the same fact; "now" with another value: a change
    ("I'm learning Spanish, currently at B1 level.", "我在学西班牙语，现在是 B1 水平。",
     "duplicate"),
    ("I'm learning Spanish, currently at B1 level.", "I'm learning Spanish, now at B2 level.",
     "contradiction"),
    # what one never does, said with another verb, is one fact; one thing for another in a
    # relation of several values is two
    ("团队用飞书沟通，不用 Slack。", "团队沟通工具是飞书，不是 Slack。", "duplicate"),
    ("我会说日语。", "我会说韩语。", "distinct"),
    # a request word ("give") names no slot
    ("Distances in miles, please.", "Give distances in kilometres.", "contradiction"),
    # one thing the lexicon knows for another, however alike the sentences read
    ("Backend docs 在 Confluence 上。", "Frontend docs 在 Confluence 上。", "kept apart"),
    # two Chinese names with one pinyin are two names; 大姨 / 小姨 and a son / a daughter are
    # two people
    ("我儿子叫李明", "我儿子叫黎明", "contradiction"),
    ("我小姨住在上海", "我大姨住在上海", "distinct"),
    ("我女儿去年转学到实验小学", "我儿子转学到实验小学", "distinct"),
    # an older memory of two facts, one changed: superseding it would hide the other
    ("We use Postgres and Redis.", "We switched from Postgres to MySQL.", "kept apart"),
    ("I work in Hangzhou, and my dog is called Wangcai.", "My dog is now called Lucky.",
     "kept apart"),
    # a machine's name and a host name: one value changed
    ("The CI runner is on build-box-2.", "The CI runner is on ci-runner-a.internal.",
     "contradiction"),
    # one statement of several denied, turned or told changed: the others still hold
    ("I don't eat pork; I eat chicken.", "I don't eat chicken.", "possible_contradiction"),
    ("我不吃猪肉，但吃鸡肉。", "我现在不吃鸡肉了。", "possible_contradiction"),
    ("I use vim and tmux.", "I no longer use tmux.", "possible_contradiction"),
    ("Target launch is June 1; budget capped at $40k.", "Launch pushed to July 15.",
     "possible_contradiction"),
    # one statement of several said again, nothing more: the same memory
    ("Pescatarian, lactose intolerant, and doesn't drink alcohol.", "Doesn't drink.",
     "duplicate"),
    # a name that extends another is another name
    ("My favourite film is Alien.", "My favourite film is Aliens.", "contradiction"),
    ("Drives a Mazda CX-5.", "Test-drove the Mazda CX-50 this weekend.", "kept apart"),
    ("Subscribes to The New Yorker.", "Subscribes to New York magazine.", "kept apart"),
    # the same name written otherwise is one name
    ("我用 Jupyter Lab 做数据分析", "Uses JupyterLab for data analysis.", "duplicate"),
    # (a break-it round's inputs) only the verb turned, over another thing: two facts
    ("Use pytest for tests", "Don't use mocks in tests", "distinct"),
    ("I play piano", "I don't play guitar", "distinct"),
    ("我喝茶", "我不喝酒", "distinct"),
    # one thing of a list turned: the others still hold
    ("I'm allergic to peanuts and shellfish", "I'm no longer allergic to shellfish",
     "possible_contradiction"),
    ("我对花生和海鲜过敏", "我对海鲜不再过敏了", "possible_contradiction"),
    ("我喜欢寿司和拉面", "我讨厌拉面", "possible_contradiction"),
    # "May" after "in" is the month; a language named in Chinese is a value
    ("The car insurance renews in March", "The car insurance renews in May", "contradiction"),
    ("永远用英文回答我", "Always answer me in Chinese", "contradiction"),
    # a name and its initials are one name; another name is a change
    ("Lives in NYC.", "Lives in New York City.", "duplicate"),
    ("Deploys on AWS.", "Deploys on Amazon Web Services.", "duplicate"),
    ("Lives in NYC.", "Lives in San Francisco.", "contradiction"),
    # (a break-it round's inputs) what the older used, the newer denies and uses another
    # thing instead; the newer turns the older's one statement and says more
    ("Use npm, not pnpm, for JavaScript projects", "Use yarn, not npm, for JavaScript projects",
     "contradiction"),
    ("Use yarn, not npm, for JavaScript projects", "Use npm, not pnpm, for JavaScript projects",
     "contradiction"),
    ("Deploy on Tuesdays", "Never deploy on Tuesdays, deploy on Fridays", "contradiction"),
    ("Never deploy on Tuesdays, deploy on Fridays", "Deploy on Tuesdays", "possible_contradiction"),
    # a move planned is not a move told: the same plan in two languages
    ("My wife and I are planning to move to Singapore next year.", "我和太太打算明年搬去新加坡。",
     "duplicate"),
    # "anything" denied, then the things it covers denied: not two denials of two things
    ("Don't book anything for me before 10am.",
     "No meetings or calls scheduled earlier than 10 in the morning.", "possible_duplicate"),
    # (a fourth break-it round's rules, on new sentences) someone else's fact is not a change
    # of the user's; "also" keeps the older fact; another context, another day's schedule,
    # one fact of several changed in sentences of their own: kept apart
    ("I switched to Fedora.", "My roommate switched to Fedora.", "distinct"),
    ("我搬到深圳了", "我朋友搬到深圳了", "distinct"),
    ("Backups run on Sundays.", "Backups also run on Wednesdays.", "distinct"),
    ("我周三不加班", "我周五也不加班", "distinct"),
    ("Code freeze on Thursdays.", "Code freeze on Fridays too.", "distinct"),
    ("Deploy with Helm in the staging cluster.",
     "Deploy with Kustomize in the production cluster.", "distinct"),
    ("Gym at 7:00 on Tuesdays.", "Gym at 18:00 on Saturdays.", "possible_contradiction"),
    ("The staging timeout is 20 s. The prod timeout is 20 s.", "The staging timeout is now 45 s.",
     "possible_contradiction"),
    # and what still changes: a move told, the user's own switch, a time of day turned to
    # its antonym (a context replaced alone)
    ("Gym at 7:00 on Tuesdays.", "Gym moved to 18:00 on Saturdays.", "contradiction"),
    ("Usually reads the news in the morning.", "Usually reads the news in the evening.",
     "contradiction"),
    ("I live in Berlin.", "My wife and I moved to Munich.", "contradiction"),  # the user too
    ("I switched to Fedora.", "I switched to Arch.", "contradiction"),
    # a count tied to the thing it counts: one thing counted twice over is a change
    ("We keep one rabbit and two hamsters.", "We keep two rabbits and two hamsters.",
     "contradiction"),
    ("Has a cat and three goldfish.", "Has two cats and three goldfish.", "contradiction"),
    ("办公室有两台打印机一台投影仪。", "办公室有两台打印机两台投影仪。", "contradiction"),
    # one fact told again: in two languages, in other English words, a word's inflection
    ("Please write commit messages in English.", "提交信息请用英文写。", "duplicate"),
    ("Always show the full error message when something fails.",
     "出错的时候请把完整的报错信息贴出来。", "duplicate"),
    ("Invoices for the Berlin office are approved by the finance lead.",
     "The finance lead signs off on invoices from the Berlin office.", "duplicate"),
    ("Always run the formatter before committing.", "Run format every time before you commit.",
     "duplicate"),
    # never superseded: two instructions, two attributes of one thing, a value changed
    # together with the words beside it
    ("Run the type checker before opening a pull request.",
     "Run the spell checker before opening a pull request.", "kept apart"),
    ("The billing DB host is pg-bill-02.", "The billing DB runs MySQL 8.", "kept apart"),
    ("每周一早上六点去游泳。", "每周一晚上六点去上钢琴课。", "kept apart"),
    ("Nightly backups of the wiki run at 02:00 on the NAS.",
     "The wiki container on the NAS restarts at 03:00 after updates.", "kept apart"),
    # an antonym before the thing it names tells which thing; before a verb or a setting's
    # head word it is the change
    ("The left speaker is broken.", "The right speaker is broken.", "kept apart"),
    ("The cold storage bucket is in eu-west-1.", "The hot storage bucket is in eu-west-1.",
     "kept apart"),
    ("Turn left at the second light.", "Turn right at the second light.", "contradiction"),
    # the same words said after another thing are two facts; a name that goes on in
    # lower case is another name ("Jon" / "Jonathan"), one that goes on capitalised the
    # same thing written longer ("Jupyter" / "JupyterLab")
    ("The staging cluster runs 4 nodes.", "The analytics cluster runs 4 nodes.", "kept apart"),
    ("订单服务的超时是 5 秒。", "支付服务的超时是 5 秒。", "kept apart"),
    ("We use pnpm for installs.", "The team uses pnpm for installs.", "duplicate"),
    ("We use Jupyter for notebooks.", "We use JupyterLab for notebooks.", "duplicate"),
    ("Please call me Samantha.", "Just call me Sam.", "contradiction"),
    ("Dark mode is on.", "Light mode is on.", "contradiction"),
    ("深色模式已开启。", "浅色模式已开启。", "contradiction"),
    ("用户习惯早睡。", "用户习惯晚睡。", "contradiction"),
    # two memories that deny the same thing and use another are the one choice changed,
    # not a list of things denied; what is denied on another day is perhaps a second rule;
    # "代替 X" denies X as "instead of X" does
    ("Use yarn, not npm.", "Use pnpm, not npm.", "listed or changed"),
    ("用 yarn，不要用 npm", "用 pnpm，不要用 npm", "listed or changed"),
    ("Doesn't eat beef.", "Doesn't eat pork.", "kept apart"),
    ("Never deploy on Fridays.", "Never deploy on Mondays.", "kept apart"),
    ("不要在周五发布", "不要在周一发布", "kept apart"),
    ("Don't retry more than 3 times.", "Don't retry more than 5 times.", "contradiction"),
    ("用 pnpm，不要用 npm", "用 pnpm 代替 npm", "duplicate"),
    ("用 npm", "用 pnpm 代替 npm", "contradiction"),
    # a swap denied ("Don't use X instead of Y", 不要用 X 代替 Y) keeps Y: the rule turned
    # around, not the same words said again; "不用 X 而用 Y" ("no need for X", one concept on
    # each side) with the two things traded is the choice changed
    ("Use mocks instead of a real database in tests.",
     "Don't use mocks instead of a real database in tests.", "contradiction"),
    ("Use pnpm instead of npm.", "Don't use pnpm instead of npm.", "contradiction"),
    ("Don't use npm instead of pnpm.", "Don't use pnpm instead of npm.", "contradiction"),
    ("Never use npm instead of pnpm.", "Use pnpm, not npm.", "duplicate"),
    ("不要用 pnpm 代替 npm", "用 pnpm 代替 npm", "contradiction"),
    ("不要用 pnpm 代替 npm", "继续用 npm", "duplicate"),
    ("不用 npm 而用 pnpm", "不用 pnpm 而用 npm", "contradiction"),
    # a correction turned around ("X, not Y" / "Y, not X") holds the same words and says the
    # other value; "而不是 Y" says what it is not without a comma before it
    ("The standup is at 9:30, not 10:00.", "The standup is at 10:00, not 9:30.",
     "contradiction"),
    ("The release is on March 3, not March 5.", "The release is on March 5, not March 3.",
     "contradiction"),
    ("Rent is 1200 euros, not 1100.", "Rent is 1100 euros, not 1200.", "contradiction"),
    ("站会在 9:30，不是 10 点", "站会在 10 点，不是 9:30", "contradiction"),
    ("站会是 9:30 而不是 10 点", "站会是 10 点", "contradiction"),
    ("The standup is at 9:30, not 10:00.", "The standup is at 9:30, not at 10:00.",
     "duplicate"),
    # a bare hour after "at" is a clock time, of either half of the day ("at 7", "7 pm")
    ("The standup is at 9:30.", "The standup is at 10, not 9:30.", "contradiction"),
    ("The standup is at 9:30.", "The standup is at 10.", "contradiction"),
    ("Dinner at 7.", "Dinner at 8.", "contradiction"),
    ("Family dinner at 7 on Sundays.", "Family dinner is at 7pm on Sundays.", "duplicate"),
    ("The team call is at 15 every day.", "The team call is at 3 pm every day.", "duplicate"),
    # dates in Han numerals are values as dates in digits are
    ("发布日期是三月三号，不是三月五号", "发布日期是三月五号，不是三月三号", "contradiction"),
    ("妈妈的生日是五月十号", "妈妈的生日是五月十二号", "contradiction"),
    ("生日是十二月二十五日", "生日是12月25日", "duplicate"),
    # a rule of what to avoid and what to use, turned around ("ORMs" is "ORM" plural)
    ("Avoid ORMs; write raw SQL.", "Avoid raw SQL; use an ORM.", "contradiction"),
    ("Avoid ORMs; write raw SQL.", "Write raw SQL; avoid ORMs.", "duplicate"),
    ("Avoid classes; write plain functions.", "Avoid plain functions; write classes.",
     "contradiction"),
    # "stick with", "go with", "opt for" choose as "use" does: not another slot
    ("Stick with REST; avoid GraphQL.", "Avoid REST; go with GraphQL.", "contradiction"),
    ("Stick with REST; avoid GraphQL.", "Go with REST, not GraphQL.", "duplicate"),
    # a preference over a named thing ("prefer Python to Go", "rather Vim than Emacs") sets
    # the second against the first as over a common word
    ("I prefer Python to Go.", "I prefer Go to Python.", "contradiction"),
    ("I'd rather use Vim than Emacs.", "I'd rather use Emacs than Vim.", "contradiction"),
    ("I'd rather use Vim than Emacs.", "I prefer Vim to Emacs.", "duplicate"),
    # the same words with two things traded across the words that order them: never merged;
    # across a list's joint or a copula, or a clause moved whole, the same fact
    ("Alice reports to Bob.", "Bob reports to Alice.", "listed or changed"),
    ("Deploy staging before prod.", "Deploy prod before staging.", "listed or changed"),
    ("Coffee in the morning, tea in the afternoon.",
     "Tea in the morning, coffee in the afternoon.", "listed or changed"),
    ("早上喝咖啡，下午喝茶。", "早上喝茶，下午喝咖啡。", "listed or changed"),
    ("张三向李四汇报。", "李四向张三汇报。", "listed or changed"),
    ("I like tea and coffee.", "I like coffee and tea.", "duplicate"),
    ("我喜欢茶和咖啡。", "我喜欢咖啡和茶。", "duplicate"),
    ("The admin is Alice.", "Alice is the admin.", "duplicate"),
    ("我老婆是上海人，我是成都人。", "我是成都人，我老婆是上海人。", "duplicate"),
    ("我周末一般去爬山。", "一般周末我去爬山。", "duplicate"),
    # a span of time, a floor and a host's page told another way are values, never merged
    # with another of their kind
    ("The build takes an hour.", "The build takes two hours.", "contradiction"),
    ("Charge the phone for an hour.", "Charge the phone for 2 hours.", "contradiction"),
    ("The bus comes every hour.", "The bus comes every half hour.", "contradiction"),
    ("Reply within a day.", "Reply within 24 hours.", "duplicate"),
    ("办公室在三楼。", "办公室在四楼。", "contradiction"),
    ("The repo is at github.com/acme/api.", "The repo is at github.com/acme/web.",
     "contradiction"),
    ("The repo is at github.com/acme/api.", "The repo is https://github.com/acme/api",
     "duplicate"),
    # one thing of a list joined by "or" / 或 used after all: the other is still denied
    ("Don't use Redis or Memcached.", "Use Memcached.", "possible_contradiction"),
    ("不要用 Redis 或 Memcached。", "用 Memcached。", "possible_contradiction"),
    # the same fact set in the past on one side only: it ended, or holds; never merged
    ("I previously worked at Google.", "I work at Google.", "listed or changed"),
    ("我以前住在上海。", "我住在上海。", "listed or changed"),
    ("Back then I lived in Rome.", "I lived in Rome.", "duplicate"),
    ("我以前学过钢琴。", "我学过钢琴。", "duplicate"),
    # a past event on a weekday, or in a week named from the day written, is dated: two
    # such events are a series; a rule or a move to a weekday is no event
    ("Had a 1:1 with Sarah on Monday.", "Had a 1:1 with Sarah on Thursday.", "series"),
    ("上周去了医院。", "这周又去了医院。", "series"),
    ("Went hiking last weekend.", "Went hiking this weekend.", "series"),
    ("别在周五发版。", "周五别发版。", "duplicate"),
    ("Moved the standup to Monday.", "Moved the standup to Tuesday.", "contradiction"),
    # a name after a title's period ("Dr. Lee") is a name, not a word opening a sentence
    ("My dentist is Dr. Lee.", "My dentist is Dr. Smith.", "contradiction"),
    # numbers traded across a slash are two days; words across it, "or"
    ("Sister's birthday is on 5/6.", "Sister's birthday is on 6/5.", "listed or changed"),
    ("I like tea/coffee.", "I like coffee/tea.", "duplicate"),
    # an amount after "at" of a measure ("the thermostat is set at 21") is no clock time
    ("The thermostat is set at 21.", "The thermostat is set at 21 degrees.", "duplicate"),
    # colours in Chinese are read as in English: the same colour one fact, another never
    # merged
    ("My car is red.", "我的车是红色的。", "duplicate"),
    ("My car is a red Tesla.", "我的车是蓝色的特斯拉。", "listed or changed"),
    # what is excepted ("everything except pork", 除了猪肉…都) is denied; "up to" a number
    # is at most
    ("I eat everything except pork.", "I eat pork.", "contradiction"),
    ("除了猪肉我什么都吃。", "我吃猪肉。", "contradiction"),
    ("除了猪肉我还吃牛肉。", "我吃猪肉和牛肉。", "duplicate"),
    ("Retry up to 3 times.", "Retry at least 3 times.", "kept apart"),
    ("Retry up to 3 times.", "Retry at most 3 times.", "duplicate"),
    # a rate after a slash, a scale in words, a rate per thousand are read
    ("The subscription costs $10/month.", "The subscription costs $10/year.", "contradiction"),
    ("The house costs 1.2M.", "The house costs 1.2 million.", "duplicate"),
    ("The fee is 2%.", "手续费是千分之二。", "listed or changed"),
])
def test_rules_read_from_the_pair_sets(real_embedder, old: str, new: str, verdict: str) -> None:
    """One pair per rule added from what a blind set showed, through the real model."""
    _judged_as(real_embedder, old, new, None, verdict)


def test_two_subjects_in_two_languages_for_one_thing_are_one_subject(real_embedder) -> None:
    """Explicit subjects "allergy" and "过敏" name one thing: the pair is judged, not kept
    apart as two subjects."""
    a, b = real_embedder.embed(["I'm allergic to cats.", "我对猫过敏。"])
    sides = [MemorySide("user", subject, read_claim(text, written=date(2026, 1, day)))
             for day, subject, text in ((1, "allergy", "I'm allergic to cats."),
                                        (20, "过敏", "我对猫过敏。"))]
    assert judge_pair(sides[0], sides[1], cosine=float(a @ b)).verdict == "duplicate"
    sides[1] = MemorySide("user", "pets", sides[1].claim)
    assert judge_pair(sides[0], sides[1], cosine=float(a @ b)).verdict == "distinct"


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # English antonyms of one thing are the change, whatever else the sentences say
    ("I prefer light themes in editors.", "These days it's dark themes everywhere for me.",
     "contradiction"),
])
def test_antonyms_under_one_subject(real_embedder, old: str, new: str, verdict: str) -> None:
    a, b = real_embedder.embed([old, new])
    sides = [MemorySide("user", "theme",
                        read_claim(text, written=date(2026, 1, day)))
             for day, text in ((1, old), (20, new))]
    assert judge_pair(sides[0], sides[1], cosine=float(a @ b)).verdict == verdict


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a comparison said before its preference reads as the usual order
    ("Ivan prefers tabs over spaces.", "Tabs over spaces is what Ivan prefers.", None,
     "duplicate"),
    ("Ivan prefers tabs over spaces.", "Spaces over tabs is what Ivan prefers.", None,
     "contradiction"),
    # the subject's own name said on one side only is wording; another thing is not
    ("Sprint length is two weeks.", "Sprints last 2 weeks.", "team.sprint_length", "duplicate"),
    ("The house has 3 bedrooms.", "The house has 3 bathrooms.", "house", "kept apart"),
    ("In 2023 I read 24 books.", "In 2023 I watched 24 films.", "2023", "kept apart"),
    # "now" over the same number is the fact told again; over a name only, a possible change
    ("孩子在读小学三年级。", "小孩现在三年级，上小学。", None, "duplicate"),
    ("The CI runners live on build-box-a.",
     "CI runners are on build-box-c now; a is decommissioned.", None, "kept apart"),
    # English and Chinese of one fact: 用 for "on", words of the lexicon, 少用 as "avoid"
    ("I'm learning Japanese on Duolingo.", "在用多邻国学日语", None, "duplicate"),
    ("Invoices are issued on the 25th of each month.", "每月25号开发票。", None, "duplicate"),
    ("写作时少用被动语态。", "Avoid the passive voice in my writing.", None, "duplicate"),
    ("No exclamation marks.", "不要用感叹号。", None, "duplicate"),
    # an antonym across the two languages is a change, never a merge
    ("睡觉时我喜欢房间冷一点。", "I like my bedroom warm when I sleep.", None, "kept apart"),
    # a place named "New" after another is another place
    ("Lives in Hampshire, England.", "Moved to New Hampshire.", "location", "contradiction"),
    ("Lives in NYC.", "Lives in New York City.", None, "duplicate"),
    # an allergy on one side only is another fact of the thing
    ("Likes coffee.", "咖啡过敏", None, "distinct"),
    ("Likes coffee.", "I'm allergic to coffee.", None, "distinct"),
    # numbers, units, times and dates written otherwise are the same value
    ("Standup is at half past nine.", "Standup at 9:30.", None, "duplicate"),
    ("Standup is at half past nine.", "站会九点半。", None, "duplicate"),
    ("Standup is at half past nine.", "Standup at 10:30.", None, "contradiction"),
    ("Launch date is 3/15/2026.", "Launch date: March 15, 2026.", None, "duplicate"),
    ("The deadline is 2026-03-15.", "Deadline: 15/03/2026.", None, "duplicate"),
    ("Launch date is 3/15/2026.", "Launch date is 4/15/2026.", None, "contradiction"),
    ("The timeout is 5 min.", "The timeout is five minutes.", None, "duplicate"),
    ("超时是5分钟。", "The timeout is five minutes.", None, "duplicate"),
    ("Has three kids.", "有三个孩子。", None, "duplicate"),
    ("Budget is 12k euros.", "The budget is €12,000.", None, "duplicate"),
    # "a roommate" is the count "one roommate" names, not another number
    ("Lives with a roommate in a two-bedroom apartment.",
     "Shares the apartment with one roommate.", None, "duplicate"),
    # a liking turned over another thing is another taste; over the same thing, a change
    ("喜欢吃火锅。", "不喜欢吃日料。", None, "distinct"),
    ("Prefers tea.", "Dislikes coffee.", "user.drinks", "distinct"),
    ("喜欢吃火锅。", "不喜欢吃火锅了。", None, "contradiction"),
    ("Loves dark themes.", "Can't stand dark themes.", None, "contradiction"),
    # hedges and politeness are no words of the fact
    ("回答尽量简短。", "回答要简短。", None, "duplicate"),
])
def test_one_fact_written_otherwise(real_embedder, old: str, new: str, subject: str | None,
                                    verdict: str) -> None:
    """Restatements in other words, numbers, units, times and dates, and the look-alikes
    that must stay apart, through the real model (a subject on both sides when given)."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a range of hours is a value: another range supersedes, in English and Chinese, with
    # and without a subject; 六点 after 九点到 is 18点
    ("Office hours are 9 to 5", "Office hours are 10 to 6", "contradiction"),
    ("Office hours are 9 to 5", "Office hours are 9am to 5pm", "duplicate"),
    ("办公时间是九点到六点", "办公时间是十点到七点", "contradiction"),
    ("办公时间是九点到六点", "办公时间是9点到18点", "duplicate"),
    ("上班时间九点到六点", "上班时间十点到七点", "contradiction"),
    ("我九点到六点上班", "我十点到七点上班", "contradiction"),
    # bare hours against clock times are hours, across languages too; "from 9 to 5" is a
    # span of the day, no change told
    ("Office hours are 9 to 5", "办公时间是九点到五点", "duplicate"),
    ("Office hours are 9 to 5", "办公时间是十点到六点", "listed or changed"),
    ("Office hours are 9 to 5", "Office hours are 10am to 6pm", "contradiction"),
    ("The shop is open from 9 to 5", "The shop is open 9 to 5", "duplicate"),
    ("The shop is open from 9 to 5", "The shop is open from 9am until 5pm", "duplicate"),
    ("The shop is open from 9 to 5", "The shop is open from 10 to 6", "contradiction"),
    ("The shop is open from 9 to 5", "The shop is open from 9am until 6pm",
     "listed or changed"),
    ("Standup is at 9", "Standup moved from 9 to 10", "contradiction"),
    ("From 2015 to 2020 I lived in Berlin", "I live in Berlin", "kept apart"),
    # the time of a daily habit changed supersedes; a time with another thing done beside
    # it is listed
    ("我每天早上7点起床", "我每天早上6点起床", "contradiction"),
    ("每天10点睡觉", "每天11点睡觉", "contradiction"),
    ("我每天早上7点起床", "我每天晚上7点到家", "kept apart"),
    ("我每天早上7点起床", "我每天早上6点出门", "kept apart"),
    ("每天工作8小时", "每周工作5天", "kept apart"),
    # colours that traded things across languages are never merged
    ("My black cat and white dog", "我的白猫和黑狗", "possible_contradiction"),
    ("I have a black cat and a white dog", "我有一只白色的猫和一只黑色的狗",
     "possible_contradiction"),
    ("My black cat and white dog", "我的黑猫和白狗", "duplicate"),
    ("My black cat and white dog", "My white cat and black dog", "possible_contradiction"),
    ("我的猫是黑色的，狗是白色的", "My cat is white and my dog is black", "possible_contradiction"),
    ("我的猫是黑色的，狗是白色的", "My cat is black and my dog is white", "duplicate"),
    ("The cat is black and white", "这只猫是黑白的", "duplicate"),
    # a setting written KEY=value: another value of the key supersedes; another key is
    # never a change of this one
    ("NODE_ENV=production", "NODE_ENV=development", "contradiction"),
    ("Deploy with NODE_ENV=production", "Deploy with NODE_ENV=development", "contradiction"),
    ("LOG_LEVEL=debug", "LOG_LEVEL = info", "contradiction"),
    ("NODE_ENV=production", "NODE_ENV = production", "duplicate"),
    ("NODE_ENV=production", "DEBUG=production", "kept apart"),
    # command-line flags are values; a flag added is the rule said with more
    ("Run pytest with -x", "Run pytest with -q", "contradiction"),
    ("用 pytest -x 跑测试", "用 pytest -q 跑测试", "contradiction"),
    ("Use git push --force-with-lease", "Use git push --force", "contradiction"),
    ("Call ruff with --fix", "Call ruff with --diff", "contradiction"),
    ("Run pytest with -x", "Run pytest with -x -q", "duplicate"),
    ("Re-run the tests after a merge", "Run the tests after a merge", "duplicate"),
    # "at 3" is either half of the day, in English and in Chinese: "at 3am" or 下午三点 is
    # the same time told more precisely, merged (the merge keeps the newer sentence too, so
    # the half named is not lost); two halves named, or another hour, supersede
    ("The meeting is at 3", "The meeting is at 3am", "duplicate"),
    ("The meeting is at 3", "The meeting is at 3pm", "duplicate"),
    ("会议在三点", "会议在下午三点", "duplicate"),
    ("The meeting is at 3pm", "The meeting is at 3am", "contradiction"),
    ("会议在下午三点", "会议在凌晨三点", "contradiction"),
    ("The meeting is at 3", "The meeting is at 4", "contradiction"),
    ("会议在三点", "会议在四点", "contradiction"),
    # a more precise release of the same version is the same fact; another version, or a
    # release of a major version alone, supersedes
    ("We use Python 3.11", "We use Python 3.11.4", "duplicate"),
    ("We use Python 3.11.4", "We use Python 3.11", "duplicate"),
    ("我们用 Python 3.11", "我们用 Python 3.11.4", "duplicate"),
    ("We use Python 3.11", "We use Python 3.12", "contradiction"),
    ("We use Python 3.11.4", "We use Python 3.11.5", "contradiction"),
    # number words: a dozen is twelve
    ("Buy a dozen eggs", "Buy 12 eggs", "duplicate"),
    ("We keep half a dozen eggs in the fridge", "We keep 6 eggs in the fridge", "duplicate"),
    ("Buy a dozen eggs", "Buy 13 eggs", "contradiction"),
    # a decimal comma is a decimal point; a comma before three digits groups thousands
    ("The coffee costs €3,50", "The coffee costs €3.50", "duplicate"),
    ("The coffee costs 3,50 €", "The coffee costs €3.50", "duplicate"),
    ("The coffee costs €3,50", "The coffee costs €4,50", "contradiction"),
    ("The ticket costs $1,000", "The ticket costs $1000", "duplicate"),
    ("The ticket costs $1,000", "The ticket costs $1,200", "contradiction"),
    # a room, seat or flat label of digits and a letter is an identifier
    ("The meeting is in room 4B", "The meeting is in room 4C", "contradiction"),
    ("The meeting is in 4B", "The meeting is in 4C", "contradiction"),
    ("会议在4B会议室", "会议在4C会议室", "contradiction"),
    ("The meeting is in 4B", "Lunch is in 4C", "kept apart"),
])
def test_values_a_break_it_round_read_wrong(real_embedder, old: str, new: str,
                                            verdict: str) -> None:
    """Ranges of hours, times of a habit, colours across languages, settings, flags, hours
    of either half of the day, versions, dozens, decimal commas and room labels: each pair a
    break-it round found decided wrong, and look-alikes that must stay as they are, through
    the real model."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # "instead of" / "rather than" beside a memory that denies the same thing set aside is
    # the preference told again, in English and Chinese, with and without a subject
    ("Use pnpm, not npm.", "Use pnpm instead of npm.", None, "duplicate"),
    ("Use pnpm, not npm.", "Use pnpm instead of npm.", "tooling.package_manager", "duplicate"),
    ("用 pnpm，不要用 npm。", "用 pnpm 代替 npm。", None, "duplicate"),
    ("用 pnpm，不要用 npm。", "Use pnpm instead of npm.", None, "duplicate"),
    ("When you're unsure, say so; don't guess.", "Say you don't know instead of guessing.",
     None, "duplicate"),
    ("Don't use tabs.", "Use spaces instead of tabs.", None, "duplicate"),
    ("Don't write long answers.", "Write short answers instead of long ones.", None,
     "duplicate"),
    # ... and a change where the other memory keeps what is set aside, denies what is
    # kept, or only states the thing
    ("Uses 1Password.", "Uses Bitwarden instead of 1Password.", None, "contradiction"),
    ("Uses 1Password.", "Uses Bitwarden instead of 1Password.", "password_manager",
     "contradiction"),
    ("Use pnpm, not npm.", "Use npm instead of pnpm.", None, "contradiction"),
    ("用 pnpm，不要用 npm。", "Use npm instead of pnpm.", None, "contradiction"),
    ("Never use tabs.", "Use tabs instead of spaces.", None, "contradiction"),
    ("Never use tabs.", "Use tabs instead of spaces.", "editor.indent", "contradiction"),
    ("不要用 tab 缩进。", "Use tabs instead of spaces.", None, "contradiction"),
    ("Don't write short answers.", "Write short answers instead of long ones.", None,
     "contradiction"),
    # a word denied by its prefix is the word denied by a negation ("unsure" / "not sure");
    # the word asserted is a change
    ("When unsure, ask before acting.", "When you're not sure, ask before acting.", None,
     "duplicate"),
    ("When unsure, ask before acting.", "When you're not sure, ask before acting.",
     "assistant.asking", "duplicate"),
    ("The old API is unsafe to call from the browser.",
     "The old API is not safe to call from the browser.", None, "duplicate"),
    ("The old API is unsafe to call from the browser.",
     "The old API is safe to call from the browser.", None, "contradiction"),
    ("The script is unsafe to rerun.", "The script is safe to rerun.", None, "contradiction"),
    ("Is unhappy with the new office.", "Is happy with the new office.", None,
     "contradiction"),
])
def test_a_contrast_or_a_denying_prefix_said_otherwise(real_embedder, old: str, new: str,
                                                      subject: str | None,
                                                      verdict: str) -> None:
    """"X instead of Y" against "X, not Y", and "unsure" against "not sure": the same
    preference or state told again; the look-alikes that keep what is set aside, or assert
    the word the prefix denies, stay changes. Through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a setting of another key is another fact, in English and Chinese, with and without a
    # subject; another value of the same key supersedes
    ("Set NODE_ENV=production.", "Set DEBUG=production.", None, "distinct"),
    ("NODE_ENV=production", "DEBUG=production", None, "distinct"),
    ("NODE_ENV=production", "DEBUG=production", "deploy.env", "distinct"),
    ("部署时设置 NODE_ENV=production。", "部署时设置 DEBUG=production。", None, "distinct"),
    ("部署时设置 NODE_ENV=production。", "部署时设置 NODE_ENV=development。", None,
     "contradiction"),
    ("Set LOG_LEVEL=info in staging.", "Set LOG_LEVEL=debug in staging.", None,
     "contradiction"),
    ("Set NODE_ENV=production.", "Set NODE_ENV=production and DEBUG=false.", None,
     "duplicate"),
    # points that group the thousands of an amount of money: one amount; another amount,
    # or a measure with a decimal point, stays a change
    ("The rent is €1,250 a month.", "The rent is €1.250 a month.", None, "duplicate"),
    ("The rent is €1,250 a month.", "The rent is 1.250 € a month.", "home.rent", "duplicate"),
    ("房租每月 €1,250。", "房租每月 €1.250。", None, "duplicate"),
    ("房租每月1250欧元。", "The rent is €1.250 a month.", None, "duplicate"),
    ("The rent is €1,250 a month.", "The rent is €1.350 a month.", None, "contradiction"),
    ("The rent is €1,250 a month.", "The rent is €1.25 a month.", None, "contradiction"),
    ("The bag weighs 1.250 kg.", "The bag weighs 1250 kg.", None, "contradiction"),
    # a span of bare hours is read on the dial: "9 to 5" is "9 to 17"; another hour, or a
    # span of days or of people, stays a change
    ("I work 9 to 5.", "I work 9 to 17.", None, "duplicate"),
    ("I work 9 to 5.", "I work from 9 to 17.", None, "duplicate"),
    ("Office hours are 9-5.", "Office hours are 9-17.", "office.hours", "duplicate"),
    ("I work 9 to 5 Berlin time.", "I work 9 to 17 Berlin time.", None, "duplicate"),
    ("I work 9 to 5.", "I work 9 to 18.", None, "contradiction"),
    ("Office hours are 9-5.", "Office hours are 10-6.", None, "contradiction"),
    ("The sprint lasts 5 to 7 days.", "The sprint lasts 5 to 19 days.", None,
     "contradiction"),
    ("Teams have 5 to 7 members.", "Teams have 5 to 19 members.", None, "contradiction"),
])
def test_a_setting_an_amount_or_a_span_of_hours_written_otherwise(
        real_embedder, old: str, new: str, subject: str | None, verdict: str) -> None:
    """A setting's key names what it is about ("NODE_ENV=production" / "DEBUG=production");
    "€1.250" is "€1,250"; "9 to 5" is "9 to 17". Each with its look-alikes, through the
    real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # 一打 is a dozen, 半打 half of one; 打 as a verb ("一打开就…") is no number
    ("买了一打鸡蛋。", "买了12个鸡蛋。", None, "duplicate"),
    ("买了一打鸡蛋。", "Bought a dozen eggs.", None, "duplicate"),
    ("冰箱里有半打啤酒。", "冰箱里有6瓶啤酒。", None, "duplicate"),
    ("买了一打鸡蛋。", "买了13个鸡蛋。", None, "contradiction"),
    ("每周买一打鸡蛋。", "每周买两打鸡蛋。", "groceries.eggs", "contradiction"),
    ("冰箱里有半打啤酒。", "冰箱里有一打啤酒。", None, "contradiction"),
    ("门一打开就会响铃。", "门一打开就会亮灯。", None, "kept apart"),
    # a time or day said of the noun after it names which one ("9点的会", "the 9am
    # meeting"): two meetings, never one superseded; when a meeting is, supersedes
    ("9点的会取消了", "10点的会取消了", None, "kept apart"),
    ("9点的会取消了", "10点的会取消了", "calendar", "kept apart"),
    ("周五的例会取消了。", "周三的例会取消了。", None, "kept apart"),
    ("The 9am meeting is cancelled.", "The 10am meeting is cancelled.", None, "kept apart"),
    ("The Friday call is moved to Zoom.", "The Monday call is moved to Zoom.", None,
     "kept apart"),
    ("会议在9点", "会议改到10点", None, "contradiction"),
    ("周会在周五。", "周会在周三。", None, "contradiction"),
    ("The weekly call is on Friday.", "The weekly call is on Monday.", None, "contradiction"),
    ("9点的会改到10点了。", "9点的会改到11点了。", None, "contradiction"),
    # another thing done at the same time, said last, is another habit: never merged
    ("我每天早上7点起床", "我每天早上7点出门", None, "kept apart"),
    ("我每天早上7点起床", "我每天早上7点出门", "routine.morning", "kept apart"),
    ("Every morning at 7 I get up.", "Every morning at 7 I leave home.", None, "kept apart"),
    ("我每天早上7点起床", "每天早上七点起床", None, "duplicate"),
    ("我每天早上7点起床", "我每天早上6点起床", None, "contradiction"),
    ("每天晚上11点睡觉。", "每天晚上11点上床睡觉。", None, "duplicate"),
    # a closed span of years is a period of the past, no change told; two periods are a
    # series; another place in one period, or a change of year told, stays a change
    ("From 2015 to 2020 I lived in Berlin.", "I live in Berlin.", None, "kept apart"),
    ("From 2015 to 2020 I lived in Berlin.", "I live in Munich.", None, "kept apart"),
    ("From 2010 to 2015 I worked at Acme.", "From 2015 to 2020 I worked at Globex.", None,
     "series"),
    ("2015年到2020年我住在柏林。", "2020年到2023年我住在慕尼黑。", None, "series"),
    ("From 2015 to 2020 I lived in Berlin.", "From 2015 to 2020 I lived in Munich.", None,
     "contradiction"),
    ("From 2015 to 2020 I lived in Berlin.", "From 2015 to 2020 I lived in Berlin, Germany.",
     None, "duplicate"),
])
def test_dozens_which_meeting_another_habit_and_periods_of_years(
        real_embedder, old: str, new: str, subject: str | None, verdict: str) -> None:
    """一打 read as 12; "9点的会" / "10点的会" two meetings; 起床 / 出门 at 7 two habits;
    "From 2015 to 2020" a period, not a change told. With their look-alikes, through the
    real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a rule said as what must come first, and said again as a double denial ("never …
    # without", "没有…不能"), is one rule; an exception of the positive side's own, another
    # thing required, or a plain denial stays apart or a change
    ("Always ask before deleting files.", "Never delete files without asking me.", None,
     "duplicate"),
    ("Always ask before deleting files.", "Never delete files without asking me.",
     "assistant.deleting", "duplicate"),
    ("合并代码前必须有人评审。", "没有评审不能合并代码。", None, "duplicate"),
    ("Always run the tests before merging.", "Never merge without running the tests.", None,
     "duplicate"),
    ("Always run migrations without asking.", "Never run migrations without asking.", None,
     "kept apart"),
    ("Always run the tests before merging.", "Never merge without a code review.", None,
     "kept apart"),
    ("合并前必须跑测试。", "没有评审不能合并。", None, "kept apart"),
    ("Always ask before deleting files.", "Never delete files without a backup.", None,
     "kept apart"),
    ("上线前必须经过测试组签字确认。", "上线前不用测试组签字确认。", None, "contradiction"),
    # a count of sessions, lessons or workouts a week is how often: "three gym sessions a
    # week" is "three times a week"; another count changes it; cups stay an amount
    ("I go to the gym three times a week.", "I do 3 workouts per week at the gym.", None,
     "duplicate"),
    ("每周去三次健身房。", "I go to the gym three times a week.", None, "duplicate"),
    ("Has two piano lessons a month.", "Has piano twice a month.", None, "duplicate"),
    ("Has piano lessons twice a month.", "Has three piano lessons a month.", "kids.piano",
     "contradiction"),
    ("I go to the gym three times a week.", "Two gym sessions a week is my routine.", None,
     "listed or changed"),
])
def test_a_rule_said_from_the_other_side_and_occurrences_counted(
        real_embedder, old: str, new: str, subject: str | None, verdict: str) -> None:
    """"Always ask before X" / "never X without asking"; "three gym sessions a week" /
    "three times a week". With their look-alikes, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # across English and Chinese, each denying something: when what the English side
    # denies is said on the Chinese side, the denied things compare; another thing denied,
    # another value or another person stays apart
    ("Doesn't drink coffee after 3pm.", "下午三点以后不喝咖啡。", None, "duplicate"),
    ("Don't use semicolons in JavaScript.", "写 JavaScript 时不要用分号。", None, "duplicate"),
    ("Never use the word 'synergy' in my emails.", "我的邮件里别出现 synergy 这个词。", None,
     "duplicate"),
    ("Never use the word 'synergy' in my emails.", "我的邮件里别出现 synergy 这个词。",
     "writing.banned_words", "duplicate"),
    ("Don't eat pork.", "不吃牛肉。", None, "kept apart"),
    ("No meetings before 10am.", "早上十点前不接电话。", None, "kept apart"),
    ("I don't drive.", "我不喝酒。", None, "kept apart"),
    ("Don't use the word 'leverage' in my docs.", "文档里不要用 synergy 这个词。", None,
     "kept apart"),
    ("Don't use emojis in commit messages.", "提交信息里不要用缩写。", None, "kept apart"),
    ("My wife doesn't drive.", "我不开车。", None, "kept apart"),
    ("Doesn't drink coffee after 3pm.", "下午五点以后不喝咖啡。", None, "contradiction"),
    # an operating system's name is its device's written out ("Mac" / "macOS"); another
    # system is a change
    ("My laptop runs macOS.", "My laptop is a Mac.", None, "duplicate"),
    ("Uses a Mac at work.", "Uses macOS at work.", "work.computer", "duplicate"),
    ("I have an iPad.", "My tablet runs iPadOS.", None, "duplicate"),
    ("Uses a Mac at work.", "Uses Windows at work.", None, "contradiction"),
])
def test_denied_things_across_languages_and_a_system_named_by_its_device(
        real_embedder, old: str, new: str, subject: str | None, verdict: str) -> None:
    """"I don't drive" / "我不开车": the denied thing read on both sides; "Mac" / "macOS". With
    their look-alikes, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a bare hour in words or digits against the clock time the other states is that hour
    # ("before nine" / "before 9am"); another hour, or a number that counts things, is not
    ("No deploys after 5pm.", "Deploys after five are off-limits.", None, "duplicate"),
    ("No deploys after 5pm.", "Deploys after five are off-limits.", "release.window",
     "duplicate"),
    ("Never schedule calls before 10am.", "Calls before ten are off-limits.", None,
     "duplicate"),
    ("No deploys after 5pm.", "Deploys after six are off-limits.", None, "contradiction"),
    ("No deploys after 5pm.", "No deploys by 5 people.", None, "kept apart"),
])
def test_a_bare_hour_against_a_clock_time(real_embedder, old: str, new: str,
                                          subject: str | None, verdict: str) -> None:
    """"before nine" / "before 9am": one hour, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # another activity across English and Chinese, read through the lexicon (住 / live,
    # 工作 / work, 跑步 / run): two facts, never merged; the same activity stays one fact
    ("Lives in New York City.", "在纽约工作。", None, "distinct"),
    ("Lives in New York City.", "在纽约工作。", "user.location", "distinct"),
    ("I work in Hangzhou.", "我住在杭州。", None, "distinct"),
    ("Swims three times a week.", "每周跑步三次。", None, "distinct"),
    ("I work in Hangzhou.", "我在杭州上班。", None, "duplicate"),
    ("Swims three times a week.", "每周游泳三次。", None, "duplicate"),
])
def test_another_activity_across_languages(real_embedder, old: str, new: str,
                                           subject: str | None, verdict: str) -> None:
    """"Lives in New York City" / "在纽约工作": two facts, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a share in tenths (八成 80%, 九成 90%) is a percentage; another share is a change;
    # 八成 as "most likely" is no number
    ("Test coverage must be at least 80%.", "测试覆盖率至少要八成。", None, "duplicate"),
    ("测试覆盖率要求不低于 80%。", "单测覆盖率至少要八成。", None, "duplicate"),
    ("九成的订单当天发货。", "90% of orders ship the same day.", None, "duplicate"),
    ("九成的订单当天发货。", "八成的订单当天发货。", "shipping.same_day", "contradiction"),
    ("测试覆盖率要求不低于 80%。", "单测覆盖率至少要九成。", None, "listed or changed"),
])
def test_a_share_in_tenths(real_embedder, old: str, new: str, subject: str | None,
                           verdict: str) -> None:
    """八成 / 80%, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a thing had or subscribed to, and a newer memory that tells it ended: a change, never
    # one merged memory that states both; the end told on both sides, or a word with 戒 that
    # is no ending (戒指), stays one fact
    ("Has a Netflix subscription.", "Cancelled the Netflix subscription.", None,
     "contradiction"),
    ("Has a Netflix subscription.", "Stopped paying for Netflix.", None, "contradiction"),
    ("有 Netflix 会员。", "Netflix 会员停了。", None, "contradiction"),
    ("有 Netflix 会员。", "Netflix 会员停了。", "subscriptions.netflix", "contradiction"),
    ("Cancelled Netflix.", "Has a Netflix subscription.", None, "listed or changed"),
    ("Cancelled the Friday meeting.", "The Friday meeting is cancelled.", None, "duplicate"),
    ("Bought a ring for her.", "给她买了一枚戒指。", None, "duplicate"),
    ("Has a Netflix subscription.", "Netflix 会员还在用。", None, "duplicate"),
])
def test_a_thing_told_ended(real_embedder, old: str, new: str, subject: str | None,
                            verdict: str) -> None:
    """"Has a Netflix subscription" / "Netflix 已经退订了": a change, through the real
    model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # "always" turned "never", each side a rule of its own over other things, a word such as
    # "folder" in common (a trial of `dreamd remember` superseded the first with the second)
    ("Always write book reviews in the Clippings folder",
     "Never publish notes from the Daily folder", None, "kept apart"),
    ("Always run the tests before pushing.", "Never merge pull requests on Fridays.", None,
     "kept apart"),
    ("总是把读书笔记放在 Clippings 文件夹。", "永远不要发布 Daily 文件夹里的笔记。", None,
     "kept apart"),
    # ... but one rule turned, in the same words or in a word or two of its own, is a change
    ("Always publish notes from the Daily folder.",
     "Never publish notes from the Daily folder.", None, "contradiction"),
    ("Always write book reviews in the Clippings folder",
     "Never write book reviews in the Clippings folder", "notes.reviews", "contradiction"),
    ("Always respond in English.", "Never reply in English.", None, "contradiction"),
    ("Always use tabs for indentation.", "Never indent with tabs.", None, "contradiction"),
    ("Always use tabs for indentation.", "Never indent with tab characters.", None,
     "listed or changed"),
    ("每次提交前都要跑测试。", "提交前从不跑测试。", None, "contradiction"),
])
def test_a_rule_turned_over_another_thing(real_embedder, old: str, new: str,
                                          subject: str | None, verdict: str) -> None:
    """Two rules, one "always", one "never", of other actions over other things are two
    rules; one rule turned is a change, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a rule turned, each side in a place of its own: perhaps two rules, listed; the same
    # place on both sides is the change
    ("Always use type hints in library code.", "Never use type hints in notebooks.", None,
     "kept apart"),
    ("Don't use emoji in code comments.", "Use emoji in chat replies.", None, "kept apart"),
    ("代码注释里不要用表情。", "聊天回复里可以用表情。", None, "kept apart"),
    ("Always use type hints in library code.", "Never use type hints in library code.", None,
     "contradiction"),
    ("Don't use emoji in chat replies.", "Use emoji in chat replies.", None, "contradiction"),
    ("代码注释里不要用表情。", "代码注释里可以用表情。", None, "contradiction"),
    # a change told by its verb, a value of a thing both name replaced, in few shared words:
    # listed with the values, never superseded on that alone (the thing both name may be
    # who changed something else: see test_a_change_told_of_another_relation_supersedes_nothing)
    ("The gRPC service is exposed on 50051.",
     "We moved the gRPC listener to 50052 to avoid a clash with the sidecar.", None,
     "possible_contradiction"),
    ("Password manager: 1Password", "密码管理已经换成 Bitwarden 了", None,
     "possible_contradiction"),
    ("我爸妈住在鼓楼区湖滨路 12 号。", "我爸妈搬到了仓山区金山大道 5 号。", None, "contradiction"),
    # ... not a move of another thing, of another one of its kind, of someone else, nor of
    # one thing of several
    ("Our Slack workspace is acme-eng.", "Moved the design files to Figma team acme-design.",
     None, "kept apart"),
    ("The project codename is Bluebird.", "另一个项目的代号改成了 Kestrel。", None, "kept apart"),
    ("我爸妈住在鼓楼区湖滨路 12 号。", "我哥搬到了仓山区金山大道 5 号。", None, "kept apart"),
    ("Runs 5k three times a week and swims on Sundays.", "No more swimming — the pool closed.",
     None, "possible_contradiction"),
    # a name written in Latin letters on both sides of an English / Chinese pair, the change
    # told: compared by its letters
    ("We track bugs in Bugzilla.", "我们的缺陷跟踪已经从 Bugzilla 切到了 GitLab Issues。", None,
     "contradiction"),
    ("My dog is named Mochi.", "我的狗现在叫 Tofu", None, "contradiction"),
    ("我的狗叫 Mochi。", "My dog is now called Tofu.", None, "contradiction"),
    # ... not of another animal, nor with no change told, nor of another sister
    ("My dog is named Mochi.", "我的猫现在叫 Tofu", None, "kept apart"),
    ("Has a dog named Pepper.", "还养了一只猫，叫 Salt。", None, "kept apart"),
    ("Sister lives in Vancouver.", "另一个姐姐住在多伦多", None, "kept apart"),
    # two deployment environments, in English or Chinese: two facts
    ("The test environment runs Postgres 15.", "生产环境用 Postgres 16", None, "distinct"),
    ("开发库 db-dev.internal", "生产库 db-prod.internal", None, "distinct"),
    ("生产环境部署在 us-east-1。", "The staging environment is deployed in us-east-1.", None,
     "distinct"),
    # ... also when the environment reads as a name (QA, UAT), or is a DR site or a sandbox
    ("The staging database listens on port 6543.", "The QA database listens on port 6544.",
     None, "distinct"),
    ("The staging database listens on port 6543.", "The UAT database listens on port 6544.",
     None, "distinct"),
    ("The primary cluster is in Frankfurt.", "The DR cluster is in Dublin.", None, "kept apart"),
    ("预发环境数据库端口是 6543。", "灾备环境数据库端口是 6544。", None, "distinct"),
    ("Payments use the Stripe sandbox key from Vault.", "Payments in production use the live "
     "Stripe key from Vault.", None, "kept apart"),
    ("The production database listens on port 6543.",
     "The pre-prod database listens on port 6544.", None, "distinct"),
    # ... while one environment's value changed is a change, and a doctor is no DR site
    ("The QA database listens on port 6543.", "The QA database listens on port 6544 now.",
     None, "contradiction"),
    ("The UAT cluster runs Kubernetes 1.28.", "The UAT cluster runs Kubernetes 1.29.", None,
     "contradiction"),
    ("Dr Chen is my dentist.", "Dr Wang is my dentist now.", None, "contradiction"),
    # ... one environment's value changed is a change
    ("测试环境的域名是 test.kuaiyun.cn。", "测试环境的域名换成了 staging.kuaiyun.cn。", None,
     "contradiction"),
    ("The staging DB is on port 5432.", "The staging DB moved to port 6432.", None,
     "contradiction"),
    ("生产环境用 Postgres 15。", "Production now runs Postgres 16.", None, "contradiction"),
    ("Staging runs Node 18.", "Staging now runs Node 20.", None, "contradiction"),
    # ... and an environment a setting is set to is its value
    ("APP_ENV 设成 production", "APP_ENV 改成 development 了", None, "contradiction"),
    # ... nor is a line of work or a team named like an environment: a change of job is
    # told, not kept apart as two environments' facts
    ("I'm a dev at Acme.", "I moved into production support at Acme.", None,
     "listed or changed"),
    ("Works in film production at Pixar.", "Now works in software development at Google.",
     None, "not other environment"),
    ("My sister works in production at a TV studio.",
     "My sister now works in development at a game studio.", None, "not other environment"),
    ("Alice works in QA.", "Alice moved to the dev team.", None, "not other environment"),
    ("我在生产部工作。", "我调到开发部了。", None, "not other environment"),
    # ... while an environment named before a deployment thing stays one
    ("We set up a dev database on port 5433.", "The production database is on port 5432.",
     None, "distinct"),
    ("The dev server runs Node 18.", "The production server runs Node 20.", None, "distinct"),
])
def test_another_place_environment_or_script_and_a_change_told_in_few_words(
        real_embedder, old: str, new: str, subject: str | None, verdict: str) -> None:
    """A rule turned in another place, two environments, a name in Latin letters across
    languages and a change told by its verb at a low cosine, with their look-alikes, through
    the real model."""
    if verdict == "not other environment":
        a, b = real_embedder.embed([old, new])
        sides = [MemorySide("user", subject, read_claim(text, written=date(2026, 1, day)))
                 for day, text in ((1, old), (20, new))]
        assert judge_pair(sides[0], sides[1], cosine=float(a @ b)).rule != "other environment"
        return
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new"), [
    # the thing both name is the one who changes something else, or a value of another
    # relation of it is replaced: listed at most (before the rule: possible_contradiction)
    ("Mom lives in Ohio.", "Mom switched her phone plan to Verizon."),
    ("The team uses Slack for chat.", "We moved the team wiki to Notion."),
    ("The server runs Ubuntu 22.04.", "We moved the server to Hetzner."),
])
def test_a_change_told_of_another_relation_supersedes_nothing(real_embedder, old: str,
                                                               new: str) -> None:
    _judged_as(real_embedder, old, new, None, "kept apart")
