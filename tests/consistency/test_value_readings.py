"""What a memory's words are read as, and how two readings compare (no model: the pair is
judged at a given cosine, as ``remember`` judges it with the real one). Each case is one
reading a blind pair set or a break-it round found wrong; the sentences are new ones."""

from __future__ import annotations

from datetime import date

import pytest

from consistency.claims import HOUR_OF_EITHER_HALF, Value, read_claim
from consistency.judgement import MemorySide, judge_pair


def _verdict(old: str, new: str, cosine: float, subject: str | None = None) -> str:
    return judge_pair(MemorySide("user", subject, read_claim(old)),
                      MemorySide("user", subject, read_claim(new)), cosine=cosine).verdict


def _values(text: str) -> set[tuple[str, str, str]]:
    return {(v.kind, v.text, v.unit) for v in read_claim(text).values}


@pytest.mark.parametrize(("old", "new"), [
    ("The gym membership is $55 a month.", "The gym membership is €55 a month."),
    ("每月房租 4500 元。", "每月房租 4500 美元。"),
    ("Cycles 20 km to work.", "Cycles 20 miles to work."),
    ("The suitcase limit is 23 kg.", "The suitcase limit is 23 lb."),
])
def test_the_same_amount_in_another_currency_or_unit_is_a_change(old: str, new: str) -> None:
    assert _verdict(old, new, 0.93) in {"contradiction", "possible_contradiction"}


@pytest.mark.parametrize(("old", "new"), [
    ("Cycles 20 km to work.", "Cycles about 12.4 miles to work."),
    ("The suitcase limit is 23 kg.", "The suitcase limit is 50.7 lb."),
])
def test_one_amount_in_two_units_is_the_same_value(old: str, new: str) -> None:
    assert _verdict(old, new, 0.9) == "duplicate"


def test_every_morning_is_daily_and_keeps_its_part_of_the_day() -> None:
    claim = read_claim("Water the orchids every morning.")
    assert ("frequency", "1/1", "") in _values("Water the orchids every morning.")
    assert "morning" in claim.tokens
    assert _verdict("Post the standup notes once a week.",
                    "Post the standup notes every morning.", 0.88) == "contradiction"


@pytest.mark.parametrize(("text", "rate"), [
    ("每周去游泳两次。", "2/7"),       # the period and its count written apart
    ("每周三次去练瑜伽。", "3/7"),     # not Wednesday: 周三 followed by 次
    ("一周三次。", "3/7"),
    ("周会改成双周一次。", "1/14"),    # 双周: every two weeks
])
def test_chinese_frequencies(text: str, rate: str) -> None:
    assert ("frequency", rate, "") in _values(text)


@pytest.mark.parametrize(("text", "rate"), [
    ("Dentist cleaning every six months.", "1/180"),  # the x of "six" is not "3x"'s
    ("Gets a cleaning every 6 months.", "1/180"),
    ("Visits the archive six times a year.", "6/365"),
    ("Swims 3x a week.", "3/7"),
    ("Works three nights a week.", "3/7"),
])
def test_english_counts_in_frequencies(text: str, rate: str) -> None:
    assert ("frequency", rate, "") in _values(text)


@pytest.mark.parametrize(("text", "clock"), [
    ("Typically turns in by eleven at night.", "23:00"),
    ("No calls earlier than 10 in the morning.", "10:00"),
    ("Dinner at 6:30 in the evening.", "18:30"),
    ("The pharmacy closes at seven in the evening.", "19:00"),
    ("Lunch at noon with the team.", "12:00"),
    ("Backups run at midnight.", "00:00"),
    ("The baby wakes at two at night.", "02:00"),
])
def test_english_clock_times_told_by_the_part_of_the_day(text: str, clock: str) -> None:
    assert ("time", clock, "") in _values(text)


@pytest.mark.parametrize(("text", "value"), [
    ("The standup is at 10, not 9:30.", ("time", "10:00", HOUR_OF_EITHER_HALF)),
    ("Wake up at 6 every day.", ("time", "06:00", HOUR_OF_EITHER_HALF)),
    ("The call is at 7 sharp.", ("time", "07:00", HOUR_OF_EITHER_HALF)),
    ("Trains leave at 17.", ("time", "17:00", "")),
    ("Meet at 8 o'clock.", ("time", "08:00", HOUR_OF_EITHER_HALF)),
    # an amount after "at", and a number that does not end its clause, stay numbers
    ("Retries are capped at 5.", ("number", "5", "")),
    ("The request limit is set at 8.", ("number", "8", "")),
    ("Stop at 10 items per page.", ("number", "10", "")),
    ("Churn sits at 2.5 percent.", ("number", "2.5", "%")),
])
def test_a_bare_hour_after_at_is_a_clock_time(text: str, value: tuple[str, str, str]) -> None:
    assert value in _values(text)


@pytest.mark.parametrize(("text", "day"), [
    ("发布日期是三月三号", "03-03"),
    ("生日是十二月二十五日", "12-25"),
    ("十月十号出发", "10-10"),
    ("会议定在10月1号", "10-01"),
    ("2026年十一月三十日截止", "2026-11-30"),
])
def test_chinese_dates_in_han_numerals(text: str, day: str) -> None:
    assert ("date", day, "") in _values(text)


