"""The package's version, written once (pyproject.toml reads it; the CLI prints it)."""

__version__ = "0.1.0.dev0"
