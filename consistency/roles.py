"""Who holds a role beside the user: "My manager is Anna", "Anna is my manager", "我的经理是李娜",
"李娜是我的经理".

Pure data and one reader; no model. :func:`role_held` reads a memory that says only who holds
one role of the user's (or the team's) into ``(role, holder, one_holder)``: the role folded to
one spelling per meaning (English and Chinese: "boss", "line manager" and 经理 are
``manager``), the holder as written (case folded), and whether a user has one holder of the
role at a time (a manager, a dentist, a tech lead, a spouse) or several (a sister, a friend, a
colleague). The pair judgement (:mod:`consistency.judgement`) reads two such memories:

- one role, one holder at a time, another holder on each side → the holder changed ("Anna is
  my manager" / "Ben is my manager"), whichever way round each is written, with or without
  whose ("Manager is Zhang Wei", "直属领导是张伟");
- one holder, two roles ("Priya is my manager" / "Priya is my skip-level") → two facts;
- a role of several holders, another holder on each side ("Alice is my sister" / "Jane is my
  sister") → two facts.

A memory of anything more (a second clause, a reason, someone else's role: "Alice's manager is
Bob") is not read: :func:`role_held` answers ``None`` and the other rules decide. Source:
written by hand for the roles assistant memories name most; its reach is the roles it lists.
"""

from __future__ import annotations

import functools
import re

__all__ = ["ROLES", "role_held", "same_holder"]

#: role → (its spellings, English and Chinese; whether one holds it at a time).
ROLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "manager": (("manager", "boss", "line manager", "direct manager", "people manager",
                 "reporting manager", "supervisor", "经理", "直属领导", "直属上级", "领导",
                 "上司", "上级", "主管", "老板"), True),
    "skip-level": (("skip-level", "skip level", "skip-level manager", "skip level manager",
                    "隔级领导", "隔级经理"), True),
    "engineering manager": (("engineering manager", "em", "研发经理"), True),
    "team lead": (("team lead", "team leader", "lead", "组长", "小组长", "团队负责人",
                   "团队的负责人", "团队leader"), True),
    "tech lead": (("tech lead", "technical lead", "tl", "技术负责人", "技术主管",
                   "技术组长"), True),
    "product manager": (("product manager", "pm", "product owner", "po", "产品经理"), True),
    "project manager": (("project manager", "项目经理"), True),
    "project lead": (("project lead", "project owner", "项目负责人", "负责人"), True),
    "mentor": (("mentor", "导师"), True),
    "advisor": (("advisor", "adviser", "phd advisor", "thesis advisor", "博导", "硕导"), True),
    "dentist": (("dentist", "牙医"), True),
    "doctor": (("doctor", "gp", "family doctor", "primary care doctor", "physician",
                "家庭医生", "主治医生", "医生"), True),
    "therapist": (("therapist", "psychologist", "counsellor", "counselor", "心理医生",
                   "心理咨询师"), True),
    "landlord": (("landlord", "landlady", "房东"), True),
    "accountant": (("accountant", "会计"), True),
    "lawyer": (("lawyer", "attorney", "律师"), True),
    "spouse": (("wife", "husband", "spouse", "partner", "老婆", "老公", "妻子", "丈夫",
                "爱人", "太太", "先生"), True),
    "boyfriend": (("boyfriend", "男朋友", "男友"), True),
    "girlfriend": (("girlfriend", "女朋友", "女友"), True),
    "fiance": (("fiance", "fiancé", "fiancee", "fiancée", "未婚夫", "未婚妻"), True),
    "recruiter": (("recruiter", "招聘专员"), True),
    "hr contact": (("hr contact", "hr", "hrbp", "hr partner", "人事", "人事对接人", "hr对接人",
                    "hrbp对接人"), True),
    "scrum master": (("scrum master",), True),
    "on-call buddy": (("onboarding buddy", "buddy", "入职导师"), False),
    "sister": (("sister", "姐姐", "妹妹"), False),
    "brother": (("brother", "哥哥", "弟弟"), False),
    "friend": (("friend", "best friend", "朋友", "好朋友"), False),
    "colleague": (("colleague", "coworker", "co-worker", "teammate", "同事", "队友"), False),
    "neighbour": (("neighbour", "neighbor", "邻居"), False),
    "classmate": (("classmate", "同学"), False),
    "cousin": (("cousin", "表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹"), False),
    "direct report": (("direct report", "report", "下属"), False),
}

_SPELLING = {spelling: role for role, (spellings, _one) in ROLES.items()
             for spelling in spellings}
_ROLE = "|".join(sorted((re.escape(s) for s in _SPELLING if s.isascii()), key=len,
                        reverse=True))
_ROLE_ZH = "|".join(sorted((re.escape(s) for s in _SPELLING if not s.isascii()), key=len,
                           reverse=True))

#: A holder in Latin letters: one to three capitalised words, a title before them.
_WHO = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,2}"
#: Common Chinese surnames: a holder written in Chinese starts with one (李娜, 王老师, 小陈).
_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜"
             "叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎"
             "贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧司欧阳")