def test_a_bedtime_in_words_and_in_digits_is_one_time() -> None:
    assert _verdict("Usually in bed by 11pm.", "Typically turns in by eleven at night.",
                    0.62) != "contradiction"
    assert _verdict("Usually in bed by 11pm.", "Usually in bed by ten at night.", 0.9) == \
        "contradiction"


@pytest.mark.parametrize(("text", "told"), [
    ("Planning to move to Singapore next year.", False),
    ("我和太太打算明年搬去新加坡。", False),
    ("Thinking about switching to Neovim.", False),
    ("准备换成 MacBook。", False),
    ("Moved to Singapore in May.", True),
    ("已经搬到深圳了。", True),
    ("迭代计划会以后改在周二开。", True),  # 计划会 is a meeting, not a plan
])
def test_a_change_planned_is_not_a_change_told(text: str, told: bool) -> None:
    assert read_claim(text).says_changed is told


def test_a_code_span_with_a_word_ending_is_the_word() -> None:
    # a list bullet and backticks around part of a word ("`if`s") are how it was typed
    assert _verdict("Prefer early returns over nested ifs",
                    "- Prefer early returns over nested `if`s.", 0.93) == "duplicate"
    assert ("code", "pnpm", "") in _values("Install with `pnpm`, never npm.")


def test_wednesday_stays_a_weekday() -> None:
    assert ("weekday", "3", "") in _values("每周三下午开周会。")


def test_a_month_written_year_dash_month_dates_a_record() -> None:
    assert read_claim("2026-02 的电费是 310 元。").event_day == date(2026, 2, 1)
    assert read_claim("Electricity bill 2026-03: $88").event_day == date(2026, 3, 1)
    assert _verdict("2026-02 的电费是 310 元。", "2026-03 的电费是 287 元。", 0.92) == "series"


def test_x_free_denies_x() -> None:
    claim = read_claim("Keeps a strictly dairy-free diet.")
    assert "dairy" in claim.negated
    assert _verdict("Can't have dairy.", "Keeps a strictly dairy-free diet.", 0.72) != \
        "contradiction"


def test_the_thing_compared_against_is_not_the_one_preferred() -> None:
    claim = read_claim("比起米饭更喜欢吃面。")
    assert claim.negated and claim.concepts.get("like") == frozenset({True})


def test_a_label_naming_another_thing_never_supersedes() -> None:
    assert _verdict("Project Kestrel: demo on Thursday", "Project Osprey: demo on Thursday",
                    0.8) != "contradiction"


def test_the_newer_saying_it_changed_is_never_merged_on_shared_values() -> None:
    assert _verdict("家里的路由器放在书房。", "家里的路由器现在挪到客厅了。", 0.66) != "duplicate"


def test_a_named_tool_with_another_version_is_related() -> None:
    assert _verdict("Java version is 17", "我们用 Java 21", 0.52) == "contradiction"


def test_a_narrower_thing_across_languages_is_not_merged() -> None:
    assert _verdict("Drinks tea at night.", "晚上喝奶茶", 0.75) != "duplicate"


@pytest.mark.parametrize(("old", "new"), [
    ("Bug backlog at the end of sprint 7: 41 tickets.",
     "Bug backlog at the end of sprint 8: 36 tickets."),
    ("Q3 的营收是 120 万元。", "Q4 的营收是 135 万元。"),
    ("Blood pressure in March: 128 mmHg.", "Blood pressure in August: 121 mmHg."),
])
def test_a_measure_of_another_period_is_a_series(old: str, new: str) -> None:
    assert _verdict(old, new, 0.9) == "series"


def test_a_period_label_is_no_count() -> None:
    assert ("period", "sprint:12", "") in _values("Sprint 12 的 velocity 是 34 点。")
    assert ("period", "quarter:2", "") in _values("Net worth at the end of Q2: $191k.")
    assert ("period", "week:3", "") in _values("第3周的周报已经交了。")


def test_two_values_changed_across_languages_is_never_sure() -> None:
    """Words the lexicon does not read cannot say what the values belong to: a weekly
    meeting moved to Friday 10:00 and a daily standup at 9:30 are perhaps two meetings."""
    assert _verdict("Orion 每周例会改到周五上午十点", "The Orion daily standup is at 9:30",
                    0.63) == "possible_contradiction"


@pytest.mark.parametrize(("old", "new"), [
    ("The health check interval is 15 seconds.", "The health check interval is 15ms."),
    ("Hikes 12 km on Sundays.", "Hikes 12 m on Sundays."),
    ("Each bag of beans weighs 250 g.", "Each bag of beans weighs 250 kg."),
    ("The kettle holds 1.7 l.", "The kettle holds 1.7 ml."),
])
def test_one_number_in_another_prefix_of_its_unit_is_never_the_same(old: str, new: str) -> None:
    assert _verdict(old, new, 0.92) in {"contradiction", "possible_contradiction"}


@pytest.mark.parametrize(("old", "new"), [
    ("The build box has 64G of memory.", "The build box has 64 GB of memory."),
    ("Log rotation after 100m.", "Log rotation after 100 MB."),
    ("The rope is 30 m long.", "The rope is 30 metres long."),
    ("Add 200 grams of sugar.", "Add 0.2 kg of sugar."),
])
def test_a_one_letter_unit_reads_as_what_the_other_side_states(old: str, new: str) -> None:
    assert _verdict(old, new, 0.9) == "duplicate"


def test_two_measures_of_one_thing_are_never_merged() -> None:
    # a distance and a duration of the same habit: another fact or a change, never one
    assert _verdict("Swims 2 km every Saturday.", "Swims for 50 minutes every Saturday.",
                    0.8) == "possible_contradiction"


