"""``/api/v1/tokens``: a user lists and revokes their own API tokens (an admin, anyone's).

A token revoked here is refused by this server from the moment the answer is sent, its page
sessions with it (``pages.session`` keeps the token in the cookie); every other server of the
database refuses it within ``ASSAY_TOKEN_CACHE_MS`` plus one lookup (``server.auth``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import ApiError, shown
from assay.server.schemas.common import ERROR_RESPONSES, Envelope
from assay.server.schemas.tokens import TokenOut
from assay.store.models import ApiToken, User, is_row_id
from assay.store.users import list_tokens, revoke_token

router = APIRouter(prefix="/tokens", tags=["tokens"], responses=ERROR_RESPONSES)
TOKEN_NOT_FOUND = Phrase("api.not_found.token", "token {id} not found (a user sees only their own tokens)")
OTHERS = Phrase("api.tokens.others", "only an admin lists another user's tokens")


def token_out(token: ApiToken, owner: str) -> TokenOut:
    return TokenOut(id=token.id, user=owner, label=token.name, prefix=token.prefix, created_at=token.created_at,
                    revoked_at=token.revoked_at)


@router.get("", response_model=Envelope[list[TokenOut]], summary="List your tokens (an admin: anyone's)")
def list_(session: SessionDep, user: CurrentUser,
          of: Annotated[str | None, Query(alias="user", description="Only this user's (an admin's choice).")] = None
          ) -> Any:
    if of is not None and of != user.name and not user.is_admin:
        raise ApiError(403, OTHERS())
    name = of if of is not None else (None if user.is_admin else user.name)
    return Envelope(data=[token_out(token, owner) for token, owner in list_tokens(session, name)])


@router.delete("/{token_id}", response_model=Envelope[TokenOut],
               summary="Revoke a token: refused here at once, everywhere within a second")
async def revoke(token_id: str, service: ServiceDep, user: CurrentUser) -> Any:
    out = await run_in_threadpool(_revoke, service.database, token_id, user)
    await run_in_threadpool(service.tokens.revoked)  # this server: at once, not at its next poll
    return Envelope(data=out)


def _revoke(database: Any, token_id: str, user: Principal) -> TokenOut:
    with database.session() as session:
        token = session.get(ApiToken, token_id) if is_row_id(token_id) else None
        if token is None or not user.may_change(token.user_id):
            raise ApiError(404, TOKEN_NOT_FOUND(id=shown(token_id)))
        revoke_token(session, token.id)  # grows the tokens change counter in this transaction
        session.commit()
        owner = session.get(User, token.user_id)
        return token_out(token, owner.name if owner is not None else "")
