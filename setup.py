"""Builds the C extension assay.graders._tokens; all other metadata is in pyproject.toml.

The extension is optional: without a C compiler or Python headers the install still succeeds
(setuptools prints a warning) and similarity.py uses its pure-Python tokenizer instead.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("assay.graders._tokens", ["src/assay/graders/_tokens.c"], optional=True)])