@pytest.mark.parametrize(("text", "unit"), [
    ("Rent is HK$18,500.", "hkd"), ("Lunch was CHF 24.", "chf"), ("房费每晚 900 港币。", "hkd"),
    ("The pass costs 3000 yen.", "jpy"), ("Paid 450 pesos.", "mxn"), ("A$90 a week.", "aud"),
])
def test_currencies_beyond_the_four_signs(text: str, unit: str) -> None:
    assert any(kind == "number" and u == unit for kind, _t, u in _values(text))


@pytest.mark.parametrize(("old", "new"), [
    ("Prefers window seats to aisle seats.", "Prefers aisle seats to window seats."),
    ("Likes to read; prefers novels over essays.", "Likes to read; prefers essays over novels."),
    ("比起火锅更喜欢烧烤。", "比起烧烤更喜欢火锅。"),
])
def test_a_preference_turned_around_is_a_change(old: str, new: str) -> None:
    assert _verdict(old, new, 0.97) == "contradiction"


def test_a_changed_label_before_a_property_is_perhaps_another_thing() -> None:
    # "Dock 3 is for deliveries" / "Dock 4 is for deliveries": two docks, perhaps
    assert _verdict("Dock C is for deliveries.", "Dock D is for deliveries.",
                    0.88) == "possible_contradiction"
    # but a value written first and named by the copula is the value
    assert _verdict("Node 18 is our runtime.", "Node 22 is our runtime.",
                    0.92) == "contradiction"


@pytest.mark.parametrize(("old", "new"), [
    ("I'm dairy-free.", "My husband drinks dairy milk every day."),
    ("我不喝酒。", "我爸爸每天都喝酒。"),
])
def test_what_another_person_does_is_not_a_change_of_the_users(old: str, new: str) -> None:
    assert _verdict(old, new, 0.7) == "distinct"


def test_a_told_change_restated_is_the_same_fact_in_either_order() -> None:
    told, plain = "Yoga class moved to Tuesday 18:30.", "Yoga class: Tuesdays, 6:30pm."
    assert _verdict(told, plain, 0.65) == _verdict(plain, told, 0.65) == "duplicate"


def test_an_amount_and_a_day_of_the_month_are_two_values() -> None:
    assert _verdict("物业费每月 380", "物业费每月 5 号交", 0.85) == "possible_contradiction"


def test_a_city_named_in_a_street_is_no_city() -> None:
    # 杭州的"上海路" is a street: living there is not living in Shanghai
    assert not any(kind == "name" and text == "shanghai"
                   for kind, text, _u in _values("住在杭州上海路"))
    assert _verdict("Lives in Shanghai.", "住在杭州上海路", 0.6) != "duplicate"


@pytest.mark.parametrize(("old", "new"), [
    ("I'm lactose intolerant.", "My husband is lactose intolerant."),
    ("我对青霉素过敏。", "我妈妈对青霉素过敏。"),
    ("My dentist is Dr. Moreau.", "My daughter's dentist is Dr. Haas."),
    ("I live in Paris.", "My sister lives in Paris."),
    ("My grandmother lives in Lyon.", "I live in Lyon."),
    ("我住在巴黎。", "我姐姐住在巴黎。"),
])
def test_a_family_members_fact_is_never_merged_into_the_users(old: str, new: str) -> None:
    assert _verdict(old, new, 0.8) == "distinct"


def test_an_amount_with_its_currency_after_it() -> None:
    assert ("number", "20", "eur") in _values("The museum ticket is 20 €.")
    assert _verdict("The museum ticket is 20 €.", "The museum ticket is 20 £.", 0.94) in {
        "contradiction", "possible_contradiction"}


@pytest.mark.parametrize(("text", "value"), [
    ("The parking permit costs ninety-five dollars a year.", ("number", "95", "usd")),
    ("Twenty one people signed up.", ("number", "21", "")),
    ("Swims thrice weekly.", ("frequency", "3/7", "")),
    ("Four evenings a week she teaches piano.", ("frequency", "4/7", "")),
    ("物业费一年两千五", ("number", "2500", "")),
    ("年终奖一万二", ("number", "12000", "")),
    ("The backups are kept on a 48-hour cycle.", ("number", "172800", "s")),
    ("We plan in three-week cycles.", ("number", "1814400", "s")),
])
def test_amounts_said_in_words(text: str, value: tuple[str, str, str]) -> None:
    # compound number words, a count before "weekly", Han amounts said aloud (两千五 is
    # 2,500, not 2,005) and a unit joined by a hyphen
    assert value in _values(text)


def test_a_limit_is_no_denial() -> None:
    assert "atmost" in read_claim("No more than five bullets in a summary.").tokens
    assert "atmost" in read_claim("摘要最多五条").tokens
    assert "atmost" in read_claim("摘要不超过五条").tokens
    assert not read_claim("No more than five bullets in a summary.").negated


@pytest.mark.parametrize(("old", "new"), [
    ("Swims twice weekly.", "Goes swimming two times a week."),
    ("The parking permit is $95 a year.",
     "Pays ninety-five dollars a year for the parking permit."),
    ("Staging Redis listens on 6380.", "Redis on staging runs on port 6380."),
    ("Write dates the British way, day first.", "Dates in the UK style, with the day first."),
    ("Summaries: five bullets at most.", "No more than five bullets in a summary."),
])
def test_the_same_value_written_another_way_is_no_change(old: str, new: str) -> None:
    assert _verdict(old, new, 0.8) not in {"contradiction", "possible_contradiction"}


