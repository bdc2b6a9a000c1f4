# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install the project (with its test extra) when needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint format bench screenshots clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP)
	$(PY) benchmarks/append_bench.py
	$(PY) benchmarks/store_bench.py
	$(PY) benchmarks/replay_store_bench.py
	$(PY) benchmarks/replay_memory.py
	$(PY) benchmarks/layers_bench.py
	$(PY) benchmarks/ui_bench.py

screenshots: $(STAMP)
	FLOWDROP_SCREENSHOT_DIR=docs/screenshots $(PY) -m pytest -q tests/test_browser.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
