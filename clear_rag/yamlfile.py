"""The one way clear-rag reads a YAML file (configs, suites, golden sets), with limits that make it safe.

``yaml.safe_load`` refuses Python objects but not size: a 10-line "billion laughs" document, whose
every level repeats the level above through aliases (``b: &b [*a, *a, ...]``), composes to a small
graph and then grows to gigabytes wherever it is walked as a tree (pydantic, ``json.dumps``). So a
file is read here only up to ``MAX_BYTES``; while it is composed, the nodes it really holds and the
aliases it uses are counted and capped; and before any Python object is built, the composed graph
is measured as the tree it would expand to, aliases counted as full copies. No file of the project
uses an alias, so the caps cost nothing real.

Every failure is a ``ConfigError`` (exit 2) of one line: the file (and line and column, where
there is one), what is wrong and what to do. What the data then must hold is checked by the models
that read it (``clear_rag.validation``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.error import MarkedYAMLError
from yaml.events import AliasEvent
from yaml.nodes import CollectionNode, MappingNode, Node
from yaml.parser import Parser
from yaml.reader import Reader, ReaderError
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from clear_rag.errors import ConfigError

MAX_BYTES = 4 * 2**20  # golden/tech.yaml, the largest file of the project, is about 20 KB
MAX_ALIASES = 50
MAX_NODES = 250_000  # values (scalars, lists, tables), aliases expanded; 250k compose in about 2 s

NO_ALIASES = "Write the values out in full: clear-rag's files need no YAML aliases (*name)"


class _PurePython(Reader, Scanner, Parser):
    """PyYAML's own parser, in Python: where PyYAML was built without libyaml."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)


try:  # libyaml's parser where PyYAML was built with it: the scanning is about four times faster
    from yaml._yaml import CParser as _Parser

    _LIBYAML = True
except ImportError:  # pragma: no cover - PyYAML without libyaml
    _Parser = _PurePython  # type: ignore[misc, assignment]
    _LIBYAML = False


class _Mark(Protocol):
    """Where in the file an event or node begins (PyYAML's and libyaml's marks alike), from 0."""

    line: int
    column: int


class _Limited(Exception):
    """A limit reached while composing; turned into a ``ConfigError`` naming the file."""

    def __init__(self, what: str, fix: str, mark: _Mark | None = None) -> None:
        super().__init__(what)
        self.what, self.fix, self.mark = what, fix, mark


class _Counting(Composer):
    """PyYAML's composer, counting what it composes (``MAX_ALIASES``, ``MAX_NODES``).

    It comes first in a loader's bases so that its ``get_single_node`` (which calls the
    ``compose_node`` below) is used, not libyaml's own composer, which cannot be watched.
    """

    def _begin(self) -> None:
        Composer.__init__(self)
        SafeConstructor.__init__(self)  # type: ignore[arg-type]
        Resolver.__init__(self)  # type: ignore[arg-type]
        self.aliases = 0
        self.nodes = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):  # type: ignore[attr-defined]
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark  # type: ignore[attr-defined]
                raise _Limited(f"uses more than {MAX_ALIASES} YAML aliases (*name)", NO_ALIASES, mark)
        else:
            self.nodes += 1
            if self.nodes > MAX_NODES:
                mark = self.peek_event().start_mark  # type: ignore[attr-defined]
                raise _Limited(
                    f"holds more than {MAX_NODES:,} values",
                    "Check that it is the file you meant; a config, suite or golden set is far smaller",
                    mark,
                )
        return super().compose_node(parent, index)