@pytest.mark.parametrize(("old", "new"), [
    ("Always run the linter before committing.", "Never commit without running the linter."),
    ("升级数据库前必须先备份。", "没有备份就不要升级数据库。"),
    ("Tag a reviewer on every pull request.",
     "No pull request goes out without a reviewer tagged."),
])
def test_a_rule_said_with_two_denials_is_never_superseded_on_them(old: str, new: str) -> None:
    # "never X without Y" says "always Y before X": at most a possible change for the user
    assert _verdict(old, new, 0.8) != "contradiction"
    assert _verdict("Always run the linter before committing.",
                    "Never run the linter before committing.", 0.9) == "contradiction"


def test_now_over_the_same_values_is_no_told_change() -> None:
    assert _verdict("女儿在读初中二年级。", "女儿现在是初中二年级的学生。", 0.85) != "contradiction"
    assert _verdict("The office is on floor 9.", "The office is now on floor 12.", 0.9) \
        == "contradiction"


def test_another_value_told_of_the_past_never_supersedes_the_present() -> None:
    assert _verdict("The build cache is now 20 GB.", "The build cache used to be 5 GB.", 0.8) \
        == "possible_contradiction"
    assert _verdict("我住在成都。", "我以前住在昆明。", 0.7) == "possible_contradiction"
    # the same thing in the past is a change: it no longer holds
    assert _verdict("Drinks coffee every day.", "Used to drink coffee but quit.", 0.7) \
        == "contradiction"
    # a change told in full, past and present
    assert _verdict("Works at Shopify.", "Used to work at Shopify, now works at Figma.", 0.7) \
        == "contradiction"


@pytest.mark.parametrize(("text", "zone"), [
    ("Office hours are 9-17 CET.", "CET"),
    ("The server clock is GMT+08:00.", "UTC+8"),
    ("Deadline: 23:59 UTC−5", "UTC-5"),
    ("My time zone is America/Sao_Paulo.", "America/Sao_Paulo"),
    ("周会按北京时间下午三点开。", "UTC+8"),
])
def test_time_zones_are_values(text: str, zone: str) -> None:
    assert ("zone", zone, "") in _values(text)


def test_a_time_on_another_clock_is_a_change() -> None:
    assert _verdict("Release window: 02:00-04:00 UTC.", "Release window: 02:00-04:00 PST.",
                    0.9) == "contradiction"


def test_a_list_of_days_that_lost_or_gained_one_is_never_merged() -> None:
    assert _verdict("Piano lessons on Tuesday, Thursday and Saturday.",
                    "Piano lessons on Tuesday and Thursday.", 0.93) == "possible_contradiction"
    assert _verdict("周二、周四上钢琴课", "周二、周四、周六上钢琴课", 0.93) \
        == "possible_contradiction"


@pytest.mark.parametrize(("old", "new"), [
    ("Lights out at 22:00.", "Lights out at 23:00 on Saturdays."),
    ("Write commit messages in English.",
     "Write commit messages in German when the repository is German."),
])
def test_a_value_for_a_case_only_one_names_is_no_sure_change(old: str, new: str) -> None:
    assert _verdict(old, new, 0.75) == "possible_contradiction"
    assert _verdict("Lights out at 22:00.", "Lights out moved to 23:00 on Saturdays.", 0.75) \
        == "contradiction"


def test_a_denied_tldr_and_a_told_mistake_are_changes() -> None:
    # "TL;DR" is one word (the lexicon's), not the name "TL": a negation before it denies it
    assert _verdict("Start every summary with a TL;DR.", "Never start a summary with a TL;DR.",
                    0.85) == "contradiction"
    # 记错 / 说错 tells that the older memory was wrong
    assert _verdict("女儿有两只仓鼠。", "女儿有一只仓鼠，之前说两只是记错了。", 0.8) \
        == "contradiction"


def test_a_place_that_names_whose_fact_it_is_is_no_change_of_place() -> None:
    # the place names the team, before 在 (the verb here): another team's meeting, perhaps
    assert _verdict("深圳分部的例会在周三。", "成都分部的例会在周三。", 0.8) != "contradiction"
    assert _verdict("我在深圳工作。", "我在成都工作。", 0.8) == "contradiction"
    assert _verdict("公司在深圳。", "公司在成都。", 0.8) == "contradiction"


def test_a_chinese_list_of_days_that_names_zhou_once_reads_each_day() -> None:
    assert {v for k, v, _u in _values("我每周一、三、五去健身房") if k == "weekday"} == {
        "1", "3", "5"}
    assert ("number", "3", "个") in _values("周一，三个人来")  # a count after a comma stays one
    # a list of days that lost one is never merged (as in English)
    assert _verdict("我每周一、三、五去健身房", "我每周一、三去健身房", 0.96) != "duplicate"
    assert _verdict("我每周一、三、五去健身房", "我每周一、周三、周五去健身房", 0.96) == "duplicate"


def test_a_rate_per_minute_is_not_a_rate_per_second() -> None:
    assert ("frequency", "1440/1", "") in _values("Webhooks are retried once per minute.")
    assert _verdict("The upload limit is 20 files per minute.",
                    "The upload limit is 20 files per second.", 0.9) in {
        "contradiction", "possible_contradiction"}


