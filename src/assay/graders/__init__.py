"""Built-in graders; each module registers one type named after the module."""

from assay.graders import (  # noqa: F401
    code,
    composite,
    contains,
    exact_match,
    human,
    json_schema,
    llm,
    llm_comparison,
    pairwise,
    panel,
    program,
    prompt,
    regex,
    script,
    similarity,
    tool_calls,
)
