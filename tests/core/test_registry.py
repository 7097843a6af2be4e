"""The registry: built-ins by decorator, third-party graders by entry point, and a broken
plugin reported (a warning, a line in `assay graders`) rather than fatal or silently dropped."""

import json
import subprocess
import sys
import textwrap
import warnings

import pytest

import assay
from assay.core import registry
from assay.core.errors import SpecError
from assay.core.grader import Grader, GraderConfig
from assay.core.registry import ENTRY_POINT_GROUP, GraderPluginWarning
from assay.core.spec import compile_spec
from assay.graders.regex import Regex


class SaysConfig(GraderConfig):
    word: str


class Says(Grader[SaysConfig]):
    type = "test_plugin_says"
    description = "passes when the output says the word"

    def grade(self, sample):
        return self.scored_result(self.config.word in sample.output)


class FakeRegex(Says):
    type = "regex"


class FakeEntryPoint:
    """What ``importlib.metadata.entry_points`` yields, as far as the registry reads it."""

    def __init__(self, name, load):
        self.name, self.value, self._load = name, f"fake_plugin:{name}", load
        self.dist = type("Dist", (), {"name": "fake-plugin"})()

    def load(self):
        return self._load()


def missing_module():
    raise ModuleNotFoundError("No module named 'fake_plugin_dependency'")


@pytest.fixture
def install(monkeypatch):
    """Install fake entry points in a registry that forgets them after the test."""
    monkeypatch.setattr(registry, "_registry", dict(registry._registry))
    monkeypatch.setattr(registry, "_from_plugins", dict(registry._from_plugins))
    monkeypatch.setattr(registry, "_problems", [])
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    groups = []

    def entry_points_of(*found):
        def entry_points(group):
            groups.append(group)
            return list(found) if group == ENTRY_POINT_GROUP else []
        monkeypatch.setattr(registry, "entry_points", entry_points)
        return groups

    return entry_points_of


def test_a_third_party_grader_loads_from_the_entry_point_group(install):
    groups = install(FakeEntryPoint("says", lambda: Says))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraderPluginWarning)
        assert assay.grade({"type": "test_plugin_says", "config": {"word": "hi"}}, {"output": "oh hi"}).passed
    assert groups == ["assay.graders"]
    assert registry.plugin_problems() == []
    with pytest.raises(SpecError, match=r"config\.word: Field required"):
        compile_spec({"type": "test_plugin_says"})


@pytest.mark.parametrize("load, problem", [
    (missing_module, "could not be imported: ModuleNotFoundError: No module named 'fake_plugin_dependency'"),
    (lambda: json.dumps, "is not a Grader subclass (it is a function)"),
    (lambda: SaysConfig, f"is not a Grader subclass (it is the class {__name__}.SaysConfig)"),
    (lambda: FakeRegex, "its type 'regex' is already taken by assay.graders.regex.Regex"),
], ids=["import-fails", "function", "other-class", "built-in-name"])
def test_a_broken_plugin_is_reported_and_grading_goes_on(install, load, problem):
    install(FakeEntryPoint("bad", load), FakeEntryPoint("says", lambda: Says))
    # entry points are read when a type no built-in has is asked for (or every grader is listed)
    with pytest.warns(GraderPluginWarning, match="fake_plugin:bad"):
        assert registry.get("test_plugin_says") is Says  # the good plugin beside it still loads
    r = assay.grade({"type": "regex", "config": {"pattern": "hi"}}, {"output": "oh hi"})
    assert r.passed and registry.get("regex") is Regex
    [found] = registry.plugin_problems()
    assert (found.entry_point, found.distribution, found.problem) == ("bad = fake_plugin:bad", "fake-plugin", problem)
    assert str(found) == f"bad = fake_plugin:bad (package fake-plugin): {problem}"


def test_an_abstract_or_incomplete_grader_is_reported(install):
    class NoGrade(Grader[SaysConfig]):
        type = "test_no_grade"
        description = "forgot grade"

    class NoConfig(Grader):
        type = "test_no_config"
        description = "forgot its config"

        def grade(self, sample):
            raise AssertionError

    install(FakeEntryPoint("abstract", lambda: NoGrade), FakeEntryPoint("noconfig", lambda: NoConfig))
    with pytest.warns(GraderPluginWarning):
        problems = [p.problem for p in registry.plugin_problems()]
    assert problems == ["is abstract: it does not implement grade",
                        "names no config model (declare it as class NoConfig(Grader[NoConfigConfig]))"]
    assert registry.get("test_no_grade") is None


