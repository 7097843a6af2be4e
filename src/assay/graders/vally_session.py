"""``vally_session``: Vally's session-health graders
(microsoft.github.io/vally/reference/graders/completed/).

- ``exit-success``: the agent produced a non-empty output (nothing else is checked).
- ``completed`` (strict): a non-empty output, no error events in the trajectory, and at least
  one completed turn. Vally looks for ``turn_end`` events; assay's transcript keeps no
  turn markers, so a turn counts as completed when the run's ``outcome`` or ``metadata``
  reports ``turns`` / ``turnCount`` above 0, else when the transcript holds an assistant
  message (which closes a turn).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._text import as_text

_TURN_KEYS = ("turns", "turnCount", "turn_count", "numTurns")


def reported(sample: Sample, keys: tuple[str, ...]) -> int | None:
    """A count the run reports under one of ``keys`` in its ``outcome`` or ``metadata`` (also
    under their ``metrics``), if any."""
    for source in (sample.outcome or {}, sample.metadata):
        metrics = source.get("metrics")
        for holder in (source, metrics if isinstance(metrics, dict) else {}):
            for key in keys:
                value: Any = holder.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
    return None


def reported_turns(sample: Sample) -> int | None:
    """Turns the run reports (``turns``, ``turnCount``, ...), if any."""
    return reported(sample, _TURN_KEYS)


class VallySessionConfig(GraderConfig):
    mode: Literal["completed", "exit-success"] = Field(
        default="completed", description="completed (strict) or exit-success (output only).")


@register
class VallySession(Grader[VallySessionConfig]):
    type = "vally_session"
    description = "Vally's completed / exit-success: the session ended with output (and, strictly, cleanly)."
    traits = Traits()
    taxonomy = Taxonomy(determinism="static", cost="free", reference="reference-free",
                        temporal_scope="trajectory-level", portability="t1-universal")

    def grade(self, sample: Sample) -> GraderResult:
        try:
            text = as_text(sample.output)
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"output is {exc}")
        if not text.strip():
            return self.scored_result(False, reason="agent produced no output")
        if self.config.mode == "exit-success":
            return self.scored_result(True, reason="agent completed successfully")
        errors = len(sample.errors)
        if errors:
            return self.scored_result(False, reason=f"{errors} error event(s) in trajectory",
                                      details={"errors": errors})
        turns = reported_turns(sample)
        if turns is None:
            turns = sum(e.type == "assistant_message" for e in sample.transcript)
        if turns <= 0:
            return self.scored_result(False, reason="no completed turn found; the session may have crashed mid-turn")
        return self.scored_result(True, reason="agent session completed successfully", details={"turns": turns})
