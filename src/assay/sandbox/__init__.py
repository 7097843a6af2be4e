"""Isolated execution of user code evaluators (Python and Node.js) behind ``CodeRunner``.

``open_code_runner()`` returns one object for a whole run or a service: thread-safe, started
lazily per language, and shut down by ``close()`` (also at garbage collection and interpreter
exit) without leaving processes behind. The boundary is the operating system
(:mod:`assay.sandbox.confine`), not the language runtime.

The two language sandboxes are twins (:mod:`assay.sandbox.python`, :mod:`assay.sandbox.node`):
the same layout, one module per job, and pools with the same words: ``size``, ``weak`` and
``demote_after_s`` (:mod:`assay.sandbox.priority`) in the constructor, ``call(request)``,
``call_batch(batch)``, ``check(language, source, function)`` and ``close()``.

The names below load on first use: the Python zygote imports this package's confinement modules
without the pools, the core interfaces or pydantic, so that it stays small (a fork copies the
page tables of every page it holds, and a child's exit tears them down again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.lazy import lazy_names

_LAZY = {name: "assay.sandbox.runner" for name in ("LanguagePool", "SandboxRunner", "open_code_runner")}

__all__ = ["LanguagePool", "SandboxRunner", "open_code_runner"]

if TYPE_CHECKING:
    from assay.sandbox.runner import LanguagePool, SandboxRunner, open_code_runner

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
