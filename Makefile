# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install the project (with its test extra) when needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test test-fast lint format bench screenshots clean mutate coverage

$(STAMP): pyproject.toml setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The installed command users run (`flowdrop-buffer inspect`), on this clone's app.py.
# Loopback only unless the operator says otherwise: `make run ADDRESS=0.0.0.0` serves it to
# the network (see docs: "Serving it to a team"; set FLOWDROP_TOKEN or put it behind a proxy).
ADDRESS ?= 127.0.0.1
PORT    ?= 8501
run: $(STAMP)
	$(VENV)/bin/flowdrop-buffer inspect --address $(ADDRESS) --port $(PORT)

test: $(STAMP)
	$(PY) -m pytest -q

# The rule core in under a minute: no slow, UI, browser, Redis or Postgres test
# (markers are applied in tests/conftest.py). `make test` stays the whole suite.
# tests/app and tests/browser hold only ui and browser tests: not even imported here.
FAST := not slow and not ui and not browser and not redis and not postgres
test-fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "$(FAST)" --ignore=tests/app --ignore=tests/browser

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m mypy

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP)
	$(PY) benchmarks/append_bench.py
	$(PY) benchmarks/store_bench.py
	$(PY) benchmarks/replay_store_bench.py
	$(PY) benchmarks/replay_memory.py
	$(PY) benchmarks/scale_bench.py
	$(PY) benchmarks/layers_bench.py
	$(PY) benchmarks/ui_bench.py

screenshots: $(STAMP)
	FLOWDROP_SCREENSHOT_DIR=docs/screenshots $(PY) -m pytest -q -m browser tests/browser

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# Mutation testing of the rule core (not part of `make test`; see scripts/mutate.py).
# Bounded runs: make mutate MUTATE_ARGS="--sample 40 --seed 1" or "--resume --limit 100".
MUTATE_ARGS ?=
mutate: $(STAMP)
	$(PY) scripts/mutate.py --jobs 2 $(MUTATE_ARGS)

# Branch coverage of flowdrop_core without the UI: the AppTest page tests (marker ui)
# and the browser tests (marker browser) are left out, so only library tests count.
# The report prints even when a test fails; the target still fails then.
coverage: $(STAMP)
	$(PY) -m coverage run --branch --source=flowdrop_core -m pytest -q -p no:cacheprovider \
		-m "not ui and not browser"; \
	status=$$?; $(PY) -m coverage report --show-missing --skip-covered; exit $$status
