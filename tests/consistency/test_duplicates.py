"""Write-time duplicate decisions: a table of English and Chinese pairs, and properties."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ccb.model import MEMORY_TYPES, MemoryType
from consistency.claims import CLAIM_MAX_CHARS, dice, read_claim
from consistency.duplicates import (
    Decision,
    Duplicate,
    MemoryDraft,
    MemoryFacts,
    New,
    Possible,
    Series,
    Supersede,
    Update,
    cosine_similarity,
    decide,
    merge_bodies,
    normalise_text,
    normalised_hash,
    split_sentences,
)
from consistency.judgement import MemorySide, judge_pair
from consistency.lifecycle import MemoryState

SUBJECT = "tooling.packages"


def draft(
    body: str,
    *,
    type_: MemoryType = "feedback",
    subject: str | None = SUBJECT,
    embedding: np.ndarray | None = None,
) -> MemoryDraft:
    return MemoryDraft(type_, subject, "", "", body, normalised_hash(body), embedding)


def stored(
    body: str,
    *,
    id_: str = "01OLD",
    type_: MemoryType = "feedback",
    subject: str | None = SUBJECT,
    embedding: np.ndarray | None = None,
    valid_to: date | None = None,
    superseded: bool = False,
) -> MemoryFacts:
    state = MemoryState(status="superseded" if superseded else None, valid_to=valid_to)
    return MemoryFacts(id_, type_, subject, "", "", body, normalised_hash(body), embedding,
                       state=state)


# (label, stored text, draft text, expected decision kind) — same type and subject.
SAME_SUBJECT: list[tuple[str, str, str, type]] = [
    ("exact", "Use pnpm for package installs.", "Use pnpm for package installs.", Duplicate),
    (
        "exact modulo case and emphasis",
        "Use **pnpm** for package installs.",
        "use pnpm for package installs",
        Duplicate,
    ),
    (
        "exact modulo whitespace",
        "Use pnpm  for\npackage installs.",
        "Use pnpm for package installs",
        Duplicate,
    ),
    ("exact zh", "安装依赖一律用 pnpm。", "安装依赖一律用 pnpm", Duplicate),
    ("exact zh fullwidth", "安装依赖一律用ｐｎｐｍ", "安装依赖一律用pnpm", Duplicate),
    (
        "paraphrase verb",
        "Integration tests must hit a real database, not mocks.",
        "Integration tests must use a real database, not mocks.",
        Update,
    ),
    (
        "paraphrase with detail",
        "Use pnpm for package installs.",
        "Use pnpm for package installs; it is faster.",
        Update,
    ),
    (
        "paraphrase determiner",
        "Run the linter before every commit.",
        "Run the linter before each commit.",
        Update,
    ),
    (
        "paraphrase synonym verb",
        "User likes concise answers.",
        "User prefers concise answers.",
        Update,
    ),
    ("same negation reordered", "Don't use mocks in tests.", "In tests, never use mocks.", Update),
    (
        "paraphrase keeps numbers",
        "Retry failed uploads 3 times.",
        "Retry failed uploads 3 times, then give up.",
        Update,
    ),
    ("unit spelled out", "The API timeout is 30 seconds.", "The API timeout is 30s.", Update),
    (
        "paraphrase zh",
        "用户在所有编辑器里偏好深色模式。",
        "用户在所有编辑器里都偏好深色模式。",
        Update,
    ),
    ("paraphrase zh negation", "不要在集成测试里用 mock。", "集成测试里禁止用 mock。", Update),
    ("number spelled out with its unit", "Her daughter Mia is 7.",
     "Her daughter Mia is seven years old.", Update),
    ("number spelled out, changed", "Her daughter Mia is 7.",
     "Her daughter Mia is eight years old.", Supersede),
    ("number change", "The API timeout is 30s.", "The API timeout is 60s.", Supersede),
    ("number change zh", "接口超时设为 30 秒。", "接口超时设为 60 秒。", Supersede),
    ("version change", "Deploy with Python 3.11.", "Deploy with Python 3.12.", Supersede),
    (
        "date change",
        "The release freeze starts 2026-06-01.",
        "The release freeze starts 2026-07-01.",
        Supersede,
    ),
    ("negation flip pnpm", "Use pnpm, not npm.", "Use npm, not pnpm.", Supersede),
    ("negation flip instead of", "Use pnpm instead of npm.", "Use npm instead of pnpm.", Supersede),
    ("negation flip zh", "安装依赖用 pnpm 而不是 npm。", "安装依赖用 npm 而不是 pnpm。", Supersede),
    (
        "always never",
        "Always squash merge pull requests.",
        "Never squash merge pull requests.",
        Supersede,
    ),
    ("do dont", "Do commit the lockfile.", "Don't commit the lockfile.", Supersede),
    ("do not", "Commit the lockfile.", "Do not commit the lockfile.", Supersede),
    ("enable disable", "Enable strict mode in mypy.", "Disable strict mode in mypy.", Supersede),
    ("prefer over", "Prefer tabs over spaces.", "Prefer spaces over tabs.", Supersede),
    (
        "prefer x prefer y",
        "User prefers pytest for tests.",
        "User prefers unittest for tests.",
        Supersede,
    ),
    (
        "dark light",
        "User prefers dark mode in every editor.",
        "User prefers light mode in every editor.",
        Supersede,
    ),
    ("dark light zh", "用户偏好深色模式。", "用户偏好浅色模式。", Supersede),
    ("tool swap", "Use pnpm for installs.", "Use yarn for installs.", Supersede),
    ("zh negation added", "提交前要运行测试。", "提交前不要运行测试。", Supersede),
    ("zh always never", "总是在提交前运行测试。", "从不在提交前运行测试。", Supersede),
    ("never added", "Release on Fridays.", "Never release on Fridays.", Supersede),
    (
        "unrelated same subject",
        "Use pnpm for package installs.",
        "The staging server reboots at midnight.",
        New,
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [row[1:] for row in SAME_SUBJECT],
    ids=[row[0] for row in SAME_SUBJECT],
)
def test_same_subject_table(old: str, new: str, expected: type) -> None:
    decision = decide(draft(new), [stored(old)])
    assert type(decision) is expected, decision
    if not isinstance(decision, New):
        assert decision.existing_id == "01OLD"
    # The contradiction test does not depend on which side is stored.
    if expected in (Update, Supersede):
        back = decide(draft(old), [stored(new)])
        assert type(back) is expected, back


def test_table_is_big_and_bilingual() -> None:
    assert len(SAME_SUBJECT) >= 30
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in row[2]) for row in SAME_SUBJECT) >= 8


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User prefers dark mode in every editor.", "User prefers light mode in every editor."),
        ("The API timeout is 30s.", "The API timeout is 60s."),
        ("用户偏好深色模式。", "用户偏好浅色模式。"),
    ],
)
def test_look_alikes_with_another_subject_are_unrelated(old: str, new: str) -> None:
    assert decide(draft(new, subject="ui.theme"), [stored(old, subject="editor.theme")]) == New()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I drink 2 cups of coffee a day.", "I drink 3 cups of tea a day."),
        ("我每天喝两杯咖啡。", "我每天喝三杯茶。"),
    ],
)
def test_a_count_of_another_thing_is_never_superseded(old: str, new: str) -> None:
    # tea is not the opposite of coffee: the count is of another drink
    decision = decide(draft(new, subject=None), [stored(old, subject=None)])
    assert not isinstance(decision, Supersede | Update), decision


def test_other_type_is_unrelated() -> None:
    old = "Use pnpm for package installs."
    new = "Use pnpm for package installs; it is faster."
    assert decide(draft(new, type_="project"), [stored(old, type_="feedback")]) == New()


def test_a_restatement_needs_no_subject() -> None:
    old = "Use pnpm for package installs."
    assert decide(draft(old, subject=None), [stored(old, subject=None)]) == Duplicate("01OLD")
    near = "Use pnpm for package installs; it is faster."
    assert decide(draft(near, subject=None), [stored(old, subject=None)]) == Update("01OLD")
    changed = "Use yarn for package installs."
    assert isinstance(decide(draft(changed, subject=None), [stored(old, subject=None)]),
                      Supersede)


def test_subject_compared_loosely() -> None:
    old = "Use pnpm for package installs."
    new = "Use pnpm for package installs; it is faster."
    facts = stored(old, subject="Tooling.Packages ")
    assert decide(draft(new, subject="tooling.packages"), [facts]) == Update("01OLD")


@pytest.mark.parametrize("flag", ["valid_to", "superseded"])
def test_superseded_existing_is_ignored(flag: str) -> None:
    text = "Use pnpm for package installs."
    old = (
        stored(text, valid_to=date(2026, 1, 1))
        if flag == "valid_to"
        else stored(text, superseded=True)
    )
    assert not old.current_on(date(2026, 1, 1)) and not old.current_on(None)
    assert decide(draft(text), [old]) == New()
    near = "Use pnpm for package installs; it is faster."
    assert decide(draft(near), [old]) == New()


def test_a_memory_valid_until_a_later_day_is_current_until_then() -> None:
    """The one rule (consistency.lifecycle.is_current): a ``valid_to`` still ahead leaves a
    memory current, so writing it again on an earlier day is a duplicate."""
    text = "Use pnpm for package installs."
    old = stored(text, valid_to=date(2026, 1, 1))
    assert old.current_on(date(2025, 12, 31))
    assert isinstance(decide(replace(draft(text), written=date(2025, 12, 31)), [old]),
                      Duplicate)
    assert decide(replace(draft(text), written=date(2026, 1, 1)), [old]) == New()
    archived = MemoryFacts("01ARC", "feedback", SUBJECT, "", "", text, normalised_hash(text),
                           state=MemoryState(status="archived"))
    assert decide(replace(draft(text), written=date(2025, 12, 31)), [archived]) == New()


def test_superseded_exact_copy_does_not_hide_the_current_one() -> None:
    text = "Use pnpm for package installs."
    old = stored(text, id_="01A", superseded=True)
    current = stored("Use pnpm for all package installs.", id_="01B")
    assert decide(draft(text), [old, current]) == Update("01B")


def test_embedding_makes_a_low_overlap_paraphrase_a_candidate() -> None:
    old, new = "Integration tests hit a real database.", "Never mock the DB in integration tests."
    assert dice(read_claim(old).tokens, read_claim(new).tokens) < 0.5  # most words differ
    vec = np.array([0.6, 0.8, 0.0], dtype=np.float32)
    near = np.array([0.62, 0.78, 0.05], dtype=np.float32)
    far = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    assert decide(draft(new, embedding=near), [stored(old, embedding=vec)]) == Update("01OLD")
    # far apart in meaning: never merged (kept apart, at most listed as a possible duplicate)
    assert isinstance(decide(draft(new, embedding=far), [stored(old, embedding=vec)]),
                      New | Possible)
    # no model: the shared subject and shared words decide
    assert decide(draft(new), [stored(old, embedding=vec)]) == Update("01OLD")


def test_most_similar_candidate_decides_and_ties_break_by_id() -> None:
    text = "The API timeout is 30s."
    a = stored("The API timeout is 30s for uploads and downloads.", id_="01A")
    b = stored("The API timeout is 30s for uploads.", id_="01C")
    c = stored("The API timeout is 30s for uploads.", id_="01B")
    assert decide(draft(text), [a, b, c]) == Update("01B")
    assert decide(draft(text), [c, b, a]) == Update("01B")


def test_exact_duplicate_wins_over_near_duplicates() -> None:
    text = "Use pnpm for package installs."
    near = stored("Use pnpm for all package installs.", id_="01A")
    same = stored(text, id_="01Z")
    assert decide(draft(text), [near, same]) == Duplicate("01Z")
    # the same words as a memory of another type or subject are another fact
    other = stored(text, id_="01Y", type_="user", subject="other")
    assert decide(draft(text), [near, other]) == Update("01A")


def test_supersede_carries_a_readable_reason() -> None:
    decision = decide(draft("The API timeout is 60s."), [stored("The API timeout is 30s.")])
    assert decision == Supersede("01OLD", "changed value: 30 s → 60 s")
    flip = decide(draft("Use npm, not pnpm."), [stored("Use pnpm, not npm.")])
    assert isinstance(flip, Supersede)
    assert flip.reason.startswith("polarity")


def test_normalise_text() -> None:
    assert normalise_text("  **Use**  `pnpm`,\n_not_ npm!!! ") == "use pnpm, not npm"
    assert normalise_text("ＡＰＩ　ｋｅｙ。") == "api key"
    assert normalise_text("Don’t mock") == "don't mock"
    assert normalise_text("api_key stays") == "api_key stays"


def test_cosine_similarity() -> None:
    assert cosine_similarity(None, np.ones(3)) is None
    assert cosine_similarity(np.zeros(3), np.ones(3)) is None
    assert cosine_similarity(np.ones(3), np.ones(3) * 2) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="widths"):
        cosine_similarity(np.ones(3), np.ones(4))


def test_merge_bodies_examples() -> None:
    old = "Use pnpm for installs.\n\nWhy: faster."
    new = "- Use pnpm for installs. It saves disk space.\n- Why: faster!"
    merged = merge_bodies(old, new)
    assert merged == "Use pnpm for installs.\n\nWhy: faster.\n\nIt saves disk space.\n"
    assert merge_bodies(old, "use PNPM for installs") == old
    assert merge_bodies("", "一句话。两句话。") == "一句话。两句话。\n"


# ----------------------------------------------------------------------------- properties

words = st.sampled_from(
    ["use", "pnpm", "npm", "tests", "database", "mode", "dark", "the", "always", "not",
     "用户", "偏好", "模式", "测试", "数据库", "不要", "timeout", "30s", "60s", "."]
)  # fmt: skip
texts = st.lists(words, min_size=0, max_size=12).map(" ".join)
memory_types: st.SearchStrategy[MemoryType] = st.sampled_from(MEMORY_TYPES)
subjects = st.sampled_from(["a", "b", None])


@st.composite
def facts(draw: st.DrawFn, idx: int) -> MemoryFacts:
    body = draw(texts)
    return MemoryFacts(
        f"01{idx:03d}", draw(memory_types), draw(subjects), "", "", body, normalised_hash(body),
        None, state=MemoryState(status="superseded" if draw(st.booleans()) else None),
    )  # fmt: skip


existing_lists = st.integers(0, 5).flatmap(
    lambda n: st.tuples(*(facts(i) for i in range(n))).map(list)
)


@given(texts, memory_types, subjects, existing_lists)
def test_decide_is_deterministic(
    body: str, type_: MemoryType, subject: str | None, existing: list[MemoryFacts]
) -> None:
    d = MemoryDraft(type_, subject, "", "", body, normalised_hash(body))
    first: Decision = decide(d, existing)
    assert decide(d, existing) == first
    assert isinstance(first, Duplicate | Update | Supersede | Series | Possible | New)


@given(existing_lists, st.data())
def test_identical_to_a_current_memory_is_duplicate(
    existing: list[MemoryFacts], data: st.DataObject
) -> None:
    current = [m for m in existing if m.current_on(None)]
    if not current:
        return
    target = data.draw(st.sampled_from(current))
    d = MemoryDraft(target.type, target.subject, "", "", target.body, target.content_hash)
    decision = decide(d, existing)
    assert isinstance(decision, Duplicate)
    same = [m for m in current if m.content_hash == target.content_hash]
    assert decision.existing_id in {m.id for m in same}


tools = st.sampled_from(["pnpm", "npm", "yarn", "bun", "uv", "pip", "poetry"])
numbers = st.integers(1, 999)


@st.composite
def contradictions(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["number", "flip", "negate", "swap"]))
    if kind == "number":
        x, y = draw(numbers), draw(numbers)
        if x == y:
            y = x + 1
        unit = draw(st.sampled_from(["s", " ms", " minutes", "%", " 秒"]))
        return f"The upload timeout is {x}{unit}.", f"The upload timeout is {y}{unit}."
    old = draw(tools)
    new = draw(tools.filter(lambda t: t != old))
    if kind == "flip":
        return f"Use {old}, not {new}.", f"Use {new}, not {old}."
    if kind == "negate":
        return f"Always use {old} for installs.", f"Never use {old} for installs."
    return f"Install packages with {old}.", f"Install packages with {new}."


@settings(max_examples=200)
@given(contradictions())
def test_swapping_sides_of_a_contradiction_keeps_it_a_contradiction(pair: tuple[str, str]) -> None:
    a, b = pair
    assert isinstance(decide(draft(b), [stored(a)]), Supersede)
    assert isinstance(decide(draft(a), [stored(b)]), Supersede)


sentence_words = st.text(
    alphabet=st.characters(categories=["L", "N"], max_codepoint=0x9FFF), min_size=1, max_size=8
)
sentences = (
    st.lists(sentence_words, min_size=1, max_size=5)
    .map(" ".join)
    .flatmap(lambda s: st.sampled_from([s + ".", s + "!", s + "。", s]))
)
bodies = st.lists(
    st.lists(sentences, min_size=0, max_size=4).map(" ".join), min_size=0, max_size=4
).map("\n".join)


def _keys(text: str) -> set[str]:
    return {k for k in (normalise_text(s) for s in split_sentences(text)) if k}


@settings(max_examples=300)
@given(bodies, bodies)
def test_merge_bodies_keeps_every_sentence_once(old: str, new: str) -> None:
    merged = merge_bodies(old, new)
    assert _keys(old) | _keys(new) <= _keys(merged)
    assert merged.startswith(old.rstrip())
    added = [normalise_text(s) for s in split_sentences(merged[len(old.rstrip()) :])]
    assert len(added) == len(set(added))
    assert not set(added) & _keys(old)


@pytest.mark.parametrize("text", [
    "Quota is 1" + "0" * 400 + " TB",  # past a float's range
    "[[" * 10_000,  # a wikilink opener repeated: read in linear time
    "a-" * 10_000, "1." * 10_000, "一" * 20_000 + "元",
    "\n".join(f"Step {i} runs the build." for i in range(2_000)),
    "🎉🚀", "\u200b\u200d", "",
])
def test_any_text_reads_into_a_claim(text: str) -> None:
    claim = read_claim(text)
    assert claim.key == read_claim(text).key  # and the same text reads the same
    assert bool(claim.tail) == (len(text) > CLAIM_MAX_CHARS)


@pytest.mark.parametrize(("old", "new"), [
    ("Lives at 14 Elm Street, Apt 3B.", "Moved — now lives at 220 Harbor Road, Unit 7."),
    ("Meeting room is Room 204.", "Meeting room is Room 305."),
    ("Office: Suite 400, 9 Main St.", "Office: Suite 410, 9 Main St."),
])
def test_a_flat_or_room_number_is_an_identifier_that_changes(old: str, new: str) -> None:
    """"Apt 3B" is no size in bytes, and "Room 204" / "Room 305" share no value."""
    values = read_claim(old).values | read_claim(new).values
    assert all(v.unit != "byte" for v in values)
    assert isinstance(decide(draft(new), [stored(old)]), Supersede)
    assert isinstance(decide(draft(old), [stored(new)]), Supersede)


clause_words = st.sampled_from(
    ["the", "client", "contract", "renews", "automatically", "every", "January", "agreement",
     "rolls", "over", "on", "its", "own", "team", "uses", "Slack", "for", "chat", "is", "in",
     "Berlin", "prefers", "short", "answers", "周会", "在", "周二", "用", "飞书", "沟通"])


@settings(max_examples=300)
@given(st.lists(clause_words, min_size=2, max_size=9).map(" ".join),
       st.lists(clause_words, min_size=2, max_size=9).map(" ".join),
       st.floats(min_value=0.0, max_value=1.0))
# the words shared by what is done beside one day, with repeats, counted from one side only
@example("agreement client agreement client 周二", "agreement agreement agreement 周二", 0.0)
# one side sets one thing against another ("prefers X *over* Y"), as a change is told: the
# newer side doing so is a change, the older one only perhaps (``_denied_for_another``)
@example("the client", "contract prefers over client client", 0.625)
def test_words_replaced_between_two_memories_are_found_in_either_order(
        a: str, b: str, cosine: float) -> None:
    """The spans one memory replaces in the other do not depend on which came first (the
    alignment is made in one order): what differs may only be which side says it changed,
    or sets one thing against another ("instead of", "over", "而不是")."""
    ca, cb = read_claim(a), read_claim(b)
    forward = judge_pair(MemorySide("user", None, ca), MemorySide("user", None, cb), cosine=cosine)
    backward = judge_pair(MemorySide("user", None, cb), MemorySide("user", None, ca),
                          cosine=cosine)
    if not (ca.says_changed or cb.says_changed or ca.contrasted or cb.contrasted
            or ca.event_day or cb.event_day):
        assert forward.verdict == backward.verdict, (forward.explain(), backward.explain())


def test_a_paraphrase_reads_the_same_in_either_order() -> None:
    """blind9's b9-038, byte for byte: the alignment found a replaced span one way only."""
    old = read_claim("The client contract renews automatically every January.")
    new = read_claim("Each January the client agreement rolls over on its own.")
    one = judge_pair(MemorySide("project", None, old), MemorySide("project", None, new),
                     cosine=0.74)
    other = judge_pair(MemorySide("project", None, new), MemorySide("project", None, old),
                       cosine=0.74)
    assert one.verdict == other.verdict


