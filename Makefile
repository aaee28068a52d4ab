# The test command of README.md; .ci/run calls exactly `make test`, with its new .ci/venv activated
# (so python3 here is that virtualenv's, and pip installs into it).
PY ?= python3

.PHONY: install-dev test test-slow lint

# torch first and pinned: 2.13.0 is a local CPU wheel here; anything else pulls gigabytes of CUDA.
install-dev:
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"

test: install-dev
	$(PY) -m pytest

test-slow: install-dev
	$(PY) -m pytest -m slow

lint:
	$(PY) -m ruff check src tests bench
