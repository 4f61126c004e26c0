"""What a memory claims, read once into typed parts: values, polarity, its day, its frame.

Pure functions of text (and of the day a memory was written, for "yesterday"); no clock, no
model. :func:`read_claim` turns a memory's text into a :class:`Claim` that
:mod:`consistency.duplicates` compares pair by pair:

- **values** (:class:`Value`), by kind: URLs, e-mail addresses, IP addresses and host names
  (with their ports), cloud regions, file paths, code spans, versions, dates, times of day,
  weekdays and months, frequencies (times per days: "twice a week" ``2/7``, 每月 ``1/30``),
  numbers with their units (seconds, bytes, money, percent, kilograms, days of the month,
  Chinese units and numerals), a product's version ("Postgres 15"), proper names
  (capitalised words inside a sentence) and identifiers (``snake_case``, ``CamelCase``,
  ``@scope/pkg``, ``#channel-name``);
- **polarity**: concepts with a sign (``like``: love, enjoy, prefer / hate, can't stand, 讨厌;
  ``allow``, ``enable``, ``always``, ``require``) and the content words a negation covers
  (``not``, ``never``, ``don't``, ``不``, ``别``, ``禁止`` …);
- **the frame**: the text's content words in order with every value replaced by its kind, so
  "timeout is 30 s" and "timeout is 60 s" have one frame;
- **the day it happened** (:attr:`Claim.event_day`): a date the text names as the time of an
  event ("2026-03-14: weighed 72.4 kg", "Released v2.3 on May 1", "3月5日跑了10公里"), not a
  date that is the fact's value ("the deadline is June 1");
- **the relation** it states, when a cue says so: ``exclusive`` (one value at a time: *is*,
  *prefers*, *lives in*, *switched to*, 是, 改成 …) or ``multi`` (several can hold at once:
  *allergic to*, *speaks*, *has a*, *likes* without *most* …).

Tokens for lexical overlap are case-folded, NFKC-normalised, free of markdown markers and
contractions ("don't" → "do not"), read through :mod:`consistency.lexicon` (one spelling
per concept, English and Chinese: "kids" / "孩子" → ``child``), stemmed lightly (English) or
cut into character bigrams (other Chinese, spacing ignored), and order-free: :func:`dice`
compares them as multisets. A text is read to :data:`CLAIM_MAX_CHARS`.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from fractions import Fraction
from typing import Literal

from consistency.lexicon import EN_PHRASES, EN_WORDS, PLACES_EN, ZH_WORDS
from magma.intent import first_time_range
from magma.text import HAN_RANGES

__all__ = [
    "AMBIGUOUS_UNITS",
    "CLAIM_MAX_CHARS",
    "CURRENCIES",
    "HAN_NAME",
    "WHEN_WORDS",
    "Claim",
    "Language",
    "Value",
    "change_cue_at",
    "contrast_cue_only",
    "dice",
    "dice_each",
    "language_of",
    "participle_of_a_thing",
    "read_claim",
    "read_tokens",
    "romanised",
    "stem",
]

Language = Literal["en", "zh"]

_HAN = HAN_RANGES
_HAN_RE = re.compile(f"[{_HAN}]")
_HAN_RUN = re.compile(f"[{_HAN}]+")


@dataclass(frozen=True, slots=True, order=True)
class Value:
    """One value a memory states: ``kind`` (``number``, ``port``, ``version``, ``host``,
    ``ip``, ``url``, ``email``, ``region``, ``path``, ``code``, ``date``, ``time``,
    ``weekday``, ``month``, ``name``, ``id``, ``flag`` of a command, ``setting`` of a
    KEY=value), its normalised ``text`` (``"30"``, ``"db1.internal"``, ``"2026-03-14"``) and
    ``unit`` for numbers (``s``, ``byte``, ``%``, ``kg``, ``usd`` …; ``""`` when none)."""

    kind: str
    text: str
    unit: str = ""
    #: A size's unit as written, as a power of 1,024 ("1024 MB": 2, "1 GB": 3; ``-1`` when
    #: not a size or not known): what :mod:`consistency.judgement` reads a size of units of a
    #: thousand by. Not part of the value: "1 GB" and "1024 MB" are one value.
    written_power: int = field(default=-1, compare=False)

    def label(self) -> str:
        """Readable form for explanations: ``30 s``, ``db1.internal``, ``2× per 7 days``."""
        if self.kind == "frequency" and "/" in self.text:
            count, days = self.text.split("/", 1)
            per_day = Fraction(int(count), int(days))
            units = [(u, per_day / share) for u, share in (("second", 86400), ("minute", 1440),
                                                            ("hour", 24)) if per_day >= share]
            if units:  # a rate: "100× per minute", not "144000× per 1 day"
                unit, times = next(((u, t) for u, t in units if t.denominator == 1), units[0])
                return f"{_number_text(float(times))}× per {unit}"
            return f"{count}× per {days} day{'s' if days != '1' else ''}"
        if self.kind == "time":
            return self.text
        if self.kind in _NAMED_NUMBERS:  # "周二" / "Tuesday" is 2: shown as a day, not a count
            return _NAMED_NUMBERS[self.kind].get(self.text, self.text)
        return f"{self.text} {self.unit}" if self.unit else self.text


#: How explanations name a weekday (1–7, 8: the weekend, 9: workdays) and a month (1–12).
_NAMED_NUMBERS = {
    "weekday": dict(zip([str(n) for n in range(1, 10)],
                        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                         "Sunday", "the weekend", "workdays"], strict=True)),
    "month": dict(zip([str(n) for n in range(1, 13)],
                      ["January", "February", "March", "April", "May", "June", "July", "August",
                       "September", "October", "November", "December"], strict=True)),
}


@dataclass(frozen=True, slots=True)
class Claim:
    """A memory's text read once (see the module docstring).

    ``key`` is the order-free comparison form (sorted tokens plus values): two claims with one
    key say the same words. ``tokens`` are the lexical tokens (a multiset, order kept);
    ``frame`` the content words in order with values as ``⟨kind⟩``; ``units`` the frame as
    comparison units (English stems, single Han characters) for alignment.
    ``concepts`` maps a polarity concept to its signs in the text (True: asserted).
    ``negated``/``asserted``: content tokens under a negation / outside one.
    ``translated``: tokens read from Chinese words through :mod:`consistency.lexicon`
    (Chinese word order, not English: a negation's reach over them is loose). ``tail``: a
    digest of the text past :data:`CLAIM_MAX_CHARS` (``""``: the whole text was read).
    ``contrasted``: one thing is set against another ("prefers X to Y", "X instead of Y",
    "比起Y更…"), so what is denied is said exactly.
    """

    text: str
    language: Language
    tokens: tuple[str, ...]
    frame: tuple[str, ...]
    units: tuple[str, ...]
    values: frozenset[Value]
    concepts: dict[str, frozenset[bool]]
    negated: frozenset[str]
    asserted: frozenset[str]
    event_day: date | None
    relation: Literal["exclusive", "multi"] | None
    key: str
    slot: str | None
    says_changed: bool = False
    retracted: frozenset[Value] = frozenset()
    translated: frozenset[str] = frozenset()
    tail: str = ""
    negations: int = 0
    contrasted: bool = False


# --------------------------------------------------------------------------- cleaning

_QUOTES = str.maketrans({"‘": "'", "’": "'", "ʼ": "'", "“": '"', "”": '"', "「": '"',
                         "」": '"', "『": '"', "』": '"'})
_BLOCK_MARKERS = re.compile(r"(?m)^\s*(?:[-*+]\s+\[[ xX]\]\s+|[-*+]\s+|\d+[.)]\s+|#{1,6}\s+|>\s*)+")
_EMPHASIS = re.compile(r"\*\*|__|~~|(?<![\w*])\*(?!\s)|(?<!\s)\*(?![\w*])|==")
_WIKILINK = re.compile(r"!?\[\[([^\]\[|#^]*)(?:[#^][^\]\[|]*)?(?:\|([^\]\[]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_LABEL_LINE = re.compile(r"(?im)^\s*(?:why|how to apply|原因|为什么|如何应用|怎么用)\s*[:：]\s*")
_SPACE_IN_HAN = re.compile(f"(?<=[{_HAN}])[ \t]+(?=[{_HAN}A-Za-z0-9])|(?<=[A-Za-z0-9%])[ \t]+(?=[{_HAN}])")
_FULLWIDTH_PUNCT = str.maketrans({"，": ",", "。": ".", "；": ";", "：": ":", "！": "!", "？": "?",
                                  "（": "(", "）": ")", "、": ","})


#: The length of a memory's text read into a claim (characters; a memory is a few lines,
#: and the regular expressions and alignments cost more than linearly past this: ``"[[" ×
#: 10,000`` took 27 s whole, 0.05 s cut).
CLAIM_MAX_CHARS = 2000


def _cut(text: str) -> tuple[str, str]:
    """``text`` cut to :data:`CLAIM_MAX_CHARS` (at a line end when one is near), and a digest
    of the words past the cut (``""`` when nothing is cut)."""
    if len(text) <= CLAIM_MAX_CHARS:
        return text, ""
    end = text.rfind("\n", 0, CLAIM_MAX_CHARS)
    end = end if end > CLAIM_MAX_CHARS // 2 else CLAIM_MAX_CHARS
    rest = " ".join(unicodedata.normalize("NFKC", text[end:]).lower().split())
    return text[:end], hashlib.sha1(rest.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_CODE_WITH_SUFFIX = re.compile(r"`(\w+)`(?=[a-z])")


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    # invisible format characters (zero-width space and joiner, BOM) are not text (none is
    # ASCII: an ASCII text is looked at no further)
    if not text.isascii():
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MDLINK.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    text = _BLOCK_MARKERS.sub("", text)
    text = _LABEL_LINE.sub("", text)
    text = _EMPHASIS.sub("", text)
    # a code span with a word's ending glued to it ("nested `if`s", "`Promise`s") is the word,
    # not a code value of its own
    text = _CODE_WITH_SUFFIX.sub(r"\1", text)
    return _SPACE_IN_HAN.sub("", text)


_ASCII_LETTER = re.compile(r"[A-Za-z]")


def language_of(text: str) -> Language:
    """``zh`` when Han characters make up at least a third of the letters, else ``en``."""
    han = len(_HAN_RE.findall(text))
    latin = len(_ASCII_LETTER.findall(text))  # the letters that are ASCII: [A-Za-z]
    return "zh" if han and han * 3 >= han + latin // 4 else "en"


# --------------------------------------------------------------------------- numbers

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMBER = re.compile("[零〇一二两三四五六七八九十百千万]+")


def _zh_number(text: str) -> int | None:
    """``三十`` → 30, ``两百五十`` → 250, ``一万二`` → 12000; ``None`` when it is not one."""
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
            last_unit = 1 if ch in "零〇" else last_unit
        elif ch in _ZH_UNITS:
            section += (1 if digit is None else digit) * _ZH_UNITS[ch]
            digit, last_unit = None, _ZH_UNITS[ch]
        elif ch == "万":
            total += (section + (digit or 0)) * 10000
            section, digit, last_unit = 0, None, 10000
        else:
            return None
    if digit is not None and last_unit >= 100 and text[-2] not in "零〇":
        # a last digit right after 百 / 千 / 万 counts the next unit down ("六千五" = 6500,
        # "两百五" = 250, "一万二" = 12000), as said aloud
        digit *= last_unit // 10
    return total + section + (digit or 0)


#: One-letter units that read as several ("16g RAM" / "5 g of salt"; "10 m" of rope, of
#: disk, of time): kept as written, each with the canonical units it may stand for and the
#: factor to each (the judgement compares them with what the other memory states).
AMBIGUOUS_UNITS: dict[str, tuple[tuple[str, float], ...]] = {
    "g": (("byte", 1024.0**3), ("kg", 0.001)),
    "m": (("byte", 1024.0**2), ("m", 1.0), ("s", 60.0), ("", 1e6)),
}
#: Unit spellings -> (canonical unit, factor to it). Time in seconds, sizes in bytes.
_UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("ms", "msec", "millisecond", "milliseconds", "毫秒"), ("s", 0.001)),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), ("s", 1.0)),
    **dict.fromkeys(("min", "mins", "minute", "minutes", "分钟"), ("s", 60.0)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours", "小时", "个小时"), ("s", 3600.0)),
    **dict.fromkeys(("d", "day", "days", "天"), ("s", 86400.0)),
    **dict.fromkeys(("week", "weeks", "周", "星期", "个星期"), ("s", 604800.0)),
    **dict.fromkeys(("month", "months", "个月"), ("month", 1.0)),
    **dict.fromkeys(("year", "years", "yr", "yrs", "年"), ("year", 1.0)),
    **dict.fromkeys(("b", "byte", "bytes", "字节"), ("byte", 1.0)),
    **dict.fromkeys(("kb", "k", "kib"), ("byte", 1024.0)),
    **dict.fromkeys(("mb", "mib", "兆"), ("byte", 1024.0**2)),
    **dict.fromkeys(("gb", "gib"), ("byte", 1024.0**3)),
    **dict.fromkeys(("tb", "tib", "t"), ("byte", 1024.0**4)),
    **dict.fromkeys(("%", "percent", "pct", "百分之"), ("%", 1.0)),
    **dict.fromkeys(("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "公斤", "千克"),
                    ("kg", 1.0)),
    **dict.fromkeys(("斤",), ("kg", 0.5)),
    **dict.fromkeys(("gram", "grams", "gramme", "grammes", "克"), ("kg", 0.001)),
    **dict.fromkeys(("mg", "milligram", "milligrams", "毫克"), ("kg", 1e-6)),
    **dict.fromkeys(("l", "litre", "litres", "liter", "liters", "升"), ("l", 1.0)),
    **dict.fromkeys(("ml", "millilitre", "millilitres", "milliliter", "milliliters", "毫升"),
                    ("l", 0.001)),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), ("lb", 1.0)),
    **dict.fromkeys(("km", "kilometre", "kilometres", "kilometer", "kilometers", "公里",
                     "千米"), ("m", 1000.0)),
    **dict.fromkeys(("metre", "metres", "meter", "meters", "米"), ("m", 1.0)),
    **dict.fromkeys(("cm", "厘米"), ("m", 0.01)),
    **dict.fromkeys(("mm", "millimetre", "millimetres", "millimeter", "millimeters", "毫米"),
                    ("m", 0.001)),
    **dict.fromkeys(("mile", "miles"), ("mile", 1.0)),
    **dict.fromkeys(("usd", "dollar", "dollars", "$", "美元", "刀"), ("usd", 1.0)),
    **dict.fromkeys(("eur", "euro", "euros", "€", "欧元"), ("eur", 1.0)),
    **dict.fromkeys(("gbp", "£", "英镑"), ("gbp", 1.0)),
    **dict.fromkeys(("cny", "rmb", "yuan", "¥", "元", "块", "块钱", "人民币"), ("cny", 1.0)),
    **dict.fromkeys(("hkd", "港币", "港元"), ("hkd", 1.0)),
    **dict.fromkeys(("jpy", "yen", "日元", "円"), ("jpy", 1.0)),
    **dict.fromkeys(("chf", "franc", "francs", "瑞郎", "瑞士法郎"), ("chf", 1.0)),
    **dict.fromkeys(("cad", "加元", "加币"), ("cad", 1.0)),
    **dict.fromkeys(("aud", "澳元", "澳币"), ("aud", 1.0)),
    **dict.fromkeys(("sgd", "新币", "新加坡元"), ("sgd", 1.0)),
    **dict.fromkeys(("twd", "台币", "新台币"), ("twd", 1.0)),
    **dict.fromkeys(("krw", "韩元"), ("krw", 1.0)),
    **dict.fromkeys(("inr", "rupee", "rupees", "卢比"), ("inr", 1.0)),
    **dict.fromkeys(("mxn", "peso", "pesos"), ("mxn", 1.0)),
    **dict.fromkeys(("rub", "ruble", "rubles", "rouble", "roubles", "卢布"), ("rub", 1.0)),
    **dict.fromkeys(("°c", "℃", "c", "celsius", "度"), ("°c", 1.0)),
    **dict.fromkeys(("°f", "℉", "f", "fahrenheit"), ("°f", 1.0)),
    **dict.fromkeys(("x", "times", "次", "遍"), ("x", 1.0)),
    **dict.fromkeys(("st", "nd", "rd", "th", "号"), ("th", 1.0)),  # day of the month: "the 20th"
    **dict.fromkeys(("mmhg",), ("mmhg", 1.0)),
    **dict.fromkeys(("bpm",), ("bpm", 1.0)),
    **dict.fromkeys(("px", "pt", "em", "rem", "dpi", "fps", "rpm", "qps", "rps", "ghz", "mhz",
                     "kbps", "mbps", "gbps", "w", "kw", "v", *AMBIGUOUS_UNITS),
                    ("", 1.0)),
}
# (the "" unit entries above only keep the spelling as the unit name; see _unit)

#: Units that are currencies (ISO 4217 codes): amounts in two of them are not compared.
CURRENCIES = frozenset({"usd", "eur", "gbp", "cny", "hkd", "jpy", "chf", "cad", "aud", "sgd",
                        "twd", "krw", "inr", "mxn", "rub", "nzd", "brl"})
_UNIT_WORDS = sorted((u for u in _UNITS if u != "$"), key=len, reverse=True)  # ("20 €": a unit)
#: Currency signs written before an amount -> ISO 4217 code ("¥" is read as the yuan).
_CURRENCY_PREFIX = {"$": "usd", "us$": "usd", "€": "eur", "£": "gbp", "¥": "cny", "￥": "cny",
                    "hk$": "hkd", "a$": "aud", "au$": "aud", "c$": "cad", "ca$": "cad",
                    "nz$": "nzd", "s$": "sgd", "nt$": "twd", "r$": "brl", "₹": "inr",
                    "₩": "krw", "₽": "rub"}


def _unit(spelling: str) -> tuple[str, float]:
    unit, factor = _UNITS.get(spelling, ("", 1.0))
    return (unit or spelling, factor)


def _number_text(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        return "∞"  # a number past a float's range ("1" and 400 zeros): one value all the same
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


# --------------------------------------------------------------------------- value patterns

_EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90, "a hundred": 100, "a thousand": 1000,
    "a dozen": 12, "half a dozen": 6,
}  # fmt: skip
#: The parts of a compound number word ("forty-five", "twenty one").
_EN_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_EN_ONES = "one|two|three|four|five|six|seven|eight|nine"
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}  # fmt: skip
_WEEKDAYS = {
    "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2, "wednesday": 3, "wed": 3,
    "thursday": 4, "thu": 4, "thurs": 4, "friday": 5, "fri": 5, "saturday": 6, "sat": 6,
    "sunday": 7, "sun": 7,
}  # fmt: skip
_ZH_WEEKDAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7, "末": 8}
#: Weekday numbers of the weekend (8) and of working days (9), which match their members.
WEEKEND, WORKDAYS = "8", "9"
_MONTH_WORDS = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY_WORDS = "|".join(sorted((w for w in _WEEKDAYS if len(w) > 3), key=len, reverse=True))

#: Unit words standing alone ("show distances in miles"), by their first five letters.
_UNIT_NAMES = {
    "kilom": "km", "公里": "km", "mile": "mile", "miles": "mile", "英里": "mile", "metre": "m",
    "meter": "m", "feet": "ft", "foot": "ft", "英尺": "ft", "inch": "in", "inche": "in",
    "英寸": "in", "celsi": "°c", "摄氏": "°c", "摄氏度": "°c", "fahre": "°f", "华氏": "°f",
    "华氏度": "°f", "milli": "ms", "毫秒": "ms", "secon": "s", "minut": "min", "hours": "h",
    "kilog": "kg", "kg": "kg", "kgs": "kg", "公斤": "kg", "pound": "lb", "lbs": "lb", "磅": "lb",
    "litre": "l", "liter": "l", "gallo": "gal", "metri": "metric", "公制": "metric",
    "imper": "imperial", "英制": "imperial",
}  # fmt: skip

#: Major cities and regions named in Chinese, kept as names (a home city, an office).
_ZH_PLACES = ["北京", "上海", "广州", "深圳", "杭州", "南京", "苏州", "成都", "重庆", "武汉", "西安", "天津", "长沙", "郑州", "青岛", "厦门", "宁波", "合肥", "福州", "济南", "大连", "沈阳", "哈尔滨", "长春", "昆明", "贵阳", "南宁", "海口", "三亚", "兰州", "乌鲁木齐", "拉萨", "呼和浩特", "太原", "石家庄", "南昌", "无锡", "东莞", "佛山", "珠海", "香港", "澳门", "台北", "新加坡", "东京", "首尔", "纽约", "伦敦", "巴黎", "柏林", "旧金山", "洛杉矶", "西雅图", "悉尼", "温哥华", "多伦多", "海淀", "朝阳", "浦东", "徐汇", "静安", "黄浦", "南山", "福田", "西湖", "余杭", "滨江", "天河"]
#: ... and every other place the lexicon spells in English (慕尼黑, 里斯本, 阿姆斯特丹 …): a
#: place the lexicon folds is read as a place ("我搬到了里斯本" / "I moved to Lisbon").
_ZH_PLACES += [place for place in PLACES_EN if place not in _ZH_PLACES]
#: A city's name before 路 / 街 / 大道 … names a street ("广州*北京路*"), not the city.
_ZH_PLACE_RE = re.compile("(?:" + "|".join(sorted(_ZH_PLACES, key=len, reverse=True))
                          + ")(?![路街巷道]|大道|大街|东路|西路|南路|北路|中路)")


#: Languages by their Chinese names, with the English name a capitalised word reads as.
_ZH_LANGUAGES = {
    "中文": "chinese", "汉语": "chinese", "普通话": "chinese", "华语": "chinese",
    "英文": "english", "英语": "english", "日语": "japanese", "日文": "japanese",
    "韩语": "korean", "韩文": "korean", "法语": "french", "法文": "french",
    "德语": "german", "德文": "german", "西班牙语": "spanish", "粤语": "cantonese",
}

_A = re.ASCII  # \b and \w over ASCII only: a Han character beside a value is a boundary

#: How often, in days per time: a frequency is ``count/days`` ("twice a week" → ``2/7``,
#: "every two weeks" → ``1/14``, "每月" → ``1/30``).
_PERIOD_DAYS = {"second": Fraction(1, 86400), "minute": Fraction(1, 1440), "hour": Fraction(1, 24), "day": Fraction(1), "night": Fraction(1),
                "week": Fraction(7), "fortnight": Fraction(14), "month": Fraction(30),
                "quarter": Fraction(91), "year": Fraction(365), "mo": Fraction(30),
                "yr": Fraction(365), "wk": Fraction(7), "hr": Fraction(1, 24),
                "秒": Fraction(1, 86400), "秒钟": Fraction(1, 86400), "分钟": Fraction(1, 1440),
                "小时": Fraction(1, 24), "天": Fraction(1), "日": Fraction(1), "晚": Fraction(1),
                "周": Fraction(7), "星期": Fraction(7), "礼拜": Fraction(7), "月": Fraction(30),
                "季度": Fraction(91), "年": Fraction(365)}
_FREQUENCY_WORDS = {"hourly": ("1", "hour"), "daily": ("1", "day"), "nightly": ("1", "night"),
                    "weekly": ("1", "week"), "biweekly": ("1", "fortnight"),
                    "fortnightly": ("1", "fortnight"), "monthly": ("1", "month"),
                    "quarterly": ("1", "quarter"), "yearly": ("1", "year"),
                    "annually": ("1", "year"), "天天": ("1", "天")}
_COUNT_WORDS = "once|twice|thrice|one|two|three|four|five|six|seven|eight|nine|ten"
#: The hours of a clock written as words ("eleven at night").
_CLOCK_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
#: What a count before "a week" may count besides times ("three nights a week": 3/7): times,
#: days, and occurrences of a thing done ("three gym *sessions* a week", "two piano
#: *lessons* a month"), one or two words of what is done between the count and them.
_COUNTED = r"x|times?|nights?|days?|mornings?|afternoons?|evenings?|sessions?|shifts?|classes"
_OCCURRENCES = r"sessions?|shifts?|classes|class|lessons?|workouts?|visits?|trips?"
_FREQUENCY = re.compile(
    rf"\b(?:(?P<c>once|twice|thrice|(?:{_COUNT_WORDS}|\d{{1,2}})\s*(?:{_COUNTED})"
    rf"|(?:{_COUNT_WORDS}|\d{{1,2}})\s+(?:[a-z]+\s+){{0,2}}(?:{_OCCURRENCES}))\s+)?"
    r"(?<!\bfor )(?<!\bin )(?<!\bwithin )(?<!\bafter )(?<!\bover )(?:(?:a|an|per|each)\s+|(?<=[\dkK%万元块])/)"
    r"(?P<p>second|minute|hour|day|night|week|fortnight|month|quarter|year|mo|yr|wk|hr)\b"
    r"(?!\s+(?:ago|later|earlier|old|before|after|from|or\b))"
    rf"|\bevery\s+(?:(?P<n>other|half|{_COUNT_WORDS}|\d{{1,2}})\s+)?"
    r"(?P<p2>hour|day|night|week|fortnight|month|quarter|year)s?\b"
    # "every morning": daily; the word after it stays a word (which part of the day)
    r"|\bevery\s+(?=(?:morning|afternoon|evening)s?\b)(?P<tod>)"
    rf"|\b(?:(?P<cw>once|twice|thrice|(?:{_COUNT_WORDS}|\d{{1,2}})\s*(?:x|times?))\s+)?"
    r"(?P<w>hourly|daily|nightly|weekly|biweekly|fortnightly|monthly|quarterly|yearly"
    r"|annually)\b|(?P<zw>天天)"
    r"|每(?P<zn>[两二三四五六七八九十]|\d{1,2})?个?(?P<zp>秒钟|秒|分钟|小时|天|日|晚|周|星期|礼拜|月|季度|年)"
    r"(?:(?P<zc>[一两二三四五六七八九十]|\d{1,2})次)?"
    r"|(?P<zc1>[一两二三四五六七八九十双]|\d{1,2})?个?(?P<zp1>周|星期|月|年|天)(?P<zc2>[一两二三四五六七八九十]|\d{1,2})次",
    re.I)
#: Words after which "a day", "an hour" is a span of time, not a rate ("takes an hour",
#: "for a week", "about a month"): our list, of the verbs of lasting and the words of
#: measure and limit before an amount.
_SPAN_BEFORE = ("for", "in", "within", "after", "over", "under", "take", "takes", "took",
                "taking", "last", "lasts", "lasted", "spend", "spends", "spent", "wait",
                "waited", "about", "around", "roughly", "nearly", "almost", "than", "least",
                "most", "only", "just", "approximately")
_SPAN_UNITS = "minute|hour|day|week|month|year"
_SPELLED_SPAN = re.compile(
    rf"(?<!\bevery )\bhalf\s+(?:an?\s+)?(?P<dhalf>{_SPAN_UNITS})\b(?!\s+(?:ago|later|earlier|old)\b)"
    "|(?:" + "|".join(rf"(?<=\b{w} )" for w in _SPAN_BEFORE) + ")"
    + rf"(?:an?|one)\s+(?P<dunit>{_SPAN_UNITS})\b(?P<dmore>\s+and\s+a\s+half\b)?"
    r"(?!\s+(?:ago|later|earlier|old|before|after|from|or)\b)", re.I)
#: ISO 4217 codes written before an amount ("CHF 24").
_CURRENCY_CODES = "USD|EUR|GBP|CHF|HKD|JPY|CNY|RMB|CAD|AUD|SGD|NZD|TWD|KRW|INR|MXN|BRL|RUB"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # a name written in quotes or title marks (公众号叫“慢读笔记”, 《三体》): one value
    ("quoted", re.compile(r"(?<=[\u4e00-\u9fff：:])\s*\"(?P<quoted>[^\"\n]{1,20})\"|《(?P<title>[^《》\n]{1,20})》")),
    ("url", re.compile(rf"\b(?:https?|ftp|ssh|git|s3|postgres(?:ql)?|mysql|redis|mongodb)://[^\s<>\"'`，。）){HAN_RANGES}]+", re.I | _A)),
    ("email", re.compile(r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b", _A)),
    ("ip", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::(?P<port>\d{1,5}))?\b", _A)),
    # a commit SHA, a digest or a UUID ("commit 8d2e1f0a9b", "sha256:4c5e…", "9b1deb4d-3b7d-
    # 4bad-9bdd-2b0d7b3dcb6d"): one identifier, compared whole, case aside; never words
    ("hexid", re.compile(
        r"(?<![\w./-])(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"
        r"|(?=[0-9a-f]{0,63}[a-f])(?=[0-9a-f]{0,63}[0-9])[0-9a-f]{7,64})(?![\w-])",
        re.I | _A)),
    ("region", re.compile(
        r"\b(?:(?:us|eu|ap|sa|ca|me|af|il|cn|mx)-(?:gov-)?(?:north|south|east|west|central|"
        r"northeast|southeast|northwest|southwest)-\d|(?:us|europe|asia|australia|"
        r"northamerica|southamerica|me|africa)-(?:north|south|east|west|central|northeast|"
        r"southeast|northwest|southwest)\d|cn-(?:hangzhou|shanghai|beijing|shenzhen|qingdao|"
        r"zhangjiakou|huhehaote|wulanchabu|chengdu|hongkong|guangzhou|heyuan|nanjing|fuzhou)"
        r"|ap-(?:guangzhou|shanghai|beijing|chengdu|chongqing|nanjing|hongkong|singapore|"
        r"tokyo|seoul|mumbai|bangkok|jakarta))\b", re.I | _A)),
    ("date", re.compile(r"\b(?P<y>(?:19|20)\d\d)[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})\b", _A)),
    # a day and a month in numbers before the year ("3/15/2026", "15/03/2026"), read when
    # the order shows (a part above 12, or both alike); "3/4/2026" could be either
    ("date", re.compile(r"(?<![\d/])(?P<sa>\d{1,2})/(?P<sb>\d{1,2})/(?P<y>(?:19|20)\d\d)\b", _A)),
    ("date", re.compile(r"(?:(?P<y>(?:19|20)\d\d)\s*年\s*)?(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月"
                        r"\s*(?P<d>\d{1,2}|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*[日号號]")),
    ("date", re.compile(
        rf"\b(?P<mon>{_MONTH_WORDS})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>(?:19|20)\d\d)\b)?",
        re.I | _A)),
    ("date", re.compile(
        rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH_WORDS})\b\.?(?:,?\s+(?P<y>(?:19|20)\d\d)\b)?",
        re.I | _A)),
    # a time zone ("UTC+8", "CET", "Europe/Berlin", "北京时间"): which clock a time is on
    ("zone", re.compile(
        r"\b(?:UTC|GMT)(?:\s*[+\-−]\s*\d{1,2}(?::?[0-5]\d)?)?(?![\w+])"
        r"|\b(?:CET|CEST|EET|EEST|WET|WEST|BST|IST|JST|KST|HKT|SGT|AWST|ACST|AEST|AEDT|NZST|"
        r"NZDT|PST|PDT|MST|MDT|CST|CDT|EST|EDT|AKST|AKDT|HST)\b"
        # the US zones without their season ("9:30 PT", "3pm ET"), only right after a clock
        # time: alone, "PT" is part-time or physiotherapy
        r"|(?:(?<=\d)|(?<=\d )|(?<=[ap]m )|(?<=[AP]M ))(?:PT|ET|CT|MT)\b"
        r"|\b(?:Africa|America|Asia|Atlantic|Australia|Europe|Pacific|Indian)/[A-Z][A-Za-z_]+"
        r"(?:/[A-Z][A-Za-z_]+)?\b|(?:北京|东京|纽约|伦敦|太平洋|美东|美西|格林尼治)时间", _A)),
    # a clock time told in words: "half past nine", "quarter past ten", "quarter to eight"
    ("time", re.compile(
        rf"\b(?:(?P<half>half)\s+past|(?P<qp>quarter)\s+past|(?P<qto>quarter)\s+to)\s+"
        rf"(?P<h>1[0-2]|0?[1-9]|{_CLOCK_WORDS})(?:\s*(?P<ap>[ap])\.?m\b\.?|\s+(?:in\s+the\s+"
        r"(?P<part>morning|afternoon|evening)|(?P<night>at\s+night|tonight))\b|\b)", re.I | _A)),
    # a clock time told by the part of the day ("eleven at night", "10 in the morning"),
    # noon and midnight
    ("time", re.compile(
        rf"\b(?P<h>1[0-2]|0?[1-9]|{_CLOCK_WORDS})(?::(?P<mi>[0-5]\d))?(?:\s+o'?clock)?\s+"
        r"(?:in\s+the\s+(?P<part>morning|afternoon|evening)|(?P<night>at\s+night|tonight))\b"
        r"|\b(?P<noon>noon|midday|midnight)\b", re.I | _A)),
    ("time", re.compile(r"\b(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?:\s*(?P<ap>[ap])\.?m\.?)?\b", re.I | _A)),
    ("time", re.compile(r"\b(?P<h>1[0-2]|0?[1-9])\s*(?P<ap>[ap])\.?m\b\.?", re.I | _A)),
    # a bare hour after "at" that ends its clause ("the standup is at 10, not 9:30", "at 7
    # sharp", "at 6 every day"): a clock time, unless what stands before it is an amount
    # (:data:`_AMOUNT_BEFORE_AT`: "capped at 5.")
    ("time", re.compile(
        r"\bat\s+(?P<h>2[0-3]|1\d|0?[1-9])(?:\s+o'?clock)?(?=\s*(?:[,;!?)，。；]|\.(?!\d)|$)"
        r"|\s+(?:not|instead|sharp|every|each|daily|on|tomorrow|today|tonight|now|and|or|but|"
        r"rather|from|until|till|then)\b)", re.I | _A)),
    ("time", re.compile(r"(?P<zap>上午|下午|晚上|早上|凌晨|中午|清晨|傍晚)?(?<![早晚快慢多少大小好高低长短有冷热暖凉轻重细粗松紧严宽贵远近深浅强弱亮暗甜咸淡辣软硬干湿胖瘦稳])(?P<h>\d{1,2}|[一二两三四五六七八九十]+)\s*[点點](?P<half>半)?")),
    ("host", re.compile(
        r"\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:[a-z]{2,}|internal|local|lan|corp|intra)"
        r"(?::(?P<port>\d{1,5}))?(?P<hpath>(?:/[\w~%@+-]+(?:\.[\w~%@+-]+)*)+/?)?"
        r"(?=[^\w.]|\.(?:\s|$)|$)", re.I | _A)),
    ("port", re.compile(r"(?:\bports?\s*(?:number\s*)?(?:is\s*|to\s*|=\s*|:\s*)?|端口(?:号)?\s*(?:是|为|改为|改成|设为|换成|改到)?了?\s*|(?<=\s):)(?P<port>\d{2,5})\b", re.I | _A)),
    ("path", re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@-]+){2,}/?|\b[A-Za-z]:\\[\w\\. -]+", _A)),
    # which sprint, week or quarter a record is about ("sprint 14", "Q2", "第3周"): a label of
    # the period, never a count
    ("period", re.compile(
        r"\b(?P<pl>sprint|iteration|week|wk|cycle|semester)\s*#?\s*(?P<pn>\d{1,3})"
        r"(?![A-Za-z0-9_%]|[.,]\d)|(?<![A-Za-z0-9_])[qQ](?P<q>[1-4])(?![A-Za-z0-9_])"
        r"|第\s*(?P<zn>\d{1,3}|[一二三四五六七八九十]+)\s*(?P<zl>周|期|季度|轮|学期|个冲刺)",
        re.I)),
    # a flat, suite, room or floor number ("Apt 3B", "Unit 7", "Suite 400", "level 3", "bay
    # 12"): an identifier, never a size, a count or an hour
    ("premises", re.compile(r"\b(?:apt|apartment|unit|suite|ste|room|rm|flat|terminal|gate|platform|building|bldg|floor|level|lvl|deck|bay|dock|ward|cabin|locker|pier|berth|seat|row)\.?\s*#?\s*\d+[a-z]?"
                      r"(?![\w%.,]\d|[\w%])", re.I | _A)),
    ("version", re.compile(r"\bv(?P<v>\d+(?:\.\d+){0,3}(?:[-+][\w.]+)?)\b|\b(?P<v2>\d+\.\d+(?:\.\d+){1,2}(?:-[\w.]+)?)\b", re.I | _A)),
    # a bare number right after a product's name is its version ("Postgres 15", "Kubernetes
    # 1.30", "Node 20"), never a count with a unit ("Bob 3 times")
    ("version", re.compile(r"\b(?!(?:" + _CURRENCY_CODES + r")\b)[A-Z][A-Za-z+#]*[A-Za-z+#]\s+(?P<v3>\d{1,3}(?:\.\d{1,3}){0,2})(?![\w%-]|\.\d)(?!\s*(?:"
                           + "|".join(re.escape(u) for u in _UNIT_WORDS if u.isascii() and len(u) > 1)
                           + r")\b)", _A)),
    ("weekday", re.compile(rf"\b(?P<wd>{_WEEKDAY_WORDS}|weekend|weekday)s?\b|(?<![\d一两二三四五六七八九十]个)(?<![\d一两二三四五六七八九十])工作日(?P<zwork>)|(?:星期|周|礼拜)(?P<zwd>[一二三四五六日天末])(?P<zmore>(?:[、，,和及与]\s*[一二三四五六日天](?![次遍回趟个号]))*)(?![次遍回趟])", re.I | _A)),
    ("month", re.compile(r"\b(?P<mon>january|february|march|april|june|july|august|september|october|november|december)\b|(?:(?<=\bin )|(?<=\bby )|(?<=\bof )|(?<=\bfor )|(?<=\bduring )|(?<=\bthe )|(?<=since )|(?<=until )|(?<=early )|(?<=late )|(?<=\bmid[- ])|(?<=\bnext )|(?<=\blast )|(?<=\bthis ))(?P<may>(?-i:May))\b(?!\s+(?:be|have|not|need|want|also|still)\b)|(?P<zm>十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])月(?!份?[\d一二三四五六七八九十]+[日号])", re.I)),
    # a span of time told without digits ("takes *an hour*", "for *a day and a half*", "*half
    # an hour*"), read before "a day" can be read as a rate ("twice a day")
    ("number", _SPELLED_SPAN),
    ("frequency", _FREQUENCY),
    # a chat channel ("#pay-alerts"): an identifier
    ("id", re.compile(r"(?<![\w#&/])#[a-z][a-z0-9_-]*-[a-z0-9_-]+", re.I | _A)),
    ("money", re.compile(r"(?P<cur>(?<![A-Za-z])(?:HK|US|AU?|CA?|NZ|S|NT|R)\$|[$€£¥￥₹₩₽]|"
                         rf"\b(?:{_CURRENCY_CODES})(?=\s?\d))\s?(?P<n>\d+(?:[,.]\d+)*)(?P<k>[kKmM万]|\s+(?:thousand|million|billion)\b)?",
                         re.I)),
    ("number", re.compile(
        r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)(?P<sign>(?<![\w-])[-−](?=\d))?(?P<n>\d+(?:,\d{3})*(?:\.\d+)?(?:,\d{1,2}(?=\s?(?:[€£]|eur\b|euros?\b)))?)(?P<k>[kKmM](?![a-zA-Z])|万|千|\s+(?:thousand|million|billion)\b)?(?:-(?=[a-z]{3})|\s*)(?P<u>"
        + "|".join(re.escape(u) for u in _UNIT_WORDS)
        + r")?(?![A-Za-z0-9_])", re.I)),
    # half an hour, and "一个半小时" (an hour and a half)
    ("number", re.compile(r"(?P<zhalf>(?:(?P<zhn>[一两二三四五六七八九十]|\d{1,2})个)?半个?(?:小时|钟头))")),
    ("number", re.compile(r"(?P<zn>[零〇一二两三四五六七八九十百千万]+)(?P<u>个小时|小时|分钟|毫秒|秒钟|秒|公斤|千克|公里|千米|块钱|块|元|人|次|遍|个月|周|天|年|岁|斤|米|度|倍|%|个|位|名|只|条|辆|台|套|件|张|本|杯|瓶|碗|份|顿|趟|圈|页|篇|首|部|节|双|片|颗|粒|根|支)")),
    # a floor in Han numerals ("三楼", "十二层"), as "3楼" is read
    ("number", re.compile(r"(?<![零〇一二两三四五六七八九十百千万第])(?P<zn>[一二两三四五六七八九十]{1,3})"
                          r"(?=[楼层])")),
    ("number", re.compile(r"(?P<zpk>[百千])分之(?P<zp>[零〇一二两三四五六七八九十百]+)")),
    # a share in tenths ("八成" 80%, "九成五" 95%), after a word of amount or before the end
    # of its clause; never 八成 as "most likely" ("八成是他") nor a word (成为, 完成, 一成不变)
    ("number", re.compile(r"(?<![零〇一二两三四五六七八九十百千万])(?P<zt>[一二三四五六七八九])成"
                          r"(?P<zth>[一二三四五六七八九])?(?=[，。；！？,.;!?以左上的]|$)")),
    # an amount in Han numerals with no unit after it ("房租一个月六千五"); only one with
    # 百 / 千 / 万 after a digit, so words such as 千万 ("by all means") stay words
    ("number", re.compile(r"(?<![零〇一二两三四五六七八九十百千万])(?P<zn>[一二两三四五六七八九]"
                          r"[百千万][零〇一二两三四五六七八九十百千万]*)(?![零〇一二两三四五六七八九十百千万])")),
    # dozens in Chinese ("一打鸡蛋" 12, "两打" 24, "半打啤酒" 6); never 打 as a verb after
    # 一 ("一打开就…", "一打听", "打电话")
    ("number", re.compile(r"(?<![零〇一二两三四五六七八九十百千万\d])(?P<zdz>[一两二三四五六七八九十半])打"
                          r"(?![开听扫算印包电车球卡折工针字架游断乱理扰招闹量过败中死])")),
    ("number", re.compile(rf"\b(?P<en>(?:{_EN_TENS})[- ](?:{_EN_ONES})\b|{'|'.join(sorted(_EN_NUMBERS, key=len, reverse=True))})(?:\s+(?P<en_scale>hundred|thousand|million|dozen))?\b(?:[\s-]+(?P<u>{'|'.join(re.escape(u) for u in _UNIT_WORDS if len(u) > 2)}))?\b", re.I | _A)),
    # a currency named without an amount ("track my expenses in Singapore dollars", "记账用日元")
    ("currency", re.compile(
        r"\b(?P<cur_en>(?:(?:us|u\.s\.|singapore|hong kong|canadian|australian|new zealand|nt)\s+)?"
        r"(?:dollars?|euros?|yen|yuan|rmb|renminbi|sterling|rupees?|rubles?|roubles?|pesos?))\b"
        r"|(?P<cur_zh>人民币|日元|美元|欧元|英镑|港币|港元|新加坡元|新币|加元|加币|澳元|澳币|韩元|新台币|台币|卢布|卢比|瑞郎)",
        re.I)),
    ("unit", re.compile(r"\b(?P<unit>kilomet(?:re|er)s?|miles?|met(?:re|er)s?|feet|foot|inch(?:es)?|celsius|fahrenheit|milliseconds?|seconds|minutes|hours|kilograms?|pounds|lbs|kgs?|litres?|liters?|gallons?|metric|imperial)\b|(?P<zunit>公里|英里|摄氏度?|华氏度?|毫秒|公斤|磅|英尺|英寸|公制|英制)", re.I | _A)),
    ("code", re.compile(r"`([^`\n]+)`")),
    # a command-line flag ("pytest *-x*", "git push *--force-with-lease*"), after a space,
    # a bracket or a quote: which option is given, a value of the command; never a hyphenated
    # word ("re-run", "上海-Shanghai") or a negative number
    ("flag", re.compile(r"(?<![^\s(\[`\"'])--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w\-])",
                        _A)),
    # the value of a setting written KEY=value ("NODE_ENV=*production*"); the key is read as
    # an identifier after it, so two settings of one key compare by their values
    ("setting", re.compile(r"(?:(?<=[A-Za-z0-9_]=)|(?<=[A-Za-z0-9_] = ))(?P<setting>[A-Za-z](?:[\w.:/-]*[\w/])?)", _A)),
    # a street after its district or city ("静安区*南京西路*", "杭州*上海路*"): a value of
    # the address, whatever city it is named after
    ("street", re.compile(r"(?<=[区市县镇州京海])[\u4e00-\u9fff]{1,5}?(?:[东西南北中]路|大道|大街"
                          r"|路|街|巷)(?![\u4e00-\u9fff]{0,1}口)")),
    ("place", _ZH_PLACE_RE),
    # a language named in Chinese is a value, as its capitalised English name is ("用*英文*
    # 回答我" / "Answer me in *Chinese*")
    ("zhlang", re.compile("|".join(sorted(_ZH_LANGUAGES, key=len, reverse=True)))),
    # what someone or something is called, in Chinese ("我的猫叫*豆豆*", "儿子名叫*小明*"): a
    # name at the end of its clause, never a pronoun ("大家都叫我老王") or a thing ordered
    # ("叫外卖", "叫车")
    ("zhname", re.compile(r"(?:名字叫|名字是|名叫|叫做|叫)(?![我你他她它咱外车醒好法了啦过着])"
                          r"(?P<zhname>[\u4e00-\u9fff]{1,4}?)[了啦]?(?=[，。；！？、,.;!?\s)）]|$)")),
    ("id", re.compile(
        r"(?<![\w@/.-])(?:@[a-z0-9][\w.-]*/[\w.-]+|[A-Za-z]+(?:_[A-Za-z0-9]+)+|"
        r"[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[A-Za-z]+\d+[A-Za-z\d]*|"
        r"[A-Za-z][\w]*(?:-[\w]+)*-\d[\w-]*|[\w-]+\.(?:md|py|js|ts|json|toml|yaml|yml|txt|"
        r"sh|go|rs|sql|csv|lock|cfg|ini|env))(?![\w@/])", _A)),
]


#: Zones named by the one offset they always have (no summer time), and Chinese names.
_ZONE_OFFSETS = {"GMT": "UTC", "JST": "UTC+9", "KST": "UTC+9", "HKT": "UTC+8", "SGT": "UTC+8",
                 "AWST": "UTC+8", "北京时间": "UTC+8", "东京时间": "UTC+9",
                 "格林尼治时间": "UTC"}


def _zone_text(spelling: str) -> str:
    """``"GMT+08:00"`` → ``"UTC+8"``, ``"北京时间"`` → ``"UTC+8"``, ``"CET"`` → ``"CET"``."""
    text = re.sub(r"\s+", "", spelling).replace("−", "-").replace("GMT", "UTC")
    offset = re.fullmatch(r"UTC([+-])(\d{1,2})(?::?(\d\d))?", text)
    if offset:
        sign, hours, minutes = offset.groups()
        hours_text = str(int(hours)) + (f":{minutes}" if minutes and minutes != "00" else "")
        text = "UTC" if hours_text == "0" else f"UTC{sign}{hours_text}"
    return _ZONE_OFFSETS.get(text, text)


_PATH_END = re.compile(r"(?<=[\w@/-])\.+$")


def _day_or_month(text: str) -> int:
    """``"3"`` or ``"三"`` -> 3, ``"二十五"`` -> 25 (a Chinese date's month or day). Raises
    ``ValueError`` when it is neither."""
    number = int(text) if text.isdigit() else _zh_number(text)
    if number is None:
        raise ValueError(text)
    return number


def _date_value(match: re.Match[str], written: date | None) -> str | None:
    groups = match.groupdict()
    if groups.get("sa"):
        a, b = int(groups["sa"]), int(groups["sb"])
        if a != b and a <= 12 and b <= 12:
            return None  # "3/4/2026": March 4 or April 3
        groups = {"m": str(min(a, b) if max(a, b) > 12 else a),
                  "d": str(max(a, b)), "y": groups["y"]}
    try:
        month = _day_or_month(groups["m"]) if groups.get("m") \
            else _MONTHS[groups["mon"].lower().rstrip(".")]
        day = _day_or_month(groups["d"])
        year = int(groups["y"]) if groups.get("y") else (written.year if written else None)
        if year is None:
            date(2000, month, day)  # validity only
            return f"{month:02d}-{day:02d}"
        return date(year, month, day).isoformat()
    except (KeyError, ValueError, TypeError):
        return None


#: The ``unit`` of a time told by a bare hour ("at 7"): 07:00 as read, or the same hour of the
#: afternoon (the judgement takes "at 7" and "7 pm" for one time).
HOUR_OF_EITHER_HALF = "either half of the day"

#: Words before "at" that make the bare number after it an amount, not an hour ("capped at
#: 5", "priced at 12"): our list, of the verbs and nouns of limits and measures.
_AMOUNT_BEFORE_AT = re.compile(
    r"\b(?:capped|limited|priced|pegged|rated|valued|maxed|peaked|topped|bottomed|scored|"
    r"ranked|level|levels|version|size|number|count|total|score|rank|aged?|age)\s+(?:out\s+)?$"
    r"|\b(?:limits?|caps?|quotas?|max(?:imum)?|min(?:imum)?|thresholds?|budgets?|prices?|"
    r"rates?|ratios?|temperature|volume|speed|retries|workers|threads|replicas|thermostat|"
    r"heating|heater|battery|humidity|brightness|pressure|weight)\b"
    r"(?:\s+\w+){0,2}\s+$", re.I)


def _time_value(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    if match.group(0)[:2].casefold() == "at" and _AMOUNT_BEFORE_AT.search(
            match.string[max(0, match.start() - 24):match.start()]):
        return None
    if groups.get("noon"):
        return "00:00" if groups["noon"].lower() == "midnight" else "12:00"
    raw = groups["h"]
    hour = int(raw) if raw.isdigit() else _EN_NUMBERS.get(raw.lower()) or _zh_number(raw)
    if hour is None:
        return None
    minute = int(groups.get("mi") or 0) + (30 if groups.get("half") else 0) + (
        15 if groups.get("qp") else 0)
    if groups.get("qto"):  # "quarter to eight": 7:45
        hour, minute = (hour - 1) or 12, 45
    ap = (groups.get("ap") or "").lower()
    zap = groups.get("zap") or ""
    part = (groups.get("part") or "").lower()
    # "eleven at night" is 23:00; "two at night" stays 02:00
    evening = part in {"afternoon", "evening"} or (bool(groups.get("night")) and hour >= 6)
    if (ap == "p" or zap in {"下午", "晚上"} or evening) and hour < 12:
        hour += 12
    if (ap == "a" or zap == "凌晨") and hour == 12:
        hour = 0
    if hour > 24 or minute >= 60:
        return None
    return f"{hour:02d}:{minute:02d}"


def _han_number_value(groups: dict[str, str]) -> Value | None:
    """A number in Han numerals: dozens (一打 12, 半打 6), half hours (三个半小时), per cent
    (百分之十) or a count or measure (三公斤)."""
    if groups.get("zt"):  # 八成: 80%; 九成五: 95%
        tenths = (_zh_number(groups["zt"]) or 0) * 10 + (_zh_number(groups.get("zth") or "")
                                                         or 0)
        return Value("number", str(tenths), "%")
    if groups.get("zdz"):  # 一打: a dozen; 半打: half a dozen
        dozens = 0.5 if groups["zdz"] == "半" else _zh_number(groups["zdz"])
        return None if dozens is None else Value("number", _number_text(dozens * 12), "")
    if groups.get("zhalf"):
        whole = _zh_number(groups["zhn"]) if groups.get("zhn") and not groups["zhn"].isdigit() \
            else int(groups.get("zhn") or 0)
        unit, factor = _unit("小时")
        return Value("number", _number_text(((whole or 0) + 0.5) * factor), unit)
    if groups.get("zp"):
        percent = _zh_number(groups["zp"])
        if percent is not None and groups.get("zpk") == "千":  # 千分之二: 0.2%
            return Value("number", _number_text(percent / 10), "%")
        return None if percent is None else Value("number", str(percent), "%")
    if groups.get("zn"):
        han = _zh_number(groups["zn"])
        if han is None:
            return None
        unit, factor = _unit((groups.get("u") or "").lower())
        return Value("number", _number_text(han * factor), unit)
    return None


def _number_value(match: re.Match[str]) -> Value | None:
    groups = match.groupdict()
    if groups.get("en"):
        spelled = groups["en"].lower()
        words = float(_EN_NUMBERS.get(spelled) or sum(
            _EN_NUMBERS[part] for part in re.split(r"[- ]", spelled)))  # "forty-five"
        words *= {"hundred": 100, "thousand": 1000, "million": 1e6, "dozen": 12}.get(
            (groups.get("en_scale") or "").lower(), 1)
        unit, factor = _unit((groups.get("u") or "").lower())
        return Value("number", _number_text(words * factor), unit)
    if groups.get("dhalf") or groups.get("dunit"):  # "half an hour", "a day and a half"
        span = 0.5 if groups.get("dhalf") else 1.5 if groups.get("dmore") else 1.0
        unit, factor = _unit((groups.get("dhalf") or groups["dunit"]).lower())
        return Value("number", _number_text(span * factor), unit)
    if any(groups.get(name) for name in ("zt", "zdz", "zhalf", "zp", "zn")):
        return _han_number_value(groups)
    raw = _amount_digits(groups["n"])
    try:
        number = float(raw)
    except ValueError:
        return None
    if groups.get("k") == "m" and not groups.get("u") and not groups.get("sign"):
        return Value("number", _number_text(number), "m")  # "5m": minutes, megabytes, metres?
    scale = _SCALES.get((groups.get("k") or "").strip().lower(), 1.0)
    if groups.get("sign"):
        scale = -scale  # "-18 °C" is not "18 °C"
    spelling = (groups.get("u") or "").lower()
    unit, factor = _unit(spelling) if spelling else ("", 1.0)
    if unit in CURRENCIES and _GROUPING_POINTS.fullmatch(groups["n"]):
        number = float(_amount_digits(groups["n"], money=True))  # "1.250 €", "1.250欧元"
    if unit == "th" and number > 31:
        unit = "no"  # "南京西路1266号": a house number, no day of the month
    if spelling == "年" and scale == 1.0 and raw.isdigit() and len(raw) == 4 and \
            1900 <= number < 2100:
        return Value("number", raw, "")  # "2019年搬到上海": the year, as "in 2019" reads
    power = round(math.log(factor, 1024)) if unit == "byte" and scale == 1.0 else -1
    return Value("number", _number_text(number * scale * factor), unit,
                 power if power >= 0 and 1024.0**power == factor else -1)


#: What a number's scale word multiplies it by ("12k", "1.2M", "1.2 million", "3万").
_SCALES = {"k": 1e3, "m": 1e6, "万": 1e4, "千": 1e3, "thousand": 1e3, "million": 1e6,
           "billion": 1e9}


#: A decimal comma: one or two digits after the last comma, no point after it ("€3,50",
#: "1.250,5"), never the thousands of "1,000" or "12,500".
_DECIMAL_COMMA = re.compile(r",(\d{1,2})\Z")


#: Points that group the thousands of an amount of money ("€1.250", "R$ 2.500"): three
#: digits after each point. Money is never written with three decimals, so "€1.250" is
#: 1,250 euros, as "€1.250,50" is 1,250.50; a measure keeps its point ("1.250 kg").
_GROUPING_POINTS = re.compile(r"\d{1,3}(?:\.\d{3})+")


def _amount_digits(spelling: str, *, money: bool = False) -> str:
    """The digits of an amount as ``float`` reads them: "1,000" -> "1000", "3,50" -> "3.50",
    "1.250,50" -> "1250.50" (a decimal comma, the points before it grouping thousands);
    of ``money``, "1.250" -> "1250" (:data:`_GROUPING_POINTS`)."""
    if money and _GROUPING_POINTS.fullmatch(spelling):
        return spelling.replace(".", "")
    if _DECIMAL_COMMA.search(spelling):
        whole, cents = spelling.rsplit(",", 1)
        return f"{whole.replace('.', '').replace(',', '')}.{cents}"
    return spelling.replace(",", "")


def _money_value(match: re.Match[str]) -> Value | None:
    """An amount and its currency; ``None`` when the digits after the sign are no amount
    ("$ 12.5.1a", "€ 3.11.0rc1": a version after a currency sign)."""
    raw = _amount_digits(match.group("n"), money=True)
    scale = _SCALES.get((match.group("k") or "").strip().lower(), 1.0)
    sign = match.group("cur").lower()
    try:
        amount = float(raw)
    except ValueError:
        return None
    return Value("number", _number_text(amount * scale),
                 _CURRENCY_PREFIX.get(sign) or _UNITS.get(sign, (sign, 1.0))[0])


def _count(spelling: str | None) -> int:
    """How many a count spells ("twice" 2, "3x" 3, "三" 3, "0" 0); 1 when none is written."""
    if not spelling:
        return 1
    # "3x" / "3 times" / "three nights": the count without what it counts ("six" keeps its x)
    word = re.sub(rf"(?:(?<=\d)|\s+)(?:{_COUNTED}|{_OCCURRENCES})$", "", spelling.lower().strip())
    word = word.split()[0] if word else word  # "three gym sessions": three
    for number in ({"once": 1, "twice": 2, "thrice": 3, "other": 2, "双": 2}.get(word),
                   _EN_NUMBERS.get(word), _zh_number(word)):
        if number is not None:
            return number
    return int(word) if word.isdigit() else 1


def _frequency_value(match: re.Match[str]) -> Value | None:
    """``Value("frequency", "count/days")``: how many times in how many days; ``None`` for a
    count or a period of zero ("every 0 days", "每0天", "0 times a week"): no rate at all."""
    g = match.groupdict()
    counts = [g[name] for name in ("cw", "c", "n", "zc", "zn", "zc1", "zc2") if g[name]]
    if any(_count(count) == 0 for count in counts):
        return None
    if g["w"] or g["zw"]:
        count, period = _FREQUENCY_WORDS[_folded(g["w"] or g["zw"])]
        rate = Fraction(int(count) * _count(g["cw"])) / _PERIOD_DAYS[period]
    elif g["p"]:
        rate = Fraction(_count(g["c"])) / _PERIOD_DAYS[_folded(g["p"])]
    elif g["p2"]:  # "every other day": 1/2; "every half hour": 48 a day
        every = Fraction(1, 2) if _folded(g["n"] or "") == "half" else _count(g["n"])
        rate = 1 / (every * _PERIOD_DAYS[_folded(g["p2"])])
    elif g["tod"] is not None:
        rate = Fraction(1)
    elif g["zp"]:
        rate = Fraction(_count(g["zc"])) / (_count(g["zn"]) * _PERIOD_DAYS[g["zp"]])
    else:
        rate = Fraction(_count(g["zc2"])) / (_count(g["zc1"]) * _PERIOD_DAYS[g["zp1"]])
    return Value("frequency", f"{rate.numerator}/{rate.denominator}")


def _value_span(kind: str, match: re.Match[str], text: str) -> tuple[int, int]:
    """Where a matched value sits; an empty span when the match is no value."""
    start, end = match.span()
    if kind == "version" and match.groupdict().get("v3"):
        if not text[:start].strip() or text[:start].rstrip()[-1] in ".!?;:\n":
            return start, start  # a capitalised word that opens a sentence: "Works 12 hours"
        return match.start("v3"), end  # the name before it stays a name
    return start, end


def _version_value(match: re.Match[str]) -> Value:
    groups = match.groupdict()
    version = (groups.get("v") or groups.get("v2") or groups.get("v3") or "").lower()
    while version.endswith(".0"):
        version = version[:-2]  # "20.0.0" is "v20.0" is "v20"
    return Value("version", version)


#: Value kinds read by one function of the match.
def _premises_value(match: re.Match[str]) -> Value:
    """"Apt. 3B" → ``Value("id", "apt3b")``: one token, so that "Room 204" and "Room 305"
    share no word."""
    return Value("id", re.sub(r"[\s.#]+", "", match.group(0).lower()).replace("apartment", "apt"))


_READERS: dict[str, Callable[[re.Match[str]], Value | None]] = {
    "money": _money_value, "frequency": _frequency_value, "premises": _premises_value}


def _host_values(kind: str, match: re.Match[str]) -> list[Value] | None:
    """An IP or host name and its port; ``None`` for a dotted word that names no host."""
    whole, port = match.group(0), match.group("port")
    path = (match.groupdict().get("hpath") or "").rstrip("/")
    name = whole[: match.start("port") - 1 - match.start()] if port else \
        whole[: len(whole) - len(match.groupdict().get("hpath") or "")]
    if kind == "host" and not _looks_like_host(name):
        return None
    # a page of the host ("github.com/acme/api") is the host and its path: one value
    return [Value(kind, name.lower() + path)] + ([Value("port", port)] if port else [])


def _weekday_value(match: re.Match[str]) -> Value | list[Value]:
    """One weekday, or each of a Chinese list that names 周 once (周一、三、五: 1, 3, 5)."""
    if match.group("zwork") is not None:
        number = 9
    elif match.group("wd"):
        number = {**_WEEKDAYS, "weekend": 8, "weekday": 9}[_folded(match.group("wd"))]
    else:
        more = [Value("weekday", str(_ZH_WEEKDAYS[c]))
                for c in match.group("zmore") or "" if c in _ZH_WEEKDAYS]
        first = Value("weekday", str(_ZH_WEEKDAYS[match.group("zwd")]))
        return [first, *more] if more else first
    return Value("weekday", str(number))


def _month_value(match: re.Match[str]) -> Value | None:
    if match.group("may"):  # "renews in May", "since May"; never the verb ("it may be")
        month = 5
    elif match.group("mon"):
        month = _MONTHS[_folded(match.group("mon"))]
    else:
        zm = match.group("zm")
        month = int(zm) if zm.isdigit() else (_zh_number(zm) or 0)
    return Value("month", str(month)) if 1 <= month <= 12 else None


#: Words naming a kind of period, read to one label ("iteration 4" is "sprint:4").
_PERIOD_LABELS = {"sprint": "sprint", "iteration": "sprint", "个冲刺": "sprint", "week": "week",
                  "wk": "week", "周": "week", "cycle": "cycle", "期": "cycle", "轮": "cycle",
                  "semester": "semester", "学期": "semester", "季度": "quarter"}


def _period_value(match: re.Match[str]) -> Value | None:
    """``Value("period", "sprint:14")``: which sprint, week, quarter … a record is about."""
    g = match.groupdict()
    if g["q"]:
        return Value("period", f"quarter:{g['q']}")
    # (folded as the case-blind pattern matched it: "sprınt 3" with a dotless ı is sprint 3)
    label = (g["pl"] or g["zl"] or "").lower().translate(_CASE_BLIND)
    number = g["pn"] or g["zn"] or ""
    count = int(number) if number.isdigit() else _zh_number(number)
    return Value("period", f"{_PERIOD_LABELS[label]}:{count}") if count else None


#: Dollars of a country named before the word ("Singapore dollars").
_DOLLARS = {"singapore": "sgd", "hong kong": "hkd", "canadian": "cad", "australian": "aud",
            "new zealand": "nzd", "nt": "twd", "us": "usd", "u.s.": "usd"}


def _currency_value(match: re.Match[str]) -> Value:
    """A currency named without an amount, as its ISO 4217 code (``Value("unit", "sgd")``)."""
    spelling = " ".join((match.group("cur_en") or match.group("cur_zh")).lower().split())
    country = next((code for name, code in _DOLLARS.items() if spelling.startswith(name + " ")),
                   None)
    if country is not None:
        return Value("unit", country)
    word = spelling.rstrip("s") if spelling.endswith(("dollars", "euros", "rupees", "rubles",
                                                      "roubles", "pesos")) else spelling
    return Value("unit", _UNITS.get(word, _UNITS.get(spelling, (spelling, 1.0)))[0])


def _unit_value(match: re.Match[str]) -> Value:
    spelling = (match.group("unit") or match.group("zunit") or "").lower()
    return Value("unit", _UNIT_NAMES.get(spelling[:5], spelling))


def _date_or_none(match: re.Match[str], written: date | None) -> Value | None:
    day = _date_value(match, written)
    return None if day is None else Value("date", day)


def _time_or_none(match: re.Match[str]) -> Value | None:
    when = _time_value(match)
    if when is None:
        return None
    if match.group(0)[:2].casefold() == "at" and 1 <= int(match.group("h")) <= 12:
        return Value("time", when, HOUR_OF_EITHER_HALF)  # "at 7": 07:00 or 19:00
    if "zap" in match.re.groupindex and not match.group("zap") and 1 <= int(when[:2]) <= 12:
        return Value("time", when, HOUR_OF_EITHER_HALF)  # "三点" as "at 3": 03:00 or 15:00
    return Value("time", when)


#: A command-line flag alone (:data:`_PATTERNS`): "-x", "--force-with-lease".
_FLAG = re.compile(r"--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


def _code_value(match: re.Match[str]) -> Value:
    """A code span; one holding a flag alone ("`-q`") is the flag, as "-q" written bare."""
    code = match.group(1).strip()
    return Value("flag", code) if _FLAG.fullmatch(code) else Value("code", code.lower())


def _read_alone(read: Callable[[re.Match[str]], Value | None], match: re.Match[str],
                _written: date | None) -> Value | None:
    return read(match)


#: What each value kind reads from its match (``written``: the memory's day); ``None`` when
#: the match is no value of that kind, and the text stays free for the kinds after it.
_KIND_READERS: dict[str, Callable[[re.Match[str], date | None], Value | list[Value] | None]] = {
    "url": lambda m, _w: Value("url", m.group(0).rstrip(".,;:!?)/").lower()),
    "email": lambda m, _w: Value("email", m.group(0).lower()),
    "ip": lambda m, _w: _host_values("ip", m),
    "hexid": lambda m, _w: Value("id", m.group(0).lower()),
    "host": lambda m, _w: _host_values("host", m),
    "region": lambda m, _w: Value("region", m.group(0).lower()),
    "date": _date_or_none,
    "time": lambda m, _w: _time_or_none(m),
    "port": lambda m, _w: Value("port", m.group("port")),
    "zone": lambda m, _w: Value("zone", _zone_text(m.group(0))),
    # a full stop after a path ends the sentence ("the docs are at /docs/web.", "written to
    # /var/log/ingest/."), and a final slash is no part of it either
    "path": lambda m, _w: Value("path", _PATH_END.sub("", m.group(0)).rstrip("/").lower()
                                or "/"),
    "version": lambda m, _w: _version_value(m),
    "weekday": lambda m, _w: _weekday_value(m),
    "month": lambda m, _w: _month_value(m),
    "period": lambda m, _w: _period_value(m),
    **{kind: functools.partial(_read_alone, read) for kind, read in _READERS.items()},
    "number": lambda m, _w: _number_value(m),
    "place": lambda m, _w: Value("name", PLACES_EN.get(m.group(0), m.group(0))),
    "zhname": lambda m, _w: Value("name", m.group("zhname")),
    "zhlang": lambda m, _w: Value("name", _ZH_LANGUAGES[m.group(0)]),
    "quoted": lambda m, _w: Value("name", " ".join((m.group("quoted") or m.group("title"))
                                                   .lower().split())),
    "street": lambda m, _w: Value("name", m.group(0)),
    "unit": lambda m, _w: _unit_value(m),
    "currency": lambda m, _w: _currency_value(m),
    "flag": lambda m, _w: Value("flag", m.group(0)),
    "setting": lambda m, _w: Value("setting", m.group("setting").lower()),
    "code": lambda m, _w: _code_value(m),
    "id": lambda m, _w: Value("id", _name_key(m.group(0))),
}


@dataclass(frozen=True, slots=True)
class _Needs:
    """What a text must hold for a pattern of :data:`_PATTERNS` to match in it: one of
    ``chars``, or (``digit``) a decimal digit of any script (what ``\\d`` matches without
    ``re.ASCII``, a superset of ``[0-9]``). Every match of the pattern holds one of them,
    so a text holding none is not scanned: the same values, without the scan. ``words``:
    or one of these strings in the text as a case-blind pattern reads it (:func:`_folded`)."""

    chars: frozenset[str] = frozenset()
    digit: bool = False
    words: tuple[str, ...] = ()

    def met(self, present: frozenset[str] | set[str], has_digit: bool,
            folded: Callable[[], str] = lambda: "") -> bool:
        """``folded`` gives the text's :func:`_folded` form (asked only for ``words``)."""
        return (self.digit and has_digit) or not self.chars.isdisjoint(present) or (
            bool(self.words) and any(w in folded() for w in self.words))


#: Characters a case-blind pattern (``re.IGNORECASE``) takes for an ASCII letter that
#: ``str.lower`` leaves as they are: the long s and the dotless i (``re``'s own table of
#: such pairs; the Kelvin sign and İ are lowered to ``k`` and ``i`` by :func:`_folded`).
_CASE_BLIND = str.maketrans({"ſ": "s", "ı": "i"})


def _any_of(strings: Sequence[str]) -> re.Pattern[str]:
    """One pattern of ``strings`` as literals: its ``search`` finds a match in a text exactly
    when one of them is a substring of it (``any(s in text for s in strings)``, in one
    search; an empty string is in every text)."""
    return re.compile("|".join(map(re.escape, strings)))


def _folded(text: str) -> str:
    """``text`` lowered as a case-blind pattern compares it with ASCII letters: every match
    of such a pattern of ASCII words holds its words in this form."""
    return text.replace("İ", "i").lower().translate(_CASE_BLIND)


#: What every match of the month pattern holds (a month's name, "May", or 月).
_MONTH_NEEDS = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december", "月")
#: What every match of the frequency pattern holds: a period word after "a", "per",
#: "each" ("twice a week", "every day"), "every", an adverb ("daily", "annually": the others
#: hold their period), 天天, 每…, or …次.
_FREQUENCY_NEEDS = ("second", "minute", "hour", "day", "night", "week", "month", "quarter",
                    "year", "every", "daily", "annually", "天", "每", "次", "/mo", "/yr",
                    "/wk", "/hr")


#: What every match of the clock-time-in-words pattern holds: its part of the day ("at
#: night", "tonight" hold "night"; "afternoon" holds "noon"), noon, midday or midnight.
_TIME_OF_DAY_NEEDS = ("morning", "evening", "night", "noon", "midday")
#: What every English match of the weekday pattern holds (its Chinese ones hold 工作日,
#: 星期, 周 or 礼拜).
_WEEKDAY_NEEDS = ("monday", "tues", "wednesday", "thurs", "friday", "saturday", "sunday",
                  "weekend", "weekday")
#: What every match of the English number-word pattern holds: a number word (thirteen holds
#: "teen", the others of the teens their unit: "fourteen", "sixteen" …; "sixty" holds "six";
#: "a dozen", "half a dozen" hold "dozen").
_NUMBER_WORD_NEEDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                      "ten", "eleven", "twelve", "teen", "twenty", "thirty", "forty", "fifty",
                      "hundred", "thousand", "dozen")
#: What every English match of the currency pattern holds (its Chinese ones hold 币, 元,
#: 镑, 布, 比 or 郎).
_CURRENCY_NEEDS = ("dollar", "euro", "yen", "yuan", "rmb", "renminbi", "sterling", "rupee",
                   "ruble", "rouble", "peso")
#: What every English match of the unit pattern holds ("met" of kilometre, metre, meter and
#: metric; its Chinese ones hold 里, 氏, 秒, 斤, 磅, 尺, 寸 or 制).
_UNIT_NEEDS = ("met", "mile", "feet", "foot", "inch", "celsius", "fahrenheit", "second",
               "minute", "hour", "kilogram", "pound", "lbs", "kg", "litre", "liter", "gallon",
               "imperial")


_DIGIT_NEEDED = _Needs(digit=True)
_ANY_DIGIT = re.compile(r"\d")
#: The :class:`_Needs` of each pattern of :data:`_PATTERNS`, in its order (``None``: always
#: scanned). Each is read off its pattern: every alternative of it holds a character named
#: here (a digit of ``\d{1,2}``, the ``@`` of an e-mail address, the 月 of a Chinese date,
#: a character of each Chinese place name …); ``tests/consistency/test_claims_prefilter.py``
#: checks the values read with and without them on the labelled pairs and on generated text.
_PATTERN_NEEDS: tuple[_Needs | None, ...] = (
    _Needs(frozenset('"《')),  # quoted
    _Needs(frozenset(":")),  # url: "://"
    _Needs(frozenset("@")),  # email
    _DIGIT_NEEDED,  # ip
    _DIGIT_NEEDED,  # hexid: a SHA or a UUID holds a digit
    _Needs(frozenset("-")),  # region: "us-east-1", "cn-hangzhou"
    _DIGIT_NEEDED,  # date: 2026-03-14
    _Needs(frozenset("/")),  # date: 3/15/2026
    _Needs(frozenset("月")),  # date: 3月5日
    _DIGIT_NEEDED,  # date: May 1
    _DIGIT_NEEDED,  # date: 1 May
    _Needs(frozenset("T/时")),  # zone: every abbreviation holds T, "Europe/Berlin", 北京时间
    _Needs(words=("past", "quarter")),  # time: half past nine
    _Needs(words=_TIME_OF_DAY_NEEDS),  # time: "eleven at night", noon
    _Needs(frozenset(":")),  # time: 14:30
    _DIGIT_NEEDED,  # time: 9am
    _DIGIT_NEEDED,  # time: at 10
    _Needs(frozenset("点點")),  # time: 下午3点
    _Needs(frozenset(".")),  # host
    _DIGIT_NEEDED,  # port
    _Needs(frozenset("/\\")),  # path
    _Needs(frozenset("第"), digit=True),  # period: "sprint 14", "Q2", 第3周
    _DIGIT_NEEDED,  # premises
    _DIGIT_NEEDED,  # version: v2.3, 1.30.2
    _DIGIT_NEEDED,  # version: "Postgres 15"
    _Needs(frozenset("工星周礼"), words=_WEEKDAY_NEEDS),  # weekday: Monday, 工作日, 周三
    _Needs(words=_MONTH_NEEDS),  # month
    _Needs(words=("minute", "hour", "day", "week", "month", "year")),  # "takes an hour"
    _Needs(words=_FREQUENCY_NEEDS),  # frequency
    _Needs(frozenset("#")),  # id: "#pay-alerts"
    _DIGIT_NEEDED,  # money
    _DIGIT_NEEDED,  # number
    _Needs(frozenset("半")),  # number: 半小时
    _Needs(frozenset("零〇一二两三四五六七八九十百千万")),  # number: 三公斤
    _Needs(frozenset("楼层")),  # number: 三楼
    _Needs(frozenset("百千")),  # number: 百分之十, 千分之二
    _Needs(frozenset("成")),  # number: 八成
    _Needs(frozenset("一二两三四五六七八九")),  # number: 六千五
    _Needs(frozenset("打")),  # number: 一打, 半打
    _Needs(words=_NUMBER_WORD_NEEDS),  # number: "forty-five"
    _Needs(frozenset("币元镑布比郎"), words=_CURRENCY_NEEDS),  # currency: dollars, 日元
    _Needs(frozenset("里氏秒斤磅尺寸制"), words=_UNIT_NEEDS),  # unit: miles, 公里
    _Needs(frozenset("`")),  # code
    _Needs(frozenset("-")),  # flag: "-x", "--force"
    _Needs(frozenset("=")),  # setting: NODE_ENV=production
    _Needs(frozenset("路街巷道")),  # street
    _Needs(frozenset("".join(_ZH_PLACES))),  # place
    _Needs(frozenset("".join(_ZH_LANGUAGES))),  # zhlang
    _Needs(frozenset("叫名")),  # zhname: 叫, 名字是
    _Needs(frozenset("@_." + string.ascii_uppercase), digit=True),  # id: api_key, fooBar, v2x
)
assert len(_PATTERN_NEEDS) == len(_PATTERNS)


#: :data:`_PATTERN_NEEDS` turned around, to find the patterns a text may match without asking
#: each (:func:`_scanned`): the patterns always scanned, those a digit lets in, those each
#: character lets in, and those that wait for words (``(index, words)``).
_ALWAYS_SCANNED = frozenset(i for i, n in enumerate(_PATTERN_NEEDS) if n is None)
_DIGIT_SCANNED = frozenset(i for i, n in enumerate(_PATTERN_NEEDS) if n is not None and n.digit)
_SCANNED_BY_CHAR: dict[str, frozenset[int]] = {
    char: frozenset(i for i, n in enumerate(_PATTERN_NEEDS) if n is not None and char in n.chars)
    for char in {c for n in _PATTERN_NEEDS if n is not None for c in n.chars}}
_NEEDED_CHARS = frozenset(_SCANNED_BY_CHAR)
#: (each pattern's words as one alternation of literals: found in a text exactly when one of
#: them is a substring of it, in one search)
_SCANNED_BY_WORDS = tuple((i, _any_of(n.words)) for i, n in enumerate(_PATTERN_NEEDS)
                          if n is not None and n.words)


def _scanned(text: str) -> list[int]:
    """The indices of the patterns of :data:`_PATTERNS` whose :data:`_PATTERN_NEEDS` ``text``
    meets (:meth:`_Needs.met`), in order: the same patterns, found from the characters the
    text holds instead of by asking each pattern (a dream reads some 10,000 short subjects
    and texts, 42 patterns each)."""
    scanned = set(_ALWAYS_SCANNED)
    for char in _NEEDED_CHARS.intersection(text):
        scanned |= _SCANNED_BY_CHAR[char]
    if _ANY_DIGIT.search(text) is not None:
        scanned |= _DIGIT_SCANNED
    folded: str | None = None
    for index, words in _SCANNED_BY_WORDS:
        if index not in scanned:
            folded = _folded(text) if folded is None else folded
            if words.search(folded) is not None:
                scanned.add(index)
    return sorted(scanned)


def _extract(text: str, written: date | None) -> tuple[str, list[tuple[int, Value]]]:
    """``text`` with every value replaced by ``⟨kind⟩``, and the values with their offsets."""
    found: list[tuple[int, int, Value]] = []
    taken = [False] * len(text)
    for index in _scanned(text):  # no match can be in the text of another (_PATTERN_NEEDS)
        kind, pattern = _PATTERNS[index]
        reader = _KIND_READERS.get(kind)
        for match in pattern.finditer(text):
            start, end = _value_span(kind, match, text)
            if start == end or any(taken[start:end]):
                continue
            read = reader(match, written) if reader is not None else []
            if read is None:
                continue
            for i in range(start, end):
                taken[i] = True
            found.extend((start, end, v) for v in (read if isinstance(read, list) else [read]))
    found.sort(key=lambda item: (item[0], item[2]))
    found, repeated = _joined_counts(found, text)
    out: list[str] = []
    last = 0
    placed: set[int] = set()
    for start, end, value in found:
        if start in placed:
            continue
        placed.add(start)
        out.append(text[last:start])
        # a period and its count written apart ("每周…三次", "每周工作…5天") are one frequency
        # (:func:`_joined_counts`), said once where the count stands, as in "works 5 days a
        # week"
        out.append(" " if start in repeated else f" {placeholder(value)} ")
        last = end
    out.append(text[last:])
    return "".join(out), [(start, value) for start, _end, value in found
                          if start not in repeated]


#: What may stand between "每周" and its count ("每周去健身房三次"): a few characters of
#: one clause.
_COUNT_GAP = re.compile(r"[^，。,.;；!?！？\n]{0,10}")


#: An amount and a rate's period after it ("100 requests per minute"), a few words apart.
_RATE = re.compile(r"[^\d,.;:!?\n()]{1,30}(?:per|a|an|each) (?:second|minute|hour)\b")


def _joined_counts(found: list[tuple[int, int, Value]], text: str
                   ) -> tuple[list[tuple[int, int, Value]], set[int]]:
    """"每周去健身房三次": a period ("每周", once a week) and its count ("三次") written apart
    are one frequency (three times a week), as "three times a week" is in English; both
    spans then carry it. So are an amount and a rate's period ("100 requests per minute" is
    144,000 a day; "60 a minute" and "one per second" are one rate), in seconds, minutes or
    hours only: "two cups a day" keeps its count apart, as "每天两杯" does. -> the values
    and where each period written apart from its count starts (the count carries it)."""
    joined = list(found)
    repeated: set[int] = set()
    for i, (start, end, value) in enumerate(joined):
        if value.kind == "frequency" and i > 0 and joined[i - 1][2].kind == "number" \
                and not joined[i - 1][2].unit and _RATE.fullmatch(text, joined[i - 1][1], end):
            s0, e0, amount = joined[i - 1]
            try:
                rate = Fraction(amount.text) * Fraction(value.text)
            except (ValueError, ZeroDivisionError):
                continue
            if rate <= 0:
                continue  # "0 requests per minute": no rate
            both = Value("frequency", f"{rate.numerator}/{rate.denominator}")
            joined[i - 1], joined[i] = (s0, e0, both), (start, end, both)
            continue
        if value.kind != "frequency" or not text.startswith("每", start) \
                or "次" in text[start:end]:
            continue
        for j in range(i + 1, len(joined)):
            s2, e2, count = joined[j]
            times = _times_in_period(count, text[s2:e2], Fraction(value.text))
            if times and _COUNT_GAP.fullmatch(text[end:s2]):
                rate = Fraction(times) * Fraction(value.text)
                both = Value("frequency", f"{rate.numerator}/{rate.denominator}")
                joined[i], joined[j] = (start, end, both), (s2, e2, both)
                repeated.add(start)
            break
    return joined, repeated


def _times_in_period(count: Value, said: str, period: Fraction) -> int | None:
    """How many times a period holds by ``count`` (written ``said``) after "每周"/"每月"
    (``period``: once in so many days): a count ("三次"), or days counted within a week or a
    month ("每周工作*5天*", "每月休息*2天*": five days a week, as in English, not a time spent of
    five days); ``None`` for anything else ("每天工作*8小时*": hours spent a day)."""
    if count.kind != "number" or not count.text.isdigit() or int(count.text) <= 0:
        return None
    if count.unit == "x":
        return int(count.text)
    days, rest = divmod(int(count.text), 86400)
    if count.unit == "s" and not rest and said.rstrip().endswith(("天", "日")) \
            and period.numerator == 1 and period.denominator >= 7 and days <= period.denominator:
        return days
    return None


def _tag(value: Value) -> str:
    """A word-safe tag of a value, so two placeholders align only when their values agree.

    A number's unit is left out: "is 7" and "is seven years old" align, and a number stated
    in two units is a changed value, which the values themselves show."""
    unit = "" if _frame_kind(value.kind) == "number" else value.unit
    return hashlib.sha1(f"{value.kind}:{value.text}{unit}".encode()).hexdigest()[:8]


#: A name written in Chinese characters only.
HAN_NAME = re.compile(r"[\u4e00-\u9fff]{1,6}")


@functools.lru_cache(maxsize=1024)
def romanised(han: str) -> str:
    """``han`` in toneless pinyin, joined ("旺财" → ``"wangcai"``), with ``pypinyin`` (imported
    on first use: loading its dictionary takes ~0.4 s)."""
    from pypinyin import lazy_pinyin

    return "".join(lazy_pinyin(han)).lower()


def placeholder(value: Value) -> str:
    """The unit that stands for ``value`` in :attr:`Claim.units` (``⟨number_1a2b3c4d⟩``)."""
    return f"⟨{_frame_kind(value.kind)}_{_tag(value)}⟩"


def _frame_kind(kind: str) -> str:
    return {"ip": "host", "money": "number"}.get(kind, kind)


_TLDS = frozenset(
    ["com", "net", "org", "io", "dev", "app", "ai", "co", "uk", "de", "cn", "jp", "fr", "eu", "us", "ca", "au", "in", "ru", "br", "internal", "local", "lan", "corp", "intra", "cloud", "tech", "site", "xyz", "info", "biz", "me", "tv", "gov", "edu", "sh", "so", "gg", "ly", "to", "cc", "nl", "se", "ch", "it", "es", "pl", "kr", "tw", "hk", "sg", "nz", "ie", "at", "be", "dk", "fi", "no", "pt", "cz", "hu", "gr", "tr", "il", "za", "mx", "ar", "cl", "top", "wiki", "page", "run"])  # fmt: skip


def _looks_like_host(name: str) -> bool:
    labels = name.lower().split(".")
    if len(labels) < 2 or not all(labels):
        return False
    if labels[-1] in {"md", "py", "js", "ts", "json", "toml", "yaml", "yml", "txt", "sh", "go",
                      "rs", "sql", "csv", "lock", "cfg", "ini", "env", "log", "html", "css"}:
        return False
    if labels in (["e", "g"], ["i", "e"]):
        return False
    return labels[-1] in _TLDS or len(labels) >= 3


# --------------------------------------------------------------------------- names

# Words that start a sentence or stand capitalised without being a name.
_NOT_NAMES = frozenset(
    ["i", "i'm", "i've", "i'd", "i'll", "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "this", "that", "these", "those", "it", "we", "you", "he", "she", "they", "always", "never", "don't", "do", "not", "no", "yes", "use", "uses", "prefer", "prefers", "please", "when", "if", "on", "in", "at", "for", "to", "of", "and", "or", "but", "so", "all", "every", "each", "any", "some", "most", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "why", "how", "what", "note", "tip", "rule", "fact", "todo", "done", "ok", "okay", "mr", "mrs", "ms", "dr", "also", "then", "there", "here", "now", "today", "tomorrow", "yesterday", "utc", "gmt"]
)


_NAME_RUN = re.compile(r"[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿ0-9'&+-]*(?:\s+(?:[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿ0-9'&+-]*|of|de|van|von|da)\b)*")


_NAME_SYNONYMS = {"k8s": "kubernetes", "postgresql": "postgres", "js": "javascript",
                  "ts": "typescript", "mc": "minecraft", "gh": "github", "db": "database",
                  # a country and its adjective ("UK spelling" / "British spelling")
                  "uk": "british", "britain": "british", "united kingdom": "british",
                  "usa": "american", "america": "american",
                  "united states": "american"}


def _name_key(name: str) -> str:
    return " ".join(_NAME_SYNONYMS.get(w, w) for w in name.lower().split())


_JOINED = re.compile(r";[A-Za-z]")
_JOINED_BEFORE = re.compile(r"[A-Za-z];\Z")


def _names(text: str) -> list[tuple[int, str, str]]:
    """Proper names: runs of capitalised or mixed-case words that do not open a sentence
    (one that does counts when it is mixed-case, like ``MySQL``), and all-caps words, as
    ``(offset, spelling, name)`` lowercased (the name of "ORMs" is "orm")."""
    out: list[tuple[int, str, str]] = []
    for match in _NAME_RUN.finditer(text):
        if _JOINED.match(text, match.end()) or _JOINED_BEFORE.search(text, 0, match.start()):
            continue  # a word joined by ";" ("TL;DR"): the lexicon reads it, no name
        # a lone capital after a word names a variant ("Server A", "Plan B"), not an article
        words = [w for i, w in enumerate(match.group(0).split()) if w.lower() not in _NOT_NAMES
                 or (i > 0 and len(w) == 1 and w.isupper() and w != "I")]
        if not words:
            continue
        start = match.start()
        raw = text[:start]
        before = raw.rstrip()
        opens = (not before or "\n" in raw[len(before):] or before[-1] in ".!?:;\n-–—•*>(\"'"
                 or before.endswith(("。", "！", "？"))) and not _TITLE_BEFORE.search(before)
        if opens and words[0] == match.group(0).split()[0] and not any(
                c.isupper() for c in words[0][1:]) and not _HAN_AFTER.match(text, match.end()):
            # the word that opens a sentence is capitalised anyway, unless Chinese follows
            # it: Chinese has no capitals ("Go 代码里用 tab", "Python 项目用 ruff": names)
            words = words[1:]
            start = match.start() + len(match.group(0).split()[0]) + 1
            if not words:
                continue
        out.append((start, " ".join(words).lower(),
                    " ".join(_ACRONYM_PLURAL.sub(r"\1", w) for w in words).lower()))
    return out


#: Chinese right after a word, a space or none between ("Go 代码", "Python里").
_HAN_AFTER = re.compile(f" ?[{_HAN}]")


#: A title with its period before a name ("Dr. Lee", "Mrs. Chen"): the period ends no sentence.
_TITLE_BEFORE = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|Sr|Jr|St|Mt|Capt|Rev|Gen|Col|Lt|Sgt)\.$")


#: An acronym's plural ("ORMs", "APIs", "PRs"): the acronym, as "ORM" names one.
_ACRONYM_PLURAL = re.compile(r"\A([A-Z]{2,})s\Z")


# --------------------------------------------------------------------------- words

_CONTRACTIONS = [
    (re.compile(r"\bcan'?t\b"), "can not"), (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"), (re.compile(r"\bshan'?t\b"), "shall not"),
    (re.compile(r"\b(\w+)n't\b"), r"\1 not"), (re.compile(r"\b(i)'m\b"), r"\1 am"),
    (re.compile(r"\b(\w+)'re\b"), r"\1 are"), (re.compile(r"\b(\w+)'ve\b"), r"\1 have"),
    (re.compile(r"\b(\w+)'ll\b"), r"\1 will"), (re.compile(r"\b(\w+)'d\b"), r"\1 would"),
    (re.compile(r"\b(it|that|there|what|he|she|who)'s\b"), r"\1 is"),
    (re.compile(r"\b(\w+)'s\b"), r"\1"),
    (re.compile(r"\b(do|does|is|are|was|were|has|have|had|should|would|could|must|need)nt\b"),
     r"\1 not"),
    (re.compile(r"\bdont\b"), "do not"), (re.compile(r"\bcant\b"), "can not"),
    # "don't ever", "do not ever": never
    (re.compile(r"\b(?:do|does|did|should|must|will|would|can) not ever\b|\bnot ever\b"),
     "never"),
]
#: What every match of each of :data:`_CONTRACTIONS` holds (one of the strings, in its
#: order): a text holding none of them is not searched for it (the same text, without the
#: search; ``tests/consistency/test_claims_prefilter.py`` checks them).
_CONTRACTION_NEEDS: tuple[tuple[str, ...], ...] = (
    ("can",), ("cannot",), ("won",), ("shan",), ("n't",), ("i'm",), ("'re",), ("'ve",),
    ("'ll",), ("'d",), ("'s",), ("'s",), ("nt",), ("dont",), ("cant",), ("not ever",),
)
assert len(_CONTRACTION_NEEDS) == len(_CONTRACTIONS)

_STOPWORDS = frozenset(
    ["a", "an", "the", "to", "of", "in", "on", "at", "for", "with", "by", "and", "or", "is", "are", "be", "been", "being", "was", "were", "am", "it", "its", "this", "that", "these", "those", "do", "does", "did", "done", "i", "we", "you", "they", "he", "she", "me", "us", "him", "them", "my", "our", "your", "their", "his", "her", "as", "from", "into", "than", "then", "so", "also", "just", "very", "really", "please", "all", "every", "any", "some", "each", "will", "would", "shall", "can", "could", "may", "might", "should", "must", "have", "has", "had", "there", "here", "about", "over", "up", "out", "if", "when", "while", "which", "who", "whom", "what", "where", "how", "why", "because", "since", "via", "per", "only", "too", "more", "most", "much", "many", "one", "ones", "user",
     # hedges: how firmly a fact is held, not what it is ("*mostly* prefers tabs" / "prefers
     # spaces now"; "generally" and its kin the lexicon reads as "usually")
     "mostly", "mainly", "largely", "basically"]
)
# Kept apart from the stopwords: they carry polarity, even though they say little else.
_NEGATIONS = frozenset(
    ["not", "no", "without", "nor", "neither", "none", "nothing", "nobody", "nowhere"])
_ZH_NEGATIONS = ("不要", "不用", "不能", "不再", "不会", "不必", "不许", "不准", "不得", "不可",
                 "没有", "别", "勿", "莫", "无需", "无须", "不", "没", "非", "未",
                 # "use little of" is what English says with "avoid" ("写作时少用被动语态" /
                 # "Avoid the passive voice"): a denial of the thing, as "avoid" is read
                 "少用")  # fmt: skip
#: "not only X but also Y" states X: no negation (as 不仅 / 不但 in Chinese).
_NOT_ONLY = re.compile(r"\bnot\s+(?:only|just|merely|simply)\b", re.I)
_ZH_STOP = frozenset("的了着过吧呢吗啊呀嘛就也都还又很太挺最我你他她它们这那个是在和与及或把被给让对中请里到")

# Polarity concepts: words and phrases with their sign (True: positive).
_CONCEPT_WORDS: dict[str, tuple[str, bool]] = {}
for _concept, _pos, _neg in (
    ("like",
     "like likes liked love loves loved enjoy enjoys enjoyed adore adores fond fan favourite "
     "favorite prefer prefers preferred 喜欢 喜爱 爱 热爱 偏好 偏爱 爱吃 爱喝 钟爱 ❤ 😍 🥰 💕 👍",
     "hate hates hated dislike dislikes disliked detest detests loathe loathes avoid avoids "
     "avoided 讨厌 反感 厌恶 受不了 讨厌吃 不喜欢 嫌弃 排斥 💔 👎 🤮 😡"),
    ("allow",
     "allow allows allowed permit permits permitted ok okay fine acceptable 允许 可以 准许 能",
     "forbid forbids forbidden prohibit prohibits prohibited ban bans banned disallow "
     "disallowed 禁止 不许 不准 不允许 严禁 不得"),
    ("enable",
     "enable enables enabled 开启 启用 打开",
     "disable disables disabled 关闭 禁用 关掉"),
    ("always",
     "always 总是 一律 始终 每次 永远 一直 都要",
     "never 从不 绝不 从来不 永远不 决不 绝对不"),
    ("require",
     "must required require requires mandatory need needs 必须 务必 一定要 需要 得",
     "optional 不必 无需 无须 不需要 不用"),
    # how often: "rarely uses the mouse" / "uses the mouse all the time" (a concept on one
    # side only turns nothing; "usually", 一般, 通常 are a hedge the lexicon reads as one word)
    ("often",
     "often frequently regularly constantly 经常 常常 老是",
     "rarely seldom hardly barely 很少 难得 极少"),
    ("keep",
     "keep keeps include includes add adds 保留 包含 加上",
     "remove removes drop drops exclude excludes skip skips omit omits omitted omitting 去掉 删除 删掉 跳过 去除"),
):  # fmt: skip
    for _w in _pos.split():
        _CONCEPT_WORDS[_w] = (_concept, True)
    for _w in _neg.split():
        _CONCEPT_WORDS[_w] = (_concept, False)
#: Concept words that also deny the words after them.
_DENYING = frozenset({"never", "avoid", "avoids", "avoided", "forbid", "forbids", "prohibit",
                      "prohibits", "ban", "bans", "omit", "omits", "omitted", "omitting", "从不", "绝不", "从来不", "永远不", "决不",
                      "绝对不", "禁止", "不许", "不准", "不允许", "严禁", "不得", "避免",
                      # "no need to" denies the action it names: "不用再通知测试同学"
                      "不用", "不必", "无需", "无须", "不需要"})
_PHRASES = [
    (re.compile(r"\bcan not stand\b|\bcan not bear\b|\bnot a fan of\b|\bsick of\b|\btired of\b"),
     " hate "),
    (re.compile(r"\bturn(?:ed|s)? on\b|\bswitch(?:ed|es)? on\b"), " enable "),
    (re.compile(r"\bturn(?:ed|s)? off\b|\bswitch(?:ed|es)? off\b"), " disable "),
    # a setting said to be on or off, as the predicate of its clause ("Dark mode is on",
    # "the NEW_CHECKOUT flag is off in staging", "autosave: off"): enabled / disabled ("on"
    # is a stopword, "off" a word, and the two were read as one fact with a word more)
    (re.compile(r"(?:\b(is|are|was|were|be|been|stays?|stayed|remains?|left|kept|now|set to"
                r"|defaults? to)\s+|\s*[:=]\s*)on\b(?=\s*(?:$|[.,;!?)]|\b(?:in|for|by|everywhere"
                r"|globally|across|again|until|now)\b))"), r" \1 enable "),
    (re.compile(r"(?:\b(is|are|was|were|be|been|stays?|stayed|remains?|left|kept|now|set to"
                r"|defaults? to)\s+|\s*[:=]\s*)off\b(?=\s*(?:$|[.,;!?)]|\b(?:in|for|by|everywhere"
                r"|globally|across|again|until|now)\b))"), r" \1 disable "),
    # "don't only test on Chrome" (a verb denied, with no "but also" after it): the "only"
    # is denied, and so is what it restricted ("only test on Chrome" turned); "uses not only
    # X but also Y", even read a clause at a time, states both (:data:`_NOT_ONLY`)
    (re.compile(r"\b(do|does|did|should|must|will|would|can)\s+not\s+(?:only|just|merely"
                r"|solely)\b(?![^.;!?]*\b(?:but|also|as well|too|plus)\b)"), r" \1 not "),
    (re.compile(r"\bno longer\b|\bnot any more\b|\bnot anymore\b|\bstop(?:ped|s)?\b"
                r"|\bused to\b(?= \w)"), " not "),
    (re.compile(r"\binstead of\b|\brather than\b"), " ¬ "),
    # "用 pnpm 代替 npm", "以 Vite 取代 webpack": the thing named after is not the one used
    (re.compile(r"(?:代替|替代|取代)(?=\s*[^\s，。,.;；!?！？了的])"), " ¬ "),
    # "would rather get a written update than sit in a meeting": the second is not wanted
    (re.compile(r"\b(?:would\s+)?rather\s+((?:[\w'⟨⟩-]+\s+){1,6}?)than\b"), r" prefer \1 ¬ "),
    # a limit, not a denial ("no more than a few paragraphs" = "a few paragraphs at most")
    (re.compile(r"\b(?:no|not) (?:more|longer|later) than\b"), " atmost "),
    (re.compile(r"\b(?:no|not) (?:less|fewer|earlier) than\b"), " atleast "),
    # "retry up to 3 times": at most (never "up to date", "up to you")
    (re.compile(r"\bup to\s+(?=⟨|\d|(?:one|two|three|four|five|six|seven|eight|nine|ten)\b)"),
     " atmost "),
    # "answer in English, except when I write in Chinese": a condition, as "unless" is, of
    # the rule it follows; nothing denied
    (re.compile(r"\bexcept (?:when|if|where)\b"), " unless "),
    # "everything except pork", "any day except Friday": what is excepted is denied
    (re.compile(r"\bexcept(?: for)?\b"), " ¬ "),
    # "除了猪肉我什么都吃": all but the thing named (除了 X 还 / 也 … adds X instead)
    (re.compile(r"除了([^，。,；;都还也]{1,30}?)(?:以外|之外)?(?=\s*(?:[，,]|[我你他她]|什么|都))"
                r"(?=[^。；;还也]{0,40}都)"), r" ¬ \1; "),
    # "prefers tea to coffee", "prefer tabs over spaces": the second is not the one preferred
    (re.compile(r"\b(prefer(?:s|red|ring)?\s+(?:[\w'⟨⟩-]+\s+){0,3}?[\w'⟨⟩-]+)\s+(?:to|over)\s+"
                r"(?!\d)"), r"\1 ¬ "),
    # the comparison said first, the preference after it ("Tabs over spaces is what Ivan
    # prefers", "tea over coffee, he prefers"): the second is not the one preferred either
    # (read in the usual order, "Ivan prefers tabs ¬ spaces")
    (re.compile(r"^((?:[\w'⟨⟩-]+\s+){0,3}?[\w'⟨⟩-]+)\s+over\s+([\w'⟨⟩-]+(?:\s+[\w'⟨⟩-]+){0,2}?)"
                r"[\s,]+((?:is\s+what\s+)?(?:\S+\s+){0,3}?prefer\w*)"), r"\3 \1 ¬ \2"),
    (re.compile(r"\bfree of\b|\bfree from\b|\boff-limits\b|\boff limits\b"), " without "),
    # "gluten-free": without gluten; "lactose-free milk": milk without lactose
    (re.compile(r"\b([a-z]{3,})-free\s+([a-z]{3,})\b(?<!\band)(?<!\bor)"), r" \2 without \1 "),
    (re.compile(r"\b([a-z]{3,})-free\b"), r" without \1 "),
    # "比起咖啡更喜欢喝茶": the thing compared against is not the one preferred ("over coffee")
    (re.compile(r"(?:比起|相比于|相比起)([^，。,；;更]{1,12})更"), r" ¬ \1; 更"),
    (re.compile(r"\bbegin(?:s|ning)?\b|\bbegan\b|\bcommences?\b"), " start "),
    (re.compile(r"\bevery time\b|\bat all times\b"), " always "),
    (re.compile(r"\ball the time\b|\bmost of the time\b|\bmore often than not\b"), " often "),
    (re.compile(r"\bhardly ever\b|\balmost never\b|\bonce in a blue moon\b"), " rarely "),
    (re.compile(r"\bhave to\b|\bhas to\b|\bneed to\b|\bneeds to\b"), " must "),
    (re.compile(r"\bis ok to\b|\bit is fine to\b|\bfeel free to\b"), " allow "),
    # "tastes like soap", "looks like rain": a likeness, not a liking
    (re.compile(r"\b(tast|look|sound|smell|feel|seem)(s|es|ed|e)?\s+like\b"), r" \1\2 alike "),
]
#: What every match of each of :data:`_PHRASES` holds (one of the strings, in its order): a
#: text holding none is not searched for it. The phrases cost 70% of :func:`_prepare_words`
#: searched every time, and most texts hold none of them (0.5 s of 0.69 s over the 10,091
#: texts a dream over the planted 10,000 memories of ``bench/dream_bench.py`` reads,
#: ``time.perf_counter`` around each pattern's ``sub``).
_PHRASE_NEEDS: tuple[tuple[str, ...], ...] = (
    ("not", "sick of", "tired of"), ("turn", "switch"), ("turn", "switch"),
    (" on", ":on", "=on"), (" off", ":off", "=off"), ("not only", "not just", "not merely",
                                                      "not solely"),
    ("no longer", "not any", "stop", "used to"), ("instead of", "rather than"),
    ("代替", "替代", "取代"), ("rather",),
    ("than",), ("than",), ("up to",), ("except",), ("except",), ("除了",), ("prefer",), (" over ",), ("free of", "free from", "off-limits", "off limits"),
    ("-free",), ("-free",), ("比起", "相比于", "相比起"), ("begin", "began", "commence"),
    ("every time", "at all times"), ("all the time", "most of the time", "more often than not"),
    ("hardly ever", "almost never", "once in a blue moon"), ("have to", "has to", "need to", "needs to"),
    ("is ok to", "it is fine to", "feel free to"), (" like",),
)
assert len(_PHRASE_NEEDS) == len(_PHRASES)



def stem(word: str) -> str:
    """The light English stem used in tokens: ``settings`` → ``setting``, ``prefers`` →
    ``prefer``, ``uses`` → ``use`` (words of :mod:`consistency.lexicon` folded: ``js`` →
    ``javascript``, ``kids`` → ``child``)."""
    return _stem(word)


@functools.lru_cache(maxsize=16384)
def _stem(word: str) -> str:
    """:func:`stem`, kept per word (a text of a few lines stems some 25 words, most of them
    common to many memories)."""
    canonical = EN_WORDS.get(word)
    if canonical is not None:
        return canonical
    stemmed = _light_stem(word)
    return _EN_STEMS.get(stemmed, stemmed)


def _light_stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
                continue  # "smokes" is "smoke" + s, "boxes" is "box" + es
            stemmed = word[: -len(suffix)]
            if suffix in {"ing", "ed"} and len(stemmed) >= 4 and stemmed[-1] == stemmed[-2] \
                    and stemmed[-1] in "bdgmnprt":
                return stemmed[:-1]  # "tagged" is "tag", "planned" is "plan"
            return stemmed
    return word


#: A stem of a lexicon spelling the table does not list ("answering" → "answer" → "reply").
#: Light stems of lexicon spellings that are English words of their own, never read as the
#: spelling ("*even* for docs-only changes" is no evening, "near the *park*" no parking, a
#: "*scar*" nobody scared): every stem of five letters or fewer the table held, read by hand.
_STEMS_THAT_ARE_WORDS = frozenset({"even", "park", "scar"})
_EN_STEMS = {_light_stem(w): c for w, c in EN_WORDS.items() if (
    _light_stem(w) not in EN_WORDS or EN_WORDS[_light_stem(w)] == c)
    and _light_stem(w) not in _STEMS_THAT_ARE_WORDS}
#: Lexicon phrases ("bullet points", "dark mode", "teetotal"), longest first, read as their
#: canonical tokens before the words are cut.
_LEXICON_PHRASES = re.compile(
    r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in sorted(EN_PHRASES, key=len, reverse=True))
    + r")(?![\w-])")


#: Symbols read as words of their own (emoji and pictographs: "I ❤️ pizza" / "I 💔 pizza").
_SYMBOLS = "\u2600-\u27bf\U0001f000-\U0001faff"
_WORD = re.compile(
    rf"⟨\w+⟩|¬|[a-z0-9]+(?:['][a-z]+)?(?![^\W_{_HAN}])|[{_HAN}]+|[{_SYMBOLS}]|[^\W_{_HAN}]+")


def _letter_name(piece: str, clause: str) -> bool:
    """Is a one-letter word written against Chinese characters ("A项目", "方案B") — a name,
    not the English article?"""
    return len(piece) == 1 and re.search(
        rf"(?<![a-z0-9]){piece}(?=[{_HAN}])|(?<=[{_HAN}]){piece}(?![a-z0-9])", clause) is not None


#: :data:`_CONTRACTION_NEEDS` and :data:`_PHRASE_NEEDS`, each pattern's strings as one
#: alternation of literals (:func:`_any_of`): one search of the text instead of a Python
#: loop over its strings (a dream reads some 10,000 texts, 38 patterns each).
_CONTRACTION_SEARCHES = tuple(_any_of(needs) for needs in _CONTRACTION_NEEDS)
_PHRASE_SEARCHES = tuple(_any_of(needs) for needs in _PHRASE_NEEDS)
#: Every string of both, in one search: a text holding none of them is searched for no
#: contraction and no phrase (three subjects in four of the planted 10,000 memories of
#: ``bench/dream_bench.py``), and stays as it is until one is replaced.
_ANY_WORD_NEED = _any_of(sorted({n for needs in (*_CONTRACTION_NEEDS, *_PHRASE_NEEDS)
                                 for n in needs}))


#: A word joined by a hyphen to another ("skip-level", "always-on", "no-op", "must-have").
_HYPHENED = re.compile(r"(?<![\w-])([a-z]+)-([a-z]+)(?![\w-])")


def _compound(found: re.Match[str]) -> str:
    """A hyphened word one of whose parts is a polarity concept or a negation, read as one
    word: "my *skip-level* manager" names a role, it skips nothing; "an *always-on* VPN"
    says no "always" of a rule. Other compounds stay as they are."""
    parts = found.group(1), found.group(2)
    if any(part in _CONCEPT_WORDS or part in _NEGATIONS for part in parts):
        return "".join(parts)
    return found.group(0)


def _prepare_words(text: str) -> str:
    lowered = text.lower()
    # each pattern is searched only where the text as it is now holds what its matches hold
    if _ANY_WORD_NEED.search(lowered) is not None:
        lowered = _replace_words(lowered)
    if "-" in lowered:
        lowered = _HYPHENED.sub(_compound, lowered)
    return _LEXICON_PHRASES.sub(lambda m: f" {EN_PHRASES[m.group(0)]} ", lowered)


def _replace_words(lowered: str) -> str:
    """The contractions and phrases of ``lowered`` replaced, each pattern searched only
    where the text as it is now holds one of its strings."""
    for (pattern, replacement), needs in zip(_CONTRACTIONS, _CONTRACTION_SEARCHES, strict=True):
        if needs.search(lowered) is not None:
            lowered = pattern.sub(replacement, lowered)
    for (pattern, replacement), needs in zip(_PHRASES, _PHRASE_SEARCHES, strict=True):
        if needs.search(lowered) is not None:
            lowered = pattern.sub(replacement, lowered)
    return lowered


#: Chinese words that hold a negation character without negating anything.
_ZH_NOT_NEGATIONS = ("非常", "不错", "不同", "不断", "不少", "不久", "不仅", "不但", "未来", "没事",
                     "并非", "无论", "不管", "不妨", "别人", "别的", "特别", "区别", "分别",
                     "类别", "级别", "性别", "告别", "莫名", "离不开", "少不了", "忍不住", "不得不",
                     # "除非我用英文提问": a condition ("unless"), not a denial
                     "除非")


def _han_units(run: str) -> list[str]:
    """A Han run cut at negation markers and known polarity words: ``['我', '¬', '喜欢', …]``."""
    out: list[str] = []
    i = 0
    while i < len(run):
        matched = None
        first = run[i]
        neutral = next((w for w in _ZH_NOT_NEGATIONS_BY_FIRST.get(first, ())
                        if run.startswith(w, i)), None)
        if neutral:
            out.extend(neutral)
            i += len(neutral)
            continue
        for marker in _ZH_LEXICON_BY_FIRST.get(first, ()):
            if run.startswith(marker, i):
                matched = marker
                break
        if matched and matched in ZH_WORDS and matched not in _CONCEPT_WORDS:
            # a word of the lexicon reads as its concept ("吃素" → "vegetarian")
            out.extend("¬" if part == "not" else part for part in ZH_WORDS[matched].split())
            i += len(matched)
        elif matched:
            out.append("¬" if matched in _ZH_NEGATION_SET and matched not in _CONCEPT_WORDS
                       else matched)
            i += len(matched)
        else:
            out.append(run[i])
            i += 1
    return out


_ZH_NEGATION_SET = frozenset(_ZH_NEGATIONS)
_ZH_LEXICON = sorted(
    {w for w in _CONCEPT_WORDS if _HAN_RE.search(w)} | _ZH_NEGATION_SET | set(ZH_WORDS),
    key=len, reverse=True)


def _by_first(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``words`` (none empty) grouped by their first character, each group in the order
    given: the first of a group that starts at a place in a run is the first of all
    ``words`` that does (a word can only start where its first character stands), found
    without trying the ~560 words of the lexicon at every character."""
    grouped: dict[str, list[str]] = {}
    for word in words:
        grouped.setdefault(word[0], []).append(word)
    return {first: tuple(group) for first, group in grouped.items()}


_ZH_LEXICON_BY_FIRST = _by_first(_ZH_LEXICON)
_ZH_NOT_NEGATIONS_BY_FIRST = _by_first(_ZH_NOT_NEGATIONS)

#: Grammar words kept as markers in :attr:`Claim.units` (not in tokens or the frame): a
#: copula ``⟦=⟧`` and a preposition ``⟦p⟧`` tell where a slot ends and its value starts.
_MARKERS = {
    **dict.fromkeys(["is", "are", "was", "were", "am", "be", "been", "="], "⟦=⟧"),
    **dict.fromkeys(["是", "为"], "⟦=⟧"),
    **dict.fromkeys(["in", "on", "at", "for", "from", "to", "into", "over", "under", "of", "as"],
                    "⟦p⟧"),
    **dict.fromkeys(["with", "via", "through", "by", "using"], "⟦w⟧"),
    **dict.fromkeys(["在", "于", "到", "对", "给", "把", "被", "和", "与"], "⟦p⟧"),
}

#: A move to a place: the new place is where one lives ("moved to ⟨name⟩", "搬到了⟨name⟩").
_MOVED_TO = re.compile(
    r"(?:^|(?<=[.;!?。；！？]\s)|(?<=\bi )|(?<=\bwe )|(?<=\buser )|(?<=\bthe user )|(?<=\bhas )"
    r"|(?<=\bjust ))(?:moved|moves|relocated|relocates)\s+(?:back\s+)?to\s+"
    r"(?=⟨name_[0-9a-f]+⟩\s*(?:$|[.;,!?]|last\b|this\b|in\b|on\b|now\b|recently\b))"
    r"|(?:^|(?<=[。；，,]))(?:用户|我)?(?:已经)?搬(?:到|去)了?\s*(?=⟨name_[0-9a-f]+⟩\s*(?:$|[。，,；;]|了|住))",
    re.I)

#: A new job at a place: the new place is where one works ("started a new job at
#: ⟨name⟩", "took a job at ⟨name⟩", "入职了⟨name⟩", "跳槽到⟨name⟩").
_NEW_JOB_AT = re.compile(
    r"\b(?:(?:started|starting|took|taken|got|accepted|began)\s+(?:a|my|the)\s+(?:new\s+)?"
    r"(?:job|position|role)|(?:a|my)\s+new\s+(?:job|position|role))\s+(?:at|with)\s+"
    r"(?=⟨name_[0-9a-f]+⟩)"
    r"|(?:入职了?|跳槽到了?|跳槽去了?)\s*(?=⟨name_[0-9a-f]+⟩)", re.I)

#: Value kinds a negation covers as it covers a word ("not Black", "不用 Jenkins").
_NAMED = frozenset({"name", "id", "code"})

#: Content units after a negation that it covers (the clause ends it sooner).
NEGATION_WINDOW = 3
#: Verbs of using or choosing (stems; "用" as read alone) that a denied swap keeps ("don't
#: use pnpm instead of npm": npm is used); another verb is itself what is denied ("don't
#: mock the database instead of …").
_SWAP_VERBS = frozenset({"use", "用", "pick", "choose", "chose", "select", "install", "run",
                         "prefer"})
_CLAUSE = re.compile(
    r"[,;:!?()\[\]\n—–]|\s-\s|\.(?!\d)|\bbut\b|\bthough\b|\bhowever\b|但是|但|不过(?![敏期])|而是|可是")


# Relations: cues that say whether a slot holds one value or several.
_EXCLUSIVE_CUES = re.compile(
    r"\b(?:is|are|was|=|equals?|set to|defaults? to|default|prefers?|preferred|favou?rite|"
    r"main|primary|only|lives? in|living in|based in|located (?:in|at)|moved to|switched to|"
    r"switch to|changed to|now uses?|migrated to|replaced by|works? (?:at|for)|timezone|"
    r"stays? at|home|address|deadline|due|called|named|uses? .{0,20} for|should use|must use|"
    r"always use|goes? to|runs? on|hosted (?:on|at)|points? to)\b"
    r"|是|为|改成|改为|换成|改到|搬到|住在|位于|设为|设置为|默认|首选|主要|只用|一律用|统一用|最喜欢|截止|定在|定于|放在|在.{0,6}工作",
    re.I)
_MULTI_CUES = re.compile(
    r"\b(?:allergic|allergy|allergies|intolerant|speaks?|fluent|knows?|familiar with|"
    r"has an? |have an? |owns?|plays?|collects?|visited|been to|likes?|loves?|enjoys?|"
    # what one reads, as a hobby; never a setting read from somewhere ("is read from
    # DATABASE_URL")
    r"(?<!is )(?<!are )(?<!be )reads?(?!\s+(?:[\w-]+\s+){0,2}?(?:from|by|into|out of)\b)|watches|follows?|interested in|hobby|hobbies|also|another|too|as well|"
    r"can|subscrib(?:e|es|ed|ing) to|member of|certified|comfortable|proficient|experienced|skilled|"
    r"good at|fluent in|worked with|supports?|compatible with|depends? on|integrates? with|"
    r"includes?|including|"
    r"auch|aussi|también|además|anche)\b"
    r"|过敏|会说|会讲|养了|养着|有一[只条个]|喜欢|爱好|兴趣|也|还|另外|会用|收藏|关注|订阅|支持|依赖|兼容|包括|"
    r"去过|到过|"
    r"会员",
    re.I)
_MOST = re.compile(r"\b(?:most|best|favou?rite|only|prefer\w*|main|primary)\b|最|首选|只", re.I)

_PAST = re.compile(
    r"\b(?:was|were|had|did|went|ran|met|paid|took|got|made|gave|came|saw|hit|held|won|lost|"
    r"wrote|read|spent|shipped|released|launched|deployed|measured|weighed|recorded|"
    r"happened|occurred|finished|completed|started|visited|fixed|merged|rolled back|broke|"
    r"failed|passed|scored|logged|bought|sold|booked|attended|signed|joined|left|moved|done|"
    r"renewed|upgraded|migrated|published|presented|cut|tagged|closed|opened|filed|"
    r"reported|resolved|ate|drank|slept|woke|swam|cycled|hiked|walked|jogged|\w+ed)\b"
    r"|了|过|完成|发布|上线|称重|体重|血压|测了|跑了|去了|见了|开了|付了|交了|买了|发生", re.I)
_FUTURE_OR_VALUE = re.compile(
    r"\b(?:deadline|due|by|until|before|starts?|begins?|ends?|expires?|will|shall|going to|"
    r"planned|scheduled|plan|target|launch date|release date|is on|are on|happens on|"
    r"every|each|birthday|anniversary|due date|cutoff|cut-off|freeze|postponed|delayed|"
    r"rescheduled|pushed back|moved to|date)\b"
    r"|截止|之前|以前|计划|预计|将|会在|定于|定在|每|生日|纪念日|到期|前完成|开始于|日期|推迟|延期|"
    r"提前|改到|改期", re.I)
_RELATIVE_DAYS = {"today": 0, "yesterday": -1, "this morning": 0, "this afternoon": 0,
                  "this evening": 0, "tonight": 0, "last night": -1, "今天": 0, "今日": 0,
                  "今早": 0, "今晚": 0, "昨天": -1, "昨日": -1, "昨晚": -1, "前天": -2,
                  "day before yesterday": -2, "大前天": -3,
                  # a week or a month named from the day written: its day, a week or a
                  # month before ("went hiking last weekend" / "this weekend": two outings)
                  "this week": 0, "this weekend": 0, "this month": 0, "last week": -7,
                  "last weekend": -7, "last month": -30, "这周": 0, "本周": 0, "这星期": 0,
                  "这个星期": 0, "这个月": 0, "本月": 0, "上周": -7, "上星期": -7, "上个星期": -7,
                  "上礼拜": -7, "上个月": -30, "上月": -30,
                  "上上周": -14, "上上个月": -60,
                  # a reading of the span that ends on the day written ("In the past month I
                  # ran 80 km", "过去一个月跑了 80 公里"): taken that day, as "this week" is
                  "past week": 0, "past month": 0, "past year": 0, "past 7 days": 0,
                  "past 30 days": 0, "过去一周": 0, "过去一个月": 0, "过去一年": 0,
                  "过去7天": 0, "过去30天": 0, "近一周": 0, "近一个月": 0, "近一年": 0}
#: The words of :data:`_RELATIVE_DAYS` as one pattern, the longest first ("the day before
#: yesterday" is not "yesterday", 大前天 is not 前天; 以前天气 "the weather before" is no day).
_RELATIVE_DAY = re.compile("|".join(
    rf"\b{re.escape(word)}\b" if word.isascii() else
    ("(?<![以之提])" if word == "前天" else "") + word
    for word in sorted(_RELATIVE_DAYS, key=len, reverse=True)))
#: "two days ago", "3 天前", "十天以前": that many days before the day written.
_DAYS_AGO = re.compile(
    rf"\b(?P<n>\d{{1,3}}|an?|{'|'.join(w for w in _EN_NUMBERS if ' ' not in w)}) days? ago\b"
    r"|(?P<zn>\d{1,3}|[一二两三四五六七八九十]+)\s*天(?:之|以)?前")
#: A month that opens a record ("10月服务器费用 3200 元", "October: 3 releases").
_OPENING_MONTH = re.compile(
    rf"\s*(?:(?P<mon>{'|'.join(sorted((m for m in _MONTHS if len(m) > 3), key=len, reverse=True))})"
    r"\s*[:：]|(?P<zm>1[0-2]|0?[1-9])\s*月(?![\d底初中]|份?[之以]?[前后内]))", re.I)
#: A month with its year ("August 2025", "2025年7月"): the period a record is about.
_MONTH_OF_YEAR = re.compile(
    rf"\b(?P<mon>{'|'.join(sorted(_MONTHS, key=len, reverse=True))})\.?,?\s+(?P<y>(?:19|20)\d\d)\b"
    r"|(?P<zy>(?:19|20)\d\d)\s*年\s*(?P<zm>1[0-2]|0?[1-9])\s*月(?!\s*\d)"
    r"|\b[qQ](?P<q>[1-4])\s+(?P<qy>(?:19|20)\d\d)\b|\b(?P<qy2>(?:19|20)\d\d)\s*[qQ](?P<q2>[1-4])\b"
    r"|(?P<zqy>(?:19|20)\d\d)\s*年\s*第?(?P<zq>[一二三四1-4])\s*季度"
    r"|(?<![\d.-])(?P<ny>(?:19|20)\d\d)-(?P<nm>0[1-9]|1[0-2])(?![\d-]|[/.]\d)", re.I)


def _date_end(clean: str, offset: int) -> int:
    match = re.compile(r"[\d年月日号/.\- ]+").match(clean, offset)
    return match.end() if match else offset


def _relative_day(lowered: str, values: list[tuple[int, Value]], written: date) -> date | None:
    """"yesterday" / "今天" in a text that reads as a past event, or as a reading taken that
    day ("Blood pressure this morning: 132/85", "今天空腹血糖 6.8"): a number and no plan."""
    reading = any(v.kind == "number" for _o, v in values) and not _FUTURE_OR_VALUE.search(lowered)
    if not (reading or _PAST.search(lowered)):
        return None
    ago = _DAYS_AGO.search(lowered)
    try:
        if ago is not None:
            n = ago["n"] or ago["zn"]
            days = int(n) if n.isdigit() else 1 if n in ("a", "an") else (
                _EN_NUMBERS.get(n) or _zh_number(n) or 0)
            return written - timedelta(days=days) if 0 < days <= 999 else None
        word = _RELATIVE_DAY.search(lowered)
        if word is not None:
            return written + timedelta(days=_RELATIVE_DAYS[word.group()])
        return _past_weekday(lowered, values, written) or _past_period(lowered, written)
    except OverflowError:  # "yesterday", written on date.min
        return None


def _past_period(lowered: str, written: date) -> date | None:
    """The first day of a period counted back from the day written, as search reads it
    (:func:`magma.intent.first_time_range`: "two weeks ago", "a month ago", 三周前, 两个月前,
    "3 years ago"). Only a count back: a month, year or weekday named by itself ("Born in
    March 1990", "九月发布", "周五下午不上线") is a fact's value or a rule's day, not the day
    the text was an event on; a span up to the day written ("the past three weeks") neither
    (the past week, month or year are read as "this week" is, :data:`_RELATIVE_DAYS`)."""
    if not _COUNTED_BACK_WORD.search(lowered):
        return None  # (the time expressions' scan costs ~0.3 ms a text)
    period = first_time_range(lowered, written)
    if period is None or period.end >= written or not _COUNTED_BACK.search(period.label):
        return None
    # the period frames the whole text only where it opens it or closes it ("Two weeks ago
    # I weighed 80 kg", "我三周前体重 80 公斤", "… three weeks ago."); inside, it dates a
    # thing the text names ("roll back to the release from two weeks ago if …", "the
    # project started 3 years ago and I am its lead"), not the memory's event
    at = lowered.find(period.label)
    if at < 0:
        return None
    before, after = lowered[:at].strip(), lowered[at + len(period.label):].strip(_CLOSING)
    return period.start if before in ("", "我") or not after else None


#: What may close a text after a period counted back ("… three weeks ago.").
_CLOSING = " .。!！?？"


#: What a time expression counted back from the day written ends with ("ago", 前 of 三周前).
_COUNTED_BACK = re.compile(r"\bago$|前$")
#: A word without which no expression counts back (read before the scan of every time rule).
_COUNTED_BACK_WORD = re.compile(r"\bago\b|前")


#: A rule that denies ("don't release on Fridays", 不要在周五发布): no event.
_RULE_DENIED = re.compile(r"\b(?:don't|do not|never|must not|mustn't)\b|不要|别|不能|不准|禁止")


def _past_weekday(lowered: str, values: list[tuple[int, Value]], written: date) -> date | None:
    """The day of one weekday a past event names ("had a 1:1 with Sarah on Monday"): the
    last such day by ``written``. Never a habit ("on Mondays", 每周一), a plan or a change
    ("moved the standup to Monday")."""
    days = [(offset, v) for offset, v in values if v.kind == "weekday"]
    # a past told by a verb's tense or by 了 / 过 (发布, 上线 name no tense: "A项目周五上线")
    past = any(m.group().isascii() or m.group() in {"了", "过"} for m in _PAST.finditer(lowered))
    if len(days) != 1 or not past or _FUTURE_OR_VALUE.search(lowered) or \
            _CHANGE_CUES.search(lowered) or _RULE_DENIED.search(lowered) or \
            not days[0][1].text.isdigit():
        return None
    offset, day = days[0]
    number = int(day.text)
    if not 1 <= number <= 7 or re.match(r"[a-z]+days\b", lowered[offset:]):
        return None
    return written - timedelta(days=(written.isoweekday() - number) % 7)


def _month_of_record(clean: str, lowered: str, written: date | None) -> date | None:
    """The first day of the month a record is about ("AWS bill for August 2025: $12,480",
    "v1.8 于 2025年7月发布", "10月服务器费用 3200 元"): a month with its year that heads the
    text's value (a colon follows) or dates a past event, or a month that opens the text (its
    year the last one in which that month began by ``written``); never a month that is a plan
    or a changed value."""
    months = list(_MONTH_OF_YEAR.finditer(clean))
    if not months and written is not None:
        opening = _OPENING_MONTH.match(clean)
        if opening is None or _FUTURE_OR_VALUE.search(lowered):
            return None
        month = _MONTHS[_folded(opening.group("mon"))] if opening.group("mon") else int(
            opening.group("zm"))
        opening_year = written.year - (month > written.month)
        return date(opening_year, month, 1) if opening_year >= date.min.year else None
    if len(months) != 1:
        return None
    match = months[0]
    heads = match.start() <= 2 or re.match(r"\s*[:：]", clean[match.end():]) is not None
    if _FUTURE_OR_VALUE.search(lowered) or not (heads or _PAST.search(lowered)):
        return None  # "Q1 2026 revenue target: $2M" is a plan
    quarter = match.group("q") or match.group("q2") or match.group("zq")
    if quarter:
        month = 3 * "一二三四1234".index(quarter) % 12 + 1
    elif match.group("nm"):
        month = int(match.group("nm"))
    else:
        month = _MONTHS[_folded(match.group("mon"))] if match.group("mon") else int(
            match.group("zm"))
    year = match.group("y") or match.group("zy") or match.group("qy") or match.group(
        "qy2") or match.group("zqy") or match.group("ny")
    return date(int(year), month, 1)


#: A year that opens a record ("2023 年读了 24 本书", "In 2023, revenue was 1.2M", "2023:")
#: or ends one told in the past ("Read 24 books in 2023.").
_OPENING_YEAR = re.compile(r"\s*(?:in\s+(?P<iy>(?:19|20)\d\d)\b|(?P<y>(?:19|20)\d\d)\s*(?:"
                           r"年(?!\s*\d{1,2}\s*月|\s*[一二三四1-4]\s*季)|[:：,，]))", re.I)
_CLOSING_YEAR = re.compile(r"\b(?:in|during)\s+(?P<y>(?:19|20)\d\d)\s*[.。!]?\s*$", re.I)


def _year_of_record(clean: str, lowered: str, values: list[tuple[int, Value]]) -> date | None:
    """The first day of the year a record is about: a year that opens the text, or closes a
    text told in the past, beside a number of its own (a count or an amount: "2023 年读了
    24 本书" / "2024 年读了 31 本书" are two years' records, a series); never a plan."""
    if _FUTURE_OR_VALUE.search(lowered):
        return None
    match = _OPENING_YEAR.match(clean)
    if match is None:
        match = _CLOSING_YEAR.search(clean)
        if match is None or not _PAST.search(lowered):
            return None
    year = match.group("y") or match.group("iy")
    if not any(v.kind == "number" and v.text != year for _o, v in values):
        return None
    return date(int(year), 1, 1)


#: What stands between the two dates of one event's span ("June 1 to June 14", "6月1日至14日").
_RANGE_BETWEEN = re.compile(r"\s*(?:to|until|till|through|thru|and|[-–—~～]|至|到|~)\s*", re.I)
#: Words that make two dates an old and a new one ("moved from June 1 to June 15").
_RESCHEDULED = re.compile(
    r"\b(?:moved|moving|rescheduled|postponed|delayed|pushed|brought forward|changed|shifted|"
    r"slipped|extended|shortened|switched)\b|改|推迟|延期|提前|挪|调整", re.I)


def _event_day(clean: str, values: list[tuple[int, Value]], written: date | None
               ) -> date | None:
    """The day the text names as when its event happened, or ``None`` (see the module
    docstring). A date is taken when the text reads as a past event (a past-tense verb or
    了/过) and nothing marks the date as a plan or a deadline; a date that opens the text
    (``2026-03-14:``) is taken always."""
    dates = [(offset, v) for offset, v in values if v.kind == "date"]
    lowered = clean.lower()
    if not dates:
        return _month_of_record(clean, lowered, written) or _year_of_record(
            clean, lowered, values) or (
            _relative_day(lowered, values, written) if written is not None else None)
    if len(dates) == 2 and _PAST.search(lowered) and not _RESCHEDULED.search(lowered) and \
            _RANGE_BETWEEN.fullmatch(clean[_date_end(clean, dates[0][0]):dates[1][0]]):
        dates = dates[:1]  # "ran a test from June 1 to June 14": an event, from its first day
    if len(dates) != 1:
        return None  # "moved from June 1 to June 15": a changed date, not a day of an event
    offset, value = dates[0]
    try:
        day = date.fromisoformat(value.text) if len(value.text) == 10 else None
    except ValueError:
        day = None
    if day is None:
        return None
    # a date that opens the text, or heads it ("BP reading 2026-01-12: 138/88")
    leads = offset <= 2 or re.match(r"\s*[:：]", clean[_date_end(clean, offset):]) is not None
    if leads:
        return day
    if _FUTURE_OR_VALUE.search(lowered):
        return None
    # "Haircut on 2025-10-04" written that day or later: it happened (a plan names a day
    # still to come)
    return day if _PAST.search(lowered) or (written is not None and day <= written) else None


# A memory that says it replaces something: "moved to", "switched from X to Y", "改成".
_CHANGE_CUES = re.compile(
    r"\b(?:moved|moving|relocated|relocating|switched|switching|changed|migrated|migrating|"
    r"upgraded|downgraded|new job|new position|new role|bumped|bump|raised|lowered|increased|decreased|reduced|extended|shortened|renamed|"
    r"replaced|(?<!right )now|no longer|instead|anymore|any more|from now on|as of|going forward|"
    r"correction|corrected|actually|rescheduled|postponed|delayed|pushed back|pushed out|"
    r"pushed to|brought forward|rebooked|cut to|dropped to|went (?:up|down) to|down to|"
    r"slipped|slips|slid|"
    r"from .{1,60}?(?<!prior)(?<!due)(?<!next)(?<!close)(?<!according)(?<!up) to)\b"
    r"|改成|改为|改回|换成|换了|换到|转学|转到|转去|切到|切换到|切成|切换成|搬到|搬去|迁到|迁移到|迁至|升级到|升到|降到|调整为|调整到|调到|调成|"
    r"入职|跳槽|记错|说错|搞错|弄错|写错|"
    r"改到|现在|如今|不再|改用|变成|变为|更新为|以后|今后|已经改|更正|纠正|其实|涨到|涨了|降了|挪到|移到|"
    r"提高到|增加到|减少到|缩短到|延长到|改期|推迟到|延期到|提前到", re.I | re.A)
#: Words that make the change after them a plan, not a change told ("planning to move to
#: Singapore", "打算明年搬去新加坡"): what holds now is unchanged.
_PLANNED = re.compile(
    r"(?i)\b(?:plan(?:s|ning)? to|going to|want(?:s)? to|hop(?:e|es|ing) to|thinking (?:about|of)"
    r"|consider(?:s|ing)?|might)\s+(?:\w+\s+){0,2}$"
    r"|(?:打算|计划|准备|想|考虑|可能)(?:在?(?:明年|今年|年底|年初|下半年|下个?月|下周|月底|将来|过几天))?$")


def contrast_cue_only(text: str) -> bool:
    """Is "instead" the only word of ``text`` that says a change ("give a range instead of
    one number")? It sets one thing against another; whether it tells a change depends on
    what the other memory said (:func:`consistency.judgement.judge_pair`)."""
    cues = [found.group(0).lower() for found in _CHANGE_CUES.finditer(text)]
    return bool(cues) and all(cue == "instead" for cue in cues)


def change_cue_at(text: str) -> int | None:
    """Where the first words that say a change ("moved to", "改成") start in ``text``
    (a character offset), or ``None``; a change planned ("打算搬去") is none, nor is a span
    of time ("open from 9 to 5", "from Monday to Friday": :func:`_span_of_time`)."""
    for found in _CHANGE_CUES.finditer(text):
        if not _PLANNED.search(text, 0, found.start()) and not _span_of_time(text, found) \
                and not participle_of_a_thing(text, found):
            return found.start()
    return None


#: A cue word written as a participle ("changed", "raised", "extended").
_PARTICIPLE_CUE = re.compile(r"[a-z]+ed", re.I)
#: What stands before a participle that describes a thing: a number or a determiner ("400
#: *changed* lines", "three *raised* beds", "the *extended* warranty").
_COUNT_OR_DETERMINER = re.compile(
    r"(?i)(?:\b(?:a|an|the|these|those|some|any|no|all|each|every|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|many|few|several)|\d)\s+\Z")
#: What follows a participle that tells a change ("raised *to* 5200", "moved *the* CI").
_AFTER_CHANGE = re.compile(
    r"(?i)\s*(?:\Z|[^\w\s]|(?:to|from|by|into|onto|in|on|at|off|up|down|over|out|back|the|a|"
    r"an|my|our|his|her|their|its|it|them|this|that|and|or)\b)")


#: What before a participle makes it the verb of its sentence, though a number or a
#: determiner stands right before it: a time or an age opening the sentence or a clause ("*In
#: 2015* moved house", "*Since 2020* switched careers", "*In May 2024* moved abroad", "*At
#: 30* changed careers", "2024 年…" aside), or a pronoun and its quantifier ("*We all*
#: moved house", "*They each* changed teams"): the subject, not a thing described.
_TIME_OR_SUBJECT = re.compile(
    rf"(?i)(?:(?:\A|[.;:!?,，。；：！？]|\b(?:and|then|but)\b)\s*"
    rf"(?:in|since|at|by|until|till|after|before|from|around|aged?)\s+"
    rf"(?:(?:early|mid|late)[\s-]+)?(?:(?:{_MONTH_WORDS})\.?\s+)?\d+(?:s|st|nd|rd|th)?"
    rf"|\b(?:we|they|you|us|them)\s+(?:all|each))\s+\Z")


def participle_of_a_thing(text: str, found: re.Match[str]) -> bool:
    """Is the cue a participle said of the thing after it, after a number or a determiner
    ("Keep PRs under 400 *changed* lines", "There are 3 *raised* beds in the garden"): a
    kind of thing, not a change told? "Rent was *raised* to 5200", "We *moved* the CI" and
    "Keep PRs under 250 lines *from now on*" still tell one, as do "In 2015 *moved* house"
    and "We all *switched* teams" (:data:`_TIME_OR_SUBJECT`)."""
    if not _PARTICIPLE_CUE.fullmatch(found.group(0)):
        return False
    return _COUNT_OR_DETERMINER.search(text, 0, found.start()) is not None and \
        _AFTER_CHANGE.match(text, found.end()) is None and \
        _TIME_OR_SUBJECT.search(text, 0, found.start()) is None


#: A clock time with its mark or a day of the week: where a span of a day or a week starts
#: or ends (:func:`_span_of_time`). A span of years is one too ("From 2015 to 2020 I lived
#: in Berlin": a period that ended, read as the past by the judgement, no change told);
#: months are left out.
_SPAN_END = re.compile(
    r"(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*(?:[ap]\.?m\.?|o'?clock)|(?:[01]?\d|2[0-3]):[0-5]\d"
    r"|noon|midnight|(?:mon|tues|wednes|thurs|fri|satur|sun)day", re.I)
_YEAR = re.compile(r"(?:19|20)\d\d")
_FROM_TO = re.compile(r"from\s+(?P<x>.+?)\s+to\Z", re.I)
_SPAN_TO = re.compile(r"\s*(?P<y>[\w:.']+(?:\s*[ap]\.?m\.?)?)", re.I)


def _span_of_time(text: str, found: re.Match[str]) -> bool:
    """Is a "from X to Y" cue a span of time, not a change: X and Y each a clock time with
    its mark or a day ("from 9am to 5pm", "from Monday to Friday"), or two bare hours of a
    day's span that passes noon ("from 9 to 5")?"""
    head = _FROM_TO.match(found.group(0))
    tail = _SPAN_TO.match(text, found.end())
    if head is None or tail is None:
        return False
    x, y = head.group("x").strip(), tail.group("y").strip().rstrip(".")
    if _SPAN_END.fullmatch(x) and _SPAN_END.fullmatch(y):
        return True
    if _YEAR.fullmatch(x) and _YEAR.fullmatch(y) and int(x) < int(y):
        return True  # "From 2015 to 2020 I lived in Berlin": a period, told as past
    return x.isdigit() and y.isdigit() and 1 <= int(y) < int(x) <= 12 and \
        _BARE_SPAN_END.match(text, tail.end()) is not None


#: What may follow a span of bare hours ("from 9 to 5", "from 9 to 5 on weekdays"): the end
#: of its clause, or a day or a habit after it, never a unit or a thing counted ("from 9 to
#: 5 people").
_BARE_SPAN_END = re.compile(
    r"\s*(?:[,;!?)]|\.(?!\d)|$|(?:on|every|each|daily|weekdays?|except|and|but)\b)", re.I)


# Spans whose values the memory no longer holds: "from X to", "instead of X", "不再 X".
_RETRACTING = re.compile(
    r"\bfrom\s+(.{1,60}?)\s+(?:to|→|->)\s|\binstead of\s+(.{1,40}?)(?:[,.;]|$)|"
    r"\brather than\s+(.{1,40}?)(?:[,.;]|$)|\bno longer\s+(.{1,40}?)(?:[,.;]|$)|"
    r"\breplaced\s+(.{1,40}?)\s+with\b|从(.{1,40}?)(?:改|换|迁|搬|升|降|调|切)|不再(?:用|使用)?(.{1,20}?)(?:[,，。;；]|$)"
    # a correction that names what it is not: "September, not August", "二月做，不是四月",
    # "on Thursdays, never on Tuesdays"
    r"|[,，;；]\s*(?:not|never|and not|but not|but never)\s+(.{1,30}?)(?:[,.;!?]|$)"
    r"|(?:[,，;；]\s*(?:不是|而不是|并非)|而不是)(.{1,20}?)(?:[,，。;；!?！？]|$)",
    re.I | re.A)


def _retracted(clean: str, values: list[tuple[int, Value]]) -> frozenset[Value]:
    spans = []
    told = change_cue_at(clean) is not None
    for match in _RETRACTING.finditer(clean):
        group = next(i for i in range(1, (match.lastindex or 0) + 1) if match.group(i))
        if group == 1 and not told:
            continue  # "open from 9 to 5", "from Monday to Friday": a span, no value left
        spans.append((match.start(group), match.end(group), match.group(group).lower()))
    if not spans:
        return frozenset()
    out = set()
    for offset, value in values:
        for start, end, text in spans:
            if (value.kind != "name" and start <= offset < end) or (
                    value.kind == "name" and value.text in text):
                out.add(value)
    return frozenset(out)


# --------------------------------------------------------------------------- reading


@dataclass
class _WordReader:
    """The word-by-word reading of one claim's framed text: its frame and units, the
    concepts with their signs, and which words a negation denies (``pending``: how many
    words the last negation still reaches, :data:`NEGATION_WINDOW`; ``opening``: the length
    of the frame where this clause began; ``opened_denied``: the clause begins with a
    denial, before any word it denies; ``denied_at``: how many units were read when the
    last negation was)."""

    deniable: dict[str, tuple[str, ...]]
    frame: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    concepts: dict[str, set[bool]] = field(default_factory=dict)
    negated: set[str] = field(default_factory=set)
    asserted: set[str] = field(default_factory=set)
    translated: set[str] = field(default_factory=set)
    negations: int = 0
    contrasts: int = 0
    pending: int = 0
    liked: bool = False
    after_han: bool = False
    opening: int = 0
    opened_denied: bool = False
    denied_at: int = -1

    def clause(self, clause: str) -> None:
        self.pending, self.liked, self.after_han = 0, False, False
        self.opening, self.opened_denied = len(self.frame), False
        for word in _WORD.findall(_NOT_ONLY.sub(" ", clause)):
            han_word = _HAN_RE.match(word) is not None
            for piece in _han_units(word) if han_word else [word]:
                self.piece(piece, clause, han_word)

    def piece(self, piece: str, clause: str, han_word: bool) -> None:
        contrast = piece == "¬" and not han_word  # "instead of", "rather than", "代替" (_PHRASES)
        if contrast and self.opened_denied:
            # "Don't use mocks instead of a real database", "不要用 pnpm 代替 npm": what is
            # denied is the swap; the thing named after it is the one kept
            self.negations += 1
            self.contrasts += 1
            self.pending = 0
            self._keep_verb()
        elif piece == "¬" or piece in _NEGATIONS or (piece == "over" and self.liked):
            if not contrast and piece != "over" and len(self.frame) == self.opening:
                self.opened_denied = True
            self.pending = NEGATION_WINDOW
            self.denied_at = len(self.units)
            self.negations += 1
            self.contrasts += piece in {"¬", "over"}
        elif piece in _CONCEPT_WORDS:
            self._concept(piece)
        elif piece.startswith("⟨"):
            self.frame.append(piece.split("_", 1)[0] + "⟩")
            self.units.append(piece)
            # "format with Ruff, not Black": a name right after a negation is denied
            # ("never mock the DB": the action is); after Chinese words, within the
            # negation's reach, as a Chinese word is ("别用*英文*")
            denied = self.pending == NEGATION_WINDOW or (self.after_han and self.pending > 0)
            (self.negated if denied else self.asserted).update(self.deniable.get(piece, ()))
            self.pending = max(0, self.pending - 1)
        elif _HAN_RE.match(piece):
            self._han(piece)
        else:
            self._word(piece, clause, han_word)
        self.after_han = han_word

    def _keep_verb(self) -> None:
        """A denied swap ("don't *use* pnpm instead of npm") keeps its verb of using or
        choosing (:data:`_SWAP_VERBS`): it is said of the thing kept; the thing it was said
        of before the swap stays denied."""
        words = [u for u in self.frame[self.opening:] if not u.startswith(("⟪", "⟨"))]
        if len(words) > 1 and words[0] in _SWAP_VERBS and words[0] in self.negated:
            self.negated.discard(words[0])
            self.asserted.add(words[0])

    def _concept(self, piece: str) -> None:
        name, sign = _CONCEPT_WORDS[piece]
        if piece in _DENYING and len(self.frame) == self.opening:
            self.opened_denied = True
        self.concepts.setdefault(name, set()).add(sign if self.pending == 0 else not sign)
        self.liked = self.liked or name == "like"
        self.frame.append(f"⟪{name}⟫")
        self.units.append(f"⟪{name}⟫")
        # "never X" denies X as "not X" does (counted once, as the concept)
        self.pending = NEGATION_WINDOW if piece in _DENYING else 0
        self.denied_at = len(self.units)

    def _han(self, piece: str) -> None:
        if piece in _ZH_STOP:
            if piece in _MARKERS:
                self.units.append(_MARKERS[piece])
            return
        self.frame.append(piece)
        self.units.append(piece)
        (self.negated if self.pending else self.asserted).add(piece)
        self.pending = max(0, self.pending - 1)

    def _word(self, piece: str, clause: str, han_word: bool) -> None:
        stem = _stem(piece)
        if (piece in _STOPWORDS or stem in _STOPWORDS) and not _letter_name(piece, clause):
            marker = _MARKERS.get(piece)
            if marker:
                self.units.append(marker)
                if marker == "⟦p⟧" and piece != "of" and not (
                        self.pending and len(self.units) == self.denied_at + 1):
                    # "never mock the DB in tests": the adjunct is not denied ("no end of
                    # response summaries": "of" binds its noun); right after the negation,
                    # the adjunct is what it denies ("in the morning, *never in the
                    # evening*", "not on weekends", "rather than at night")
                    self.pending = 0
            return
        for part in stem.split():
            self.frame.append(part)
            self.units.append(part)
            (self.negated if self.pending else self.asserted).add(part)
            if han_word:
                self.translated.add(part)
        self.pending = max(0, self.pending - 1)


def _frame_names(framed: str) -> tuple[str, list[tuple[int, Value]]]:
    """``framed`` with each proper name replaced by its placeholder, and the names read."""
    names = _names(framed)
    for _offset, spelled, name in names:
        tag = _tag(Value("name", _name_key(name)))
        framed = re.sub(rf"\b{re.escape(spelled)}\b", f" ⟨name_{tag}⟩ ", framed, count=1,
                        flags=re.I | re.A)
    return framed, [(offset, Value("name", _name_key(name))) for offset, _s, name in names]


def _relation(clean: str) -> Literal["exclusive", "multi"] | None:
    """Whether the claim says its value is one of several, or the only one."""
    lowered = clean.lower()
    if _MULTI_CUES.search(lowered) is not None and not _MOST.search(lowered):
        return "multi"
    if _EXCLUSIVE_CUES.search(lowered) is not None:
        return "exclusive"
    return None


def read_claim(text: str, *, written: date | None = None) -> Claim:
    """Read ``text`` (a memory's description and body) into a :class:`Claim`.

    ``written`` is the day the memory was written: it fills in the year of a date that names
    none and places "yesterday"/"昨天", "the day before yesterday"/前天/大前天 and "two days
    ago"/三天前. Never raises; empty text gives an empty claim.
    """
    tail, clean, values, all_values, reader, tokens = _read_words(text, written)
    frame, negated, concepts = reader.frame, reader.negated, reader.concepts
    key_parts = sorted(tokens) + sorted(f"{n}{sorted(s)}" for n, s in concepts.items())
    key_parts += sorted(f"¬{w}" for w in negated)
    return Claim(
        text=clean, language=language_of(clean), tokens=tuple(tokens), frame=tuple(frame),
        units=tuple(reader.units), values=frozenset(v for _o, v in all_values),
        concepts={k: frozenset(v) for k, v in concepts.items()},
        negated=frozenset(negated - reader.asserted),
        asserted=frozenset(reader.asserted - negated),
        event_day=_event_day(clean, values, written), relation=_relation(clean),
        key=" ".join(key_parts), slot=_slot(frame),
        says_changed=change_cue_at(clean) is not None,
        retracted=_retracted(clean, all_values), negations=reader.negations,
        translated=frozenset(reader.translated), tail=tail, contrasted=reader.contrasts > 0,
    )


def read_tokens(text: str, *, written: date | None = None) -> tuple[str, ...]:
    """``read_claim(text, written=written).tokens``, without reading the rest of the claim
    (its day, relation, language, change cue and key: a third of the time of reading a
    short text, such as the 9,025 subjects a dream over the planted 10,000 memories of
    ``bench/dream_bench.py`` reads)."""
    return tuple(_read_words(text, written)[-1])


#: "user" / 用户 before a thing of a system ("the *user* service", "the *users* table", "*用户*
#: 中心", "*用户*数据"): a word of that thing's name, read as ``enduser``, never the user a
#: memory is about (a stopword: "The user prefers dark mode" / "Prefers dark mode"), so that
#: "用户服务的数据库是 MySQL" and "订单服务的数据库是 MySQL" name two services.
_USER_AS_THING = re.compile(
    r"(?i)\busers?(?=[ -](?:services?|tables?|data|databases?|db|cent(?:er|re)|modules?|apis?|"
    r"endpoints?|models?|profiles?|accounts?|base|growth|retention|counts?|interface|ui|"
    r"experience|research|stor(?:y|ies)|guides?|manual|docs|management|auth|sessions?|"
    r"groups?|records?|info|information|system|portal|dashboard)\b)"
    r"|用户(?=服务|表|数据|中心|模块|接口|体系|画像|端|量|数|增长|留存|系统|管理|信息|库|体验|研究|"
    r"手册|文档|权限|登录|注册|账号|账户|名)")


def _read_words(text: str, written: date | None) -> tuple[
        str, str, list[tuple[int, Value]], list[tuple[int, Value]], _WordReader, list[str]]:
    """``(tail, clean text, values, values and names, the words read, tokens)`` of
    ``text``: what :func:`read_claim` and :func:`read_tokens` read alike."""
    read, tail = _cut(text)
    clean = _clean(read)
    framed, values = _extract(clean, written)
    framed, name_values = _frame_names(framed)
    all_values = values + name_values
    # "the *user* service", "*用户*表": a thing of a system named for its users, not the user
    framed = _USER_AS_THING.sub(" enduser ", framed)
    framed = re.sub(r"(?<=[^\s:]):(?=\s|[^\x00-\x7f])|(?<=\s):(?=\s)", " is ", framed)
    # "moved to Munich" / "搬到深圳": where one lives now, told as a change
    framed = _MOVED_TO.sub(" live in ", framed)
    # "started a new job at Stripe" / "入职了字节跳动": where one works now, told as a change
    framed = _NEW_JOB_AT.sub(" work at ", framed)
    reader = _WordReader({placeholder(v): (v.text,) for _o, v in all_values if v.kind in _NAMED})
    for clause in _CLAUSE.split(_prepare_words(framed)):
        reader.clause(clause)
    frame = reader.frame
    tokens = [u for u in frame if not _HAN_RE.match(u) and not u.startswith(("⟨", "⟪"))]
    tokens.extend(_han_bigrams(frame))
    tokens.extend(f"{v.kind}:{v.text}{v.unit}" for _o, v in all_values)
    # a name in Chinese characters is also its pinyin, so that "旺财" meets "Wangcai" (its own
    # spelling stays: "李明" and "黎明" are two names)
    tokens.extend(f"name:{romanised(v.text)}" for _o, v in all_values
                  if v.kind == "name" and HAN_NAME.fullmatch(v.text)
                  and not v.text.endswith(("路", "街", "巷", "道")))
    return tail, clean, values, all_values, reader, tokens


def _han_bigrams(frame: Iterable[str]) -> list[str]:
    """Character bigrams of the Han runs of a frame (a run of one character counts as one)."""
    out: list[str] = []
    run: list[str] = []
    for unit in [*frame, "⟨end⟩"]:
        if _HAN_RE.match(unit) and len(unit) == 1:
            run.append(unit)
            continue
        if run:
            joined = "".join(run)
            out.extend([joined] if len(joined) == 1 else
                       [joined[i : i + 2] for i in range(len(joined) - 1)])
            run = []
    return out


#: Tokens the lexicon folds "now" / "现在" / "currently" and "recently" / "最近" to: they say
#: when a fact holds, not what it is about (never a slot word).
WHEN_WORDS = frozenset({"now", "recent"})


def _slot(frame: Sequence[str]) -> str | None:
    """What the claim is about, when its frame says so plainly: the content words before the
    first value (at most four), e.g. ``request timeout`` for "The request timeout is 30 s"."""
    head: list[str] = []
    for unit in frame:
        if unit.startswith(("⟨", "⟪")):
            break
        if unit not in WHEN_WORDS:  # "now", "recently" say when, not what
            head.append(unit)
    if not head or len(head) == len(frame):
        return None
    words = head[-4:]
    joined = "".join(words) if all(_HAN_RE.match(w) for w in words) else " ".join(words)
    return joined if len(joined) >= 2 else None


def dice(a: Iterable[str], b: Iterable[str]) -> float:
    """Sørensen–Dice coefficient of two token multisets, in ``[0, 1]`` (0.0 when either is
    empty: two texts with no words read say nothing alike). Order-free: word order never
    changes it. A tuple's counts and size are kept (:func:`_counts`): a dream compares one
    memory's tokens with many others' (380,000 times over the planted 10,000-memory set of
    ``bench/dream_bench.py``)."""
    ca, size_a = _counts(a)
    cb, size_b = _counts(b)
    if not size_a or not size_b:
        return 0.0
    return 2.0 * _shared(ca, cb) / (size_a + size_b)


def dice_each(a: Iterable[str], others: Iterable[Iterable[str]]) -> list[float]:
    """``[dice(a, b) for b in others]`` with ``a`` counted once (the same arithmetic, so the
    same values): a dream compares each memory's tokens with some 40 older memories'."""
    ca, size_a = _counts(a)
    out: list[float] = []
    for b in others:
        cb, size_b = _counts(b)
        out.append(2.0 * _shared(ca, cb) / (size_a + size_b) if size_a and size_b else 0.0)
    return out


def _shared(ca: Counter[str], cb: Counter[str]) -> int:
    """The size of the multiset intersection: only the tokens both hold count (the
    intersection of the keys, taken in C, and each token's smaller count)."""
    common = ca.keys() & cb.keys()
    return sum(map(min, map(ca.__getitem__, common), map(cb.__getitem__, common)))


def _counts(tokens: Iterable[str]) -> tuple[Counter[str], int]:
    """The multiset of ``tokens`` (never changed by its callers) and its size; a tuple's
    are kept."""
    if isinstance(tokens, tuple):
        return _tuple_counts(tokens)
    counts = Counter(tokens)
    return counts, counts.total()


@functools.lru_cache(maxsize=16384)
def _tuple_counts(tokens: tuple[str, ...]) -> tuple[Counter[str], int]:
    counts = Counter(tokens)
    return counts, counts.total()
