# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install the project (with its test extra) when needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint format bench screenshots clean mutate coverage

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Loopback only unless the operator says otherwise: `make run ADDRESS=0.0.0.0` serves it to
# the network (see docs: "Serving it to a team"; set FLOWDROP_TOKEN or put it behind a proxy).
ADDRESS ?= 127.0.0.1
run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --server.address $(ADDRESS)

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
	FLOWDROP_SCREENSHOT_DIR=docs/screenshots $(PY) -m pytest -q tests/browser/test_browser.py tests/browser/test_browser_navigator.py tests/browser/test_browser_health.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# Mutation testing of the rule core (not part of `make test`; see scripts/mutate.py).
# Bounded runs: make mutate MUTATE_ARGS="--sample 40 --seed 1" or "--resume --limit 100".
MUTATE_ARGS ?=
mutate: $(STAMP)
	$(PY) scripts/mutate.py --jobs 2 $(MUTATE_ARGS)

# Branch coverage of flowdrop_core without the UI: the AppTest page tests and the
# browser tests are left out, so only library tests count. The report prints even
# when a test fails; the target still fails then.
UI_TESTS := tests/app/test_app_pages.py tests/app/test_app_playground.py tests/app/test_app_input.py \
	tests/app/test_app_layout.py tests/app/test_app_navigator.py tests/app/test_app_notes.py \
	tests/app/test_journal_store_page.py
coverage: $(STAMP)
	$(PY) -m coverage run --branch --source=flowdrop_core -m pytest -q -p no:cacheprovider \
		--ignore=tests/browser $(addprefix --ignore=,$(UI_TESTS)); \
	status=$$?; $(PY) -m coverage report --show-missing --skip-covered; exit $$status
