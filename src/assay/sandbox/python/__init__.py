"""The Python code-evaluator sandbox: warm zygotes forking one OS-confined child per chunk of samples.

One module per job, as in :mod:`assay.sandbox.node`: ``pool`` (``PythonPool``: hand zygotes
out, replace them), ``handle`` (one zygote process: start it, take pre-forked children, reap
them, stop it), ``session`` (one child's pipes: its frames under caps and a deadline per sample), ``frames``
(the result pipe's framing), ``outcome``
(what a child left into a ``CodeOutcome``); ``zygote`` and ``child`` run on the other side,
and ``allowlist`` names the modules user code may import. The source check is
:mod:`assay.core.source`'s, shared with the code grader; the layers every evaluation runs
under are :mod:`assay.sandbox.confine`'s.
"""

from assay.sandbox.python.allowlist import ALLOWED_MODULES
from assay.sandbox.python.pool import PythonPool

__all__ = ["ALLOWED_MODULES", "PythonPool"]
