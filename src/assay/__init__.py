"""assay: grade the outputs of LLMs and agents.

    >>> import assay
    >>> assay.grade({"type": "contains"}, {"output": "北京是中国的首都", "expected": "首都"}).passed
    True

Importing ``assay`` is cheap: the names below load on first use, and each grader's module
the first time a spec names its type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.lazy import lazy_names

__version__ = "0.1.0"

_LAZY = {
    "grade": "assay.library", "grade_batch": "assay.library", "grade_table": "assay.runner.columnar",
    **{name: "assay.core" for name in ("ErrorCode", "Event", "Grader", "GraderConfig", "GraderResult",
                                       "GraderSpec", "Sample", "SpecError", "Status", "Taxonomy", "Traits",
                                       "register")},
}

__all__ = [
    "ErrorCode", "Event", "Grader", "GraderConfig", "GraderResult", "GraderSpec", "Sample",
    "SpecError", "Status", "Taxonomy", "Traits", "__version__", "grade", "grade_batch", "grade_table", "register",
]

if TYPE_CHECKING:
    from assay.core import (
        ErrorCode,
        Event,
        Grader,
        GraderConfig,
        GraderResult,
        GraderSpec,
        Sample,
        SpecError,
        Status,
        Taxonomy,
        Traits,
        register,
    )
    from assay.library import grade, grade_batch
    from assay.runner.columnar import grade_table


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
