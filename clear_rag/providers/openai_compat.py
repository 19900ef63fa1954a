"""A chat model behind an OpenAI-compatible ``POST /v1/chat/completions``: llama.cpp server, vLLM, LM Studio.

The answer streams as Server-Sent Events, ``data: {...}`` with the text in ``choices[0].delta.content``,
ending with ``data: [DONE]``. These servers do not say which weights they serve, so ``version`` is
``"unknown"`` unless given, and ``fingerprint`` can only name the model id and the server.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from clear_rag.errors import ModelError
from clear_rag.providers import cite
from clear_rag.providers.base import Message
from clear_rag.providers.http import HttpProvider, message_dicts
from clear_rag.providers.replies import decode_json, malformed, pluck
from clear_rag.providers.streaming import iter_sse_data, read_body

DEFAULT_URL = "http://127.0.0.1:8080"  # llama.cpp's llama-server; LM Studio uses :1234, vLLM :8000

# The OpenAI sampling settings, plus top_k and min_p, which llama.cpp and vLLM both accept.
CHAT_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "max_tokens",
        "stop",
        "presence_penalty",
        "frequency_penalty",
    }
)


class OpenAIChat(HttpProvider):
    """``stream(messages, **options)`` over an OpenAI-compatible server, yielding text as it arrives.

    ``base_url`` is the server's root, with or without ``/v1`` (LM Studio's documentation gives it with).
    ``api_key`` is sent as a bearer token when given; local servers mostly need none. Closing the
    returned iterator early closes the HTTP response, which stops the generation on the server.

    ``cite=N`` asks for an answer citing sources 1 to N as a ``response_format`` of type
    ``json_schema`` (``cite.schema(N)``), which llama-server, vLLM and LM Studio enforce; the JSON
    reply comes back as cited text, a sentence at a time (``cite.answer_from_json``). A server that
    ignores it answers in plain text, which is passed on, and the planner's check reports it.
    """

    start_hint = (
        "Start the OpenAI-compatible server (llama-server, vLLM, LM Studio) or pass base_url= its address"
    )

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        timeout: float = 120.0,
        *,
        version: str = "unknown",
        timeout_option: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model={model!r} is invalid; name the model the server serves")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        root = base_url.rstrip("/").removesuffix("/v1") if isinstance(base_url, str) else base_url
        super().__init__(root, timeout, headers, timeout_option=timeout_option)
        self.model = model
        self.name = f"openai-compat/{model}"
        self.version = version

    @property
    def fingerprint(self) -> str:
        """``"openai-compat:<model>@<base URL>#<version>"``: the model id and where it is served.

        This API offers no hash of the weights, so this is the closest name for them it allows: a
        cached generation is reused only for the same model id at the same address (and the same
        ``version=``, which is worth pinning to the weights' file name or hash when it is known). It
        cannot notice a server restarted with other weights under the same id.
        """
        return f"openai-compat:{self.model}@{self.base_url}#{self.version}"

    def stream(self, messages: Sequence[Message], **options: object) -> Generator[str, None, None]:
        known = CHAT_OPTIONS | {cite.OPTION}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"OpenAIChat options {unknown} are unknown; use any of {sorted(known)}")
        options = dict(options)
        sources = cite.cite_sources(options.pop(cite.OPTION)) if cite.OPTION in options else None
        wire = message_dicts(messages)
        payload = {
            "model": self.model,
            "messages": wire,
            "stream": True,
            **options,
        }
        if sources is None:
            return self._pieces(payload)
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "cited_answer", "strict": True, "schema": cite.schema(sources)},
        }
        return cite.answer_from_json(self._pieces(payload))

    def status_error(self, status: int, text: str, path: str) -> ModelError:
        url = self.url(path)
        if status in (401, 403):
            return ModelError(
                f"the server refused the request (HTTP {status}: {text})",
                path=url,
                fix="Pass the server's key as api_key=, or check the one given",
            )
        if status == 404:
            return ModelError(
                f"the server does not serve model {self.model!r} or this path (HTTP 404: {text})",
                path=url,
                fix=f"Use a model= that GET {self.base_url}/v1/models lists, and base_url= the server's root",
            )
        return ModelError(
            f"the server answered HTTP {status}: {text}",
            path=url,
            fix="Check the options passed and the server's log",
        )

    def _pieces(self, payload: dict[str, object]) -> Generator[str, None, None]:
        path = "/v1/chat/completions"
        url = self.url(path)
        finished = False
        pace = self.pace()
        with self.errors(path), self._client.stream("POST", path, json=payload) as response:
            self.check_status(response, path)
            if response.headers.get("content-type", "").startswith("application/json"):
                # A server that cannot stream answers with one whole completion; take its text.
                raw = read_body(response, url=url, limit=self.max_line_bytes)
                body = decode_json(raw, url=url, field="body")
                yield pluck(body, ["choices", 0, "message", "content"], str, url=url)
                return
            for data in iter_sse_data(response, url=url, pace=pace, limit=self.max_line_bytes):
                if data.strip() == "[DONE]":
                    return
                event = decode_json(data, url=url, field="data")
                piece, done = _delta(event, url)
                finished = finished or done
                if piece:
                    yield piece
                    pace.piece()
        if not finished:  # a finish_reason without [DONE] is complete enough; neither means cut off
            raise ModelError(
                "the answer stopped before data: [DONE]",
                path=url,
                fix="Check the server's log; it may have crashed",
            )


def _delta(event: object, url: str) -> tuple[str, bool]:
    """The text of one streamed event and whether it carries a ``finish_reason``.

    An event with no choices is normal (vLLM's usage event, Azure's content-filter event); a delta with
    no content is too (the first, role-only event, and the last one).
    """
    if isinstance(event, dict) and "error" in event:  # some servers report a failure mid-stream this way
        error: Any = event["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ModelError(f"the server failed mid-answer: {message}", path=url, fix="Check the server's log")
    choices = pluck(event, ["choices"], list, url=url)
    if not choices:
        return "", False
    delta = pluck(event, ["choices", 0, "delta"], dict, url=url)
    content = delta.get("content")
    if content is not None and not isinstance(content, str):
        raise malformed(url, "choices[0].delta.content", "a string or null", content)
    choice = choices[0]
    done = isinstance(choice, dict) and choice.get("finish_reason") is not None
    return content or "", done
