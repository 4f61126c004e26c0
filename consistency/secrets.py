"""Refuse credentials on every write path (DESIGN.md "Safety").

:func:`find_secrets` scans text for credentials and returns redacted findings;
:func:`refuse_secrets` raises :class:`config.errors.SecretRefusedError` when there is one. Every
writer (API, MCP, remember, dream, rollback, arbiter, import) calls :func:`refuse_secrets` on
the full text it is about to write, frontmatter included.

What is found (kind → form):

- provider keys by their documented prefixes: ``openai_api_key`` (``sk-``, ``sk-proj-``,
  ``sk-svcacct-``, ``sk-admin-``), ``anthropic_api_key`` (``sk-ant-``), ``github_token``
  (``ghp_ gho_ ghu_ ghs_ ghr_`` + 36, ``github_pat_``), ``gitlab_token`` (``glpat-``),
  ``slack_token`` (``xoxa- xoxb- xoxp- xoxr- xoxs- xoxo-``), ``stripe_key`` (``sk_live_``,
  ``rk_live_``, ``sk_test_``, ``rk_test_``; publishable ``pk_`` keys are not secret),
  ``aws_access_key_id`` (``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16), ``aws_secret_access_key``
  (40 characters after ``aws_secret_access_key =``/``:``), ``google_api_key`` (``AIza`` + 35),
  ``huggingface_token`` (``hf_``), ``npm_token`` (``npm_`` + 36), ``twilio_api_key``
  (``SK`` + 32 hex), ``sendgrid_api_key`` (``SG.`` + 22 + ``.`` + 43);
- ``bearer_token``: ``Bearer <token>`` (e.g. in ``Authorization: Bearer …``);
- ``password``: ``Basic <base64>`` that decodes to ``user:password`` (``Authorization: Basic
  …``: the password only encoded);
- ``jwt``: three base64url parts whose first decodes to a JSON object with ``"alg"``;
- ``private_key``: a ``-----BEGIN … PRIVATE KEY-----`` block with a key body;
- ``password``: ``key = value`` / ``key: value`` / ``"key": "value"`` where the key ends in
  ``password passwd pwd passphrase secret token api_key apikey access_key secret_key
  private_key client_secret credentials``, also inside the value of another such pair
  (``Login: password=…``);
- ``password``: a MySQL or MariaDB client's password glued to ``-p`` on a command line
  (``mysql -u root -pS3cret db``);
- ``connection_string``: ``scheme://user:password@host`` for postgres, mysql, mariadb, mssql,
  mongodb(+srv), redis(s), amqp(s), http(s), ftp, smtp;
- ``api_token``: keys and tokens of the providers in
  :data:`consistency.secret_patterns.PROVIDER_TOKENS` (GitLab runner and deploy tokens, Slack
  app tokens, Discord bot tokens, Stripe webhook secrets, Google OAuth secrets and refresh
  tokens, Mailgun, Mailchimp, PyPI, Shopify, Telegram bots, Heroku, Square, Linear, Postman,
  Groq, Replicate, Airtable, New Relic, Grafana, Supabase, Databricks, Tailscale, Vault,
  Doppler, Atlassian, age, Mapbox, Sentry, Figma, Pulumi, Netlify, Docker Hub,
  DigitalOcean, Alibaba and Tencent Cloud, hex ``sk-`` keys …), by prefix and shape;
- ``password`` told in words, in English, a few European languages and Chinese
  (:data:`consistency.secret_patterns.KEYWORDS_PASSWORD` and the other keyword lists): a
  keyword, the words naming what it opens, a separator (``is``, ``:``, ``是``, ``→`` …, or
  none) and a value accepted by what the keyword announces — a PIN or door code of 4–12
  digits, a password of a digit and a letter or mixed case, a quoted passphrase, a
  passphrase of 3–8 plain words filling its clause after an explicit ``is`` / ``:`` / ``是``
  ("my password is correct horse battery staple"; :func:`_passphrase_end`), a key of 16
  random characters, a base32 OTP seed, recovery codes. Also a password told by its use
  ("use X to log in", "encrypted with X", ``admin / X``, ``WIFI:…;P:X;``) and a
  secret-named parameter in a URL's query (``?api_key=…``, ``&token=…``, ``password=``);
- ``totp_seed``: an ``otpauth://`` URL's ``secret=``;
- ``webhook_url``: Slack, Discord, Microsoft Teams, Feishu/Lark, DingTalk and WeCom bot
  URLs and Google Calendar's private feed (the URL is the credential);
- every form above also in the text as it is stored and read (:func:`normalised_view`:
  control and zero-width characters removed, NFKC): ``ghp_…\x01…`` and ``ＡＫＩＡ…`` are found.

Keeping false positives low (each rule is exercised by the look-alike corpus in the tests):

- tokens must stand alone (no letter, digit, ``_ - + /`` right before them), so nothing is
  found inside base64 data (images), identifiers such as ``task-…`` or file hashes;
- placeholders are never secrets: ``sk-...``, ``<your-key>``, ``xxxx``, ``****``, ``${API_KEY}``,
  ``$TOKEN``, ``{{ secrets.X }}``, ``%TOKEN%``, ``os.environ[…]``, values containing
  ``example``/``your``/``placeholder``/``redacted``/``changeme``, a run of one repeated character,
  and the values of :data:`PLACEHOLDER_WORDS`; AWS's documented ``…EXAMPLE`` keys are
  placeholders too;
- generic prefixes (``sk-``, ``hf_``, bearer tokens) need a digit and a letter and a Shannon
  entropy of at least :data:`MIN_TOKEN_ENTROPY_BITS` bits per character (random base62 keys
  score ≈4.5–5.5, English-ish dashed phrases ≈3–3.7);
- ``password``-style values need at least :data:`MIN_PASSWORD_CHARS` characters and either two
  character classes (lower, upper, digit, symbol) or at least 12 characters; pure numbers,
  booleans and prose after the key word (``the password policy``, ``token bucket``) are not
  matched, nor a sentence in quotes after it (:func:`_sentence`): a tip announced as a secret
  (``here is a secret: "grant agency to the people who do the work"``), or, after a password
  keyword, one saying where the password is or who has it (``password: "ask Maria at the
  front desk"``, ``密码：“贴在冰箱上的那张纸上”``);
- connection strings whose password is a placeholder or equals the user name
  (``postgres:postgres@localhost``) are dev defaults, not secrets;
- UUIDs, git SHAs, ULIDs and base64 blobs match no rule (no pattern is a bare hex or base32 run).

Measured on a blind corpus of 265 secrets and 308 look-alikes, 43% of them Chinese
(``tests/consistency/secrets_blind.jsonl``): 264 refused, no look-alike refused; on the
6,041 markdown files of ``../shared/corpora``: no finding.

Known misses: a password told without a keyword or a use ("I went with X for the tax site"),
a provider key without a documented prefix and no keyword before it, a secret split across
lines, a password that is a sentence saying where a thing is (``password: "meet me at the
old mill"`` reads as prose).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from config.errors import SecretRefusedError
from consistency.secret_heads import HeadSearch, heads_of
from consistency.secret_patterns import (
    COMMON_VALUE_WORDS,
    KEYWORDS_CODE,
    KEYWORDS_KEY,
    KEYWORDS_PASSWORD,
    KEYWORDS_RECOVERY,
    KEYWORDS_TOTP,
    PHRASE_TALK_WORDS,
    PROVIDER_TOKENS,
    URL_SECRET_PARAMETERS,
    ValueKind,
)

__all__ = [
    "MAX_RESCAN_CHARS",
    "MIN_PASSWORD_CHARS",
    "MIN_TOKEN_ENTROPY_BITS",
    "PLACEHOLDER_WORDS",
    "REDACTED",
    "SecretFinding",
    "SecretKind",
    "find_secrets",
    "normalised_view",
    "redact_secrets",
    "redactions_kept",
    "refuse_secrets",
    "shannon_entropy_bits",
]

SecretKind = Literal[
    "api_token",
    "anthropic_api_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "bearer_token",
    "connection_string",
    "github_token",
    "gitlab_token",
    "google_api_key",
    "huggingface_token",
    "jwt",
    "npm_token",
    "openai_api_key",
    "password",
    "private_key",
    "sendgrid_api_key",
    "slack_token",
    "stripe_key",
    "totp_seed",
    "twilio_api_key",
    "webhook_url",
]

#: Minimum Shannon entropy (bits/char) of a token behind a generic prefix (``sk-``, ``hf_``,
#: ``Bearer``). Measured on the test corpus: generated base62 keys ≥ 4.4, dashed English
#: placeholders such as ``sk-this-is-not-a-real-key`` ≤ 3.7.
MIN_TOKEN_ENTROPY_BITS = 3.8
#: Longest value of a refused ``key: value`` searched again for an assignment inside it
#: (``Login: password=…``); our choice: a line's worth, so a text of ``a:b:c:…`` runs costs at
#: most that many passes over each stretch, never a pass per character of the whole text.
MAX_RESCAN_CHARS = 256
#: Minimum length of a ``password: value`` value; shorter values are nearly always prose
#: (``token: a``) or examples. Misses genuinely short passwords, by choice.
MIN_PASSWORD_CHARS = 6
#: Values that are placeholders or configuration words, never secrets (compared casefolded,
#: with ``-``/``_`` removed).
PLACEHOLDER_WORDS = frozenset(
    {
        "changeme", "changeit", "password", "passw0rd", "secret", "token", "apikey", "none",
        "null", "nil", "true", "false", "yes", "no", "required", "optional", "enabled",
        "disabled", "redacted", "hidden", "removed", "placeholder", "example", "dummy", "todo",
        "tbd", "notset", "empty", "string", "undefined", "default", "mypassword",
        "yourpassword", "yourtoken", "yoursecret", "yourapikey", "secretkey", "accesstoken",
        "replaceme", "fillmein", "fillme", "setme", "insertkey", "inserttoken", "notreal",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One credential in a text: its kind, its ``[start, end)`` character offsets, and a
    redacted ``preview`` safe to print (e.g. ``sk-proj-…a1B2``, ``password=…``)."""

    kind: SecretKind
    start: int
    end: int
    preview: str


