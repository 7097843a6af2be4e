"""What the judge graders (``llm``, ``llm_comparison``, ``prompt``, ``pairwise``, ``panel``) share:
the common config fields, the batch path, request building with cache keys, and the injection
policy. Fencing and the scan live in ``_judge_guard``; reply parsing in ``_judge_reply``.

A judge grader implements ``plan(sample)``: either a finished result (no reference, an
injection the config fails on) or a ``Plan``: the requests to send (prompts built with
``Prompt``) and a ``finish`` callback turning their replies into the result. ``grade_batch``
sends every plan's requests of a chunk in one ``judge_many`` call, so the client's global
concurrency limit does the scheduling.
"""

from __future__ import annotations

import hashlib
import json
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, ValidationInfo, field_validator

from assay.core.context import spec_context
from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.judge import JudgeMessage, JudgeReply, JudgeRequest
from assay.core.messages import Phrase
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._judge_guard import ANSWER_JSON, PLACEHOLDER, Flag, fence, new_delimiter, scan, system_prompt
from assay.graders._text import as_text

NO_CLIENT = Phrase("judge.no_client", "no judge client is configured")


class JudgeConfig(GraderConfig):
    """Fields every judge grader takes: where to ask, how to sample, and the injection policy."""

    model: str | None = Field(default=None, description="The judge model; default: the client's (ASSAY_JUDGE_MODEL).")
    base_url: str | None = Field(default=None, description="An OpenAI-compatible endpoint; default: the client's.")
    api_key_env: str | None = Field(default=None, description="Name of the environment variable holding the key "
                                                              "(never the key itself).")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int | None = Field(default=None, gt=0, description="Cap on the reply's tokens.")
    seed: int | None = Field(default=None, description="Sampling seed, where the endpoint honours one.")
    timeout_s: float = Field(default=60.0, gt=0.0, le=3600.0, description="Per-call timeout in seconds.")
    on_injection: Literal["flag", "fail", "error"] = Field(
        default="flag", description="When a fenced field contains text aimed at the judge: `flag` (grade, and "
                                    "report it in details.injection), `fail` (a failed grade, judge not called) or "
                                    "`error` (an invalid_output error, judge not called).")

    @field_validator("base_url")
    @classmethod
    def _allowed_endpoint(cls, value: str | None, info: ValidationInfo) -> str | None:
        """An untrusted spec (see ``SpecContext.untrusted``) may only name an endpoint the
        operator allowed: otherwise it could send prompts, and the key, anywhere."""
        context = spec_context(info.context)
        if value is not None and context.untrusted and value.rstrip("/") not in context.judge_base_urls:
            allowed = ", ".join(sorted(context.judge_base_urls)) or "none"
            raise ValueError(f"base_url {value!r} is not allowed here; allowed: {allowed} "
                             "(the operator lists them in ASSAY_API_JUDGE_BASE_URLS)")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _allowed_key_variable(cls, value: str | None, info: ValidationInfo) -> str | None:
        """An untrusted spec may only name a key variable the operator allowed: otherwise it
        could send any of the server's secrets to a judge endpoint."""
        context = spec_context(info.context)
        if value is not None and context.untrusted and value not in context.judge_key_envs:
            allowed = ", ".join(sorted(context.judge_key_envs)) or "none"
            raise ValueError(f"api_key_env {value!r} is not allowed here; allowed: {allowed} "
                             "(the operator lists them in ASSAY_API_JUDGE_KEY_ENVS)")
        return value


def read_rubric_file(cfg: GraderConfig, name: str | None) -> str | None:
    """The text of a rubric file ``name`` (relative to the config's ``base_dir``), read when
    the config is validated; raises ValueError (a config error) when it cannot be read."""
    if name is None:
        return None
    path = Path(name)
    if not path.is_absolute() and cfg.base_dir is not None:
        path = Path(cfg.base_dir) / path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"rubric_file {name!r} cannot be read ({path}): {getattr(exc, 'strerror', None) or exc}") \
            from None
    if not text.strip():
        raise ValueError(f"rubric_file {name!r} is empty")
    return text


@dataclass(slots=True)
class Prompt:
    """One judge prompt under construction: instructions in the open, untrusted text fenced.

    ``parts`` are rendered twice: with a fresh random delimiter for the request, and with
    ``PLACEHOLDER`` for the cache key."""

    parts: list[tuple[str, str] | str] = field(default_factory=list)
    answer: str = ANSWER_JSON
    """The system prompt's last sentence: how to answer."""

    def say(self, text: str) -> Prompt:
        self.parts.append(text)
        return self

    def data(self, name: str, text: str) -> Prompt:
        self.parts.append((name, text))
        return self

    def render(self, delimiter: str) -> tuple[JudgeMessage, ...]:
        body = "\n\n".join(p if isinstance(p, str) else fence(p[0], p[1], delimiter) for p in self.parts)
        return (JudgeMessage("system", system_prompt(delimiter, self.answer)), JudgeMessage("user", body))


