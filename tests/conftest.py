"""Shared fixtures: the loopback OpenAI-compatible server (a real HTTP server on 127.0.0.1)."""

pytest_plugins = ["loopback_server"]
