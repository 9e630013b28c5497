# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
# The CPU build of torch is installed before the package so that `torch>=...` in
# pyproject.toml is already satisfied (a plain `pip install torch` pulls CUDA, several GB).
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
PIP_FLAGS ?=
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow lint bench install clean docs docs-full docs-noplot

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

# The suite on every core: pytest-xdist starts one worker process per usable core (`-n auto`:
# CPU affinity and cgroup quota, tests/conftest.py; PYTEST_XDIST_AUTO_NUM_WORKERS=n overrides it),
# each running its libraries on one thread. `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS)

test-slow: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m slow

# the linter and the formatter, over everything the repository ships
LINT_PATHS := sklearn_mace tests examples benchmarks docs
lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

# The documentation site, warnings as errors, into docs/_build/html (open index.html there).
# The examples run in their reduced mode (SKLEARN_MACE_EXAMPLES_QUICK=1: fewer GAN epochs,
# fewer shadow models, smaller grids), so that CI's docs build fits its budget (about 10 min on
# 2 cores); `make docs-full` runs them at full size, `make docs-noplot` does not run them.
SPHINXBUILD := $(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
# every page loads its scripts and stylesheets from the site, never from the network
CHECK_OFFLINE := $(BIN)/python docs/check_offline.py docs/_build/html
# the API pages are generated from every public __all__ at each build: a renamed name
# leaves no stale page behind (a page nobody links fails the -W build)
docs: $(STAMP)
	rm -rf docs/generated
	SKLEARN_MACE_EXAMPLES_QUICK=1 PYTHONPATH=$(CURDIR) $(SPHINXBUILD)
	$(CHECK_OFFLINE)

# sphinx-gallery reruns an example only when its source changed: docs-full drops the
# reduced runs' outputs first
docs-full: $(STAMP)
	rm -rf docs/auto_examples docs/generated
	SKLEARN_MACE_EXAMPLES_QUICK=0 PYTHONPATH=$(CURDIR) $(SPHINXBUILD)
	$(CHECK_OFFLINE)

docs-noplot: $(STAMP)
	rm -rf docs/generated
	SKLEARN_MACE_DOCS_PLOT_GALLERY=0 PYTHONPATH=$(CURDIR) $(SPHINXBUILD)
	$(CHECK_OFFLINE)

clean:
	rm -rf $(VENV) mace-output *.egg-info docs/_build docs/auto_examples docs/generated
