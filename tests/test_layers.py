"""Rules over the source that the type checker and import-linter do not check (both run in
`make test`; their settings are in pyproject.toml):

- each class name is used by one class, so a name in a traceback, a log or a review means one thing;
- a module imports no private name (``_name``) from another top-level package of assay
  (import-linter's ``private_modules`` contract covers private *modules*; this covers the names
  inside public ones, e.g. ``from assay.graders.exact_match import _differ``);
- every ``type: ignore`` names its error code and says why on the same line.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


@cache
def _modules() -> dict[str, ast.Module]:
    """Every module of assay by dotted name (``assay.graders.regex``; a package by its own name)."""
    out = {}
    for path in sorted((SRC / "assay").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return out


def _top(module: str) -> str:
    """The top-level package of assay a module belongs to (``assay.graders.regex`` -> ``assay.graders``)."""
    return ".".join(module.split(".")[:2])


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def class_names(modules: dict[str, ast.Module]) -> dict[str, list[str]]:
    """Each class name and where it is defined (``module:line``)."""
    where = defaultdict(list)
    for module, tree in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{module}:{node.lineno}")
    return where


def private_name_imports(modules: dict[str, ast.Module]) -> list[str]:
    """``from assay.X.m import _name`` written outside ``assay.X``."""
    out = []
    for module, tree in modules.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("assay."):
                continue
            source = node.module or ""
            if _top(source) == _top(module) or _top(source) == "assay":
                continue
            for alias in node.names:
                if _private(alias.name):
                    out.append(f"{module}:{node.lineno} imports {alias.name} from {source}")
    return out


_IGNORE = re.compile(r"type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def unexplained_ignores(root: Path) -> list[str]:
    """``type: ignore`` comments without an error code or without a reason after it."""
    out = []
    for path in sorted(root.rglob("*.py")):
        with path.open("rb") as fh:
            for tok in tokenize.tokenize(fh.readline):
                if tok.type != tokenize.COMMENT:
                    continue
                found = _IGNORE.search(tok.string)
                if found is None:
                    continue
                reason = found["rest"].strip().lstrip("#").strip()
                if not found["codes"] or len(reason) < 10:
                    out.append(f"{path.relative_to(root.parent)}:{tok.start[0]}: {tok.string}")
    return out


def test_each_class_name_is_used_by_one_class():
    shared = {name: where for name, where in class_names(_modules()).items() if len(where) > 1}
    assert not shared, f"class names used more than once (rename one of each): {shared}"


def test_no_module_imports_another_packages_private_names():
    found = private_name_imports(_modules())
    assert not found, "private names imported across packages (expose a public name instead):\n" + "\n".join(found)


def test_every_type_ignore_names_its_code_and_says_why():
    found = unexplained_ignores(SRC / "assay")
    assert not found, "`type: ignore[code]  # why` on the same line:\n" + "\n".join(found)


# The checks above must be able to fail: each finds what it looks for in a small example.
@pytest.mark.parametrize("check, modules, expected", [
    (lambda m: {k: v for k, v in class_names(m).items() if len(v) > 1},
     {"assay.core.a": "class Twin: pass", "assay.runner.b": "class Twin: pass"},
     {"Twin": ["assay.core.a:1", "assay.runner.b:1"]}),
    (private_name_imports,
     {"assay.runner.x": "from assay.graders.exact_match import _differ, ok\nfrom assay.runner.y import _mine",
      "assay.graders.exact_match": "from assay.graders._text import _shown"},
     ["assay.runner.x:1 imports _differ from assay.graders.exact_match"]),
])
def test_the_checks_find_what_they_look_for(check, modules, expected):
    assert check({name: ast.parse(text) for name, text in modules.items()}) == expected


def test_the_ignore_check_finds_bare_and_unexplained_ignores(tmp_path):
    (tmp_path / "m.py").write_text("a = 1  # type: ignore\nb = 2  # type: ignore[misc]\n"
                                   "c = 3  # type: ignore[misc]  # the stubs lack this overload\n")
    found = unexplained_ignores(tmp_path)
    assert [line.split(": ", 1)[0] for line in found] == [f"{tmp_path.name}/m.py:1", f"{tmp_path.name}/m.py:2"]