def shannon_entropy_bits(text: str) -> float:
    """Shannon entropy of the character distribution of ``text``, in bits per character
    (0.0 for an empty text)."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# --------------------------------------------------------------------------- placeholders

_PLACEHOLDER_SHAPES = re.compile(
    r"""(?ix)
    ^(?:
        .*(?:\.\.\.|…|xxxx|\*\*\*|•••|<[^>]*>|\$\{|\{\{|%[a-z_]+%|example|your|placeholder
            |redacted|changeme|environ|getenv|process\.env|secrets\.)
        .*
      | \$[a-z_][a-z0-9_]*        # $TOKEN
      | !\w+                      # YAML tags such as !vault
      | [a-z_][\w.]*\(.*          # a function call
      | (?-i:[a-z_]{2,20}(?:\.[A-Za-z_][A-Za-z_]*)+)  # a name in code: settings.SECRET_KEY
    )$
    """
)


def _is_placeholder(value: str) -> bool:
    bare = value.strip().strip("'\"")
    if not bare or bare.startswith("[credential"):  # (dreamd's own redaction mark)
        return True
    if len(set(bare.casefold())) <= 2:  # "xxxxxxxx", "********", "aaaa0000"
        return True
    if bare.casefold().replace("-", "").replace("_", "") in PLACEHOLDER_WORDS:
        return True
    return bool(_PLACEHOLDER_SHAPES.match(bare))


def _random_looking(token: str) -> bool:
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    return has_digit and has_alpha and shannon_entropy_bits(token) >= MIN_TOKEN_ENTROPY_BITS


def _char_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


# --------------------------------------------------------------------------- rules

_LEAD = r"(?<![A-Za-z0-9_+/\-])"  # the token stands alone (not inside base64 or a word)
_TAIL = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: SecretKind
    pattern: re.Pattern[str]
    #: Higher wins where two findings overlap (a provider key beats ``password=`` around it).
    priority: int
    #: Receives the match; returns the preview (or the preview and the credential's span,
    #: where it is not the whole match), or ``None`` to reject the match.
    check: Callable[[re.Match[str]], str | tuple[str, int, int] | None]
    #: Literals one of which every match contains: the pattern runs only on a text that holds
    #: one (``in`` is a plain scan, many times faster than any of these patterns).
    #: ``triggers`` are looked for in the case-folded text, ``cased`` in the text as it is;
    #: a rule with neither always runs.
    triggers: tuple[str, ...] = ()
    cased: tuple[str, ...] = ()
    #: A literal every match holds besides its trigger (``@`` of ``user:password@host``).
    needs: str = ""
    #: Groups searched again when the check refuses the match (:func:`_accepted_matches`).
    rescan: tuple[str, ...] = ()

    def may_match(self, text: str, folded: str) -> bool:
        """Whether ``text`` (``folded``: its case-folded form) holds what every match of
        this rule holds."""
        if self.needs and self.needs not in text:
            return False
        if not self.triggers and not self.cased:
            return True
        # plain loops: asked of every rule for every text (79 rules, 25,000 texts in a dream
        # over 10,000 memories), a generator per rule and text cost more than the tests
        for trigger in self.triggers:
            if trigger in folded:
                return True
        for trigger in self.cased:  # noqa: SIM110 - no generator (above)
            if trigger in text:
                return True
        return False


def _tail4(secret: str) -> str:
    return secret[-4:] if len(secret) >= 12 else ""


def _prefixed(prefix_group: int = 1, body_group: int = 2, *, generic: bool = False
              ) -> Callable[[re.Match[str]], str | None]:  # fmt: skip
    def check(match: re.Match[str]) -> str | None:
        prefix, body = match.group(prefix_group), match.group(body_group)
        if _is_placeholder(body):
            return None
        if generic and not _random_looking(body):
            return None
        return f"{prefix}…{_tail4(body)}"

    return check


def _aws_key_id(match: re.Match[str]) -> str | None:
    key = match.group(0)
    if "EXAMPLE" in key or _is_placeholder(key[4:]):
        return None
    return f"{key[:4]}…{key[-4:]}"


def _aws_secret(match: re.Match[str]) -> str | None:
    value = match.group(2)
    if "EXAMPLE" in value or _is_placeholder(value) or not _random_looking(value):
        return None
    return f"{match.group(1)}=…{_tail4(value)}"


def _b64url_json(part: str) -> object:
    padded = part + "=" * (-len(part) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded).decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _jwt(match: re.Match[str]) -> str | None:
    header = _b64url_json(match.group(1))
    if not isinstance(header, dict) or "alg" not in header:
        return None
    return f"eyJ…{_tail4(match.group(0))}"


def _bearer(match: re.Match[str]) -> str | None:
    token = match.group(2)
    if _is_placeholder(token) or not _random_looking(token):
        return None
    return f"{match.group(1)} …{_tail4(token)}"


def _basic_auth(match: re.Match[str]) -> str | None:
    """``Basic <base64>`` whose base64 reads as ``user:password`` (an HTTP ``Authorization``
    header: the password is sent in it, only encoded); a word after "basic" that decodes to
    no such pair ("basic auth is enabled", "Basic plan") is not one."""
    token = match.group(2)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    user, colon, password = decoded.partition(":")
    if not colon or not password or not decoded.isprintable() or _is_placeholder(password) \
            or password == user:
        return None
    return f"{match.group(1)} …{_tail4(token)}"


def _private_key(match: re.Match[str]) -> str | None:
    block = match.group(2) if match.group(2) is not None else match.group(3)  # END missing
    body = re.sub(r"^[A-Za-z-]+:.*$", "", block, flags=re.MULTILINE)  # PEM headers
    if len(re.findall(r"[A-Za-z0-9+/=]", body)) < 32 or _is_placeholder(body.strip()):
        return None
    return f"-----BEGIN {match.group(1)}PRIVATE KEY-----…"


#: After a value: more words of the same line (a possessive or contraction's ending, then a
#: space and two words of letters).
_SENTENCE_GOES_ON = re.compile(r"(?:['’][a-z]{1,2})?[ \t]+[A-Za-z]+[ \t]+[A-Za-z]+")


def _password(match: re.Match[str]) -> str | None:
    key = match.group("key")
    if not _KEY_NAME.search(key):
        return None
    value = match.group("qvalue") if match.group("qvalue") is not None else match.group("value")
    if value is None or len(value) < MIN_PASSWORD_CHARS or _is_placeholder(value) or \
            _prose(value) or _sentence(value, pointing=_PASSWORD_KEY.search(key) is not None):
        return None  # a sentence in quotes after "a secret:", or one saying where the
        # password is after "password:"
    if match.group("qvalue") is None and value.isalpha() and \
            _SENTENCE_GOES_ON.match(match.string, match.end()):
        return None  # a label heading a sentence ("1Password: Another password manager
        # that offers …"): one word of letters, more words after it on the line
    if value.isdigit() or value.casefold() == key.casefold():
        return None
    if _char_classes(value) < 2 and len(value) < 12:
        return None
    return f"{key}=…"


def _connection(match: re.Match[str]) -> str | None:
    user, password = match.group("user"), match.group("password")
    if len(password) < 4 or _is_placeholder(password) or password == user:
        return None
    if password.casefold() in {"pass", "pwd", "passwd"}:
        return None
    return f"{match.group('scheme')}://{user}:…@{match.group('host')}"


def _webhook(match: re.Match[str]) -> str | None:
    """A webhook URL carries its own credential (anyone holding it can post)."""
    token = match.group("token")
    return None if _is_placeholder(token) else "webhook …" + _tail4(token)


# --------------------------------------------------------------------------- told in words

#: What stands between a keyword (and the words naming what it opens) and its value: a
#: copula, a colon, an arrow or a dash ("password for the router *is* …", "门禁密码*是*…").
_SEPARATOR = re.compile(r"\s*(?:\b(?:is|was|are|were|to|now)\b|=|:|：|是|为|為|→|->|—|–"
                        r"|\s-(?=\s))\s*")
#: Opening quotes around a value told (:data:`_VALUE`'s ``qv``).
_OPEN_QUOTES = "\"'“‘「"
#: A value: a quoted phrase, or printable ASCII up to a space, a comma, a semicolon or a
#: Chinese character (a sentence's last full stop left out).
_VALUE = re.compile(r"[\"'“‘「](?P<qv>[^\"'”’」\n]{4,80})[\"'”’」]"
                    r"|(?P<v>[!-+\--:<-~]{3,200}?)(?=$|[\s,;，。；、）)]|[.!?](?:\s|$)"
                    r"|[^\x00-\x7f])")
_KEYWORD_KINDS: tuple[tuple[ValueKind, str], ...] = (
    ("totp", KEYWORDS_TOTP), ("recovery", KEYWORDS_RECOVERY), ("code", KEYWORDS_CODE),
    ("password", KEYWORDS_PASSWORD), ("key", KEYWORDS_KEY))
#: A keyword, then the rest of its line (up to :data:`_WINDOW` characters) where the value
#: is looked for (:func:`_told`).
_WINDOW = 80
#: Chinese, Japanese and Korean characters: a keyword in them needs no word boundary.
_CJK_CLASS = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
_TOLD = re.compile(
    r"(?i)(?:(?<![A-Za-z0-9_\-])|(?=[^\x00-\x7f]))(?:"
    + "|".join(f"(?P<{kind}>{words})" for kind, words in _KEYWORD_KINDS)
    + rf")(?:(?<={_CJK_CLASS})|(?!(?!{_CJK_CLASS})[\w\-]))(?=(?P<rest>[^\n]{{0,{_WINDOW}}}))")
#: Words that make the keyword a modifier, not the name of a value: "password *manager*",
#: "PIN *policy*".
_MODIFIED = frozenset({
    "manager", "managers", "manager's", "policy", "policies", "field", "fields", "reset",
    "requirements", "rules", "strength", "hint", "hints", "prompt", "protection", "rotation",
    "length", "change", "changes", "expiry", "generator", "vault", "hygiene", "store",
    "form", "screen", "page", "dialog", "box", "input", "entry", "holder", "holders",
    "budget", "budgets", "count", "counts", "limit", "limits", "window", "usage", "mode",
    "modes", "type", "types", "format", "setting", "settings", "option", "options", "rule",
    "model", "brand", "check", "checker", "lock", "locks", "flag", "flags"})
#: Words after a Chinese keyword that make it a modifier ("授权码*模式*", "密码*规则*").
_MODIFIED_ZH = ("模式", "型号", "规则", "强度", "要求", "策略", "管理", "长度", "格式", "设置",
                "学", "锁", "箱", "柜", "器", "机", "本", "盘", "术", "算法", "框",
                # the same words in Traditional characters ("密碼*規則*")
                "型號", "規則", "強度", "長度", "設置", "設定", "學", "鎖", "櫃", "機", "盤", "術")
#: Written before a keyword, these say the value is public ("publishable key", "公钥").
_PUBLIC = re.compile(r"(?i)(?:public|publishable|公开|公開|可发布|可發布|公钥|公鑰|not\s+the|不是)"
                     r"\W{0,3}\w{0,12}$")
#: Regular-expression syntax: a pattern about secrets, not one ("密码强度正则 ^(?=.*[a-z])…").
_REGEX_LIKE = re.compile(r"\(\?[=!:<]|\.\*|\[[a-z0-9]-[a-z0-9]|\\[dwsb]|\{\d+,\d*\}")
#: How many words after the keyword a value with no separator may stand ("sudo password on
#: the work laptop *6nEonrRTPu*"): the words between name what it opens.
_WORDS_BEFORE_VALUE = 6
#: An OTP seed: base32, maybe written in groups.
_BASE32 = re.compile(r"[A-Z2-7]{4}(?:\s?[A-Z2-7]{2,8}){3,}|[A-Z2-7]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def _told(match: re.Match[str]) -> tuple[str, int, int] | None:
    """A value told after a keyword, accepted by what the keyword says it is
    (:class:`ValueKind`): after a separator within the rest of the line, else one of the
    next few words. Returns the preview and the span from the keyword to the value."""
    kind = next(k for k, _w in _KEYWORD_KINDS if match.group(k) is not None)
    keyword = match.group(kind)
    if match.string.startswith(REDACTED, max(0, match.start() - 1)):
        return None  # dreamd's own mark, "[credential withheld]"
    rest, base = match.group("rest"), match.start("rest")
    first = rest.split(None, 1)[0].casefold().strip(":：,.;") if rest.strip() else ""
    if first in _MODIFIED or (_CJK.search(keyword) and rest.startswith(_MODIFIED_ZH)) or \
            _PUBLIC.search(match.string[max(0, match.start() - 20):
                                                          match.start()]):
        return None
    if keyword.casefold() in {"sk", "ak"} and not keyword.isupper():
        return None  # "AK" / "SK" (access and secret key) are written in capitals
    for value, at, explicit in _values_after(rest, chinese=_CJK.search(keyword) is not None,
                                             may_to=_SETTING.search(match.string[max(
                                                 0, match.start() - 30):match.start()]) is not
                                             None):
        preview = _accepted(kind, keyword, value, rest[at:], explicit=explicit,
                            quoted=at > 0 and rest[at - 1] in _OPEN_QUOTES)
        if preview is not None:
            return preview, match.start(), base + at + len(value)
    end = _passphrase_end(rest) if kind == "password" and _PHRASE_KEYWORD.search(keyword) \
        else None
    return None if end is None else (f"{keyword.split()[-1]} …", match.start(), base + end)


#: Password keywords that may announce a passphrase in plain words: not "pass" or "pw" (a bus
#: pass, a day pass), nor a "key".
_PHRASE_KEYWORD = re.compile(r"(?i)pass(?:wor[dt]|phrase|\s?word)|p[@4]ssw[o0]rd|kennwort"
                             r"|mot\s+de\s+passe|contrase|senha|wachtwoord|has[łl]o|пароль"
                             r"|passord|senord|salasana|heslo|jelsz|ifre|密码|口令|密碼|パスワード"
                             r"|비밀번호")
#: After a password keyword: "is", "was", a colon, "=", "是": a value stands after it.
_PHRASE_SEPARATOR = re.compile(r"\s*(?:\b(?:is|was)\b|=|:|：|是|为|為)\s*")
#: A passphrase of plain words: 3 to 8 words of 2 to 16 small letters (the first may be
#: capitalised), up to the end of its clause.
_PHRASE = re.compile(r"(?:[A-Za-z][a-z]{1,15})(?:[ \t]+[a-z]{2,16}){2,7}")
#: Where a told passphrase's clause ends: a comma, a semicolon, a bracket, a Chinese
#: character or the line's end (the sentence's end is cut before).
_PHRASE_END = re.compile(r"[ \t]*(?:[,;，；、(（]|[^\x00-\x7f]|$)")


def _passphrase_end(rest: str) -> int | None:
    """A passphrase told in plain words after a password keyword ("my password is correct
    horse battery staple", "密码是 purple monkey dishwasher"): its end in ``rest``, or
    ``None``. The words fill their clause from the first separator (within 50 characters),
    hold at least 12 letters, none of :data:`consistency.secret_patterns.PHRASE_TALK_WORDS`
    and at most one of :data:`consistency.secret_patterns.COMMON_VALUE_WORDS`: a sentence
    about a password has its little words ("the password is *in* 1Password", "my password is
    *the* same *as* before") and a passphrase of random words has none."""
    stop = re.search(r"[。！？]|[.!?;；](?:\s|$)", rest)
    head = rest[: stop.start()] if stop else rest
    sep = _PHRASE_SEPARATOR.search(head)
    if sep is None or sep.start() > 50:
        return None
    phrase = _PHRASE.match(head, sep.end())
    if phrase is None or _PHRASE_END.match(head, phrase.end()) is None:
        return None
    words = phrase.group().casefold().split()
    if sum(len(w) for w in words) < 12 or any(w in PHRASE_TALK_WORDS for w in words) or \
            sum(w in COMMON_VALUE_WORDS for w in words) > 1:
        return None
    return phrase.end()


#: Words before a keyword that make "to" its separator ("set the laptop password *to* …").
_SETTING = re.compile(r"(?i)\b(?:set|sets|setting|changed?|changing|reset|updated?)\b")


def _values_after(rest: str, *, chinese: bool, may_to: bool = False
                  ) -> list[tuple[str, int, bool | str]]:
    """Candidate values in ``rest``: ``(value, offset, after a separator)`` (``"label"``: a
    colon or ``=``), the one after the first separator (before any sentence end) first,
    then the next words."""
    found: list[tuple[str, int, bool | str]] = []
    stop = re.search(r"[。！？]|[.!?;；](?:\s|$)", rest)
    head = rest[: stop.start()] if stop else rest
    sep = _SEPARATOR.search(head)
    if sep is not None and sep.group().strip() == "to" and not may_to:
        sep = None  # "pass data *to* Obsidian"
    if sep is not None and sep.start() <= 50 and not (
            ")" in head[:sep.start()] and "(" not in head[:sep.start()]):
        # (a keyword inside brackets names something else: "SID (not the auth token) is …")
        value = _VALUE.match(head, sep.end())
        if value is not None:
            labelled = bool(re.search(r"[:：=]", sep.group()))  # "password: sunshine"
            found.append((value.group("qv") or value.group("v"), value.start(
                "qv" if value.group("qv") else "v"), "label" if labelled else True))
    lead = len(head) - len(head.lstrip())
    for word in list(re.finditer(r"[!-+\--:<-~]+", head))[:_WORDS_BEFORE_VALUE]:
        value = _VALUE.match(head, word.start())
        if value is not None and value.group("v"):
            # right after a Chinese keyword ("银行卡密码 719962"): as good as a separator
            found.append((value.group("v"), value.start("v"), chinese and word.start() == lead))
    return found


def _accepted(kind: ValueKind, keyword: str, value: str, tail: str, *,
              explicit: bool | str, quoted: bool = False) -> str | None:
    """The preview of ``value``, told after ``keyword`` (``tail``: the rest of the line from
    the value on; ``quoted``: the value stood in quotes, ``password: "correct horse"``), or
    ``None`` when it is no secret of ``kind``."""
    value = value.rstrip(".!?)\"'")
    if _CLAUSE_WORD.fullmatch(value):
        return None  # a word ending its clause ("password are usually:") or a possessive or
        # contraction ("kasserine pass: rommel's forces"): words of the sentence
    folded = value.casefold()
    after = tail[len(value):len(value) + 1]
    if after.isalpha() and not after.isascii() and not _CJK.match(after):
        return None  # a word of another language cut at its first accent ("Verschl|üsselung")
    if _MARKUP.search(value) or _prose(value):
        return None  # markdown or a table around words ("**6-digit", "|", "[[…]]"), or
        # words joined by hyphens ("ask-Maria-at-reception", "stored-in-1password")
    if not value or folded in COMMON_VALUE_WORDS or folded.removesuffix("'s") in \
            COMMON_VALUE_WORDS or folded in {keyword.casefold(), "admin", "root", "user",
                                             "username"} or _REGEX_LIKE.search(value):
        return None
    if not (value.isdigit() and len(set(value)) > 1) and _is_placeholder(value):
        return None  # ("8555" is a PIN, not a run of two characters)
    if kind == "totp":
        return "OTP seed …" if _BASE32.match(tail) else None
    if kind == "recovery":
        return "recovery codes …" if any(c.isdigit() for c in value) and len(value) >= 4 \
            else None
    if kind == "key":
        return _told_key(value, keyword)
    return _told_password(value, keyword, kind, quoted=quoted,
                          explicit=bool(explicit), last=explicit == "label" or not tail[
                              len(value):].strip(" \t.!?。！？)\"'”’"))


#: A word of a sentence where a told value would stand: letters then the clause's colon,
#: semicolon or comma ("usually:"), or an English possessive or contraction ("rommel's",
#: "don't", "they're"). A password holds such a mark amid other characters, not so.
_CLAUSE_WORD = re.compile(r"[A-Za-z]+[:;,：；，]|[A-Za-z]+['’](?:s|t|re|ve|ll|d|m)",
                          re.IGNORECASE)


def _told_key(value: str, keyword: str) -> str | None:
    """A key or token is long and random: 16 characters or more, of letters and digits with
    the entropy of a random string, or hex, or a UUID ("auth token is 84cf228b-…")."""
    if len(value) < 16:
        return None
    hexlike = re.fullmatch(r"(?:0x)?[0-9a-fA-F]{24,}", value) is not None
    if hexlike or _UUID.fullmatch(value) or _random_looking(value) or (
            re.fullmatch(r"[A-Za-z0-9+/]{30,}={0,2}", value) and _char_classes(value) >= 3):
        return f"{keyword} …{_tail4(value)}"
    return None


def _told_password(value: str, keyword: str, kind: ValueKind, *, quoted: bool,
                   explicit: bool, last: bool = False) -> str | None:
    """A password after its keyword: a quoted phrase; a PIN or code of 4–12 digits; two
    character classes and 6 characters; or, after an explicit "is" / ":" (or right after a
    Chinese keyword), 8 letters of one class that are no word of
    :data:`consistency.secret_patterns.COMMON_VALUE_WORDS`."""
    label = f"{keyword.split()[-1]} …"
    chinese = _CJK.search(keyword) is not None
    if _sentence(value, pointing=True):
        return None  # 密码：“贴在冰箱上的那张纸上”, password is "the same as before"
    digits = value.rstrip("#*")
    if keyword.casefold() == "passphrase" and re.fullmatch(r"[a-z]{3,}(?:[-.][a-z]{3,}){2,}",
                                                             value):
        return label  # words joined by dashes: "pbayak-iwoqmqe-zvvlq-sagcyb"
    if quoted and kind == "password" and len(value) >= 6 and not all(
            w in COMMON_VALUE_WORDS for w in value.casefold().split()):
        return label  # a phrase in quotes; a short one, or a code's, is judged as any value
        # ("1234"; a PIN is digits: PIN: "the usual" is none)
    if digits.isdigit():
        return label if 4 <= len(digits) <= 12 and (explicit or kind == "code") else None
    if kind == "code" and (len(value) < 6 or keyword.casefold().startswith(("pin", "puk"))
                           or not (explicit or (keyword.casefold() == "passcode"
                                                and _strong(value)))):
        return None  # a code is digits: "pin the image to …" pins a version, "keypad lock,
        # model PGD728F" names a model
    if len(value) < MIN_PASSWORD_CHARS or (not explicit and "-" in value):
        return None  # (a word after no separator, hyphenated: "voor E2E-versleuteling")
    if _strong(value) and (explicit or value.isalnum() or any(c.isdigit() for c in value)):
        return label  # (a word after no separator: a digit, or mixed case alone)
    if explicit and _char_classes(value.lower()) >= 2 and not _HYPHENATED.fullmatch(value):
        return label  # "hunter2!", "p@ssw0rd" (a capital first letter is no class)
    if explicit and len(value) >= 8 and value.isalpha() and (
            chinese or last or len(value) >= 12 or _CONSONANTS.search(value)):
        # one class of letters: after a Chinese keyword (no English word stands there), as
        # the last word told ("password: sunshine"), or not shaped like an English word
        return label
    return None


#: Markup around words, never inside a secret told in a sentence: emphasis, a table cell, a
#: wikilink, a code span, an English compound of a number ("6-digit", "2-factor").
_MARKUP = re.compile(r"\*\*|\]\]|\[\[|\||`|^[\\#(\[*-]|^\d+-[a-z]+$")
#: Three words or more joined by hyphens: a description, not a password.
_PROSE_VALUE = re.compile(r"(?:[A-Z]?[a-z]+|\d[a-z]+)(?:-(?:[A-Z]?[a-z]+|\d[a-z]+)){1,}")
#: Little words of a sentence: words joined by hyphens that hold one are a description
#: ("same-as-the-router", "see-invite"), not a passphrase ("correct-horse-battery-staple").
_FUNCTION_WORDS = frozenset({
    "the", "a", "an", "as", "at", "in", "on", "of", "to", "for", "with", "from", "by", "my",
    "your", "our", "is", "are", "same", "see", "ask", "use", "check", "via", "not", "no",
    "and", "or", "per", "stored", "saved", "kept", "written", "sent", "shared", "invite"})


def _prose(value: str) -> bool:
    """Words joined by hyphens that read as a description ("ask-Maria-at-reception")."""
    return _PROSE_VALUE.fullmatch(value) is not None and any(
        w.casefold() in _FUNCTION_WORDS for w in value.split("-"))


#: A word of a quoted sentence: letters, maybe a contraction or possessive ("don't", "NAS's"),
#: maybe with the clause's punctuation around it.
_SENTENCE_WORD = re.compile(r"[(\"'“‘]*[A-Za-z]+(?:['’][A-Za-z]+)?[,.;:!?)\"'”’]*")
#: Fewest words of a quoted English sentence: "correct horse battery" stays a passphrase.
_SENTENCE_WORDS = 4
#: What only a Chinese sentence holds, never a password of Chinese characters ("芝麻开门"):
#: particles and pronouns.
_ZH_SENTENCE = re.compile(r"[的了在和跟与我你他她们这那就都也要会不没别把给被让找问说吗呢吧]|一样")
#: Words of a sentence that says where a password is, who has it, or that it is another one
#: ("same as the one for the NAS", "ask Maria at the front desk", "printed on the back of the
#: router", "I will tell you in person"); a password that is a sentence ("I love my dog Rex")
#: says none of that.
_POINTING = frozenset({
    "same", "as", "like", "ask", "tell", "told", "see", "check", "find", "get", "call", "on",
    "in", "at", "under", "behind", "inside", "near", "beside", "from", "written", "printed",
    "stored", "saved", "kept", "taped", "stuck", "sent", "shared", "know", "knows", "before",
    "usual", "not", "don't", "won't", "never", "one"})
#: The same in Chinese: where it is, who has it, that it is another one ("贴在冰箱上", "问前台",
#: "找运维要", "跟上次的一样", "别写在这里").
_ZH_POINTING = re.compile(r"[在问找贴写存放别不没跟同]|一样|告诉|知道")


def _sentence(value: str, *, pointing: bool = False) -> bool:
    """A value in quotes that is a sentence, not a password: after "here is a secret:",
    ``"grant agency to the people who do the work"``; after "password:" (``pointing``: a
    sentence that says where the password is or who has it, as a password that is a sentence
    does not), ``"same as the one for the NAS"``, ``"贴在冰箱上的那张纸上"``.

    English: :data:`_SENTENCE_WORDS` words or more, only of letters, at least two of them the
    little words of a sentence (:data:`consistency.secret_patterns.COMMON_VALUE_WORDS`,
    :data:`consistency.secret_patterns.PHRASE_TALK_WORDS`, as the plain-words passphrase rule
    :func:`_passphrase_end` reads them: a passphrase of random words holds at most one,
    "correct horse battery staple"), and with ``pointing`` one of :data:`_POINTING`. Chinese:
    four Chinese characters or more, no Latin letter or digit, a particle or pronoun
    (:data:`_ZH_SENTENCE`), and with ``pointing`` one of :data:`_ZH_POINTING`."""
    if _CJK.search(value):
        return re.search(r"[A-Za-z0-9]", value) is None and len(_CJK.findall(value)) >= 4 \
            and _ZH_SENTENCE.search(value) is not None \
            and (not pointing or _ZH_POINTING.search(value) is not None)
    words = value.split()
    if len(words) < _SENTENCE_WORDS or not all(_SENTENCE_WORD.fullmatch(w) for w in words):
        return False
    bare = [w.strip("(\"'“‘,.;:!?)”’").casefold().replace("’", "'") for w in words]
    stems = [re.sub(r"'[a-z]+$", "", w) for w in bare]
    little = sum(w in COMMON_VALUE_WORDS or w in PHRASE_TALK_WORDS for w in stems)
    return little >= 2 and (not pointing or any(w in _POINTING for w in (*bare, *stems)))


#: A product's name: capitalised words and numbers ("MacBookAir2020", "Win11Pro", "AppleID2").
_PRODUCT = re.compile(r"(?:[A-Z][a-z]+|\d+|[A-Z]{2,}(?![a-z]))+")
#: Words joined by hyphens ("end-to-end"), a Chinese, Japanese or Korean character.
_HYPHENATED = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")
_CJK = re.compile(_CJK_CLASS)
#: Four consonants in a row: rare in English words ("strengths" aside), common in random
#: letters ("eonklwnrajvpwwjo", "VMKKKIBX").
_CONSONANTS = re.compile(r"(?i)[bcdfghjklmnpqrstvwxz]{4}")


#: Literals one of which every :data:`_TOLD` match holds (its keyword's start), case-folded.
_TOLD_TRIGGERS = (
    "pass", "pwd", "pw", "pin", "puk", "psk", "key", "token", "secret", "cred", "code", "otp",
    "2fa", "mfa", "two-factor", "authenticator", "recovery", "backup", "wi-fi", "wifi",
    "network", "kennwort", "contrase", "senha", "mot de passe", "passcode", "keypad",
    "wachtwoord", "hasło", "haslo", "пароль", "passord", "senord", "salasana", "heslo",
    "jelsz", "ifre",
    "密码", "口令", "授权码", "登录码", "门禁", "私钥", "密钥", "秘钥", "令牌", "恢复码",
    "备用", "救援码", "验证", "パスワード", "비밀번호",
    "p@ss", "p4ss", "密碼", "授權碼", "登錄碼", "登入碼", "私鑰", "密鑰", "秘鑰", "金鑰", "權杖")


#: A password told by its use: "use X to log in", "I use X as the password", "encrypted with
#: X", "creds … are user:X" / "login is admin / X", "WIFI:…;P:X;".
_USED = re.compile(
    r"(?i)\b(?:use|used|using)\s+(?P<v>[!-~]{6,64})\s+(?:to\s+(?:log\s?in|sign\s?in|unlock"
    r"|get\s+in)|as\s+(?:the\s+|my\s+|a\s+)?(?:password|passcode|pin|passphrase)"
    r"(?!\s*(?:manager|host|vault|app|generator|hint)))"
    r"|\b(?:encrypted|protected|locked|log(?:ged)?\s?in|sign(?:ed)?\s?in)\s+with\s+"
    r"(?P<v2>[!-+\--:<-~]{6,64}?)(?=$|[\s,;]|[.!?](?:\s|$))"
    r"|(?:\blogins?\b|\bcreds\b|\bcredentials\b|\baccount\b|账号|帐号|帳號)"
    r"[^\n]{0,40}?(?<![\w.@+\-])[\w.@+\-]{2,40}(?:[ \t]+/[ \t]+|[ \t]*／[ \t]*|:(?!/))"
    r"(?P<v3>[!-+\--:<-~]{6,64}?)(?=$|[\s,;，。；]|[.!?](?:\s|$)|[^\x00-\x7f])"
    r"|WIFI:[^\n]{0,120}?;P:(?P<v4>[^;\n]{4,64});")


def _used(match: re.Match[str]) -> str | None:
    value = next(v for v in match.group("v", "v2", "v3", "v4") if v is not None)
    value = value.rstrip(".!?)\"'")
    if _is_placeholder(value) or value.casefold() in COMMON_VALUE_WORDS:
        return None
    if match.group("v4") is not None:
        return "wifi password …"
    if match.group("v3") is None and ("-" in value or _PRODUCT.fullmatch(value)):
        return None  # "encrypted with AES-256-GCM", "signed in with AppleID2": a product
    return "password …" if len(value) >= 6 and _strong(value) else None


def _strong(value: str) -> bool:
    """A password-like word: a digit and a letter, or capitals past its first letter beside
    small letters ("KeePassXC", not "Verschlüsselung")."""
    letters = any(c.isalpha() for c in value)
    return (letters and any(c.isdigit() for c in value)) or (
        any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
        and not _CAMEL_WORDS.fullmatch(value))


#: Words written together, each capitalised: a product's name ("OneNote", "iCloud",
#: "PowerShell"), not a password.
_CAMEL_WORDS = re.compile(r"[A-Za-z]?[a-z]+(?:[A-Z][a-z]+)+|[A-Z]{2,}[a-z]+")


#: A database client given its password on the command line, glued to ``-p``
#: (``mysql -u root -pS3cret db``, ``mysqldump -pS3cret``): MySQL's and MariaDB's clients.
_CLIENT_PASSWORD = re.compile(
    r"(?i)\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,120}?\s-p(?P<value>[^\s'\"`]{4,})")


def _client_password(match: re.Match[str]) -> tuple[str, int, int] | None:
    value = match.group("value")
    if _is_placeholder(value) or value[0] in "$%{<" or not (
            _strong(value) or _char_classes(value) >= 2):
        return None
    return "-p…", match.start("value") - 2, match.end("value")


#: A secret in a URL's query string (``?api_key=…``, ``&token=…``, a JDBC ``password=``).
_URL_PARAMETER = re.compile(
    r"(?i)[?&;](?P<key>" + "|".join(sorted(map(re.escape, URL_SECRET_PARAMETERS), key=len,
                                           reverse=True))
    + r")=(?P<value>[^&#\s\"'<>，。]{6,})")


def _url_parameter(match: re.Match[str]) -> str | None:
    key, value = match.group("key").casefold(), match.group("value")
    if _is_placeholder(value) or _prose(value):
        return None
    if URL_SECRET_PARAMETERS[key] == "password":
        ok = len(value) >= 6 and (_char_classes(value) >= 2 or len(value) >= 10)
    else:
        ok = len(value) >= 16 and (_random_looking(value) or re.fullmatch(
            r"[0-9a-fA-F\-]{24,}", value) is not None or "%" in value)
    return f"{key}=…" if ok else None


def _provider_rules() -> tuple[_Rule, ...]:
    """:data:`consistency.secret_patterns.PROVIDER_TOKENS` as rules: the prefix kept in the
    preview, the body never."""
    return tuple(
        _Rule("api_token", re.compile(
            _LEAD + f"({prefix})({body})" + r"(?![A-Za-z0-9_\-])"), 88, _prefixed(),
            cased=(_leading_literal(prefix) or _BODY_HINTS.get(provider, ""),))
        for provider, prefix, body in PROVIDER_TOKENS)


#: What a token with no literal prefix always contains.
_BODY_HINTS = {"discord": ".", "mailchimp": "-us", "telegram": ":AA", "notion": "_"}


def _leading_literal(pattern: str) -> str:
    """The characters ``pattern`` starts with before its first metacharacter ("glpat-" of
    ``glpat-``, "gl" of ``gl(?:pat|rt)-``, "dp." of ``dp\\.(?:st|sa)\\.``)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch in "\\[](){}?*+|^$.":
            break
        out.append(ch)
        i += 1
    if i < len(pattern) and pattern[i] in "?*{" and out:
        out.pop()  # "ab?" does not always hold the "b"
    return "".join(out)


_KEYWORDS = (
    r"password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?|(?<![A-Za-z])pass"
    r"|accountkey|account[_-]key|appsecret|app[_-]secret|master[_-]?secret|master[_-]?key"
    r"|auth[_-]?token|access[_-]?token|refresh[_-]?token|signing[_-]?key|encryption[_-]?key"
)

_KEY_NAME = re.compile(r"(?:" + _KEYWORDS + r")$", re.IGNORECASE)
#: A key naming a password (not a secret, token or key): a sentence in quotes after it is
#: prose only when it says where the password is (:func:`_sentence`).
_PASSWORD_KEY = re.compile(r"(?:password|passwd|pwd|passphrase|(?<![A-Za-z])pass)$",
                           re.IGNORECASE)

_RULES: tuple[_Rule, ...] = (
    _Rule("private_key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----"
        r"(?:([\s\S]{0,12000}?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|((?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]+)+))"), 100,
        _private_key, ("private key",)),
    _Rule("anthropic_api_key", re.compile(
        _LEAD + r"(sk-ant-(?:api|admin|sid)?\d*-?)([A-Za-z0-9_\-]{32,})" + _TAIL), 90,
        _prefixed(generic=True), cased=("sk-ant-",)),
    _Rule("openai_api_key", re.compile(
        _LEAD + r"(sk-(?:proj-|svcacct-|admin-)?)([A-Za-z0-9_\-]{20,})" + _TAIL), 80,
        _prefixed(generic=True), cased=("sk-",)),
    _Rule("github_token", re.compile(
        _LEAD + r"(gh[pousr]_)([A-Za-z0-9]{36,255})" + _TAIL), 90, _prefixed(), cased=("gh",)),
    _Rule("github_token", re.compile(
        _LEAD + r"(github_pat_)([A-Za-z0-9_]{50,255})" + _TAIL), 90, _prefixed(),
        cased=("github_pat_",)),
    _Rule("gitlab_token", re.compile(
        _LEAD + r"(glpat-)([A-Za-z0-9_\-]{20,})" + _TAIL), 90, _prefixed(), cased=("glpat-",)),
    _Rule("slack_token", re.compile(
        _LEAD + r"(xox[abposr]-)(\d{6,}-[A-Za-z0-9\-]{10,})" + _TAIL), 90, _prefixed(),
        cased=("xox",)),
    _Rule("stripe_key", re.compile(
        _LEAD + r"((?:sk|rk)_(?:live|test)_)([A-Za-z0-9]{16,})" + _TAIL), 90, _prefixed(),
        cased=("k_",)),
    _Rule("aws_access_key_id", re.compile(
        r"(?<![A-Za-z0-9+/])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"), 90,
        _aws_key_id, cased=("AKIA", "ASIA", "ABIA", "ACCA")),
    _Rule("aws_secret_access_key", re.compile(
        r"(?i:(aws_?secret_?access_?key|aws_?secret_?key))[\"']?\s*[:=]\s*[\"']?"
        r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), 95, _aws_secret, ("aws",)),
    _Rule("google_api_key", re.compile(
        _LEAD + r"(AIza)([0-9A-Za-z_\-]{35})" + _TAIL), 90, _prefixed(), cased=("AIza",)),
    _Rule("huggingface_token", re.compile(
        _LEAD + r"(hf_)([A-Za-z0-9]{30,})" + _TAIL), 90, _prefixed(generic=True),
        cased=("hf_",)),
    _Rule("npm_token", re.compile(
        _LEAD + r"(npm_)([A-Za-z0-9]{36})" + _TAIL), 90, _prefixed(), cased=("npm_",)),
    _Rule("twilio_api_key", re.compile(
        r"(?<![A-Za-z0-9])(SK)([0-9a-fA-F]{32})(?![A-Za-z0-9])"), 90, _prefixed(),
        cased=("SK",)),
    _Rule("sendgrid_api_key", re.compile(
        _LEAD + r"(SG\.)([A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})" + _TAIL), 90, _prefixed(),
        cased=("SG.",)),
    _Rule("jwt", re.compile(
        _LEAD + r"(eyJ[A-Za-z0-9_\-]{8,})\.([A-Za-z0-9_\-]{8,})\.([A-Za-z0-9_\-]{8,})"
        + _TAIL), 70, _jwt, cased=("eyJ",)),
    _Rule("connection_string", re.compile(
        r"(?i)(?<![A-Za-z0-9+.])(?P<scheme>postgres(?:ql)?|mysql|mariadb|mssql|sqlserver"
        r"|mongodb(?:\+srv)?|rediss?|amqps?|https?|ftp|smtp)(?:\+[a-z0-9]+)?://"
        r"(?P<user>[^\s:/@]*):(?P<password>[^\s@/]+)@(?P<host>[^\s/:?#@]+)"), 60, _connection,
        cased=("://",)),
    _Rule("password", re.compile(
        r"(?i:\b(basic))\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"), 50,
        _basic_auth, ("basic",)),
    _Rule("bearer_token", re.compile(
        r"(?i:\b(bearer))\s+([A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9\-._~+/=])"), 50,
        _bearer, ("bearer",)),
    _Rule("password", re.compile(
        # Possessive identifier, keyword checked afterwards: linear on long identifier runs.
        r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]++)[\"']?"
        r"[ \t]*(?::=|=>|=|:)[ \t]*"
        r"(?:(?P<q>[\"'])(?P<qvalue>[^\"'\n]*)(?P=q)|(?P<value>(?!//)[^\s\"'`,;]+))"), 40,
        _password, ("pass", "pwd", "secret", "token", "key", "credential"),  # (_KEY_NAME)
        rescan=("qvalue", "value")),
    _Rule("webhook_url", re.compile(
        r"(?i)https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/]+/"
        r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/"
        r"|[\w.-]+\.webhook\.office\.com/[^\s]*?/IncomingWebhook/[A-Za-z0-9]+/"
        r"|open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/"
        r"|oapi\.dingtalk\.com/robot/send\?access_token="
        r"|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key="
        r"|calendar\.google\.com/calendar/ical/[^/\s]+/private-)"
        r"(?P<token>[A-Za-z0-9_\-]{16,})"), 85, _webhook,
        ("hooks.slack.com", "discord", ".webhook.office.com", "open.feishu.cn",
         "open.larksuite.com", "oapi.dingtalk.com", "qyapi.weixin.qq.com",
         "calendar.google.com")),
    _Rule("totp_seed", re.compile(
        r"(?i)otpauth://[th]otp/[^\s]*?[?&]secret=(?P<token>[A-Z2-7]{16,})"), 85, _webhook,
        ("otpauth://",)),
    *_provider_rules(),
    _Rule("password", _TOLD, 36, _told, _TOLD_TRIGGERS, cased=("AK", "SK", "PAT")),
    _Rule("password", _USED, 34, _used, (
        "use", "encrypted", "protected", "locked", "log", "sign", "creds", "credential",
        "account", "账号", "帐号", "帳號", "wifi:")),
    _Rule("password", _URL_PARAMETER, 45, _url_parameter, ("?", "&", ";"), needs="="),
    _Rule("password", _CLIENT_PASSWORD, 45, _client_password, ("mysql", "mariadb"),
          needs=" -"),
)  # fmt: skip


def _accepted_matches(rule: _Rule, text: str, folded: str
                      ) -> Iterator[tuple[re.Match[str], str | tuple[str, int, int]]]:
    """The matches of ``rule`` in ``text`` its check accepts, left to right, with their
    previews. Where the check refuses an assignment whose value holds one of the rule's
    triggers (``Login: password=…``: "Login" names no secret), the search goes on inside that
    value, which may be the assignment that does — for a value of at most
    :data:`MAX_RESCAN_CHARS`, so a text is never searched more than that many times over."""
    pos = 0
    search = _searcher(rule.pattern, text, folded)
    while (match := search(pos)) is not None:
        preview = rule.check(match)
        if preview is not None:
            yield match, preview
            pos = match.end()
            continue
        pos = match.end()
        for group in rule.rescan:
            start, end = match.span(group)
            if start > match.start() and end - start <= MAX_RESCAN_CHARS and any(
                    trigger in folded[start:end] for trigger in rule.triggers):
                pos = start
                break


def _searcher(pattern: re.Pattern[str], text: str, folded: str
              ) -> Callable[[int], re.Match[str] | None]:
    """``pattern.search`` over ``text`` from a position: tried only where a match can start
    when the pattern's opening literals are known (:mod:`consistency.secret_heads`; the same
    matches, without running the pattern at every character)."""
    heads = heads_of(pattern)
    if heads is None or not HeadSearch.usable(pattern, text, folded):
        return lambda pos: pattern.search(text, pos)
    return HeadSearch(pattern, heads, text, folded).search


class _Literals:
    """Finds which of many literals a text holds: the places where any begins (one pattern,
    its alternatives folded into a tree of their shared beginnings: a text is read once
    instead of once per literal at each place), then the literals read from the tree at each
    place. A 60-character name against the 93 triggers: about as long as one pattern of 93
    alternatives took to tell whether it holds any (10 µs), where asking each rule for its
    own literals took 20 more."""

    def __init__(self, literals: Iterable[str]) -> None:
        self.tree: dict[str, Any] = {}
        for literal in literals:
            node = self.tree
            for char in literal:
                node = node.setdefault(char, {})
            node[""] = literal
        self._starts = re.compile(f"(?={self._branch(self.tree)})" if self.tree else "(?!)")

    @classmethod
    def _branch(cls, node: dict[str, Any]) -> str:
        if "" in node:
            return ""  # a literal ends here: found (a longer one adds nothing)
        alternatives = [re.escape(char) + cls._branch(child)
                        for char, child in sorted(node.items())]
        return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"

    def found(self, text: str) -> set[str]:
        """Every literal ``text`` holds."""
        out: set[str] = set()
        for start in self._starts.finditer(text):
            node = self.tree
            for char in text[start.start():]:
                child: dict[str, Any] | None = node.get(char)
                if child is None:
                    break
                node = child
                if "" in node:
                    out.add(node[""])
        return out


#: Every literal a rule waits for (its ``triggers``, in the case-folded text; its ``cased``,
#: in the text as it is): a short text in which neither finds one is asked only of the
#: rules that wait for none (:func:`_rules_for`).
_TRIGGERS = _Literals({t for r in _RULES for t in r.triggers})
_CASED = _Literals({t for r in _RULES for t in r.cased})
_UNTRIGGERED = tuple(r for r in _RULES if not r.triggers and not r.cased)
#: Each literal a rule waits for, and the rules (their places in :data:`_RULES`) that do:
#: a short text's rules are found from the literals it holds (:func:`_rules_for`).
_RULES_BY_TRIGGER = {t: frozenset(i for i, r in enumerate(_RULES) if t in r.triggers)
                     for t in sorted({t for r in _RULES for t in r.triggers})}
_RULES_BY_CASED = {t: frozenset(i for i, r in enumerate(_RULES) if t in r.cased)
                   for t in sorted({t for r in _RULES for t in r.cased})}
_ALWAYS_ASKED = frozenset(i for i, r in enumerate(_RULES) if not r.triggers and not r.cased)
#: Texts up to this many characters are searched for the literals first (names and
#: descriptions: the literals found tell which rules to ask, at less than asking 79 rules;
#: 13,013 of the 20,000 names and descriptions of ``bench/dream_bench.py``'s memories hold
#: none). Longer ones ask each rule.
TRIGGER_SEARCH_CHARS = 400


def _rules_for(text: str, folded: str) -> Sequence[_Rule]:
    """The rules whose literals a short ``text`` (``folded``: case-folded) holds, in the
    order of :data:`_RULES`: every rule :meth:`_Rule.may_match` lets through (and some it
    would not, for want of its ``needs``: it is asked next)."""
    triggers, cased = _TRIGGERS.found(folded), _CASED.found(text)
    if not triggers and not cased:
        return _UNTRIGGERED  # (no rule waiting for a literal can match: none is there)
    asked = set(_ALWAYS_ASKED)
    for trigger in triggers:
        asked |= _RULES_BY_TRIGGER[trigger]
    for trigger in cased:
        asked |= _RULES_BY_CASED[trigger]
    return [_RULES[i] for i in sorted(asked)]


def _scan(text: str) -> list[SecretFinding]:
    """The findings of every rule in ``text``, overlaps included, best first."""
    candidates: list[tuple[int, int, int, SecretFinding]] = []
    folded = text.casefold()
    rules: Sequence[_Rule] = _RULES
    if len(text) <= TRIGGER_SEARCH_CHARS:
        rules = _rules_for(text, folded)
    for rule in rules:
        if not rule.may_match(text, folded):
            continue
        for match, checked in _accepted_matches(rule, text, folded):
            preview, start, end = checked if isinstance(checked, tuple) \
                else (checked, *match.span())
            finding = SecretFinding(rule.kind, start, end, preview)
            candidates.append((-rule.priority, -(end - start), start, finding))
    return [c[3] for c in sorted(candidates, key=lambda c: c[:3])]


#: Characters a reader never sees: zero-width spaces and joiners, word joiner, BOM, soft
#: hyphen, Mongolian vowel separator (Unicode category ``Cf`` is tested as well).
_INVISIBLE = frozenset("\u00ad\u180e\u200b\u200c\u200d\u2060\ufeff")
_KEPT_CONTROLS = frozenset("\n\r\t")
#: The characters :func:`normalised_view` removes (Unicode 14's ``Cc`` and ``Cf`` but newline,
#: carriage return and tab, listed with ``unicodedata``): a quick test before building it.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\U000110bd"
    "\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f]")


def normalised_view(text: str) -> tuple[str, list[int]]:
    """``text`` as it is stored and read -> ``(view, origin)``: control characters (other
    than newline, carriage return and tab) and invisible format characters removed, every
    other character NFKC-folded (full-width ``ＡＫＩＡ`` → ``AKIA``). ``origin[i]`` is the index
    in ``text`` of the character ``view[i]`` came from; ``len(origin) == len(view)``."""
    view: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char in _KEPT_CONTROLS or (char.isascii() and char.isprintable()):
            view.append(char)
            origin.append(index)
            continue
        if char in _INVISIBLE or unicodedata.category(char) in ("Cc", "Cf"):
            continue
        folded = unicodedata.normalize("NFKC", char)
        view.append(folded)
        origin.extend([index] * len(folded))
    return "".join(view), origin


def find_secrets(text: str) -> list[SecretFinding]:
    """Find credentials in ``text`` -> findings sorted by ``start``, never overlapping.

    Offsets are character indices into ``text`` (``text[f.start:f.end]`` is the matched
    credential or assignment). Where rules overlap, the more specific one wins (a provider key
    over the ``api_key=…`` around it, a JWT over ``Bearer``). The text is also searched as it
    is stored and read (:func:`normalised_view`: a control or zero-width character inside
    a key, or a full-width key, hides nothing); a finding there covers the raw characters it
    came from, the hidden ones included. Pure; never raises.
    """
    ordered = _scan(text)
    if _HIDDEN.search(text) is None and unicodedata.is_normalized("NFKC", text):
        return _disjoint(ordered)
    view, origin = normalised_view(text)
    if view != text:
        ordered += [SecretFinding(f.kind, origin[f.start], origin[f.end - 1] + 1, f.preview)
                    for f in _scan(view) if f.end > f.start]
    return _disjoint(ordered)


def _disjoint(ordered: list[SecretFinding]) -> list[SecretFinding]:
    """The findings (best first) that overlap no better one, sorted by ``start``."""
    accepted: list[SecretFinding] = []
    for finding in ordered:
        if all(finding.end <= f.start or finding.start >= f.end for f in accepted):
            accepted.append(finding)
    return sorted(accepted, key=lambda f: f.start)


#: What a credential is replaced by where dreamd copies text it did not write (a memory
#: written by hand into ``MEMORY.md`` or an assistant's context).
REDACTED = "[credential withheld]"


#: The answers :func:`redact_secrets` keeps inside :func:`redactions_kept` (``None``: none).
_KEPT: ContextVar[dict[str, str] | None] = ContextVar("redactions_kept", default=None)


@contextmanager
def redactions_kept() -> Iterator[None]:
    """Within the block (in this thread or task), :func:`redact_secrets` answers a text it
    was asked already from what it answered then; nothing is kept after the block. A dream
    asks it of each memory's name and description as it reads the file, again as it reads
    the files it wrote and as it builds ``MEMORY.md`` from those: 48,165 times over the
    planted 10,000 memories of ``bench/dream_bench.py``, about half of them repeats."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def redact_secrets(text: str) -> str:
    """``text`` with every credential :func:`find_secrets` finds replaced by
    :data:`REDACTED`: dreamd refuses to write a credential, and never copies one a user wrote
    by hand either. Pure; never raises."""
    kept = _KEPT.get()
    if kept is None:
        return _redacted(text)
    answer = kept.get(text)
    if answer is None:
        answer = kept[text] = _redacted(text)
    return answer


def _redacted(text: str) -> str:
    findings = find_secrets(text)
    if not findings:
        return text
    out: list[str] = []
    last = 0
    for finding in findings:
        out.extend((text[last:finding.start], REDACTED))
        last = finding.end
    out.append(text[last:])
    return "".join(out)


def refuse_secrets(text: str, *, where: str) -> None:
    """Raise :class:`config.errors.SecretRefusedError` if ``text`` contains a credential.

    ``where`` names the write (``"remember Memory/deploy.md"``). The message names each kind
    with its line and column and the redacted preview, never the secret, e.g.
    ``consistency: refuse remember Memory/deploy.md: credential in text (openai_api_key at
    line 3 col 9, sk-proj-…a1B2); remove it or keep it in a secret manager``.
    """
    findings = find_secrets(text)
    if not findings:
        return
    parts = []
    for f in findings:
        line = text.count("\n", 0, f.start) + 1
        col = f.start - (text.rfind("\n", 0, f.start) + 1) + 1
        parts.append(f"{f.kind} at line {line} col {col}, {f.preview}")
    noun = "credential" if len(findings) == 1 else f"{len(findings)} credentials"
    raise SecretRefusedError(
        f"consistency: refuse {where}: {noun} in text ({'; '.join(parts)}); "
        "remove it or keep it in a secret manager"
    )
