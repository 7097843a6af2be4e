"""``waza_trigger``: waza's trigger heuristic (microsoft/waza, from 0.21;
``internal/graders/trigger_grader.go``, ``internal/scaffold/triggers.go``): does the task's
prompt look like one the skill should trigger on?

The skill's keywords are the tokens of its SKILL.md name, description (up to ``DO NOT USE
FOR:``) and body, plus those of its ``USE FOR:`` phrases. A token is a run of letters and
digits, lower-cased, of 3 bytes or more (UTF-8, as Go counts), not a stop word. The prompt's
score is the larger of (distinct keywords in the prompt / distinct prompt tokens) and the best
phrase score (1 when a phrase occurs in the prompt, else its share of tokens found).
``mode: positive`` passes when score >= ``threshold`` (default 0.6), ``negative`` when below.
``skill_path`` (a SKILL.md or its folder) is read once, when the config is validated,
relative to the suite's folder (waza: the current directory).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, PrivateAttr, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._text import as_text

MAX_SKILL_BYTES = 1 << 20
_STOP = frozenset("the and for with this that from into your you are was were what where how why not can should "
                  "using about have has had but all any too out get let".split())
_QUOTED = re.compile('["\u201c\u201d]([^"\u201c\u201d]+)["\u201c\u201d]')
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_LABELS = ("DO NOT USE FOR:", "USE FOR:", "INVOKES:", "FOR SINGLE OPERATIONS:")


def tokenize(text: str) -> list[str]:
    """waza's ``tokenize``: letter/digit runs, lower-cased, >= 3 UTF-8 bytes, no stop words."""
    out, run = [], []
    for ch in text.lower() + " ":
        if ch.isalpha() or ch.isnumeric():
            run.append(ch)
            continue
        if run:
            word = "".join(run)
            run = []
            if len(word.encode()) >= 3 and word not in _STOP:
                out.append(word)
    return out


def use_for_phrases(description: str) -> list[str]:
    """The ``USE FOR:`` phrases of a skill description (``scaffold.ParseTriggerPhrases``):
    quoted phrases when any are quoted, else the comma-separated parts without a trailing
    parenthetical note."""
    text = description.replace("\r\n", " ").replace("\n", " ")
    upper = text.upper()
    start, at = -1, 0
    while (i := upper.find("USE FOR:", at)) >= 0:
        if i >= 4 and "NOT " in upper[max(0, i - 11):i]:
            at = i + len("USE FOR:")
            continue
        start = i
        break
    if start < 0:
        return []
    after = text[start + len("USE FOR:"):]
    for label in _LABELS:
        if label != "USE FOR:" and (j := after.upper().find(label)) >= 0:
            after = after[:j]
    after = after.strip().rstrip(".")
    quoted = [m.strip() for m in _QUOTED.findall(after)]
    if quoted:
        return [p for p in quoted if p]
    return [p for p in (_PAREN.sub("", part.strip()).strip() for part in after.split(",")) if p]


def read_skill(path: Path) -> tuple[str, str, str]:
    """(name, description, body) of a SKILL.md: YAML front matter between ``---`` lines."""
    if path.is_dir():
        path = path / "SKILL.md"
    with path.open("rb") as f:
        data = f.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise ValueError(f"{path} is larger than {MAX_SKILL_BYTES} bytes")
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return "", "", text
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError(f"{path}: front matter has no closing ---")
    meta = yaml.safe_load(text[4:end]) or {}
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: front matter is not a mapping")
    body = text[end + 4:].split("\n", 1)[1] if "\n" in text[end + 4:] else ""
    return str(meta.get("name") or ""), str(meta.get("description") or ""), body


class WazaTriggerConfig(GraderConfig):
    skill_path: str = Field(description="The skill's SKILL.md, or the folder holding it.")
    mode: Literal["positive", "negative"] = Field(description="`positive`: the prompt should trigger the skill; "
                                                              "`negative`: it should not.")
    threshold: float = Field(default=0.6, ge=0, le=1, description="Score at which a prompt counts as triggering.")

    _keywords: frozenset[str] = PrivateAttr(default=frozenset())
    _phrases: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _load(self) -> WazaTriggerConfig:
        if not self.skill_path.strip():
            raise ValueError("skill_path: required")
        path = Path(self.skill_path)
        if not path.is_absolute() and self.base_dir is not None:
            path = Path(self.base_dir) / path
        try:
            name, description, body = read_skill(path)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ValueError(f"skill_path: reading SKILL.md {path}: {exc}") from None
        head = description[:i] if (i := description.upper().find("DO NOT USE FOR:")) >= 0 else description
        phrases = use_for_phrases(description)
        keywords = set(tokenize(f"{name} {head.strip()} {body}"))
        for phrase in phrases:
            keywords.update(tokenize(phrase))
        if not keywords:
            raise ValueError(f"skill_path: SKILL.md {path} does not contain usable keywords")
        self._keywords, self._phrases = frozenset(keywords), tuple(phrases)
        return self

    def score(self, prompt: str) -> tuple[float, float, list[str]]:
        """(score, phrase score, matched keywords in first-seen order) of a prompt."""
        tokens = tokenize(prompt)
        if not tokens:
            return 0.0, 0.0, []
        matched = list(dict.fromkeys(t for t in tokens if t in self._keywords))
        token_score = len(matched) / len(set(tokens))
        phrase = self._phrase_score(prompt, set(tokens))
        return max(phrase, token_score), phrase, matched

    def _phrase_score(self, prompt: str, tokens: set[str]) -> float:
        best, lower = 0.0, prompt.lower()
        for phrase in self._phrases:
            wanted = phrase.strip().lower()
            if not wanted:
                continue
            if wanted in lower:
                return 1.0
            words = tokenize(phrase)
            if words:
                best = max(best, sum(w in tokens for w in words) / len(words))
        return best


@register
class WazaTrigger(Grader[WazaTriggerConfig]):
    type = "waza_trigger"
    description = "waza's trigger heuristic: does the prompt match the skill's keywords and USE FOR phrases?"
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-free")

    def grade(self, sample: Sample) -> GraderResult:
        c = self.config
        score, phrase, matched = c.score(as_text(sample.input) if sample.input is not None else "")
        hit = score >= c.threshold
        passed = hit if c.mode == "positive" else not hit
        s, t = f"{score:.2f}", f"{c.threshold:.2f}"
        if c.mode == "positive":
            reason = f"Prompt is trigger-aligned (score {s} >= {t})" if passed else \
                f"Prompt is not trigger-aligned enough (score {s} < {t})"
        else:
            reason = f"Prompt correctly treated as non-trigger (score {s} < {t})" if passed else \
                f"Prompt appears trigger-aligned unexpectedly (score {s} >= {t})"
        return self.scored_result(passed, score, reason, {
            "mode": c.mode, "threshold": c.threshold, "skill_path": c.skill_path, "matched_keywords": matched,
            "matched_count": len(matched), "phrase_score": phrase})
