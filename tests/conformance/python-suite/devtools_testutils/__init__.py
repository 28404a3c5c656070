"""A stand-in for the two helpers of the Azure SDK repository's test tooling (`devtools_testutils`,
not published on PyPI) that azure-cosmos's `tests/test_config.py` imports.

The suite runs only against the emulator at `https://localhost:8081/` with the account key, where
`test_config.py` sets `is_live._cache` itself and never asks for a credential. Nothing else of the
real package is provided: a test file that needs more fails at import, visibly.
"""
