"""Bridges to agent frameworks and protocols (the MCP server, ...). Each module imports its framework
itself, as an optional extra; the core of logichunk never imports this package."""
