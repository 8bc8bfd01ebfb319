# Regenerate, check and test the documentation pages. `make help` lists the targets.
# Every target covers every page; PAGE=<slug> limits figures, check and fix to one page,
# e.g. `make figures PAGE=normalisation-layers`.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.requirements-installed
# Every package of .venv, transitive ones included, pinned with hashes;
# `make lock` writes it from the direct requirements in requirements.txt.
LOCK := requirements.lock
PAGE ?=
PAGE_ARG := $(if $(PAGE),--page $(PAGE))
# `make -B` means "rerun every section", not only the stale ones.
RUN_WHICH := $(if $(findstring B,$(firstword -$(MAKEFLAGS))),--all,--stale)

.DEFAULT_GOAL := all
.PHONY: doctor all help figures check fix lint test test-quick screenshots golden seeds robustness thread-check bench docs pdf clean venv preview new-page remove-page lock notebooks notebook-times

all: figures check notebooks ## figures, check, then the notebooks

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  make \1\t/' | expand -t 22

venv: $(VENV_STAMP) ## create .venv from requirements.lock (first time: a few minutes, about 1.4 GB)

# The virtual environment is made on first use and updated when the lock
# changes (the test keeps `make -B` from reinstalling what is already there).
# pip, not another installer: torch==2.13.0+cpu comes from the machine's local
# wheel folder, which pip's configuration names. The lock's hashes make pip
# check every file (--require-hashes is implied).
$(VENV_STAMP): $(LOCK) pyproject.toml
	@if [ $(LOCK) -nt $@ ] || [ pyproject.toml -nt $@ ] || [ ! -x $(PY) ]; then \
	  set -e; \
	  test -x $(PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }; \
	  echo "installing $(LOCK) into $(VENV): about 2 minutes and 1.4 GB the first time (torch is most of it)"; \
	  { $(PY) -m pip install --disable-pip-version-check -r $(LOCK) 2>&1; echo $$? > $(VENV)/.pip-status; } \
	    | grep --line-buffered -v 'is ignored: it is neither a file nor a directory' || true; \
	  test "$$(cat $(VENV)/.pip-status)" = 0 || { echo "error: pip could not install $(LOCK) into $(VENV): see its output above" >&2; exit 1; }; \
	  $(PY) -m pip install --disable-pip-version-check --quiet --no-deps --no-build-isolation -e . \
	    || { echo "error: pip could not install this project into $(VENV) (pip install -e .)" >&2; exit 1; }; \
	  touch $@; \
	  echo "$(VENV) is ready"; \
	fi

# pip-compile (pip-tools, itself locked) resolves requirements.txt with pip's
# own resolver and configuration, so it finds the local torch wheel. It keeps
# every pin the lock already has that still fits (add a package: only it and
# its new dependencies are added); `make lock UPGRADE=1` re-resolves all.
lock: $(VENV_STAMP) ## write requirements.lock from requirements.txt (then make venv installs it)
	@{ CUSTOM_COMPILE_COMMAND="make lock" $(PY) -m piptools compile --quiet --generate-hashes --allow-unsafe --strip-extras \
	    --no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade) \
	    --output-file $(LOCK) requirements.txt 2>&1; echo $$? > $(VENV)/.lock-status; } \
	  | grep --line-buffered -v 'is ignored: it is neither a file nor a directory' || true
	@test "$$(cat $(VENV)/.lock-status)" = 0 || { echo "error: pip-compile could not lock requirements.txt: see its output above" >&2; exit 1; }
	@echo "wrote $(LOCK) ($$(grep -c '^[a-z0-9].*==' $(LOCK)) packages); \`make venv\` installs it"

# One runner for every page: it reruns only the sections whose inputs' content
# changed (see docs/diagrams/pagekit/run_sections.py), so the target is always run and
# make never deletes an output when a run is interrupted.
figures: $(VENV_STAMP) ## rerun the sections whose inputs changed (make -B figures: all)
	@$(PY) -m pagekit.run_sections $(RUN_WHICH) $(PAGE_ARG)

# Each page's notebook, built from its section scripts and committed numbers;
# rewritten only when one of its inputs changed (docs/diagrams/pagekit/notebooks.py).
notebooks: figures ## rebuild each page's notebook (figures/<page>/<page>.ipynb) if its inputs changed
	@$(PY) -m pagekit.notebooks $(PAGE_ARG)

# SETTING=quick (default) or page; the page setting of the second page trains for minutes.
notebook-times: $(VENV_STAMP) ## execute each notebook (SETTING=quick|page) and record how long each experiment takes
	@$(PY) -m pagekit.notebooks --time $(or $(SETTING),quick) $(PAGE_ARG)

check: $(VENV_STAMP) ## every number in the pages' prose against the printed numbers; every citation against the bibliography
	@$(PY) -m pagekit.check_page --citations $(PAGE)

fix: $(VENV_STAMP) ## rewrite the stale numbers make check found (unambiguous ones)
	@$(PY) -m pagekit.check_page --fix $(PAGE)

