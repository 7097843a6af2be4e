"""Built-in graders; each module registers one type named after the module."""

from assay.graders import code, contains, exact_match, json_schema, regex, similarity  # noqa: F401
from assay.graders import human, program, script, tool_calls  # noqa: F401
