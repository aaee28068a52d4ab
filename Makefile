# The test command of README.md; .ci/run calls exactly `make test`.
PY ?= python3

.PHONY: install-dev test test-slow lint

install-dev:
	$(PY) -m pip install -q -e ".[dev]"

test: install-dev
	$(PY) -m pytest

test-slow: install-dev
	$(PY) -m pytest -m slow

lint:
	$(PY) -m ruff check src tests bench
