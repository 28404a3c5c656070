"""A pytest plugin that keeps one test's failure from breaking the tests after it.

Several of azure-cosmos's tests replace an SDK function for their duration (for example
`_retry_utility.ExecuteFunction = self._MockExecuteFunction`) and put it back on their last line,
not in a `finally`. When such a test fails half-way, every later test in the process runs with the
replacement left in place and fails for that reason alone. This plugin records the module globals
and class attributes of every loaded `azure.cosmos` module before each test and, after the test,
puts back any it finds replaced, naming them on stderr. The tests themselves run unchanged.
"""

import sys

import pytest

_PREFIX = "azure.cosmos"


def _owned_modules():
    return [
        (name, module)
        for name, module in list(sys.modules.items())
        if module is not None and (name == _PREFIX or name.startswith(_PREFIX + "."))
    ]


def _snapshot():
    saved = {}
    for name, module in _owned_modules():
        globals_ = dict(vars(module))
        classes = {}
        for attr, value in globals_.items():
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                classes[attr] = (value, dict(vars(value)))
        saved[name] = (module, globals_, classes)
    return saved


def _restore(saved):
    restored = []
    for name, (module, globals_, classes) in saved.items():
        current = vars(module)
        for attr, value in globals_.items():
            if current.get(attr, _MISSING) is not value:
                setattr(module, attr, value)
                restored.append(f"{name}.{attr}")
        for attr, (cls, attrs) in classes.items():
            now = dict(vars(cls))
            for key, value in attrs.items():
                if now.get(key, _MISSING) is not value:
                    setattr(cls, key, value)
                    restored.append(f"{name}.{attr}.{key}")
            for key in now.keys() - attrs.keys():
                delattr(cls, key)
                restored.append(f"{name}.{attr}.{key} (added)")
    return restored


_MISSING = object()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    saved = _snapshot()
    yield
    restored = _restore(saved)
    if restored:
        sys.stderr.write(
            f"\n[suite isolation] after {item.nodeid}: put back {', '.join(sorted(restored))}\n"
        )
