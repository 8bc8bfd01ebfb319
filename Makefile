# Regenerate, check and test the documentation pages.
#   make            figures + check
#   make figures    rerun the section scripts whose script or shared module changed
#   make check      every number in the page prose against the printed numbers
#   make fix        rewrite the stale numbers make check found (unambiguous ones)
#   make test       the whole test suite (what CI runs)
#   make golden     rewrite the pinned golden record on purpose
#   make seeds      rerun every section at seed offsets 0..2: spread and claims
#   make bench      time each section and the whole loop against the budgets
#   make docs       build the documentation site into build/site
#   make preview    render every SVG to PNG under build/preview
#   make clean      remove the generated figures, numbers and build output

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.requirements-installed

PAGE := normalisation-and-stability
PACKAGE := docs/diagrams/normalisation_and_stability
SHARED := docs/diagrams/section_kit.py docs/diagrams/page_registry.py $(PACKAGE)/__init__.py
SCRIPTS := $(filter-out $(PACKAGE)/__init__.py,$(wildcard $(PACKAGE)/*.py))
NUMBERS := $(SCRIPTS:$(PACKAGE)/%.py=figures/$(PAGE)/numbers/%.json)
# `make -B` means "rerun every section", not only the stale ones.
RUN_WHICH := $(if $(findstring B,$(firstword -$(MAKEFLAGS))),--all,--stale)

.DEFAULT_GOAL := all
.PHONY: all figures check fix test golden seeds bench docs clean venv preview

all: figures check

venv: $(VENV_STAMP)

# The virtual environment is made on first use and updated when the pins
# change (the test keeps `make -B` from reinstalling what is already there).
$(VENV_STAMP): requirements.txt
	@if [ requirements.txt -nt $@ ] || [ ! -x $(PY) ]; then \
	  set -e; \
	  test -x $(PY) || $(PYTHON) -m venv $(VENV); \
	  echo "installing requirements.txt into $(VENV)"; \
	  $(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt; \
	  touch $@; \
	fi

figures: $(NUMBERS)

# One runner imports numpy, matplotlib and torch once and forks a worker per
# stale section, one per core; a section is stale when its numbers file is
# older than its script, a section it imports, the shared module or the pins.
$(NUMBERS) &: $(SCRIPTS) $(SHARED) $(VENV_STAMP)
	$(PY) docs/diagrams/run_sections.py $(RUN_WHICH)

check: $(VENV_STAMP)
	$(PY) docs/diagrams/check_page.py

# Rewrite the stale numbers `make check` found, where the new text is unambiguous.
fix: $(VENV_STAMP)
	$(PY) docs/diagrams/check_page.py --fix

test: $(VENV_STAMP)
	$(PY) -m pytest -q tests

golden: figures
	$(PY) tests/write_golden.py

# -E reads every page afresh, so a broken anchor fails every build, not just the first.
docs: figures
	$(PY) -m sphinx -E -W --keep-going -q -b html docs build/site
	@echo "open build/site/index.html"

seeds: $(VENV_STAMP)
	$(PY) docs/diagrams/seed_report.py

bench: $(VENV_STAMP)
	$(PY) docs/diagrams/bench.py

# What make figures regenerates, and the build output. The seed report
# (make seeds) stays, as it takes a minute to remake, and so do the last
# section timings in build/, which make figures uses to start the longest
# section first.
clean:
	rm -rf figures/$(PAGE)/*.svg figures/$(PAGE)/numbers build/site build/preview build/test-artifacts

# Render every SVG to PNG so an author can look at each figure.
preview: figures
	$(PY) -c "import cairosvg, pathlib; out = pathlib.Path('build/preview'); out.mkdir(parents=True, exist_ok=True); [cairosvg.svg2png(url=str(f), write_to=str(out / (f.stem + '.png')), output_width=1000) for f in sorted(pathlib.Path('figures').glob('*/*.svg'))]"
