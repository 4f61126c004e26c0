"""Merges and supersessions of two facts the development pair sets showed, by family, through
the product's real model.

Read by cause from the wrong merges and supersessions of every ``bench/write_pairs`` set but
the held-out ``blind16`` and ``blind17``: a person whose person one memory tells and whom the
other names as who they are ("张伟是我的直属领导" / "张伟的直属领导是王总"); one version of a
thing denied beside the thing used ("Uses Python" / "不用 Python 2"); a thing free of what the
other denies ("戒酒了" / "喝无酒精啤酒"); where one lives changed, told beside where one comes
from ("Lives in Hangzhou." / "住在上海，老家杭州"); two things named by how often they happen
("Nightly backup at 02:00 UTC." / "Weekly backup at 04:00 UTC on Sundays."); what is done when
a thing fails against the usual way ("所有服务都通过 `config-center` 拉配置。" / "`config-center`
挂了的话，服务会用本地缓存的配置启动。"); tools of two kinds one project uses at once
("Project Falcon uses PostgreSQL." / "Project Falcon uses Redis."); the spare of a thing
against the thing itself ("Uses the Shanghai server." / "备用服务器在上海"); two animals given
one name across languages ("My dog is named Mochi." / "我的猫叫 Mochi"). Each family is a
table in English and Chinese, with and without a subject, with the look-alikes that keep their
verdict (``bench/write_pairs/family56.jsonl`` holds them as pairs).
"""

from __future__ import annotations

