"""What ``dreamd search --explain`` says of a search, in the words of a notes tool's user.

A search's trace (:class:`daemon.retrieval.SearchTrace`) names its stages and settings as
the code does (``ccb-fast``, ``magma-extend``, ``both-priority-ccb``, layer ``L4``); the
``--json`` output keeps those names. Here each is said by what it does: the search of names
and titles, the search by meaning and by words, the links from the notes found, "events
(daily notes, session logs)". Pure.
"""

from __future__ import annotations

from daemon.retrieval import SearchTrace, StageTrace
from daemon.terminal_text import counted
from magma.intent import Intent
from magma.layers import LAYER_WORDS

__all__ = [
    "STAGE_WORDS",
    "intent_words",
    "layer_words",
    "lookup_words",
    "stage_words",
    "strategy_words",
    "summary_words",
]

#: Memory types by what they hold (DESIGN.md, the memory file's ``type``).
_TYPE_WORDS = {"user": "what you told about yourself (user memories)",
               "feedback": "rules you set (feedback memories)",
               "project": "facts about your projects (project memories)",
               "reference": "pointers to where things are (reference memories)"}
#: The layer a memory type already says (layer 1 holds the ``user`` memories, layer 2 the
#: ``feedback`` rules): said once.
_SAID_BY_TYPE = {1: "user", 2: "feedback"}
#: The stages of :func:`daemon.retrieval._run_stages`, and the LLM's check after them.
STAGE_WORDS = {
    "ccb-fast": "search of names and titles (names, titles, aliases, descriptions, dates)",
    "magma-extend": "search by meaning and by words (the index: meaning, full text, "
                    "memories)",
    "full-fusion": "links from the notes found (notes linked to the best hits)",
    "verifier": "LLM's check of the hits",
}
#: ``retrieval.default_strategy``: which searches run and which leads on a near tie, said
#: when each ran, and when some did not (``{missed}``: which, and why).
_STRATEGY_WORDS = {
    "both-priority-ccb": (
        "every search ran; on a near tie a note found by its name or title comes first",
        "every search was to run, but {missed}; on a near tie a note found by its name or "
        "title comes first"),
    "both-priority-magma": (
        "every search ran; on a near tie a note found by meaning, words or links comes first",
        "every search was to run, but {missed}; on a near tie a note found by meaning, words "
        "or links comes first"),
    "ccb-only": (
        "only names, titles, descriptions and dates were searched, not the meaning",
        "only names, titles, descriptions and dates were to be searched, not the meaning, "
        "but {missed}"),
    "magma-only": (
        "only the index was searched (meaning, words, links), not the names",
        "only the index was to be searched (meaning, words, links), not the names, but "
        "{missed}"),
}
#: The stages as the strategy's line names one that did not run.
_STAGE_NAMES = {"ccb-fast": "the search of names and titles",
                "magma-extend": "the search by meaning and by words",
                "full-fusion": "the search along the links from the notes found"}
#: Why a stage the strategy runs did not (:class:`daemon.retrieval.StageTrace` status), said
#: of one stage and of several.
_NOT_RUN_WORDS = {
    "skipped: deadline": ("ran out of time", "ran out of time"),
    "skipped: error": ("failed", "failed"),
    "skipped: confident": ("was not needed", "were not needed"),
    "skipped: no query vector": ("did not run", "did not run"),
    "off": ("is off (retrieval.progressive_search.stages)",
            "are off (retrieval.progressive_search.stages)"),
    "off: retrieval.graph_step": ("is off (retrieval.graph_step)",
                                  "are off (retrieval.graph_step)"),
}
#: A stage's status (:class:`daemon.retrieval.StageTrace`) that is not plain already.
_STATUS_WORDS = {
    "skipped: deadline": "skipped: out of time",
    "skipped: error": "skipped: it failed (the log says why)",
    "skipped: confident": "not needed: an earlier search was sure of its answer",
    "skipped: no query vector": "skipped: the search by meaning did not run",
    "off": "off (retrieval.progressive_search.stages)",
    "off: retrieval.graph_step": "off (retrieval.graph_step)",
    "ran late: too little found before it": "ran past its time limit: too little was found "
                                            "before it",
    "ran late: nothing found before it": "ran past its time limit: nothing was found before it",
}
#: How the intent cache answered (``SearchTrace.intent_cache``).
_CACHE_WORDS = {
    "hit": "the question was read before: what it asks for came from the cache",
    "semantic-hit": "a question of the same meaning was read before: what it asks for came "
                    "from the cache",
    "miss": "the question was read afresh (and what it asks for kept in the cache)",
}
_HOW = {"rules": "by keyword rules", "llm": "by the LLM"}