def test_the_past_of_another_place_never_supersedes_the_present() -> None:
    # "used to" denies the place now: read as polarity, but the places differ
    assert _verdict("I used to live in Lyon.", "I live in Nantes.", 0.6) \
        == "possible_contradiction"
    assert _verdict("The user drinks coffee.", "The user used to drink coffee but quit.",
                    0.8) == "contradiction"


@pytest.mark.parametrize(("old", "new"), [
    ("Each token may make 120 calls per minute.", "Each token may make two calls a second."),
    ("The limit is 100 requests per minute.", "限流是每分钟 100 次请求。"),
])
def test_one_rate_said_two_ways_is_the_same(old: str, new: str) -> None:
    assert _verdict(old, new, 0.8) not in {"contradiction", "possible_contradiction"}
    labels = {v.label() for v in read_claim("The limit is 100 requests per minute.").values}
    assert "100× per minute" in labels


@pytest.mark.parametrize(("text", "seconds"), [
    ("睡前一般看半小时书。", "1800"), ("一个半小时的会", "5400"), ("开会两个半小时", "9000")])
def test_half_an_hour_in_chinese_is_read(text: str, seconds: str) -> None:
    assert ("number", seconds, "s") in _values(text)


def test_a_count_of_working_days_is_a_duration_not_the_workdays() -> None:
    assert not any(kind == "weekday" for kind, _t, _u in _values("事故复盘要在5个工作日内提交。"))
    assert ("weekday", "9", "") in _values("工作日早上跑步")


@pytest.mark.parametrize(("text", "value"), [
    ("The payments DB host is pg-pay-01.", ("id", "pg-pay-01", "")),
    ("我的猫叫豆豆", ("name", "豆豆", "")),
    ("项目代号改叫银河了", ("name", "银河", "")),
    ("儿子名叫小明。", ("name", "小明", "")),
    ("公众号名字叫“慢读笔记”。", ("name", "慢读笔记", "")),
    ("最近在读《百年孤独》", ("name", "百年孤独", "")),
])
def test_names_read_whole(text: str, value: tuple[str, str, str]) -> None:
    """A machine's name is one identifier, not a word and a number; a Chinese name after 叫
    is a name."""
    assert value in _values(text)


@pytest.mark.parametrize("text", ["大家都叫我老王", "中午一般叫外卖", "ages 7-10", "我的猫叫了"])
def test_no_name_read_where_there_is_none(text: str) -> None:
    assert not {v for v in _values(text) if v[0] in {"name", "id"}}


def test_a_bit_is_no_time_of_day() -> None:
    """"冷一点" is "a bit colder", not one o'clock."""
    assert not {v for v in _values("睡觉时房间冷一点。") if v[0] == "time"}
    assert ("time", "13:00", "") in _values("下午一点开会。")


@pytest.mark.parametrize(("text", "code"), [
    ("记账请用日元。", "jpy"), ("Track my expenses in Singapore dollars.", "sgd"),
    ("Show prices in euros.", "eur"), ("预算一律按人民币算", "cny"),
])
def test_a_currency_named_without_an_amount(text: str, code: str) -> None:
    """A currency the user wants things in is a value, so that a change of it is seen."""
    assert ("unit", code, "") in _values(text)


def test_a_dash_ends_what_a_negation_denies() -> None:
    """"can't eat gluten — I have celiac disease": celiac is stated, not denied."""
    claim = read_claim("I can't eat gluten — I have celiac disease.")
    assert "celiac" in claim.asserted and "celiac" not in claim.negated
    assert "gluten" in claim.negated


@pytest.mark.parametrize(("text", "value"), [
    ("My flight leaves from Terminal 2.", ("id", "terminal2", "")),
    ("Boarding at Gate 14.", ("id", "gate14", "")),
])
def test_a_numbered_place_is_an_identifier(text: str, value: tuple[str, str, str]) -> None:
    """"Terminal 2" names a place, never a version 2 of "Terminal"."""
    assert value in _values(text)


@pytest.mark.parametrize(("text", "path"), [
    ("The runbooks are at /ops/runbooks.", "/ops/runbooks"),        # the sentence's full stop
    ("配置在 /etc/caddy/Caddyfile。", "/etc/caddy/caddyfile"),
    ("Logs go to /var/log/app.log.", "/var/log/app.log"),          # the file's own dot stays
])
def test_a_path_ends_before_the_sentence_does(text: str, path: str) -> None:
    assert ("path", path, "") in _values(text)


