"""Layer probes: a small vault covering DESIGN.md's layers L1–L4, and 40 honest queries.

usage (a library for ``bench/layer_probes.py`` and ``tests/bench/test_probe_set.py``)::

    from probe_set import write_probe_vault
    probes = write_probe_vault(Path("/tmp/probe-vault"), date.today())

:func:`write_probe_vault` copies ``vault_example/`` into ``root``, then writes the probe files:

- memory files in ``Memory/`` (``ccb.memory_file.render_memory``, the format of
  ``vault_example/Memory/*.md``; ids are ULIDs derived from the name and ``created``, so the
  same ``today`` gives byte-identical files): ``user`` (L1), ``feedback`` with rule words or
  ``pinned`` (L2), ``project``/``reference`` (L3), plus look-alike distractors of every type
  and one superseded rule (``valid_to`` set) that must stay out of context;
- ordinary notes (L3): projects, decisions, lessons, a few in Chinese;
- daily notes ``Daily/YYYY-MM-DD.md`` for most of the 21 days up to ``today`` and session logs
  in ``Sessions/`` with a ``date:`` property (L4), dated relative to ``today`` so "yesterday"
  and "last week" mean what they say;
- ``Memory/MEMORY.md`` rebuilt for the memories now in the folder.

Then it returns 40 :class:`Probe` values, 10 per layer. The probes are meant to be honest:
queries paraphrase instead of copying the target's words, and several L2 queries only touch
the rule's territory (a task the rule should constrain, not a question about the rule).
Every target has neighbours on the same topic (distractor memories, notes and days).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from ulid import ULID  # noqa: E402

from ccb.memory_file import NewMemory, memory_path, render_memory  # noqa: E402
from ccb.memory_index import IndexEntry, build_memory_index  # noqa: E402
from ccb.model import MemoryType  # noqa: E402
from ccb.parse import parse_note  # noqa: E402

__all__ = [
    "LAYERS",
    "MEMORY_FOLDER",
    "RULE_WORDS",
    "VAULT_EXAMPLE",
    "Probe",
    "memory_types",
    "write_probe_vault",
]

Layer = Literal["L1", "L2", "L3", "L4"]
LAYERS: tuple[Layer, ...] = ("L1", "L2", "L3", "L4")
VAULT_EXAMPLE = REPO / "vault_example"
MEMORY_FOLDER = "Memory"
#: Words that give a feedback memory rule force (DESIGN.md, layer L2).
RULE_WORDS = ("must", "never", "always", "务必", "千万", "禁止", "do not", "don't")


@dataclass(frozen=True)
class Probe:
    """One query and the vault-relative path that should answer it; ``note`` says why the
    probe is there (what makes it hard)."""

    layer: Layer
    query: str
    expected_path: str
    note: str


@dataclass(frozen=True)
class _Memory:
    key: str
    type: MemoryType
    name: str
    description: str
    subject: str
    body: str
    age_days: int
    pinned: bool = False
    superseded_by: str | None = None  # key of the memory that replaced this one


def _m(key: str, type_: MemoryType, name: str, description: str, subject: str, body: str,
       age_days: int, **kw: object) -> _Memory:
    return _Memory(key, type_, name, description, subject, body.strip(), age_days, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- memories

MEMORIES: tuple[_Memory, ...] = (
    # ---- L1 targets: identity & preferences (type: user)
    _m("job", "user", "Backend engineer at a logistics startup",
       "Works on the backend team of Rotaflow, a freight logistics startup, mostly on billing",
       "self.work", """
Backend engineer at Rotaflow (freight logistics, about 60 people). Owns the billing and
invoicing services; on call one week in six.

**How to apply:** assume familiarity with the codebase and with freight terms (pallets,
waybills, carriers); no need to explain basics of web services.
""", 90),
    _m("languages", "user", "Go for services, Python for scripts",
       "Writes long-running services in Go and one-off tooling and data scripts in Python",
       "programming.languages", """
New long-running services are written in Go 1.23; scripts, notebooks and data chores in
Python 3.12 with uv. Reads TypeScript but does not enjoy writing it.

**How to apply:** suggest Go for anything deployed, Python for throwaway work.
""", 80),
    _m("concise", "user", "Likes short answers without preamble",
       "Prefers replies that start with the answer; no restating the question, no summary",
       "assistant.answer_style", """
