# Regenerate, check and test the documentation pages. `make help` lists the targets.
# Every target covers every page; PAGE=<slug> limits figures, check and fix to one page,
# e.g. `make figures PAGE=normalisation-layers`.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.requirements-installed
PAGE ?=
PAGE_ARG := $(if $(PAGE),--page $(PAGE))
# `make -B` means "rerun every section", not only the stale ones.
RUN_WHICH := $(if $(findstring B,$(firstword -$(MAKEFLAGS))),--all,--stale)

.DEFAULT_GOAL := all
.PHONY: all help figures check fix test test-quick golden seeds robustness bench docs clean venv preview

all: figures check ## figures, then check

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  make \1\t/' | expand -t 22

venv: $(VENV_STAMP) ## create .venv from requirements.txt (first time: a few minutes, about 1.4 GB)

# The virtual environment is made on first use and updated when the pins
# change (the test keeps `make -B` from reinstalling what is already there).
$(VENV_STAMP): requirements.txt
	@if [ requirements.txt -nt $@ ] || [ ! -x $(PY) ]; then \
	  set -e; \
	  test -x $(PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }; \
	  echo "installing requirements.txt into $(VENV): about 2 minutes and 1.4 GB the first time (torch is most of it)"; \
	  { $(PY) -m pip install --disable-pip-version-check -r requirements.txt 2>&1; echo $$? > $(VENV)/.pip-status; } \
	    | grep --line-buffered -v 'is ignored: it is neither a file nor a directory' || true; \
	  test "$$(cat $(VENV)/.pip-status)" = 0 || { echo "error: pip could not install requirements.txt into $(VENV): see its output above" >&2; exit 1; }; \
	  touch $@; \
	  echo "$(VENV) is ready"; \
	fi

# One runner for every page: it reruns only the sections whose inputs' content
# changed (see docs/diagrams/run_sections.py), so the target is always run and
# make never deletes an output when a run is interrupted.
figures: $(VENV_STAMP) ## rerun the sections whose inputs changed (make -B figures: all)
	@$(PY) docs/diagrams/run_sections.py $(RUN_WHICH) $(PAGE_ARG)

check: $(VENV_STAMP) ## every number in the pages' prose against the printed numbers; every citation against the bibliography
	@$(PY) docs/diagrams/check_page.py $(PAGE)
	@$(PY) docs/diagrams/check_citations.py

fix: $(VENV_STAMP) ## rewrite the stale numbers make check found (unambiguous ones)
	@$(PY) docs/diagrams/check_page.py --fix $(PAGE)

test: $(VENV_STAMP) ## the whole test suite (what CI runs)
	@$(PY) -m pytest tests

test-quick: $(VENV_STAMP) ## the tests without the slow ones (browser, variant rerun, mutations)
	@$(PY) -m pytest tests -m "not slow"

golden: figures ## pin the current numbers, claims, figures and prose binding on purpose
	@$(PY) tests/write_golden.py $(PAGE_ARG)

robustness: $(VENV_STAMP) ## rerun every section at seed offsets 0..2 and under other numeric variants
	@$(PY) docs/diagrams/robustness_report.py $(PAGE_ARG)

seeds: robustness ## the old name of make robustness

bench: $(VENV_STAMP) ## time each section, each page and the author's loop against the budgets
	@$(PY) docs/diagrams/bench.py

# -E reads every page afresh, so a broken anchor fails every build, not just the first.
docs: figures ## build the documentation site into build/site
	@$(PY) -m sphinx -E -W --keep-going -q -b html docs build/site
	@echo "built build/site ($$(du -sh build/site | cut -f1)); open build/site/index.html"

preview: figures ## render every SVG to PNG under build/preview to look at
	@$(PY) docs/diagrams/preview_figures.py $(PAGE_ARG)

# What make figures regenerates (every page: it takes minutes for the second
# page), the build output and any temp file an interrupted run left. The
# committed robustness reports stay.
clean: ## remove the generated figures, numbers and build output
	rm -rf figures/*/*.svg figures/*/numbers build/site build/preview build/test-artifacts build/runs
	find figures -name '.*.tmp' -delete
