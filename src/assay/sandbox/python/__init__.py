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

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.lazy import lazy_names

# Lazy, as in ``assay.sandbox``: the zygote imports ``zygote`` and ``child`` without the pool.
_LAZY = {"ALLOWED_MODULES": "assay.sandbox.python.allowlist", "PythonPool": "assay.sandbox.python.pool"}

__all__ = ["ALLOWED_MODULES", "PythonPool"]

if TYPE_CHECKING:
    from assay.sandbox.python.allowlist import ALLOWED_MODULES
    from assay.sandbox.python.pool import PythonPool

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