@dataclass(slots=True)
class Plan:
    """The requests one sample needs and how their replies (in order) become its result."""

    requests: list[JudgeRequest]
    finish: Callable[[list[JudgeReply]], GraderResult]


JudgeConfigT = TypeVar("JudgeConfigT", bound=JudgeConfig)


class JudgeGrader(Grader[JudgeConfigT]):
    """Base of the judge graders: batch path, request building, injection policy."""

    kind = "llm"
    taxonomy = Taxonomy(determinism="llm", cost="high", portability="t3a-scenario", reference="reference-free",
                        temporal_scope="output-level")
    # Not io_bound: concurrency is the judge client's (grade_batch sends one judge_many).
    traits = Traits(judge=True, api_safe=True)

    @abstractmethod
    def plan(self, sample: Sample) -> GraderResult | Plan:
        """The sample's requests and finish step, or its result when no call is needed."""

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_batch([sample])[0]

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        client = self.resources.judge_client
        if client is None:
            return [self.error_result(ErrorCode.UNAVAILABLE, NO_CLIENT()) for _ in samples]
        plans = [self.plan(s) for s in samples]
        requests = [r for p in plans if isinstance(p, Plan) for r in p.requests]
        replies = list(client.judge_many(requests)) if requests else []
        out: list[GraderResult] = []
        at = 0
        for p in plans:
            if isinstance(p, Plan):
                n = len(p.requests)
                out.append(p.finish(replies[at:at + n]))
                at += n
            else:
                out.append(p)
        return out

    # -- building requests -------------------------------------------------------------

    def request(self, prompt: Prompt, schema: dict[str, Any] | None, *, model: str | None = None,
                slot: str | None = None, top_logprobs: int | None = None) -> JudgeRequest:
        """A request for ``prompt`` with structured output ``schema``, or (``top_logprobs``) for
        one token and its most likely alternatives (``scoring: logprobs``). Its cache key hashes the
        grader type and config, the model, the sampling parameters, the schema, ``slot`` (which
        call of several: a swap order, a panel seat) and the messages rendered with the
        placeholder delimiter: everything stable, nothing random."""
        cfg = self.config
        model = model or cfg.model
        stable = {"v": 1, "type": self.type, "config": cfg.model_dump(mode="json"), "model": model,
                  "params": [cfg.temperature, cfg.max_tokens, cfg.seed], "schema": schema, "slot": slot,
                  "extra": self.cache_extra(),
                  "messages": [[m.role, m.content] for m in prompt.render(PLACEHOLDER)]}
        key = hashlib.sha256(json.dumps(stable, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        return JudgeRequest(messages=prompt.render(new_delimiter()), model=model, base_url=cfg.base_url,
                            api_key_env=cfg.api_key_env, temperature=cfg.temperature,
                            max_tokens=1 if top_logprobs is not None else cfg.max_tokens, seed=cfg.seed,
                            schema=None if schema is None else {"name": f"assay_{self.type}", "schema": schema},
                            timeout_s=cfg.timeout_s, cache_key=key, top_logprobs=top_logprobs)

    def cache_extra(self) -> Any:
        """Prepared content outside the config dump that the key must cover (a rubric file's text)."""
        return None

    # -- untrusted fields ----------------------------------------------------------------

    def texts(self, sample: Sample, **fields: Any) -> dict[str, str] | GraderResult:
        """``fields`` (sample values) as text, or an ``invalid_output`` result naming the one
        that cannot be read."""
        out: dict[str, str] = {}
        for name, value in fields.items():
            try:
                out[name] = as_text(value)
            except TooDeep as exc:
                return self.error_result(ErrorCode.INVALID_OUTPUT, f"sample {name} is {exc}")
        return out

    def guard(self, fields: dict[str, str]) -> tuple[dict[str, Any] | None, GraderResult | None]:
        """Scan the fenced ``fields`` for injection: the ``details.injection`` entry (None when
        clean), and the result to report instead of grading when ``on_injection`` says so."""
        flags: list[Flag] = [f for name, text in fields.items() for f in scan(name, text)]
        if not flags:
            return None, None
        cfg = self.config
        entry = {"flagged": True, "action": cfg.on_injection, "flags": [f.as_dict() for f in flags]}
        first = flags[0]
        what = f"{first.field} contains {first.kind.replace('_', ' ')} {first.match!r} aimed at the judge"
        more = f" (and {len(flags) - 1} more)" if len(flags) > 1 else ""
        if cfg.on_injection == "fail":
            return entry, self.scored_result(False, 0.0, reason=f"injection: {what}{more}",
                                             details={"injection": entry})
        if cfg.on_injection == "error":
            return entry, self.error_result(ErrorCode.INVALID_OUTPUT, f"injection: {what}{more}",
                                            details={"injection": entry})
        return entry, None
