"""What a model server's reply holds, checked: JSON decoded, a field reached by its path and its type
checked, and a ``ModelError`` that names the field that is not what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeVar

from clear_rag.errors import ModelError

T = TypeVar("T")


def malformed(url: str, field: str, expected: str, got: object) -> ModelError:
    shown = repr(got)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return ModelError(
        f"the reply is malformed: expected {expected}, got {shown}",
        path=url,
        field=field,
        fix="Check that this URL is the right kind of model server and that it is up to date",
    )


def decode_json(raw: bytes | str, *, url: str, field: str) -> object:
    try:
        decoded: object = json.loads(raw)
    except ValueError as err:
        raise malformed(url, field, "JSON", raw) from err
    return decoded


def pluck(obj: object, path: Sequence[str | int], kind: type[T], *, url: str) -> T:
    """``obj[path[0]][path[1]]...`` checked to be a ``kind``; a ``ModelError`` names the field that is not."""
    field = ""
    for step in path:
        field += f"[{step}]" if isinstance(step, int) else (f".{step}" if field else step)
        if isinstance(step, int):
            if not (isinstance(obj, list) and -len(obj) <= step < len(obj)):
                raise malformed(url, field, f"a list with an item [{step}]", obj)
            obj = obj[step]
        else:
            if not (isinstance(obj, dict) and step in obj):
                raise malformed(url, field, "an object with this field", obj)
            obj = obj[step]
    if not isinstance(obj, kind):
        raise malformed(url, field, f"a {kind.__name__}", obj)
    return obj