Start with the answer or the code. Skip "Great question", skip restating the request, skip a
closing summary. Details only when asked.
""", 60),
    _m("lisbon", "user", "Lives in Lisbon",
       "Based in Lisbon, Portugal (Europe/Lisbon, WET/WEST); colleagues mostly in Berlin",
       "self.location", """
Lives in Lisbon. Local time is Europe/Lisbon — one hour behind most colleagues, who are in
Berlin.

**How to apply:** give times in Lisbon time and mention the Berlin time next to it.
""", 120),
    _m("vegetarian", "user", "Vegetarian, eats no fish either",
       "Has not eaten meat or fish for ten years; eggs and dairy are fine",
       "self.diet", """
Vegetarian for about ten years: no meat, no fish, no gelatine. Eggs, cheese and milk are
fine.

**How to apply:** recipes, restaurant picks and meal plans.
""", 150),
    _m("zh_explain", "user", "技术解释用中文，代码注释用英文",
       "希望技术问题用中文解释，但代码里的注释和提交信息一律写英文",
       "assistant.language", """
解释概念、讨论方案时用中文回答；代码注释、变量名、提交信息都用英文，方便海外同事阅读。
""", 45),
    _m("editor", "user", "Uses Neovim with LazyVim",
       "Edits code in Neovim (LazyVim distribution) in a tmux session; does not use VS Code",
       "tools.editor", """
Daily driver is Neovim with the LazyVim distribution, inside tmux. Keybindings are mostly the
defaults.

**How to apply:** when showing editor steps, give Neovim commands or `:Lazy` plugin specs,
never VS Code settings JSON.
""", 70),
    _m("marathon", "user", "Training for the Berlin marathon",
       "Running four times a week toward the Berlin marathon in late September, target 3:30",
       "self.running", """
Signed up for the Berlin marathon (last Sunday of September). Target time 3:30. Long run on
Sundays, intervals on Tuesdays. Logs runs in [[Running log]].
""", 30),
    _m("zh_morning", "user", "上午精力最好",
       "上午九点到十二点效率最高，需要专注的工作尽量放在上午，下午安排会议和杂事",
       "self.schedule", """
上午九点到十二点精力最好。写代码、写文档这种需要专注的事情放在上午；下午安排会议、回邮件和杂事。
""", 40),
    _m("pickup", "user", "Picks up Ana from school at four",
       "Daughter Ana (6) finishes school at 16:00 on weekdays; leaves the desk at 15:40",
       "self.family", """
Ana is six and in first grade. School ends at 16:00 Monday to Friday; the walk takes fifteen
minutes, so the working day stops at 15:40 and resumes around 20:30 when needed.
""", 100),
    # ---- L1 distractors (user, neighbouring topics)
    _m("org", "user", "Keeps a journal in Emacs org-mode",
       "Uses Emacs only for org-mode journaling, never for programming",
       "tools.journal", "Journal entries live in org-mode files under ~/org; Emacs is not used "
       "for code.", 75),
    _m("portuguese", "user", "Learning Portuguese",
       "Taking Portuguese lessons twice a week, level A2",
       "self.learning.portuguese", "Lessons on Monday and Thursday evenings. Happy to get "
       "Portuguese words for things now and then.", 110),
    _m("cycling", "user", "Cycles to the office",
       "Commutes by bike to the coworking space in Cais do Sodré on dry days",
       "self.commute", "About 20 minutes each way by bike; takes the tram when it rains.", 95),
    _m("tables", "user", "Comparisons as tables",
       "When comparing options, wants a small table rather than paragraphs",
       "assistant.comparisons", "Two to five options, one row per option, columns for the "
       "criteria that matter.", 55),
    _m("coffee", "user", "Drinks decaf after lunch",
       "Switches to decaf after 13:00 to sleep well", "self.caffeine",
       "Espresso in the morning, decaf only in the afternoon.", 130),
    _m("zh_reading", "user", "喜欢看纸质书",
       "晚上睡前看纸质书，不看电子屏幕", "self.reading", "睡前一小时不看手机，读纸质书。", 65),
    # ---- L2 targets: constraints & rules (type: feedback with rule force, or pinned)
    _m("timeout", "feedback", "Timeout on every payments API call",
       "Always add a timeout to every call to the payments API; it hangs under load",
       "payments.api.timeouts", """
