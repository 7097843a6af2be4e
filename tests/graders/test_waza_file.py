"""waza's file grader (internal/graders/file_grader.go): existence and content regexes in the workspace."""

import pytest

from assay.core.errors import SpecError


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    print('Hi')\n")
    (tmp_path / "README.md").write_text("# Title\n")
    return str(tmp_path)


@pytest.mark.parametrize("config, passed, score", [
    ({"must_exist": ["src/app.py", "README.md"]}, True, 1.0),
    ({"must_exist": ["src/app.py", "missing.txt"]}, False, 0.5),
    ({"must_exist": ["src"]}, True, 1.0),                                          # folders count
    ({"must_not_exist": ["README.md"]}, False, 0.0),
    ({"content_patterns": [{"path": "src/app.py", "must_match": ["def main"], "must_not_match": ["TODO"]}]},
     True, 1.0),
    ({"content_patterns": [{"path": "src/app.py", "must_match": ["print\\('hi'\\)"]}]}, False, 0.5),  # case-sensitive
    # a missing file fails its existence check and every pattern: 0 of 3
    ({"content_patterns": [{"path": "nope.py", "must_match": ["a"], "must_not_match": ["b"]}]}, False, 0.0),
    ({"must_exist": ["README.md"], "content_patterns": [{"path": "nope.py", "must_match": ["a"]}]}, False, 1 / 3),
])
def test_file(grade, ws, config, passed, score):
    r = grade({"type": "waza_file", "config": config}, output="", workspace=ws)
    assert (r.passed, r.score) == (passed, pytest.approx(score))


def test_no_workspace_fails(grade):
    r = grade({"type": "waza_file", "config": {"must_exist": ["a"]}}, output="")
    assert (r.status.value, r.score) == ("failed", 0.0) and "No workspace" in r.reason


@pytest.mark.parametrize("config, message", [
    ({}, "at least one of"),
    ({"must_exist": ["/etc/passwd"]}, "absolute"),
    ({"must_not_exist": ["../x"]}, "outside the workspace"),
    ({"content_patterns": [{"path": "a", "must_match": ["("]}]}, "must_match item 0"),
])
def test_bad_config(grade, config, message):
    with pytest.raises(SpecError, match=message):
        grade({"type": "waza_file", "config": config}, output="")
