# `make help` lists the targets. Everything runs in .venv, made on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUILD ?= build
OLDEST := $(VENV)/oldest

.DEFAULT_GOAL := help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# uv fetches and installs in parallel, in half pip's time; it compiles the bytecode up front
# so that the tests' first imports need not.
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode

$(BIN)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	$(UV) -r requirements-dev.txt
	$(UV) --no-deps keras-hub
	touch $@

# Beside .venv, not in it: a test puts this folder first on PYTHONPATH to run with them.
$(OLDEST)/.installed: requirements-oldest.txt $(BIN)/.installed
	rm -rf $(OLDEST)
	$(BIN)/python -m pip install --quiet --no-deps --target $(OLDEST) -r requirements-oldest.txt
	touch $@

venv: $(BIN)/.installed $(OLDEST)/.installed ## create .venv with the template's and a rendered project's requirements, and the oldest Kaggle client beside it

demo: venv ## render the defaults into build/demo, then build, train, predict and score the digits demo
	rm -rf $(BUILD)/demo
	$(BIN)/cookiecutter --no-input --default-config --output-dir $(BUILD)/demo .
	$(MAKE) -C $(BUILD)/demo/* demo PYTHON=$(abspath $(BIN)/python)

# The default render's training notebook, as `kernel` writes it: what the README offers those
# who stay on Kaggle (tests/test_notebook.py keeps it equal to a fresh render's).
notebook: venv ## write notebook/flower-classification.ipynb: the default render's training notebook
	rm -rf $(BUILD)/notebook
	$(BIN)/cookiecutter --no-input --default-config --output-dir $(BUILD)/notebook .
	cd $(BUILD)/notebook/flower-classification && $(abspath $(BIN)/python) -m flower_classification \
		kernel --kaggle-user you --kernel-dir $(abspath $(BUILD)/notebook/kernel)
	mkdir -p notebook && cp $(BUILD)/notebook/kernel/flower-classification.ipynb notebook/

test: venv ## run the template's tests: rendering, answers, lint, and the rendered project's tests
	$(BIN)/python -m pytest -n 2 --dist worksteal -m "not edit_loop" --durations=10

test-platforms: venv ## the rendered project's model, notebook and code-competition tests on each platform's own packages (PLATFORMS=NAME: one set)
	$(BIN)/python tests/platforms.py $(PLATFORMS)

test-quick: venv ## the edit loop's tests (a minute or two): rendering, answers, lint, the rendered project's quick tests
	$(BIN)/python -m pytest -n 2 -m "not slow"

lint: venv ## ruff on the template's own code
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean: ## remove build/ and .venv/
	rm -rf $(BUILD) $(VENV)

.PHONY: help venv demo notebook test test-platforms test-quick lint clean
