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
- ``jwt``: three base64url parts whose first decodes to a JSON object with ``"alg"``;
- ``private_key``: a ``-----BEGIN … PRIVATE KEY-----`` block with a key body;
- ``password``: ``key = value`` / ``key: value`` / ``"key": "value"`` where the key ends in
  ``password passwd pwd passphrase secret token api_key apikey access_key secret_key
  private_key client_secret credentials``;
- ``connection_string``: ``scheme://user:password@host`` for postgres, mysql, mariadb, mssql,
  mongodb(+srv), redis(s), amqp(s), http(s), ftp, smtp;
- ``password`` told in a sentence: ``my wifi password is …``, ``the password for X is …``,
  ``密码是 …`` / ``密码：…``, ``PIN is 4821`` (a value of two character classes, a PIN's 4–8
  digits), and the value of a secret-named parameter in a URL's query (``?api_key=…``);
- ``webhook_url``: Slack, Discord and Microsoft Teams incoming-webhook URLs (the URL is the
  credential).

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
  matched;
- connection strings whose password is a placeholder or equals the user name
  (``postgres:postgres@localhost``) are dev defaults, not secrets;
- UUIDs, git SHAs, ULIDs and base64 blobs match no rule (no pattern is a bare hex or base32 run).

Known misses: short or single-class passwords (``password: sunshine``, ``my password is
correcthorse``), passwords told without the word (``log in with hunter2``), provider keys without
a documented prefix, secrets split across lines.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from config.errors import SecretRefusedError

__all__ = [
    "MIN_PASSWORD_CHARS",
    "MIN_TOKEN_ENTROPY_BITS",
    "PLACEHOLDER_WORDS",
    "REDACTED",
    "SecretFinding",
    "SecretKind",
    "find_secrets",
    "redact_secrets",
    "refuse_secrets",
    "shannon_entropy_bits",
]

SecretKind = Literal[
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
    "twilio_api_key",
    "webhook_url",
]

#: Minimum Shannon entropy (bits/char) of a token behind a generic prefix (``sk-``, ``hf_``,
#: ``Bearer``). Measured on the test corpus: generated base62 keys ≥ 4.4, dashed English
#: placeholders such as ``sk-this-is-not-a-real-key`` ≤ 3.7.
MIN_TOKEN_ENTROPY_BITS = 3.8
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
    #: Receives the match; returns the preview, or ``None`` to reject the match.
    check: Callable[[re.Match[str]], str | None]


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


def _private_key(match: re.Match[str]) -> str | None:
    block = match.group(2) if match.group(2) is not None else match.group(3)  # END missing
    body = re.sub(r"^[A-Za-z-]+:.*$", "", block, flags=re.MULTILINE)  # PEM headers
    if len(re.findall(r"[A-Za-z0-9+/=]", body)) < 32 or _is_placeholder(body.strip()):
        return None
    return f"-----BEGIN {match.group(1)}PRIVATE KEY-----…"


def _password(match: re.Match[str]) -> str | None:
    key = match.group("key")
    if not _KEY_NAME.search(key):
        return None
    value = match.group("qvalue") if match.group("qvalue") is not None else match.group("value")
    if value is None or len(value) < MIN_PASSWORD_CHARS or _is_placeholder(value):
        return None
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


#: A password told in a sentence: "my wifi password is …", "密码是 …", "PIN: …" (the words
#: between the keyword and "is" name what it opens).
_PROSE_PASSWORD = re.compile(
    r"(?i)(?<![A-Za-z])(?P<kw>password|passwd|passcode|passphrase|pin)\b"
    r"(?:\s+(?:for|of|to|on)\s+[^\n.:=]{1,40}?)?\s+(?:is|was|=|:)\s+(?P<value>[^\s,;]+)"
    r"|(?P<zkw>密码|口令|PIN码|pin码|登录密码|开机密码)[^\n，。,；;:：=是为]{0,12}?"
    r"(?:是|为|：|:|=)\s*(?P<zvalue>[^\s，。,；;]+)")


def _prose_password(match: re.Match[str]) -> str | None:
    """A value after "password is" that is not prose: two character classes (a digit, a
    symbol, mixed case), or a PIN's digits; never a placeholder or a plain word."""
    value = (match.group("value") or match.group("zvalue") or "").rstrip(".!?。！？)）\"'")
    keyword = (match.group("kw") or match.group("zkw") or "").casefold()
    if _is_placeholder(value):
        return None
    if keyword in {"pin", "pin码"}:
        return "PIN …" if value.isdigit() and 4 <= len(value) <= 8 else None
    if len(value) < MIN_PASSWORD_CHARS or value.isdigit() or _char_classes(value) < 2:
        return None
    return f"{keyword} …"


def _webhook(match: re.Match[str]) -> str | None:
    """A webhook URL carries its own credential (anyone holding it can post)."""
    token = match.group("token")
    return None if _is_placeholder(token) else "webhook …" + _tail4(token)


_KEYWORDS = (
    r"password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?|(?<![A-Za-z])pass"
)

_KEY_NAME = re.compile(r"(?:" + _KEYWORDS + r")$", re.IGNORECASE)

