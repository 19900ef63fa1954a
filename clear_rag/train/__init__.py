"""Training the SciFact reranker and the domain-adapted embedder (``clear-rag train``, assets/training.py).

What needs no torch lives in ``data`` (the training claims and their file hashes), ``mining`` (hard
negatives from clear-rag's own hybrid retrieval) and ``manifest`` (what a shipped model was trained
from, and the cache key that says whether it must be trained again). Torch and transformers are
imported only inside ``cross_encoder``, ``embedder`` and ``export``, and only when they run:
``require_torch`` names the extra that brings them.
"""

from __future__ import annotations

import importlib.util

from clear_rag.errors import ModelError

TRAIN_EXTRA = "pip install -e '.[train]'"


def require_torch() -> None:
    """Raise a ``ModelError`` naming the ``train`` extra when torch or transformers is not installed."""
    missing = [name for name in ("torch", "transformers", "onnx") if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelError(
            f"training needs {', '.join(missing)}, which is not installed",
            field="train",
            value=missing,
            fix=f"Install the train extra: `{TRAIN_EXTRA}` (several GB; `make run` never needs it)",
        )
