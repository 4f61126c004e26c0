"""Merges of two facts and supersessions of a fact that still holds, by family, through the
product's real model.

``bench/write_pairs/blind15.jsonl`` (300 pairs written apart from the rules) was measured
before any rule changed — 234 of 300 right, duplicates 0.79, contradictions 0.74, 13 merges
of two facts, 6 supersessions of a fact that still holds — and its wrong merges and
supersessions were then read by family: another person holding the fact, home and work, a
liking and its antonym, one fact of several told changed, another thing of one kind, a value
set aside beside the other's, an older memory of several facts. Each family is a table below
with look-alikes that must still merge or supersede; the floors of blind15 are today's
figures, so that any loss fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from judged_pairs import judged_as as _judged_as  # noqa: E402
from write_decisions import decide_pair, embed_pairs, outcome_of, read_pairs  # noqa: E402


def test_the_blind15_pairs_stay_where_they_are(real_embedder) -> None:
    """``blind15.jsonl`` decided as ``remember`` decides it: today's figures (254 of 300,
    1 merge of two facts, 2 supersessions of a fact that still holds); any loss fails."""
    rows = read_pairs(REPO / "bench" / "write_pairs" / "blind15.jsonl")
    vectors = embed_pairs(real_embedder, rows)
    outcomes = [outcome_of(decide_pair(row, vectors[2 * i], vectors[2 * i + 1]))
                for i, row in enumerate(rows)]
    merges = [r["id"] for r, o in zip(rows, outcomes, strict=True)
              if o == "duplicate" and r["label"] != "duplicate"]
    supersessions = [r["id"] for r, o in zip(rows, outcomes, strict=True) if o == "contradiction"
                     and r["label"] in {"distinct", "series", "partial_change"}]
    assert len(merges) <= 1, merges
    assert len(supersessions) <= 1, supersessions  # 2 before "日活" / "月活" was read

    def recall(label: str) -> float:
        chosen = [o for r, o in zip(rows, outcomes, strict=True) if r["label"] == label]
        return sum(o == label for o in chosen) / len(chosen)

    assert recall("duplicate") >= 0.79
    assert recall("contradiction") >= 0.82
    kept = sum(o == "possible contradiction" for r, o in zip(rows, outcomes, strict=True)
               if r["label"] == "partial_change")
    assert kept >= 14, kept


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # another person holds the fact: never a copy or a change of the user's
    ("不吃香菜。", "老婆不吃香菜。", None, "distinct"),
    ("Favorite cuisine is Thai.", "Partner's favorite cuisine is Korean.", None, "distinct"),
    ("Allergic to shellfish.", "My son is allergic to shellfish.", None, "distinct"),
    ("老婆不吃香菜。", "我老婆不吃香菜。", None, "duplicate"),
    ("Son Leo is allergic to peanuts.", "Leo, their boy, has a peanut allergy.", None,
     "duplicate"),
    # where one lives and where one works are two places
    ("Lives in Suzhou.", "在苏州工业园区上班。", None, "kept apart"),
    ("住在苏州工业园区。", "公司在苏州高新区。", None, "distinct"),
    ("Lives in Austin.", "The office is in Austin.", None, "distinct"),
    ("Lives in Suzhou.", "住在苏州。", None, "duplicate"),
    ("坐3号线上班", "坐10号线上班", None, "contradiction"),
    ("用户在杭州工作。", "用户的工作地点是杭州。", None, "duplicate"),
    # a liking and its antonym, a thing and its omission ("tastes like" is no liking)
    ("Likes cilantro.", "Can't stand cilantro — tastes like soap.", None, "contradiction"),
    ("喜欢香菜。", "受不了香菜，一股肥皂味。", None, "contradiction"),
    ("Likes semicolons in JavaScript.", "Prefers omitting semicolons in JS (standard style).",
     None, "listed or changed"),
    ("这个仓库是私有的。", "这个仓库已经开源了。", None, "contradiction"),
    ("The repo is private.", "The repo is open source now.", None, "contradiction"),
    ("Prefers verbose logging in dev builds.", "Wants quiet, minimal logging in dev builds.",
     None, "contradiction"),
    ("喜欢详细的回答，越全面越好。", "回答要简短，别长篇大论。", "answers.length",
     "listed or changed"),
    ("喜欢详细的回答，越全面越好。", "回答越详细越好。", "answers.length", "duplicate"),
    ("早上喝咖啡。", "晚上喝茶。", "user.drinks", "kept apart"),
    ("Hates long phone calls; prefers text.",
     "Would rather text than be on the phone for a long time.", None, "duplicate"),
    ("The soup tastes like lemon.", "The soup tastes of lemon.", None, "duplicate"),
    ("儿子对花生过敏。", "我儿子不能吃花生，会过敏。", None, "duplicate"),
    # one fact of several told changed ("again", "passed away", "现在…了"): both kept, listed
    ("Vegetarian, avoids caffeine, and doesn't drink alcohol.",
     "Started drinking coffee again; still vegetarian and no alcohol.", None,
     "possible_contradiction"),
    ("Has a cat (Luna) and a dog (Max).",
     "Max the dog passed away in March; Luna the cat is still around.", None,
     "possible_contradiction"),
    ("孩子在上海读小学，每天坐校车上学。", "孩子现在每天自己骑车上学了。", None,
     "possible_contradiction"),
    ("I'm learning Japanese, currently around JLPT N4.",
     "My Japanese is at roughly N4 level and I'm still studying it.", None, "duplicate"),
    ("Takes the bus to work.", "Still takes the bus to work.", None, "duplicate"),
    # the same words of another thing of one kind
    ("儿子在学游泳。", "儿子在学围棋。", None, "kept apart"),
    ("Subscribes to Spotify Premium.", "Subscribes to YouTube Premium.", None, "kept apart"),
    ("房子是三室两卫。", "房子是三室一卫。", None, "kept apart"),
    ("儿子在学游泳。", "儿子最近在学游泳。", None, "duplicate"),
    # across languages only the relation read on both sides, and the model unsure
    ("对青霉素过敏。", "Allergic to latex.", "allergy", "kept apart"),
    ("对花生过敏。", "Allergic to shellfish.", "allergy", "kept apart"),
    ("对花生过敏。", "Allergic to peanuts.", "allergy", "duplicate"),
    ("I'm allergic to penicillin.", "我对青霉素过敏。", "user.allergies", "duplicate"),
    ("Subscribes to Netflix.", "Has a Netflix subscription.", None, "duplicate"),
    ("Lives in NYC.", "Lives in New York City.", None, "duplicate"),
    ("The mobile app is written in Flutter.", "Our mobile app is written in Flutter.", None,
     "duplicate"),
    # a value stated beside the other's, which is set aside ("taken", "not", 被占用)
    ("Postgres on the dev box listens on 5432.",
     "Dev box Postgres listens on 5433 (5432 is taken by the old install).", None,
     "listed or changed"),
    ("开发机上的 Postgres 端口是 5432。", "开发机 Postgres 用 5433，5432 被旧版本占用了。", None,
     "listed or changed"),
    ("Redis listens on 6379.", "Redis listens on 6380, not 6379.", None, "contradiction"),
    ("每天晚上十一点前睡觉。", "作息规律，晚上 11 点前睡，早上 7 点起。", None, "duplicate"),
    ("Redis listens on 6379.", "Redis listens on port 6379 on the dev box.", None,
     "duplicate"),
])
def test_a_merge_never_joins_two_facts(real_embedder, old: str, new: str,
                                       subject: str | None, verdict: str) -> None:
    """The families of merges of two facts a blind set (``blind15.jsonl``) showed: another
    person holding the fact, home and work, a liking and its antonym, one fact of several
    told changed, another thing of one kind, a value set aside beside the other's; each with
    look-alikes that must still merge, in English and Chinese, through the real model."""
    _judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the newer changes one fact of several and says what still holds, leaving a name of the
    # older unsaid; a newer that names all the older named restates the rest
    ("Deploys go through ArgoCD to the EKS cluster in eu-west-1.",
     "Cluster moved to eu-central-1; still deployed via ArgoCD.", "possible_contradiction"),
    ("部署走 ArgoCD，集群在 eu-west-1 的 EKS 上。",
     "集群迁到 eu-central-1 了，仍然用 ArgoCD 部署。", "possible_contradiction"),
    ("Senior engineer at Atlassian in Sydney.",
     "Now a staff engineer at Atlassian, still in Sydney.", "contradiction"),
    # several things named, each with its version; the newer names one of them
    ("Backend is Django 4.2 on Python 3.11 with Postgres 14.", "Upgraded Postgres from 14 to 16.",
     "possible_contradiction"),
    ("Backend runs Postgres 14.", "Upgraded Postgres from 14 to 16.", "contradiction"),
    # values written otherwise than they read ("May 2", 周一) found in their own clauses
    ("Trip to Japan: fly out May 2, stay in Kyoto, back May 12.",
     "Japan trip return flight moved to May 14.", "possible_contradiction"),
    ("Return flight from Japan is on May 12.", "Japan trip return flight moved to May 14.",
     "contradiction"),
    ("每周一三五去健身房，周末爬山。", "健身房改成周二四了。", "possible_contradiction"),
    ("每周一三五去健身房。", "健身房改成周二四了。", "contradiction"),
    # one member of the family on each side: two people
    ("王老师是女儿的班主任。", "王老师是儿子的钢琴老师。", "distinct"),
    ("Ms. Wang is my daughter's homeroom teacher.", "Ms. Wang is my son's piano teacher.",
     "distinct"),
    ("Mother-in-law visits every Christmas.", "Every Christmas his wife's mother comes over.",
     "duplicate"),
    # a statement of the older the newer denies while a denial elsewhere in the older hid it
    ("文章开头不要寒暄，结尾要有总结。", "结尾不用总结了，直接结束就行。", "kept apart"),
    ("Don't open with small talk; end with a summary.",
     "No need for a summary at the end anymore.", "possible_contradiction"),
    ("儿子对猫毛过敏。", "儿子对猫毛过敏，所以家里不养猫。", "duplicate"),
    # an antonym of the lexicon's, in English and Chinese
    ("性格外向。", "性格内向。", "contradiction"),
    ("Quite an extrovert, loves a crowd.", "Actually an introvert; crowds drain them.",
     "contradiction"),
    ("Outgoing, likes parties.", "性格外向，喜欢聚会。", "duplicate"),
    # workdays and the weekend are two cases; another time on the same days is the change
    ("I get up at 6am on weekdays.", "I get up at 6am on weekends.", "kept apart"),
    ("工作日早上六点起床。", "周末早上六点起床。", "kept apart"),
    ("I get up at 6am on weekdays.", "I get up at 7am on weekdays.", "contradiction"),
    ("工作日早上六点起床。", "工作日早上七点起床。", "contradiction"),
    # a change told by "cut to", "rebooked": the newer supersedes; of another thing, not
    ("Company lunch stipend is $20 per day.", "Lunch stipend was cut to $15/day.",
     "contradiction"),
    ("午餐补贴每天 20 美元。", "Lunch stipend was cut to $15/day.", "contradiction"),
    ("Flying to Tokyo on April 3.", "Tokyo flight rebooked to April 5.", "contradiction"),
    ("Lunch stipend is $20 per day.", "Dinner stipend was cut to $15/day.", "kept apart"),
])
def test_a_supersession_never_hides_a_fact_that_holds(real_embedder, old: str, new: str,
                                                      verdict: str) -> None:
    """The families of supersessions of a fact that still holds: an older memory of several
    facts of which the newer changes one, two people of one family, workdays and the
    weekend; each with the plain change beside it, through the real model."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a place and the place it lies in, after a comma, are one value: the change of it
    # supersedes; two places in clauses of their own are two facts, the older listed
    ("Lives in Austin, Texas.", "Moved to Denver last month.", "contradiction"),
    ("Lives in Portland, Oregon.", "Lives in Seattle now.", "contradiction"),
    ("Lives in Austin, works in Dallas.", "Moved to Denver last month.",
     "possible_contradiction"),
])
def test_a_place_in_a_place_is_one_value(real_embedder, old: str, new: str,
                                         verdict: str) -> None:
    _judged_as(real_embedder, old, new, "home.city", verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one size in two units of a thousand, as people count them: the same value, not a change
    ("The container memory limit is 1.5 GB.", "Container memory limit: 1500 MB.", "duplicate"),
    ("Max upload size is 1 GB.", "Max upload size is 1000 MB.", "duplicate"),
    ("磁盘配额是 2 TB。", "磁盘配额是 2000 GB。", "duplicate"),
    ("Max upload size is 1 GB.", "Uploads are capped at 1024 MB.", "duplicate"),
    # another size stays a change, in one unit or two; "512 MB" is not "500 MB"
    ("Max upload size is 1.5 GB.", "Max upload size is 1600 MB.", "contradiction"),
    ("Max upload size is 500 MB.", "Max upload size is 512 MB.", "contradiction"),
    ("磁盘配额是 2 TB。", "磁盘配额是 3000 GB。", "contradiction"),
    ("Artifacts may be up to 1.5 GB.", "Artifacts may be up to 1.5 MB.", "contradiction"),
    # two sizes written in one unit, one of them a round number of the next unit up: a change
    # ("1024 MB" read back as "1 GB" made "1000 MB" / "1024 MB" one value, and merged them)
    ("Upload limit is 1000 MB.", "Upload limit is 1024 MB.", "contradiction"),
    ("上传上限是 1000 MB。", "上传上限是 1024 MB。", "contradiction"),
    ("Disk quota is 2048 GB.", "Disk quota is 2000 GB.", "contradiction"),
    ("磁盘配额是 2000 GB。", "磁盘配额现在是 2048 GB。", "contradiction"),
    ("Upload limit is 2 GB.", "Upload limit is 2048 MB.", "duplicate"),
    ("上传上限是 2 GB。", "上传上限是 2000 MB。", "duplicate"),
])
def test_one_size_in_two_units_is_one_value(real_embedder, old: str, new: str,
                                            verdict: str) -> None:
    """blind18: "1.5 GB" / "1500 MB" was superseded as a change (the reader counts sizes in
    units of 1,024, people in thousands)."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a role a user has one holder of: another holder is a change, whichever way round
    ("Anna is my manager.", "Ben is my manager.", "contradiction"),
    ("Anna is my manager.", "My manager is Ben now.", "contradiction"),
    ("My manager is Anna.", "Ben is my manager.", "contradiction"),
    ("Marta is our tech lead.", "Joon is our tech lead.", "contradiction"),
    ("Dr. Okafor is my dentist.", "Dr. Schmidt is my dentist.", "contradiction"),
    ("李娜是我的经理。", "王强是我的经理。", "contradiction"),
    ("李娜是我的经理。", "我的经理现在是王强。", "contradiction"),
    ("我的导师是王老师。", "我的导师换成了李老师。", "contradiction"),
    ("我老公是张伟。", "我老公是李强。", "contradiction"),
    ("My manager is Chen Jing.", "我的经理现在是周敏。", "contradiction"),
    # the same holder told again, a title or a script aside
    ("Dr. Okafor is my dentist.", "Okafor is my dentist.", "duplicate"),
    ("My manager is Chen Jing.", "我的经理是陈静。", "duplicate"),
    ("Marta is our tech lead.", "Marta is the tech lead of our team.", "duplicate"),
    # one holder, two roles; a role of several holders; another person's role: two facts
    ("Priya is my manager.", "Priya is my skip-level.", "distinct"),
    ("My manager is Priya.", "My skip-level is Priya.", "distinct"),
    ("张伟是我的经理。", "张伟是我的邻居。", "distinct"),
    ("Alice is my sister.", "Jane is my sister.", "distinct"),
    ("Tom is my friend.", "Sam is my friend.", "distinct"),
    ("Anna is my manager.", "Anna is Ben's manager.", "distinct"),
    ("李娜是我的经理。", "李娜是王强的经理。", "distinct"),
    # what someone is, not who holds a role
    ("我老公是程序员。", "我老公是湖南人。", "kept apart"),
])
def test_one_holder_of_a_role(real_embedder, old: str, new: str, verdict: str) -> None:
    """blind18: "X is my manager" / "Y is my manager" was read as two facts (the holder
    stands where a slot stands in "my manager is X"), and "Priya is my manager" / "Priya is
    my skip-level" as a change."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the same rule for another occasion, another thing at one time, one value of two things
    ("Run the tests before every push.", "Run the smoke tests before every deploy.",
     "kept apart"),
    ("Back up the database after each release.", "Back up the database after each migration.",
     "kept apart"),
    ("周一早上开站会。", "周一早上交周报。", "kept apart"),
    ("The API listens on port 8080.", "The admin dashboard listens on port 8080.", "kept apart"),
    # the same rule or value told again
    ("Run the tests before every push.", "Always run the test suite prior to pushing.",
     "duplicate"),
    ("Run the tests before every push.", "Run the tests before each push.", "duplicate"),
    ("The API listens on port 8080.", "The API server listens on port 8080.", "duplicate"),
    ("周一早上开站会。", "每周一早上开站会。", "duplicate"),
])
def test_a_rule_for_another_occasion_is_never_merged(real_embedder, old: str, new: str,
                                                     verdict: str) -> None:
    """blind18: "Run the tests before every push" / "Run the smoke tests before every
    deploy" and "The API listens on port 8080" / "The admin dashboard listens on port 8080"
    were merged into one memory."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the same choice where another language or file holds it: listed, never superseded
    ("Prefers tabs in Go.", "Prefers tabs in Makefiles.", "kept apart"),
    ("Use single quotes in Python.", "Use single quotes in TypeScript.", "kept apart"),
    ("Use 2-space indentation in JavaScript.", "Use 2-space indentation in Python.",
     "kept apart"),
    ("Python 里用单引号。", "TypeScript 里用单引号。", "kept apart"),
    # a language named first in a Chinese sentence is a name all the same (no capitals in
    # Chinese to tell it): "Go 代码里" / "Python 代码里" was merged, or superseded
    ("Go 代码里用 tab 缩进。", "Python 代码里用 tab 缩进。", "kept apart"),
    ("Go 代码里用 tab 缩进。", "Python 代码里用四个空格缩进。", "kept apart"),
    ("Go 代码用 gofmt 格式化。", "Python 代码用 black 格式化。", "kept apart"),
    ("Go 代码里用 tab 缩进。", "Go 代码里用四个空格缩进。", "contradiction"),
    ("Python 代码用 4 个空格缩进。", "Python 代码用 2 个空格缩进。", "contradiction"),
    # the choice itself changed in one place, or a thing written in another language
    ("Prefers tabs in Go.", "Prefers spaces in Go.", "contradiction"),
    ("Use 2-space indentation in JavaScript.", "Use 4-space indentation in JavaScript.",
     "contradiction"),
    ("The backend is written in Go.", "The backend is written in Rust.", "contradiction"),
    ("Lives in Berlin.", "Lives in Munich.", "contradiction"),
    # a list a thing includes holds several values; "the default" holds one
    ("Supported browsers include Firefox.", "Supported browsers include Safari.", "distinct"),
    ("支持的浏览器包括 Firefox。", "支持的浏览器包括 Safari。", "distinct"),
    ("The default browser is Firefox.", "The default browser is Safari.", "contradiction"),
])
def test_a_choice_in_another_scope_is_never_superseded(real_embedder, old: str, new: str,
                                                       verdict: str) -> None:
    """blind18 / blind16: "Prefers tabs in Go" / "Prefers tabs in Makefiles" and "Supported
    browsers include Firefox" / "… include Safari" superseded a fact that still holds."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a thing preferred over another, the two traded, one of them inflected on one side
    ("Prefers rebase over merge commits.", "Prefers merge commits over rebasing.",
     "contradiction"),
    ("Prefers squash merges over rebasing.", "Prefers rebasing over squash merges.",
     "contradiction"),
    ("Prefers tabs over spaces.", "Prefers spaces over tabs.", "contradiction"),
    ("比起咖啡更喜欢喝茶。", "比起茶更喜欢喝咖啡。", "contradiction"),
    # the same preference told again
    ("Prefers tea to coffee.", "Would rather drink tea than coffee.", "duplicate"),
    ("Prefers rebase over merge commits.", "Prefers rebase over merge commits!", "duplicate"),
])
def test_a_preference_traded_with_its_rival_is_a_change(real_embedder, old: str, new: str,
                                                        verdict: str) -> None:
    """blind16: "Prefers rebase over merge commits" / "Prefers merge commits over rebasing"
    was merged into one memory stating both ("rebase" and "rebasing" read apart)."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # "user" / 用户 naming a thing of a system: two services, tables, data sets
    ("订单服务的数据库是 MySQL。", "用户服务的数据库是 MySQL。", "kept apart"),
    ("用户表按 user_id 分 16 个库。", "订单表按 user_id 分 16 个库。", "kept apart"),
    ("用户中心用 Java 写的。", "订单中心用 Java 写的。", "kept apart"),
    ("用户数据每天备份。", "订单数据每天备份。", "kept apart"),
    ("The user service uses MySQL.", "The order service uses MySQL.", "kept apart"),
    ("The users table is sharded by user_id.", "The orders table is sharded by user_id.",
     "kept apart"),
    # the user a memory is about, said or left out: one fact
    ("用户喜欢用 Vim。", "喜欢用 Vim。", "duplicate"),
    ("用户住在杭州。", "住在杭州。", "duplicate"),
    ("The user prefers dark mode.", "Prefers dark mode.", "duplicate"),
    ("The user service uses MySQL.", "The user service runs on MySQL.", "duplicate"),
])
def test_a_thing_named_for_its_users_is_not_the_user(real_embedder, old: str, new: str,
                                                     verdict: str) -> None:
    """blind15 / blind16: "用户表" / "订单表" and "用户服务" / "订单服务" were merged: 用户 was
    read as the user a memory is about and left out, leaving "表" / "订单表"."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # May after "for" or "the" is a month: two records of two months
    ("AWS bill for May: $6,840.", "AWS bill for June: $7,210.", "series"),
    ("AWS bill for March: $6,840.", "AWS bill for April: $7,210.", "series"),
    ("The May release is frozen.", "The June release is frozen.", "kept apart"),
    ("Ask for help when you may be wrong.", "Ask for help when you might be wrong.",
     "duplicate"),
    # places one has been to are several
    ("去年去过成都出差。", "去年去过重庆出差。", "distinct"),
    ("去过日本旅游。", "去过泰国旅游。", "distinct"),
    ("Has been to Chengdu for work.", "Has been to Chongqing for work.", "distinct"),
    ("去年去过成都出差。", "去年到过成都出差。", "duplicate"),
    ("住在成都。", "搬到重庆了。", "contradiction"),
])
def test_months_and_places_been_to_are_several(real_embedder, old: str, new: str,
                                               verdict: str) -> None:
    """blind16 / family58: "AWS bill for May" / "for June" and "去过成都" / "去过重庆" were
    superseded as changes of one value."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the holder of a role told again, either way round, with or without whose, across
    # English and Chinese (the words share nothing there, the cosine sits at 0.4–0.6)
    ("直属领导是张伟。", "Manager is Zhang Wei.", "duplicate"),
    ("团队负责人是王磊。", "Team lead is Wang Lei.", "duplicate"),
    ("HR contact is Zhang Min.", "人事对接人是张敏。", "duplicate"),
    ("My manager is Anna.", "Anna is my manager.", "duplicate"),
    ("The tech lead is Marta.", "Marta is our tech lead.", "duplicate"),
    # another holder, another role
    ("My HR contact is Zhang Min.", "我的 HR 是李娜。", "contradiction"),
    ("我们团队的负责人是王磊。", "我们团队的负责人换成了李强。", "contradiction"),
    ("Manager is Alice.", "Alice 是项目经理", "distinct"),
])
def test_the_holder_of_a_role_told_again(real_embedder, old: str, new: str,
                                         verdict: str) -> None:
    """blind6 / adversarial: "直属领导是张伟" / "Manager is Zhang Wei" was two facts, and
    "Manager is Alice" / "Alice 是项目经理" (another role) one."""
    _judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # where one lives or works, in the same words, another place: a change, though two short
    # sentences about two cities sit at low cosines (0.3–0.45)
    ("Lives in Hangzhou.", "Lives in Shenzhen.", "contradiction"),
    ("Works at Google.", "Works at Alibaba.", "contradiction"),
    ("住在杭州。", "住在深圳。", "contradiction"),
    ("I live in Beijing", "我住在上海", "listed or changed"),
    # another relation, a thing used beside another, the same place said longer
    ("Lives in Hangzhou.", "Works in Shenzhen.", "kept apart"),
    ("Uses Vim.", "Uses Slack.", "kept apart"),
    ("Lives in Berlin.", "Lives in Berlin, Germany.", "duplicate"),
])
def test_another_home_or_workplace_in_the_same_words(real_embedder, old: str, new: str,
                                                     verdict: str) -> None:
    """blind18 / adversarial: "Lives in Hangzhou" / "Lives in Shenzhen" was only listed (the
    cosine of the rendered memories sat at 0.37, below the floor for a sure change)."""
    _judged_as(real_embedder, old, new, None, verdict)