Always pass an explicit timeout (5 s connect, 10 s read) on every HTTP call to the payments
API, and retry idempotent GETs at most twice.

**Why:** under load the provider keeps connections open without answering; a worker without a
timeout hung for 40 minutes and blocked the whole billing queue in March.

**How to apply:** every client, script and job that talks to it, including one-off tools.
""", 50),
    _m("force_push", "feedback", "Never force-push to main",
       "Never rewrite history on main or release branches; fix forward with a new commit",
       "git.main_branch", """
Never force-push to `main` or any `release/*` branch. Mistakes are fixed with a revert or a
new commit.

**Why:** a force-push in January dropped two colleagues' merged work and broke the deploy
tags.

**How to apply:** rebase and squash only on your own feature branches, before review.
""", 140),
    _m("migrations", "feedback", "Migrations must be backwards compatible",
       "Schema migrations must work with the previous release still running: expand, then "
       "contract", "database.migrations", """
Every schema migration must be backwards compatible with the release before it, because old
and new pods run side by side during a rollout. Add columns as nullable (or with a default),
backfill, deploy the code, and only then tighten constraints or drop things.

**Why:** a migration that renamed a column took billing down for 12 minutes mid-rollout.
""", 85),
    _m("lint", "feedback", "提交前务必运行 make lint",
       "每次提交代码之前务必先跑 make lint 和 make test，CI 不通过的提交会被退回",
       "workflow.precommit", """
提交之前务必先在本地运行 `make lint` 和 `make test`，全部通过再 push。

**原因：** CI 排队很慢，一个格式问题会浪费半小时。
""", 35),
    _m("pii_logs", "feedback", "千万不要在日志里记录个人信息",
       "千万不要把用户的邮箱、手机号、地址写进日志；需要定位时只记录用户 ID",
       "logging.pii", """
千万不要在日志中输出邮箱、手机号、收货地址等个人信息。排查问题时只记录内部用户 ID 和请求 ID。

**原因：** 日志会同步到第三方平台，去年审计时因为这个被点名。
""", 25),
    _m("deps", "feedback", "Ask before adding a dependency",
       "Never add a new third-party package to a service without asking first",
       "dependencies.new", """
Never add a new third-party dependency to a service on your own; propose it first with the
reason and the licence. The standard library or an existing dependency is preferred.

**Why:** every package is a security review and an upgrade chore for the platform team.
""", 65),
    _m("release_notes", "feedback", "Release notes are reviewed by Priya",
       "Release notes and changelog posts go to Priya for review before they are published",
       "release.notes", """
Drafts of release notes and changelog posts are sent to Priya (product marketing) and
published only after her OK.

**Why:** customers quote the changelog in support tickets; wording matters.
""", 20, pinned=True),
    _m("friday", "feedback", "禁止周五下午部署生产环境",
       "周五下午禁止发布到生产环境，紧急修复需要值班负责人批准",
       "deploy.friday", """
周五中午十二点以后禁止部署生产环境。真正紧急的修复需要当周值班负责人在群里明确批准。

**原因：** 周末没人盯监控，上次周五发布导致周六凌晨告警。
""", 15),
    _m("iso_dates", "feedback", "Dates always in ISO 8601",
       "Always write dates as YYYY-MM-DD in anything a customer or colleague reads",
       "style.dates", """
Always write dates as ISO 8601 (`2026-03-04`), never `3/4/26` or `4 March`, in emails,
UI strings, reports and commit messages.

**Why:** the team spans Portugal, Germany and the US; `3/4` was misread twice.
""", 55),
    _m("secrets", "feedback", "Secrets go into sops, never into the repo",
       "Never commit credentials; every secret value lives in the sops-encrypted config",
       "security.secrets", """
Never commit API keys, tokens or passwords, not even for staging. Secret values go into the
sops-encrypted `deploy/secrets.*.yaml` files and are read from the environment at runtime.

