"""The credential shapes :mod:`consistency.secrets` looks for, kept as data.

:data:`PROVIDER_TOKENS` lists keys and tokens whose provider gives them a fixed prefix or
shape, so that the token alone is evidence. The formats come from each provider's token
documentation as collected in gitleaks' rule set (``config/gitleaks.toml``, gitleaks v8) and
detect-secrets' plugins; a body is described loosely (its length range and alphabet), never
with a checksum. Each entry is ``(provider, prefix pattern, body pattern)``; the prefix is
kept in the redacted preview, the body is not.

:data:`KEYWORDS_*` are the words people use before a secret in a sentence, in English, a few
other European languages and Chinese ("the wifi password is …", "银行卡密码 719962"), by
what kind of value follows them (:class:`ValueKind`).
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "COMMON_VALUE_WORDS",
    "KEYWORDS_CODE",
    "KEYWORDS_KEY",
    "KEYWORDS_PASSWORD",
    "KEYWORDS_RECOVERY",
    "KEYWORDS_TOTP",
    "PHRASE_TALK_WORDS",
    "PROVIDER_TOKENS",
    "URL_SECRET_PARAMETERS",
    "ValueKind",
]

#: What a keyword says about the value after it: ``password`` (a password, a passphrase, a
#: PIN written as a password), ``code`` (a door, alarm or card code: digits), ``key`` (a key
#: or token: long and random), ``totp`` (a base32 one-time-password seed), ``recovery``
#: (recovery or backup codes).
ValueKind = Literal["password", "code", "key", "totp", "recovery"]

# ``(provider, prefix, body)``: regular-expression fragments without groups.
PROVIDER_TOKENS: tuple[tuple[str, str, str], ...] = (
    ("gitlab", r"gl(?:pat|rt|dt|ptt|soat|cbt|imt|ft|agent|oas|ffct)-", r"[A-Za-z0-9_\-]{20,}"),
    ("slack", r"xapp-\d-", r"[A-Z0-9]{8,}-\d{6,}-[a-f0-9]{32,}"),
    ("slack", r"xoxe(?:\.xox[bp])?-\d-", r"[A-Za-z0-9]{100,}"),
    ("discord", r"[MNO]", r"[A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}"),
    ("stripe", r"whsec_", r"[A-Za-z0-9]{24,}"),
    ("google", r"GOCSPX-", r"[A-Za-z0-9_\-]{24,}"),
    ("google", r"1//0", r"[A-Za-z0-9_\-]{40,}"),
    ("google", r"ya29\.", r"[A-Za-z0-9_\-]{30,}"),
    ("mailgun", r"key-", r"[0-9a-f]{32}"),
    ("mailchimp", r"", r"[0-9a-f]{32}-us\d{1,2}"),
    ("pypi", r"pypi-AgE", r"[A-Za-z0-9_\-]{50,}"),
    ("shopify", r"shp(?:at|ss|ca|pa)_", r"[a-fA-F0-9]{32}"),
    ("telegram", r"", r"\d{8,10}:AA[A-Za-z0-9_\-]{32,33}"),
    ("heroku", r"HRKU-", r"[A-Za-z0-9_\-]{40,}"),
    ("square", r"EAAA", r"[A-Za-z0-9_\-]{56,}"),
    ("square", r"sq0(?:csp|atp)-", r"[A-Za-z0-9_\-]{22,43}"),
    ("linear", r"lin_(?:api|oauth)_", r"[A-Za-z0-9]{40}"),
    ("postman", r"PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    ("groq", r"gsk_", r"[A-Za-z0-9]{48,}"),
    ("replicate", r"r8_", r"[A-Za-z0-9]{37,40}"),
    ("airtable", r"pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("newrelic", r"NR(?:AK|II|JS|AA)-", r"[A-Za-z0-9]{27,}"),
    ("grafana", r"glsa_", r"[A-Za-z0-9]{32}_[a-f0-9]{8}"),
    ("grafana", r"glc_", r"[A-Za-z0-9+/]{32,}={0,2}"),
    ("supabase", r"sbp_", r"[a-f0-9]{40}"),
    ("databricks", r"dapi", r"[a-f0-9]{32}(?:-\d)?"),
    ("tailscale", r"tskey-(?:auth|api|client|scim|webhook)-", r"[A-Za-z0-9_\-]{16,}"),
    ("hashicorp_vault", r"hv[sbr]\.", r"[A-Za-z0-9_\-]{24,}"),
    ("doppler", r"dp\.(?:st|sa|ct|pt|scim|audit)\.", r"[A-Za-z0-9_.\-]{30,}"),
    ("atlassian", r"ATATT3", r"[A-Za-z0-9_\-=]{100,}"),
    ("age", r"AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}"),
    ("mapbox", r"sk\.eyJ", r"[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("sentry", r"sntry[su]_", r"[A-Za-z0-9+/=_\-]{50,}"),
    ("figma", r"figd_", r"[A-Za-z0-9_\-]{40,}"),
    ("pulumi", r"pul-", r"[a-f0-9]{40}"),
    ("netlify", r"nf[pc]_", r"[A-Za-z0-9]{36,}"),
    ("docker", r"dckr_(?:pat|oat)_", r"[A-Za-z0-9_\-]{27,}"),
    ("digitalocean", r"do[opr]_v1_", r"[a-f0-9]{64}"),
    ("alibaba_cloud", r"LTAI", r"[A-Za-z0-9]{12,24}"),
    ("tencent_cloud", r"AKID", r"[A-Za-z0-9]{32,40}"),
    ("deepseek_or_openai", r"sk-", r"[a-f0-9]{32,64}"),
    ("flyio", r"fo1_", r"[A-Za-z0-9_\-]{40,}"),
    ("frameio", r"fio-u-", r"[A-Za-z0-9_\-=]{64,}"),
    ("planetscale", r"pscale_(?:tkn|oauth|pw)_", r"[A-Za-z0-9_\-.=]{32,}"),
    ("prefect", r"pnu_", r"[A-Za-z0-9]{36}"),
    ("readme", r"rdme_", r"[a-z0-9]{70}"),
    ("rubygems", r"rubygems_", r"[a-f0-9]{48}"),
    ("clojars", r"CLOJARS_", r"[a-z0-9]{60}"),
    ("shippo", r"shippo_(?:live|test)_", r"[a-f0-9]{40}"),
    ("dynatrace", r"dt0c01\.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    ("easypost", r"EZ[AT]K", r"[A-Za-z0-9]{54}"),
    ("huggingface", r"api_org_", r"[A-Za-z0-9]{34}"),
    ("notion", r"(?:secret|ntn)_", r"[A-Za-z0-9]{43,46}"),
    ("vercel", r"vercel_", r"[A-Za-z0-9]{24,}"),
)

# Keywords (regular-expression alternations, case-insensitive, longest first where one is
# the start of another).
KEYWORDS_PASSWORD = (
    r"master\s+password|root\s+password|admin\s+password|password|passwort|kennwort"
    r"|passwd|passphrase|pass\s?word|p[@4]ssw[o0]rd|mot\s+de\s+passe|contrase[ñn]a|senha"
    r"|pwd|pw|pass|psk|pre-?shared\s+key|wi-?fi\s+key|network\s+key|wpa2?\s+key|wep\s+key"
    r"|wachtwoord|has[łl]o|пароль|passord|l[öo]senord|salasana|heslo|jelsz[óo]|[şs]ifre"
    r"|密码|口令|授权码|登录码|密碼|授權碼|登錄碼|登入碼|パスワード|비밀번호"
)
KEYWORDS_CODE = (
    r"(?:door|gate|alarm|disarm|keypad|garage|safe|lock|locker|entry|building|unlock|access"
    r"|security|alarm\s+disarm)\s+code|keypad|passcode|pin(?:\s+code)?|puk|门禁码"
)
KEYWORDS_KEY = (
    r"(?:secret|private|access|api|app|auth|master|account|client|signing|encryption"
    r"|license|service|admin|personal\s+access|deploy|webhook|bot|refresh|session)"
    r"[\s_\-]?(?:key|secret|token)s?(?:\s+(?:id|secret))?"
    r"|secret\s+access\s+key|access\s*key\s*(?:id|secret)?|secret\s*key|app\s*secret"
    r"|api\s+token|auth\s+token|access\s+token|bearer\s+token|token|secret|credentials?"
    r"|creds|PAT|AK|SK|私钥|密钥|秘钥|令牌|访问令牌|私人令牌|私鑰|密鑰|秘鑰|金鑰|存取權杖|權杖"
)
KEYWORDS_TOTP = (
    r"(?:2fa|two-factor|mfa|totp|otp|authenticator)\s+(?:secret|seed|key|backup\s+key"
    r"|setup\s+key)|setup\s+key|totp|两步验证密钥|二次验证密钥|验证器的密钥|谷歌验证器密钥"
)
KEYWORDS_RECOVERY = (
    r"recovery\s+codes?|backup\s+codes?|recovery\s+key|恢复码|备用验证码|备用码|救援码"
)

#: Query parameters that carry a credential in a URL, by what their value must look like.
URL_SECRET_PARAMETERS: dict[str, ValueKind] = {
    **dict.fromkeys(("password", "passwd", "pwd", "pass"), "password"),
    **dict.fromkeys(("token", "access_token", "auth_token", "api_key", "apikey", "api-key",
                     "key", "appid", "app_key", "appkey", "secret", "client_secret", "sig",
                     "signature", "private_token", "session", "sessionid", "auth"), "key"),
}

#: Words that follow "password is" / "password:" in talk about a password, not one (compared
#: casefolded): "my password is required", "the PIN is the same".
COMMON_VALUE_WORDS = frozenset({
    "a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "this", "that", "it",
    "is", "are", "was", "not", "too", "very", "still", "now", "also", "just", "only", "same",
    "different", "required", "needed", "necessary", "mandatory", "optional", "wrong",
    "incorrect", "correct", "right", "invalid", "valid", "expired", "expiring", "expires",
    "changed", "change", "reset", "updated", "rotated", "renewed", "revoked", "strong",
    "weak", "long", "short", "empty", "blank", "missing", "hidden", "saved", "stored",
    "encrypted", "hashed", "secure", "insecure", "safe", "unsafe", "set", "unset", "ready",
    "generated", "shared", "unknown", "forgotten", "lost", "locked", "unlocked", "disabled",
    "enabled", "managed", "protected", "sensitive", "complex", "simple", "random", "unique",
    "new", "old", "current", "previous", "temporary", "default", "manager", "policy",
    "requirements", "complexity", "length", "characters", "digits", "letters", "symbols",
    "case-sensitive", "written", "somewhere", "everywhere", "elsewhere", "there", "here",
    "below", "above", "attached", "inside", "printed", "taped", "in", "on", "at", "for",
    "from", "with", "without", "by", "under", "behind", "near", "and", "or", "but", "so",
    "then", "when", "if", "because", "yesterday", "today", "tomorrow", "weekly", "monthly",
    "yearly", "annually", "sometimes", "always", "never", "usually", "again", "twice",
    "once", "rotation", "reminder", "generator", "vault", "bitwarden", "1password", "keychain",
    "lastpass", "keepass", "dashlane", "protection", "field", "prompt", "screen", "page",
    "form", "login", "logins", "hint", "hints", "question", "questions", "recovery",
})

#: Words that make plain words after "password is" a sentence about the password, not a
#: passphrase ("my password is *the* same *as* before", "the password is four random
#: *words*"), compared casefolded, beside :data:`COMMON_VALUE_WORDS`: the little words of a
#: sentence (a passphrase of random words has none: "correct horse battery staple"), words
#: of time and of quantity, and the words that describe a password's form or source. Listed
#: from the look-alikes of ``tests/consistency/test_secrets_passphrase.py``.
PHRASE_TALK_WORDS = frozenset({
    "i", "me", "you", "he", "she", "we", "they", "him", "us", "them", "mine", "yours",
    "be", "been", "being", "am", "has", "have", "had", "do", "does", "did", "done", "will",
    "would", "can", "could", "should", "must", "may", "might", "shall", "of", "to", "into",
    "onto", "as", "than", "like", "via", "per", "about", "after", "before", "during",
    "until", "since", "over", "through", "across", "against", "between", "among", "off",
    "out", "up", "down", "no", "nor", "yes", "all", "any", "some", "each", "every", "both",
    "either", "neither", "none", "nobody", "nothing", "something", "anything", "everything",
    "someone", "anyone", "everyone", "what", "which", "who", "whom", "whose", "where", "why",
    "how", "whatever", "these", "those", "such", "own", "other", "another", "more", "most",
    "less", "least", "much", "many", "few", "several", "enough", "quite", "rather", "pretty",
    "really", "super", "way", "so", "too", "even", "ever", "already", "yet", "anymore",
    "longer", "currently", "soon", "later", "ago", "next", "last", "week", "weeks", "day",
    "days", "month", "months", "year", "years", "quarter", "hour", "hours", "minute",
    "minutes", "tonight", "morning", "evening", "night", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "ones", "word", "words", "letter",
    "lowercase", "uppercase", "character", "char", "chars", "digit", "number", "numbers",
    "numeral", "symbol", "phrase", "phrases",
    "sentence", "name", "names", "birthday", "birthdate", "date", "email", "phone", "mix",
    "combination", "backwards", "reversed", "known", "obvious", "visible", "easy", "hard",
    "difficult", "impossible", "possible", "guess", "remember", "forget", "type", "typing",
    "working", "works", "expire", "expiring", "using", "used", "use", "found", "posted",
    "kept", "sent", "given", "told", "asked", "written", "printed", "offline", "online",
    "paper", "anywhere", "nowhere", "only", "usually", "often", "rarely", "mostly",
    "generally", "typically", "probably", "maybe", "perhaps", "definitely", "clearly",
    "admin", "root", "user", "guest", "password", "passwords", "passphrase", "pin", "code",
    "login", "account", "team", "comic", "xkcd", "sticky", "note", "notes", "fridge", "desk",
    "router", "keyboard", "safe", "drawer", "wallet", "chrome", "firefox", "safari",
})
