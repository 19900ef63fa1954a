"""Resources chosen per environment: which embedder, and where stores and result files go.

The embedder is a name, as the CLI spells it: ``minilm`` (the default, a real model) or ``hash`` (the
deterministic fake, for tests and quick runs). A fake run writes its result files away from
``results/`` so that it never overwrites the committed real-model results.
"""

from __future__ import annotations

import functools

from dagster import ConfigurableResource

from clear_rag.eval.ablate import STORE_ROOT
from clear_rag.providers.base import Embedder
from clear_rag.providers.select import DEFAULT_EMBEDDER, make_embedder

RESULTS = "results"
FAKE_RESULTS = ".clear-rag/results-hash"
BASELINE_FAKE = "results/baseline-fake.json"


def results_dir_for(embedder: str) -> str:
    return FAKE_RESULTS if embedder == "hash" else RESULTS


@functools.cache
def _embedder(name: str) -> Embedder:
    # Loaded once per process: under the in-process executor every step of a run shares one model.
    return make_embedder(name)


# ConfigurableResource is generic in a value type that a pythonic resource (its own value) never sets.
class EmbedderResource(ConfigurableResource):  # type: ignore[type-arg]
    """The embedder the vector indexes and the dense rows use."""

    name: str = DEFAULT_EMBEDDER

    def get(self) -> Embedder:
        return _embedder(self.name)


class PathsResource(ConfigurableResource):  # type: ignore[type-arg]
    """Where stores live (shared with ``clear-rag ablate``, so both see the same stores and write the
    same ``store`` field in result rows), where result files go, and the fake-provider baseline."""

    store_root: str = str(STORE_ROOT)
    results_dir: str = RESULTS
    baseline: str = BASELINE_FAKE