**Why:** a staging key pushed to GitHub was abused within an hour last year.
""", 110),
    # ---- L2 distractors (feedback on neighbouring topics, no rule force or superseded)
    _m("small_prs", "feedback", "Prefers small pull requests",
       "Pull requests of about 400 changed lines or fewer are easier to review",
       "review.pr_size", "Split large changes into a stack of small PRs when it is natural.",
       45),
    _m("conventional", "feedback", "Conventional comments in reviews",
       "Review comments start with a label such as nit:, question: or issue:",
       "review.comments", "Labels make it clear which comments block a merge.", 70),
    _m("friday_old", "feedback", "Deploys are fine any day",
       "Deploying to production is fine any weekday as long as CI is green",
       "deploy.friday", "Any weekday works; CI green is the only gate.", 200,
       superseded_by="friday"),
    _m("payments_sdk", "feedback", "Use the official payments SDK",
       "The provider's official Go SDK is preferred over hand-written HTTP clients",
       "payments.sdk", "The SDK handles idempotency keys and webhook signatures.", 75),
    _m("logs_json", "feedback", "Structured logs in JSON",
       "Services log one JSON object per line with request_id and user_id fields",
       "logging.format", "Use the shared logger package; no printf-style logs.", 90),
    _m("zh_review", "feedback", "代码评审尽量当天回复",
       "收到评审请求后尽量当天给出意见", "review.latency",
       "当天看不完的话先回复一句大概什么时候看。", 50),
    # ---- L3 targets: facts & lessons (project / reference memories)
    _m("payments_v2", "project", "Payments v2 launch moved to March",
       "The switch to the provider's v2 API is postponed to March because of the PSD2 audit",
       "payments.v2_launch", """
The cut-over of billing to the provider's v2 API moves from January to 16 March: the PSD2
audit has to sign off the new 3-D Secure flow first.

**How to apply:** keep the v1 client maintained until then; no v1 deprecation work this
quarter.
""", 12),
    _m("runbook", "reference", "On-call runbooks are in Confluence OPS",
       "Incident runbooks and escalation contacts live in the Confluence space OPS",
       "oncall.runbooks", """
Runbooks (one per alert), escalation contacts and the incident template are in the Confluence
space **OPS** → "Runbooks". The PagerDuty alerts link straight to them.
""", 160),
    _m("grafana", "reference", "Checkout latency dashboard",
       "Grafana board 'checkout / p95' shows request latency per endpoint of the checkout flow",
       "observability.checkout", """
Grafana → folder *Commerce* → board **checkout / p95**: p50/p95/p99 per endpoint, split by
region, with deploy markers.
""", 70),
    _m("zh_freeze", "project", "移动端 3.0 功能冻结",
       "移动端 3.0 版本 4 月 10 日功能冻结，之后只修 bug", "mobile.v3_freeze", """
移动端 3.0 版本定在 4 月 10 日功能冻结，之后只允许修复缺陷，5 月初上架。
""", 18),
    _m("figma", "reference", "Design tokens in Figma 'Core UI 2026'",
       "Colour, spacing and type tokens come from the Figma library 'Core UI 2026'",
       "design.tokens", """
The source of truth for colours, spacing and typography is the Figma library **Core UI 2026**;
the `tokens.json` in the web repo is exported from it by the design team, never edited by
hand.
""", 100),
    # ---- L3 distractors (project / reference on neighbouring topics)
    _m("payments_provider", "reference", "Payments provider status page",
       "The payment provider publishes incidents on status.paynorth.example",
       "payments.status_page", "Check the status page before opening a ticket with them.", 60),
    _m("billing_owner", "project", "Invoice PDF redesign",
       "Invoices get a new PDF layout with the carrier's logo this quarter",
       "billing.invoice_pdf", "Design done; implementation planned for sprint 14.", 25),
    _m("web_release", "project", "Web app release train every two weeks",
       "The web app ships every second Wednesday", "web.release_train",
       "Cut on Tuesday, ship Wednesday morning.", 140),
    _m("zh_backend", "project", "后端 API 文档迁移到 Redocly",
       "对外 API 文档从 Swagger UI 迁移到 Redocly", "docs.api_portal", "迁移预计下个月完成。", 33),
    _m("logs_retention", "reference", "Log retention is 30 days",
       "Application logs are kept 30 days in Loki, audit logs one year", "logging.retention",
       "Older logs are in cold storage and need a ticket to restore.", 150),
)


# --------------------------------------------------------------------------- notes (L3)

NOTES: dict[str, str] = {
    # targets
    "Projects/Warehouse robots pilot.md": """---
tags: [project, warehouse]
created: 2026-05-02
---
# Warehouse robots pilot

Six autonomous carts ran for eight weeks in the Porto distribution centre.

