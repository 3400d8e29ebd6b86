# treelab: `make demo` runs the main job, `make test` runs the checks (lint, types, doctests, the suite).
# Every target sets up what it needs first: `make demo` only the package and Graphviz (about 200 MB,
# no browser); `make test` everything the suite needs (the dev group, every extra, chromium).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo
SOURCES := pyproject.toml setup.py $(wildcard treelab/*.c treelab/*.h)

.PHONY: setup demo-setup demo test test-fast lint docs bench clean dot bytecode notebooks chromium

# pip compiles an installed package's bytecode, an editable install gets none, and with
# PYTHONDONTWRITEBYTECODE set (as here) every `treelab` start would compile each edited module
# again (~15 ms). compileall rewrites only what changed, so this runs before every command.
COMPILE = $(BIN)/python -m compileall -q treelab

# Everything the suite needs: the package with the extras its tests use (learn: scikit-learn;
# notebooks: anywidget, JupyterLab, the kernel), the dev group (pytest, linters, OpenSpiel, Ray,
# Playwright, the docs site, mctx), Graphviz and chromium. A full set-up is a demo set-up too.
setup: $(STAMP) dot chromium
	@$(COMPILE)

$(STAMP): $(SOURCES)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[learn,notebooks]' --group dev
	@touch $(STAMP) $(DEMO_STAMP)

# What the demo needs and nothing else: the package (no extras) and Graphviz's dot.
demo-setup: $(DEMO_STAMP) dot
	@$(COMPILE)

$(DEMO_STAMP): $(SOURCES)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	@touch $(DEMO_STAMP)

bytecode:
	@$(COMPILE)

# Graphviz's `dot` program: install it with the system package manager when missing.
dot:
	@command -v dot >/dev/null 2>&1 || { \
	  echo "installing Graphviz (dot)..."; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  if command -v apt-get >/dev/null 2>&1; then \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq graphviz >/dev/null; \
	  elif command -v brew >/dev/null 2>&1; then brew install graphviz; \
	  elif command -v dnf >/dev/null 2>&1; then $$SUDO dnf install -y graphviz; \
	  else echo "please install Graphviz (the dot program) and re-run"; exit 1; fi; }
	@dot -V

# Debian's chromium for the explorer's browser tests (Playwright drives it; it never downloads browsers).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium (for the explorer's browser tests)..."; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  if command -v apt-get >/dev/null 2>&1; then \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	  else echo "please install chromium (the explorer's browser tests need it) and re-run"; exit 1; fi; }

demo: demo-setup
	$(BIN)/treelab train connect4 --db data/demo.db --games 60 --iterations 200 --seed 1
	$(BIN)/treelab stats data/demo.db
	$(BIN)/treelab info data/demo.db
	$(BIN)/treelab render data/demo.db --depth 2 --top 3 -o data/demo.svg
	@echo "drew the top of the tree (UCB1 on every edge) into data/demo.svg"

# The suite collects tests/ and, with --doctest-modules, every docstring example in treelab/
# (pyproject.toml's pytest settings); tests/docs/test_site.py builds the documentation site with
# warnings as errors. CI's .ci/run is `make test`, so it lints too.
test: setup lint
	$(BIN)/python -m pytest -n 2 -q

# The suite without what takes minutes: the many-game runs (slow) and the tests that start JAX, Ray or a
# notebook kernel (jax, ray, notebook; pyproject.toml's markers, docs/development.md's durations).
test-fast: setup
	$(BIN)/python -m pytest -n 2 -q -m "not slow and not jax and not ray and not notebook"

lint: setup
	$(BIN)/ruff check treelab tests benchmarks docs setup.py
	$(BIN)/mypy treelab

# The documentation site (MkDocs + Material, mkdocs.yml) into site/, warnings as errors; the CLI and
# API reference pages are generated from the code (docs/reference_hooks.py). `.venv/bin/mkdocs serve` previews it.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# JupyterLab (the `notebooks` extra, and OpenSpiel for the bring-your-own-search notebook) in the
# venv, then the notebooks in it; Ctrl-C stops the server. No test tools, no browser.
# (Jupyter refuses to run as root unless told: containers often are root.)
NOTEBOOKS_STAMP := $(VENV)/.notebooks
$(NOTEBOOKS_STAMP): $(DEMO_STAMP)
	$(BIN)/python -m pip install -q -e '.[notebooks,openspiel]'
	@touch $(NOTEBOOKS_STAMP)

notebooks: demo-setup $(NOTEBOOKS_STAMP)
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)

bench: setup
	$(BIN)/python benchmarks/search.py
	$(BIN)/python benchmarks/render_subtree.py
	$(BIN)/python benchmarks/scale.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
