# Two entry points for a fresh machine: `make report` (the main job) and `make test`.
# Each creates the virtual environment .venv with pip on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[test]'
	touch $@

.PHONY: report test bench
report: $(VENV)/.installed
	$(PY) -m dfltheory report

test: $(VENV)/.installed
	$(PY) -m pytest -n 2 -q

bench: $(VENV)/.installed
	$(PY) benchmarks/run_all.py
