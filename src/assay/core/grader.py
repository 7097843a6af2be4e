"""The grader contract: a typed config model plus ``grade``. docs/concepts/custom-graders.md is the guide."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Generic, Literal, Self, TypeAlias, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, ValidationInfo, model_validator

from assay.core.context import SpecContext, spec_context
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.messages import Phrase
from assay.core.result import ErrorCode, GraderResult, Kind, Status, make_result
from assay.core.sample import Sample
from assay.core.untrusted import MAX_REASON, cap_text


class GraderConfig(BaseModel):
    """Base of every grader's config: frozen, and unknown keys are rejected.

    Validate everything here, when the spec arrives, never in ``grade``. What grading needs
    built from the fields (compiled patterns, a schema validator) is *prepared state*: build it
    once in a ``model_validator(mode="after")``, which turns a build error into a config error
    naming the field; keep it in a ``PrivateAttr``; and let graders read it through a read-only
    property with a docstring (``RegexConfig.checks``, ``JsonSchemaConfig.validator``,
    ``ToolCallsConfig.matchers``). Every grader built from one spec then shares it.

    ``base_dir`` is such a property too: it comes from the validation context
    (``SpecContext``), so a relative path in a config means the same in every suite format,
    and users cannot set it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    _base_dir: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _remember_base_dir(self, info: ValidationInfo) -> Self:
        base = spec_context(info.context).base_dir
        self._base_dir = None if base is None else str(base)
        return self

    @property
    def base_dir(self) -> str | None:
        """The folder relative paths in this config resolve against (the suite file's), or
        None for the current directory."""
        return self._base_dir

    def dump(self) -> dict[str, Any]:
        """The config as JSON, every field with its default filled in, under the names a spec
        spells (``schema``, not ``schema_``): what a row stores, so that validating it again
        gives this config, whatever the defaults are by then."""
        return self.model_dump(mode="json", by_alias=True)


class Taxonomy(BaseModel):
    """Vally's grader taxonomy, used for cost-ordered grading and the UI."""

    model_config = ConfigDict(frozen=True)

    determinism: Literal["static", "dynamic", "stochastic", "complex-static", "slm", "llm"] = "static"
    cost: Literal["free", "low", "medium", "high"] = "free"
    reference: Literal["reference-free", "reference-based"] = "reference-based"
    temporal_scope: Literal["output-level", "trajectory-level", "point-in-time", "cross-trajectory"] = "output-level"
    portability: Literal["t1-universal", "t2-domain", "t3a-scenario", "t3b-system"] | None = None


@dataclass(frozen=True, slots=True)
class Traits:
    """What the engine's consumers need to know about a grader, declared once on its class.

    The runner sizes chunks by ``io_bound`` and ``batches_io``; the service accepts only
    ``api_safe`` graders over the API (``runs_programs`` ones when the operator allows them)
    and grades ``inline`` ones on its event loop; reviews look for ``reviewable`` results;
    the Ray engine starts a judge actor when a grader is a ``judge``; the columnar path runs
    ``kernel`` (a ``module:function`` path, imported only when a table is graded); the pages
    draw a config ``form``. Cost is the ``taxonomy``'s. A grader whose facts depend on its
    config (a composite, a regex that needs backtracking) answers per config through
    ``Grader.traits_for``; consumers read ``CompiledSpec.traits`` or ``grader.traits``.
    """

    io_bound: bool = False
    """Grading waits on I/O (sandbox, program, LLM): the runner grades concurrently."""
    batches_io: bool = False
    """``grade_batch`` itself spreads a batch over the I/O it waits on (the sandbox's batched
    path): the runner hands it whole batches, not a sample per thread."""
    judge: bool = False
    """It asks an LLM judge (a judge client, the judge cache)."""
    runs_programs: bool = False
    """It runs programs of the host (scripts, commands), not sandboxed evaluator code."""
    reads_workspace: bool = False
    """It reads files of the sample's workspace (an agent run's folder)."""
    api_safe: bool = False
    """A service caller may use it: it needs nothing of the server's own files or programs."""
    inline: bool = False
    """Cheap and bounded by the sample's size: fine to grade on the service's event loop."""
    reviewable: bool = False
    """Its results wait for a person's review (``pending``), which later decides them."""
    form: bool = False
    """The pages offer a config form for it (its config model's JSON Schema)."""
    kernel: str | None = None
    """The columnar kernel, ``"package.module:function"``, or None (the object path)."""


