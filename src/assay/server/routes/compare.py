"""``GET /api/v1/runs/{a}/compare/{b}``: did run b do better than run a, or is it noise?"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from assay.server.deps import CurrentUser, SessionDep
from assay.server.errors import not_found
from assay.server.schemas.common import ERROR_RESPONSES, Envelope
from assay.server.schemas.compare import ComparisonOut
from assay.service.run_compare import compare
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
    runs = []
    for run_id in (base_id, new_id):
        run = rows.get_run(session, run_id)
        if run is None:
            raise not_found("run", run_id)
        runs.append((run, snapshot_weights(run.snapshot)))
    doc = compare(session, runs[0], runs[1], adjust=adjust, alpha=alpha)
    # Checked once against the schema and written by pydantic in one pass: returned as a model,
    # FastAPI would dump, check and serialise it again and json.dumps the result (a comparison
    # of 5,000 samples is megabytes: ~100 ms more per answer).
    body = Envelope(data=ComparisonOut.model_validate(doc)).model_dump_json(by_alias=True)
    return Response(content=body, media_type="application/json")
