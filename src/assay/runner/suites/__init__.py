"""Suites: a suite file in one of several dialects (assay's own, waza, Vally) loaded into one
typed ``Suite``. ``load_suite`` is the way in (``loader.py``); each dialect is one module in
``dialects/``; grader entries of every dialect are compiled in ``graders.py``."""

from assay.runner.suites.loader import DIALECTS, check_runnable, detect_dialect, load_suite
from assay.runner.suites.suite import Suite

__all__ = ["DIALECTS", "Suite", "check_runnable", "detect_dialect", "load_suite"]
