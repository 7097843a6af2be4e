"""What the evaluator forms must know of this server to offer only what it accepts:
``GET /pages/api/form-facts`` → the judge model used when an llm evaluator names none (the form
requires a model when there is none), and the judge endpoints and key variables an evaluator
may name (the form offers those fields only when there are some); and, for the dataset page,
the file suffixes an upload may have and the largest upload (checked before sending); for the
task form, the largest weight of an evaluator."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from assay.core.spec import MAX_WEIGHT
from assay.runner.dataset import FORMATS
from assay.server.deps import CurrentUser, ServiceDep
from assay.server.schemas.common import ERROR_RESPONSES, Envelope

router = APIRouter(prefix="/pages/api", include_in_schema=False, responses=ERROR_RESPONSES)


@router.get("/form-facts", response_model=Envelope[dict[str, Any]])
def form_facts(service: ServiceDep, _user: CurrentUser) -> Any:
    settings = service.settings
    return Envelope(data={"judgeModel": settings.judge_model,
                          "judgeBaseUrls": sorted(settings.api_judge_base_urls),
                          "judgeKeyEnvs": sorted(settings.api_judge_key_envs),
                          "datasetSuffixes": sorted(FORMATS), "maxUploadBytes": settings.api_max_upload_bytes,
                          "maxWeight": MAX_WEIGHT})
