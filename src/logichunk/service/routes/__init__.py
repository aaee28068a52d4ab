"""The API's routes, one module per resource; each module has a ``router``."""
