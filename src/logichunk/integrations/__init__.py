"""Bridges to frameworks and protocols (LangChain, LlamaIndex, the MCP server): each module imports its
real framework and is an optional extra; the core of logichunk never imports this package."""
