"""Ollama over HTTP: an embedder on ``POST /api/embed`` and a streaming chat model on ``POST /api/chat``.

Both report ``name`` as ``ollama/<model>`` and ``version`` as the first 12 hex digits of the model's
digest from ``GET /api/tags`` (one cheap call, made the first time ``version`` is read), so that a
result row tells which weights produced it, not just which tag, which ``ollama pull`` can move.
``OllamaChat.fingerprint``, which keys cached generations, is the same digest in full.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.errors import ModelError
from clear_rag.providers import cite
from clear_rag.providers.base import EMBED_KINDS, EmbedKind, Message
from clear_rag.providers.http import HttpProvider, message_dicts
from clear_rag.providers.replies import malformed, pluck
from clear_rag.providers.streaming import iter_ndjson

DEFAULT_URL = "http://127.0.0.1:11434"

# (query prefix, document prefix), from each model's card. A model missing here embeds texts as they
# are, which is right for most (all-minilm, bge-m3) but loses recall for these, so pass prefixes=.
KNOWN_PREFIXES: Mapping[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_query: ", "search_document: "),
    "nomic-embed-text-v2-moe": ("search_query: ", "search_document: "),
    "mxbai-embed-large": ("Represent this sentence for searching relevant passages: ", ""),
    "snowflake-arctic-embed": ("Represent this sentence for searching relevant passages: ", ""),
}

# Ollama's model options, passed on under "options"; max_tokens is the name OpenAIChat shares.
CHAT_OPTIONS = frozenset(
    {
        "temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "num_ctx", "num_predict", "stop",
        "repeat_penalty", "repeat_last_n", "presence_penalty", "frequency_penalty", "mirostat",
        "mirostat_tau", "mirostat_eta", "num_keep", "num_batch", "num_gpu", "num_thread", "max_tokens",
    }
)  # fmt: skip


def base_model(model: str) -> str:
    """``"nomic-embed-text"`` from ``"nomic-embed-text:v1.5"`` or ``"library/nomic-embed-text"``."""
    return model.split(":", 1)[0].rsplit("/", 1)[-1]


class _Ollama(HttpProvider):
    start_hint = "Start Ollama with `ollama serve`, or pass base_url= where it listens"

    def __init__(
        self, model: str, base_url: str, timeout: float, version: str | None, timeout_option: str | None
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model={model!r} is invalid; name an Ollama model such as 'nomic-embed-text'")
        super().__init__(base_url, timeout, timeout_option=timeout_option)
        self.model = model
        self.name = f"ollama/{model}"
        self._version = version
        self._digest: str | None = None

    @property
    def version(self) -> str:
        """The model's digest (12 hex digits) as ``GET /api/tags`` lists it, else its tag."""
        if self._version is None:
            tag = self.model.split(":", 1)[1] if ":" in self.model else "latest"
            self._version = self.digest()[:12] or tag
        return self._version

    @version.setter
    def version(self, value: str) -> None:
        self._version = value

    def digest(self) -> str:
        """The hex digest ``GET /api/tags`` lists for this model, or ``""`` if it is not listed.

        Asked once and remembered, for ``version`` and ``fingerprint`` alike.
        """
        if self._digest is None:
            wanted = {self.model, f"{self.model}:latest"}
            found = [m for m in self._tags() if m.get("name") in wanted or m.get("model") in wanted]
            digest = found[0].get("digest") if found else None
            self._digest = digest.removeprefix("sha256:") if isinstance(digest, str) else ""
        return self._digest

    def list_models(self) -> list[str]:
        """The names of the models this Ollama has pulled, as ``ollama list`` shows them."""
        return [pluck(m, ["name"], str, url=self.url("/api/tags")) for m in self._tags()]

    def _tags(self) -> list[dict[str, Any]]:
        reply = self.get_json("/api/tags")
        models = pluck(reply, ["models"], list, url=self.url("/api/tags"))
        return [m for m in models if isinstance(m, dict)]

    def status_error(self, status: int, text: str, path: str) -> ModelError:
        url = self.url(path)
        if status == 404 and "not found" in text and "page not found" not in text:
            return ModelError(
                f"model {self.model!r} is not pulled ({text})",
                path=url,
                fix=f"Run `ollama pull {self.model}`",
            )
        if status == 404:  # Go's plain "404 page not found": this Ollama has no such endpoint
            return ModelError(
                f"this server has no {path} ({text})",
                path=url,
                fix="Upgrade Ollama (0.3.4 or later has /api/embed), or check that base_url points at Ollama",
            )
        return ModelError(
            f"Ollama answered HTTP {status}: {text}",
            path=url,
            fix=f"Check that {self.model!r} is the right kind of model for this call, and Ollama's log",
        )


