"""tests/ci_skips.py: under CI=true a skip for a missing dependency fails; other skips, the allowed
llama.cpp skip and expected failures do not; without CI=true every skip stays a skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_skips import missing_dependency

SUITE = '''
import pytest

def test_import():
    pytest.importorskip("no_such_module_for_ci_skips")

@pytest.fixture
def browser():
    pytest.skip("chromium/chromedriver not installed (apt-get install chromium chromium-driver)")

def test_browser(browser):
    pass

@pytest.mark.skipif(True, reason="root reads anything")
def test_root():
    pass

@pytest.mark.skipif(True, reason="llama-cpp-python is not installed (extra [llamacpp], built from source)")
def test_llamacpp():
    pass

@pytest.mark.xfail(reason="not installed yet", strict=True)
def test_expected_failure():
    assert False

def test_runs():
    pass
'''
WHOLE_FILE = '''
import pytest
pytest.importorskip("no_such_module_either", reason="the service tests need the [service] extra")

def test_never_collected():
    pass
'''


@pytest.mark.parametrize("reason,missing", [
    ("could not import 'selenium': No module named 'selenium'", True),
    ("peer not installed: chonkie-recursive: chonkie is not installed (pip install -e '.[eval]')", True),
    ("the service tests need the [service] extra (fastapi, httpx)", True),
    ("pgserver could not start PostgreSQL: OSError: boom", True),
    ("llama-cpp-python is not installed (extra [llamacpp], built from source)", False),
    ("root reads anything", False),
    ("benchmark data not found at ../shared/data (set LOGICHUNK_DATA to run these)", False),
    ("needs the saved document of the previous test", False),
])
def test_which_reasons_are_missing_dependencies(reason, missing):
    assert missing_dependency(reason) is missing


@pytest.fixture
def suite(pytester, monkeypatch):
    pytester.makepyfile(test_suite=SUITE, test_whole_file=WHOLE_FILE)
    here = str(Path(__file__).parent)  # the subprocess imports the plugin from tests/
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    # only the plugin under test (-p ci_skips): the installed packages' plugins (langsmith, hypothesis,
    # anyio, benchmark) cost seconds of CPU at each start and play no part in these suites
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester


# `make test` runs the suite on two xdist workers: each worker's reports (the skips turned into failures
# there) reach the controller's summary and exit status, and a file whose import skipped, collected by both
# workers, is one error, not two.
WORKERS = ([], ["-p", "xdist.plugin", "-n", "2"])


@pytest.mark.parametrize("workers", WORKERS, ids=["serial", "xdist"])
def test_under_ci_a_missing_dependency_fails_and_the_rest_still_runs(suite, monkeypatch, workers):
    monkeypatch.setenv("CI", "true")
    r = suite.runpytest_subprocess("-p", "ci_skips", "-rfEs", *workers)
    r.assert_outcomes(passed=1, failed=1, errors=2, skipped=2, xfailed=1)
    assert r.ret != 0
    for line in ("FAILED test_suite.py::test_import - CI=true: skipped because*no_such_module_for_ci_skips*",
                 "ERROR test_suite.py::test_browser - CI=true:*chromium*",
                 "ERROR test_whole_file.py - CI=true:*[[]service] extra*",
                 "SKIPPED*root reads anything", "SKIPPED*llama-cpp-python is not installed*"):
        r.stdout.fnmatch_lines([line])


@pytest.mark.parametrize("workers", WORKERS, ids=["serial", "xdist"])
def test_without_ci_every_skip_stays_a_skip(suite, monkeypatch, workers):
    monkeypatch.delenv("CI", raising=False)
    r = suite.runpytest_subprocess("-p", "ci_skips", "-rfEs", *workers)
    r.assert_outcomes(passed=1, skipped=5, xfailed=1)
    assert r.ret == 0
