"""The store on SQLite and PostgreSQL: the migrations build exactly the models' schema, the
presets are seeded once with fixed ids, results are idempotent per (run, sample, evaluator),
tokens are kept hashed and can be revoked; and the translation of stored configs."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from assay.core.context import SpecContext
from assay.core.errors import AssayError, SpecError
from assay.store import current_revision, head_revision, normalise_url, upgrade
from assay.store.models import Base
from assay.store.presets import PRESETS
from assay.store.translate import api_types, compile_row, from_spec, to_spec


def test_migrations_build_the_models_schema_and_run_once(database):
    assert current_revision(database) == head_revision() is not None
    with database.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": False}), Base.metadata)
    if database.engine.dialect.name == "postgresql":  # revision 0004 drops this key there on purpose
        diff = [d for d in diff if not (d[0] == "add_fk" and d[1].parent.name == "dataset_rows")]
    assert diff == []
    upgrade(database)  # a second start changes nothing
    with database.session() as session:
        rows = session.execute(text("SELECT id, name, is_preset FROM evaluators ORDER BY created_at")).all()
    assert [(r[0], r[1]) for r in rows] == [(p.id, p.name) for p in PRESETS] and all(r[2] for r in rows)


def test_results_are_stored_once_per_run_sample_and_evaluator(database):
    from assay.store import runs, tasks

    with database.session() as session:
        task = tasks.create_task(session, name="t", description=None, dataset_id=None,
                                 evaluators=[(PRESETS[0].id, 1.0)], created_by_id=None)
        run = runs.create_run(session, task_id=task.id, evaluators=[], samples=1, created_by_id=None, slice_size=8)
        row = {"run_id": run.id, "sample_id": "a", "sample_index": 0, "evaluator_id": PRESETS[0].id,
               "evaluator_name": "x", "status": "failed", "passed": False, "score": 0.0,
               "reason": "NUL \x00 is stored", "details": {"k\x00": ["\x00"]}, "error_code": None, "latency_ms": 1.0}
        assert runs.add_results(session, [row]) == 1
        assert runs.add_results(session, [{**row, "status": "passed", "passed": True}]) == 0  # counted as new: none
        assert runs.count_results(session, run.id) == 1
        (stored,) = runs.list_results(session, runs.results_query(run.id), limit=10, offset=0)[0]
        assert stored.status == "failed" and stored.reason == "NUL \x00 is stored"  # kept on both (store.clean)
        assert stored.details == {"k\x00": ["\x00"]}


def test_results_keep_every_character_and_value_as_given(database):
    """On PostgreSQL results go through COPY's text format: tabs, line breaks, backslashes and
    JSON that orjson cannot write must come back as they went in."""
    from assay.store import runs, tasks

    with database.session() as session:
        task = tasks.create_task(session, name="t", description=None, dataset_id=None,
                                 evaluators=[(PRESETS[0].id, 1.0)], created_by_id=None)
        run = runs.create_run(session, task_id=task.id, evaluators=[], samples=3, created_by_id=None, slice_size=8)
        odd = "tab\there\nline \\N \\. back\\slash 中文 \r"
        rows = [{"run_id": run.id, "sample_id": f"s\t{i}", "sample_index": i, "evaluator_id": PRESETS[0].id,
                 "evaluator_name": odd, "status": "passed", "passed": True, "score": None if i else 0.5,
                 "reason": None if i == 1 else odd, "reason_code": None if i else "run.odd",
                 "reason_args": None if i else {"what": odd}, "details": details, "error_code": None,
                 "latency_ms": 0.25}
                for i, details in enumerate([{}, {"n": 2**70, "k": [odd, {"x": None}]}, {1: "int key"}])]
        assert runs.add_results(session, rows) == 3
        assert runs.add_results(session, rows) == 0  # present: skipped, and not counted
        stored = list(runs.iter_results(session, runs.results_query(run.id)))
    assert [(r.reason_code, r.reason_args) for r in stored] == [("run.odd", {"what": odd}), (None, None), (None, None)]
    assert [(r.sample_id, r.evaluator_name, r.reason, r.score, r.details, r.latency_ms) for r in stored] == [
        ("s\t0", odd, odd, 0.5, {}, 0.25), ("s\t1", odd, None, None, {"n": 2**70, "k": [odd, {"x": None}]}, 0.25),
        ("s\t2", odd, odd, None, {"1": "int key"}, 0.25)]


def test_tokens_are_hashed_and_revocable(database):
    from assay.store.users import create_token, create_user, list_tokens, revoke_token, user_for_token

    with database.session() as session:
        create_user(session, "carol")
        with pytest.raises(AssayError, match="exists already"):
            create_user(session, "carol")
        with pytest.raises(AssayError, match="no user"):
            create_token(session, "dave")
        token = create_token(session, "carol", "laptop")
        assert token.secret.startswith("assay_") and len(token.secret) > 40
        stored = session.execute(text("SELECT token_hash, prefix FROM api_tokens")).one()
        assert token.secret not in stored[0] and stored[1] == token.secret[:12]
        assert user_for_token(session, token.secret).name == "carol"
        revoke_token(session, token.id)
        assert user_for_token(session, token.secret) is None
        assert [t.revoked_at is not None for t, _ in list_tokens(session, "carol")] == [True]


@pytest.mark.parametrize("url, expected", [
    ("postgres://u:p@h/db", "postgresql+psycopg://u:p@h/db"),
    ("postgresql://u@h:5433/db", "postgresql+psycopg://u@h:5433/db"),
    ("sqlite:///./assay.db", "sqlite:///./assay.db"),
])
def test_database_urls_get_the_driver_assay_uses(url, expected):
    assert normalise_url(url) == expected


@pytest.mark.parametrize("url", ["mysql://h/db", "not a url"])
def test_unsupported_database_urls_are_refused(url):
    with pytest.raises(AssayError):
        normalise_url(url)


@pytest.mark.parametrize("evaluator_type, config", [
    ("preset", {"presetType": "regex", "params": {"pattern": "\\d+", "flags": "i"}}),
    ("preset", {"presetType": "exact_match", "params": {}}),
    ("code", {"language": "nodejs", "code": "module.exports = () => ({passed: true})", "timeout": 5000}),
    ("llm", {"rubric": "polite?", "scale": "binary"}),
    ("composite", {"graders": [{"type": "contains"}], "rule": "any"}),
])
def test_stored_configs_translate_to_specs_and_back(evaluator_type, config):
    spec = to_spec(evaluator_type, config, "n", 2.0)
    assert spec["name"] == "n" and spec["weight"] == 2.0
    assert from_spec(spec) == (evaluator_type, config)


def test_translation_fills_the_code_default_and_names_fields():
    assert to_spec("code", {"language": "python", "code": "x"}, "n")["config"]["timeout"] == 5000
    context = SpecContext(untrusted=True)
    compiled = compile_row("preset", {"presetType": "similarity", "params": {"threshold": 0.5}}, "sim",
                           context=context, allowed=api_types())
    assert compiled.type == "similarity" and compiled.config.threshold == 0.5
    with pytest.raises(SpecError, match=r"config\.params\.threshold"):
        compile_row("preset", {"presetType": "similarity", "params": {"threshold": 3}}, "s", context=context)
    with pytest.raises(SpecError, match=r"config\.graders\[0\]\.config\.graders\[0\]\.type"):
        compile_row("composite", {"graders": [{"type": "composite", "config": {"graders": [{"type": "script"}]}}]},
                    "c", context=context, allowed=api_types())


def test_the_results_copy_names_every_column_of_a_result():
    """PostgreSQL's COPY path lists its columns: a column added to results must be added there."""
    from assay.store import runs
    from assay.store.models import EvaluationResult

    assert set(runs._COPIED) == {c.name for c in EvaluationResult.__table__.columns} - {"id", "created_at"}
