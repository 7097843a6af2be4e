"""Frozen migrations: they hold schema only (never today's lists), the presets are seeded at
start-up, idempotently, and a database made by an old release, once upgraded, is the same as a
fresh one: same schema, same revision, same preset rows, its own rows kept."""

from __future__ import annotations

import ast
import json
import sqlite3
from pathlib import Path

from sqlalchemy import inspect, text

from assay.store import Database, current_revision, head_revision, upgrade
from assay.store.migrate import MIGRATIONS
from assay.store.presets import PRESETS, seed_presets

OLD_0001 = Path(__file__).parent / "data" / "db_0001.sql"
ALLOWED_IMPORTS = {"__future__", "alembic", "sqlalchemy", "datetime", "uuid", "json", "typing"}


def _schema(db: Database) -> dict:
    found = inspect(db.engine)
    return {table: ({c["name"]: (str(c["type"]), c["nullable"]) for c in found.get_columns(table)},
                    sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in found.get_indexes(table)),
                    sorted(str(sorted(u["column_names"])) for u in found.get_unique_constraints(table)))
            for table in sorted(found.get_table_names())}


def _presets(db: Database) -> list[tuple]:
    with db.engine.connect() as connection:
        rows = connection.execute(text("SELECT id, name, description, type, config, is_preset FROM evaluators "
                                        "WHERE is_preset ORDER BY id")).all()
    return [tuple(r) for r in rows]


