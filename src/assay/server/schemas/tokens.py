"""Bodies of ``/api/v1/tokens``: a token as its owner sees it (never the token itself)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from assay.server.schemas.common import ApiModel


class TokenOut(ApiModel):
    id: str = Field(description="The token's id (as `assay tokens create` printed it).")
    user: str = Field(description="The user the token acts for.")
    label: str = Field(description="The note given when it was created.")
    prefix: str = Field(description="Its first characters, to tell tokens apart.")
    created_at: datetime
    revoked_at: datetime | None = Field(description="When it was revoked; null while it is live.")
