"""Credential detection: every generated fake is found with its kind, no look-alike is."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from config.errors import EXIT_CODES, DreamdError, SecretRefusedError, exit_code_for
from consistency.secrets import (
    MIN_TOKEN_ENTROPY_BITS,
    find_secrets,
    refuse_secrets,
    shannon_entropy_bits,
)

sys.path.insert(0, str(Path(__file__).parent))
from secrets_corpus import NEGATIVES, POSITIVES, Negative, Positive

sys.path.pop(0)


def test_corpus_is_big_enough() -> None:
    assert len(POSITIVES) >= 40
    assert len(NEGATIVES) >= 40
    assert len({p.label for p in POSITIVES}) == len(POSITIVES)
    assert len({n.label for n in NEGATIVES}) == len(NEGATIVES)


@pytest.mark.parametrize("case", POSITIVES, ids=lambda c: c.label)
def test_positive_is_found_with_its_kind(case: Positive) -> None:
    findings = find_secrets(case.text)
    assert [f.kind for f in findings] == [case.kind], findings


@pytest.mark.parametrize("case", NEGATIVES, ids=lambda c: c.label)
def test_look_alike_is_not_found(case: Negative) -> None:
    assert find_secrets(case.text) == []


@pytest.mark.parametrize("case", POSITIVES, ids=lambda c: c.label)
def test_preview_and_message_never_hold_the_secret(case: Positive) -> None:
    (finding,) = find_secrets(case.text)
    secret = case.text[finding.start : finding.end]
    assert secret not in finding.preview
    assert "…" in finding.preview
    with pytest.raises(SecretRefusedError) as info:
        refuse_secrets(case.text, where="remember Memory/x.md")
    message = str(info.value)
    assert case.kind in message
    assert "remember Memory/x.md" in message
    assert secret not in message
    # Beyond the public prefix the preview shows, at most the last 4 characters appear.
    prefix = finding.preview.split("…", 1)[0]
    rest = secret.split(prefix, 1)[1] if prefix and prefix in secret else secret
    if case.kind == "connection_string":  # user and host are shown, the password is not
        rest = secret.rsplit("@", 1)[0].rsplit(":", 1)[1]
    windows = {rest[:-4][i : i + 6] for i in range(max(0, len(rest) - 9))}
    leaks = [w for w in windows if w in message and any(c.isdigit() for c in w)]
    assert not leaks


def test_offsets_cover_the_credential_in_a_longer_note() -> None:
    key_case = next(p for p in POSITIVES if p.label == "github classic")
    text = "# Deploy\n\nSome prose.\n" + key_case.text + "\nMore prose.\n"
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end].startswith("ghp_")
    assert finding.preview.startswith("ghp_…")


def test_all_positives_in_one_text_are_found_in_order() -> None:
    text = "\n\n".join(p.text for p in POSITIVES)
    kinds = [f.kind for f in find_secrets(text)]
    assert kinds == [p.kind for p in POSITIVES]


def test_message_names_line_and_column() -> None:
    text = "line one\n  password: Tr0ub4dor&3x\n"
    with pytest.raises(SecretRefusedError, match=r"password at line 2 col 3"):
        refuse_secrets(text, where="mcp remember")


def test_clean_text_passes() -> None:
    refuse_secrets("Tests must hit a real database.", where="remember")
    assert find_secrets("") == []


def test_error_is_in_the_tree_with_its_exit_code() -> None:
    error = SecretRefusedError("x")
    assert isinstance(error, DreamdError)
    assert exit_code_for(error) == 9
    assert (SecretRefusedError, 9) in EXIT_CODES


def test_entropy_threshold_separates_the_corpus() -> None:
    assert shannon_entropy_bits("") == 0.0
    assert shannon_entropy_bits("aaaa") == 0.0
    assert shannon_entropy_bits("this-is-not-a-real-key-just-docs") < MIN_TOKEN_ENTROPY_BITS


@given(st.text(max_size=300))
def test_findings_are_sorted_disjoint_and_in_bounds(text: str) -> None:
    findings = find_secrets(text)
    for f in findings:
        assert 0 <= f.start < f.end <= len(text)
    for a, b in itertools.pairwise(findings):
        assert a.end <= b.start


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=200))
def test_embedding_a_key_in_any_prose_is_found(prose: str) -> None:
    key = next(p for p in POSITIVES if p.label == "stripe live").text.split(": ", 1)[1]
    text = prose + " " + key + " " + prose
    assert "stripe_key" in {f.kind for f in find_secrets(text)}


@pytest.mark.parametrize("case", POSITIVES, ids=lambda c: c.label)
def test_redaction_leaves_no_credential(case: Positive) -> None:
    from consistency.secrets import REDACTED, redact_secrets

    redacted = redact_secrets(f"Note. {case.text} End.")
    assert REDACTED in redacted and not find_secrets(redacted)
    assert redacted.startswith("Note. ") and redacted.endswith(" End.")


@pytest.mark.parametrize("case", NEGATIVES, ids=lambda c: c.label)
def test_redaction_leaves_look_alikes_as_they_are(case: Negative) -> None:
    from consistency.secrets import redact_secrets

    assert redact_secrets(case.text) == case.text


def _rule_matches(text: str) -> list[tuple[object, str]]:
    """Every match some rule accepts in ``text``, found without the triggers' shortcut."""
    from consistency.secrets import _RULES, _accepted_matches

    return [(rule, match.group(0)) for rule in _RULES
            for match, _ in _accepted_matches(rule, text, text.casefold())]