@pytest.mark.parametrize(("old", "new"), [
    # each side's path or host spells the word that tells the two apart: two things
    ("Web release notes live at /releases/web.",
     "Desktop release notes live at /releases/desktop."),
    ("安卓的崩溃日志在 /logs/android-crash。", "iOS 的崩溃日志在 /logs/ios-crash。"),
    ("The billing queue host is mq-billing.internal.",
     "The search queue host is mq-search.internal."),
])
def test_a_value_named_for_its_own_thing_is_another_fact(old: str, new: str) -> None:
    assert _verdict(old, new, 0.8) == "distinct"


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # "also" said of a thing the other does not name: one more fact, never merged
    ("订单中心的负责人是小林。", "库存中心的负责人也是小林。", "distinct"),
    ("The web app's errors go to Sentry.", "桌面端的报错也接到了 Sentry。", "distinct"),
    # "also" said of the same thing is emphasis
    ("我用 pnpm 管理依赖。", "我也用 pnpm 管理依赖。", "duplicate"),
    ("Prefers dark mode.", "I also prefer dark mode.", "duplicate"),
])
def test_also_of_another_thing_is_another_fact(old: str, new: str, verdict: str) -> None:
    assert _verdict(old, new, 0.75) == verdict


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a year's record ("in 2023", "2023 年") against the next year's: a series, both kept
    ("Ran 1,100 km in 2022.", "Ran 1,450 km in 2023.", "series"),
    ("2022 年去了 5 个国家。", "2023 年去了 3 个国家。", "series"),
    ("In 2022 the club had 40 members.", "In 2023 the club had 55 members.", "series"),
    # a plan for one year changed is a change, not a series
    ("In 2026 I plan to read 20 books.", "In 2026 I plan to read 30 books.", "contradiction"),
])
def test_records_of_two_years_are_a_series(old: str, new: str, verdict: str) -> None:
    assert _verdict(old, new, 0.85) == verdict


def test_a_year_written_with_nian_reads_as_the_year() -> None:
    assert ("number", "2021", "") in _values("2021年搬到了杭州。")   # "in 2021", not 2021 years
    assert ("number", "3", "year") in _values("在杭州住了 3 年。")    # a span stays a span


@pytest.mark.parametrize("text", [
    "Water the cactus every 0 days.", "Water the cactus every 00 days.", "每0天备份一次",
    "每0周去一次超市。", "每零天浇水。", "每00个月0次", "0个月2次", "Swims 0 times a week.",
    "Backs up 0x daily.", "每周去健身房0次。",
])
def test_a_frequency_of_zero_is_no_frequency(text: str) -> None:
    # once a ZeroDivisionError, and every dream over a memory saying it crashed
    assert not [v for v in read_claim(text).values if v.kind == "frequency" and
                v.text.startswith("0/")]
    assert _verdict(text, "Water the cactus every 3 days.", 0.8)


def test_a_count_of_zero_in_chinese_is_zero_not_one() -> None:
    # "零" was read as no count at all, so "每零天" was once a day
    assert ("frequency", "1/1", "") not in _values("每零天浇水。")
    assert ("frequency", "1/3", "") in _values("每三天浇水。")


@pytest.mark.parametrize("text", [
    "The fee is $ 12.5.1a per seat", "¥1.2.3a", "Runs on € 3.11.0rc1 now.",
])
def test_a_version_after_a_currency_sign_is_no_amount(text: str) -> None:
    # once "could not convert string to float: '12.5.1'" from the money reader
    assert not [v for v in read_claim(text).values if v.unit in {"usd", "cny", "jpy", "eur"}]
    assert _verdict(text, "The fee is $12 per seat.", 0.8)


@pytest.mark.parametrize("text", ["Went to the dentist yesterday: 2 fillings.", "昨天跑了 5 公里。",
                                  "March: 3 trips.", "Tomorrow I fly 2 legs."])
@pytest.mark.parametrize("written", [date.min, date.max])
def test_a_day_told_from_the_first_or_last_date_is_no_crash(text: str, written: date) -> None:
    # "yesterday" written on date.min was an OverflowError from a reader that never raises
    assert read_claim(text, written=written) is not None


#: Saturday 5 December 2026, the day the break-it round wrote its memories.
WRITTEN = date(2026, 12, 5)


@pytest.mark.parametrize(("text", "day"), [
    # the "yesterday" inside "the day before yesterday" is not the day
    ("The day before yesterday I ran 5 km.", date(2026, 12, 3)),
    ("Yesterday I ran 5 km.", date(2026, 12, 4)),
    ("前天跑了 5 公里", date(2026, 12, 3)),
    ("大前天跑了 5 公里", date(2026, 12, 2)),
    ("Two days ago I ran 5 km.", date(2026, 12, 3)),
    ("I ran 5 km 2 days ago.", date(2026, 12, 3)),
    ("三天前跑了 5 公里", date(2026, 12, 2)),
    ("十天以前去了医院。", date(2026, 11, 25)),
    # a plan, a span ahead and "the weather before" name no day of an event
    ("I will run 5 km in two days.", None),
    ("两天后跑 5 公里", None),
    ("以前天气很冷", None),
    # weeks, months and years counted back: the first day of that period, as search reads
    # it (Saturday 5 December: this ISO week began Monday 30 November, two weeks back is
    # the week of Monday 16 November)
    ("Two weeks ago I weighed 80 kg.", date(2026, 11, 16)),
    ("I weighed 80 kg three weeks ago.", date(2026, 11, 9)),
    ("三周前体重 80 公斤", date(2026, 11, 9)),
    ("两个星期以前跑了 10 公里", date(2026, 11, 16)),
    ("A month ago I paid $40 for the gym.", date(2026, 11, 1)),
    ("两个月前体重 82 公斤", date(2026, 10, 1)),
    ("3 years ago I lived in Berlin.", date(2023, 1, 1)),
    # a month, year or weekday named by itself is a value or a rule's day; a span that runs
    # up to the day written and a plan name no day either
    ("Born in March 1990.", None),
    ("新版本计划九月发布", None),
    ("周五下午不上线。", None),
    ("Over the past three weeks I ran 40 km.", None),
    ("In two weeks I will weigh 78 kg.", None),
    # inside the text a period dates a thing the text names, not the memory's event
    ("我三周前体重 80 公斤", date(2026, 11, 9)),
    ("Roll back to the release from two weeks ago if the build fails.", None),
    ("The project started 3 years ago and I am its lead.", None),
    ("我三年前开始学钢琴，现在每天练一小时", None),
])
def test_a_day_counted_back_from_the_day_written_dates_the_event(text: str,
                                                                 day: date | None) -> None:
    assert read_claim(text, written=WRITTEN).event_day == day