## Results
- Picking time per order down 23 %, mostly on the long aisles.
- Two carts got stuck daily at the loading ramp: the floor markings were worn.
- Staff liked them after week three; the night shift asked to keep them.

## Next
Extend to Valongo once the ramp floor is repainted; budget request in Q3.
""",
    "Notes/Why Postgres over MongoDB.md": """---
tags: [decision, database]
---
# Why Postgres over MongoDB

We chose PostgreSQL for the billing rewrite in 2025.

- Invoices, credit notes and payments are relational; we join them constantly.
- We need transactions across several tables when a payment settles.
- JSONB covers the few loose documents (carrier metadata).
- The team already ran Postgres; nobody had operated a Mongo replica set.
""",
    "学习/分布式锁的坑.md": """---
tags: [学习, redis]
---
# 分布式锁的坑

用 Redis 的 SET NX PX 实现锁时踩过的坑：

1. 锁过期了但业务还没执行完，另一个进程拿到锁，两个人同时改同一张单。
2. 释放锁时要先比较 value，否则会删掉别人的锁，要用 Lua 脚本保证原子性。
3. 主从切换时锁可能丢失，Redlock 也有争议。真正需要强一致时用数据库行锁或者 fencing token。
""",
    "Lessons/Postmortem cache stampede.md": """---
tags: [postmortem]
date: 2026-02-11
---
# Postmortem: cache stampede on the rates service

At 09:00 every rate card in Redis had the same TTL and they all lapsed together. Thousands of
requests went to Postgres at once; p99 went from 80 ms to 14 s for nine minutes.

## Lessons
- Add random jitter to TTLs.
- Let one request rebuild a key while others serve the stale value (request coalescing).
- Alert on the database connection pool, not only on latency.
""",
    # distractors
    "Projects/Carrier onboarding.md": """---
tags: [project]
---
# Carrier onboarding

New carriers sign the framework agreement, then upload their tariffs as CSV. The import job
validates zones and weight bands before the tariffs go live.
""",
    "Notes/Redis usage guidelines.md": """---
tags: [redis]
---
# Redis usage guidelines

Keys are namespaced by service (`billing:…`). Every key gets a TTL. No Lua scripts longer than
a screen. Redis is a cache, never the system of record.
""",
    "Notes/Choosing a queue.md": """---
tags: [decision]
---
# Choosing a queue

Compared RabbitMQ, NATS and Postgres-backed queues for the billing jobs. We went with a
Postgres table and `SKIP LOCKED`: one less system to run, throughput is plenty.
""",
    "Projects/Porto office move.md": """---
tags: [project]
---
# Porto office move

The Porto team moves to the new office near Trindade in June. Desks, network and the
printer are booked; parking is still open.
""",
    "学习/数据库索引.md": """---
tags: [学习]
---
# 数据库索引笔记

联合索引遵循最左前缀原则；区分度低的列放后面。用 EXPLAIN ANALYZE 看实际执行计划，而不是只看估算。
""",
    "Lessons/Retro billing queue.md": """---
tags: [retro]
---
# Retro: billing queue backlog

The invoice queue backed up for an afternoon because one worker blocked on a slow upstream.
We added a queue-depth alert and a dashboard panel.
""",
    "Notes/API pagination options.md": """---
tags: [api]
---
# API pagination options

