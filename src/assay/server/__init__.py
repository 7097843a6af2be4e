"""The evaluator service: a FastAPI app over the grading engine and the store (``assay serve``).

Layers: routes translate HTTP to calls of ``assay.service`` (the engine: ``grading``, the run
queue's ``worker``, dataset ingest) and ``assay.store`` (rows); none holds grading logic.
``create_app`` is the one place the parts are built.
"""

from assay.server.app import API_PREFIX, create_app

__all__ = ["API_PREFIX", "create_app"]
