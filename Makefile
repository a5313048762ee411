# Two commands for a fresh machine with python3 (>= 3.10) and make:
#   make run    set up .venv and recommend an architecture for the default scenario
#   make test   set up .venv and run the whole test suite (ruff, mypy, pytest)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test system-deps lint typecheck pytest binder-check clean constraints

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[workbook,dev,distributed]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/cluster-decide solve

test: $(STAMP) system-deps lint typecheck pytest

# Debian packages for the browser and rendering tests (chromium, LibreOffice, pdftoppm), when missing.
system-deps:
	bash .ci/system-deps.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# pytest exits 5 when it collects no tests; make treats that as the failure it is.
pytest: $(STAMP)
	$(BIN)/python -m pytest

# Binder's environment alone (binder/requirements.txt + postBuild) serves the apps in a browser.
binder-check: $(STAMP) system-deps
	bash binder/verify.sh

# Re-pin every package after a deliberate upgrade (commit the result).
constraints: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable --exclude cluster-decide > constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
