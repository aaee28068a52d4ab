"""Shared fixtures: the loopback OpenAI-compatible server (a real HTTP server on 127.0.0.1); under
CI=true, a skip for a missing dependency fails the run (ci_skips); pytester for testing that."""

from hypothesis import HealthCheck, settings

pytest_plugins = ["loopback_server", "ci_skips", "pytester"]

# Property tests run on shared CI machines: a slow example there is no counterexample. Every test's own
# @settings inherits this (max_examples and deadline stay theirs).
settings.register_profile("logichunk", suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("logichunk")
