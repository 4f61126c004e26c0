"""A synthetic set of memory files with planted duplicates, contradictions and look-alikes.

usage: python bench/memory_set.py OUT_DIR [--count 10000] [--seed 7]
       python bench/memory_set.py OUT_DIR --check      (after a dream: how did it do?)

Writes ``--count`` memory files in dreamd's format (``ccb.memory_file.render_memory``) into
``OUT_DIR/Memory/`` and the right answers into ``OUT_DIR/truth.json``, then prints the counts.
Same seed, count and ``now`` → byte-identical files. For ``--count 10000`` the mix is:

- **300 exact-duplicate pairs** (kind ``exact``): same type and subject, bodies equal up to
  normalisation (case, extra spaces, a trailing period, ``**bold**`` markers); names may differ.
- **300 near-duplicate pairs** (``near``): same type and subject, the same fact restated (a
  sentence reordered, a word such as "really", "always" or "please" added, a clause added) —
  never a changed number, a negation or a different value word.
- **300 contradiction pairs** (``contradiction``): same type and subject, a third each with a
  changed number (``30s`` → ``60s``), a negation either way round (``use mocks`` ↔ ``never use
  mocks``) or a changed value word (``dark mode`` → ``light mode``).
- **300 look-alike pairs** (``lookalike``): similar wording but a different fact: a different
  subject (``Prefers dark mode in the editor`` / ``editor.theme`` against ``... in the
  terminal`` / ``terminal.theme``), or — one pair in four — the same subject and wording but a
  different type (plus a line of its own, so the bodies never hash alike).
- the rest (7,600) **background** memories, each with its own subject, from about fifty
  templates of developer preferences, rules, project facts and reference pointers filled from
  word lists; about 5% in Chinese.

Other counts scale the pairs (3% of ``count`` per kind); the word lists give distinct
subjects for up to about 20,000 memories. Every memory has a ``subject`` and
``source: user``; ``created``/``updated`` fall in the 200 days before ``now``, and in a pair
the newer member is created and updated after the older one. No two memories outside an
exact pair share a normalised body, and no subject is used outside its pair.

The right answer per kind: ``exact``/``near`` → merged into one live memory; ``contradiction``
→ the older one superseded, both files kept; ``lookalike`` and background → live and untouched.
:func:`check_outcome` counts how far a vault is from that. The word lists are chosen so that
``consistency.duplicates.decide`` (no embeddings) gives exactly these answers pair by pair
(``tests/bench/test_memory_set.py`` checks it): values differ in their first word, no value
word reappears elsewhere in a memory, no name or reason line holds a number or a negation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import string
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ulid import ULID  # noqa: E402

from ccb.memory_file import (  # noqa: E402
    MAX_SLUG_BYTES,
    NewMemory,
    content_hash_normalised,
    memory_path,
    render_memory,
    slugify,
)
from ccb.model import MEMORY_TYPES, MemoryType  # noqa: E402
from ccb.parse import parse_note  # noqa: E402

__all__ = ["MemorySet", "Planted", "check_outcome", "generate", "load_truth", "write_truth"]

Kind = Literal["exact", "near", "contradiction", "lookalike"]
KINDS: tuple[Kind, ...] = ("exact", "near", "contradiction", "lookalike")
DEFAULT_NOW = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
WINDOW = dt.timedelta(days=200)
PAIR_SHARE = 0.03  # pairs per kind, as a share of ``count`` (300 of 10,000)
CHINESE_SHARE = 0.05
NOT_LIVE = frozenset({"archived", "superseded", "merged"})


@dataclass(frozen=True)
class Planted:
    """One planted pair: ``kind`` and its two vault-relative paths, oldest first."""

    kind: Kind
    paths: tuple[str, ...]


@dataclass(frozen=True)
class MemorySet:
    """A generated vault: ``root`` (the vault folder), the memory folder inside it, every
    memory's vault-relative path (sorted) and the planted pairs. Paths not in a pair are
    background memories."""

    root: Path
    memory_folder: str
    paths: tuple[str, ...]
    planted: tuple[Planted, ...]


# --------------------------------------------------------------------------- word lists
# Each slot value is ``(text, key)``: the text goes into sentences, the key into subjects.


def _key(text: str) -> str:
    text = re.sub(r"^the ", "", text.lower())
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def _words(spec: str) -> tuple[tuple[str, str], ...]:
    """``"a|the b c"`` → ``(("a", "a"), ("the b c", "b_c"))``; ``"text=key"`` sets the key."""
    out = []
    for item in spec.split("|"):
        text, _, key = item.strip().partition("=")
        out.append((text, key or _key(text)))
    return tuple(out)


VOCAB: dict[str, tuple[tuple[str, str], ...]] = {
    "service": _words(
        "payments|billing|checkout|search|auth|notifications|ledger|inventory|shipping|"
        "reporting|gateway|ingest|scheduler|media|profile|recommendations|pricing|fraud|email|"
        "sms|webhooks|analytics|exports|imports|catalog|orders|cart|identity|audit|metrics|"
        "feature-flags|geo|tax|invoicing|support|chat|uploads|thumbnails|sessions|rate-limiter|"
        "refunds|subscriptions|coupons|loyalty|reviews|wishlist|returns|warehouse|dispatch|"
        "routing|tracking|onboarding|kyc|payouts|disputes|ads|experiments|translations|consent|"
        "search-indexer"
    ),
    "dep": _words(
        "Stripe|Adyen|the Postgres primary|the read replica|Redis|Memcached|the blob store|GCS|"
        "Kafka|RabbitMQ|SQS|Elasticsearch|OpenSearch|the auth service|SendGrid|Twilio|Mailgun|"
        "the tax API|BigQuery|Snowflake|the geocoder|the CDN|DynamoDB|the ML scoring API|"
        "the carrier API|Salesforce|Zendesk|HubSpot|the warehouse API|the fraud model|"
        "the exchange-rate API|the address validator|Segment|Mixpanel|the search cluster|"
        "ClickHouse|the ledger API|the pricing engine|the identity provider|the bank API"
    ),
    "repo": _words(
        "web-app|mobile-ios|mobile-android|infra|data-pipeline|design-system|docs-site|cli|"
        "sdk-python|sdk-js|sdk-go|terraform-modules|helm-charts|admin-panel|marketing-site|"
        "ml-platform|etl-jobs|api-gateway|monorepo|backend|frontend|acceptance-tests|load-tests|"
        "dotfiles|blog|internal-tools|billing-ui|checkout-web|search-ui|notebooks|protobufs|"
        "shared-libs|ci-templates|desktop-app|browser-extension|chatbot|kiosk-app|"
        "partner-portal|status-page|feature-store|event-schemas|ops-scripts|style-guide|"
        "fixture-server|qa-fixtures|watch-app|tv-app|game-client|pricing-lab|release-tools"
    ),
    "task": _words(
        "package management=packages|formatting|linting|unit tests=unit_tests|type checking|"
        "database migrations=migrations|HTTP calls=http|logging|timestamps=dates|builds|"
        "containers|end-to-end tests=e2e|task running=tasks|config loading=config|"
        "state management=state"
    ),
    "tools_packages": _words("pnpm|npm|yarn|bun|uv|poetry|pip-tools"),
    "tools_formatting": _words("prettier|biome|black|ruff format|gofmt|rustfmt"),
    "tools_linting": _words("eslint|ruff|golangci-lint|clippy|pylint|pycodestyle"),
    "tools_unit_tests": _words("pytest|vitest|jest|gotestsum|mocha|unittest"),
    "tools_type_checking": _words("mypy|pyright|tsc|pytype"),
    "tools_migrations": _words("alembic|prisma migrate|flyway|goose|liquibase"),
    "tools_http": _words("httpx|requests|aiohttp|fetch|axios|ky"),
    "tools_logging": _words("structlog|loguru|pino|winston|zap"),
    "tools_dates": _words("date-fns|dayjs|pendulum|arrow|luxon"),
    "tools_builds": _words("vite|webpack|esbuild|bazel|turbo|make"),
    "tools_containers": _words("docker|podman|buildah"),
    "tools_e2e": _words("playwright|cypress|selenium"),
    "tools_tasks": _words("make|invoke|nox|tox|taskfile"),
    "tools_config": _words("pydantic-settings|dynaconf|dotenv|viper"),
    "tools_state": _words("redux|zustand|mobx|jotai"),
    "double": _words("mocks|fakes|a real instance=real|recorded responses=recorded"),
    "cmd": _words("make check|tox|nox|pnpm lint|cargo clippy|npm test|go vet|ruff check"),
    "style": _words("Conventional Commits|gitmoji|imperative mood|ticket prefixes"),
    "strategy": _words("squash merges|rebase merges|fast-forward merges"),
    "lib": _words(
        "react|django|fastapi|pydantic|sqlalchemy|numpy|pandas|typescript|next.js|vue|"
        "angular|spring-boot|rails|express|celery|boto3|grpcio|protobuf|tensorflow|torch|"
        "openssl|terraform|helm|psycopg|redis-py|lodash|axios|webpack|jest|kotlinx.coroutines"
    ),
    "area": _words(
        "migrations|the public API=public_api|auth code=auth|CI config=ci|"
        "dependency bumps=deps|Terraform files=terraform"
    ),
    "team": _words(
        "infrastructure|growth|core|foundations|money-movement|trust|discovery|reliability|insights|"
        "developer-experience|storefront|quality"
    ),
    "days": _words(
        "weekdays|Tuesdays and Thursdays=tue_thu|Mondays|Wednesdays|Fridays|weekends"
    ),
    "region": _words(
        "us-east-1|eu-west-1|ap-southeast-1|sa-east-1|ca-central-1|me-south-1|af-south-1|"
        "il-central-1"
    ),
    "db": _words("Postgres|MySQL|DynamoDB|MongoDB|Cassandra|CockroachDB|SQLite|ClickHouse"),
    "runtime": _words("Python|Node|Go|Java|Ruby"),
    "n_ver_python": _words("3.10|3.11|3.12|3.13"),
    "n_ver_node": _words("18|20|22|24"),
    "n_ver_go": _words("1.21|1.22|1.23|1.24"),
    "n_ver_java": _words("11|17|21"),
    "n_ver_ruby": _words("3.1|3.2|3.3|3.4"),
    "env": _words("staging|production|canary|sandbox"),
    "cluster": _words("blue|green|shared|legacy-vm|edge|batch"),
    "flag": _words(
        "new-checkout|dark-launch-search|v2-api|fast-path|batch-writes|new-onboarding|"
        "smart-retry|async-export|edge-cache|beta-dashboard|one-click-refund|lazy-images|"
        "grpc-transport|new-pricing-table|bulk-import|saved-carts|sso-only|webhook-v2|"
        "instant-payouts|ai-summaries"
    ),
    "project": _words(
        "Atlas|Borealis|Cobalt|Dune|Ember|Falcon|Granite|Harbor|Iris|Juniper|Kestrel|Lumen|"
        "Meridian|Nimbus|Onyx|Pioneer|Quartz|Raven|Sierra|Tundra|Umbra|Vega|Willow|Xenon|"
        "Yarrow|Zephyr|Aurora|Basalt|Cinder|Delta|Echo|Fjord|Glacier|Helix|Indigo|Jasper|"
        "Krypton|Lotus|Mosaic|Nova"
    ),
    "milestone": _words("beta|GA|internal dogfood=dogfood|public preview=preview|code freeze"),
    "n_date": _words(
        "January 15|February 3|March 31|April 14|May 20|June 9|July 1|August 25|"
        "September 12|October 6|November 17|December 8"
    ),
    "person": _words(
        "Alice|Bob|Chen Wei|Dana|Emeka|Farah|Gustavo|Hana|Igor|Jun|Kofi|Leila|Mateo|Nadia|"
        "Oskar|Priya|Quinn|Rosa|Sven|Tomoko|Umar|Vera|Wen|Ximena|Yusuf|Zoe|Arjun|Beatriz|"
        "Ciaran|Dmitri|Elif|Femi|Greta|Hiro|Ines|Jonas|Kenji|Lucia|Malik|Noor"
    ),
    "phase": _words("discovery|design|build|beta|rollout|maintenance"),
    "doc": _words(
        "runbook|on-call guide|API spec|architecture doc|main dashboard|alerting guide|"
        "postmortem index|load-test report|data model|SLO report|changelog|ADR log"
    ),
    "host": _words(
        "wiki.example.com|notion.so|docs.internal.example.com|confluence.example.com|"
        "handbook.example.com"
    ),
    "logtool": _words("Kibana|Grafana Loki|Datadog|CloudWatch|Splunk"),
    "vault": _words("Bitwarden|HashiCorp Vault|AWS Secrets Manager|Doppler|SOPS files"),
    "area2": _words(
        "deploys|the schema|alerts|performance|billing logic|access requests=access"
    ),
    "chan": _words("#ops-war-room|#sre-incidents|#eng-alerts|#oncall|#status-updates"),
    "tracker": _words("Linear|Jira|GitHub Projects|Shortcut|Asana"),
    "tool": _words(
        "the editor|the terminal|VS Code|Neovim|IntelliJ|Obsidian|Slack|the browser devtools|"
        "GitHub|Grafana|the diff viewer|Jupyter|iTerm|Warp|Zed|Emacs|Sublime Text|Xcode|"
        "Android Studio|DataGrip|Postman|Figma|Linear|Jira|Notion"
    ),
    "theme": _words("dark|light|high-contrast|solarized"),
    "keymap": _words("vim|kakoune|default|helix"),
    "length": _words("short|detailed|step-by-step|bullet-point"),
    "topic": _words(
        "Kubernetes|SQL performance|TypeScript generics|Rust lifetimes|CSS layout|git internals|"
        "Terraform|React hooks|asyncio|regular expressions|Docker networking|OAuth|Kafka|"
        "Bash scripting|Go concurrency|Python packaging|GraphQL|CI pipelines|observability|DNS|"
        "TLS|memory leaks|unit testing|accessibility|database indexing|caching|system design|"
        "shell pipelines|linear algebra|statistics"
    ),
    "weekday": _words("Mondays|Tuesdays|Wednesdays|Thursdays|Fridays"),
    "plang": _words(
        "Python|TypeScript|Go|Rust|Java|Kotlin|Swift|C++=cpp|Ruby|Elixir|Scala|PHP|C#=csharp|"
        "Haskell|SQL|Bash|Lua|Dart|Zig|OCaml"
    ),
    "kind": _words(
        "build failure|deploy|review request|incident|mention|release|dependency update|"
        "security alert|calendar|standup reminder|test flake|cost alert"
    ),
    "nchannel": _words("email|Slack DM|phone push|SMS|a daily digest=digest"),
    "daytime": _words("morning|afternoon|evening"),
    "action": _words(
        "go to definition|rename symbol|toggle terminal|format file|open file search="
        "file_search|split pane|run tests|comment line|next error|git blame"
    ),
    "keys": _words("Ctrl+K|Cmd+P|Alt+Enter|Ctrl+Shift+T|Cmd+B|Ctrl+Space|Cmd+Shift+R|Ctrl+G"),
    # numbers (a name starting with n_ holds numbers: changing one is a contradiction)
    "n_timeout": _words("2|3|5|8|10|15|20|30|45|60|90|120"),
    "n_retries": _words("1|2|3|4|5|6|8|10"),
    "n_pool": _words("5|10|16|20|25|32|40|50|64|100"),
    "n_ttl": _words("1|2|5|10|15|30|45|60|120|240"),
    "n_rps": _words("5|10|20|25|50|100|200|250|500|1000"),
    "n_line": _words("72|79|80|88|100|120"),
    "n_approvals": _words("2|3|4"),
    "n_ver": _words("1.4|2.0.1|2.7|3.1|4.2|5.0|16.2|18.3|19.1|0.11|1.26|8.0"),
    "n_replicas": _words("2|3|4|6|8|12|16|24"),
    "n_slo": _words("99|99.5|99.9|99.95|99.99"),
    "n_pct": _words("1|5|10|25|50|75|100"),
    "n_weeks": _words("6|8|12|16|20|30"),
    "n_size": _words("11|12|13|14|15|16|18"),
    "n_tab": _words("2|4|8"),
    "n_years": _words("1|2|3|5|7|10|12|15"),
    # Chinese
    "tool_zh": _words(
        "编辑器=editor|终端=terminal|浏览器开发者工具=devtools|VS Code|Obsidian|Jupyter|"
        "IntelliJ|Slack|Grafana|飞书=feishu"
    ),
    "theme_zh": _words("深色=dark|浅色=light|灰色=grey"),
    "task_zh": _words("包管理=packages|格式化=formatting|代码检查=linting|单元测试=unit_tests|"
                      "类型检查=type_checking|数据库迁移=migrations"),
    "doc_zh": _words("运维手册=runbook|值班指南=on_call_guide|接口文档=api_spec|"
                     "架构文档=architecture_doc|数据模型=data_model"),
    "milestone_zh": _words("公测=beta|正式发布=ga|内部试用=dogfood|代码冻结=code_freeze"),
    "n_date_zh": _words("1 月 15 日|2 月 3 日|3 月 31 日|4 月 14 日|5 月 20 日|6 月 9 日|"
                      "7 月 1 日|8 月 25 日|9 月 12 日|10 月 6 日|11 月 17 日|12 月 8 日"),
}  # fmt: skip

# Reason lines. None holds a negation word or a number that could differ within a pair.
WHY = {
    "en": (
        "it keeps CI fast", "the team agreed on it in the last retro",
        "an outage last quarter came from getting this wrong", "reviewers keep asking about it",
        "it matches what production runs", "it saves a round of review comments",
        "the tech leads asked for it", "on-call is easier that way",
        "it was decided in the architecture review", "customers noticed when it drifted",
        "the spring audit flagged it", "it keeps local setups identical",
        "the security review required it", "it is what the runbook assumes",
        "it keeps the dashboards comparable", "new joiners get confused otherwise",
        "the last migration went smoothly this way", "incident INC-{inc} traced back to this",
        "it came out of postmortem PM-{inc}", "it was agreed in ticket ENG-{inc}",
    ),
    "zh": (
        "这是团队在回顾会上定下的", "上个季度的一次故障就是因为这个", "评审时经常被问到",
        "和生产环境保持一致", "值班时更省事", "故障 INC-{inc} 就是因为这个",
    ),
}
HOW = {
    "en": (
        "mention it in review comments", "check this before opening a PR",
        "apply it to new code first", "update the README when touching this",
        "bring it up in planning if it blocks work", "follow it in pair sessions too",
        "check the CI logs when in doubt", "ask in the team channel before changing it",
        "link this memory in the PR", "update the docs along with it",
    ),
    "zh": ("提 PR 之前先检查一下", "评审时提醒大家", "改动之前先在群里问一下"),
}
# A line of the type's own, for a look-alike of another type (so the bodies differ).
TYPE_LINE: dict[str, dict[MemoryType, str]] = {
    "en": {"user": "A personal habit.", "feedback": "**Why:** it came up in a code review.",
           "project": "Context for the current quarter.", "reference": "Source: the team wiki."},
    "zh": {"user": "个人习惯。", "feedback": "**Why:** 代码评审时提到的。",
           "project": "本季度的项目背景。", "reference": "来源：团队 wiki。"},
}  # fmt: skip


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class _Template:
    """One kind of fact. ``says`` are ways of stating it (``says[0]`` the plain one, the rest
    restatements of the same fact); ``{slot}`` is a value's text, ``{slot_key}`` its key;
    ``subject`` uses keys. ``slots`` maps each slot to its word list (``{other}`` in a list
    name is the other slot's key: ``tools_{task}``). Changing ``value`` or saying
    ``negated`` contradicts the fact."""

    id: str
    type: MemoryType
    subject: str
    name: str
    description: str
    says: tuple[str, ...]
    slots: tuple[tuple[str, str], ...]
    value: str | None = None
    negated: str | None = None
    weight: float = 1.0

    @property
    def lang(self) -> str:
        return self.id.split(".")[0]

    def subject_slots(self) -> list[str]:
        fields = [f for _, f, _, _ in string.Formatter().parse(self.subject) if f]
        return [f.removesuffix("_key") for f in fields]

    def contradictions(self) -> list[str]:
        """How this fact can be contradicted: ``number``, ``value``, ``negation``."""
        ways = []
        if self.value is not None:
            numeric = dict(self.slots)[self.value].startswith("n_")
            ways.append("number" if numeric else "value")
        if self.negated is not None:
            ways.append("negation")
        return ways


def _t(
    id: str, type: MemoryType, subject: str, name: str, description: str,
    says: tuple[str, ...], slots: str, value: str | None = None, negated: str | None = None,
    weight: float = 1.0,
) -> _Template:
    pairs = tuple(tuple(item.split(":")) for item in slots.split())
    return _Template(id, type, subject, name, description, says,
                     tuple((a, b) for a, b in pairs), value, negated, weight)  # fmt: skip


SD = "service:service dep:dep"
TEMPLATES: tuple[_Template, ...] = (
    # ---- project: service configuration (the largest subject space)
    _t("en.timeout", "project", "{service_key}.{dep_key}.timeout",
       "{service} timeout for {dep}", "How long the {service} service waits for {dep}",
       ("The {service} service uses a {n}s timeout for calls to {dep}.",
        "For calls to {dep}, the {service} service uses a {n}s timeout.",
        "The {service} service always uses a {n}s timeout for calls to {dep}.",
        "The {service} service uses a {n}s timeout for calls to {dep}, keep it that way."),
       f"{SD} n:n_timeout", value="n", weight=2),
    _t("en.retries", "project", "{service_key}.{dep_key}.retries",
       "{service} retries to {dep}", "Retry budget of {service} for {dep}",
       ("Retry {dep} calls from {service} at most {n} times.",
        "Calls from {service} to {dep}: retry at most {n} times.",
        "Always retry {dep} calls from {service} at most {n} times before giving up."),
       f"{SD} n:n_retries", value="n", weight=1.5),
    _t("en.pool", "project", "{service_key}.{dep_key}.pool_size",
       "{service} connection pool for {dep}", "Size of the {service} pool for {dep}",
       ("The {service} connection pool for {dep} holds at most {n} connections.",
        "At most {n} connections: that is what the {service} connection pool for {dep} holds.",
        "The {service} connection pool for {dep} really holds at most {n} connections."),
       f"{SD} n:n_pool", value="n", weight=1.5),
    _t("en.cache", "project", "{service_key}.{dep_key}.cache_ttl",
       "{service} cache of {dep} responses", "How long {service} caches what {dep} returns",
       ("The {service} service caches {dep} responses for {n} minutes.",
        "For {n} minutes, the {service} service caches {dep} responses.",
        "The {service} service caches {dep} responses for {n} minutes, on purpose."),
       f"{SD} n:n_ttl", value="n", weight=1.5),
    _t("en.rate", "project", "{service_key}.{dep_key}.rate_limit",
       "{service} rate limit towards {dep}", "Request rate {service} keeps to with {dep}",
       ("The {service} service sends at most {n} requests per second to {dep}.",
        "To {dep}, the {service} service sends at most {n} requests per second.",
        "The {service} service sends at most {n} requests per second to {dep}, please "
        "respect that limit."),
       f"{SD} n:n_rps", value="n", weight=1.5),
    # ---- feedback: rules per repository
    _t("en.tool", "feedback", "{repo_key}.{task_key}.tool",
       "{tool} for {task} in {repo}", "Which tool {repo} uses for {task}",
       ("In {repo}, use {tool} for {task}.", "Use {tool} for {task} in {repo}.",
        "In {repo}, always use {tool} for {task}.",
        "In {repo}, please use {tool} for {task}."),
       "repo:repo task:task tool:tools_{task}", value="tool",
       negated="In {repo}, never use {tool} for {task}.", weight=2),
    _t("en.double", "feedback", "{repo_key}.tests.{dep_key}.double",
       "{double} for {dep} in {repo} tests", "Test doubles for {dep} in the {repo} tests",
       ("Use {double} for {dep} in the {repo} tests.",
        "In the {repo} tests, use {double} for {dep}.",
        "Always use {double} for {dep} in the {repo} tests."),
       "repo:repo dep:dep double:double", value="double",
       negated="Never use {double} for {dep} in the {repo} tests.", weight=2),
    _t("en.prepush", "feedback", "{repo_key}.prepush",
       "Pre-push check for {repo}", "What to run before pushing to {repo}",
       ("The pre-push check for {repo} is `{cmd}`.",
        "Before pushing to {repo}: the pre-push check is `{cmd}`.",
        "The pre-push check for {repo} is `{cmd}`, run it every time."),
       "repo:repo cmd:cmd", value="cmd"),
    _t("en.lines", "feedback", "{repo_key}.line_length",
       "Line length in {repo}", "Maximum line length for code in {repo}",
       ("Keep lines in {repo} under {n} characters.",
        "Please keep lines in {repo} under {n} characters.",
        "In {repo}, keep lines under {n} characters."),
       "repo:repo n:n_line", value="n"),
    _t("en.commits", "feedback", "{repo_key}.commit_style",
       "Commit messages in {repo}", "Commit message convention of {repo}",
       ("Commit messages in {repo} use {style}.", "In {repo}, commit messages use {style}.",
        "Commit messages in {repo} always use {style}."),
       "repo:repo style:style", value="style",
       negated="Commit messages in {repo} never use {style}."),
    _t("en.merge", "feedback", "{repo_key}.merge_strategy",
       "Merging pull requests in {repo}", "How pull requests land in {repo}",
       ("Pull requests in {repo} are merged with {strategy}.",
        "In {repo}, pull requests are merged with {strategy}.",
        "Pull requests in {repo} are always merged with {strategy}."),
       "repo:repo strategy:strategy", value="strategy"),
    _t("en.approvals", "feedback", "{repo_key}.review.approvals",
       "Approvals needed in {repo}", "Review approvals before a merge in {repo}",
       ("Pull requests in {repo} need {n} approvals before merging.",
        "Before merging in {repo}, pull requests need {n} approvals.",
        "Pull requests in {repo} really need {n} approvals before merging."),
       "repo:repo n:n_approvals", value="n"),
    _t("en.pin", "feedback", "{repo_key}.deps.{lib_key}",
       "{lib} version in {repo}", "Pinned version of {lib} in {repo}",
       ("Pin {lib} to {n} in {repo}.", "In {repo}, pin {lib} to {n}.",
        "Always pin {lib} to {n} in {repo}."),
       "repo:repo lib:lib n:n_ver", value="n", weight=2.5),
    _t("en.reviewers", "project", "{repo_key}.{area_key}.reviewers",
       "Reviewers of {area} in {repo}", "Who reviews changes to {area} in {repo}",
       ("In {repo}, the reviewers for {area} are the {team} team.",
        "The reviewers for {area} in {repo} are the {team} team.",
        "In {repo}, the reviewers for {area} are the {team} team, as a rule."),
       "repo:repo area:area team:team", value="team", weight=1.5),
    _t("en.flagrule", "feedback", "{service_key}.release.flags",
       "Feature flags for {service} features", "How new {service} features are released",
       ("Ship new {service} features behind a feature flag.",
        "New {service} features: ship them behind a feature flag.",
        "Always ship new {service} features behind a feature flag."),
       "service:service", negated="Never ship new {service} features behind a feature flag."),
    _t("en.deploydays", "feedback", "{service_key}.deploy.days",
       "Deploy days for {service}", "When the {service} service may be deployed",
       ("Deploys of {service} happen on {days}.", "On {days}: that is when deploys of "
        "{service} happen.", "Deploys of {service} really happen on {days}."),
       "service:service days:days", value="days"),
    # ---- project: service facts
    _t("en.region", "project", "{service_key}.region",
       "{service} region", "Cloud region of the {service} service",
       ("The {service} service is deployed to {region}.",
        "The {service} service is currently deployed to {region}.",
        "The {service} service is deployed to {region}, for now."),
       "service:service region:region", value="region"),
    _t("en.owner", "project", "{service_key}.owner",
       "Owner of {service}", "Team that owns the {service} service",
       ("The owner of {service} is the {team} team.",
        "The owner of the {service} service is the {team} team.",
        "The owner of {service} is the {team} team, ask them first."),
       "service:service team:team", value="team"),
    _t("en.datastore", "project", "{service_key}.datastore",
       "{service} datastore", "Where the {service} service keeps its data",
       ("The {service} service stores its data in {db}.",
        "The {service} service stores all of its data in {db}.",
        "Its data, the {service} service stores in {db}."),
       "service:service db:db", value="db"),
    _t("en.runtime", "project", "{service_key}.runtime",
       "{service} runtime", "Language runtime of the {service} service",
       ("The {service} service runs on {runtime} {n}.",
        "The {service} service currently runs on {runtime} {n}.",
        "The {service} service runs on {runtime} {n} in every environment."),
       "service:service runtime:runtime n:n_ver_{runtime}", value="n"),
    _t("en.replicas", "project", "{service_key}.{env_key}.replicas",
       "{service} replicas in {env}", "Replica count of {service} in {env}",
       ("The {service} service runs {n} replicas in {env}.",
        "In {env}, the {service} service runs {n} replicas.",
        "The {service} service runs {n} replicas in {env} at all times."),
       "service:service env:env n:n_replicas", value="n", weight=2),
    _t("en.cluster", "project", "{service_key}.{env_key}.cluster",
       "{service} cluster in {env}", "Cluster of the {env} deployment of {service}",
       ("In {env}, the {service} service lives in the {cluster} cluster.",
        "The {service} service lives in the {cluster} cluster in {env}.",
        "In {env}, the {service} service still lives in the {cluster} cluster."),
       "service:service env:env cluster:cluster", value="cluster", weight=2),
    _t("en.slo", "project", "{service_key}.slo",
       "{service} availability target", "The SLO of the {service} service",
       ("The availability target for {service} is {n}%.",
        "For {service}, the availability target is {n}%.",
        "The availability target for {service} is {n}%, measured monthly."),
       "service:service n:n_slo", value="n"),
    _t("en.flag", "project", "{service_key}.flags.{flag_key}",
       "{flag} rollout in {service}", "Rollout state of the {flag} flag in {service}",
       ("The `{flag}` flag in {service} is rolled out to {n}% of users.",
        "In {service}, the `{flag}` flag is rolled out to {n}% of users.",
        "The `{flag}` flag in {service} is rolled out to {n}% of users so far."),
       "service:service flag:flag n:n_pct", value="n", weight=2.5),
    # ---- project: projects
    _t("en.milestone", "project", "{project_key}.{milestone_key}.date",
       "{project} {milestone} date", "When {project} reaches {milestone}",
       ("The {milestone} of {project} is planned for {date}.",
        "For {project}, the {milestone} is planned for {date}.",
        "The {milestone} of {project} is firmly planned for {date}."),
       "project:project milestone:milestone date:n_date", value="date", weight=1.5),
    _t("en.budget", "project", "{project_key}.budget",
       "{project} budget", "Engineering budget of {project}",
       ("{project} has a budget of {n} engineer-weeks this quarter.",
        "This quarter, {project} has a budget of {n} engineer-weeks.",
        "{project} has a budget of {n} engineer-weeks this quarter, all of it planned."),
       "project:project n:n_weeks", value="n"),
    _t("en.po", "project", "{project_key}.product_owner",
       "Product owner of {project}", "Who decides on scope for {project}",
       ("The product owner for {project} is {person}.",
        "For {project}, the product owner is {person}.",
        "The product owner for {project} is {person}, since the kick-off."),
       "project:project person:person", value="person"),
    _t("en.phase", "project", "{project_key}.phase",
       "{project} phase", "Where {project} stands",
       ("{project} is currently in the {phase} phase.", "Currently {project} is in the "
        "{phase} phase.", "{project} is in the {phase} phase right now."),
       "project:project phase:phase", value="phase"),
    _t("en.tracker", "project", "{project_key}.tracker",
       "{project} tracker", "Where work on {project} is tracked",
       ("Work on {project} is tracked in {tracker}.",
        "All work on {project} is tracked in {tracker}.",
        "Work on {project} is tracked in {tracker}, with one ticket per change."),
       "project:project tracker:tracker", value="tracker"),
    # ---- reference
    _t("en.docs", "reference", "{service_key}.docs.{doc_key}",
       "{service} {doc}", "Where the {doc} of {service} lives",
       ("The {doc} for {service} is at {host}/{service_key}/{doc_key}.",
        "For {service}, the {doc} is at {host}/{service_key}/{doc_key}.",
        "The {doc} for {service} is at {host}/{service_key}/{doc_key}, bookmark it."),
       "service:service doc:doc host:host", value="host", weight=3),
    _t("en.logs", "reference", "{service_key}.{env_key}.logs",
       "{service} logs in {env}", "Where to read the {env} logs of {service}",
       ("Logs for {service} in {env} are in {logtool}, index `{service_key}-{env_key}`.",
        "In {env}, logs for {service} are in {logtool}, index `{service_key}-{env_key}`.",
        "All logs for {service} in {env} are in {logtool}, index `{service_key}-{env_key}`."),
       "service:service env:env logtool:logtool", value="logtool", weight=2),
    _t("en.secrets", "reference", "{service_key}.{env_key}.secrets",
       "{service} secrets in {env}", "Where the {env} credentials of {service} are kept",
       ("Secrets for {service} in {env} are kept in {vault}.",
        "In {env}, secrets for {service} are kept in {vault}.",
        "Secrets for {service} in {env} are always kept in {vault}."),
       "service:service env:env vault:vault", value="vault", weight=2),
    _t("en.contact", "reference", "{service_key}.{area2_key}.contact",
       "Contact for {area2} in {service}", "Who to ask about {area2} in {service}",
       ("For {area2} in {service}, the contact is {person}.",
        "The contact for {area2} in {service} is {person}.",
        "For {area2} in {service}, the contact is {person}, usually quick to reply."),
       "service:service area2:area2 person:person", value="person", weight=2),
    _t("en.channel", "reference", "{service_key}.incident_channel",
       "{service} incident channel", "Where incidents of {service} are coordinated",
       ("Incidents in {service} are handled in the {chan} channel.",
        "In the {chan} channel: that is where incidents in {service} are handled.",
        "Incidents in {service} are always handled in the {chan} channel."),
       "service:service chan:chan", value="chan"),
    # ---- user
    _t("en.theme", "user", "{tool_key}.theme",
       "Prefers {theme} mode in {tool}", "Colour theme the user wants in {tool}",
       ("Prefers {theme} mode in {tool}.", "In {tool}, prefers {theme} mode.",
        "Really prefers {theme} mode in {tool}."),
       "tool:tool theme:theme", value="theme"),
    _t("en.font", "user", "{tool_key}.font_size",
       "Font size in {tool}", "Font size the user reads comfortably in {tool}",
       ("Uses a {n}pt font in {tool}.", "In {tool}, uses a {n}pt font.",
        "Always uses a {n}pt font in {tool}."),
       "tool:tool n:n_size", value="n"),
    _t("en.keymap", "user", "{tool_key}.keymap",
       "{keymap} keybindings in {tool}", "Keybindings the user works with in {tool}",
       ("Uses {keymap} keybindings in {tool}.", "In {tool}, uses {keymap} keybindings.",
        "Always uses {keymap} keybindings in {tool}."),
       "tool:tool keymap:keymap", value="keymap"),
    _t("en.tabwidth", "user", "{tool_key}.tab_width",
       "Tab width in {tool}", "Indentation width the user sets in {tool}",
       ("Sets the tab width to {n} in {tool}.", "In {tool}, sets the tab width to {n}.",
        "Always sets the tab width to {n} in {tool}."),
       "tool:tool n:n_tab", value="n"),
    _t("en.formatsave", "user", "{tool_key}.format_on_save",
       "Format on save in {tool}", "Whether {tool} formats files on save",
       ("Wants format-on-save turned on in {tool}.",
        "In {tool}, wants format-on-save turned on.",
        "Really wants format-on-save turned on in {tool}."),
       "tool:tool", negated="Never wants format-on-save turned on in {tool}."),
    _t("en.answers", "user", "answers.{plang_key}.{topic_key}.style",
       "{length} answers about {topic} in {plang}",
       "How the user likes explanations of {topic} in {plang}",
       ("Wants {length} answers about {topic} in {plang}.",
        "About {topic} in {plang}, wants {length} answers.",
        "Always wants {length} answers about {topic} in {plang}."),
       "plang:plang topic:topic length:length", value="length", weight=1.5),
    _t("en.shortcut", "user", "{tool_key}.keys.{action_key}",
       "{action} shortcut in {tool}", "Key binding the user relies on in {tool}",
       ("Binds {action} to {keys} in {tool}.", "In {tool}, binds {action} to {keys}.",
        "Always binds {action} to {keys} in {tool}."),
       "tool:tool action:action keys:keys", weight=1.5),
    _t("en.focus", "user", "focus.{project_key}.time",
       "Focus time for {project}", "When the user does deep work on {project}",
       ("Does focused work on {project} in the {daytime}.",
        "In the {daytime}, does focused work on {project}.",
        "Usually does focused work on {project} in the {daytime}."),
       "project:project daytime:daytime", value="daytime"),
    _t("en.oncall", "user", "oncall.{service_key}.day",
       "On-call day for {service}", "Which weekday the user is on call for {service}",
       ("Is on call for {service} on {weekday}.", "On {weekday}, is on call for {service}.",
        "Is on call for {service} on {weekday}, every week."),
       "service:service weekday:weekday", value="weekday"),
    _t("en.years", "user", "skills.{plang_key}.years",
       "Experience with {plang}", "How long the user has worked with {plang}",
       ("Has {n} years of experience with {plang}.",
        "With {plang}, has {n} years of experience.",
        "Has {n} years of hands-on experience with {plang}."),
       "plang:plang n:n_years", value="n"),
    _t("en.notify", "user", "notify.{kind_key}.channel",
       "{kind} notifications", "How the user wants {kind} notifications",
       ("Wants {kind} notifications via {nchannel}.",
        "For {kind} notifications, wants them via {nchannel}.",
        "Always wants {kind} notifications via {nchannel}."),
       "kind:kind nchannel:nchannel", value="nchannel"),
    _t("en.reviewtime", "user", "review.{repo_key}.time",
       "Review time for {repo}", "When the user reviews pull requests for {repo}",
       ("Reviews pull requests for {repo} in the {daytime}.",
        "In the {daytime}, reviews pull requests for {repo}.",
        "Usually reviews pull requests for {repo} in the {daytime}."),
       "repo:repo daytime:daytime", value="daytime"),
    # ---- Chinese
    _t("zh.timeout", "project", "{service_key}.{dep_key}.timeout",
       "{service} 调用 {dep} 的超时", "{service} 服务等待 {dep} 的时间",
       ("{service} 服务调用 {dep} 的超时时间是 {n} 秒。",
        "注意：{service} 服务调用 {dep} 的超时时间是 {n} 秒。",
        "{service} 服务调用 {dep} 的超时时间一直是 {n} 秒。"),
       f"{SD} n:n_timeout", value="n"),
    _t("zh.theme", "user", "{tool_zh_key}.theme",
       "在{tool_zh}里偏好{theme_zh}主题", "用户在{tool_zh}里想要的配色",
       ("在{tool_zh}里偏好{theme_zh}主题。", "在{tool_zh}里一直偏好{theme_zh}主题。",
        "在{tool_zh}里，真的偏好{theme_zh}主题。"),
       "tool_zh:tool_zh theme_zh:theme_zh", value="theme_zh"),
    _t("zh.tool", "feedback", "{repo_key}.{task_zh_key}.tool",
       "{repo} 的{task_zh}工具", "{repo} 仓库做{task_zh}用的工具",
       ("在 {repo} 仓库里用 {tool} 做{task_zh}。", "在 {repo} 仓库里请一直用 {tool} 做{task_zh}。",
        "在 {repo} 仓库里，请用 {tool} 做{task_zh}。"),
       "repo:repo task_zh:task_zh tool:tools_{task_zh}", value="tool",
       negated="在 {repo} 仓库里不要用 {tool} 做{task_zh}。"),
    _t("zh.docs", "reference", "{service_key}.docs.{doc_zh_key}",
       "{service} 的{doc_zh}", "{service} 的{doc_zh}在哪里",
       ("{service} 的{doc_zh}在 {host}/{service_key}/{doc_zh_key}。",
        "{service} 的{doc_zh}一直在 {host}/{service_key}/{doc_zh_key}。",
        "注意：{service} 的{doc_zh}在 {host}/{service_key}/{doc_zh_key}。"),
       "service:service doc_zh:doc_zh host:host", value="host"),
    _t("zh.milestone", "project", "{project_key}.{milestone_zh_key}.date",
       "{project} 的{milestone_zh}日期", "{project} 项目什么时候{milestone_zh}",
       ("{project} 项目的{milestone_zh}计划在 {date_zh}。",
        "注意：{project} 项目的{milestone_zh}计划在 {date_zh}。",
        "{project} 项目的{milestone_zh}目前计划在 {date_zh}。"),
       "project:project milestone_zh:milestone_zh date_zh:n_date_zh", value="date_zh"),
    _t("zh.approvals", "feedback", "{repo_key}.review.approvals",
       "{repo} 的审批人数", "{repo} 仓库合并前需要的审批",
       ("{repo} 仓库的合并请求需要 {n} 个人审批。",
        "注意：{repo} 仓库的合并请求需要 {n} 个人审批。",
        "{repo} 仓库的合并请求一直需要 {n} 个人审批。"),
       "repo:repo n:n_approvals", value="n"),
    _t("zh.double", "feedback", "{repo_key}.tests.{dep_key}.double",
       "{repo} 测试里的 {dep}", "{repo} 的测试怎么处理 {dep}",
       ("在 {repo} 的测试里用 mock 代替 {dep}。", "在 {repo} 的测试里请用 mock 代替 {dep}。",
        "在 {repo} 的测试里一直用 mock 代替 {dep}。"),
       "repo:repo dep:dep", negated="在 {repo} 的测试里不要用 mock 代替 {dep}。"),
    _t("zh.replicas", "project", "{service_key}.{env_key}.replicas",
       "{service} 在 {env} 的副本数", "{service} 服务在 {env} 环境的副本",
       ("{service} 服务在 {env} 环境跑 {n} 个副本。",
        "注意：{service} 服务在 {env} 环境跑 {n} 个副本。",
        "{service} 服务在 {env} 环境一直跑 {n} 个副本。"),
       "service:service env:env n:n_replicas", value="n"),
)  # fmt: skip


# --------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class _Fact:
    """A template with its slots filled: ``values`` maps slot → ``(text, key)``."""

    template: _Template
    values: tuple[tuple[str, tuple[str, str]], ...]

    def fields(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for slot, (text, key) in self.values:
            out[slot], out[f"{slot}_key"] = text, key
        return out

    def render(self, pattern: str) -> str:
        text = pattern.format(**self.fields())
        return text[:1].upper() + text[1:]

    @property
    def subject(self) -> str:
        return self.template.subject.format(**self.fields())

    def with_value(self, slot: str, value: tuple[str, str]) -> _Fact:
        return _Fact(self.template, tuple((s, value if s == slot else v) for s, v in self.values))


def _choices(values: dict[str, tuple[str, str]], vocab: str) -> tuple[tuple[str, str], ...]:
    return VOCAB[vocab.format(**{s: k for s, (_, k) in values.items()})]


@dataclass(frozen=True)
class _Memory:
    """A memory to write; ``group`` is the index of its planted pair (None: background)."""

    type: MemoryType
    subject: str
    name: str
    description: str
    body: str
    created: dt.datetime
    updated: dt.datetime
    group: int | None


class _Builder:
    """Draws facts with subjects and bodies never used before, from one seeded ``Random``."""

    def __init__(self, rng: random.Random, now: dt.datetime) -> None:
        self.rng = rng
        self.now = now
        self.subjects: dict[str, None] = {}  # an ordered set, casefolded
        self.bodies: dict[str, None] = {}  # normalised hashes in use
        self.exhausted: set[str] = set()

    # ---- drawing
    def fact(self, templates: list[_Template]) -> _Fact:
        """A fact from one of ``templates`` (by weight) whose subject is still free."""
        while True:
            live = [t for t in templates if t.id not in self.exhausted]
            if not live:
                raise RuntimeError("memory_set: word lists too small for this count")
            template = self.rng.choices(live, weights=[t.weight for t in live])[0]
            for _ in range(40):
                values: dict[str, tuple[str, str]] = {}
                for slot, vocab in template.slots:
                    values[slot] = self.rng.choice(_choices(values, vocab))
                fact = _Fact(template, tuple(values.items()))
                if self.free(fact.subject):
                    return fact
            self.exhausted.add(template.id)

    def free(self, subject: str) -> bool:
        return subject.casefold() not in self.subjects

    def claim(self, subject: str) -> None:
        assert self.free(subject), subject
        self.subjects[subject.casefold()] = None

    def claim_body(self, body: str) -> None:
        digest = content_hash_normalised(body)
        assert digest not in self.bodies, body
        self.bodies[digest] = None

    def body_free(self, body: str) -> bool:
        return content_hash_normalised(body) not in self.bodies

    def reasons(self, memory_type: MemoryType, lang: str) -> str:
        """Optional ``**Why:**``/``**How to apply:**`` lines (more often for feedback)."""
        chance = {"feedback": 0.8, "project": 0.4, "user": 0.2, "reference": 0.15}[memory_type]
        if self.rng.random() >= chance:
            return ""
        why = self.rng.choice(WHY[lang]).format(inc=self.rng.randrange(2000, 10000))
        lines = [f"**Why:** {why}{'.' if lang == 'en' else '。'}"]
        if memory_type == "feedback" or self.rng.random() < 0.3:
            how = self.rng.choice(HOW[lang])
            lines.append(f"**How to apply:** {how}{'.' if lang == 'en' else '。'}")
        return "\n\n" + "\n".join(lines)

    # ---- times
    def times(self, n: int) -> list[dt.datetime]:
        """``n`` distinct whole-second instants in the window, sorted."""
        seconds = int(WINDOW.total_seconds())
        start = self.now - WINDOW
        return [start + dt.timedelta(seconds=s) for s in sorted(self.rng.sample(range(seconds), n))]

    def memory(self, fact: _Fact, says: str, tail: str, when: tuple[dt.datetime, dt.datetime],
               group: int | None, memory_type: MemoryType | None = None,
               name: str | None = None) -> _Memory:
        t = fact.template
        if name is None:  # a negated rule is named by what it says, so the name agrees
            name = fact.render(says).rstrip(".。") if says == t.negated else fact.render(t.name)
        return _Memory(memory_type or t.type, fact.subject, name,
                       fact.render(t.description), fact.render(says) + tail, *when, group)


def _lang_templates(rng: random.Random, want: str | None = None) -> list[_Template]:
    lang = "zh" if rng.random() < CHINESE_SHARE else "en"
    return [t for t in TEMPLATES if t.lang == lang and (want is None or want in t.contradictions())]


# --------------------------------------------------------------------------- exact duplicates


def _restyle(body: str, rng: random.Random) -> str:
    """The same body up to normalisation: two of lower case, extra spaces, no final period,
    a ``**bold**`` word."""
    def lower(text: str) -> str:
        return text.lower()

    def spaces(text: str) -> str:
        parts = text.split(" ")
        for i in rng.sample(range(1, len(parts)), min(3, len(parts) - 1)) if len(parts) > 1 else []:
            parts[i] = " " + parts[i]
        return " ".join(parts) + "  "

    def period(text: str) -> str:
        return text.rstrip().rstrip(".。")

    def bold(text: str) -> str:
        words = [m for m in re.finditer(r"(?<![\w*`/.-])[^\W\d_]{3,}(?![\w*`/.-])", text)]
        if not words:
            return text
        m = rng.choice(words)
        return f"{text[: m.start()]}**{m.group()}**{text[m.end():]}"

    styles = [lower, spaces, period, bold]
    for style in rng.sample(styles, 2):
        body = style(body)
    return body


# --------------------------------------------------------------------------- pairs


Pair = tuple[_Memory, _Memory]
Times = tuple[dt.datetime, dt.datetime]


def _exact(b: _Builder, fact: _Fact, tail: str, old: Times, new: Times, group: int) -> Pair:
    first = b.memory(fact, b.rng.choice(fact.template.says), tail, old, group)
    name = b.rng.choice([first.name, first.name.lower(), first.description])
    body = _restyle(first.body, b.rng)
    assert content_hash_normalised(body) == content_hash_normalised(first.body)
    return first, _Memory(first.type, first.subject, name, first.description, body, *new, group)


def _near(b: _Builder, fact: _Fact, tail: str, old: Times, new: Times, group: int) -> Pair:
    said, restated = b.rng.sample(fact.template.says, 2)
    return b.memory(fact, said, tail, old, group), b.memory(fact, restated, tail, new, group)


def _contradiction(
    b: _Builder, fact: _Fact, way: str, tail: str, old: Times, new: Times, group: int
) -> Pair:
    t = fact.template
    if way == "negation":  # either order: "use X" then "never use X", or the other way
        assert t.negated is not None
        first, second = b.rng.sample([t.says[0], t.negated], 2)
        return b.memory(fact, first, tail, old, group), b.memory(fact, second, tail, new, group)
    assert t.value is not None
    current = dict(fact.values)
    others = [v for v in _choices(current, dict(t.slots)[t.value]) if v != current[t.value]]
    changed = fact.with_value(t.value, b.rng.choice(others))
    says = b.rng.choice(t.says)
    return b.memory(fact, says, tail, old, group), b.memory(changed, says, tail, new, group)


def _lookalike_by_type(
    b: _Builder, fact: _Fact, tail: str, old: Times, new: Times, group: int
) -> Pair:
    t = fact.template
    says = b.rng.choice(t.says)
    other_type = b.rng.choice([x for x in MEMORY_TYPES if x != t.type])
    kinds = [(t.type, tail), (other_type, f"{tail}\n\n{TYPE_LINE[t.lang][other_type]}")]
    (type1, tail1), (type2, tail2) = b.rng.sample(kinds, 2)
    return (b.memory(fact, says, tail1, old, group, memory_type=type1),
            b.memory(fact, says, tail2, new, group, memory_type=type2))  # fmt: skip


def _lookalike_twin(b: _Builder, fact: _Fact) -> _Fact | None:
    """``fact`` with one subject slot changed to a value whose subject is free (the other
    slots' word lists may not depend on it: ``tools_{task}``), or None."""
    t = fact.template
    dependent = {v for _, vocab in t.slots for v in re.findall(r"\{(\w+)\}", vocab)}
    slot = b.rng.choice([s for s in t.subject_slots() if s not in dependent])
    current = dict(fact.values)
    options = [v for v in _choices(current, dict(t.slots)[slot]) if v != current[slot]]
    b.rng.shuffle(options)
    twins = (fact.with_value(slot, v) for v in options)
    return next((twin for twin in twins if b.free(twin.subject)), None)


def _pair(b: _Builder, kind: Kind, index: int, group: int) -> Pair:
    """The two memories of planted pair number ``index`` of ``kind``, oldest first.
    Contradictions cycle number / negation / value; every fourth look-alike is by type."""
    c1, u1, c2, u2 = b.times(4)
    old, new = (c1, u1), (c2, u2)
    way = ("number", "negation", "value")[index % 3] if kind == "contradiction" else None
    templates = _lang_templates(b.rng, way)
    while True:
        fact = b.fact(templates)
        tail = b.reasons(fact.template.type, fact.template.lang)
        subjects = [fact.subject]
        if kind == "exact":
            pair = _exact(b, fact, tail, old, new, group)
        elif kind == "near":
            pair = _near(b, fact, tail, old, new, group)
        elif kind == "contradiction":
            assert way is not None
            pair = _contradiction(b, fact, way, tail, old, new, group)
        elif index % 4 == 3:
            pair = _lookalike_by_type(b, fact, tail, old, new, group)
        else:
            twin = _lookalike_twin(b, fact)
            if twin is None:
                continue
            says = b.rng.choice(fact.template.says)
            pair = (b.memory(fact, says, tail, old, group),
                    b.memory(twin, says, tail, new, group))
            subjects.append(twin.subject)
        bodies = [pair[0].body] if kind == "exact" else [m.body for m in pair]
        distinct = len({content_hash_normalised(x) for x in bodies}) == len(bodies)
        if distinct and all(b.body_free(x) for x in bodies):
            break
    for subject in subjects:
        b.claim(subject)
    for body in bodies:
        b.claim_body(body)
    return pair


def _background(b: _Builder) -> _Memory:
    while True:
        fact = b.fact(_lang_templates(b.rng))
        t = fact.template
        says = b.rng.choice(t.says)
        if t.negated is not None and b.rng.random() < 0.3:
            says = t.negated
        created = b.times(1)[0]
        span = int((b.now - created).total_seconds())
        updated = created if b.rng.random() < 0.6 else created + dt.timedelta(
            seconds=b.rng.randrange(span))
        memory = b.memory(fact, says, b.reasons(t.type, t.lang), (created, updated), None)
        if b.body_free(memory.body):
            b.claim(memory.subject)
            b.claim_body(memory.body)
            return memory


# --------------------------------------------------------------------------- file names


class _Names:
    """Free file names via :func:`ccb.memory_file.memory_path`, handing it only the paths
    that could clash with a name (same stem up to a ``-N`` suffix) so 10,000 names stay
    linear rather than quadratic."""

    def __init__(self, memory_folder: str) -> None:
        self.folder = memory_folder
        self.all: list[str] = []
        self.by_root: dict[str, list[str]] = {}

    @staticmethod
    def _root(stem: str) -> str:
        return re.sub(r"-\d+$", "", stem).casefold()

    def take(self, name: str) -> str:
        base = slugify(name)
        if len(base.encode()) > MAX_SLUG_BYTES - 8:  # could be shortened: check against all
            near = self.all
        else:
            near = self.by_root.get(self._root(base), []) + self.by_root.get(base.casefold(), [])
        path = memory_path(near, self.folder, name)
        self.all.append(path)
        self.by_root.setdefault(self._root(Path(path).stem), []).append(path)
        return path


# --------------------------------------------------------------------------- generate


def _render_all(files: list[NewMemory]) -> list[bytes]:
    """``render_memory`` of each, in order; on all cores for large sets (it checks every
    value by reading it back with three YAML parsers: ~3 ms a file)."""
    workers = min(os.cpu_count() or 1, 8)
    if len(files) < 2000 or workers < 2:
        return [render_memory(f) for f in files]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(render_memory, files, chunksize=200))


def generate(
    root: Path,
    *,
    count: int = 10_000,
    seed: int = 7,
    memory_folder: str = "Memory",
    now: dt.datetime | None = None,
) -> MemorySet:
    """Write ``count`` memory files into ``root/memory_folder`` and return what was planted.

    3% of ``count`` pairs per kind (``round``), the rest background. ``now`` (aware; default
    2026-11-30 UTC) ends the 200-day window of ``created``/``updated``. Raises
    ``FileExistsError`` when the memory folder already holds ``.md`` files, ``ValueError``
    for a negative count or a naive ``now``, ``RuntimeError`` when the word lists run out of
    subjects (above about 20,000). Deterministic in ``(count, seed, memory_folder,
    now)``: the same arguments give byte-identical files.
    """
    now = DEFAULT_NOW if now is None else now
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("generate: now must be timezone-aware")
    if count < 0:
        raise ValueError("generate: count must be >= 0")
    now = now.astimezone(dt.UTC).replace(microsecond=0)
    folder = root / memory_folder if memory_folder else root
    if folder.is_dir() and any(folder.glob("*.md")):
        raise FileExistsError(f"{folder} already holds memory files")

    rng = random.Random(seed)
    builder = _Builder(rng, now)
    pairs_per_kind = round(count * PAIR_SHARE)
    memories: list[_Memory] = []
    kinds: list[Kind] = []
    for kind in KINDS:
        for index in range(pairs_per_kind):
            memories.extend(_pair(builder, kind, index, len(kinds)))
            kinds.append(kind)
    memories.extend(_background(builder) for _ in range(count - len(memories)))

    order = list(range(len(memories)))
    rng.shuffle(order)  # planted pairs and background interleaved, in names as on disk
    names = _Names(memory_folder)
    paths: dict[int, str] = {}
    files: list[NewMemory] = []
    for i in order:
        m = memories[i]
        paths[i] = names.take(m.name)
        millis = int(m.created.timestamp() * 1000)
        ulid = ULID.from_bytes(millis.to_bytes(6, "big") + rng.randbytes(10))
        files.append(NewMemory(
            name=m.name, description=m.description, type=m.type, id=str(ulid),
            created=m.created, updated=m.updated, body=m.body, subject=m.subject,
            valid_from=m.created.date(), source="user",
        ))  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in zip(order, _render_all(files), strict=True):
        (root / paths[i]).write_bytes(data)

    groups: list[list[str]] = [[] for _ in kinds]
    for i, m in enumerate(memories):  # pairs were built oldest first
        if m.group is not None:
            groups[m.group].append(paths[i])
    planted = tuple(Planted(kind, tuple(g)) for kind, g in zip(kinds, groups, strict=True))
    return MemorySet(root, memory_folder, tuple(sorted(paths.values())), planted)


# --------------------------------------------------------------------------- truth & outcome


def write_truth(ms: MemorySet, path: Path, **extra: object) -> None:
    """``truth.json``: ``{"memory_folder", "paths": [...], "planted": [{"kind", "paths"}],
    **extra}`` (paths vault-relative, a pair's oldest first)."""
    truth = {
        **extra,
        "memory_folder": ms.memory_folder,
        "paths": list(ms.paths),
        "planted": [{"kind": p.kind, "paths": list(p.paths)} for p in ms.planted],
    }
    path.write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def load_truth(root: Path, truth: Path | None = None) -> MemorySet:
    """The :class:`MemorySet` of vault ``root`` from ``truth`` (default ``root/truth.json``)."""
    data = json.loads((truth or root / "truth.json").read_text(encoding="utf-8"))
    planted = tuple(Planted(p["kind"], tuple(p["paths"])) for p in data["planted"])
    return MemorySet(root, data["memory_folder"], tuple(data["paths"]), planted)


def _live(root: Path, path: str) -> bool | None:
    """True: a live memory; False: not live (status archived/superseded/merged, a
    ``valid_to``, or no longer a memory); None: the file is gone."""
    try:
        data = (root / path).read_bytes()
    except FileNotFoundError:
        return None
    meta = parse_note(path, data).memory
    if meta is None or meta.valid_to is not None:
        return False
    return (meta.status or "").strip().casefold() not in NOT_LIVE


def check_outcome(ms: MemorySet) -> dict[str, int]:
    """Read the vault back (e.g. after a dream) and count departures from the right answers.

    Returns ints: ``memories``, ``background`` and ``<kind>_pairs`` (totals);
    ``files_missing`` (paths of the set no longer on disk); ``duplicates_left`` (exact/near
    pairs with both members live), ``duplicates_merged`` (exactly one live: the right answer),
    ``duplicates_none_live``; ``contradictions_open`` (both live), ``contradictions_resolved``
    (older not live, newer live: the right answer), ``contradictions_wrong`` (newer not live);
    ``false_merges`` (look-alike and background memories no longer live, missing included);
    ``lookalike_pairs_touched`` (look-alike pairs with a member not live). A missing file
    counts as not live.
    """
    live = {p: bool(_live(ms.root, p)) for p in ms.paths}
    missing = sum(not (ms.root / p).is_file() for p in ms.paths)
    pairs = {kind: [p.paths for p in ms.planted if p.kind == kind] for kind in KINDS}
    in_pairs = {path for p in ms.planted for path in p.paths}
    background = [p for p in ms.paths if p not in in_pairs]
    duplicates = pairs["exact"] + pairs["near"]
    alive = [[live[p] for p in paths] for paths in duplicates]
    contradictions = [(live[old], live[new]) for old, new in pairs["contradiction"]]
    lookalikes = [path for paths in pairs["lookalike"] for path in paths]
    return {
        "memories": len(ms.paths),
        "background": len(background),
        **{f"{kind}_pairs": len(pairs[kind]) for kind in KINDS},
        "files_missing": missing,
        "duplicates_left": sum(all(a) for a in alive),
        "duplicates_merged": sum(sum(a) == 1 for a in alive),
        "duplicates_none_live": sum(not any(a) for a in alive),
        "contradictions_open": sum(old and new for old, new in contradictions),
        "contradictions_resolved": sum(new and not old for old, new in contradictions),
        "contradictions_wrong": sum(not new for _, new in contradictions),
        "false_merges": sum(not live[p] for p in lookalikes + background),
        "lookalike_pairs_touched": sum(
            not all(live[p] for p in paths) for paths in pairs["lookalike"]
        ),
    }


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="vault folder to write (or to --check)")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--check", action="store_true",
                        help="read OUT_DIR back against OUT_DIR/truth.json and print the counts")
    args = parser.parse_args(argv)
    if args.check:
        print(json.dumps(check_outcome(load_truth(args.out_dir)), indent=1))
        return 0
    started = time.perf_counter()
    try:
        ms = generate(args.out_dir, count=args.count, seed=args.seed)
    except FileExistsError as exc:
        print(f"memory_set: {exc}; pick an empty OUT_DIR", file=sys.stderr)
        return 2
    write_truth(ms, args.out_dir / "truth.json", seed=args.seed, count=args.count)
    seconds = time.perf_counter() - started
    kinds = {kind: sum(p.kind == kind for p in ms.planted) for kind in KINDS}
    planted = sum(len(p.paths) for p in ms.planted)
    print(f"wrote {len(ms.paths)} memories to {args.out_dir / ms.memory_folder} in {seconds:.1f}s")
    print(f"  background {len(ms.paths) - planted}; pairs: "
          + ", ".join(f"{kind} {n}" for kind, n in kinds.items()))
    print(f"  truth: {args.out_dir / 'truth.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