@pytest.mark.parametrize("case", POSITIVES, ids=lambda c: c.label)
def test_every_match_holds_a_trigger_of_its_rule(case: Positive) -> None:
    """The shortcut that runs a rule only on a text holding one of its triggers never skips
    a rule that would find something: each accepted match holds a trigger itself."""
    matches = _rule_matches(case.text)
    assert matches
    for rule, matched in matches:
        assert rule.may_match(matched, matched.casefold()), (rule, matched)  # type: ignore[attr-defined]


@given(st.lists(st.sampled_from([p.text for p in POSITIVES]
                                + ["PIN is 4821", "Password: Hunter2!x", "密码是 Abc12345xyz!",
                                   "TOKEN=\"Zq8#kLm2pX\"", " ", "\n", "é", "ſ"]),
                max_size=6))
@example(["My wifi password is Eg4bpMHCZh", "ſ"])  # a finding of the normalised view only
@settings(deadline=None)  # no timing in a pass/fail test (a loaded machine ran 415 ms)
def test_the_triggers_shortcut_finds_what_every_rule_finds(parts: list[str]) -> None:
    text = "".join(parts)
    from consistency.secrets import _RULES, _accepted_matches, normalised_view

    def disjoint(found: list[tuple[int, int, int]]) -> set[tuple[int, int]]:
        return {(start, end) for *_, start, end in found}

    def span(checked: object, match: re.Match[str]) -> tuple[int, int]:
        return (checked[1], checked[2]) if isinstance(checked, tuple) else match.span()

    everything = [(-rule.priority, 0, *span(checked, m)) for rule in _RULES
                  for m, checked in _accepted_matches(rule, text, text.casefold())]
    # find_secrets also reads the text as it is stored (normalised_view: "ſ" is "s"); a
    # finding there covers the raw characters it came from
    view, origin = normalised_view(text)
    if view != text:
        everything += [(-rule.priority, 0, origin[start], origin[end - 1] + 1)
                       for rule in _RULES
                       for m, checked in _accepted_matches(rule, view, view.casefold())
                       for start, end in [span(checked, m)] if end > start]
    spans = {(f.start, f.end) for f in find_secrets(text)}
    # each finding is a match of some rule, and no accepted match lies outside every finding
    assert spans <= disjoint(everything)
    for *_, start, end in everything:
        assert any(s < end and start < e for s, e in spans), text[start:end]


@pytest.mark.parametrize("text", [
    "Note: DB_PASSWORD=Zq8kLm2pXw", "Staging login: password=S3cr3t-Passw0rd-xyz",
    '{"note": "password=S3cr3t-Passw0rd-xyz"}', "prod:api_key=Zq8kLm2pXw7R",
])
def test_an_assignment_inside_a_refused_value_is_found(text: str) -> None:
    """``Login: password=…``: "Login" names no secret, the assignment in its value does."""
    (finding,) = find_secrets(text)
    assert finding.kind == "password" and text[finding.end - 4:finding.end] in text[-6:]


def test_a_text_of_colon_runs_is_searched_in_bounded_time() -> None:
    import time

    started = time.perf_counter()
    assert find_secrets(("a:key:" * 40 + " ") * 500) == []
    assert find_secrets("a:key:" * 50_000) == []
    assert time.perf_counter() - started < 5.0


