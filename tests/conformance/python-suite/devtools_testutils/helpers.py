"""`is_live`: whether tests run against a live account rather than recordings."""

import os


def is_live():
    """The value `test_config.py` stored in `is_live._cache`; otherwise `AZURE_TEST_RUN_LIVE`."""
    cached = getattr(is_live, "_cache", None)
    if cached is not None:
        return cached
    return os.environ.get("AZURE_TEST_RUN_LIVE", "").strip().lower() in ("true", "yes", "1")
