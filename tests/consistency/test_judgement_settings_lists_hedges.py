"""Settings turned on or off, how often, "don't only", written lists, a slot named with a word
more, an exception a newer rule takes in, and a path with the sentence's stop: through the
product's real model and a real store.

Families a break-it round found (``bench/write_pairs/breakit5.jsonl`` holds its pairs):
"Feature flag NEW_CHECKOUT is on in staging" / "… is off in staging" was merged into one
memory stating both ("on" is a stopword, "off" read as a word more); "Rarely uses the mouse"
/ "Uses the mouse all the time" merged; "Don't only test on Chrome" / "Only test on Chrome"
merged ("not only" was read as "not only X but also Y" with nothing after it); "Supported
browsers: Chrome, Firefox, Safari" / "… Chrome, Firefox" merged, a memory of two lists; "My
manager is Li Wei" / "My skip-level manager is Li Wei" merged ("skip" read as a sign);
"Never skip the tests unless docs-only" / "Always run the tests, even for docs-only" merged
as one rule said from the other side. Each family below holds examples beyond the bench
file, in English and Chinese, with and without a subject, and the look-alikes that keep
their verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_pairs import judged_as, remembered_pair

from ccb.parse import parse_note
from consistency.claims import read_claim
from consistency.judgement import MemorySide, judge_pair
from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a setting said to be on, then off: a change, never one memory saying both
    ("Dark mode is on.", "Dark mode is off.", None, "contradiction"),
    ("The VPN is on by default.", "The VPN is off by default.", None, "contradiction"),
    ("autosave: on", "autosave: off", None, "contradiction"),
    ("Telemetry is off in production.", "Telemetry is on in production.",
     "project.telemetry", "contradiction"),
    ("The beta banner stays on until launch.", "The beta banner is off now.", None,
     "contradiction"),
    # on said again in other words: one fact
    ("Dark mode is on.", "Dark mode is enabled.", None, "duplicate"),
    ("Spell check is on.", "Spell check is turned on.", None, "duplicate"),
    # "on" of a day or a port is no setting
    ("The standup is on Monday.", "The standup is on Tuesday.", None, "contradiction"),
    ("The API runs on port 8080.", "The admin UI runs on port 8080.", None, "kept apart"),
])
def test_a_setting_turned_on_or_off(real_embedder: UniversalSentenceEncoder, old: str,
                                    new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # how often turned: a change
    ("Rarely works late.", "Often works late.", None, "contradiction"),
    ("Hardly ever eats meat.", "Eats meat all the time.", None, "contradiction"),
    ("Seldom takes the train to work.", "Frequently takes the train to work.", "commute",
     "contradiction"),
    ("很少喝咖啡。", "经常喝咖啡。", None, "contradiction"),
    # a hedge on one side only turns nothing
    ("Usually works from home on Fridays.", "Works from home on Fridays.", None, "duplicate"),
    ("Often cooks dinner at home.", "Cooks dinner at home most of the time.", None,
     "duplicate"),
    # how often of two things: two habits
    ("Rarely drinks tea.", "Often drinks coffee.", None, "kept apart"),
])
def test_how_often_turned(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                          subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # "don't only X" with nothing after it: "only X" is turned
    ("Don't only test on Chrome.", "Only test on Chrome.", None, "contradiction"),
    ("Do not only back up to the NAS.", "Only back up to the NAS.", "backup.target",
     "contradiction"),
    # "not only X but also Y" states both
    ("Run not only lint but also the type checker before pushing.",
     "Before pushing, run lint and the type checker.", None, "duplicate"),
])
def test_a_denied_only(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                       subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a labelled list that lost or gained an item: the newer is the list now
    ("Supported browsers: Chrome, Firefox, Safari.", "Supported browsers: Chrome, Firefox.",
     None, "contradiction"),
    ("On-call rotation: Dana, Eli, Farah.", "On-call rotation: Dana, Eli, Farah and Gus.",
     "oncall.rotation", "contradiction"),
    ("支持的语言：中文、英文、日文。", "支持的语言：中文、英文。", None, "contradiction"),
    # an unlabelled list that grew: listed, never merged
    ("We deploy to us-east-1 and eu-west-1.",
     "We deploy to us-east-1, eu-west-1 and ap-south-1.", None, "kept apart"),
    ("The CI matrix covers Python 3.11 and 3.12.",
     "The CI matrix covers Python 3.10, 3.11 and 3.12.", None, "kept apart"),
    # a count changed within a list is read as a count; clauses joined by "，" are no list
    ("The house has 3 bedrooms and 2 bathrooms.", "The house has 3 bedrooms and 3 bathrooms.",
     None, "contradiction"),
    ("CI 用的是 GitHub Actions，runner 是 `ubuntu-22.04`。",
     "- CI 用的是 GitHub Actions，runner 是 ubuntu-22.04", None, "duplicate"),
    # the same items in another order: one list
    ("Reviewers for infra/: Kim, Lee, Park.", "Reviewers for infra/: Park, Kim, Lee.", None,
     "duplicate"),
    ("办公室开放日：周一、周三、周五。", "办公室开放日：周三、周一、周五。", None, "duplicate"),
    ("Release checklist: changelog, tag, announce.",
     "Release checklist: tag, announce, changelog.", "release.checklist", "duplicate"),
])
def test_a_written_list(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                        subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # one side names its slot with a word more: perhaps two slots, never merged
    ("My manager is Li Wei.", "My skip-level manager is Li Wei.", None, "kept apart"),
    ("The request timeout is 30 s.", "The upload request timeout is 30 s.", None,
     "kept apart"),
    ("The build server is ci-04.", "The backup build server is ci-04.", None, "kept apart"),
    # a word of whose it is, or of a value's kind, names no other slot
    ("Team lead is Alice.", "My team lead is Alice.", None, "duplicate"),
    ("My phone is an iPhone 12.", "I have an iPhone 12.", None, "duplicate"),
])
def test_a_slot_named_with_a_word_more(real_embedder: UniversalSentenceEncoder, old: str,
                                       new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # the case a rule excepted, taken in by the newer rule: the rule changed
    ("Never skip the test suite unless the change is docs-only.",
     "Always run the test suite, even for docs-only changes.", None, "contradiction"),
    ("Never merge without review unless it's a hotfix.",
     "Always get a review before merging, even for hotfixes.", None, "contradiction"),
    # one rule said from the other side still is one rule
    ("Never deploy without a green build.", "Always wait for a green build before deploying.",
     None, "duplicate"),
])
def test_an_exception_taken_in(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                               subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Logs are written to /var/log/ingest.", "Logs are written to /var/log/ingest/.", None,
     "duplicate"),
    ("Backups go to /srv/backup/.", "Backups go to /srv/backup.", "backup.path", "duplicate"),
    ("Logs are written to /var/log/ingest/.", "Logs are written to /var/log/api.", None,
     "contradiction"),
])
def test_a_path_with_the_sentence_stop(real_embedder: UniversalSentenceEncoder, old: str,
                                       new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # the US zones without their season, after a clock time: another clock
    ("Daily standup is at 9:30 UTC.", "Daily standup is at 9:30 PT.", None, "contradiction"),
    ("Release calls are at 3pm ET.", "Release calls are at 3pm CET.", "release.call",
     "contradiction"),
    ("Release calls are at 3pm ET.", "Release calls are at 15:00 ET.", None, "duplicate"),
    # "PT" alone is no zone
    ("Goes to PT on Mondays.", "Goes to PT on Thursdays.", None, "contradiction"),
])
def test_a_zone_without_its_season(real_embedder: UniversalSentenceEncoder, old: str,
                                   new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a setting read from another variable: changed ("read" is no hobby read here)
    ("The DB connection string is read from DATABASE_URL.",
     "The DB connection string is read from PG_DSN.", None, "contradiction"),
    ("The app reads its config from APP_CONFIG.",
     "The app reads its config from SERVICE_CONFIG.", None, "contradiction"),
    # what one reads: several, both hold
    ("Reads sci-fi novels.", "Reads history books.", None, "kept apart"),
])
def test_a_setting_read_from_a_variable(real_embedder: UniversalSentenceEncoder, old: str,
                                        new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a hedge says how firmly, not what: the fact beside it decides
    ("Mostly prefers tabs.", "Prefers spaces now.", "indentation", "contradiction"),
    ("Mostly writes Go these days.", "These days writes mostly Go.", None, "duplicate"),
    ("Generally answers in English.", "Answers in English.", None, "duplicate"),
    ("Mainly uses Postgres.", "Mainly uses MySQL now.", "db.engine", "contradiction"),
])
def test_a_hedge(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                 subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a commit SHA, a digest or a UUID is one identifier: another one is a change
    ("Release tag v2.4.0 points at commit 8d2e1f0a9b.",
     "Release tag v2.4.0 points at commit a71c9b3e42.", None, "contradiction"),
    ("Tenant ID for the EU org: 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
     "Tenant ID for the EU org: 1c6f2b8e-0a4d-4e11-9a7b-55c3e0f2d9aa", None, "contradiction"),
    ("prod 镜像固定在 sha256:4c5e1f0b2a9d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c",
     "prod 镜像固定在 sha256:9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e",
     "deploy.image", "contradiction"),
    # the same one, its case or its words around it other
    ("Tenant ID for the EU org: 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
     "EU org tenant id is 9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D.", None, "duplicate"),
    ("The regression was fixed in commit 3f9a2c1e8b.",
     "Regression fixed in commit 3f9a2c1e8b on main.", None, "duplicate"),
])
def test_an_identifier_of_hex_digits(real_embedder: UniversalSentenceEncoder, old: str,
                                     new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new"), [
    ("The API listens on port 8443.", "The metrics endpoint listens on port 9464."),
    ("Grafana runs on port 3000.", "The admin console runs on port 3001."),
    ("订单服务监听 8080 端口。", "支付网关监听 8081 端口。"),
])
def test_another_subject_before_the_same_words_supersedes_nothing(
        real_embedder: UniversalSentenceEncoder, old: str, new: str) -> None:
    """Two services, each with its port: never superseded, at the model's cosine or at one
    of the same thing (the dream's embedding of a whole file read 0.6 and more for the
    first)."""
    judged_as(real_embedder, old, new, None, "kept apart")
    sides = [MemorySide("project", None, read_claim(text)) for text in (old, new)]
    for cosine in (0.6, 0.75, 0.9):
        assert judge_pair(sides[0], sides[1], cosine=cosine).verdict != "contradiction"


def test_remember_supersedes_a_flag_turned_off(real_embedder: UniversalSentenceEncoder,
                                               tmp_path: Path) -> None:
    """Through ``remember`` and a real store: the flag turned off closes the older memory
    (both files stay); nothing is merged into one memory stating on and off."""
    folder, first, second = remembered_pair(
        real_embedder, tmp_path, "Feature flag NEW_CHECKOUT is on in staging.",
        "Feature flag NEW_CHECKOUT is off in staging.")
    assert (first.action, second.action) == ("created", "superseded")
    older = parse_note(first.path, (folder.parent / first.path).read_bytes())
    newer = parse_note(second.path, (folder.parent / second.path).read_bytes())
    assert older.memory is not None and older.memory.valid_to is not None
    assert "off" in newer.body and " on " not in newer.body
