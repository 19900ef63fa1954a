"""The mkdocs hook that puts the Results view on the site (``hooks:`` in mkdocs.yml).

At each build it adds, as generated files, the view's page and scripts read from the installed
package (``clear_rag/web/static``, never copied into ``site/``) under ``view/``, and the JSON the
Results API would answer about ``results/`` (next to mkdocs.yml, wherever mkdocs runs from; or the
first of ``extra: results_dirs`` where a run's copy of the site names its own) under ``view/data/``.
What is written, and how, is ``clear_rag.results.export``; this module only wires it.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from clear_rag.errors import ClearRagError
from clear_rag.results.export import DATA, export, page_files

VIEW = "view"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    # A run's own copy of the site (assets/site.py) names its results folder; the committed site's
    # is results/ beside mkdocs.yml.
    named = config.extra.get("results_dirs") or []
    results = Path(named[0]) if named else Path(config.config_file_path).resolve().parent / "results"
    try:
        data = export(results)
        generated = {**page_files(), **{f"{DATA}/{path}": content for path, content in data.items()}}
    except ClearRagError as err:
        # mkdocs prints a PluginError as one line and stops, rather than a traceback
        raise PluginError(f"the Results view (clear_rag/report/site_hook.py): {err}") from None
    for path, content in generated.items():
        src_uri = f"{VIEW}/{path}"
        if files.get_file_from_path(src_uri) is not None:
            raise PluginError(f"{config.docs_dir}/{src_uri}: the Results view generates it; move it aside")
        files.append(File.generated(config, src_uri, content=content))
    return files
