# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
# The CPU build of torch is installed before the package so that `torch>=...` in
# pyproject.toml is already satisfied (a plain `pip install torch` pulls CUDA, several GB).
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
PIP_FLAGS ?=
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow lint bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install $(PIP_FLAGS) "$(TORCH_SPEC)"
	$(BIN)/pip install $(PIP_FLAGS) -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# the audit with no input files runs on the embedded default; the report lands in mace-output/demo
demo: $(STAMP)
	$(BIN)/python -m sklearn_mace audit

test: $(STAMP)
	$(BIN)/python -m pytest

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow

# the linter and the formatter, over everything the repository ships
LINT_PATHS := sklearn_mace tests examples benchmarks
lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

clean:
	rm -rf $(VENV) mace-output *.egg-info
