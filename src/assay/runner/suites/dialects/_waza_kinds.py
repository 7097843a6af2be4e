"""The waza grader kinds and keys, as tables: which kinds each edition and release has, the
assay grader each Go kind maps to, and the config keys of each Go kind's parameter type. The
waza dialect (``_waza_graders``) reads them; ``tests/peers/refresh.py`` compares them with a
waza source tree.
"""

from __future__ import annotations

from assay.runner.suites.dialects._waza_releases import Release
from assay.runner.suites.graders import SPEC_KEYS

GO_KINDS = {"text": "waza_text", "file": "waza_file", "diff": "waza_diff", "behavior": "waza_behavior",
            "action_sequence": "waza_action_sequence", "skill_invocation": "waza_skill_invocation",
            "tool_constraint": "waza_tool_constraint", "program": "waza_program", "trigger": "waza_trigger"}
"""waza (Go edition) kinds with semantics of their own, and the assay graders for them."""
GO_ONLY = frozenset({*GO_KINDS, "prompt", "json_schema", "keyword"})
PYTHON_ONLY = frozenset({"regex", "script", "llm", "llm_comparison", "human", "human_calibration"})
GO_TOOL_CALLS = frozenset({"required_tools", "forbidden_tools", "expect"})
"""Keys only the Go edition's ``tool_calls`` has (the Python one: required, forbidden, sequence)."""

WAZA_PARAMS: dict[str, tuple[str, frozenset[str]]] = {
    kind: (type_name, frozenset(keys.split())) for kind, type_name, keys in (
        ("code", "InlineScriptGraderParameters", "assertions language"),
        ("text", "TextGraderParameters", "contains not_contains contains_cs not_contains_cs regex_match "
                                         "regex_not_match"),
        ("file", "FileGraderParameters", "must_exist must_not_exist content_patterns"),
        ("behavior", "BehaviorGraderParameters", "max_tool_calls max_tokens required_tools forbidden_tools "
                                                 "max_duration_ms"),
        ("action_sequence", "ActionSequenceGraderParameters", "matching_mode expected_actions"),
        ("skill_invocation", "SkillInvocationGraderParameters", "required_skills forbidden_skills mode allow_extra"),
        ("tool_constraint", "ToolConstraintGraderParameters", "expect_tools reject_tools allow_only"),
        ("tool_calls", "ToolCallsGraderParameters", "required_tools forbidden_tools min_calls max_calls expect"),
        ("diff", "DiffGraderParameters", "expected_files context_dir update_snapshots"),
        ("prompt", "PromptGraderParameters", "prompt rubric model continue_session mode reasoning_effort"),
        ("json_schema", "JSONSchemaGraderParameters", "schema schema_file extract_json"),
        ("program", "ProgramGraderParameters", "command args timeout"),
        ("trigger", "TriggerHeuristicGraderParameters", "skill_path mode threshold"))}
"""Each Go kind's parameter type and the config keys it defines (microsoft/waza
``internal/models/grader_params.go``, f7e6155e; ``expect`` from tool_calls_grader.go, 0f670754;
``forbidden_skills`` from docs/graders/skill_invocation.md, 44a4b08f)."""

ENTRY_KEYS = {"eval": ("rawGraderConfig", frozenset({*SPEC_KEYS, "script", "rubric", "model", "ref"})),
              "task": ("rawValidatorInline", frozenset({*SPEC_KEYS, "assertions", "rubric"}))}
"""The keys a grader entry may have beside ``config`` from 0.24 (``internal/models/spec.go``
``GraderConfig.UnmarshalYAML``; ``testcase.go`` ``ValidatorInline.UnmarshalYAML``)."""


def go_kinds(release: Release) -> list[str]:
    """The grader kinds waza's ``Create`` accepts at ``release``."""
    kinds = ["code", "prompt", "file", "json_schema", "program", "behavior", "action_sequence",
             "skill_invocation", "diff", "tool_constraint"]
    if release.has("go_regex_keyword"):
        kinds += ["regex", "keyword"]
    if release.has("text"):
        kinds += ["text", "trigger"]
    if release.has("tool_calls"):
        kinds.append("tool_calls")
    return kinds
