"""``GET /api/v1/runs/{a}/compare/{b}``: did run b do better than run a, or is it noise?"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from assay.server.deps import CurrentUser, SessionDep
from assay.server.errors import not_found
from assay.server.schemas.common import ERROR_RESPONSES, Envelope
from assay.server.schemas.compare import ComparisonOut
from assay.service.run_summary import compare
from assay.store import runs as rows
from assay.store.snapshot import weights as snapshot_weights

router = APIRouter(prefix="/runs", tags=["runs"], responses=ERROR_RESPONSES)


@router.get("/{base_id}/compare/{new_id}", response_model=Envelope[ComparisonOut],
            summary="Compare two runs sample by sample (paired intervals, exact McNemar p-values)")
def compare_runs(base_id: str, new_id: str, session: SessionDep, _user: CurrentUser,
                 adjust: Annotated[Literal["holm", "bh", "none"], Query(
                     description="Correction of the p-values for the number of evaluators compared.")] = "holm",
                 alpha: Annotated[float, Query(ge=0.0, le=1.0, description="Significance level (what `detectable` "
                                               "is computed at).")] = 0.05) -> Any:
    weights = []
    for run_id in (base_id, new_id):
        run = rows.get_run(session, run_id)
        if run is None:
            raise not_found("run", run_id)
        weights.append((run_id, snapshot_weights(run.snapshot)))
    doc = compare(session, weights[0], weights[1], adjust=adjust, alpha=alpha)
    return Envelope(data=ComparisonOut.model_validate(doc))