def test_two_plugins_with_one_type_keep_the_first(install):
    class Other(Says):
        pass

    install(FakeEntryPoint("first", lambda: Says), FakeEntryPoint("second", lambda: Other))
    with pytest.warns(GraderPluginWarning, match="already taken by the plugin first = fake_plugin:first"):
        assert registry.get("test_plugin_says") is Says


def test_a_decorated_grader_takes_its_type_back_from_a_plugin(install):
    install(FakeEntryPoint("says", lambda: Says))
    assert registry.get("test_plugin_says") is Says

    class Mine(Says):
        pass

    with pytest.warns(GraderPluginWarning, match=f"taken by {__name__}"):
        registry.register(Mine)
    assert registry.get("test_plugin_says") is Mine
    assert registry.plugin_problems()[0].problem == f"its type 'test_plugin_says' is taken by {__name__}.{Mine.__qualname__}"


def test_listing_the_entry_points_may_fail_too(install, monkeypatch):
    def broken(group):
        raise ValueError("bad metadata")

    install()
    monkeypatch.setattr(registry, "entry_points", broken)
    with pytest.warns(GraderPluginWarning, match="could not be listed: ValueError: bad metadata"):
        assert registry.get("no_such_type") is None
    assert registry.get("regex") is Regex


def test_register_refuses_what_is_not_a_grader_and_a_taken_type():
    with pytest.raises(TypeError, match="is not a Grader subclass"):
        registry.register(SaysConfig)
    with pytest.raises(ValueError, match="'regex' is already registered by assay.graders.regex.Regex"):
        registry.register(FakeRegex)


PLUGIN = '''
from pydantic import Field

from assay.core.grader import Grader, GraderConfig


class ShoutyConfig(GraderConfig):
    min_length: int = Field(default=1, description="Shortest output that counts.")


class Shouty(Grader[ShoutyConfig]):
    type = "shouty"
    description = "The output is in capitals."

    def grade(self, sample):
        text = str(sample.output)
        return self.scored_result(len(text) >= self.config.min_length and text.isupper())


class LoudRegex(Shouty):
    type = "regex"


def helper():
    pass
'''


def test_installed_plugins_end_to_end(tmp_path):
    """A real distribution on sys.path, as `pip install` leaves it."""
    (tmp_path / "fake_shouty.py").write_text(PLUGIN)
    info = tmp_path / "fake_shouty-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-shouty\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""\
        [assay.graders]
        shouty = fake_shouty:Shouty
        broken = fake_shouty_missing:Grader
        helper = fake_shouty:helper
        loud = fake_shouty:LoudRegex
    """))

    def run(*args):
        env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120)

    graded = run("-c", "import assay; print(assay.grade({'type': 'shouty'}, {'output': 'HI'}).status)")
    assert graded.returncode == 0 and graded.stdout.strip() == "passed", graded.stderr
    assert graded.stderr.count("GraderPluginWarning: assay: grader plugin left out: ") == 3, graded.stderr

    listing = run("-m", "assay.cli.main", "graders")
    assert listing.returncode == 0, listing.stderr
    assert "shouty" in listing.stdout and "GraderPluginWarning" not in listing.stderr
    problems = listing.stdout[listing.stdout.index("plugin problems: 3 third-party grader(s) left out"):]
    assert "broken = fake_shouty_missing:Grader (package fake-shouty): could not be imported: " \
           "ModuleNotFoundError" in problems
    assert "helper = fake_shouty:helper (package fake-shouty): is not a Grader subclass" in problems
    assert "loud = fake_shouty:LoudRegex (package fake-shouty): its type 'regex' is already taken by " \
           "assay.graders.regex.Regex" in problems

    as_json = run("-m", "assay.cli.main", "graders", "--json")
    assert "shouty" in {row["type"] for row in json.loads(as_json.stdout)}
    assert "plugin problems: 3" in as_json.stderr


def test_built_in_types_load_lazily_and_the_table_matches_the_modules():
    import importlib
    import subprocess
    import sys

    from assay.core.builtins import BUILTIN

    for type_, module in BUILTIN.items():
        assert importlib.import_module(module) and registry.get(type_).type == type_
    assert set(registry.all_graders()) >= set(BUILTIN)
    probe = ("import sys, assay; r = assay.grade({'type': 'contains'}, {'output': 'ab', 'expected': 'b'}); "
             "print(r.passed, sorted(m.split('.')[-1] for m in sys.modules if m.startswith('assay.graders.')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert out[0] == "True"
    loaded = eval(out[1])  # noqa: S307  the list printed just above
    assert "contains" in loaded and not {"code", "similarity", "llm", "program"} & set(loaded)
