"""``GET /runs/{a}/compare/{b}``'s engine: two runs compared from their verdict tables
(``verdict_table``) when both have a current one, with numpy (``core.compare_columns``) and
the flips' reasons read for the flipped samples only; otherwise by reading every result of
both (``run_summary.compare``). The answer is the same either way, to the last digit.

A finished run (completed, failed or cancelled) without a current table (finished before the
table existed, or given results since: ``store.verdicts``) gets one here, read from its
results and stored for the next comparison. A run still queued or running is read afresh
each time (its results are still coming)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from assay.core.compare_columns import compare_columns
from assay.core.result import Status
from assay.service import verdict_table
from assay.service.run_summary import Stored, named, run_verdicts, summarise
from assay.service.run_summary import compare as compare_streamed
from assay.store import verdicts
from assay.store.models import FINAL_STATES, Run

_STATUSES = {s.value: s for s in Status}


def compare(session: Session, base: tuple[Run, dict[str, float]], new: tuple[Run, dict[str, float]], *,
            adjust: str = "holm", alpha: float = 0.05) -> dict[str, Any]:
    """Run ``new`` against run ``base`` (each: the run, its evaluator weights), as
    ``run_summary.compare`` answers it."""
    tables = [table(session, run, weights) for run, weights in (base, new)]
    b, n = tables
    if b is None or n is None or not _comparable(b) or not _comparable(n):
        return compare_streamed(session, (base[0].id, base[1]), (new[0].id, new[1]), adjust=adjust, alpha=alpha)
    names = {**n.names, **b.names}  # the base run's name wins, as when both are read in turn
    runs = {"base": (base[0].id, b), "new": (new[0].id, n)}

    def reasons(side: str, positions: Sequence[int]) -> Mapping[int, Sequence[Stored]]:
        run_id, t = runs[side]
        at = {t.columns.ids[p]: p for p in positions}
        found: dict[int, list[Stored]] = {}
        for sample_id, evaluator_id, status, reason, code, args in verdicts.unpassed(session, run_id, list(at)):
            found.setdefault(at[sample_id], []).append(
                Stored(evaluator_id, _STATUSES[status], None, reason, code, args, None, 1.0))
        return found

    doc = compare_columns(b.columns, n.columns, reasons, labels=names, adjust=adjust, alpha=alpha).to_dict()
    return named(doc, names)


def _comparable(t: verdict_table.Table) -> bool:
    """Each sample id once, each evaluator once per sample: what the columns' comparison assumes."""
    return t.single and len(set(t.columns.ids)) == len(t.columns.ids)


def table(session: Session, run: Run, weights: dict[str, float]) -> verdict_table.Table | None:
    """The run's current verdict table: the stored one, or one made now from its results (and
    stored) when the run is finished; None for a run still grading."""
    bodies = verdicts.read(session, run.id)
    if bodies is not None:
        try:
            stored = verdict_table.read(bodies)
        except verdict_table.Unreadable:
            stored = None
        if stored is not None and stored.weights == weights and \
                stored.counts == verdicts.status_counts(session, run.id):
            return stored
    if run.status not in FINAL_STATES:
        return None
    made: list[tuple[int, bytes, bool]] = []
    names: dict[str, str] = {}
    writer = verdict_table.Writer(weights, names, lambda samples, body, final: made.append((samples, body, final)))
    for _ in writer.through(run_verdicts(session, run.id, weights, names)):
        pass
    try:  # written once made: the database is held for the writing only, not the reading
        verdicts.clear(session, run.id)
        for number, (samples, body, final) in enumerate(made):
            verdicts.add_part(session, run.id, number, samples, body, final=final)
        session.commit()
    except SQLAlchemyError:  # another request stored it meanwhile, or the database is busy: next time
        session.rollback()
    return verdict_table.read([body for _, body, _ in made])


def summarise_and_keep(session: Session, run_id: str, weights: dict[str, float]) -> dict[str, Any]:
    """A completing run's summary (``run_summary.summarise``), its verdict table written on the
    way in the caller's transaction (the results are read once for both)."""
    names: dict[str, str] = {}
    verdicts.clear(session, run_id)
    parts = [0]

    def keep(samples: int, body: bytes, final: bool) -> None:
        verdicts.add_part(session, run_id, parts[0], samples, body, final=final)
        parts[0] += 1

    return summarise(session, run_id, weights, names, verdict_table.Writer(weights, names, keep).through)
