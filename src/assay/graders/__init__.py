"""Built-in graders; each module registers one type named after the module."""

from assay.graders import (  # noqa: F401
    code,
    contains,
    exact_match,
    human,
    json_schema,
    program,
    regex,
    script,
    similarity,
    tool_calls,
)
