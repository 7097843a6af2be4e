"""``/api/v1/online-rules``: which arriving spans the caller's evaluators grade, their results
and their numbers; ``/filter-check`` validates a filter as it is typed. Shared work as for tasks
(``server.ownership``): everyone signed in reads a rule and its numbers; its creator and the
admins change, delete or backfill it. Thin: the use cases are in ``service.online.rules`` and
``service.online.summary``."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from sqlalchemy.orm import Session

from assay.core.messages import Phrase, code_and_args
from assay.server.auth import Principal
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import NOT_NULL, ApiError, not_found
from assay.server.listing import LARGEST_ID
from assay.server.ownership import check_may_change, owner_name
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.online import (
    BackfillIn,
    BackfillOut,
    FilterCheckIn,
    FilterCheckOut,
    OnlineResultOut,
    OnlineRuleIn,
    OnlineRuleOut,
    OnlineRuleUpdate,
    ResultsPage,
    SpanPreviewOut,
)
from assay.server.schemas.tasks import TaskEvaluatorIn, TaskEvaluatorOut
from assay.service.online import compare, rules, summary
from assay.service.online.filters import FilterError, parse
from assay.service.online.mapping import model_of
from assay.store.models import Evaluator, is_row_id
from assay.store.online_models import OnlineResult, OnlineRule

router = APIRouter(prefix="/online-rules", tags=["online"], responses=ERROR_RESPONSES)
NOT_YOURS = Phrase("api.online_rule.not_yours", "online rule {name} belongs to {owner}; only its creator or an "
                                                "admin can change, delete or backfill it")
BAD_CURSOR = Phrase("api.online_rule.cursor", "query parameter cursor: {cursor} is no cursor of this list")
BAD_SPLIT = Phrase("api.online_rule.split", "split: an attribute key without a double quote (\") or a NUL")
BAD_WINDOW = Phrase("api.online_rule.window", "from must be before to (and at most {days} days before it)")
BAD_PERIOD = Phrase("api.online_rule.period", "query parameter {name}: {value} is not START/END, two ISO 8601 "
                                              "times with START before END (or give split= to compare two values)")
DISABLED = Phrase("api.online_rule.disabled", "online rule {name} is disabled: enable it to backfill")
MAX_SUMMARY_DAYS = 400
STATUSES = Literal["passed", "failed", "error", "pending", "not_applicable", "skipped"]
When = Annotated[datetime | None, Query(description="ISO 8601; UTC when no offset is given.")]


def rule_out(session: Session, rule: OnlineRule) -> OnlineRuleOut:
    return OnlineRuleOut(id=rule.id, name=rule.name, filter=rule.filter, sample_rate=rule.sample_rate,
                         scope=rule.scope, quiet_s=rule.quiet_s, evaluators=_evaluators_out(session, rule),
                         enabled=rule.enabled, judge_budget_per_day=rule.judge_budget_per_day,
                         created_by_id=rule.user_id, owner=owner_name(session, rule.user_id),
                         created_at=iso(rule.created_at), updated_at=iso(rule.updated_at))


def _evaluators_out(session: Session, rule: OnlineRule) -> list[TaskEvaluatorOut]:
    """The rule's evaluators with their names and types (an evaluator deleted since: its id, type "")."""
    out = []
    for link in rule.evaluators:
        evaluator = session.get(Evaluator, link["evaluatorId"])
        out.append(TaskEvaluatorOut(evaluator_id=link["evaluatorId"], weight=link.get("weight", 1.0),
                                    name=evaluator.name if evaluator else link["evaluatorId"],
                                    type=evaluator.type if evaluator else ""))
    return out


def result_out(result: OnlineResult) -> OnlineResultOut:
    return OnlineResultOut(id=result.id, trace_id=result.trace_id, span_id=result.span_id, target=result.target,
                           generation=result.generation, evaluator_id=result.evaluator_id,
                           evaluator_name=result.evaluator_name, evaluator_version=result.evaluator_version,
                           status=result.status, passed=result.passed, score=result.score, reason=result.reason,
                           error_code=result.error_code, details=result.details or {}, latency_ms=result.latency_ms,
                           at=iso(result.at), graded_at=iso(result.graded_at))


def _links(evaluators: list[TaskEvaluatorIn]) -> list[dict[str, Any]]:
    return [{"evaluatorId": e.evaluator_id, "weight": e.weight} for e in evaluators]


def _rule(session: Session, rule_id: str) -> OnlineRule:
    """The rule ``rule_id``, which everyone signed in may read; 404 when there is none."""
    rule = session.get(OnlineRule, rule_id) if is_row_id(rule_id) else None
    if rule is None:
        raise not_found("online rule", rule_id)
    return rule


