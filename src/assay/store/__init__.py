"""The service's database: SQLAlchemy models, Alembic migrations shipped in the package, and
small repository functions per table. SQLite by default, PostgreSQL via psycopg 3.

``translate`` is the one place that maps a stored evaluator config to a grader spec.
"""

from assay.store.db import Database, normalise_url, redact
from assay.store.migrate import current_revision, head_revision, upgrade

__all__ = ["Database", "current_revision", "head_revision", "normalise_url", "redact", "upgrade"]