class OllamaEmbedder(_Ollama):
    """``embed(texts, kind)`` through Ollama, with the model's query or document prefix, in batches.

    Rows come back float32 and L2-normalised (Ollama normalises already; doing it again here makes it a
    guarantee instead of a server detail). ``dim`` is learnt from the first reply unless given; reading
    it before any call embeds one short probe text to find out.
    """

    def __init__(
        self,
        model: str = "nomic-embed-text",
        base_url: str = DEFAULT_URL,
        timeout: float = 120.0,
        *,
        prefixes: tuple[str, str] | None = None,
        batch_size: int = 32,
        dim: int | None = None,
        version: str | None = None,
        timeout_option: str | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r} is invalid; use a positive integer such as 32")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ValueError(f"dim={dim!r} is invalid; use the model's vector length, or None to learn it")
        if prefixes is not None and not (
            isinstance(prefixes, tuple) and len(prefixes) == 2 and all(isinstance(p, str) for p in prefixes)
        ):
            raise ValueError(f"prefixes={prefixes!r} is invalid; use a (query prefix, document prefix) pair")
        super().__init__(model, base_url, timeout, version, timeout_option)
        query, document = (
            prefixes if prefixes is not None else KNOWN_PREFIXES.get(base_model(model), ("", ""))
        )
        self.prefixes: dict[EmbedKind, str] = {"query": query, "document": document}
        self.batch_size = batch_size
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"], kind="query")
        if self._dim is None:  # embed() sets it or raises; this only satisfies the type checker
            raise ModelError("returned no vector", path=self.url("/api/embed"), fix="Check Ollama's log")
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind not in EMBED_KINDS:
            raise ValueError(f"embed kind={kind!r} is unknown; use one of {EMBED_KINDS}")
        if isinstance(texts, str):
            # A bare string is a Sequence[str] of characters; embedding each letter is never meant.
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefix = self.prefixes[kind]
        batches = [
            self._embed_batch([prefix + t for t in texts[i : i + self.batch_size]])
            for i in range(0, len(texts), self.batch_size)
        ]
        vectors = np.concatenate(batches)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        # A zero row stays zero rather than becoming NaN; a zero vector matches nothing.
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors.astype(np.float32)

    def _embed_batch(self, inputs: list[str]) -> npt.NDArray[np.float64]:
        url = self.url("/api/embed")
        rows = pluck(
            self.post_json("/api/embed", {"model": self.model, "input": inputs}),
            ["embeddings"],
            list,
            url=url,
        )
        try:
            vectors = np.asarray(rows, dtype=np.float64)
        except (TypeError, ValueError) as err:  # ragged rows or non-numbers
            raise malformed(url, "embeddings", "a list of equally long lists of numbers", rows) from err
        if vectors.ndim != 2 or len(vectors) != len(inputs) or vectors.shape[1] == 0:
            raise malformed(url, "embeddings", f"{len(inputs)} vectors for {len(inputs)} inputs", rows)
        if not np.isfinite(vectors).all():
            raise malformed(url, "embeddings", "finite numbers", rows)
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise ModelError(
                f"returned vectors of length {vectors.shape[1]}, not dim={self._dim}",
                path=url,
                fix=f"Pass dim={vectors.shape[1]} (or leave it out), or re-embed the store with this model",
            )
        return vectors


