"""Finding the files to ingest: folders walked, symlinks and unreadable folders dealt with by name.

One bad path never ends the walk. A folder that cannot be listed is reported and its stored
documents are kept; a symlink out of the folder given is skipped with a warning unless links are
followed; a name that is not valid UTF-8 is carried on and shown with ``\\x`` escapes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clear_rag.errors import UnreadableFileError
from clear_rag.parse.registry import EXTENSIONS


@dataclass(frozen=True, slots=True)
class Problem:
    """A path the walk could not take, or chose not to (``skipped``), with its one-line message."""

    path: str
    message: str
    skipped: bool = False


@dataclass(frozen=True, slots=True)
class Discovery:
    """What a walk over the given paths found: files to ingest, outcomes for paths that failed or
    were skipped, and folders that could not be listed (their stored documents are kept)."""

    files: list[Path]
    problems: list[Problem]
    unreadable: list[Path]
    skipped: list[Path]


def walk_paths(paths: Iterable[str | Path], *, follow_links: bool = False) -> Discovery:
    """The files to ingest under ``paths``, in sorted order, and outcomes for paths that fail.

    Folders are walked recursively; hidden files and folders are skipped, and so are files of a
    type no parser handles (a file named explicitly with such a type is reported instead). A
    symlink whose target lies outside the folder given is skipped with a warning unless
    ``follow_links``; a folder that cannot be listed is reported by name and the walk goes on.
    """
    found: list[Path] = []
    walk = Discovery([], [], [], [])
    for given in paths:
        path = Path(given)
        if _is_dir(path):
            found.extend(_walk(path, follow_links, walk))
        elif _lexists(path):
            found.append(path)  # named explicitly: read as given, a link followed wherever it goes
        else:
            fault = UnreadableFileError(
                "does not exist", path=shown(path), fix="Check the path and try again"
            )
            walk.problems.append(Problem(shown(path), str(fault)))
    return Discovery(sorted(set(found)), walk.problems, walk.unreadable, walk.skipped)


def _walk(top: Path, follow_links: bool, walk: Discovery) -> Iterator[Path]:
    """Files under ``top``. ``os.walk`` follows every folder left in ``dirs``, so links are chosen
    here: one into ``top`` is never walked (its files are found at their own path), one out of it
    only with ``follow_links``, and then never to a folder walked already or one that holds ``top``
    (either would walk the same files again, or loop for ever).
    """
    root = os.path.realpath(top)
    visited: set[str] = set()

    def refused(err: OSError) -> None:
        # os.walk's default drops an unreadable folder silently; the predecessor then took its
        # documents for gone on the next run, or crashed with a traceback on stat().
        folder = Path(err.filename if err.filename is not None else top)
        walk.unreadable.append(folder)
        fault = UnreadableFileError(
            f"is a folder that cannot be read ({err.strerror or type(err).__name__})",
            path=shown(folder),
            fix="Its files were skipped and what the store holds from it is kept; check its permissions",
        )
        walk.problems.append(Problem(shown(folder), str(fault)))

    for folder, dirs, names in os.walk(top, onerror=refused, followlinks=True):
        visited.add(os.path.realpath(folder))
        kept = []
        for name in sorted(d for d in dirs if not d.startswith(".")):
            sub = Path(folder) / name
            if os.path.islink(sub):
                target = os.path.realpath(sub)
                if _inside(target, root) or target in visited:
                    continue
                if not follow_links:
                    _skip_link(walk, sub, target, top)
                    continue
                if _inside(root, target):
                    _skip_link(walk, sub, target, top, holds_top=True)
                    continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            path = Path(folder) / name
            if name.startswith(".") or path.suffix.lower() not in EXTENSIONS:
                continue
            # Without follow_links no folder link is walked, so only a file link can lead out; a
            # broken one is kept, and reading it fails with a message that says it is broken.
            if not follow_links and os.path.islink(path) and os.path.exists(path):
                target = os.path.realpath(path)
                if not _inside(target, root):
                    _skip_link(walk, path, target, top)
                    continue
            yield path


def _skip_link(walk: Discovery, link: Path, target: str, top: Path, *, holds_top: bool = False) -> None:
    walk.skipped.append(link)
    message = (
        f"{shown(link)}: is a symlink to {shown(target)}, a folder that holds {shown(top)}; skipped, "
        "as following it would walk the same files again"
        if holds_top
        else f"{shown(link)}: is a symlink to {shown(target)}, outside {shown(top)}; skipped. "
        "Pass --follow-links to ingest what it points to"
    )
    walk.problems.append(Problem(shown(link), message, skipped=True))


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except OSError:
        return False


def _lexists(path: Path) -> bool:
    try:
        path.lstat()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # it is there but cannot be looked at: reading it will say why, by name
    return True


def shown(path: str | Path) -> str:
    """A path as text that can be printed and stored: bytes of a name that are not valid UTF-8
    (which Python carries as lone surrogates) are written as ``\\xff`` escapes.

    The predecessor passed such a name on as it was, and the first attempt to print or store it
    raised ``UnicodeEncodeError``, ending the whole ingest without naming the file.
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")
