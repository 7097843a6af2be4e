"""The built-in grader types and the modules that register them: a table of names, so that the
registry (``core.registry``) can import a grader's module the first time its type is looked up
without ``core`` importing the graders package. A suite pays only for the graders it uses.

Adding a built-in grader means adding its module here (docs/concepts/custom-graders.md lists every step);
tests/core/test_registry.py checks the table against what the modules register.
"""

_MODULES = (
    "code", "composite", "contains", "exact_match", "human", "json_schema", "llm", "llm_comparison",
    "pairwise", "panel", "program", "prompt", "regex", "script", "similarity", "tool_calls",
    "vally_file", "vally_metric", "vally_output", "vally_run_command", "vally_session",
    "vally_skill_invocation", "vally_tool_calls", "vally_transcript", "waza_action_sequence",
    "waza_behavior", "waza_checkpoint", "waza_diff", "waza_expected", "waza_file", "waza_json_schema",
    "waza_program", "waza_skill_invocation", "waza_text", "waza_tool_calls", "waza_tool_constraint",
    "waza_trigger",
)

BUILTIN: dict[str, str] = {
    **{name: f"assay.graders.{name}" for name in _MODULES},
    "human_calibration": "assay.graders.human",
}
"""Every built-in grader type and the module (``assay.graders.<type>``) that registers it."""