def _own_rule(session: Session, rule_id: str, user: Principal) -> OnlineRule:
    """The rule ``rule_id`` when ``user`` may change it; else the 403 naming its owner."""
    rule = _rule(session, rule_id)
    check_may_change(session, user, rule.user_id, NOT_YOURS, rule.name)
    return rule


def _saved(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except rules.RuleError as exc:
        raise ApiError(422, exc.said) from None


@router.post("", response_model=Envelope[OnlineRuleOut], summary="Create an online rule")
def create_rule(body: OnlineRuleIn, session: SessionDep, service: ServiceDep, user: CurrentUser) -> Any:
    fields = rules.RuleFields(name=body.name, filter=body.filter, sample_rate=body.sample_rate, scope=body.scope,
                              quiet_s=body.quiet_s, evaluators=_links(body.evaluators), enabled=body.enabled,
                              judge_budget_per_day=body.judge_budget_per_day)
    rule = _saved(rules.create, session, user.id, fields)
    session.commit()
    service.online.forget_rules()
    return Envelope(data=rule_out(session, rule))


@router.get("", response_model=Envelope[list[OnlineRuleOut]], summary="The caller's online rules")
def list_rules(session: SessionDep, user: CurrentUser) -> Any:
    return Envelope(data=[rule_out(session, r) for r in rules.of_user(session, user.id)])


@router.post("/filter-check", response_model=Envelope[FilterCheckOut],
             summary="Validate a filter, and preview the recent spans it takes")
def check_filter(body: FilterCheckIn, session: SessionDep, user: CurrentUser) -> Any:
    try:
        parse(body.filter)
    except FilterError as exc:
        code, args = code_and_args(exc.said)
        return Envelope(data=FilterCheckOut(valid=False, message=str(exc), message_code=code, message_args=args,
                                            position=exc.position))
    if not body.preview:
        return Envelope(data=FilterCheckOut(valid=True))
    scanned, matches = rules.preview(session, user.id, body.filter)
    return Envelope(data=FilterCheckOut(valid=True, scanned=scanned, matches=[SpanPreviewOut(
        trace_id=s.trace_id, span_id=s.span_id, name=s.name, model=model_of(s.attributes),
        start=iso(datetime.fromtimestamp(s.start_ns / 1e9, UTC))) for s in matches]))


@router.get("/{rule_id}", response_model=Envelope[OnlineRuleOut], summary="One online rule")
def get_rule(rule_id: str, session: SessionDep, user: CurrentUser) -> Any:
    return Envelope(data=rule_out(session, _rule(session, rule_id)))


@router.patch("/{rule_id}", response_model=Envelope[OnlineRuleOut], summary="Change an online rule")
def update_rule(rule_id: str, body: OnlineRuleUpdate, session: SessionDep, service: ServiceDep,
                user: CurrentUser) -> Any:
    rule = _own_rule(session, rule_id, user)
    given = body.model_dump(exclude_unset=True, by_alias=False)
    for name, value in given.items():
        if value is None and name != "judge_budget_per_day":
            raise ApiError(422, NOT_NULL(field=OnlineRuleUpdate.model_fields[name].alias or name))
    fields = rules.fields_of(rule)
    changes = {k: v for k, v in given.items() if k != "evaluators"}
    if body.evaluators is not None:
        changes["evaluators"] = _links(body.evaluators)
    _saved(rules.update, session, rule, replace(fields, **changes))
    session.commit()
    service.online.forget_rules()
    return Envelope(data=rule_out(session, rule))


@router.delete("/{rule_id}", response_model=Envelope[dict[str, str]], summary="Delete an online rule and its results")
def delete_rule(rule_id: str, session: SessionDep, service: ServiceDep, user: CurrentUser) -> Any:
    rule = _own_rule(session, rule_id, user)
    session.delete(rule)
    session.commit()
    service.online.forget_rules()
    return Envelope(data={"id": rule_id})


@router.get("/{rule_id}/results", response_model=Envelope[ResultsPage], summary="An online rule's results")
def rule_results(rule_id: str, session: SessionDep, user: CurrentUser,
                 status: Annotated[STATUSES | None, Query(description="Only results of this status.")] = None,
                 start: Annotated[When, Query(alias="from")] = None, stop: Annotated[When, Query(alias="to")] = None,
                 cursor: Annotated[str | None, Query(max_length=20)] = None,
                 limit: Annotated[int, Query(ge=1, le=500)] = 100,
                 order: Annotated[Literal["oldest", "newest"], Query(description=(
                     "oldest (the default): in the order they were stored; newest: the latest first."))] = "oldest",
                 ) -> Any:
    rule = _rule(session, rule_id)
    if cursor is not None and not (cursor.isascii() and cursor.isdigit() and int(cursor) <= LARGEST_ID):
        raise ApiError(422, BAD_CURSOR(cursor=repr(cursor)))
    page = summary.results_page(session, rule.id, cursor=None if cursor is None else int(cursor), limit=limit + 1,
                                status=status, start=_utc(start), stop=_utc(stop), newest_first=order == "newest")
    more = len(page) > limit
    page = page[:limit]
    return Envelope(data=ResultsPage(results=[result_out(r) for r in page],
                                     next_cursor=str(page[-1].id) if more else None))


@router.get("/{rule_id}/summary", response_model=Envelope[list[dict[str, Any]]],
            summary="Pass rate and mean score per hour or day, with 95% intervals")
def rule_summary(rule_id: str, session: SessionDep, user: CurrentUser,
                 start: Annotated[When, Query(alias="from")] = None, stop: Annotated[When, Query(alias="to")] = None,
                 by: Annotated[summary.Bucket, Query(description="hour or day (UTC).")] = "hour",
                 split: Annotated[str | None, Query(max_length=200, description="An attribute of the graded span "
                                                                                "to split by.")] = None) -> Any:
    rule = _rule(session, rule_id)
    _check_split(split)
    start_at, stop_at = _period(start, stop)
    return Envelope(data=summary.summary(session, rule, start=start_at, stop=stop_at, by=by, split=split))


@router.get("/{rule_id}/compare", response_model=Envelope[dict[str, Any]],
            summary="Two windows, or two values of an attribute, of one rule compared (unpaired)")
def rule_compare(rule_id: str, session: SessionDep, user: CurrentUser,
                 base: Annotated[str, Query(max_length=200, description=(
                     "A window START/END (ISO 8601), or with `split` a value of that attribute."))],
                 new: Annotated[str, Query(max_length=200, description="As `base`.")],
                 split: Annotated[str | None, Query(max_length=200, description=(
                     "An attribute of the graded span: `base` and `new` are two of its values."))] = None,
                 start: Annotated[When, Query(alias="from")] = None,
                 stop: Annotated[When, Query(alias="to")] = None) -> Any:
    rule = _rule(session, rule_id)
    _check_split(split)
    if split is None:
        parts = [_window(base, "base"), _window(new, "new")]
    else:
        start_at, stop_at = _period(start, stop)
        parts = [compare.Slice(start_at, stop_at, split, base), compare.Slice(start_at, stop_at, split, new)]
    return Envelope(data=compare.compare(session, rule, parts[0], parts[1]))


def _check_split(split: str | None) -> None:
    """The database reads the attribute by a JSON path, in which SQLite can write neither a quote
    nor a NUL (its JSON functions end the text there)."""
    if split is not None and ('"' in split or "\x00" in split):
        raise ApiError(422, BAD_SPLIT())


def _period(start: datetime | None, stop: datetime | None) -> tuple[datetime, datetime]:
    """``from`` and ``to`` of a summary (by default the day up to now, or up to ``to``): a 422
    unless ``from`` comes first, at most ``MAX_SUMMARY_DAYS`` before ``to``."""
    stop_at = _utc(stop) or datetime.now(UTC)
    try:
        start_at = _utc(start) or stop_at - timedelta(days=1)
    except OverflowError:  # `to` in the first day of year 1
        raise ApiError(422, BAD_WINDOW(days=MAX_SUMMARY_DAYS)) from None
    if not start_at < stop_at or stop_at - start_at > timedelta(days=MAX_SUMMARY_DAYS):
        raise ApiError(422, BAD_WINDOW(days=MAX_SUMMARY_DAYS))
    return start_at, stop_at


def _window(text: str, name: str) -> compare.Slice:
    first, _, last = text.partition("/")
    try:
        start, stop = _utc(datetime.fromisoformat(first)), _utc(datetime.fromisoformat(last))
    except ValueError:
        raise ApiError(422, BAD_PERIOD(name=name, value=repr(text))) from None
    assert start is not None and stop is not None
    if not start < stop:
        raise ApiError(422, BAD_PERIOD(name=name, value=repr(text)))
    return compare.Slice(start, stop)


@router.post("/{rule_id}/backfill", response_model=Envelope[BackfillOut],
             summary="Grade spans already stored (what the rule graded already is skipped)")
def backfill(rule_id: str, body: BackfillIn, session: SessionDep, service: ServiceDep, user: CurrentUser) -> Any:
    rule = _own_rule(session, rule_id, user)
    if not rule.enabled:
        raise ApiError(409, DISABLED(name=repr(rule.name)))
    start, stop = _utc(body.start), _utc(body.stop)
    assert start is not None and stop is not None
    if not start < stop:
        raise ApiError(422, BAD_WINDOW(days=MAX_SUMMARY_DAYS))
    read, added = rules.backfill(session, rule, start, stop)
    session.commit()
    service.worker.wake()
    return Envelope(data=BackfillOut(spans_read=read, jobs_added=added))


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