def test_an_old_database_upgraded_equals_a_fresh_one(tmp_path):
    old_file = tmp_path / "old.db"
    with sqlite3.connect(old_file) as connection:
        connection.executescript(OLD_0001.read_text(encoding="utf-8"))
    old, fresh = Database(f"sqlite:///{old_file}"), Database(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        before = _presets(old)
        assert len(before) == len(PRESETS) - 1, "the fixture is a release without one of today's presets"
        upgrade(old)
        upgrade(fresh)
        assert current_revision(old) == current_revision(fresh) == head_revision()
        assert _schema(old) == _schema(fresh)
        assert _presets(old) == _presets(fresh) and len(_presets(fresh)) == len(PRESETS)
        regex = next(p for p in PRESETS if p.preset_type == "regex")
        assert json.loads(next(r for r in _presets(old) if r[0] == regex.id)[4]) == regex.config  # up to date
        with old.engine.connect() as connection:  # the old release's own rows are kept
            assert connection.execute(text("SELECT name FROM users")).scalars().all() == ["alice"]
    finally:
        old.dispose()
        fresh.dispose()


def test_seeding_is_idempotent_and_leaves_other_rows_alone(db_url):
    db = Database(db_url)
    try:
        upgrade(db)
        with db.engine.begin() as connection:
            connection.execute(text("INSERT INTO evaluators (id, name, description, type, config, is_preset, "
                                    "created_at, updated_at) VALUES ('00000000-0000-4000-8000-000000000001', "
                                    "'mine', NULL, 'preset', '{\"presetType\": \"contains\", \"params\": {}}', "
                                    "false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
            assert seed_presets(connection) == 0
        upgrade(db)
        with db.engine.connect() as connection:
            names = connection.execute(text("SELECT name FROM evaluators")).scalars().all()
        assert sorted(names) == sorted([p.name for p in PRESETS] + ["mine"])
    finally:
        db.dispose()


def test_migrations_read_no_live_data():
    """A migration that imports assay's own modules would read today's lists (presets, enums)
    instead of the data of its revision: an upgraded database and a fresh one would differ."""
    for path in sorted((MIGRATIONS / "versions").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.split(".")[0] in ALLOWED_IMPORTS, \
                    f"{path.name} imports {name}: migrations hold schema and literal data only"


def test_the_task_pin_is_undone_without_touching_the_tasks_runs(db_url):
    """Revision 0006 down and up again: the column goes and comes back, and the runs of a task
    stay (a copy of ``tasks`` would have cascaded into them on SQLite)."""
    from alembic import command

    from assay.store.migrate import _config

    db = Database(db_url)
    try:
        upgrade(db)
        with db.engine.begin() as connection:
            connection.execute(text("INSERT INTO tasks (id, name, pinned_version, created_at, updated_at) VALUES "
                                    "('t1', 't', 2, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
            connection.execute(text("INSERT INTO runs (id, task_id, status, evaluators, total, done, created_at) "
                                    "VALUES ('r1', 't1', 'completed', '[]', 0, 0, CURRENT_TIMESTAMP)"))
        with db.engine.begin() as connection:
            config = _config(db)
            config.attributes["connection"] = connection
            command.downgrade(config, "0005")
        assert current_revision(db) == "0005"
        assert "pinned_version" not in {c["name"] for c in inspect(db.engine).get_columns("tasks")}
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id FROM runs")).scalars().all() == ["r1"]
        upgrade(db)
        assert current_revision(db) == head_revision()
    finally:
        db.dispose()


def test_the_rows_tables_are_undone_and_redone_with_their_rows(db_url):
    """Revision 0007 down and up again: on PostgreSQL a version's rows move from their own table
    back into ``dataset_rows`` and out again, keyed; deleting a version then drops its table.
    SQLite's rows stay where they are."""
    from alembic import command

    from assay.store import datasets, row_tables
    from assay.store.migrate import _config

    db = Database(db_url)
    try:
        upgrade(db)
        with db.session() as session:
            dataset = datasets.create_dataset(session, name="d", description=None, created_by_id=None)
            version_id = datasets.begin_version(session, dataset.id, source_name=None, format="jsonl",
                                                created_by_id=None).id
            datasets.add_rows(session, version_id, [(i, f"s{i}", f'{{"id": "s{i}", "n": {i}}}') for i in range(3)])
            datasets.finish_version(session, version_id, row_count=3, size_bytes=0, columns=["id", "n"])
        on_pg = db.engine.dialect.name == "postgresql"
        with db.engine.begin() as connection:
            config = _config(db)
            config.attributes["connection"] = connection
            command.downgrade(config, "0006")
        assert current_revision(db) == "0006"
        with db.engine.connect() as connection:
            flat = connection.execute(text("SELECT position, sample_id FROM dataset_rows ORDER BY position")).all()
            assert [tuple(r) for r in flat] == [(0, "s0"), (1, "s1"), (2, "s2")]
            if on_pg:
                assert connection.execute(text("SELECT to_regclass(:t)"),
                                          {"t": row_tables.table_name(version_id)}).scalar() is None
        upgrade(db)
        assert current_revision(db) == head_revision()
        with db.session() as session:
            assert [r["n"] for _, r in datasets.iter_rows(session, version_id)] == [0, 1, 2]
            assert datasets.find_row(session, version_id, "s1") == {"id": "s1", "n": 1}
            if on_pg:
                assert session.execute(text("SELECT count(*) FROM dataset_rows")).scalar() == 0
                keys = session.execute(text("SELECT count(*) FROM pg_indexes WHERE tablename = :t"),
                                       {"t": row_tables.table_name(version_id)}).scalar()
                assert keys == 2  # the primary key on position, the unique sample id
        with db.session() as session:
            datasets.discard_version(session, version_id)
        if on_pg:
            with db.engine.connect() as connection:
                assert connection.execute(text("SELECT to_regclass(:t)"),
                                          {"t": row_tables.table_name(version_id)}).scalar() is None
    finally:
        db.dispose()


PY_EVALUATE = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"
OLD_CONFIGS = {  # (type, config as the API stored it before revision 0008, as 0008 stores it)
    "e-sim": ("preset", {"presetType": "similarity", "params": {"threshold": "0.9"}},
              {"presetType": "similarity", "params": {"threshold": 0.9, "algorithm": "levenshtein",
                                                       "ignore_case": False, "normalize": "NFC",
                                                       "max_length": 100000}}),
    "e-sim-default": ("preset", {"presetType": "similarity", "params": {}},
                      {"presetType": "similarity", "params": {"threshold": 0.8, "algorithm": "levenshtein",
                                                               "ignore_case": False, "normalize": "NFC",
                                                               "max_length": 100000}}),
    "e-regex": ("preset", {"presetType": "regex", "params": {"pattern": "^a", "flags": "i", "timeout_ms": "50"}},
                {"presetType": "regex", "params": {"flags": "i", "timeout_ms": 50, "pattern": "^a", "must_match": [],
                                                   "must_not_match": []}}),
    "e-exact": ("preset", {"presetType": "exact_match", "params": {"trim": "true"}},
                {"presetType": "exact_match", "params": {"trim": True, "ignore_case": False}}),
    "e-code": ("code", {"language": "python", "code": PY_EVALUATE, "timeout": 2000},
               {"language": "python", "code": PY_EVALUATE, "timeout": 2000}),
    "e-llm": ("llm", {"rubric": "polite", "threshold": 1},
              {"model": None, "base_url": None, "api_key_env": None, "temperature": 0.0, "max_tokens": None,
               "seed": None, "timeout_s": 60.0, "on_injection": "flag", "rubric": "polite", "rubric_file": None,
               "scale": "1-5", "threshold": 1.0, "scoring": "parse"}),  # scoring: filled in by 0010
    "e-composite": ("composite", {"graders": [{"type": "contains"}, {"type": "similarity", "name": "s",
                                                                      "config": {"threshold": "0.5"}, "weight": 2}],
                                  "rule": "weighted"},
                    {"graders": [{"type": "contains", "name": "contains", "config": {"ignore_case": False},
                                  "weight": 1.0},
                                 {"type": "similarity", "name": "s", "config": {
                                     "threshold": 0.5, "algorithm": "levenshtein", "ignore_case": False,
                                     "normalize": "NFC", "max_length": 100000}, "weight": 2.0}],
                     "rule": "weighted", "threshold": 0.5}),
    "e-odd": ("preset", {"presetType": "similarity", "params": {"threshold": "high"}},  # never valid: kept
              {"presetType": "similarity", "params": {"threshold": "high"}}),
}


def test_configs_stored_before_0008_are_rewritten_as_validated(db_url):
    """A database at revision 0007 holding configs as requests spelled them (text numbers,
    defaults left out), in evaluator rows and in a run's snapshot, upgraded: every field is
    there with its default, each value of its type; what the copy cannot read is kept. The
    rewritten rows are what the API stores today, and they grade."""
    from alembic import command

    from assay.core.context import SpecContext
    from assay.store.migrate import _config
    from assay.store.translate import compile_row, stored_config

    db = Database(db_url)
    try:
        with db.engine.begin() as connection:
            config = _config(db)
            config.attributes["connection"] = connection
            command.upgrade(config, "0007")
            for evaluator_id, (kind, old, _) in OLD_CONFIGS.items():
                connection.execute(text("INSERT INTO evaluators (id, name, type, config, is_preset, created_at, "
                                        "updated_at) VALUES (:id, :id, :type, :config, false, CURRENT_TIMESTAMP, "
                                        "CURRENT_TIMESTAMP)"), {"id": evaluator_id, "type": kind,
                                                                "config": json.dumps(old)})
            connection.execute(text("INSERT INTO tasks (id, name, created_at, updated_at) VALUES "
                                    "('t1', 't', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
            snapshot = [{"evaluatorId": "e-sim", "name": "e-sim", "type": "preset",
                         "config": OLD_CONFIGS["e-sim"][1], "weight": 1.0}]
            connection.execute(text("INSERT INTO runs (id, task_id, status, evaluators, total, done, created_at) "
                                    "VALUES ('r1', 't1', 'completed', :snapshot, 0, 0, CURRENT_TIMESTAMP)"),
                               {"snapshot": json.dumps(snapshot)})
        assert current_revision(db) == "0007"
        upgrade(db)
        assert current_revision(db) == head_revision()
        with db.session() as session:
            from assay.store.models import Evaluator, Run

            stored = {e.id: e.config for e in session.query(Evaluator).filter(Evaluator.id.in_(OLD_CONFIGS))}
            run = session.get(Run, "r1")
            assert run is not None
            graded = run.snapshot
        assert stored == {evaluator_id: new for evaluator_id, (_, _, new) in OLD_CONFIGS.items()}
        assert [(e.evaluator_id, e.config) for e in graded] == [("e-sim", OLD_CONFIGS["e-sim"][2])]
        context = SpecContext(untrusted=True)
        for evaluator_id, (kind, _, new) in OLD_CONFIGS.items():
            if evaluator_id != "e-odd":  # as the API would store it now, and it compiles
                assert stored_config(compile_row(kind, new, evaluator_id, context=context)) == new, evaluator_id
    finally:
        db.dispose()


def test_0012_names_the_decision_mode_of_judge_configs_stored_before_it():
    import importlib.util

    import assay.store

    path = Path(assay.store.__file__).parent / "migrations" / "versions" / "0012_judge_scoring.py"
    spec = importlib.util.spec_from_file_location("migration_0012", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.stored("llm", {"rubric": "r"}) == {"rubric": "r", "scoring": "parse"}
    assert module.stored("llm", {"rubric": "r", "scoring": "logprobs"}) == {"rubric": "r", "scoring": "logprobs"}
    composite = {"rule": "all", "graders": [{"type": "llm_comparison", "config": {}},
                                            {"type": "contains", "config": {"ignore_case": False}}]}
    assert module.stored("composite", composite)["graders"] == [
        {"type": "llm_comparison", "config": {"scoring": "parse"}}, {"type": "contains", "config": {"ignore_case": False}}]
    assert module.stored("code", {"code": "x"}) == {"code": "x"} and module.stored("llm", "odd") == "odd"
