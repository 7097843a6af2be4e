"""Every documented example is a test (issue 31, item 5): the Python and shell blocks of
README.md and docs/*.md, parsed by Sybil, run in order, one test per block.

Python blocks of a file share one namespace; a block written as a doctest (``>>>``) has its
shown output checked by doctest. Shell blocks: see ``doc_shell``. A block that cannot run here
carries ``<!-- skip: next "why" -->`` in the Markdown, and shows up as a skipped test with why.
"""

from __future__ import annotations

import doctest
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_shell import REPO, ShellParser, ShellSession
from sybil import Document, Example
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

# docs/zh/ holds the Chinese twins, whose code blocks are the English pages' byte for byte
# (tests/docs/test_docs_site.py), and docs/reference/ is generated: neither is run twice here
_NOT_RUN = {"zh", "reference"}
DOCUMENTS = [REPO / "README.md", *sorted(path for path in (REPO / "docs").rglob("*.md")
                                         if _NOT_RUN.isdisjoint(path.relative_to(REPO / "docs").parts))]
PARSERS = [PythonCodeBlockParser(doctest_optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS),
           ShellParser(), SkipParser()]


def _parse(path: Path) -> Document:
    return Document.parse(str(path), *PARSERS)


def _is_directive(example: Example) -> bool:
    return isinstance(example.parsed, tuple)  # SkipParser's (action, reason)


def _cases() -> Iterator[object]:
    for path in DOCUMENTS:
        for index, example in enumerate(_parse(path).examples()):
            if not _is_directive(example):
                yield pytest.param(path, index, id=f"{path.relative_to(REPO)}:{example.line}")


class _Run:
    """A document being run: its examples in order, how far they have been evaluated."""

    def __init__(self, path: Path) -> None:
        self.document = _parse(path)
        self.examples = list(self.document.examples())
        self.shell = ShellSession()
        self.document.namespace["shell"] = self.shell
        self.next = 0

    def evaluate(self, index: int) -> None:
        # earlier examples first (a skipped test or -k must not break the order they rely on)
        while self.next < index:
            example = self.examples[self.next]
            self.next += 1
            try:
                example.evaluate()
            except BaseException:  # noqa: BLE001  reported by that example's own test
                pass
        self.next = index + 1
        self.examples[index].evaluate()


_runs: dict[Path, _Run] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_sessions() -> Iterator[None]:
    # docs/concepts/custom-graders.md registers a grader of its own (word_count): it must not
    # outlive these tests, or the catalogue and registry tests of the rest of the run would meet
    # it. Built-ins first loaded meanwhile stay: their modules are imported, and would not
    # register again.
    from assay.core import registry
    from assay.core.builtins import BUILTIN

    registered = dict(registry._registry)
    yield
    for run in _runs.values():
        run.shell.close()
    _runs.clear()
    for key in set(registry._registry) - set(registered) - set(BUILTIN):
        del registry._registry[key]
    registry._registry.update(registered)


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("path", "index"), list(_cases()))
def test_documented_example(path: Path, index: int) -> None:
    run = _runs.get(path) or _runs.setdefault(path, _Run(path))
    try:
        run.evaluate(index)
    except Exception as exc:
        if type(exc).__name__ == "SkipTest":
            pytest.skip(str(exc))
        raise


def test_every_file_the_docs_name_exists() -> None:
    """A sentence such as "tests/ray checks it" must point at something that could fail."""
    # docs/formats.md cites the peers' own docs/ (waza's), so docs/ paths are not ours to check
    named = re.compile(r"(?<![\w/])((?:tests|bench|examples|src/assay)/[\w./<>{},-]*[\w>}])")
    short = re.compile(r"`((?:server|service|core|runner|store|sandbox|judges|graders|cli)/[\w./-]+\.py)`")
    missing = []
    for path in DOCUMENTS:
        text = path.read_text()
        for found in named.findall(text):
            if "<" in found or "{" in found:  # a pattern such as tests/graders/test_<type>.py
                continue
            if not (REPO / found).exists():
                missing.append(f"{path.name}: {found}")
        for found in short.findall(text):
            if not (REPO / "src/assay" / found).exists():
                missing.append(f"{path.name}: src/assay/{found}")
    assert not missing