def layer_words(layer: int) -> str:
    """``4`` -> ``events (daily notes, session logs)``; an unknown layer by its number."""
    return LAYER_WORDS.get(layer, f"layer {layer}")


def intent_words(intent: Intent) -> str:
    """What the question was read to ask for: ``the question asks for rules you set
    (feedback memories); the days 2026-11-23 to 2026-11-29 ("last week") — read by keyword
    rules, sure at 0.80``; ``the question names nothing in particular: no kind of note is
    favoured`` when nothing matched."""
    asked = [_TYPE_WORDS.get(t, t) for t in sorted(intent.types)]
    asked += [layer_words(n) for n in sorted(intent.layers)
              if _SAID_BY_TYPE.get(n) not in intent.types]
    when = intent.time_range
    if when is not None:
        days = (f"the day {when.start}" if when.start == when.end
                else f"the days {when.start} to {when.end}")
        # the words the question said it in ("last week", "上周"), unless the days are them
        asked.append(f'{days} ("{when.label}")' if when.label and when.label not in days
                     else days)
    if not asked:
        return "the question names nothing in particular: no kind of note is favoured"
    how = _HOW.get(intent.source, intent.source)
    return f"the question asks for {'; '.join(asked)} — read {how}, sure at " \
           f"{intent.confidence:.2f}"


def strategy_words(strategy: str, stages: tuple[StageTrace, ...] = ()) -> str:
    """``retrieval.default_strategy`` said by what it does (the setting's name after it),
    true of the search's ``stages``: ``every search ran; …`` when each stage the strategy
    runs did, else ``every search was to run, but the search by meaning and by words ran
    out of time; …`` (the verifier, an LLM's check after the searches, is said apart)."""
    why: dict[str, list[str]] = {}  # a reason -> the stages it kept from running, in order
    for stage in stages:
        if stage.name != "verifier" and stage.status != f"off: {strategy}" \
                and stage.status.startswith(("skipped", "off")):
            why.setdefault(stage.status, []).append(_STAGE_NAMES.get(stage.name, stage.name))
    missed = [f"{_and(names)} "
              f"{_NOT_RUN_WORDS.get(status, (status, status))[len(names) > 1]}"
              for status, names in why.items()]
    ran, some = _STRATEGY_WORDS.get(strategy, (strategy, f"{strategy}, but {{missed}}"))
    said = some.format(missed=", and ".join(missed)) if missed else ran
    return f"{said} (retrieval.default_strategy = {strategy})"


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def lookup_words(trace: SearchTrace) -> list[str]:
    """How the question's reading was got: the cache, the LLM (nothing when both are off)."""
    said = []
    cache = _CACHE_WORDS.get(trace.intent_cache)
    if cache is not None:
        said.append(cache)
    if trace.intent_llm != "off":
        said.append(f"the LLM that reads questions: {trace.intent_llm}")
    return said


def stage_words(stage: StageTrace, strategy: str) -> str:
    """One stage: ``the search by meaning and by words (…): ran, 40 ms, 12 notes found``.
    A stage the strategy turns off says so by the setting."""
    what = STAGE_WORDS.get(stage.name, stage.name)
    status = stage.status
    if status == f"off: {strategy}":
        said = f"off (retrieval.default_strategy = {strategy})"
    else:
        said = _STATUS_WORDS.get(status, status)
    if status.startswith("off") or status.startswith("skipped"):
        return f"the {what}: {said}"
    return f"the {what}: {said}, {stage.elapsed_ms:.0f} ms, {counted(stage.found, 'note')} found"


def summary_words(trace: SearchTrace) -> str:
    """``34 notes ranked, 2 near-duplicates left out, 52 ms in all``."""
    return (f"{counted(trace.candidates, 'note')} ranked, "
            f"{counted(trace.duplicates_dropped, 'near-duplicate')} left out, "
            f"{trace.total_ms:.0f} ms in all")