import pytest
from judged_pairs import judged_as

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("张伟是我的直属领导", "张伟的直属领导是王总", None, "kept apart"),
    ("My manager is Alice.", "Alice's manager is Bob.", None, "kept apart"),
    ("Alice is my manager.", "Alice's manager is Bob.", "work.manager", "kept apart"),
    ("我的导师是李明", "李明的导师是陈教授", None, "kept apart"),
    ("My mentor is Li Ming.", "Li Ming's mentor is Professor Chen.", None, "kept apart"),
    # the same person said the same way, whose thing on both sides, a brand before 的
    ("My manager is Alice.", "Alice is my manager.", None, "duplicate"),
    ("Alice's manager is Bob.", "Bob is Alice's manager.", None, "duplicate"),
    ("我的导师是李明", "李明是我的导师", None, "duplicate"),
    ("Alice's birthday is May 3.", "Alice's birthday is on May 3rd.", None, "duplicate"),
    ("家里的扫地机器人是石头 S8", "我们家用的扫地机是石头的 S8 型号", None, "duplicate"),
])
def test_whose_person_on_one_side(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                                  subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Uses Python.", "不用 Python 2", None, "kept apart"),
    ("Uses Python.", "Don't use Python 2.", None, "kept apart"),
    ("用 Java", "不用 Java 8", None, "kept apart"),
    ("We use Node.", "Never use Node 14.", "runtime.node", "kept apart"),
    # the thing itself denied, or the same version on both sides: a change
    ("Uses Python.", "Doesn't use Python anymore.", None, "contradiction"),
    ("Uses Python 3.", "Doesn't use Python 3.", None, "contradiction"),
    ("用 Java", "不用 Java 了", None, "contradiction"),
])
def test_one_version_denied(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("戒酒了", "喝无酒精啤酒", None, "kept apart"),
    ("Quit drinking.", "Drinks alcohol-free beer.", None, "kept apart"),
    ("Doesn't drink coffee.", "Drinks decaf in the afternoon.", None, "kept apart"),
    ("不喝咖啡", "下午喝低因咖啡", None, "kept apart"),
    ("不吃糖", "喝无糖可乐", "diet.sugar", "kept apart"),
    # the thing itself: a change
    ("Quit drinking.", "Drinks beer on weekends.", None, "contradiction"),
    ("戒酒了", "周末喝啤酒", None, "contradiction"),
    ("Doesn't drink coffee.", "Drinks coffee every morning.", None, "contradiction"),
])
def test_a_thing_free_of_it(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Lives in Hangzhou.", "住在上海，老家杭州", None, "contradiction"),
    ("Lives in Austin.", "Lives in Denver; grew up in Austin.", "user.home", "contradiction"),
    ("我住在杭州", "我住在上海，老家是杭州的", None, "contradiction"),
    # where one comes from against where one lives: both hold
    ("Grew up in Austin.", "Lives in Denver.", None, "kept apart"),
    ("老家在成都", "住在深圳", None, "kept apart"),
])
def test_home_beside_origin(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Nightly backup at 02:00 UTC.", "Weekly backup at 04:00 UTC on Sundays.", None,
     "kept apart"),
    ("The daily report goes to Alice.", "The weekly report goes to Bob.", None, "kept apart"),
    ("每天的备份在凌晨两点", "每周的备份在周日凌晨四点", None, "kept apart"),
    ("Monthly budget for groceries: $600.", "Quarterly budget for groceries: $1500.",
     "budget.groceries", "kept apart"),
    # one thing, named by the same how often: a change
    ("Daily standup is at 9:30 am.", "Daily standup is at 10:00 am.", None, "contradiction"),
    ("每天的备份在凌晨两点", "每天的备份改到凌晨三点", None, "contradiction"),
    ("Weekly 1:1 with Dana is on Monday.", "Weekly 1:1 with Dana is on Wednesday.", None,
     "contradiction"),
])
def test_named_by_how_often(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("所有服务都通过 `config-center` 拉配置。",
     "`config-center` 挂了的话，服务会用本地缓存的配置启动。", None, "kept apart"),
    ("All services pull their config from config-center.",
     "If config-center is down, services start from the locally cached config.", None,
     "kept apart"),
    ("Use the VPN to reach staging.", "If the VPN is down, use the office hotspot to reach "
     "staging.", "network.staging", "kept apart"),
    ("主库在 db-primary 上。", "万一主库宕机，切到 db-replica。", None, "kept apart"),
    # the usual way said again (超时时间 is a timeout, not a failure), or changed
    ("Use the VPN to reach staging.", "连 staging 要走 VPN。", None, "duplicate"),
    ("所有服务都通过 `config-center` 拉配置。", "服务的配置都从 `config-center` 拉取。", None,
     "duplicate"),
    ("支付网关的超时时间设为 30 秒。", "支付网关超时设成 30 秒。", None, "duplicate"),
    ("API timeout is 30 seconds.", "API 超时时间是 30 秒。", None, "duplicate"),
    ("Payments go through Stripe.", "Payments now go through Adyen.", None, "contradiction"),
])
def test_what_is_done_when_it_fails(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                                    subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Project Falcon uses PostgreSQL.", "Project Falcon uses Redis.", None, "kept apart"),
    ("Our Android app is written in Kotlin.", "Our Android app uses Jetpack Compose.",
     "project.android", "kept apart"),
    ("我们的后端用 Python 写的", "我们的后端用 Django", None, "kept apart"),
    ("The backend is written in Go.", "The backend uses PostgreSQL.", None, "kept apart"),
    # a tool of the same kind, or a change told: the tool replaced
    ("Project Falcon uses PostgreSQL.", "Project Falcon uses MySQL.", None, "contradiction"),
    ("The backend is written in Go.", "The backend is written in Rust.", "project.backend",
     "contradiction"),
    ("项目用 MySQL 存数据", "项目用 PostgreSQL 存数据", None, "contradiction"),
    ("Project Falcon uses PostgreSQL.", "Project Falcon moved from PostgreSQL to Redis.", None,
     "contradiction"),
])
def test_tools_of_two_kinds(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Uses the Shanghai server.", "备用服务器在上海", None, "kept apart"),
    ("The database is in us-east-1.", "The backup database is in us-west-2.", None,
     "kept apart"),
    ("主数据库在北京机房", "备用数据库在上海机房", None, "kept apart"),
    ("My phone is an iPhone 15.", "My backup phone is a Pixel 7.", "device.phone",
     "kept apart"),
    # the thing itself on both sides, the spare on both sides, 备份 as a verb
    ("The database is in us-east-1.", "The database is in us-west-2.", None, "contradiction"),
    ("Uses the Shanghai server.", "服务器在上海", None, "duplicate"),
    ("备用服务器在上海", "备用服务器在深圳", None, "contradiction"),
    ("The spare key is with my neighbour.", "My neighbour keeps the spare key.", None,
     "duplicate"),
])
def test_spare_on_one_side(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                           subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("My dog is named Mochi.", "我的猫叫 Mochi", None, "kept apart"),
    ("Our cat is called Luna.", "我们家的狗叫 Luna", None, "kept apart"),
    ("My dog is named Mochi.", "My cat is named Mochi.", "pets.name", "kept apart"),
    ("我的狗叫 Mochi", "我的猫叫 Mochi", None, "kept apart"),
    # the same animal in the other language, or in other words
    ("My dog is named Mochi.", "我的狗叫 Mochi", None, "duplicate"),
    ("My dog is named Mochi.", "My dog is called Mochi.", None, "duplicate"),
    ("I have a rabbit named Niangao.", "我养了一只兔子叫年糕", None, "duplicate"),
])
def test_another_animal(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                        subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)