def test_a_keyword_refused_never_hides_the_next_one() -> None:
    """A keyword whose words are no value ("password policy") is passed over, and the one
    after it on the same line is still read."""
    text = "The password policy is strict; the guest wifi password is Xy7pQ2mn9 this week."
    (finding,) = find_secrets(text)
    assert text[finding.start:finding.end].endswith("Xy7pQ2mn9")


@pytest.mark.parametrize("text", [
    "My mail password is Qr!7mLp2Zk",           # a "!" inside is no sentence end
    "网盘的密码：Xy!cd2027ab",
    "Het wachtwoord van de router is Herfst!2027",
    "Пароль от роутера: Osen2027!q",
    "WPA2 key Baguette!42x",
])
def test_a_password_told_with_punctuation_or_in_another_language_is_found(text: str) -> None:
    from consistency.secrets import redact_secrets

    assert find_secrets(text)
    assert "!" not in redact_secrets(text).rsplit("withheld]", 1)[-1].strip(" .")


@pytest.mark.parametrize("text", [
    "I use Bitwarden as the password manager on my phone.",
    "The archive is encrypted with AES-128-CBC.",
    "Signed in with MicrosoftID3 on the laptop.",
    "Pass the --dry-run flag before deleting anything.",
    "We installed a Schlage keypad lock, model BE469ZP.",
    "The PSK mode on the access point is WPA2-Personal.",
    "Her PIN rule: no birthdays like 19900101.",
    "secret_key = config.SECRET_KEY",
    "password: ask-Tom-at-the-desk",
    "密码箱的型号是Honeywell 5107。",
    "他在读密码学的书，讲AES256。",
    "授权码模式（authorization code）适合服务端应用。",
])
def test_talk_about_locks_products_and_flags_is_no_secret(text: str) -> None:
    assert find_secrets(text) == [], text


SESSIONS = Path(__file__).parent / "data" / "chat_sessions"


@pytest.mark.parametrize(("name", "line"), [
    # lines of LongMemEval chat sessions (tests/consistency/data/chat_sessions, byte for byte)
    ("2023-05-24-ultrachat_298180.md", "the battle of kasserine pass: rommel's forces"),
    ("2023-05-25-86e069f0.md", "1Password: Another password manager"),
    ("2023-05-25-6a7e3aec.md", "The default username and password are usually:"),
])
def test_words_of_a_chat_about_passwords_are_no_credential(name: str, line: str) -> None:
    text = (SESSIONS / name).read_text(encoding="utf-8")
    at = text.index(line)
    assert not [f for f in find_secrets(text) if f.start < at + len(line) and f.end > at]


@pytest.mark.parametrize("text", [
    "the battle of kasserine pass: rommel's forces inflicted a defeat",
    "Mountain pass: Hannibal's army crossed it in winter.",
    "My password? Don't ask: it's somewhere in the vault.",
    "The default username and password are usually:",
    "The password is usually: printed on the router's label",
    "* 1Password: Another password manager that offers a travel mode.",
    "* Dashlane Password: Another option for families and teams",
    "访问密码：见共享文档",
])
def test_a_possessive_a_clause_end_or_a_label_heading_a_sentence_is_no_secret(
        text: str) -> None:
    assert find_secrets(text) == [], text


@pytest.mark.parametrize("text", [
    "wifi pass: bl4ckC4t's",                     # a mark amid other characters
    "password: hunter2 for the router",          # digits: a value, whatever follows
    "password: Tr0ub4dor&3 is the one",
    "db_password: s3cr3tPass and the user is app",
    "The router password is Xq7tRm2k:",
    "PASSWORD=Sunshine42 then restart",
    "password: sunshine",                        # the last word told
    "网盘的密码：Xy!cd2027ab",
])
def test_a_value_beside_those_words_is_still_found(text: str) -> None:
    assert find_secrets(text), text


def test_redactions_kept_answer_a_repeat_from_the_first_answer_and_keep_nothing_after() -> None:
    import consistency.secrets as secrets_module
    from consistency.secrets import REDACTED, redact_secrets, redactions_kept

    case = POSITIVES[0]
    text = f"Note. {case.text} End."
    with redactions_kept():
        first = redact_secrets(text)
        again = redact_secrets(text)
        assert again is first  # the kept answer, not a second scan
        assert REDACTED in first and case.text not in first
        kept = secrets_module._KEPT.get()
        assert kept is not None and kept[text] is first
    assert secrets_module._KEPT.get() is None  # nothing of the text is left
    assert redact_secrets(text) == first
