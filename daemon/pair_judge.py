"""The ``llm.judge`` role: an LLM settles the memory pairs the write-time rules were unsure of.

The rules (:mod:`consistency.judgement`) keep a pair apart when they cannot tell whether it
says the same or something changed (``possible_duplicate``, ``possible_contradiction``).
During a dream, with this role configured, each such pair is one chat question; the answer is
one of ``same`` (merge: the sentences of both kept), ``changed`` (the newer supersedes the
older; both files stay) or ``different`` (two facts: nothing happens). Anything else — a
timeout, an HTTP error, prose, another JSON shape — leaves the pair as it is, and the next
dream asks again.

Bounded: at most ``llm.judge.max_pairs`` questions per dream. Cached: an answer is kept in the
state folder under the SHA-256 of the two memories' content hashes (never their text), so a
pair is asked once while neither side changes.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path
from typing import Literal

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from config.errors import LlmError
from consistency.judgement import PairJudgement
from daemon.llm import ChatClient

__all__ = ["JUDGEMENTS_FILE", "JUDGE_PROMPT", "PairJudge", "Settled", "parse_judgement"]

log = structlog.get_logger("dreamd.pair_judge")

#: The state folder's file of answers: ``{sha256 of the two content hashes: answer}``.
JUDGEMENTS_FILE = "pair-judgements.json"

Settled = Literal["duplicate", "contradiction", "distinct"]

JUDGE_PROMPT = """\
You compare two memories that a person's assistant keeps about them and their work. The
second was written after the first. Decide, from the text alone:

- "same": both state the same fact (a restatement, a translation, more detail of it);
- "changed": the second replaces a value or a yes/no of the first, so both cannot be true now
  (a new number, place, name, version, or the opposite preference);
- "different": two facts that can both be true (other things, other people, other places).

Answer with JSON only, e.g. {"verdict": "same"}."""

_ANSWERS: dict[str, Settled] = {"same": "duplicate", "changed": "contradiction",
                                "different": "distinct"}
_JSON = re.compile(r"\{[^{}]*\}")


def parse_judgement(reply: str) -> Settled | None:
    """The answer in a reply (``{"verdict": "same" | "changed" | "different"}``, also inside
    a code fence or after prose), or ``None`` when there is none."""
    for match in _JSON.finditer(reply):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        verdict = data.get("verdict") if isinstance(data, dict) else None
        if isinstance(verdict, str) and verdict.strip().lower() in _ANSWERS:
            return _ANSWERS[verdict.strip().lower()]
    return None


class PairJudge:
    """Asks ``client`` about uncertain pairs, at most ``max_pairs`` per :meth:`start`, and
    keeps the answers in ``state_dir / JUDGEMENTS_FILE``."""

    def __init__(self, client: ChatClient, state_dir: Path, *, max_pairs: int) -> None:
        self.client = client
        self.path = state_dir / JUDGEMENTS_FILE
        self.max_pairs = max_pairs
        self.asked = 0
        self._lock = threading.Lock()
        self._answers: dict[str, Settled] | None = None

    def start(self) -> None:
        """A new dream: the question budget starts again."""
        self.asked = 0

    def settle(self, old_text: str, old_hash: str, new_text: str, new_hash: str,
               why: PairJudgement | None) -> Settled | None:
        """The answer for the pair (``old`` written first), from the cache or one question;
        ``None`` when the budget is spent or the endpoint gave no answer."""
        key = hashlib.sha256(f"{old_hash}\0{new_hash}".encode()).hexdigest()
        with self._lock:
            answers = self._load()
            if key in answers:
                return answers[key]
            if self.asked >= self.max_pairs:
                return None
            self.asked += 1
        hint = f"\n\n(The rules said: {why.explain()}.)" if why is not None else ""
        try:
            reply = self.client.chat([
                {"role": "system", "content": JUDGE_PROMPT},
                {"role": "user", "content": f"First memory:\n{old_text}\n\nSecond memory:\n"
                                            f"{new_text}{hint}"},
            ])
        except LlmError as error:
            log.warning("judge.failed", error=str(error))
            return None
        answer = parse_judgement(reply)
        if answer is None:
            log.warning("judge.unreadable", reply=reply[:200])
            return None
        with self._lock:
            answers = self._load()
            answers[key] = answer
            write_json_atomic(self.path, answers)
        return answer

    def _load(self) -> dict[str, Settled]:
        if self._answers is None:
            self._answers = {k: v for k, v in read_json_object(self.path).items()
                             if isinstance(k, str) and v in _ANSWERS.values()}
        return self._answers
