"""Errors a person sees: each says what was wrong and where.

Every error assay raises on purpose derives from ``AssayError`` (``tests/core/test_errors.py``
walks the package and holds this true); the ones that also keep a built-in base keep it, so a
caller's ``except ValueError`` still catches them::

    AssayError
    ├── SpecError                    a spec, suite or dataset is invalid (field path, file, line)
    │   └── ReleaseRefusal           a waza suite targets a release assay does not read
    ├── TranscriptError, TooDeep, StrictJsonError, BadJson, PatternError, DuplicateSample
    │                                (also ValueError) input that cannot be read
    ├── WorkspaceError               (also OSError) a workspace file missing or escaping
    ├── ApiError                     an HTTP answer of the service: status, code, message
    ├── QueueFull                    the sandbox service's queue is full (503)
    ├── HttpError                    the sandbox service cannot be reached, or answered badly
    └── WorkerGone                   a Node.js sandbox worker died mid-request

Outside the tree, by design: the confinement errors (``ConfinementError``, ``LandlockError``,
``ZygoteGone``), raised in or about the Python sandbox's zygote, which imports nothing of
``core`` so that it stays small; and private control-flow exceptions (``_Name``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from assay.core.messages import Said, in_turn
from assay.core.problems import AT, field_problem


def format_loc(loc: Sequence[str | int]) -> str:
    """Render a pydantic location as a field path: ``graders[2].config.threshold``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class AssayError(Exception):
    """Base of every error assay raises on purpose."""


class SpecError(AssayError):
    """A grader spec, suite or dataset is invalid.

    ``where`` names the place (file and line, or sample id) and ``path`` the field path.
    """

    def __init__(self, message: str, *, path: str = "", where: str = "", focus: str = "") -> None:
        self.message = message
        self.path = path
        self.where = where
        self.focus = focus or path
        """The field path of the first problem, for finding its line in a source file."""
        super().__init__(self.__str__())

    def __str__(self) -> str:
        prefix = ""
        if self.where:
            prefix += f"{self.where}: "
        if self.path:
            prefix += f"{self.path}: "
        return prefix + self.message

    def phrased(self) -> str:
        """The error as the API and a run's results say it: its phrase kept when it has one
        (``str(self)`` would flatten it), placed at its field path."""
        if not isinstance(self.message, Said):
            return str(self)
        place = ": ".join(part for part in (self.where, self.path) if part)
        return AT(path=place, problem=self.message) if place else self.message

    def within(self, *, path: str = "", where: str = "") -> SpecError:
        """The same error, placed inside an outer field path or file."""
        joined = path
        if path and self.path:
            joined = path + ("" if self.path.startswith("[") else ".") + self.path
        elif self.path:
            joined = self.path
        return type(self)(self.message, path=joined, where=where or self.where)

    @classmethod
    def from_validation(cls, exc: ValidationError, *, path: str = "", where: str = "") -> SpecError:
        """Turn pydantic's errors into one message naming every bad field."""
        parts = []
        focus = ""
        for err in exc.errors(include_url=False):
            loc = format_loc(err["loc"])
            full = ".".join(p for p in (path, loc) if p)
            focus = focus or full
            parts.append(AT(path=full or "<root>", problem=field_problem(err)))
        return cls(in_turn(parts), where=where, focus=focus)
