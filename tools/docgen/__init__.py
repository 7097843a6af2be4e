"""The generated reference of the docs site (docs/reference/ and docs/zh/reference/).

Each page is rendered from the one place its facts are declared: the Typer app (commands and
options), the FastAPI app's OpenAPI document (routes), ``assay.settings`` (settings), the grader
registry and config models (graders), and the pages' catalogues (error codes and phrases).
Nothing under docs/reference/ is written by hand: ``python -m tools.docgen --write`` rewrites
it, and ``tests/docs/test_reference_pages.py`` fails when a committed page differs from a fresh
rendering.
"""
