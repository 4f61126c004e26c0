"""The credential detector on a corpus written blind (by a writer who saw neither the
detector nor its tests): 265 secrets and 308 look-alikes as people tell them to an assistant,
43% in Chinese. Kept byte for byte in ``secrets_blind.jsonl``; a secret's characters are
templates (``{{alnum:16}}``, ``{{hex:32}}`` …) filled from a seeded generator here, so the
file holds no key and each run sees other characters in the same shapes.

The issue's targets: at least 98% refused, at most 1% of look-alikes refused."""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

import pytest

from consistency.secrets import find_secrets

CORPUS = Path(__file__).with_name("secrets_blind.jsonl")
_CLASSES = {
    "alnum": string.ascii_letters + string.digits, "hex": "0123456789abcdef",
    "upper": string.ascii_uppercase, "lower": string.ascii_lowercase,
    "digits": string.digits, "b64": string.ascii_letters + string.digits + "+/",
    "base32": string.ascii_uppercase + "234567",
    "upper_digits": string.ascii_uppercase + string.digits,
    "lower_digits": string.ascii_lowercase + string.digits,
}
_MARKER = re.compile(r"\{\{(" + "|".join(sorted(_CLASSES, key=len, reverse=True))
                     + r"):(\d+)\}\}")


def _rows(seed: int) -> list[dict[str, str]]:
    """The corpus with its templates filled; ``row["values"]`` lists what was filled in."""
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rng = random.Random(f"{seed}:{row['id']}")
        filled: list[str] = []

        def fill(match: re.Match[str], rng: random.Random = rng,
                 filled: list[str] = filled) -> str:
            value = "".join(rng.choice(_CLASSES[match.group(1)])
                            for _ in range(int(match.group(2))))
            filled.append(value)
            return value

        row["text"] = _MARKER.sub(fill, row["text"])
        row["values"] = filled
        rows.append(row)
    return rows


@pytest.mark.parametrize("seed", [1234, 7, 2026])
def test_the_blind_corpus_meets_the_targets(seed: int) -> None:
    rows = _rows(seed)
    secrets = [r for r in rows if r["label"] == "secret"]
    benign = [r for r in rows if r["label"] == "benign"]
    assert len(secrets) >= 150 and len(benign) >= 150
    missed = [r["id"] for r in secrets if not find_secrets(r["text"])]
    refused = [r["id"] for r in benign if find_secrets(r["text"])]
    assert 1 - len(missed) / len(secrets) >= 0.98, missed
    assert len(refused) / len(benign) <= 0.01, refused
    for lang in ("en", "zh"):  # each language on its own, too
        mine = [r for r in secrets if r["lang"] == lang]
        assert sum(r["id"] not in missed for r in mine) / len(mine) >= 0.98, lang


def test_no_preview_quotes_more_than_a_secrets_last_four_characters() -> None:
    for row in _rows(1234):
        for finding in find_secrets(row["text"]):
            if finding.kind == "connection_string":
                continue  # its preview names the user and the host, by design
            for value in row["values"]:
                for i in range(len(value) - 5):
                    assert value[i:i + 6] not in finding.preview, (row["id"], finding.preview)


def test_a_short_text_searched_for_any_trigger_first_gives_the_same_findings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every text of the corpus (filled three ways, cut into short pieces too) has the same
    findings whether a short text is first searched for any rule's trigger or every rule is
    asked (``TRIGGER_SEARCH_CHARS`` 0)."""
    import consistency.secrets as secrets

    texts = [row["text"] for seed in (1234, 7, 2026) for row in _rows(seed)]
    texts += [text[i:i + 60] for text in texts for i in range(0, len(text), 23)]
    texts += ["plain words", "Use pnpm.", "a_b", "用户对花生过敏", "", "ＡＫＩＡ", "tok\u200ben"]
    quick = [find_secrets(text) for text in texts]
    monkeypatch.setattr(secrets, "TRIGGER_SEARCH_CHARS", 0)
    assert quick == [find_secrets(text) for text in texts]
    assert any(quick) and not all(quick)
