"""``waza_checkpoint``: a waza task checkpoint, its graders graded on the run as it stood after
turn ``after_turn`` (microsoft/waza ``internal/orchestration/checkpoints.go`` at 38eb0e8d;
results ``schemaVersion`` 1.1, ``internal/models/schema_version.go`` at 38f37e8d, #358).

waza runs a checkpoint's graders, and only them (no eval-level graders, no ``expected``
checks), at the boundary after turn ``after_turn`` of a multi-turn run, on the run so far. It
records the outcome beside the run's final validations: ``passed`` when every grader passed,
else ``failed`` (``error`` when a grader could not run). No grader reads the recorded outcome,
and the run's own verdict and score come from its final validations only; but a failed
checkpoint with ``on_failure: stop`` ends the run as an error ("checkpoint after_turn=N
failed (on_failure: stop): names").

assay has the whole transcript, not the live session, so the run "after turn N" is the
transcript before its (N+1)-th user message (a run without user messages is one turn), with
the last assistant message there as the output; the session digest and ``tool_events`` (whole
run records) are left out so that the graders read the tool calls of that prefix. The result
carries weight 0, so it never moves the run's score, and it decides the run's verdict only as
waza's does: a failed ``stop`` checkpoint fails; a failed ``continue`` one is reported as
passed with the checkpoint's own verdict in its reason and ``details.checkpoint``. A turn the
run never reached is reported likewise (waza records nothing for it), unless the results file
records waza's outcome for it (``runs[].checkpoints``; a transcript may keep no user
messages), which is then used as recorded. The workspace is the
final one, which waza would have seen mid-run: a difference for ``file``/``diff`` graders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from assay.core.grader import Grader, GraderConfig, Traits
from assay.core.registry import register
from assay.core.result import GraderResult, Status
from assay.core.sample import Sample
from assay.graders.composite import Composite, CompositeConfig, _child_row, _grade_child

_WHOLE_RUN = ("session_digest", "session", "tool_events")


class WazaCheckpointConfig(CompositeConfig):
    after_turn: int = Field(ge=1, description="The 1-based turn after which the graders run.")
    on_failure: Literal["continue", "stop"] = Field(default="continue", description="stop: a failure ends the run "
                                                    "(the run fails); continue: it is recorded and the run goes on.")


def _users(sample: Sample) -> list[int]:
    return [i for i, e in enumerate(sample.transcript) if e.type == "user_message"]


def turns(sample: Sample) -> int:
    """How many turns the run has: its user messages, at least one."""
    return max(1, len(_users(sample)))


def after_turn(sample: Sample, turn: int) -> Sample:
    """The run as it stood after ``turn``: the transcript before the next user message, the last
    assistant message there as the output (the run's own output after its last turn)."""
    users = _users(sample)
    if turn >= len(users):
        prefix, output = list(sample.transcript), sample.output
    else:
        prefix = list(sample.transcript[:users[turn]])
        said = [e.content for e in prefix if e.type == "assistant_message" and e.content]
        output = said[-1] if said else ""
    metadata = {k: v for k, v in sample.metadata.items() if k not in _WHOLE_RUN}
    return sample.model_copy(update={"transcript": prefix, "output": output, "metadata": metadata})


@register
class WazaCheckpoint(Composite, Grader[WazaCheckpointConfig]):
    type = "waza_checkpoint"
    description = "A waza task checkpoint: its graders on the run as it stood after a turn."
    traits = Traits()
    """A step of a waza task, made by the waza dialect: not an evaluator the API or the pages offer."""

    @classmethod
    def traits_for(cls, config: GraderConfig) -> Traits:
        return replace(super().traits_for(config), api_safe=False, form=False)

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        cfg = self.config
        assert isinstance(cfg, WazaCheckpointConfig)
        reached = [turns(s) >= cfg.after_turn for s in samples]
        views = [after_turn(s, cfg.after_turn) for s in samples]
        per_child = [_grade_child(child, views) for child in self.children]
        out = []
        for i, sample in enumerate(samples):
            if not reached[i]:
                out.append(self._recorded(sample) or self._record(
                    None, f"turn {cfg.after_turn} was not reached (the run has {turns(sample)} turn(s)); waza records "
                          "no outcome for it", []))
                continue
            out.append(self._outcome([rows[i] for rows in per_child]))
        return out

    def _outcome(self, results: list[GraderResult]) -> GraderResult:
        cfg = self.config
        assert isinstance(cfg, WazaCheckpointConfig)
        failed = sorted(r.name for r in results if r.status is not Status.PASSED)
        status = "passed" if not failed else "error" if any(r.status is Status.ERROR for r in results) else "failed"
        if not failed:
            return self._record(status, f"checkpoint after_turn={cfg.after_turn} passed", results)
        why = f"checkpoint after_turn={cfg.after_turn} failed (on_failure: {cfg.on_failure}): {', '.join(failed)}"
        if cfg.on_failure == "stop":
            return self.scored_result(False, 0.0, why, self._details(status, results))
        return self._record(status, why + "; recorded, the run goes on", results)

    def _recorded(self, sample: Sample) -> GraderResult | None:
        """waza's own outcome for this turn from the results file (``runs[].checkpoints``), for a
        transcript that shows fewer turns than waza ran (no user messages kept)."""
        cfg = self.config
        assert isinstance(cfg, WazaCheckpointConfig)
        found = sample.metadata.get("checkpoints")
        entry = next((c for c in found if isinstance(c, dict) and c.get("after_turn") == cfg.after_turn), None) \
            if isinstance(found, list) else None
        if entry is None:
            return None
        status = str(entry.get("status") or "failed")
        validations = entry.get("validations")
        validations = validations if isinstance(validations, dict) else {}
        failed = sorted(str(k) for k, v in validations.items() if not (isinstance(v, dict) and v.get("passed")))
        details = {"checkpoint": {"after_turn": cfg.after_turn, "on_failure": cfg.on_failure, "status": status,
                                  "recorded": True}, "children": []}
        why = f"checkpoint after_turn={cfg.after_turn} {status} as waza recorded it (the transcript shows no turn " \
              f"{cfg.after_turn}){': ' + ', '.join(failed) if failed else ''}"
        stopped = entry.get("stopped") is True or (cfg.on_failure == "stop" and status != "passed")
        return self.scored_result(not stopped, 0.0 if stopped else 1.0, why, details)

    def _record(self, status: str | None, reason: str, results: list[GraderResult]) -> GraderResult:
        """A result that does not decide the run: passed, with the checkpoint's own verdict."""
        return self.scored_result(True, 1.0, reason, self._details(status, results))

    def _details(self, status: str | None, results: list[GraderResult]) -> dict[str, Any]:
        cfg = self.config
        assert isinstance(cfg, WazaCheckpointConfig)
        return {"checkpoint": {"after_turn": cfg.after_turn, "on_failure": cfg.on_failure, "status": status},
                "children": [_child_row(r) for r in results]}
