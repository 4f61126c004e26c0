"""`describe` (behind `dreamd config show`) and the pure helpers of the loader."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from config import describe, load_settings
from config.loading import expand_dotted, flatten, leaf_keys, normalise_keys, split_profiles
from config.settings import Settings


def test_describe_covers_every_leaf_in_model_order(tmp_path: Path) -> None:
    loaded = load_settings(environ={"DREAMD_CACHE__MAX_SIZE": "9"},
                           overrides={"vault.path": str(tmp_path)})
    rows = describe(loaded)
    keys = [key for key, _, _ in rows]
    assert keys == leaf_keys()
    # storage.options, a table of free keys (LanceDB's), is one leaf; empty, it flattens away
    assert [k for k in keys if k != "storage.options"] == list(
        flatten(loaded.settings.model_dump()))
    assert set(keys) == set(loaded.sources)
    by_key = {key: (value, source) for key, value, source in rows}
    assert by_key["cache.max_size"] == (9, "env:DREAMD_CACHE__MAX_SIZE")
    assert by_key["vault.path"] == (tmp_path, "cli")
    stages, _ = by_key["retrieval.progressive_search.stages"]
    assert isinstance(stages, list)
    assert stages[0] == {"name": "ccb-fast", "limit": 5, "timeout_ms": 100}
    assert by_key["embedding.batch_size"] == (64, "default")


def test_expand_dotted_merges_nested_and_dotted_keys() -> None:
    data = {"a.b": 1, "a": {"c.d": 2, "e": 3}, "f": 4}
    assert expand_dotted(data) == {"a": {"b": 1, "c": {"d": 2}, "e": 3}, "f": 4}


_keys = st.lists(st.text("abcxyz_", min_size=1, max_size=4), min_size=1, max_size=4)


@given(st.dictionaries(_keys.map(".".join), st.integers(), max_size=8))
def test_expand_then_flatten_round_trips_prefix_free_keys(flat: dict[str, int]) -> None:
    # Keys where one is a prefix path of another cannot both be leaves; skip those.
    keys = list(flat)
    if any(a != b and b.startswith(a + ".") for a in keys for b in keys):
        return
    assert flatten(expand_dotted(flat)) == flat


def test_split_profiles_layouts() -> None:
    assert split_profiles({"default": {"a": 1}, "prod": {"a": 2}}) == (
        {"a": 1}, {"prod": {"a": 2}}
    )
    assert split_profiles({"cache": {}, "environments": {"dev": {"x": 1}}}) == (
        {"cache": {}}, {"dev": {"x": 1}}
    )
    assert split_profiles({"cache": {}}) == ({"cache": {}}, {})


def test_normalise_keys_renames_aliases_and_reports_unknown() -> None:
    data = {"autoDream": {"timeGate": {"minHoursBetweenDream": 1}},
            "obsidian": {"cli": {"timeout": 9}},
            "auto_dream": {"enabled": False},
            "cache": {"ttlHour": 1}}
    tree, unknown = normalise_keys(Settings, data)
    assert tree == {"auto_dream": {"time_gate": {"min_hours_between_dream": 1}, "enabled": False},
                    "obsidian": {"cli": {"timeout_ms": 9}}, "cache": {}}
    assert [u.key for u in unknown] == ["cache.ttlHour"]
    assert unknown[0].hint() == " (did you mean 'ttl_hours'?)" or "ttl_hours" in unknown[0].known
