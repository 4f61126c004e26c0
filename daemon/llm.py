"""An OpenAI-compatible chat client (Ollama, llama.cpp server, vLLM, OpenAI …), standard library
only.

``POST {base_url}/chat/completions`` with ``{"model", "messages", "temperature": 0}`` and an
optional bearer key; the answer is ``choices[0].message.content``. Every failure — refused
connection, timeout, HTTP error (429 included), a reply that is not that JSON shape — is one
:class:`config.errors.LlmError` naming the endpoint and what happened; callers degrade (the
dream skips its deep phase), they never crash.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from config.errors import LlmError

__all__ = ["ChatClient"]


@dataclass(frozen=True, slots=True)
class ChatClient:
    """One endpoint and model. ``timeout_s`` bounds each call (connect and read)."""

    base_url: str
    model: str
    timeout_s: float = 30.0
    api_key: str | None = None

    def chat(self, messages: Sequence[dict[str, str]]) -> str:
        """The model's reply text to ``messages`` (``[{"role", "content"}, …]``).
        Raises :class:`LlmError`."""
        url = self.base_url.rstrip("/") + "/chat/completions"
        body = json.dumps({"model": self.model, "messages": list(messages),
                           "temperature": 0, "stream": False}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise LlmError(f"llm: {url} answered HTTP {error.code} {error.reason}") from error
        except TimeoutError as error:
            raise LlmError(f"llm: {url} did not answer within {self.timeout_s:g} s") from error
        except http.client.HTTPException as error:  # a broken reply
            raise LlmError(f"llm: {url} sent a broken HTTP reply: "
                           f"{type(error).__name__}") from error
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError | socket.timeout):
                raise LlmError(f"llm: {url} did not answer within {self.timeout_s:g} s") \
                    from error
            raise LlmError(f"llm: cannot reach {url}: {reason}") from error
        try:
            data = json.loads(raw)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError, RecursionError) as error:
            raise LlmError(f"llm: {url} sent a reply that is not an OpenAI chat completion") \
                from error
        if not isinstance(content, str):
            raise LlmError(f"llm: {url} sent a reply without text")
        return content
