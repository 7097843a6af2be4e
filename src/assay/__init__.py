"""assay: grade the outputs of LLMs and agents.

    >>> import assay
    >>> assay.grade({"type": "contains"}, {"output": "北京是中国的首都", "expected": "首都"}).passed
    True
"""

import assay.graders  # noqa: F401  the built-in graders register themselves on import
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
    register,
)
from assay.library import grade, grade_batch

__version__ = "0.1.0"

__all__ = [
    "ErrorCode", "Event", "Grader", "GraderConfig", "GraderResult", "GraderSpec", "Sample",
    "SpecError", "Status", "__version__", "grade", "grade_batch", "register",
]