@pytest.mark.parametrize(("old", "new", "same"), [
    ("lint", "linter", True), ("refactor", "refactors", True), ("plan", "planned", True),
    ("ship", "shipping", True),
    ("submit", "submitting", True), ("rebase", "rebased", True), ("watch", "watches", True),
    ("card", "cardigan", False), ("pass", "passport", False), ("work", "workout", False),
    ("plan", "planet", False), ("cat", "cats", False),  # too short to tell
])
def test_a_word_and_its_inflection_are_one_word_a_longer_word_is_another(
        old: str, new: str, same: bool) -> None:
    from consistency.judgement import _inflected, _Substitution

    assert _inflected(_Substitution((old,), (new,), "other", False)) is same
    assert _inflected(_Substitution((new,), (old,), "other", False)) is same


@pytest.mark.parametrize(("text", "value"), [
    # a span of time told without digits, after a word of lasting or measure
    ("The build takes an hour.", ("number", "3600", "s")),
    ("Charge the phone for a day.", ("number", "86400", "s")),
    ("I'll be back in half an hour.", ("number", "1800", "s")),
    ("We lived there for a year and a half.", ("number", "1.5", "year")),
    # "every half hour" is a rate, twice an hour
    ("The bus comes every half hour.", ("frequency", "48/1", "")),
    # a floor in Han numerals is read as one in digits
    ("办公室在三楼。", ("number", "3", "")),
    # a host's page is the host and its path
    ("The repo is at github.com/acme/api.", ("host", "github.com/acme/api", "")),
])
def test_spans_floors_and_pages_without_digits_or_scheme(
        text: str, value: tuple[str, str, str]) -> None:
    assert value in _values(text)


def test_a_rate_stays_a_rate_after_a_spelled_span() -> None:
    assert ("frequency", "1/1", "") in _values("I take a walk once a day.")
    assert ("frequency", "1/30", "") in _values("Rent is $1,200 a month.")


@pytest.mark.parametrize(("text", "value"), [
    # a bare hour in Chinese is either half of the day, as "at 3" is; a part of the day
    # named, or an hour past 12, is one time
    ("会议在三点。", ("time", "03:00", HOUR_OF_EITHER_HALF)),
    ("办公时间是九点到六点。", ("time", "06:00", HOUR_OF_EITHER_HALF)),
    ("会议在下午三点。", ("time", "15:00", "")),
    ("我每天早上7点起床。", ("time", "07:00", "")),
    ("办公时间是9点到18点。", ("time", "18:00", "")),
    # "a dozen" is twelve, "half a dozen" six, "two dozen" twenty-four
    ("Buy a dozen eggs.", ("number", "12", "")),
    ("We keep half a dozen eggs.", ("number", "6", "")),
    ("We keep two dozen eggs.", ("number", "24", "")),
    # a decimal comma before or after a currency; a comma before three digits groups
    # thousands
    ("The coffee costs €3,50.", ("number", "3.5", "eur")),
    ("The coffee costs 3,50 €.", ("number", "3.5", "eur")),
    ("Rent is €1.250,50.", ("number", "1250.5", "eur")),
    ("The ticket costs $1,000.", ("number", "1000", "usd")),
    ("We sold 12,500 copies.", ("number", "12500", "")),
    # a command-line flag and a setting's value (its key is an identifier)
    ("Run pytest with -x.", ("flag", "-x", "")),
    ("Use git push --force-with-lease.", ("flag", "--force-with-lease", "")),
    ("用 pytest -q 跑测试", ("flag", "-q", "")),
    ("Run pytest with `-q`.", ("flag", "-q", "")),
    ("`git push --force` is off-limits.", ("code", "git push --force", "")),
    ("NODE_ENV=production", ("setting", "production", "")),
    ("NODE_ENV=production", ("id", "node_env", "")),
    ("Set LOG_LEVEL = debug in staging.", ("setting", "debug", "")),
])
def test_hours_dozens_decimal_commas_flags_and_settings(
        text: str, value: tuple[str, str, str]) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", ["Re-run the tests after a merge.", "It is -5 outside.",
                                  "Office hours are 9-5.", "上海-Shanghai 的航班",
                                  "A well-known issue."])
def test_a_hyphenated_word_or_a_negative_number_is_no_flag(text: str) -> None:
    assert not [v for v in read_claim(text).values if v.kind == "flag"]


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a label of digits and one capital letter ("4B": read as 4 bytes, "4C" as 4 °C) is an
    # identifier: another room, seat or flat; one letter on both sides stays a measure
    ("The meeting is in 4B.", "The meeting is in 4C.", "contradiction"),
    ("会议室是4B。", "会议室是4C。", "contradiction"),
    ("My seat is 4B.", "My seat is 5C.", "contradiction"),
    ("It is 20C outside.", "It is 25C outside.", "contradiction"),
    ("The meeting is in 4B.", "The meeting is in 4B.", "duplicate"),
])
def test_a_number_and_one_capital_letter_is_a_label(old: str, new: str, verdict: str) -> None:
    assert _verdict(old, new, 0.86) == verdict