class OllamaChat(_Ollama):
    """``stream(messages, **options)`` through Ollama's streaming ``/api/chat``, yielding text as it comes.

    ``cite=N`` asks for an answer citing sources 1 to N through Ollama's structured outputs: the
    request's ``format`` is ``cite.schema(N)``, and the JSON reply comes back as cited text, a sentence
    at a time (``cite.answer_from_json``). The schema is not repeated in the messages, which stay what
    the trace records: the grammar Ollama builds from it writes the keys, the model the words and the
    numbers.

    ``stream()`` checks its arguments when called and contacts Ollama at the first ``next()``. Closing
    the returned iterator early (``close()``, or dropping it) closes the HTTP response, which tells Ollama
    to stop generating.
    """

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_URL,
        timeout: float = 120.0,
        *,
        version: str | None = None,
        timeout_option: str | None = None,
    ) -> None:
        super().__init__(model, base_url, timeout, version, timeout_option)

    @property
    def fingerprint(self) -> str:
        """``"ollama:sha256:"`` and the full digest ``GET /api/tags`` lists for the model, asked once.

        That digest is the SHA-256 of the model's manifest, which names the weights blob and the
        template, system prompt and parameter layers, so it changes when any of them does, and not
        when the tag is merely renamed. A pinned ``version=`` does not replace it. A model this
        Ollama has not pulled has no fingerprint: that is a ``ModelError`` saying to pull it.
        """
        digest = self.digest()
        if not digest:
            raise ModelError(
                f"model {self.model!r} is not among the models this Ollama lists, so it has no digest",
                path=self.url("/api/tags"),
                fix=f"Run `ollama pull {self.model}`",
            )
        return f"ollama:sha256:{digest}"

    def stream(self, messages: Sequence[Message], **options: object) -> Generator[str, None, None]:
        known = CHAT_OPTIONS | {cite.OPTION}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"OllamaChat options {unknown} are unknown; use any of {sorted(known)}")
        options = dict(options)
        sources = cite.cite_sources(options.pop(cite.OPTION)) if cite.OPTION in options else None
        if "max_tokens" in options:
            if "num_predict" in options:
                raise ValueError(
                    "OllamaChat got both max_tokens and num_predict; they are one setting, pass one"
                )
            options["num_predict"] = options.pop("max_tokens")
        wire = message_dicts(messages)
        payload: dict[str, object] = {
            "model": self.model,
            "messages": wire,
            "stream": True,
            "options": options,
        }
        if sources is None:
            return self._pieces(payload)
        payload["format"] = cite.schema(sources)
        return cite.answer_from_json(self._pieces(payload))

    def _pieces(self, payload: dict[str, object]) -> Generator[str, None, None]:
        url = self.url("/api/chat")
        pace = self.pace()
        with self.errors("/api/chat"), self._client.stream("POST", "/api/chat", json=payload) as response:
            self.check_status(response, "/api/chat")
            for line in iter_ndjson(response, url=url, pace=pace, limit=self.max_line_bytes):
                if "error" in line:  # Ollama reports a failure mid-answer as {"error": "..."}
                    raise ModelError(
                        f"Ollama failed mid-answer: {line['error']}", path=url, fix="Check Ollama's log"
                    )
                if line.get("done") is True and "message" not in line:
                    return
                piece = pluck(line, ["message", "content"], str, url=url)
                if piece:
                    yield piece
                    pace.piece()
                if line.get("done") is True:
                    return
        raise ModelError(
            "the answer stopped before a line with done: true",
            path=url,
            fix="Check Ollama's log; it may have crashed",
        )
