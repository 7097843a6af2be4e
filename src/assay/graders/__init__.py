"""Built-in graders; each module registers one type named after the module.

Nothing is imported here: ``BUILTIN`` names every built-in type, and the registry imports a
grader's module the first time its type is looked up (``core.registry.get``), so a suite pays
only for the graders it uses.
"""

_MODULES = (
    "code", "composite", "contains", "exact_match", "human", "json_schema", "llm", "llm_comparison",
    "pairwise", "panel", "program", "prompt", "regex", "script", "similarity", "tool_calls",
    "vally_file", "vally_metric", "vally_output", "vally_run_command", "vally_session",
    "vally_skill_invocation", "vally_tool_calls", "waza_action_sequence", "waza_behavior", "waza_diff",
    "waza_expected", "waza_file", "waza_program", "waza_skill_invocation", "waza_text", "waza_tool_calls",
    "waza_tool_constraint", "waza_trigger",
)

BUILTIN: dict[str, str] = {
    **{name: f"assay.graders.{name}" for name in _MODULES},
    "human_calibration": "assay.graders.human",
}
"""Every built-in grader type and the module that registers it. A test checks the table
against what the modules register."""
