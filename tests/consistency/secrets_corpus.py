"""Labelled corpus for the credential detector: generated fakes and look-alike negatives.

Every positive is synthetic: random characters from a seeded generator in the documented shape
of each provider's keys (no real key is pasted here; generating them also keeps push-protection
scanners quiet about this file). Every negative is text a memory plausibly contains that looks
like a credential to a naive scanner.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from dataclasses import dataclass

__all__ = ["NEGATIVES", "POSITIVES", "Negative", "Positive"]

_rng = random.Random(20261115)
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"


def _rand(n: int, alphabet: str = _ALNUM) -> str:
    # Ensure the fake has a digit and both cases, as real keys almost always do.
    while True:
        out = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet != _ALNUM or (
            any(c.isdigit() for c in out)
            and any(c.islower() for c in out)
            and any(c.isupper() for c in out)
        ):
            return out


def _b64url(obj: object) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _jwt() -> str:
    header = _b64url({"alg": "HS256", "typ": "JWT"})
    payload = _b64url({"sub": "1234567890", "name": "Ada", "iat": 1516239022})
    return f"{header}.{payload}.{_rand(43, _ALNUM + '-_')}"


def _pem(label: str) -> str:
    body = "\n".join(_rand(64, _ALNUM + "+/") for _ in range(4))
    return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----"


@dataclass(frozen=True)
class Positive:
    """A text holding one credential of ``kind``; ``label`` names the case."""

    label: str
    text: str
    kind: str


@dataclass(frozen=True)
class Negative:
    """A text that must yield no finding; ``label`` says what it imitates."""

    label: str
    text: str


_U = string.ascii_uppercase + string.digits

POSITIVES: tuple[Positive, ...] = (
    Positive("openai legacy", f"OPENAI_API_KEY=sk-{_rand(48)}", "openai_api_key"),
    Positive("openai project", f"key is sk-proj-{_rand(120, _ALNUM + '_-')}", "openai_api_key"),
    Positive("openai svcacct", f"use sk-svcacct-{_rand(60)} for CI", "openai_api_key"),
    Positive("openai in json", f'{{"api_key": "sk-{_rand(48)}"}}', "openai_api_key"),
    Positive(
        "anthropic",
        f"ANTHROPIC_API_KEY=sk-ant-api03-{_rand(93, _ALNUM + '_-')}AA",
        "anthropic_api_key",
    ),
    Positive("anthropic prose", f"My key: sk-ant-admin01-{_rand(80)}", "anthropic_api_key"),
    Positive("github classic", f"token ghp_{_rand(36)} works", "github_token"),
    Positive("github oauth", f"gho_{_rand(36)}", "github_token"),
    Positive("github app", f"GH_TOKEN: ghs_{_rand(36)}", "github_token"),
    Positive("github fine-grained", f"github_pat_{_rand(22)}_{_rand(59)}", "github_token"),
    Positive("gitlab", f"glpat-{_rand(20, _ALNUM + '-_')}", "gitlab_token"),
    Positive(
        "slack bot",
        f"xoxb-{_rand(12, string.digits)}-{_rand(13, string.digits)}-{_rand(24)}",
        "slack_token",
    ),
    Positive(
        "slack user",
        f"SLACK=xoxp-{_rand(11, string.digits)}-{_rand(12, string.digits)}-{_rand(32)}",
        "slack_token",
    ),
    Positive("stripe live", f"stripe: sk_live_{_rand(24)}", "stripe_key"),
    Positive("stripe restricted", f"rk_live_{_rand(99)}", "stripe_key"),
    Positive("stripe test", f"STRIPE_SECRET_KEY=sk_test_{_rand(24)}", "stripe_key"),
    Positive("aws key id", f"AKIA{_rand(16, _U)}", "aws_access_key_id"),
    Positive("aws session key id", f"aws_access_key_id = ASIA{_rand(16, _U)}", "aws_access_key_id"),
    Positive(
        "aws secret", f"aws_secret_access_key = {_rand(40, _ALNUM + '/+')}", "aws_secret_access_key"
    ),
    Positive(
        "aws secret yaml",
        f'AWS_SECRET_ACCESS_KEY: "{_rand(40, _ALNUM + "/+")}"',
        "aws_secret_access_key",
    ),
    Positive("google", f"maps key AIza{_rand(35, _ALNUM + '_-')}", "google_api_key"),
    Positive("huggingface", f"HF_TOKEN=hf_{_rand(34)}", "huggingface_token"),
    Positive("npm", f"//registry.npmjs.org/:_authToken=npm_{_rand(36)}", "npm_token"),
    Positive("twilio api key", f"twilio SK{_rand(32, _HEX)}", "twilio_api_key"),
    Positive(
        "sendgrid",
        f"SENDGRID_API_KEY=SG.{_rand(22, _ALNUM + '-_')}.{_rand(43, _ALNUM + '-_')}",
        "sendgrid_api_key",
    ),
    Positive("bearer header", f"Authorization: Bearer {_rand(40)}", "bearer_token"),
    Positive(
        "bearer curl",
        f"curl -H 'Authorization: bearer {_rand(32, _ALNUM + '-._')}' https://x",
        "bearer_token",
    ),
    Positive("jwt bare", f"session cookie {_jwt()}", "jwt"),
    Positive("jwt in bearer", f"Authorization: Bearer {_jwt()}", "jwt"),
    Positive("pem rsa", _pem("RSA "), "private_key"),
    Positive("pem pkcs8", "deploy key:\n" + _pem(""), "private_key"),
    Positive("pem openssh", _pem("OPENSSH "), "private_key"),
    Positive("pem ec truncated", "-----BEGIN EC PRIVATE KEY-----\n" + _rand(64), "private_key"),
    Positive("password env", "DB_PASSWORD=Tr0ub4dor&3x", "password"),
    Positive("password yaml", "password: correct-horse-battery-staple", "password"),
    Positive("password json", '{"user": "ada", "password": "s3cr3t!Pa55"}', "password"),
    Positive("passwd", "passwd=Qz8#mLp2vR", "password"),
    Positive("client secret", "client_secret: 7fG2kLq9XzP4wR8t", "password"),
    Positive("secret token", "webhook_token = whk9Xr2LmQ7pZ", "password"),
    Positive("api key generic", "api_key: Zx81mQw2Lp9Rt7Kv", "password"),
    Positive(
        "postgres",
        "DATABASE_URL=postgres://app:Wq9rZ2xLp@db.internal:5432/app",
        "connection_string",
    ),
    Positive("postgresql", "postgresql://admin:N7m!kQ2z@10.0.0.5/prod", "connection_string"),
    Positive("mysql", "mysql://root:hT4vB9qL@localhost:3306/shop", "connection_string"),
    Positive(
        "mongodb srv",
        "mongodb+srv://svc:Pz7Lq2Wm9x@cluster0.ab1cd.mongodb.net/",
        "connection_string",
    ),
    Positive("redis no user", "redis://:Rk82mZpQ4w@cache:6379/0", "connection_string"),
    Positive("amqp", "amqp://bunny:Cx7Qw2Lp@mq.local:5672/", "connection_string"),
    Positive(
        "https basic", "https://deploy:gH7kL2qW9z@git.example.org/repo.git", "connection_string"
    ),
    # told in a sentence, English and Chinese (DESIGN.md: a memory is prose)
    Positive("prose password", f"My wifi password is {_rand(10)}", "password"),
    Positive("prose password for", f"The password for the NAS admin is {_rand(12)}.",
             "password"),
    Positive("prose passphrase", f"passphrase: {_rand(6)}-{_rand(6)}", "password"),
    Positive("chinese password", f"我的邮箱密码是 {_rand(10)}", "password"),
    Positive("chinese password colon", f"服务器 root 密码：{_rand(9)}#", "password"),
    Positive("prose pin", "The bank card PIN is 4821.", "password"),
    # a weak password told is still a password: refused (it was a documented miss)
    Positive("single class after a colon", "password: sunshine", "password"),
    Positive("pass pair", f"db: user=app pass={_rand(11)} host=db.internal", "password"),
    Positive("query api key", f"GET https://api.acme.io/v2/items?api_key={_rand(32, _HEX)}&n=5",
             "password"),
    Positive("slack webhook",
             f"Alerts go to https://hooks.slack.com/services/T{_rand(8, _U)}/B{_rand(8, _U)}/"
             f"{_rand(24)}", "webhook_url"),
    Positive("discord webhook",
             f"https://discord.com/api/webhooks/{_rand(18, '0123456789')}/{_rand(68)}",
             "webhook_url"),
)

NEGATIVES: tuple[Negative, ...] = (
    Negative("openai placeholder dots", "Set OPENAI_API_KEY=sk-... in your shell."),
    Negative("openai placeholder angle", "api_key: <your-key>"),
    Negative("openai placeholder x", "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    Negative("sk in word", "Our task-management-and-planning-tool-v2 is great."),
    Negative("sk dashed phrase", "sk-this-is-not-a-real-key-just-docs"),
    Negative("env reference", "token: ${API_TOKEN}"),
    Negative("shell variable", "password=$DB_PASSWORD"),
    Negative("template", "secret: {{ secrets.DEPLOY_KEY }}"),
    Negative("windows env", "api_key=%API_KEY%"),
    Negative("python environ", 'password = os.environ["DB_PASSWORD"]'),
    Negative("function call", "token = get_token(user)"),
    Negative("empty password", "password=\nuser=ada"),
    Negative("stars", "password: ********"),
    Negative("changeme", "password: changeme"),
    Negative("redacted", "api_key: [REDACTED]"),
    Negative("boolean", "secret: false"),
    Negative("number", "max_token: 4000"),
    Negative("password policy", "The password policy requires 12 characters."),
    Negative("password prose colon", "Password: see the team vault"),
    Negative("token bucket", "Rate limiting uses a token bucket: 100 tokens per second."),
    Negative("skeleton key", "The skeleton key opens every door."),
    Negative("max tokens", "max_tokens: 4096"),
    Negative("tokenizer", "tokenizer: icu"),
    Negative("uuid", f"id: {uuid.UUID(int=_rng.getrandbits(128))}"),
    Negative("git sha", f"fixed in commit {_rand(40, _HEX)}"),
    Negative("ulid", "id: 01JCW3Q4Z8X2M5N7P9R1S3T5V7"),
    Negative(
        "base64 image",
        "![x](data:image/png;base64,"
        + base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(300))).decode()
        + ")",
    ),
    Negative("aws docs example id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    Negative(
        "aws docs example secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    Negative("stripe publishable", f"pk_live_{_rand(24)}"),
    Negative(
        "pem public key",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----",
    ),
    Negative(
        "pem header only", "Keys start with -----BEGIN RSA PRIVATE KEY----- and end with END."
    ),
    Negative("pem placeholder", "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----"),
    Negative("url without password", "postgres://app@db.internal:5432/app"),
    Negative("url placeholder", "postgres://user:password@localhost/db"),
    Negative("url dev default", "postgres://postgres:postgres@localhost:5432/postgres"),
    Negative("url angle placeholder", "mysql://root:<password>@localhost/shop"),
    Negative("url env placeholder", "redis://:${REDIS_PASSWORD}@cache:6379"),
    Negative("bearer prose", "Bearer tokens are sent in the Authorization header."),
    Negative("bearer placeholder", "Authorization: Bearer <token>"),
    Negative("bearer env", "Authorization: Bearer $TOKEN"),
    Negative("jwt-like not jwt", "version eyJhbGciOiJIUzI1.notbase64json.signature1234"),
    Negative("hf identifier", "model = self.hf_model_name_or_path"),
    Negative("npm config", "npm_config_registry=https://registry.npmjs.org/"),
    Negative("slack placeholder", "SLACK_BOT_TOKEN=xoxb-your-token-here"),
    Negative("github placeholder", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    Negative("chinese prose", "密码策略要求至少 12 个字符，token 桶限流每秒 100 个。"),
    Negative("password where", "The Wi-Fi password is on the fridge."),
    Negative("password stored", "The password is stored in 1Password."),
    Negative("password for where", "The password for the staging VPN is in the team vault."),
    Negative("password rule", "Passwords must be rotated every 90 days."),
    Negative("password length", "password is 8 characters or more"),
    Negative("chinese password question", "密码是什么我忘了，明天问管理员。"),
    Negative("pin length", "The PIN is 4 digits long."),
    Negative("pass word inside", "bypass=1, compass: north"),
    Negative("pass placeholder", "my pass: changeme"),
    Negative("query without secret", "Open https://shop.example.org/list?page=2&sort=desc"),
    Negative("slack webhook docs", "https://hooks.slack.com/services/T00000000/B00000000/"
             "XXXXXXXXXXXXXXXXXXXXXXXX"),
    Negative("commit url", f"See https://github.com/org/repo/commit/{_rand(40, _HEX)}"),
    Negative("sha256 hash", f"content_hash: {_rand(64, _HEX)}"),
)
