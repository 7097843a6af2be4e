"""Which waza release a suite is read as when nobody says: the newest under which it loads.

waza changed what a suite may say between releases (``_waza_releases.BEHAVIOURS``): a suite
written for 0.12 names grader kinds (``regex``, ``keyword``) that 0.21 folded into ``text``, and
one written before 0.24 may carry keys that 0.24's strict decoding refuses. "Suites written for
waza run unchanged" means such a suite loads without flags, so with no ``--waza-version`` and no
``waza_version`` key the loader reads it as the newest release, and when that refuses it, as
each older set of rules in turn, newest first; the first that loads wins and one warning names
it and the change that decided it. An older release "loads" a suite only when it knows every
key in it (``Release.known_only``): a key no release defines is a typo, not an older suite, so
it is refused in the newest release's words rather than let by an old release's leniency. A
suite that loads under no release gets the newest release's error, unchanged; so does any
error but a ``ReleaseRefusal`` (a bad value, a file that is not there, a results file of
another schema), whatever the release.

Releases that differ in verdict rather than in loading (``judge_model`` filling in, expectation
graders) are decided the same way, by the newest release that loads; ``alternatives`` lists,
for ``--explain-dialect``, the older releases that also load and whether their graders differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from assay.core.errors import SpecError
from assay.runner.suites.dialects._waza_releases import (
    BEHAVIOURS,
    NEWEST,
    RELEASES,
    Release,
    ReleaseRefusal,
    parse,
    show,
)
from assay.runner.suites.suite import Suite

LoadAs = Callable[[Release], Suite]
"""Load the suite as one release (raises SpecError when that release refuses it)."""


def rule_sets() -> list[str]:
    """The newest release of each distinct set of behaviours, newest first: every release in
    one set reads a suite alike, so one of each is enough to try."""
    out: list[str] = []
    seen: set[frozenset[str]] = set()
    for name in reversed(RELEASES):
        holding = frozenset(b.key for b in Release(parse(name), "").holding())
        if holding not in seen:
            seen.add(holding)
            out.append(name)
    return out


@dataclass(frozen=True)
class Inferred:
    """The suite as the release chosen, and the warning that says why (None at the newest)."""

    suite: Suite
    release: Release
    warning: str | None


def infer(load_as: LoadAs, where: str) -> Inferred:
    """The suite read as the newest release that loads it (see the module's docstring);
    ``where`` names the suite file in the warning."""
    newest = Release(parse(NEWEST), "the newest release assay knows (no --waza-version, no `waza_version` key)")
    try:
        return Inferred(load_as(newest), newest, None)
    except ReleaseRefusal as exc:
        first = exc
    refused_by: Release = newest
    refusal: SpecError = first
    for name in rule_sets()[1:]:
        candidate = Release(parse(name), "", known_only=True)
        try:
            suite = load_as(_reasoned(candidate, refused_by, refusal))
        except SpecError as exc:
            refused_by, refusal = candidate, exc
            continue
        chosen = _reasoned(candidate, refused_by, refusal)
        return Inferred(suite, chosen, f"{where}: read as waza {show(chosen.version)}, {chosen.reason}")
    raise first


def _reasoned(candidate: Release, refused_by: Release, refusal: SpecError) -> Release:
    """``candidate`` with the reason it was chosen: what the suite relies on that the newer
    release ``refused_by`` changed, and what that release said."""
    old, new = Release(candidate.version, ""), Release(refused_by.version, "")
    ended = [b for b in BEHAVIOURS if old.has(b.key) and not new.has(b.key)]
    began = [b for b in BEHAVIOURS if new.has(b.key) and not old.has(b.key)]
    moved = "; ".join(f"{b.summary} ({_span(b)})" for b in ended or began) or "no listed behaviour"
    return Release(candidate.version, known_only=candidate.known_only, reason=
                   f"the newest release that loads it (none pinned): {moved}. "
                   f"{refused_by.name} refuses it: {refusal}. Pin a release with --waza-version or a "
                   "`waza_version` key to silence this")


def _span(b: object) -> str:
    since, until = getattr(b, "since", None), getattr(b, "until", None)
    if since and until:
        return f"from {since} until {until}"
    return f"from {since}" if since else f"until {until}"


def alternatives(load_as: LoadAs, chosen: Release) -> list[str]:
    """For ``--explain-dialect``: each older set of rules under which the suite also loads,
    and whether its graders (and so its verdicts) would differ from the chosen release's."""
    mine = _signature(load_as(chosen))
    lines = []
    for name in rule_sets():
        version = parse(name)
        if version >= chosen.version:
            continue
        try:
            other = _signature(load_as(Release(version, "compared for --explain-dialect")))
        except SpecError as exc:
            lines.append(f"  waza {name}: refuses it ({exc})")
            continue
        if other == mine:
            lines.append(f"  waza {name}: loads, same graders")
            continue
        gone, added = sorted(mine - other), sorted(other - mine)
        what = "; ".join(filter(None, (f"without {', '.join(gone)}" if gone else "",
                                       f"with {', '.join(added)}" if added else "")))
        lines.append(f"  waza {name}: loads, graders differ ({what}): verdicts may differ")
    return lines or ["  none: no older release reads it by other rules"]


def _signature(suite: Suite) -> frozenset[str]:
    """Every grader of the suite as text (where it applies, name, type, config): two releases
    that read a suite into the same signature grade it alike."""
    out = {f"{name} ({spec.type} {spec.config.model_dump_json()})" for spec in suite.graders
           for name in [spec.name]}
    for sample, specs in suite.sample_graders.items():
        out |= {f"{sample}/{spec.name} ({spec.type} {spec.config.model_dump_json()})" for spec in specs}
    return frozenset(out)
