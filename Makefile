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

# Each worker's BLAS and OpenMP run one thread (unless the caller set them): two workers on two cores each spinning
# up a pool per core ran the numpy- and torch-heavy files several times slower (the E5, LM and token files: 67 s ->
# 46 s on two cores, measured on a subset). Tests that check threads set their own.
BLAS_ONE = OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} MKL_NUM_THREADS=$${MKL_NUM_THREADS:-1}

test: install-dev
	$(BLAS_ONE) $(PY) -m pytest -n $(PYTEST_WORKERS) --maxprocesses 4 --dist loadfile

test-slow: install-dev
	$(PY) -m pytest -m slow

lint:
	$(PY) -m ruff check src tests bench