Offset/limit is simple but drifts when rows are inserted; keyset (cursor) paging is stable but
cannot jump to page N. Page tokens can hide either.
""",
}


# --------------------------------------------------------------------------- events (L4)

#: Daily-note entries by days before ``today``. Targets are marked in :func:`_probes`.
DAILY: dict[int, str] = {
    0: "- Morning: filled in Ana's school trip form and booked the plumber for Thursday.\n"
       "- Started the Q1 billing report outline.",
    1: "- Finished the invoice PDF export: carrier logo, ISO dates, page numbers.\n"
       "- Reviewed Tomás's PR for the tariff importer.\n- 10 km easy run.",
    2: "- Standup. Ticket grooming for sprint 14.\n- Long lunch with Inês.",
    3: "- 14:05–14:50 production outage: checkout returned 502s because the TLS certificate "
       "on the load balancer had lapsed. Renewed manually; added an expiry alert.\n"
       "- Wrote the incident timeline.",
    4: "- Interval session 6×800 m.\n- Pairing on the tariff import validation.",
    6: "- Meeting with Tomás and Priya about the public API: we go with cursor-based paging "
       "for all list endpoints; offset paging is deprecated in v3 and removed in v4.\n"
       "- Dinner at Tasca do Chico.",
    7: "- Quiet day. Read about keyset pagination performance.\n- Groceries.",
    8: "- 和房东谈了续租：房租上涨 5%，签两年，热水器由房东负责更换。\n- 晚上去上葡语课。",
    9: "- Sprint 13 demo went fine.\n- Long run 24 km.",
    10: "- Billing queue alerts tuned.\n- Call with the accountant about VAT filings.",
    11: "- Worked from home; Ana had a cold.",
    12: "- Dentist 09:30: one filling in a lower molar, next check-up in six months.\n"
        "- Afternoon: code review backlog.",
    13: "- Prepared the API review slides.\n- Swimming lesson with Ana.",
    14: "- Team offsite in Sintra: agreed on three goals for the quarter — invoice latency under "
        "2 s, carrier self-service onboarding, and on-call load below four pages a week.",
    15: "- Travel back from Sintra.",
    16: "- Reading: Designing Data-Intensive Applications, chapter 7.",
    18: "- Planning the Berlin trip for the marathon expo.",
    19: "- Budget review for Q3 warehouse work.",
    20: "- The dentist's office called to move my appointment to next week.\n- Tax papers.",
}

#: Session logs: ``(file name, days before today, body)``; written with a ``date:`` property.
SESSIONS: tuple[tuple[str, int, str], ...] = (
    ("Flaky checkout test hunt", 5, """
Pairing session with Claude on `TestCheckoutSettlement`, which failed about one run in ten.

- Reproduced with `-count=50`; failures only when packages ran in parallel.
- Root cause: two test packages shared one temp directory for the SQLite fixture.
- Fix: `t.TempDir()` per test; removed the retry wrapper we had added in despair.
"""),
    ("Ingest jobs port to polars", 15, """
Session porting the nightly ingest jobs from pandas to polars.

- Memory use of the tariff job dropped from 6 GB to 900 MB.
- Date parsing differed: polars wanted an explicit format for `dd/mm/yyyy`.
- The carrier-zones join silently dropped rows with null zone ids — fixed with a left join.
"""),
    ("重构通知服务", 2, """
和 Claude 一起重构通知服务（邮件和短信推送）。

- 把发送逻辑拆成 Sender 接口，邮件和短信各自实现。
- 失败重试改成指数退避，最多五次。
- 发现模板里写死了公司地址，改成配置项。
"""),
    ("Billing report queries", 9, """
