"""``llm``: an LLM judge scores the output against a rubric (waza's ``llm`` grader).

Config: ``rubric`` (inline) or ``rubric_file`` (relative to the suite's folder, read once when
the spec is validated: a missing file is a config error); ``scale`` ``binary``, ``1-5``
(default, as in waza), ``1-10`` or ``0-1``; ``threshold`` (default 0.75) on the normalised
score. waza's shape (``model`` and ``rubric`` beside ``type``) is folded into ``config`` by the
waza loader. Normalisation: ``(s - low) / (high - low)``, so on 1-5: 1→0.0, 3→0.5, 5→1.0.

The judge answers ``{"reasoning", "score"}`` (sent as a JSON Schema); its reasoning becomes
``reason``. ``passed`` is ``score >= threshold``, never the judge's own "pass". A reply with no
readable score is an error (``parse_failure``), an empty reply or a refusal ``unavailable``,
a timeout ``timeout``: never a failed grade. ``scoring: logprobs`` asks a yes/no question
instead and scores P(pass) from the first token's probabilities (``_judge_decision``). Output
fencing and the injection policy are described in ``_judge_guard`` and
``JudgeConfig.on_injection``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from assay.core.context import spec_context
from assay.core.grader import Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._judge_decision import TOP_LOGPROBS, decided_result, decision_prompt
from assay.graders._judge_reply import ScaleName
from assay.graders._judge_score import FIELD_TITLES, score_prompt, score_schema, scored_result
from assay.graders._judging import JudgeConfig, JudgeGrader, Plan, read_rubric_file


class RubricConfig(JudgeConfig):
    """A rubric (inline or from a file), a scale and a threshold."""

    default_rubric: ClassVar[str | None] = None
    """The rubric used when none is given; None makes one required."""

    rubric: str | None = Field(default=None, min_length=1, description="The grading rubric, inline.")
    rubric_file: str | None = Field(default=None, min_length=1,
                                    description="A file holding the rubric, relative to the suite file's folder.")
    scale: ScaleName = Field(default="1-5", description="The judge's scale: binary, 1-5, 1-10 or 0-1.")
    threshold: float = Field(default=0.75, ge=0.0, le=1.0,
                             description="Minimum normalised score to pass; with scoring: logprobs, minimum P(pass) "
                                         "(default 0.5).")
    scoring: Literal["parse", "logprobs"] = Field(
        default="parse", description="parse: the judge writes a JSON verdict on the scale; logprobs: a yes/no "
                                     "decision scored by the probabilities of the first token (binary; for small "
                                     "and local judges whose endpoint gives logprobs).")

    _criteria: str = PrivateAttr(default="")

    @field_validator("rubric_file")
    @classmethod
    def _files_allowed(cls, value: str | None, info: ValidationInfo) -> str | None:
        """An untrusted spec (an API caller's) must not make the server read its files."""
        if value is not None and spec_context(info.context).untrusted:
            raise ValueError("rubric_file is not accepted here (it would read a file on the server); "
                             "give the rubric inline as rubric")
        return value

    @model_validator(mode="before")
    @classmethod
    def _decision_threshold(cls, data: Any) -> Any:
        """A decision is binary, and P(pass) a probability whose threshold is 0.5 unless one is
        given: both filled in here, so a stored config says what grades and validates again."""
        if isinstance(data, dict) and data.get("scoring") == "logprobs":
            return {"scale": "binary", "threshold": 0.5, **data}
        return data

    @model_validator(mode="after")
    def _load_rubric(self) -> Self:
        if self.scoring == "logprobs" and self.scale != "binary":
            raise ValueError(f"scoring: logprobs decides pass or fail: give scale: binary or leave it out, "
                             f"not {self.scale}")
        if self.rubric is not None and self.rubric_file is not None:
            raise ValueError("give rubric or rubric_file, not both")
        text = self.rubric or read_rubric_file(self, self.rubric_file) or self.default_rubric
        if text is None:
            raise ValueError("a rubric is required: set rubric (inline) or rubric_file")
        self._criteria = text
        return self

    @property
    def criteria(self) -> str:
        """The rubric text in force: inline, read from ``rubric_file`` at validation, or the default."""
        return self._criteria


class LlmConfig(RubricConfig):
    """``llm``: a rubric is required."""


def rubric_plan(grader: JudgeGrader[Any], sample: Sample, reference: Any = None) -> GraderResult | Plan:
    """The one-call plan of ``llm`` and ``llm_comparison``: fence input, output (and the
    reference), apply the injection policy, ask for a score."""
    cfg: RubricConfig = grader.config
    fields = {"input": sample.input, "output": sample.output}
    if reference is not None:
        fields["reference"] = reference
    texts = grader.texts(sample, **fields)
    if isinstance(texts, GraderResult):
        return texts
    if sample.input is None:
        texts.pop("input")
    injection, stop = grader.guard({k: v for k, v in texts.items() if k != "input"})
    if stop is not None:
        return stop
    if cfg.scoring == "logprobs":
        ask = grader.request(decision_prompt(cfg.criteria, texts, FIELD_TITLES, heading="Rubric"), None,
                             top_logprobs=TOP_LOGPROBS)
        return Plan([ask], lambda replies: decided_result(grader, replies[0], cfg.threshold, injection))
    prompt = score_prompt(cfg.criteria, cfg.scale, texts, heading="Rubric")
    request = grader.request(prompt, score_schema(cfg.scale))
    return Plan([request], lambda replies: scored_result(grader, replies[0], cfg.scale, cfg.threshold, injection))


@register
class Llm(JudgeGrader[LlmConfig]):
    type = "llm"
    description = "An LLM judge scores the output against a rubric (scale 1-5 by default, pass at 0.75)."
    traits = Traits(judge=True, api_safe=True, form=True)

    def plan(self, sample: Sample) -> GraderResult | Plan:
        return rubric_plan(self, sample)

    def cache_extra(self) -> Any:
        return self.config.criteria
