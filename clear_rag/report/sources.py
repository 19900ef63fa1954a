"""Where a page's result files are read from (``Results``) and where their plots are written
(``plot_path``): what the blocks and the figures both read, so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError

PLOTS = Path("site") / "plots"


@dataclass(frozen=True)
class Results:
    """Where result files are read from: ``folders`` in order, the first that holds a file wins (a run's
    own results, then the committed ones for the files the run did not write)."""

    folders: tuple[Path, ...]
    _cache: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    drawn: dict[tuple[str, str], bytes] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def at(cls, *folders: Path | str) -> Results:
        return cls(tuple(Path(f) for f in folders))

    def path(self, name: str) -> Path:
        for folder in self.folders:
            candidate = folder / f"{name}.json"
            if candidate.is_file():
                return candidate
        raise InputError(
            "is named by a results block but does not exist",
            path=str(self.folders[0] / f"{name}.json"),
            fix="Write it with the command that produces it (see site/reproduce.md), "
            "or correct the name in the block",
        )

    def load(self, name: str) -> dict[str, Any]:
        if name not in self._cache:
            from clear_rag.results.files import read_document

            self._cache[name] = read_document(self.path(name))
        return self._cache[name]

    def names(self) -> list[str]:
        """Every result file's name, suites first then benchmarks, each once."""
        found = {
            path.relative_to(folder).with_suffix("").as_posix()
            for folder in self.folders
            for path in folder.rglob("*.json")
            if "generations" not in path.relative_to(folder).parts
        }
        return sorted(found, key=lambda name: (name.count("/"), name))

    def matching(self, pattern: str) -> list[str]:
        """The result files a block's name stands for: itself, or for ``*`` every file, and for
        ``FOLDER/*`` the files of that folder (not of its subfolders), its ``agreement`` file first."""
        if "*" not in pattern:
            return [pattern]
        if pattern == "*":
            return self.names()
        folder = pattern.removesuffix("*")
        found = [n for n in self.names() if n.startswith(folder) and "/" not in n.removeprefix(folder)]
        return sorted(found, key=lambda n: (n != f"{folder}agreement", n))

    def folder(self, name: str) -> Path:
        path = self.path(name)
        return path.parents[name.count("/")]


def plot_path(name: str, which: str) -> Path:
    """Where the plot ``which`` of result file ``name`` lives, from the project root."""
    return PLOTS / f"{name.replace('/', '-')}-{which}.svg"
