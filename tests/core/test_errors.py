"""The exception tree drawn in ``core/errors.py`` is true: every public exception assay defines
derives from ``AssayError``, except the sandbox zygote's confinement errors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import assay
from assay.core.errors import AssayError

OUTSIDE = {"ConfinementError", "LandlockError", "ZygoteGone"}
"""Raised in or about the Python sandbox's zygote, which imports nothing of core."""


def test_every_public_exception_is_an_assay_error():
    strays = []
    for info in pkgutil.walk_packages(assay.__path__, "assay."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (ray) not installed
            continue
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name
                    and not name.startswith("_") and name not in OUTSIDE
                    and not issubclass(value, (AssayError, Warning))):
                strays.append(f"{info.name}.{name}")
    assert strays == []