@pytest.mark.parametrize(("old", "new"), [
    ("Gym on Monday: legs.", "Gym on Thursday: upper body."),  # blind7 b7-150
    ("周六上午带女儿上游泳课", "周日上午带女儿上美术课"),  # blind7 b7-173
])
def test_a_changed_day_beside_another_thing_supersedes_nothing(old: str, new: str) -> None:
    """Two entries of a schedule: the day changed and so did what happens on it. Both stay
    (linked as a possible pair at most), in either order."""
    for first, second in ((old, new), (new, old)):
        assert not isinstance(decide(draft(second), [stored(first)]), Supersede | Update)


@pytest.mark.parametrize(("old", "new"), [
    ("Standup is on Monday at 9am.", "Standup is on Tuesday at 10am."),
    ("周会在周二上午十点", "周会在周三下午三点"),
    ("Gym on Monday: legs.", "Gym is now on Thursday: upper body."),
])
def test_a_changed_day_of_one_thing_still_supersedes(old: str, new: str) -> None:
    assert isinstance(decide(draft(new), [stored(old)]), Supersede)


@pytest.mark.parametrize(("old", "new"), [
    ("Room 204 is quiet; Room 305 is loud", "Room 204 is loud; Room 305 is quiet"),
    ("Bob is in Room 204 and Alice is in Room 305",
     "Bob is in Room 305 and Alice is in Room 204"),
])
def test_two_values_that_trade_places_are_never_merged(old: str, new: str) -> None:
    """The same words in another order are the same memory, but not when two values trade
    what is said of them (a break-it round's inputs)."""
    for first, second in ((old, new), (new, old)):
        assert isinstance(decide(draft(second, subject=None), [stored(first, subject=None)]),
                          Possible)


