"""Which layer a note belongs to, when it happened, and how important it is (pure).

Layers are DESIGN.md's (from the seed framework):

- L1 identity & preferences: ``user`` memories;
- L2 constraints & rules: ``feedback`` memories with the force of a rule
  (:func:`has_rule_force`) and every pinned memory;
- L3 facts & lessons: ``project`` and ``reference`` memories, other feedback, ordinary notes;
- L4 events: daily notes (a file name that starts with a date), session logs and journal
  entries (a dated note in a ``Daily``/``Journal``/``Sessions``/``日记`` folder or tagged so);
- L5 procedures: how-to notes (title "How to …", "如何 …", a ``howto``/``procedure``/``runbook``
  tag or folder); a template ("Recipe Template", anything in ``Templates/``) is a blank form,
  never a procedure or an event (L3).

L1 and L2 form the *resident* set, which every assembled context carries.

Importance follows Park et al., "Generative Agents: Interactive Simulacra of Human Behavior"
(UIST 2023), where an LLM rated each memory's poignancy from 1 to 10; dreamd rates it without an
LLM from three signals (:func:`importance`): a type prior (rules and identity 1.0, instructions
0.8, preferences 0.6, facts 0.4: the retrieval issue's priors), salience words ("always",
"never", "务必", "千万" …) and how often the memory was recalled.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection, Mapping
from datetime import date, datetime
from typing import Any

from ccb.names import nfc_key

__all__ = [
    "IMPORTANCE_WEIGHTS",
    "L1_IDENTITY",
    "L2_RULES",
    "L3_FACTS",
    "L4_EVENTS",
    "L5_PROCEDURES",
    "LAYER_WORDS",
    "RECALL_CAP",
    "RESIDENT_LAYERS",
    "TYPE_PRIORS",
    "has_rule_force",
    "importance",
    "is_salient",
    "is_template",
    "note_date",
    "note_layer",
    "type_prior",
]

L1_IDENTITY = 1
L2_RULES = 2
L3_FACTS = 3
L4_EVENTS = 4
L5_PROCEDURES = 5
#: Each layer said by what it holds, for people (``dreamd search`` says why a note of the
#: layer a question asks for ranks higher; ``--layer``'s help names them alike).
LAYER_WORDS = {L1_IDENTITY: "who you are and what you prefer", L2_RULES: "rules you set",
               L3_FACTS: "facts and lessons", L4_EVENTS: "events (daily notes, session logs)",
               L5_PROCEDURES: "how-to notes"}
#: Layers every assembled context carries (DESIGN.md).
RESIDENT_LAYERS = frozenset({L1_IDENTITY, L2_RULES})

#: Type priors of importance (the retrieval issue): rules and identity 1.0, instructions
#: (feedback without the force of a rule) 0.8, preferences 0.6, facts 0.4.
TYPE_PRIORS: Mapping[str, float] = {
    "rule": 1.0, "identity": 1.0, "instruction": 0.8, "preference": 0.6, "fact": 0.4,
}
#: Weights of the three importance signals (our choice: the prior dominates, salience and
#: recalls can lift a fact to the level of an instruction but never above a rule).
IMPORTANCE_WEIGHTS: Mapping[str, float] = {"prior": 0.6, "salience": 0.2, "recalls": 0.2}
#: Recalls beyond this count add nothing more (a capped vote, our choice).
RECALL_CAP = 10

# Salience words: the seed's ("always", "never", "务必", "千万") and their neighbours.
_SALIENT = re.compile(
    r"\b(?:always|never|must|important|critical|crucial|remember|do not|don't|required|"
    r"essential|warning|careful)\b|务必|千万|必须|一定|重要|切记|禁止|不要|严禁|绝不|注意",
    re.IGNORECASE,
)
# Preference vocabulary: a `user` memory that states a taste rather than who the user is.
_PREFERENCE = re.compile(
    r"\b(?:prefers?|preferred|preference|likes?|dislikes?|favou?rite|rather|enjoys?|hates?|"
    r"loves?)\b|喜欢|偏好|习惯|爱好|最爱|讨厌|口味",
    re.IGNORECASE,
)
# Words that give a feedback memory the force of a rule (L2). English modal and absolute
# words, and Chinese 务必 (must), 必须 (must), 千万 (by all means), 禁止 (forbidden),
# 不要 (do not), 一定 (certainly), 切勿 (never), 严禁 (strictly forbidden), 永远 (always),
# 总是 (always), 绝不 (never). The list follows the salience words of the retrieval issue.
_RULE_WORDS = re.compile(
    r"\b(?:must|never|always|do not|don't|mustn't|shall not|required|forbidden|mandatory"
    # a standing instruction: "write commit messages in Chinese from now on", "avoid emoji"
    r"|from now on|going forward|from here on|henceforth|every time|each time|avoid"
    r"|no longer)\b"
    r"|务必|必须|千万|禁止|不要|一定|切勿|严禁|永远|总是|绝不|以后|今后|从现在起|一律|每次|请勿"
    r"|不许|不准|别再",
    re.IGNORECASE,
)


_DATE_PREFIX = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_EVENT_FOLDERS = frozenset({
    "daily", "dailies", "daily notes", "journal", "journals", "diary", "sessions",
    "session logs", "logs", "meetings", "日记", "日志", "会议",
})
_EVENT_TAGS = frozenset({"daily", "journal", "diary", "session", "log", "meeting", "日记"})
_PROCEDURE_TITLE = re.compile(
    r"^(?:how\s+(?:to|do|i)\b|procedure\b|recipe\b|checklist\b|runbook\b|playbook\b|"
    r"steps?\s+to\b|guide\s+to\b|如何|怎么|怎样|步骤|流程)",
    re.IGNORECASE,
)
_PROCEDURE_TAGS = frozenset({
    "howto", "how-to", "procedure", "procedures", "recipe", "runbook", "playbook",
    "checklist", "教程", "流程",
})
_PROCEDURE_FOLDERS = frozenset({
    "how-to", "howto", "how to", "procedures", "runbooks", "playbooks", "recipes", "guides",
    "教程", "流程",
})
#: Folders of note templates (Obsidian's core Templates plugin and Templater default to
#: ``Templates``) and the title ending that names one ("Recipe Template"): a blank form, no
#: procedure and no event, whatever its title or tags say.
_TEMPLATE_FOLDERS = frozenset({"templates", "template", "_templates", "模板", "模版"})
_TEMPLATE_TITLE = re.compile(r"(?i)(?:\btemplate|模板|模版)$")
#: Properties that say what day a note is about, and those that only say when it was edited.
_DATE_KEYS = ("date", "day", "created")
_EDIT_KEYS = ("updated", "modified")


def _folders(path: str) -> list[str]:
    inside = path.split(":", 1)[1] if ":" in path.split("/", 1)[0] else path
    return [nfc_key(part).casefold() for part in inside.split("/")[:-1]]


def note_date(properties: Mapping[str, Any], path: str) -> date | None:
    """When a note happened: its ``date``/``day``/``created`` property (ISO text, first that
    parses), else a date at the start of its file name (``2026-11-30.md``, ``2026-11-30
    standup.md``), else its ``updated``/``modified`` property, else ``None``. An edit stamp
    says when the note was last touched, not what day it is about: a daily note edited two
    days later is still that day's note."""
    for key in _DATE_KEYS:
        day = _property_day(properties.get(key))
        if day is not None:
            return day
    name = path.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    found = _DATE_PREFIX.match(name)
    if found:
        with contextlib.suppress(ValueError):
            return date(int(found[1]), int(found[2]), int(found[3]))
    for key in _EDIT_KEYS:
        day = _property_day(properties.get(key))
        if day is not None:
            return day
    return None