ConfigT = TypeVar("ConfigT", bound=GraderConfig)
ConfigModel: TypeAlias = type[GraderConfig]  # named out here: inside Grader, `type` is the registry key


class Grader(ABC, Generic[ConfigT]):
    """A grader type: its config model is the type parameter; it implements ``grade``.

    Example (docs/concepts/custom-graders.md walks through it)::

        class HasWordConfig(GraderConfig):
            word: str = Field(min_length=1, description="The word the output must contain.")

        @register
        class HasWord(Grader[HasWordConfig]):
            type = "has_word"
            description = "The output contains a given word."

            def grade(self, sample: Sample) -> GraderResult:
                found = self.config.word in as_text(sample.output)  # self.config is a HasWordConfig
                return self.scored_result(found, reason=None if found else f"no {self.config.word!r}")

    ``Config`` (the config model class) is derived from the type parameter; a subclass of a
    concrete grader inherits it. Report through the builders: ``scored_result`` (passed or
    failed), ``error_result`` (could not grade) and ``pending_result`` (awaiting a person);
    they fill in name, type, kind and weight. ``grade`` may raise: the runner turns an
    exception into a ``runtime_error`` result. ``grade_batch`` grades many samples under one
    config; override it where a vectorised path exists (or derive from ``BatchGrader``).
    """

    type: ClassVar[str]
    """The registry key, used as ``type`` in specs; also the module's name."""
    description: ClassVar[str]
    """One line for ``assay graders`` and the evaluator list."""
    Config: ClassVar[ConfigModel]
    """The config model: set from the type parameter, ``Grader[RegexConfig]``."""
    # kind, taxonomy and traits are declared on the class; an instance holds its config's
    # (``traits_for`` and friends), which differ from the class's only for composites and the like.
    kind: Kind = "code"
    taxonomy: Taxonomy = Taxonomy()
    """Vally's taxonomy; its ``cost`` orders grading."""
    traits: Traits = Traits()
    """What consumers need to know (see ``Traits``)."""

    config: ConfigT
    """This grader's validated config (prepared state included)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Config" in cls.__dict__:
            raise TypeError(f"{cls.__qualname__}: name the config model as the type parameter, "
                            f"class {cls.__name__}(Grader[{getattr(cls.Config, '__name__', 'MyConfig')}]), "
                            "rather than setting Config")
        config = _config_parameter(cls)
        if config is not None:
            cls.Config = config
        if "traits" not in cls.__dict__ and cls.traits.kernel is not None:
            # A kernel reproduces one class's grading: a subclass that may grade otherwise
            # does not inherit it (it declares its own traits to keep one).
            cls.traits = replace(cls.traits, kernel=None)

    def __init__(self, config: ConfigT, *, name: str | None = None, weight: float = 1.0,
                 resources: Resources | None = None) -> None:
        self.config = config
        self.name = name or self.type
        self.weight = weight
        self.resources = resources or Resources()
        cls = type(self)
        self.kind, self.taxonomy, self.traits = cls.kind_for(config), cls.taxonomy_for(config), cls.traits_for(config)

    @classmethod
    def traits_for(cls, config: GraderConfig) -> Traits:
        """This type's traits under ``config``: the class's, unless the config changes them."""
        return cls.traits

    @classmethod
    def kind_for(cls, config: GraderConfig) -> Kind:
        """This type's kind under ``config``: the class's, unless the config changes it."""
        return cls.kind

    @classmethod
    def taxonomy_for(cls, config: GraderConfig) -> Taxonomy:
        """This type's taxonomy under ``config``: the class's, unless the config changes it."""
        return cls.taxonomy

    @classmethod
    def parse_config(cls, raw: Any, *, path: str = "config", context: SpecContext | None = None) -> GraderConfig:
        """Validate a raw config under ``context`` (see core.context); raises SpecError naming
        the bad field."""
        if raw is None:
            raw = {}
        try:
            return cls.Config.model_validate(raw, context=context or SpecContext())
        except ValidationError as exc:
            raise SpecError.from_validation(exc, path=path) from None
        except (ValueError, TypeError) as exc:
            raise SpecError(str(exc), path=path) from None

    @abstractmethod
    def grade(self, sample: Sample) -> GraderResult:
        """Grade one sample: a result from one of the builders below."""

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        """Grade many samples, one result per sample in order."""
        return [self.grade(s) for s in samples]

    # Result builders: every grader reports through these, so name/type/kind/weight agree.
    # A reason longer than MAX_REASON characters is cut, its full length kept in details.

    def scored_result(self, passed: bool, score: float | None = None, reason: str | None = None,
                      details: dict[str, Any] | None = None) -> GraderResult:
        """A graded result, ``passed`` or ``failed``, that counts in score averages.

        ``score`` defaults to 1 or 0 and must be in [0, 1]; ``reason`` says why (usually
        only for a failure); ``details`` holds machine-readable particulars."""
        if score is None:
            score = 1.0 if passed else 0.0
        if reason is not None and len(reason) > MAX_REASON:
            reason, details = _capped(reason, details)
        return make_result(self.name, self.type, self.kind, _PASSED if passed else _FAILED, passed,
                           float(score), reason, {} if details is None else details, None, self.weight)

    def error_result(self, code: ErrorCode, reason: str, details: dict[str, Any] | None = None) -> GraderResult:
        """The grader could not grade this sample (``ErrorCode`` says which code fits): never
        counted as a failure, and left out of score averages."""
        if len(reason) > MAX_REASON:
            reason, details = _capped(reason, details)
        return make_result(self.name, self.type, self.kind, Status.ERROR, False, None, reason,
                           {} if details is None else details, ErrorCode(code), self.weight)

    def pending_result(self, reason: str, details: dict[str, Any] | None = None) -> GraderResult:
        """Awaiting a decision (a human review), which later turns it into passed or failed."""
        if len(reason) > MAX_REASON:
            reason, details = _capped(reason, details)
        return make_result(self.name, self.type, self.kind, Status.PENDING, False, None, reason,
                           {} if details is None else details, None, self.weight)


    def raised_result(self, exc: Exception, traceback: str) -> GraderResult:
        """This grader raised ``exc`` on a sample: its ``runtime_error`` result (for the runner,
        and a composite running its children, which turn exceptions into values)."""
        return self.error_result(ErrorCode.RUNTIME_ERROR, RAISED(name=repr(self.name), error=f"{type(exc).__name__}: "
                                                                                             f"{exc}"),
                                 {"traceback": traceback})


RAISED = Phrase("grader.raised", "grader {name} raised {error}")
_PASSED, _FAILED = Status.PASSED, Status.FAILED


def _capped(reason: str, details: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """A reason cut to ``MAX_REASON`` characters; its full length goes into ``details``."""
    return cap_text(reason, MAX_REASON), {**(details or {}), "reason_length": len(reason)}


def _config_parameter(cls: type) -> ConfigModel | None:
    """The config model named as the type parameter in ``cls``'s own bases (``Grader[X]``,
    ``BatchGrader[X]``), or None when there is none (a generic base, or a plain subclass)."""
    for base in cls.__dict__.get("__orig_bases__", ()):
        origin = get_origin(base)
        if not (isinstance(origin, type) and issubclass(origin, Grader)):
            continue
        for arg in get_args(base):
            if isinstance(arg, TypeVar):
                continue
            if isinstance(arg, type) and issubclass(arg, GraderConfig):
                return arg
            raise TypeError(f"{cls.__qualname__}: the type parameter of {origin.__name__} must be a "
                            f"GraderConfig subclass, not {arg!r}")
    return None


class BatchGrader(Grader[ConfigT]):
    """A grader whose natural unit is a batch (one compiled pattern or schema, a vectorised
    library call): ``grade`` grades a batch of one, and the runner times the batch as a whole."""

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_batch([sample])[0]

    @abstractmethod
    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]: ...
