"""Built-in graders; each module registers one type named after the module.

Nothing is imported here: ``assay.core.builtins.BUILTIN`` names every built-in type, and the
registry imports a grader's module the first time its type is looked up (``core.registry.get``),
so a suite pays only for the graders it uses.
"""

from typing import TYPE_CHECKING

from assay.core.lazy import lazy_names

# What the waza dialect and exporter (assay.runner) share with the waza graders, as public names
# of this package; like the graders, they load on first use.
_LAZY = {"TASK_KEY": "assay.graders._waza_context", "go_transcript": "assay.graders._waza_context",
         "session_calls": "assay.graders._waza"}
__all__ = ["TASK_KEY", "go_transcript", "session_calls"]

if TYPE_CHECKING:
    from assay.graders._waza import session_calls
    from assay.graders._waza_context import TASK_KEY, go_transcript

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
