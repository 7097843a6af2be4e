"""One module per suite dialect, each read the way its peer reads it (names, defaults, score
rules, what an unknown key means) and mapped onto assay's graders in that one module.

A dialect module has ``NAME`` (its ``--dialect`` value), ``detect(data) -> bool`` (is this
top-level mapping mine?), ``load(doc, *, results, context) -> Suite`` and typed file models
(``FileModel`` subclasses, see ``runner/suites/filemodel.py``). To add one, write the module
beside these and register it in ``DIALECTS`` in ``runner/suites/loader.py``.
"""