@pytest.mark.parametrize(("old", "new"), [
    ("Goes to the gym at 6am on weekdays.", "Weekdays at 6 a.m. he goes to the gym."),
    ("Always run `make lint` before opening a PR.",
     "Before opening a PR, always run `make lint`."),
])
def test_a_clause_moved_is_the_same_memory(old: str, new: str) -> None:
    assert isinstance(decide(draft(new, subject=None), [stored(old, subject=None)]),
                      Duplicate | Update)


def test_explanations_name_weekdays_and_months() -> None:
    """``remember --explain`` shows 周二 → 周三 as days, not as the counts 2 → 3."""
    for old, new, shown in (
            ("我每周二上午十点开周会", "周会改到周三下午三点了", "Tuesday → Wednesday"),
            ("Payroll runs in March", "Payroll runs in April", "March → April")):
        why = judge_pair(MemorySide("project", None, read_claim(old)),
                         MemorySide("project", None, read_claim(new)), cosine=0.7).explain()
        assert shown in why, why


def test_only_the_memories_that_share_most_words_are_judged_for_their_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Of the memories at Dice ≥ CANDIDATE_LEXICAL, the CANDIDATES_BY_WORDS most alike (ties by
    id) are judged, beside the nearest by cosine (here: none has a vector, so the first by
    id) and those of the draft's subject."""
    import consistency.duplicates as duplicates

    text = "the kiln fires at dawn with the blue glaze on the top shelf"
    words = text.split(" ")
    new = draft(text, subject=None)
    # memory k keeps the first 12 - k // 3 words of the draft and adds words of its own
    existing = [stored(" ".join([*words[: 12 - k // 3], f"extra{k}", f"more{k}", f"word{k}"]),
                       id_=f"{k:02d}", subject=None) for k in range(30)]
    judged: list[str] = []
    real = duplicates.judge

    def counting(d: MemoryDraft, memory: MemoryFacts, cosine: float | None = None) -> object:
        judged.append(memory.id)
        return real(d, memory, cosine)

    monkeypatch.setattr(duplicates, "judge", counting)
    decide(new, existing)
    claim = read_claim(new.body)
    alike = sorted((-dice(claim.tokens, read_claim(m.body).tokens), m.id) for m in existing
                    if dice(claim.tokens, read_claim(m.body).tokens)
                    >= duplicates.CANDIDATE_LEXICAL)
    assert len(alike) > duplicates.CANDIDATES_BY_WORDS  # the cap is reached
    nearest = {m.id for m in existing[: duplicates.CANDIDATES_BY_COSINE]}
    assert set(judged) == nearest | {i for _d, i in alike[: duplicates.CANDIDATES_BY_WORDS]}
