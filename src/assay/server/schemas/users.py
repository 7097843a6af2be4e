"""Bodies of ``/api/v1/users``: users, their roles, and a token as issued (shown once)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from assay.server.schemas.common import ApiModel, NoNul
from assay.store.models import NAME_MAX

Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX), NoNul]


class UserOut(ApiModel):
    id: str
    name: str
    is_admin: bool = Field(description="Admins change and delete anyone's rows and manage users and tokens.")
    live_tokens: int | None = Field(default=None, description="How many unrevoked tokens the user holds (in the "
                                                              "admins' list).")
    created_at: str
    active: bool = Field(default=True, description="False once an admin deactivated them: their tokens are "
                                                   "revoked, none can be issued, their rows stay readable.")
    deactivated_at: str | None = None


class UserCreate(ApiModel):
    name: Name
    is_admin: bool = False


class UserUpdate(ApiModel):
    is_admin: bool = Field(description="Give (true) or take (false) the admin role; the last admin keeps it.")


class TokenCreate(ApiModel):
    label: Annotated[str, Field(max_length=NAME_MAX), NoNul] = Field(default="", description="A note to tell "
                                                                                            "tokens apart.")


class TokenIssued(ApiModel):
    """A token just issued: ``token`` is its only copy, shown once."""

    id: str
    user: str
    label: str
    token: str = Field(description="The token itself: keep it now, it is never shown again.")
