# The test command of README.md; .ci/run calls exactly `make test`, with its new .ci/venv activated
# (so python3 here is that virtualenv's, and pip installs into it).
PY ?= python3

.PHONY: install-dev test test-slow lint

# torch first and pinned: 2.13.0 is a local CPU wheel here; anything else pulls gigabytes of CUDA.
install-dev:
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"

# The suite on pytest-xdist workers: one per core (-n auto), at most 4 (each holds its own PostgreSQL, models
# and servers); a test file runs whole on one worker (--dist loadfile), so its module-scoped fixtures (models,
# the ONNX export, the HTTP service, the browser, the Ray cluster) are built once, not once per worker.
# `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= auto

test: install-dev
	$(PY) -m pytest -n $(PYTEST_WORKERS) --maxprocesses 4 --dist loadfile

test-slow: install-dev
	$(PY) -m pytest -m slow

lint:
	$(PY) -m ruff check src tests bench