@pytest.mark.parametrize(("text", "told"), [
    # a span of the day or the week is no change told; a change with "from … to" is
    ("The shop is open from 9 to 5.", False),
    ("The shop is open from 9 to 5 on weekdays.", False),
    ("Open from 9am to 5pm.", False),
    ("The office is open from Monday to Friday.", False),
    ("Standup moved from 9 to 10.", True),
    ("Pool size went from 10 to 20.", True),
    ("The team went from 9 to 5 people.", True),
    # a span of years is a period (read as the past by the judgement), no change told
    ("From 2015 to 2020 I lived in Berlin.", False),
    ("From 2010 to 2015 I worked at Acme.", False),
    ("The launch moved from 2025 to 2026.", True),
    ("We went from MySQL to Postgres.", True),
])
def test_a_span_of_the_day_is_no_change_told(text: str, told: bool) -> None:
    claim = read_claim(text)
    assert claim.says_changed is told
    assert bool(claim.retracted) is told


@pytest.mark.parametrize("text", ["Sprint 3", "SPRINT 3", "sprınt 3", "ſprint 3"])
def test_a_label_matched_case_blind_is_read_whatever_its_letters(text: str) -> None:
    """A case-blind pattern matches the dotless ı and the long ſ as i and s; the value read
    from the match folds them the same way (it raised ``KeyError`` on "sprınt")."""
    assert Value("period", "sprint:3") in read_claim(text).values


@pytest.mark.parametrize(("text", "number"), [
    # dozens and shares in tenths in Chinese; 打 as a verb and 八成 as "most likely" are
    # no numbers
    ("买了一打鸡蛋。", ("12", "")),
    ("冰箱里有半打啤酒。", ("6", "")),
    ("两打鸡蛋", ("24", "")),
    ("门一打开就响", None),
    ("每天打电话", None),
    ("单测覆盖率至少得到八成。", ("80", "%")),
    ("九成五的用户用安卓", ("95", "%")),
    ("八成是他干的", None),
    ("一成不变", None),
    # points that group the thousands of an amount of money; a measure keeps its point
    ("The rent is €1.250 a month.", ("1250", "eur")),
    ("The rent is 1.250 € a month.", ("1250", "eur")),
    ("The bag weighs 1.250 kg.", ("1.25", "kg")),
])
def test_dozens_tenths_and_grouping_points(text: str, number: tuple[str, str] | None) -> None:
    numbers = [(v.text, v.unit) for v in read_claim(text).values if v.kind == "number"]
    assert numbers == ([number] if number else [])


@pytest.mark.parametrize("place", ["level 3", "Level 3", "lvl 3", "deck 3", "bay 3", "dock 3",
                                   "ward 3", "cabin 3", "locker 3"])
def test_a_level_or_bay_number_is_a_place_never_an_hour(place: str) -> None:
    # "level 3" beside "7am" took the other side's hours (03:00 → 07:00): the gym's floor
    # was superseded by its session's time
    assert {v.kind for v in read_claim(f"The gym is on {place}.").values} == {"id"}
    assert _verdict(f"The gym is on {place}.", "Moved the gym session to 7am.", 0.41) \
        != "contradiction"
    # ... while the place moved is the change, and a plain hour stays an hour
    assert _verdict(f"The gym is on {place}.", f"The gym moved to {place[:-1]}5.", 0.83) \
        == "contradiction"
    assert _verdict("The gym opens at 6.", "The gym now opens at 7am.", 0.85) == "contradiction"


@pytest.mark.parametrize(("old", "new", "cosine"), [
    ("健身房在 3 楼。", "健身课改到早上 7 点了。", 0.48),
    ("健身房在三楼。", "健身课改到早上七点了。", 0.43),
    ("会议室在十二层。", "会议改到十点了。", 0.4),
])
def test_a_floor_in_chinese_is_no_hour(old: str, new: str, cosine: float) -> None:
    # "3 楼" beside "早上 7 点" took its hours (03:00 → 07:00): the floor was superseded by a
    # class's time
    assert _verdict(old, new, cosine) != "contradiction"


def test_a_floor_moved_and_an_hour_moved_are_still_changes() -> None:
    assert _verdict("健身房在 3 楼。", "健身房搬到 5 楼了。", 0.73) == "contradiction"
    assert _verdict("会议在 3 点。", "会议改到 5 点了。", 0.65) == "contradiction"
    assert _verdict("办公时间是九点到五点。", "办公时间改成早上八点到下午四点了。", 0.76) \
        == "contradiction"


@pytest.mark.parametrize(("text", "frequency", "seconds"), [
    # days counted within a week or a month: a count per period, said once
    ("每周工作5天。", "5/7", None),
    ("每周在家办公两天。", "2/7", None),
    ("每月休息2天。", "1/15", None),
    ("每周去健身房三次。", "3/7", None),
    # a time spent stays one: hours, or days within a day
    ("每天工作8小时。", "1/1", "28800"),
    ("每周工作40小时。", "1/7", "144000"),
    ("每天休息1天", "1/1", "86400"),
])
def test_days_counted_in_a_period_are_a_frequency(text: str, frequency: str,
                                                  seconds: str | None) -> None:
    values = read_claim(text).values
    assert [v.text for v in values if v.kind == "frequency"] == [frequency]
    assert [v.text for v in values if v.kind == "number" and v.unit == "s"] == \
        ([seconds] if seconds else [])