Session on slow SQL for the monthly billing report: added a composite index on
(carrier_id, issued_at) and rewrote a correlated subquery as a join. 40 s → 1.2 s.
"""),
)


# --------------------------------------------------------------------------- probes


def _probes(paths: dict[str, str], today: dt.date) -> list[Probe]:
    """The 40 probes, with memory keys, note paths and day offsets resolved to paths."""
    def day(offset: int) -> str:
        return f"Daily/{(today - dt.timedelta(days=offset)).isoformat()}.md"

    def session(name: str) -> str:
        return f"Sessions/{name}.md"

    L1, L2, L3, L4 = LAYERS
    return [
        Probe(L1, "what do I do for a living", paths["job"], "identity, no shared words"),
        Probe(L1, "which language should the new invoice-matching service be written in",
              paths["languages"], "preference applied to a task"),
        Probe(L1, "how long should your replies to me be", paths["concise"],
              "style preference, paraphrased"),
        Probe(L1, "schedule a call with the Berlin team tomorrow at a good hour",
              paths["lisbon"], "task that needs the user's time zone"),
        Probe(L1, "suggest something I could cook for dinner tonight", paths["vegetarian"],
              "task that needs the diet; loosely related"),
        Probe(L1, "给我讲讲这段代码在做什么，顺便补上注释", paths["zh_explain"],
              "ZH: language preference for explanations and comments"),
        Probe(L1, "how do I set up a shortcut to format the file on save", paths["editor"],
              "needs the editor; names none"),
        Probe(L1, "plan my training week", paths["marathon"], "loose: training goal"),
        Probe(L1, "什么时候安排需要深度思考的工作比较好", paths["zh_morning"],
              "ZH: paraphrase of the schedule preference"),
        Probe(L1, "can we put the design review at 16:30 on Wednesday", paths["pickup"],
              "task that collides with the afternoon constraint"),
        Probe(L2, "write a helper that fetches invoices from the payments service",
              paths["timeout"], "loose: the rule constrains the task, no shared rule words"),
        Probe(L2, "I need to clean up the commit history on the default branch",
              paths["force_push"], "paraphrase: 'default branch' for main"),
        Probe(L2, "add a NOT NULL column for the carrier reference to the orders table",
              paths["migrations"], "loose: a schema change the rule governs"),
        Probe(L2, "代码改好了，帮我写个提交信息然后推上去", paths["lint"],
              "ZH, loose: about to commit"),
        Probe(L2, "add some debug logging to the signup endpoint so we can see who registers",
              paths["pii_logs"], "EN query, ZH rule; loose"),
        Probe(L2, "parsing these dates by hand is painful, is there a library we can pull in",
              paths["deps"], "loose: about to add a dependency"),
        Probe(L2, "draft the changelog post for version 2.4 and put it on the blog",
              paths["release_notes"], "pinned rule without rule words"),
        Probe(L2, "今天周五下午，这个修复能不能直接上线", paths["friday"],
              "ZH; the superseded 'any day' rule must not win"),
        Probe(L2, "format the due day in the reminder email we send customers",
              paths["iso_dates"], "loose: a date in user-facing text"),
        Probe(L2, "where should I put the Stripe key for the staging environment",
              paths["secrets"], "paraphrase: 'key' for credential"),
        Probe(L3, "when does billing go live on the provider's new API version",
              paths["payments_v2"], "project fact, paraphrased"),
        Probe(L3, "where are the step-by-step instructions for handling an alert at night",
              paths["runbook"], "reference, no shared nouns"),
        Probe(L3, "where can I see how slow paying for an order is", paths["grafana"],
              "reference, paraphrase of checkout latency"),
        Probe(L3, "手机 App 新版本什么时候停止加新功能", paths["zh_freeze"],
              "ZH paraphrase of the feature freeze"),
        Probe(L3, "where do the colour values in our stylesheet come from", paths["figma"],
              "reference, paraphrase of design tokens"),
        Probe(L3, "how did the trial with self-driving carts in the warehouse go",
              "Projects/Warehouse robots pilot.md", "ordinary note; distractor office move"),
        Probe(L3, "reasoning behind picking a relational store for billing",
              "Notes/Why Postgres over MongoDB.md", "decision note; distractor queue choice"),
        Probe(L3, "用 Redis 做互斥有哪些问题", "学习/分布式锁的坑.md",
              "ZH lesson; distractor Redis guidelines"),
        Probe(L3, "what went wrong when all the cached entries expired at the same moment",
              "Lessons/Postmortem cache stampede.md", "lesson; distractor billing queue retro"),
        Probe(L3, "how are new freight partners added and their price lists imported",
              "Projects/Carrier onboarding.md", "ordinary note, paraphrase"),
        Probe(L4, "what did I get done yesterday", day(1), "time expression only"),
        Probe(L4, "what did we settle last week on how list endpoints page through results",
              day(6), "event + 'last week'; distractor pagination note and day 7"),
        Probe(L4, "when was my last dental appointment", day(12),
              "event; distractor day 20 (appointment moved)"),
        Probe(L4, "the day the site broke because of an HTTPS problem", day(3),
              "event, paraphrased"),
        Probe(L4, "租房合同的事后来怎么谈的", day(8), "ZH event"),
        Probe(L4, "what have I noted down so far today", day(0), "time expression only"),
        Probe(L4, "what did we agree on at the team trip out of town two weeks ago", day(14),
              "event + 'two weeks ago'"),
        Probe(L4, "the session where we worked out why an integration test failed at random",
              session("Flaky checkout test hunt"), "session log, paraphrased"),
        Probe(L4, "when did we move the nightly data jobs off pandas and what broke",
              session("Ingest jobs port to polars"), "session log; distractor dependency rule"),
        Probe(L4, "前天重构消息推送那次改了哪些地方", session("重构通知服务"),
              "ZH session log + 'the day before yesterday'"),
    ]


# --------------------------------------------------------------------------- writing


def _ulid(name: str, created: dt.datetime) -> str:
    millis = int(created.timestamp() * 1000)
    tail = hashlib.sha256(name.encode("utf-8")).digest()[:10]
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + tail))


def _memory_paths() -> dict[str, str]:
    """Memory key → vault-relative path (depends only on the names, never on the date)."""
    taken = [f"{MEMORY_FOLDER}/{p.name}" for p in (VAULT_EXAMPLE / MEMORY_FOLDER).glob("*.md")]
    paths: dict[str, str] = {}
    for memory in MEMORIES:
        path = memory_path(taken, MEMORY_FOLDER, memory.name)
        taken.append(path)
        paths[memory.key] = path
    return paths


def memory_types() -> dict[str, MemoryType]:
    """Vault-relative path → intended type, for every memory file the probe set writes."""
    paths = _memory_paths()
    return {paths[m.key]: m.type for m in MEMORIES}


def _created(today: dt.date, age_days: int, index: int) -> dt.datetime:
    day = today - dt.timedelta(days=age_days)
    return dt.datetime(day.year, day.month, day.day, 8 + index % 10, (index * 7) % 60,
                       tzinfo=dt.UTC)


def _write(root: Path, path: str, data: bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _rebuild_memory_index(root: Path) -> None:
    entries = []
    for file in sorted((root / MEMORY_FOLDER).glob("*.md")):
        if file.name.casefold() == "memory.md":
            continue
        meta = parse_note(f"{MEMORY_FOLDER}/{file.name}", file.read_bytes()).memory
        if meta is None or meta.valid_to is not None:
            continue
        entries.append(IndexEntry(name=meta.name, file=file.name, type=meta.type,
                                  description=meta.description, pinned=meta.pinned,
                                  resident=meta.type in ("user", "feedback") or meta.pinned,
                                  updated=meta.updated))
    text = build_memory_index(entries, memory_folder=MEMORY_FOLDER)
    (root / MEMORY_FOLDER / "MEMORY.md").write_text(text, encoding="utf-8")


def write_probe_vault(root: Path, today: dt.date) -> list[Probe]:
    """Copy ``vault_example/`` into ``root`` (created; must not exist or be empty) and write
    the probe files dated relative to ``today``; return the 40 probes (10 per layer, in
    layer order). Deterministic in ``today``. Raises ``FileExistsError`` when ``root`` holds
    files."""
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"probe_set: {root} is not empty")
    shutil.copytree(VAULT_EXAMPLE, root, dirs_exist_ok=True)
    paths = _memory_paths()
    by_key = {m.key: m for m in MEMORIES}
    for index, memory in enumerate(MEMORIES):
        created = _created(today, memory.age_days, index)
        valid_to = None
        if memory.superseded_by is not None:
            newer = by_key[memory.superseded_by]
            valid_to = today - dt.timedelta(days=newer.age_days)
        supersedes = tuple(Path(paths[m.key]).stem for m in MEMORIES
                           if m.superseded_by == memory.key)
        data = render_memory(NewMemory(
            name=memory.name, description=memory.description, type=memory.type,
            id=_ulid(memory.name, created), created=created, updated=created,
            body=memory.body, subject=memory.subject, valid_from=created.date(),
            valid_to=valid_to, supersedes=supersedes, pinned=memory.pinned, source="user",
        ))  # fmt: skip
        _write(root, paths[memory.key], data)
    _rebuild_memory_index(root)
    for path, text in NOTES.items():
        _write(root, path, text.encode("utf-8"))
    for offset, entries in DAILY.items():
        day = today - dt.timedelta(days=offset)
        path = f"Daily/{day.isoformat()}.md"
        if (root / path).is_file():  # vault_example's own day: one daily note per day
            text = (root / path).read_text(encoding="utf-8").rstrip("\n") + f"\n{entries}\n"
        else:
            text = (f"---\ntags: [daily]\ndate: {day.isoformat()}\n---\n"
                    f"# {day.strftime('%A %d %B %Y')}\n\n{entries}\n")
        _write(root, path, text.encode("utf-8"))
    for name, offset, body in SESSIONS:
        day = today - dt.timedelta(days=offset)
        text = (f"---\ndate: {day.isoformat()}\ntags: [session]\n---\n"
                f"# {name}\n{body}")
        _write(root, f"Sessions/{name}.md", text.encode("utf-8"))
    return _probes(paths, today)
