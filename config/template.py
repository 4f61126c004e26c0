"""The commented ``config.toml`` that ``dreamd init`` writes.

Generated from the settings models, so it lists every section and field with its built-in
default (commented out) and the field's one-line description, and cannot drift from the model.
Only ``vault.path`` is set. Commented ``[development]`` and ``[production]`` tables show profiles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from config.settings import Settings

__all__ = ["render_config"]

#: Example values shown for settings whose default is "unset" (TOML has no null).
_EXAMPLES: dict[str, object] = {
    "storage.uri": "/srv/dreamd/lancedb",
    "storage.device": "laptop",
    "storage.options": {"aws_endpoint": "https://s3.eu-west-1.amazonaws.com",
                        "aws_region": "eu-west-1"},
    "embedding.base_url": "https://api.openai.com/v1",
    "llm.model": "qwen2.5:7b-instruct",
    "llm.intent.model": "qwen2.5:7b-instruct",
    "llm.verifier.model": "qwen2.5:1.5b-instruct",
    "llm.judge.model": "qwen2.5:7b-instruct",
    "llm.profile.model": "qwen2.5:7b-instruct",
    "metrics.textfile": "/var/lib/node_exporter/textfile_collector/dreamd.prom",
}

_HEADER = """\
# dreamd configuration, written by `dreamd init`.
#
# Layers, lowest to highest:
#   built-in defaults
#   < [default] below
#   < the profile chosen with DREAMD_ENV or --env ([development], [production], any name)
#   < DREAMD_* environment variables, `__` between levels (DREAMD_EMBEDDING__BATCH_SIZE=32)
#   < command-line flags (--set embedding.batch_size=32)
# Every value except vault.path is the built-in default, commented out: uncomment to change it.
# `dreamd config show` prints each value and where it came from; `dreamd config validate`
# checks this file. Unknown keys are errors, so a typo never passes silently.
"""

_PROFILES = """\
# Profiles: values that replace [default] when DREAMD_ENV (or --env) names them.
#
# [development]
# auto_dream.time_gate.min_hours_between_dream = 1
# retrieval.intent_analysis.cache_enabled = false
# retrieval.progressive_search.enabled = false
#
# [production]
# auto_dream.time_gate.min_hours_between_dream = 48
# retrieval.intent_analysis.cache_enabled = true
# retrieval.progressive_search.enabled = true
# metrics.enabled = true
"""


def _toml_value(value: Any) -> str:
    """TOML literal of a default value: bool, number, string/path, list, or inline table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        pairs = [f"{key} = {_toml_value(item)}" for key, item in value.items() if item is not None]
        return "{ " + ", ".join(pairs) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _describe(model: BaseModel | type[BaseModel]) -> str:
    doc = (type(model) if isinstance(model, BaseModel) else model).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _section(model: BaseModel, key: str, vault_path: Path) -> list[str]:
    lines = ["", f"# {_describe(model)}", f"[default.{key}]"]
    nested: list[tuple[str, BaseModel]] = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        dotted = f"{key}.{name}"
        if isinstance(value, BaseModel):
            nested.append((name, value))
            continue
        if info.description:
            lines.append(f"# {info.description}")
        if dotted == "vault.path":
            lines.append(f"path = {_toml_value(vault_path)}")
        elif value is None or (value == {} and dotted in _EXAMPLES):
            example = _EXAMPLES.get(dotted, "")
            lines.append(f"# {name} = {_toml_value(example)}    # example; unset by default")
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            lines.append(f"# {name} = [")
            lines.extend(f"#   {_toml_value(item)}," for item in value)
            lines.append("# ]")
        else:
            lines.append(f"# {name} = {_toml_value(value)}")
    for name, sub in nested:
        lines.extend(_section(sub, f"{key}.{name}", vault_path))
    return lines


def render_config(vault_path: Path) -> str:
    """Text of a commented ``config.toml`` for ``vault_path`` (absolute, ``~`` expanded).

    Loads with :func:`config.loading.load_settings` to the defaults plus ``vault.path``; the
    commented profile tables load too once uncommented.
    """
    vault = Path(vault_path).expanduser().absolute()
    lines = [_HEADER.rstrip("\n"), "", "[default]"]
    for name, info in Settings.model_fields.items():
        factory = info.default_factory
        if factory is None:
            raise TypeError(f"Settings.{name} has no default factory")
        section = factory()  # type: ignore[call-arg]  # the section's defaults, no env read
        lines.extend(_section(section, name, vault))
    lines.extend(["", _PROFILES.rstrip("\n")])
    return "\n".join(lines) + "\n"