class _BoundedLoader(_Counting, _Parser, SafeConstructor, Resolver):
    """PyYAML's safe loader on libyaml's parser (where PyYAML has it), counting what it composes."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        self._begin()


class _PurePythonLoader(_Counting, _PurePython, SafeConstructor, Resolver):
    """The same on PyYAML's own parser; its messages are worded as libyaml's are (``_SAID_ALIKE``)."""

    def __init__(self, text: str) -> None:
        _PurePython.__init__(self, text)
        self._begin()


# The loaders here, the first the one used: libyaml's where PyYAML was built with it.
LOADERS: dict[str, type[_BoundedLoader] | type[_PurePythonLoader]] = {"python": _PurePythonLoader}
if _LIBYAML:
    LOADERS = {"libyaml": _BoundedLoader, **LOADERS}


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, if it can be read and is no bigger than ``MAX_BYTES``.

    At most one byte more than the limit is read, so a huge file (or ``/dev/zero``) costs nothing.
    """
    path = Path(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as err:
        raise ConfigError(f"cannot be read ({err.strerror})", path=str(path), fix="Check the path") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(
            f"is larger than the {MAX_BYTES // 2**20} MiB a config, suite or golden file may hold",
            path=str(path),
            fix="Check that it is the file you meant",
        )
    return raw


def decode(raw: bytes, source: str) -> str:
    """``raw`` as UTF-8 text, or an error naming the first byte that is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        byte = raw[err.start]
        raise ConfigError(
            f"is not UTF-8 text (byte 0x{byte:02x} at offset {err.start})",
            path=source,
            fix="Save it as UTF-8",
        ) from None


def parse(raw: bytes, source: str, *, parser: str | None = None) -> Any:
    """The one YAML document in ``raw`` as plain data (``None`` for an empty document); ``parser``
    names one of ``LOADERS`` (libyaml's where PyYAML has it, else PyYAML's own)."""
    text = decode(raw, source)
    loader = LOADERS[parser or next(iter(LOADERS))](text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    except _Limited as err:
        raise ConfigError(err.what, path=_at(source, err.mark), fix=err.fix) from None
    except MarkedYAMLError as err:
        raise _syntax_error(err, source, text) from None
    except ReaderError as err:  # a control character: YAML allows none outside quotes or escapes
        code = err.character if isinstance(err.character, int) else ord(err.character)  # libyaml: an int
        raise ConfigError(
            f"holds a character YAML does not allow (U+{code:04X} at offset {err.position}: {err.reason})",
            path=source,
            fix="Remove it, or write it as an escape inside double quotes",
        ) from None
    except yaml.YAMLError as err:
        raise ConfigError(
            f"is not valid YAML ({' '.join(str(err).split())})", path=source, fix="Fix the syntax"
        ) from None
    except RecursionError:
        raise ConfigError("nests lists or tables too deeply to read", path=source, fix="Flatten it") from None
    except ValueError as err:  # e.g. a date such as 2024-13-45, which YAML reads as a timestamp
        raise ConfigError(
            f"holds a value YAML cannot read ({err})", path=source, fix="Quote the value to keep it as text"
        ) from None
    finally:
        loader.dispose()


def load(path: str | Path) -> Any:
    """Read and parse one YAML file, within the limits above."""
    return parse(read_bytes(path), str(path))


def _check_expansion(root: Node) -> None:
    """Fail if ``root``, expanded as a tree (each alias a full copy), holds more than ``MAX_NODES``.

    Each node's expanded size is computed once (memoised by identity), so the cost is that of the
    composed graph, however large the tree it stands for. An alias inside the value it names (a
    cycle) would expand forever, and is refused too.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise _Limited("has an alias inside the value it names", NO_ALIASES, node.start_mark)
        total = 1
        if isinstance(node, CollectionNode):
            open_nodes.add(key)
            children: Iterable[Node] = (
                (part for pair in node.value for part in pair)
                if isinstance(node, MappingNode)
                else node.value
            )
            for child in children:
                total += size(child)
                if total > MAX_NODES:
                    raise _Limited(
                        f"would expand to more than {MAX_NODES:,} values through its aliases", NO_ALIASES
                    )
            open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root)


def _at(source: str, mark: _Mark | None) -> str:
    """``file:line:column`` (both counted from 1), or the file alone."""
    return source if mark is None else f"{source}:{mark.line + 1}:{mark.column + 1}"


# What libyaml and PyYAML's own parser say of the same fault, in one wording (libyaml's where it is
# the plainer): a message, and so a test of it, must not depend on how PyYAML was built.
_SAID_ALIKE = (
    (re.compile(r"^did not find expected (.+)$"), r"expected \1"),  # libyaml
    (re.compile(r"^(expected .+?), but (?:got|found) .+$"), r"\1"),  # PyYAML's parser
    (re.compile(r"^expected <block end>$"), "expected '-' indicator"),  # a list item out of line
    (
        re.compile(r"^mapping values are not allowed (?:here|in this context)$"),
        "mapping values are not allowed here",
    ),
    (
        re.compile(r"^found character (?:'.*' )?that cannot start any token$"),
        "found character {found} that cannot start any token",
    ),
)


def _problem(problem: str | None, text: str, mark: _Mark | None) -> str | None:
    """The parser's ``problem`` in the one wording of ``_SAID_ALIKE`` (each rule in turn); the
    character at ``mark`` named where the wording names one."""
    if problem is None:
        return None
    for pattern, said in _SAID_ALIKE:
        problem = pattern.sub(said, problem)
    if "{found}" in problem:
        at = _offset(text, mark) if mark is not None else len(text)
        problem = problem.replace("{found}", repr(text[at]) if at < len(text) else "at the end")
    return problem


def _offset(text: str, mark: _Mark) -> int:
    """The offset in ``text`` of a mark's line and column."""
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: mark.line]) + mark.column


def _syntax_error(err: MarkedYAMLError, source: str, text: str) -> ConfigError:
    """One line for PyYAML's multi-line message: where the parse failed, what it found, and where
    the construct it was reading began."""
    mark = err.problem_mark or err.context_mark
    what = _problem(err.problem, text, mark) or err.context or "cannot be parsed"
    if err.problem and err.context:
        began = err.context_mark
        if began is not None and mark is not None and (began.line, began.column) == (mark.line, mark.column):
            began = None  # where the fault is, said once (PyYAML's parser leaves it out; libyaml repeats it)
        where = f" at line {began.line + 1}, column {began.column + 1}" if began is not None else ""
        if err.context.startswith("while"):  # "did not find ... (while parsing a flow sequence at ...)"
            what = f"{what} ({err.context}{where})"
        else:  # "expected a single document in the stream (at ...), but found another document"
            what = f"{err.context}{where.replace(' at', ' (at', 1)}{')' if where else ''}, {what}"
    return ConfigError(
        f"is not valid YAML: {' '.join(what.split())}",
        path=_at(source, mark),
        fix="Fix it at that line and column (a value holding ': ' or ' #' needs quotes)",
    )