doctor: $(VENV_STAMP) ## does this machine reproduce the committed numbers? (its kernels' fingerprint, a few seconds)
	@$(PY) -m pagekit.kernel_fingerprint

# Rules and why: pyproject.toml. make test runs it too (tests/test_lint.py).
lint: $(VENV_STAMP) ## ruff over docs/ and tests/: unused or undefined names, silent zip truncation, layout (ruff format . fixes it)
	@$(VENV)/bin/ruff check --no-cache .
	@$(VENV)/bin/ruff format --no-cache --check .

test: $(VENV_STAMP) ## the whole test suite, lint included (what CI runs); PAGE=<slug>: that page's tests only
	@$(PY) -m pytest tests $(if $(PAGE),-k "$(PAGE)")

test-quick: $(VENV_STAMP) ## the tests without the slow ones (browser, variant rerun, mutations)
	@$(PY) -m pytest tests -m "not slow"

# The browser tests with the screenshots (make test leaves them out: they are
# for a person to look at).
screenshots: $(VENV_STAMP) ## photograph every page (desktop, phone, dark theme) into build/test-artifacts/
	@$(PY) -m pytest tests/test_site.py -m screenshots -n 0

golden: figures ## pin the current numbers, claims, figures and prose binding on purpose (and rebuild the notebooks)
	@$(PY) -m pagekit.write_golden $(PAGE_ARG)
	@$(PY) -m pagekit.notebooks $(PAGE_ARG)

robustness: $(VENV_STAMP) ## rerun every section at seed offsets 0..2 and under other numeric variants
	@$(PY) -m pagekit.robustness_report $(PAGE_ARG)

seeds: robustness ## the old name of make robustness

# What the report's thread skip (THREAD_EXACT_SECTIONS) rests on, at full size.
thread-check: $(VENV_STAMP) ## train a full run of each of page 2's models on one and on two torch threads: the same bits? (2 to 3 minutes)
	@$(PY) -m normalisation_layers.thread_check

bench: $(VENV_STAMP) ## time each section, each page and the author's loop against the budgets
	@$(PY) -m pagekit.bench

# -E reads every page afresh, so a broken anchor fails every build, not just the first.
# The site and each page's PDF, which the page links: headless Chromium prints
# each built page with the site's print stylesheet. Without Chromium the site
# is built without PDFs, and its pages do not link them.
docs: notebooks ## build the documentation site into build/site, each page's PDF included
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then \
	  $(PY) -m sphinx -E -W --keep-going -q -b html docs build/site && $(PY) docs/site_pdf.py build/site; \
	else \
	  echo "note: no Chromium (apt-get install chromium chromium-driver): building the site without its PDFs"; \
	  $(PY) -m sphinx -E -W --keep-going -q -b html -D site_pdfs=0 docs build/site; \
	fi
	@echo "built build/site ($$(du -sh build/site | cut -f1)); open build/site/index.html"

pdf: docs ## the same as make docs: the site with each page's PDF

preview: figures ## render every SVG to PNG under build/preview to look at
	@$(PY) -m pagekit.preview_figures $(PAGE_ARG)

# A new page, ready to grow (CONTRIBUTING.md): its package, first section and
# prose, then its numbers, golden record, robustness report, notebook (timed) and
# hands-on time, then the check: the page passes `make check` and `make test PAGE=...`.
new-page: $(VENV_STAMP) ## scaffold a page: make new-page PAGE=my-page [TITLE="My page"]
	@test -n "$(PAGE)" || { echo 'usage: make new-page PAGE=my-page [TITLE="My page"]' >&2; exit 2; }
	@$(PY) -m pagekit.new_page create $(PAGE) $(if $(TITLE),--title "$(TITLE)")
	@$(PY) -m pagekit.run_sections --stale --page $(PAGE)
	@$(PY) -m pagekit.write_golden --page $(PAGE)
	@$(PY) -m pagekit.robustness_report --page $(PAGE)
	@$(PY) -m pagekit.notebooks --page $(PAGE)
	@$(PY) -m pagekit.notebooks --time quick --page $(PAGE)
	@$(PY) -m pagekit.notebooks --time page --page $(PAGE)
	@$(PY) -m pagekit.notebooks --page $(PAGE)
	@$(PY) -m pagekit.bench --cold-only --page $(PAGE)
	@$(PY) -m pagekit.check_page $(PAGE)

remove-page: $(VENV_STAMP) ## remove an uncommitted page make new-page made: make remove-page PAGE=my-page
	@test -n "$(PAGE)" || { echo 'usage: make remove-page PAGE=my-page' >&2; exit 2; }
	@$(PY) -m pagekit.new_page remove $(PAGE)

# What make figures regenerates (every page: it takes minutes for the second
# page), the build output and any temp file an interrupted run left. The
# committed robustness reports stay.
clean: ## remove the generated figures, numbers and build output
	rm -rf figures/*/*.svg figures/*/numbers build/site build/preview build/test-artifacts build/runs
	find figures -name '.*.tmp' -delete
