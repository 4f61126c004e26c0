"""Every key of the seed's configuration (tests/seed-config.json, as written) has a test that
shows what it changes in dreamd, not only that it loads: this file names that test per key and
checks the list is complete and every test named exists."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from config.loading import expand_dotted, flatten, normalise_keys, split_profiles
from config.settings import Settings

TESTS = Path(__file__).resolve().parents[1]
SEED_CONFIG = json.loads((TESTS / "seed-config.json").read_text(encoding="utf-8"))
RETRIEVAL = "daemon/test_retrieval.py"
WRITE_MODES = "daemon/test_write_modes.py"

#: Seed key (snake_case, dotted) -> the tests (``file::function`` under tests/) of its effect.
EFFECT_TESTS: dict[str, tuple[str, ...]] = {
    "cache.enabled": (f"{RETRIEVAL}::test_the_intent_cache_answers_a_query_close_in_meaning",),
    "cache.ttl_hours": (
        f"{RETRIEVAL}::test_the_intent_cache_keeps_what_its_size_and_lifetime_allow",),
    "cache.max_size": (
        f"{RETRIEVAL}::test_the_intent_cache_keeps_what_its_size_and_lifetime_allow",),
    "cache.semantic_threshold": (
        f"{RETRIEVAL}::test_the_intent_cache_keeps_what_its_size_and_lifetime_allow",),
    "obsidian.mode": (f"{WRITE_MODES}::test_direct_mode_never_runs_the_cli",
                      f"{WRITE_MODES}::test_auto_with_obsidian_running_writes_through_the_cli"),
    "obsidian.cli.enabled": (
        f"{WRITE_MODES}::test_cli_disabled_never_runs_the_cli_even_in_cli_mode",),
    "obsidian.cli.timeout_ms": (
        f"{WRITE_MODES}::test_a_hanging_cli_times_out_then_the_file_is_written_directly",),
    "obsidian.direct.atomic_writes": (
        f"{WRITE_MODES}::test_atomic_writes_off_writes_memory_files_in_place",),
    "obsidian.fallback.enabled": (
        f"{WRITE_MODES}::test_fallback_disabled_fails_clearly_and_leaves_the_files",),
    "obsidian.fallback.max_retries": (
        f"{WRITE_MODES}::test_a_cli_that_fails_twice_succeeds_on_the_third_attempt",
        f"{WRITE_MODES}::test_a_cli_that_fails_three_times_falls_back_to_direct"),
    "auto_dream.enabled": (f"{RETRIEVAL}::test_the_dream_gate_keys_decide_when_a_dream_is_due",),
    "auto_dream.time_gate.min_hours_between_dream": (
        f"{RETRIEVAL}::test_each_seed_profile_override_takes_effect",),
    "auto_dream.time_gate.max_hours_between_dream": (
        f"{RETRIEVAL}::test_the_dream_gate_keys_decide_when_a_dream_is_due",),
    "auto_dream.session_gate.min_sessions_for_dream": (
        f"{RETRIEVAL}::test_the_dream_gate_keys_decide_when_a_dream_is_due",),
    "auto_dream.session_gate.scan_interval_ms": (
        "daemon/test_dream.py::test_the_daemon_catches_up_on_a_missed_dream_at_start_up",),
    "retrieval.default_strategy": (
        f"{RETRIEVAL}::test_the_default_strategy_chooses_the_engines",),
    "retrieval.intent_analysis.enable_llm": (
        f"{RETRIEVAL}::test_an_llm_intent_is_used_when_rules_are_unsure_and_never_breaks_search",),
    "retrieval.intent_analysis.enable_rules": (
        f"{RETRIEVAL}::test_the_intent_rules_and_their_threshold_decide_when_the_model_is_asked",),
    "retrieval.intent_analysis.llm_confidence_threshold": (
        f"{RETRIEVAL}::test_an_llm_intent_is_used_when_rules_are_unsure_and_never_breaks_search",),
    "retrieval.intent_analysis.rule_confidence_threshold": (
        f"{RETRIEVAL}::test_the_intent_rules_and_their_threshold_decide_when_the_model_is_asked",),
    "retrieval.intent_analysis.cache_enabled": (
        f"{RETRIEVAL}::test_each_seed_profile_override_takes_effect",),
    "retrieval.progressive_search.enabled": (
        f"{RETRIEVAL}::test_progressive_search_off_runs_every_stage",
        f"{RETRIEVAL}::test_each_seed_profile_override_takes_effect"),
    "retrieval.progressive_search.stages": (
        f"{RETRIEVAL}::test_a_stage_past_its_deadline_is_skipped_and_the_search_still_answers",),
    "fusion.max_tokens": (f"{RETRIEVAL}::test_the_context_budget_keys_bound_what_goes_in",),
    "fusion.enable_semantic_deduplication": (
        f"{RETRIEVAL}::test_semantic_deduplication_off_returns_every_copy",),
    "fusion.semantic_similarity_threshold": (
        f"{RETRIEVAL}::test_near_identical_notes_come_back_once",),
    "fusion.token_budget.dynamic": (
        f"{RETRIEVAL}::test_the_context_budget_keys_bound_what_goes_in",),
    "fusion.token_budget.max_tokens_per_memory": (
        f"{RETRIEVAL}::test_the_context_budget_keys_bound_what_goes_in",),
    "metrics.enabled": (f"{RETRIEVAL}::test_each_seed_profile_override_takes_effect",
                        "daemon/test_metrics.py::test_disabled_metrics_listen_nowhere"),
}


def seed_keys() -> set[str]:
    """Every leaf key the seed's file sets, in its default part or in a profile."""
    default, profiles = split_profiles(SEED_CONFIG)
    keys: set[str] = set()
    for table in (default, *profiles.values()):
        normalised, unknown = normalise_keys(Settings, expand_dotted(table))
        assert not unknown, unknown
        keys |= set(flatten(normalised))
    return keys


def test_every_seed_key_names_a_test_of_its_effect() -> None:
    assert set(EFFECT_TESTS) == seed_keys()


def test_every_named_effect_test_exists() -> None:
    defined: dict[str, set[str]] = {}
    for tests in EFFECT_TESTS.values():
        for node in tests:
            file, _, name = node.partition("::")
            if file not in defined:
                tree = ast.parse((TESTS / file).read_text(encoding="utf-8"))
                defined[file] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert name in defined[file], node
