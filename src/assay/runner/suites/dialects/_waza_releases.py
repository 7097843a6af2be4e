"""waza releases and what changed between them: the one table the waza dialect reads a suite
by, ``assay run --explain-dialect`` reports from, and docs/concepts/formats.md cites.

A suite is read as one release: ``--waza-version``, else the suite's ``waza_version`` key (an
assay extension), else the newest release under which it loads (``_waza_inference``). Each behaviour that moved
holds from ``since`` (inclusive) until ``until`` (exclusive), with where in waza's source it
is seen; a release between known ones is read by the rules that hold at it (0.23 by 0.21's).
Sources are microsoft/waza files at the commit named; tags v0.9.0..v0.12.0 are in the fetched
snapshot, later releases are dated by CHANGELOG.md (commit 0c423e18).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.core.errors import SpecError

Version = tuple[int, int, int]


class ReleaseRefusal(SpecError):
    """What the release read refuses and another release may accept: a grader kind it does not
    have, a key its strict decoding does not know. Release inference tries older releases on
    these only; any other error stands whatever the release."""

RELEASES: tuple[str, ...] = (
    "0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.21.0", "0.24.0", "0.25.0", "0.26.0", "0.27.0", "0.28.0",
    "0.29.0", "0.30.0", "0.30.1", "0.31.0", "0.33.0", "0.34.0", "0.35.0")
"""Go-edition releases assay knows (tags in the snapshot, then CHANGELOG.md entries; 0.13-0.20
and 0.22-0.23 have no entry there, 0.32.0 was never published)."""

NEWEST = "0.35.0"


@dataclass(frozen=True)
class Behaviour:
    """One thing waza does from release ``since`` until release ``until`` (exclusive)."""

    key: str
    summary: str
    since: str | None
    until: str | None
    source: str


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour("go_regex_keyword", "grader kinds `regex` (case-sensitive Go RE2 `must_match`/`must_not_match`) and "
              "`keyword` (`must_contain`/`keywords`/`must_not_contain`, any case)", None, "0.21.0",
              "internal/graders/regex_grader.go, keyword_grader.go at v0.12.0 (c3cff151); folded into `text` by "
              "33c7bc75"),
    Behaviour("text", "grader kind `text` (contains, not_contains, *_cs, regex_match, regex_not_match)", "0.21.0",
              None, "internal/graders/text_grader.go since 33c7bc75"),
    Behaviour("trigger", "grader kind `trigger` (skill_path, mode, threshold)", "0.21.0", None,
              "CHANGELOG.md 0.21.0 (#90); internal/graders/trigger_grader.go (37f6c21c)"),
    Behaviour("strict", "eval, task and grader files decoded with known fields only: an unknown key is an error",
              "0.24.0", None, "CHANGELOG.md 0.24.0 (#132); internal/models/spec.go, testcase.go, grader_params.go "
              "`decoder.KnownFields(true)` (0e7150c3, f7e6155e)"),
    Behaviour("judge_model_fills", "config `judge_model` is the model of `prompt` graders that name none (a grader's "
              "own `model` wins; before, `judge_model` replaced it)", "0.27.0", None,
              "internal/graders/run.go applyDefaults at 0a694334 (a 0.27 tree: it has output_contains_any); "
              "before: internal/orchestration/runner.go injectJudgeModel (091a1f9e, after v0.12.0). 0.24-0.26 were "
              "not read, so they are read as before"),
    Behaviour("workers", "config `workers` (was `max_workers`)", "0.24.0", None, "CHANGELOG.md 0.24.0"),
    Behaviour("tool_calls", "grader kind `tool_calls` (required_tools, forbidden_tools, min_calls, max_calls, "
              "expect with argument matchers)", "0.27.0", None,
              "CHANGELOG.md 0.27.0 (#202); internal/graders/tool_calls_grader.go, argmatcher/matcher.go (0f670754)"),
    Behaviour("expected", "task `expected.output_contains` / `output_not_contains` / `output_contains_any` "
              "graded, ignoring case, as results `_output_contains`, `_output_not_contains`, `_output_contains_any`",
              "0.27.0", None, "CHANGELOG.md 0.27.0 (#203); internal/graders/run.go evaluateExpectations (0a694334)"),
    Behaviour("task_inputs_027", "task `inputs.prompt_file` (its text is the prompt), "
              "`expected.behavior.max_response_time_ms`", "0.27.0",
              None, "CHANGELOG.md 0.27.0 (#200, #201); internal/models/testcase.go (f249bad6)"),
    Behaviour("follow_ups", "task `inputs.follow_up_prompts`", "0.28.0", None, "CHANGELOG.md 0.28.0 (#209)"),
    Behaviour("task_skill_dirs", "task `skill_directories`; config `disabled_skills`", "0.29.0", None,
              "CHANGELOG.md 0.29.0 (#215, #216)"),
    Behaviour("agent_tools", "a custom agent's `.agent.md` `tools:` adds the grader `agent_tools_implicit` "
              "(tool_constraint allow_only) unless the eval has a tool_constraint grader", "0.31.0", None,
              "CHANGELOG.md 0.31.0 (#226); internal/orchestration/agent_graders.go (a3f8e060)"),
    Behaviour("instruction_files", "config and task `instruction_files`", "0.33.0", None,
              "CHANGELOG.md 0.33.0 (#248)"),
    Behaviour("inject_skill_body", "config `inject_skill_body`", "0.34.0", None, "CHANGELOG.md 0.34.0 (#285)"),
    Behaviour("repos", "task `inputs.repos` (git worktree resources)", "0.35.0", None,
              "CHANGELOG.md 0.35.0 (#302); schemas/task.schema.json (28e2d8bf)"),
)
"""What moved between releases, oldest first."""

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


def parse(text: str) -> Version:
    """``0.27``, ``0.27.0`` or ``v0.27.0`` as a comparable triple; ValueError otherwise."""
    m = _VERSION.match(str(text).strip())
    if m is None:
        raise ValueError(f"not a waza release: {text!r} (write it as 0.27 or 0.27.0)")
    return int(m[1]), int(m[2]), int(m[3] or 0)


def show(version: Version) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True)
class Release:
    """The release a suite is read as, and why."""

    version: Version
    reason: str
    known_only: bool = False
    """Refuse file and grader-entry keys this release does not know even where it would ignore
    them: how release inference tells a suite written for an older release, whose every key
    that release knows, from a typo that only an older release's leniency lets by. Grader
    options stay as the release reads them (real suites carry options of releases assay does
    not list)."""

    def refuses_unknown(self) -> bool:
        """Whether a file or grader-entry key this release does not know is an error."""
        return self.known_only or self.has("strict")

    def has(self, key: str) -> bool:
        """Whether behaviour ``key`` holds at this release."""
        b = next(b for b in BEHAVIOURS if b.key == key)
        return (b.since is None or self.version >= parse(b.since)) and \
            (b.until is None or self.version < parse(b.until))

    def holding(self) -> list[Behaviour]:
        return [b for b in BEHAVIOURS if self.has(b.key)]

    @property
    def name(self) -> str:
        """``waza 0.27.0``."""
        return f"waza {show(self.version)}"

    def describe(self) -> str:
        known = show(self.version) in RELEASES
        note = "" if known else " (not a release assay lists; read by the rules that hold at it)"
        return f"waza {show(self.version)}{note}, {self.reason}"

    def since_text(self, key: str) -> str:
        b = next(b for b in BEHAVIOURS if b.key == key)
        return f"from {b.since}" if b.since else f"before {b.until}"


def choose(option: str | None, suite_key: str | None) -> Release:
    """The release to read a suite as: the option, else the suite key, else the newest.
    ValueError for a version that is not one, or newer than ``NEWEST``."""
    for value, why in ((option, "from --waza-version"), (suite_key, "from the suite's `waza_version` key")):
        if value is not None:
            version = parse(value)
            if version > parse(NEWEST):
                raise ValueError(f"waza {show(version)} is newer than the newest release assay knows ({NEWEST}); "
                                 f"use --waza-version {NEWEST} or older")
            return Release(version, why)
    return Release(parse(NEWEST), "the newest release assay knows (no --waza-version, no `waza_version` key)")
