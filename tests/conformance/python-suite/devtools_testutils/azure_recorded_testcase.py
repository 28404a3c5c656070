"""`get_credential`: the Entra ID credential of a live test account."""


def get_credential(is_async=False, **kwargs):
    """There is no Entra ID here: the emulator is reached with its account key only."""
    raise RuntimeError(
        "no Entra ID credential is available: the suite runs against the emulator at "
        "https://localhost:8081/ with the account key (see tests/conformance/python-suite/run.sh)"
    )
