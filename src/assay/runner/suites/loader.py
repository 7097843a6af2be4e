"""The one way a suite file is read: find it, take its dialect (given, or detected from the
file), let that dialect's module build the ``Suite``, and check the suite can run.

A dialect is one module in ``runner/suites/dialects/`` with ``NAME``, ``detect(data)`` and
``load(doc, results=..., context=...)``, listed in ``dialects.MODULES``; only the module of the
suite's own dialect is imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.suites.dialects import DETECT, MODULES
from assay.runner.suites.suite import DialectOptions, Suite
from assay.runner.yamlsrc import YamlDoc

SUITE_FILES = ("eval.yaml", "eval.yml")
"""The suite file looked for when a directory is given."""


class Dialect(Protocol):
    """What a dialect module offers the dispatcher."""

    NAME: str

    def detect(self, data: Mapping[str, Any]) -> bool:
        """Whether a suite file's top-level mapping is written in this dialect."""
        ...

    def load(self, doc: YamlDoc, *, results: Path | None, context: SpecContext,
             options: DialectOptions | None = None) -> Suite:
        """The suite in ``doc``. ``results`` (``--results``) names the outputs to grade;
        ``context`` has the suite's folder as ``base_dir``; ``options`` what the caller asks of
        the dialect. Raises SpecError naming file, line and field path."""
        ...


DIALECTS: tuple[str, ...] = tuple(MODULES)
"""Every dialect's name, in detection order. assay's own format reads any mapping no peer
claims, so it comes last."""


def dialect_module(name: str) -> Dialect:
    """The module that reads dialect ``name`` (imported on first use)."""
    return importlib.import_module(MODULES[name])


def detect_dialect(data: Mapping[str, Any]) -> str:
    """The name of the dialect a suite file's top-level mapping is written in."""
    return next(name for name in DIALECTS if DETECT[name](data))


def load_suite(path: Path, *, results: Path | None = None, dialect: str | None = None,
               context: SpecContext | None = None, waza_version: str | None = None,
               explain: bool = False) -> Suite:
    """Load a suite file (or the ``eval.yaml`` in a directory) in ``dialect``, detected from
    the file when None. Raises SpecError naming file, line and field.

    Graders are validated under ``context`` (see core.context) with the suite file's folder
    as ``base_dir``, so relative paths in configs mean the same in every dialect.
    ``waza_version`` is the waza release a waza suite is read as (see ``dialects/_waza_releases``);
    ``explain`` asks the dialect to say in ``Suite.explain`` what other readings were possible.
    """
    path = suite_file(Path(path))
    if dialect is not None and dialect not in MODULES:
        raise SpecError(f"unknown dialect {dialect!r}; use one of: {', '.join(sorted(DIALECTS))}")
    doc = YamlDoc(path, first_only=True)
    if not isinstance(doc.data, Mapping):
        raise SpecError("a suite file must be a mapping with name, graders and dataset", where=str(path))
    name = dialect or detect_dialect(doc.data)
    if doc.more_at is not None and name != "waza":  # waza reads a file's first document (_waza_semantics)
        raise doc.more_error()
    reader = dialect_module(name)
    context = (context or SpecContext()).at(doc.path.parent.resolve())
    try:
        suite = reader.load(doc, results=results, context=context, options=DialectOptions(waza_version, explain))
    except SpecError as exc:
        if exc.where or not exc.focus:
            raise
        raise doc.locate(exc) from None  # a field of this file, without a place: give it its line
    suite.inputs += [p for p in (path, results) if p is not None and p not in suite.inputs]
    how = "given with --dialect" if dialect else "detected: " + (DETECT[name].__doc__ or "").replace("``", "`")
    suite.explain.insert(0, f"dialect: {name} ({' '.join(how.split())})")
    check_runnable(suite)
    return suite


def suite_file(path: Path) -> Path:
    """``path``, or the ``eval.yaml`` in it when it is a directory; SpecError when there is none."""
    if not path.is_dir():
        return path
    found = next((path / name for name in SUITE_FILES if (path / name).is_file()), None)
    if found is None:
        raise SpecError(f"no eval.yaml in directory {path}")
    return found


def check_runnable(suite: Suite) -> None:
    """Refuse a suite that would grade nothing or decide nothing: no samples, or a sample
    whose graders all weigh zero under a threshold (its weighted score is undefined)."""
    where = str(suite.source) if suite.source else suite.name
    if not suite.samples:
        raise SpecError("no samples to grade (the dataset is empty)", where=where)
    if suite.threshold is None:
        return
    for sample in suite.samples:
        specs = suite.graders_for(sample.id)
        if specs and not any(spec.weight > 0 for spec in specs):
            raise SpecError(f"every grader of sample {sample.id!r} has weight 0, so its weighted score "
                            f"cannot be compared with the threshold {suite.threshold}; give a grader a weight > 0",
                            where=where)
