"""``vally_transcript``: Vally's transcript graders (``transcript-contains``,
``transcript-not-contains``, ``transcript-matches``, ``transcript-not-matches``) on every
assistant message of the run (microsoft.github.io/vally/reference/graders/transcript-contains/,
/transcript-matches/).

The config is ``vally_output``'s (``substring`` with ``case_sensitive``, default false, or
``pattern`` with a leading ``(?ims)`` group; ``negate``). The grader passes when *any*
assistant message contains the value or matches the pattern, so it can see an interim plan,
a clarifying question or a refusal that the final output no longer shows. Negated, it passes
when *no* assistant message does, and it does not pass vacuously: a run with no assistant
messages fails either way.
"""

from __future__ import annotations

from assay.core.grader import Taxonomy
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders.vally_output import VallyOutput


@register
class VallyTranscript(VallyOutput):
    type = "vally_transcript"
    description = "Vally's transcript-contains / transcript-matches (and negated forms) on every assistant message."
    taxonomy = Taxonomy(determinism="static", cost="free", reference="reference-free",
                        temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        messages = [e.content or "" for e in sample.transcript if e.type == "assistant_message"]
        if not messages:
            return self.scored_result(False, reason="the run has no assistant messages to inspect",
                                      details={"found": False, "negate": cfg.negate, "messages": 0})
        try:
            hits = [i for i, text in enumerate(messages) if self.found_in(text)]
        except TimeoutError:
            return self.error_result(ErrorCode.TIMEOUT, f"pattern search took over {cfg.timeout_ms} ms")
        verb = "contains" if cfg.mode == "contains" else "matches"
        if hits:
            reason = f"assistant message {hits[0] + 1} of {len(messages)} {verb} {self.what()}"
        else:
            reason = f"no assistant message of {len(messages)} {verb} {self.what()}"
        return self.scored_result(bool(hits) != cfg.negate, reason=reason,
                                  details={"found": bool(hits), "negate": cfg.negate, "messages": len(messages),
                                           "matched": [i + 1 for i in hits][:20]})
