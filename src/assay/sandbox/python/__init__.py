"""The Python code-evaluator sandbox: warm zygotes forking one OS-confined child per evaluation.

See :mod:`assay.sandbox.python.allowlist` for the modules user code may import and
:mod:`assay.sandbox.confine` for the layers every evaluation runs under.
"""

from assay.sandbox.python.allowlist import ALLOWED_MODULES
from assay.sandbox.python.pool import PythonPool, check_source

__all__ = ["ALLOWED_MODULES", "PythonPool", "check_source"]
