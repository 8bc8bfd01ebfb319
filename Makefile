# Regenerate, check and test the documentation pages.
#   make            figures + check
#   make figures    rerun the section scripts whose script or shared module changed
#   make check      every number in the page prose against the printed numbers
#   make test       the whole test suite (what CI runs)
#   make golden     rewrite the pinned golden record on purpose
#   make clean      remove generated figures, numbers and build output

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.requirements-installed

PAGE := normalisation-and-stability
PACKAGE := docs/diagrams/normalisation_and_stability
SHARED := docs/diagrams/section_kit.py $(PACKAGE)/__init__.py
SECTIONS := $(filter-out __init__,$(basename $(notdir $(wildcard $(PACKAGE)/*.py))))
NUMBERS := $(SECTIONS:%=figures/$(PAGE)/numbers/%.json)

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.PHONY: all figures check test golden clean venv preview

all: figures check

venv: $(VENV_STAMP)

# The virtual environment is made on first use and remade when the pins change.
$(VENV_STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

figures: $(NUMBERS)

# A section reruns only when its script, the shared module or the pins change.
figures/$(PAGE)/numbers/%.json: $(PACKAGE)/%.py $(SHARED) $(VENV_STAMP)
	$(PY) $< --quiet

check: $(VENV_STAMP)
	$(PY) docs/diagrams/check_page.py

test: $(VENV_STAMP)
	$(PY) -m pytest -q tests

golden: figures
	$(PY) tests/write_golden.py

clean:
	rm -rf figures/$(PAGE) build

# Render every SVG to PNG so an author can look at each figure.
preview: figures
	$(PY) -c "import cairosvg, pathlib; out = pathlib.Path('build/preview'); out.mkdir(parents=True, exist_ok=True); [cairosvg.svg2png(url=str(f), write_to=str(out / (f.stem + '.png')), output_width=1000) for f in sorted(pathlib.Path('figures').glob('*/*.svg'))]"
