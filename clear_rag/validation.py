"""Records read from outside (configs, suites, golden sets, chat requests) are pydantic models; here,
and only here, a ``ValidationError`` becomes the ``ConfigError`` a person reads: the file, the field as
written (``rows[2].set``, ``pads.answers[1].quote``), the value and the fix.

A model tells its faults with ``unknown`` (how an unknown key is said), ``rules`` (per field the fix,
and what is wrong where pydantic's wording would not do; ``""`` is the record itself) and ``named_by``
(the key naming an item of a list: a golden question by its id). A check across fields is an ``after``
validator raising ``ConfigError`` with its field; ``parsed`` adds the file.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Strict, ValidationError

from clear_rag.errors import ConfigError, did_you_mean

Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]
Number = Annotated[float, Strict()]  # an int is accepted too, a bool or a string is not
Text = Annotated[str, Strict()]
_TYPE_ERRORS = {"int_type", "bool_type", "float_type", "string_type", "tuple_type", "list_type", "dict_type"}


@dataclass(frozen=True, slots=True)
class Rule:
    """What a wrong value of one field is told: ``fix``, and ``what`` in place of the wording of
    pydantic's kind of error (a missing field is always said to be missing)."""

    fix: str
    what: str | None = None


def text_rule(key: str) -> Rule:
    """The rule of a text field of a YAML file, where an unquoted ``2024`` or ``yes`` is no text."""
    return Rule(f'Write it as text, quoted if it looks like a number: {key}: "..."', "must be text")


def keys_of(kind: str) -> tuple[str, str]:
    """How an unknown key of a ``kind`` (a suite, a row, an answer) is said, and the start of the fix
    that lists the keys it has: ``is not an answer key``, ``An answer has ``."""
    article = "An" if kind[0] in "aeiou" else "A"
    return f"is not {article.lower()} {kind} key", f"{article} {kind} has "


class Record(BaseModel):
    """A record that crosses a boundary: frozen, strict where its fields say so, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", revalidate_instances="never")

    unknown: ClassVar[tuple[str, str]] = ("is not a key", "Known keys: ")
    rules: ClassVar[Mapping[str, Rule]] = {}
    named_by: ClassVar[str] = ""


R = TypeVar("R", bound=Record)


def parsed(kind: type[R], data: Any, source: str) -> R:
    """``data`` (read from ``source``: a file, or ``request``) as a ``kind``, or the ``ConfigError``
    that names the first fault in it."""
    try:
        return kind.model_validate(data)
    except ValidationError as err:
        raise config_error(err, data, source, kind) from None
    except ConfigError as err:  # a check across fields, raised by a validator of the model
        raise err.at(source) from None


def config_error(
    err: ValidationError, data: Any, source: str, root: type[Record], *, at: str = ""
) -> ConfigError:
    """The first fault in ``data`` (a ``root``, named below ``at`` where it is always nested there):
    an unknown key before any other, as it is most often the misspelling of a key then missing. An item
    of a list of records is named by its place (``rows[2]``, from 1) or its ``named_by`` value; an item
    of a list of values is said as the whole list."""
    problems = err.errors(include_url=False)
    problem = next((p for p in problems if p["type"] in ("extra_forbidden", "invalid_key")), problems[0])
    loc = list(problem["loc"])
    if problem["type"] == "invalid_key":  # a key that is not text (YAML's 1: x) is an unknown key too
        loc[-1] = str(loc[-1])
    name, value, owner = at, data, root
    kind: Any = root  # the type expected where the walk is
    within: list[str] = []  # the key inside ``owner``, the innermost record on the way
    for part in loc:
        if isinstance(part, int) and (item := _record(kind, item=True)) is not None:
            value = value[part] if isinstance(value, Sequence) and 0 <= part < len(value) else None
            named = value.get(item.named_by) if item.named_by and isinstance(value, Mapping) else None
            name = str(named) if named else f"{name}[{part + 1}]"
            owner, kind, within = item, item, []
        elif isinstance(part, str) and (kind is owner or get_origin(kind) is dict):
            name = f"{name}.{part}" if name else part
            value = value.get(part) if isinstance(value, Mapping) else None
            field = owner.model_fields.get(part) if kind is owner else None
            kind, within = (field.annotation if field else None), [*within, part]
            nested = _record(kind, item=False)
            if nested is not None:
                owner, kind, within = nested, nested, []
        else:  # an item of a list of values, or a branch of a union: the value is said whole
            break
    known = list(owner.model_fields)
    if problem["type"] in ("extra_forbidden", "invalid_key"):
        what, has = owner.unknown
        hint = did_you_mean(within[-1], known) if within else ""
        return ConfigError(what, path=source, field=name, fix=f"{hint}{has}{', '.join(known)}")
    rule = owner.rules.get(".".join(within)) or owner.rules.get(within[0] if within else "")
    fix = rule.fix if rule else f"{owner.unknown[1]}{', '.join(known)}"
    place: dict[str, Any] = {"field": name} if name else {}
    if problem["type"] == "missing":
        return ConfigError("is missing", path=source, fix=fix, **place)
    said = str(problem.get("ctx", {}).get("error", "")) if problem["type"] == "value_error" else ""
    what = said or (rule.what if rule else None) or _wording(problem)
    return ConfigError(what, path=source, fix=fix, **place, **({"value": value} if name else {}))


def _wording(problem: Mapping[str, Any]) -> str:
    """What is wrong, by pydantic's kind of error."""
    kind = problem["type"]
    if kind == "model_type":
        return "is not a table"
    if kind in _TYPE_ERRORS:
        return "has the wrong type"
    if kind == "literal_error":
        return "is not an accepted value"
    if kind == "string_too_short" and problem.get("ctx", {}).get("min_length") == 1:
        return "is empty"
    return "is out of range"


def _record(kind: Any, *, item: bool) -> type[Record] | None:
    """The record ``kind`` is (or, with ``item``, the record each item of the list ``kind`` is),
    through ``Annotated`` and ``| None``; ``None`` if it is not one."""
    origin = get_origin(kind)
    if origin is Annotated:
        return _record(get_args(kind)[0], item=item)
    if origin in (Union, types.UnionType):
        options = [arg for arg in get_args(kind) if arg is not type(None)]
        return _record(options[0], item=item) if len(options) == 1 else None
    if item:
        return _record(get_args(kind)[0], item=False) if origin in (tuple, list) else None
    return kind if isinstance(kind, type) and issubclass(kind, Record) else None
