"""vally_output: Vally's output-contains / output-matches and their negated forms, with the
verdicts Vally's reference pages give (microsoft.github.io/vally/reference/graders/)."""

import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec


@pytest.mark.parametrize("config, output, passed", [
    ({"substring": "hello world"}, "Hello World!", True),                          # case-insensitive by default
    ({"substring": "hello world", "case_sensitive": True}, "Hello World!", False),
    ({"substring": "Hello", "case_sensitive": True}, "Hello World!", True),
    ({"substring": "error"}, "all good", False),
    ({"substring": "error", "negate": True}, "all good", True),
    ({"substring": "error", "negate": True}, "ERROR: boom", False),
    ({"substring": "a.b"}, "axb", False),                                          # literal, not a pattern
    ({"value": "x"}, "X", True),
    ({"substring": ""}, "", True),                                                 # "".includes("")
])
def test_contains(grade, config, output, passed):
    r = grade({"type": "vally_output", "config": {"mode": "contains", **config}}, output=output)
    assert r.passed is passed, r.reason


@pytest.mark.parametrize("pattern, negate, output, passed", [
    (r"function\s+\w+\(", False, "function add(a, b)", True),
    (r"function\s+\w+\(", False, "FUNCTION add(", False),                          # case-sensitive by default
    (r"(?i)function\s+\w+\(", False, "FUNCTION add(", True),
    ("^b$", False, "a\nb", False),
    ("(?m)^b$", False, "a\nb", True),
    ("a.b", False, "a\nb", False),
    ("(?s)a.b", False, "a\nb", True),
    ("(?ims)^A.B$", False, "x\na\nb", True),
    ("(?i)error|exception", True, "Exception raised", False),
    ("(?i)error|exception", True, "fine", True),
])
def test_matches(grade, pattern, negate, output, passed):
    r = grade({"type": "vally_output", "config": {"mode": "matches", "pattern": pattern, "negate": negate}},
              output=output)
    assert r.passed is passed, r.reason


def test_non_text_output_is_compact_json(grade):
    r = grade({"type": "vally_output", "config": {"mode": "contains", "substring": '"ok":true'}},
              output={"ok": True})
    assert r.passed


@pytest.mark.parametrize("config, message", [
    ({"mode": "contains"}, "substring"),
    ({"mode": "contains", "substring": "a", "value": "b"}, "exactly one"),
    ({"mode": "contains", "substring": "a", "pattern": "b"}, "pattern is for mode matches"),
    ({"mode": "matches"}, "needs pattern"),
    ({"mode": "matches", "pattern": "(a"}, "pattern"),
    ({"mode": "matches", "pattern": "a", "substring": "b"}, "substring is for mode contains"),
    ({"mode": "other", "substring": "a"}, "mode"),
    ({"mode": "contains", "substring": "a", "flags": "i"}, "flags"),
])
def test_bad_configs(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "vally_output", "config": config})