def _property_day(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and len(value) >= 10:
        with contextlib.suppress(ValueError):
            return date.fromisoformat(value[:10])
    return None


def note_layer(
    *, path: str, title: str, memory_type: str | None, properties: Mapping[str, Any],
    tags: Collection[str] = (), text: str = "",
) -> int:
    """The layer (1–5) of one note or memory; ``text`` is its body or description, read for
    the force of a rule (a feedback memory with "must", "never", "务必" … is L2)."""
    if properties.get("pinned") is True:
        return L2_RULES
    if memory_type == "user":
        return L1_IDENTITY
    if memory_type == "feedback":
        return L2_RULES if has_rule_force(text) else L3_FACTS
    if memory_type is not None:
        return L3_FACTS
    folded_tags = {t.casefold().lstrip("#") for t in tags}
    folders = _folders(path)
    name = path.rsplit("/", 1)[-1]
    if is_template(path, title):
        return L3_FACTS
    if _PROCEDURE_TITLE.match(title.strip()) or folded_tags & _PROCEDURE_TAGS or any(
            f in _PROCEDURE_FOLDERS for f in folders):
        return L5_PROCEDURES
    if _DATE_PREFIX.match(name) or ((folded_tags & _EVENT_TAGS or any(
            f in _EVENT_FOLDERS for f in folders)) and note_date(properties, path) is not None):
        return L4_EVENTS
    return L3_FACTS


def is_template(path: str, title: str) -> bool:
    """Is the note a template: in a templates folder (:data:`_TEMPLATE_FOLDERS`) or titled
    "… Template" / "…模板"?"""
    return any(f in _TEMPLATE_FOLDERS for f in _folders(path)) or \
        _TEMPLATE_TITLE.search(title.strip()) is not None


def has_rule_force(text: str) -> bool:
    """True when ``text`` reads as a rule (must, never, always, 务必, 禁止 …): an L2 memory."""
    return _RULE_WORDS.search(text) is not None


def is_salient(text: str) -> bool:
    """True when ``text`` carries a salience word ("always", "never", "务必", "千万" …)."""
    return _SALIENT.search(text) is not None


def type_prior(layer: int, memory_type: str | None, text: str = "") -> float:
    """The type prior of importance (:data:`TYPE_PRIORS`): an L2 rule 1.0; a ``user``
    memory 1.0 for identity or 0.6 for a preference; other feedback (an instruction) 0.8;
    everything else a fact, 0.4."""
    if layer == L2_RULES:
        return TYPE_PRIORS["rule"]
    if memory_type == "user":
        return TYPE_PRIORS["preference" if _PREFERENCE.search(text) else "identity"]
    if memory_type == "feedback":
        return TYPE_PRIORS["instruction"]
    return TYPE_PRIORS["fact"]


def importance(prior: float, *, salient: bool, recalls: int, priority: float = 1.0) -> float:
    """Importance in [0, 1]: ``priority × (0.6·prior + 0.2·salient + 0.2·min(recalls, 10)/10)``
    (:data:`IMPORTANCE_WEIGHTS`, :data:`RECALL_CAP`). ``priority`` is a feedback memory's
    decayed priority (:func:`consistency.lifecycle.feedback_priority`), 1.0 otherwise."""
    w = IMPORTANCE_WEIGHTS
    score = (w["prior"] * prior + w["salience"] * (1.0 if salient else 0.0)
             + w["recalls"] * min(max(recalls, 0), RECALL_CAP) / RECALL_CAP)
    return max(0.0, min(1.0, priority * score))