#: A holder in Chinese: a surname and one or two characters, or 小 / 老 / 阿 and a surname;
#: never a word of what someone is ("程序员", "湖南人": an occupation, an origin).
_WHO_ZH = (rf"(?:[小老阿][{_SURNAMES}]|[{_SURNAMES}](?:老师|医生|律师|总|经理|教授|博士)|"
           rf"[{_SURNAMES}][\u4e00-\u9fff]{{1,2}}(?<![员人者家工生手]))|" + _WHO)
#: Whose role: the user's or the team's, or a named person's ("Ben's manager", "王强的经理").


def _whose(n: int) -> str:
    return rf"(?:(?i:my|our|the user's|the team's|their|his|her|the)|(?P<owner{n}>{_WHO})'s)"


def _whose_zh(n: int) -> str:
    return rf"(?:我|我们|用户|(?P<owner{n}>{_WHO_ZH}))(?:的)?"


_NOW = r"(?i:\s+(?:now|these days|at the moment|currently))?"
_EN = (
    rf"(?:(?:{_whose(1)}\s+)?(?i:new\s+|current\s+)?(?P<role1>(?i:{_ROLE}))\s+(?i:is|was)\s+"
    rf"(?i:now\s+)?(?P<who1>{_WHO})"
    rf"|(?P<who2>{_WHO})\s+(?i:is|'s)\s+(?i:now\s+)?{_whose(2)}\s+(?i:new\s+|current\s+)?"
    rf"(?P<role2>(?i:{_ROLE}))){_NOW}"
)
_ROLE_ANY = rf"(?i:{_ROLE_ZH}|{_ROLE})"
_ZH = (
    rf"(?:现在)?(?:{_whose_zh(3)})?\s*(?:新|现在的)?(?P<role3>{_ROLE_ANY})"
    rf"\s*(?:现在|已经)?(?:是|换成了?|变成了?)\s*(?P<who3>{_WHO_ZH})"
    rf"|(?:现在)?(?P<who4>{_WHO_ZH})\s*(?:现在)?是\s*(?:{_whose_zh(4)})?\s*(?:新|现在的)?"
    rf"(?P<role4>{_ROLE_ANY})(?:了)?"
)
_WHOLE = re.compile(rf"^\s*(?:{_EN}|{_ZH})\s*[.!。！]?\s*$")
#: Words that look like a name at the start of a sentence but are not one.
_NOT_NAMES = frozenset({"my", "our", "the", "this", "that", "he", "she", "it", "they", "who",
                        "now", "currently", "i", "we", "you", "there", "here"})


@functools.lru_cache(maxsize=4096)
def role_held(text: str) -> tuple[str, str, bool, str] | None:
    """``(role, holder, one_holder, whose)`` of a memory that says only who holds a role
    ("Anna is my manager", "My manager is Anna now", "我的经理是李娜", "李娜是我的经理";
    ``whose`` is ``""`` for the user's or the team's, else the person named: "Anna is Ben's
    manager" → ``"ben"``), else ``None``."""
    found = _WHOLE.match(text.replace("\u2019", "'"))
    if found is None:
        return None
    groups = found.groupdict()
    index = next(i for i in "1234" if groups[f"role{i}"])
    spelled, who = groups[f"role{index}"], groups[f"who{index}"]
    holder = _folded(who)
    owner = _folded(groups[f"owner{index}"] or "")
    if holder.split(" ", 1)[0] in _NOT_NAMES or holder in _SPELLING or \
            owner.split(" ", 1)[0] in _NOT_NAMES:
        return None
    role = _SPELLING[spelled.casefold()]
    return role, holder, ROLES[role][1], owner


def _folded(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().rstrip(".").removesuffix("的").casefold()


_TITLES = frozenset({"dr", "dr.", "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "prof", "prof."})
_HAN_TITLE = re.compile(r"(?<=[\u4e00-\u9fff])(?:老师|医生|总|经理|先生|女士|小姐)$")


def same_holder(a: str, b: str) -> bool:
    """Are two holders as :func:`role_held` reads them one person: the same words, a title
    aside ("Dr. Okafor" / "Okafor"), one's words all among the other's ("Anna" / "Anna
    Schmidt"), or a Chinese name and its pinyin ("陈静" / "Chen Jing", "Jing Chen")?"""
    from consistency.claims import romanised

    def words(name: str) -> list[str]:
        return [w.strip(".") for w in name.split() if w not in _TITLES]

    wa, wb = words(a), words(b)
    if not wa or not wb:
        return a == b
    if set(wa) <= set(wb) or set(wb) <= set(wa):
        return True
    latin = [w for w in (wa, wb) if " ".join(w).isascii()]
    han = [w for w in (wa, wb) if not " ".join(w).isascii()]
    if len(latin) == 1 and len(han) == 1:
        spoken = romanised(_HAN_TITLE.sub("", "".join(han[0])))
        return spoken in {"".join(latin[0]), "".join(reversed(latin[0]))}
    return False
