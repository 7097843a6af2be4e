"""Builds the C extensions assay.graders._tokens and assay.runner.columnar._kernels; all other
metadata is in pyproject.toml.

The extensions are optional: without a C compiler or Python headers the install still succeeds
(setuptools prints a warning): similarity.py then uses its pure-Python tokenizer, and the columnar
`contains` a loop over Python strings.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("assay.graders._tokens", ["src/assay/graders/_tokens.c"], optional=True),
                   Extension("assay.runner.columnar._kernels", ["src/assay/runner/columnar/_kernels.c"],
                             optional=True)])
