"""Under CI=true no test may skip because something the project installs is missing (a pytest plugin,
loaded by conftest.py).

`.ci/run` installs [dev], Chromium, chromedriver and a CJK font into a fresh virtualenv, so a skip that
says one of them is missing means the install is broken and the tests behind it never ran: the skip
becomes a failure (an error when a fixture or the module's import skipped). Skips for other reasons
(root reads any file, no ../shared/data beside the checkout, ...) stay skips; `-rs` lists them all.
"""

from __future__ import annotations

import os
import re

import pytest

# Skip reasons that say a package, module, extra or tool is missing.
MISSING = re.compile(r"could not import|no module named|not installed|pip install|apt-get install|extra\b"
                     r"|could not start|no CJK font", re.IGNORECASE)
# What CI may miss, with the reason it cannot install it.
ALLOWED_MISSING = {
    # llama-cpp-python compiles llama.cpp from source (minutes of C++ on 2 cores), and such builds were
    # seen to crash with illegal instructions on machines other than the builder's (../shared/MODELS.md):
    # the [llamacpp] extra is not in [dev]; its tests skip, and their transformers halves still run.
    "llama-cpp-python is not installed",
    # A GPU is hardware, not something the project installs: tests that need CUDA skip on CI's CPU machines
    # (their reason does not read as a missing package; listed so a rewording never turns them into failures).
    "no CUDA device",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def missing_dependency(reason: str) -> bool:
    """Whether a skip's reason says something the project installs is missing (and CI may not miss it)."""
    return bool(MISSING.search(reason)) and not any(a in reason for a in ALLOWED_MISSING)


def fail_a_missing_dependency(report) -> None:
    if not (in_ci() and report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple)):
        return
    reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    if missing_dependency(reason):
        report.outcome = "failed"
        report.longrepr = (f"CI=true: skipped because something the project installs is missing: {reason} "
                           "(tests/ci_skips.py: ALLOWED_MISSING lists the only exceptions)")


def pytest_configure(config) -> None:
    if in_ci():  # a file whose import skipped is an error: run the rest anyway, to show every one
        config.option.continue_on_collection_errors = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    fail_a_missing_dependency(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield  # a module-level importorskip skips the whole file here
    fail_a_missing_dependency(outcome.get_result())
