"""The kinds of audit, each in its own folder; ``_registry.py`` lists them."""