_RULES: tuple[_Rule, ...] = (
    _Rule("private_key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----"
        r"(?:([\s\S]{0,12000}?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|((?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]+)+))"), 100,
        _private_key),
    _Rule("anthropic_api_key", re.compile(
        _LEAD + r"(sk-ant-(?:api|admin|sid)?\d*-?)([A-Za-z0-9_\-]{32,})" + _TAIL), 90,
        _prefixed(generic=True)),
    _Rule("openai_api_key", re.compile(
        _LEAD + r"(sk-(?:proj-|svcacct-|admin-)?)([A-Za-z0-9_\-]{20,})" + _TAIL), 80,
        _prefixed(generic=True)),
    _Rule("github_token", re.compile(
        _LEAD + r"(gh[pousr]_)([A-Za-z0-9]{36,255})" + _TAIL), 90, _prefixed()),
    _Rule("github_token", re.compile(
        _LEAD + r"(github_pat_)([A-Za-z0-9_]{50,255})" + _TAIL), 90, _prefixed()),
    _Rule("gitlab_token", re.compile(
        _LEAD + r"(glpat-)([A-Za-z0-9_\-]{20,})" + _TAIL), 90, _prefixed()),
    _Rule("slack_token", re.compile(
        _LEAD + r"(xox[abposr]-)(\d{6,}-[A-Za-z0-9\-]{10,})" + _TAIL), 90, _prefixed()),
    _Rule("stripe_key", re.compile(
        _LEAD + r"((?:sk|rk)_(?:live|test)_)([A-Za-z0-9]{16,})" + _TAIL), 90, _prefixed()),
    _Rule("aws_access_key_id", re.compile(
        r"(?<![A-Za-z0-9+/])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"), 90,
        _aws_key_id),
    _Rule("aws_secret_access_key", re.compile(
        r"(?i:(aws_?secret_?access_?key|aws_?secret_?key))[\"']?\s*[:=]\s*[\"']?"
        r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), 95, _aws_secret),
    _Rule("google_api_key", re.compile(
        _LEAD + r"(AIza)([0-9A-Za-z_\-]{35})" + _TAIL), 90, _prefixed()),
    _Rule("huggingface_token", re.compile(
        _LEAD + r"(hf_)([A-Za-z0-9]{30,})" + _TAIL), 90, _prefixed(generic=True)),
    _Rule("npm_token", re.compile(
        _LEAD + r"(npm_)([A-Za-z0-9]{36})" + _TAIL), 90, _prefixed()),
    _Rule("twilio_api_key", re.compile(
        r"(?<![A-Za-z0-9])(SK)([0-9a-fA-F]{32})(?![A-Za-z0-9])"), 90, _prefixed()),
    _Rule("sendgrid_api_key", re.compile(
        _LEAD + r"(SG\.)([A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})" + _TAIL), 90, _prefixed()),
    _Rule("jwt", re.compile(
        _LEAD + r"(eyJ[A-Za-z0-9_\-]{8,})\.([A-Za-z0-9_\-]{8,})\.([A-Za-z0-9_\-]{8,})"
        + _TAIL), 70, _jwt),
    _Rule("connection_string", re.compile(
        r"(?i)(?<![A-Za-z0-9+.])(?P<scheme>postgres(?:ql)?|mysql|mariadb|mssql|sqlserver"
        r"|mongodb(?:\+srv)?|rediss?|amqps?|https?|ftp|smtp)://"
        r"(?P<user>[^\s:/@]*):(?P<password>[^\s@/]+)@(?P<host>[^\s/:?#@]+)"), 60, _connection),
    _Rule("bearer_token", re.compile(
        r"(?i:\b(bearer))\s+([A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9\-._~+/=])"), 50,
        _bearer),
    _Rule("password", re.compile(
        # Possessive identifier, keyword checked afterwards: linear on long identifier runs.
        r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]++)[\"']?"
        r"[ \t]*(?::=|=>|=|:)[ \t]*"
        r"(?:(?P<q>[\"'])(?P<qvalue>[^\"'\n]*)(?P=q)|(?P<value>(?!//)[^\s\"'`,;]+))"), 40,
        _password),
    _Rule("password", _PROSE_PASSWORD, 35, _prose_password),
    _Rule("webhook_url", re.compile(
        r"(?i)https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/]+/"
        r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/"
        r"|[\w.-]+\.webhook\.office\.com/[^\s]*?/IncomingWebhook/[A-Za-z0-9]+/)"
        r"(?P<token>[A-Za-z0-9_\-]{16,})"), 85, _webhook),
)  # fmt: skip


def find_secrets(text: str) -> list[SecretFinding]:
    """Find credentials in ``text`` -> findings sorted by ``start``, never overlapping.

    Offsets are character indices into ``text`` (``text[f.start:f.end]`` is the matched
    credential or assignment). Where rules overlap, the more specific one wins (a provider key
    over the ``api_key=…`` around it, a JWT over ``Bearer``). Pure; never raises.
    """
    candidates: list[tuple[int, int, int, SecretFinding]] = []
    for rule in _RULES:
        for match in rule.pattern.finditer(text):
            preview = rule.check(match)
            if preview is not None:
                start, end = match.span()
                finding = SecretFinding(rule.kind, start, end, preview)
                candidates.append((-rule.priority, -(end - start), start, finding))
    accepted: list[SecretFinding] = []
    for *_, finding in sorted(candidates, key=lambda c: c[:3]):
        if all(finding.end <= f.start or finding.start >= f.end for f in accepted):
            accepted.append(finding)
    return sorted(accepted, key=lambda f: f.start)


#: What a credential is replaced by where dreamd copies text it did not write (a memory
#: written by hand into ``MEMORY.md`` or an assistant's context).
REDACTED = "[credential withheld]"


def redact_secrets(text: str) -> str:
    """``text`` with every credential :func:`find_secrets` finds replaced by
    :data:`REDACTED`: dreamd refuses to write a credential, and never copies one a user wrote
    by hand either. Pure; never raises."""
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
