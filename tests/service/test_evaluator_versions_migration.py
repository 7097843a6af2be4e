"""Revision 0009 on SQLite and PostgreSQL: every evaluator that existed gets version 1 from its
row (name, description, type, config as stored, its creator as author, its last update as the
time), presets none; the rows keep their ids and the API lists the versions; downgrading drops
the versions and the column without touching the evaluators."""

from __future__ import annotations

import json

from sqlalchemy import inspect, text

from assay.store import Database, current_revision, head_revision, upgrade

CONFIG = {"language": "python", "code": "def evaluate(input, output, expected, metadata):\n    return True\n",
          "timeout": 5000}


def _to(db: Database, revision: str, direction: str = "upgrade") -> None:
    from alembic import command

    from assay.store.migrate import _config

    with db.engine.begin() as connection:
        config = _config(db)
        config.attributes["connection"] = connection
        getattr(command, direction)(config, revision)


def test_existing_evaluators_get_version_1_from_their_row(db_url):
    db = Database(db_url)
    try:
        _to(db, "0008")
        with db.engine.begin() as connection:
            connection.execute(text("INSERT INTO users (id, name, is_admin, created_at) VALUES "
                                    "('u1', 'alice', false, CURRENT_TIMESTAMP)"))
            for evaluator_id, preset, owner in (("e-code", False, "u1"), ("e-none", False, None),
                                                ("e-preset", True, None)):
                connection.execute(text(
                    "INSERT INTO evaluators (id, name, description, type, config, is_preset, created_by_id, "
                    "created_at, updated_at) VALUES (:id, :name, '说明', 'code', :config, :preset, :owner, "
                    "'2026-01-02 03:04:05', '2026-02-03 04:05:06')"),
                    {"id": evaluator_id, "name": f"名字 {evaluator_id}", "config": json.dumps(CONFIG),
                     "preset": preset, "owner": owner})
        upgrade(db)
        assert current_revision(db) == head_revision()
        with db.engine.connect() as connection:
            versions = connection.execute(text(
                "SELECT evaluator_id, number, name, description, type, config, author_id, created_at "
                "FROM evaluator_versions ORDER BY evaluator_id")).all()
            numbers = dict(connection.execute(text("SELECT id, version FROM evaluators WHERE id LIKE 'e-%'")).all())
        assert [(v[0], v[1], v[2], v[3], v[4], v[6]) for v in versions] == [
            ("e-code", 1, "名字 e-code", "说明", "code", "u1"), ("e-none", 1, "名字 e-none", "说明", "code", None)]
        assert all((json.loads(v[5]) if isinstance(v[5], str) else v[5]) == CONFIG for v in versions)
        assert all(str(v[7]).startswith("2026-02-03 04:05:06") for v in versions)
        assert numbers == {"e-code": 1, "e-none": 1, "e-preset": 1}

        from assay.store.evaluators import list_versions, update_evaluator
        from assay.store.models import Evaluator

        with db.session() as session:  # the next save is version 2, kept beside version 1
            evaluator = session.get(Evaluator, "e-code")
            assert evaluator is not None
            update_evaluator(session, evaluator, author_id="u1", name="新名字")
            session.commit()
            assert [(v.number, v.name) for v in list_versions(session, "e-code")] == [(2, "新名字"), (1, "名字 e-code")]

        _to(db, "0008", "downgrade")
        found = inspect(db.engine)
        assert "evaluator_versions" not in found.get_table_names()
        assert "version" not in {c["name"] for c in found.get_columns("evaluators")}
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM evaluators WHERE id LIKE 'e-%'")).scalar() == 3
        upgrade(db)
        assert current_revision(db) == head_revision()
    finally:
        db.dispose()
