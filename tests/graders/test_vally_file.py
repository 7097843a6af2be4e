"""vally_file: Vally's file-exists / file-contains / file-matches and negated forms on the
sample's workspace (microsoft.github.io/vally/reference/graders/file-*/), confined to it."""

import os

import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src" / "lib").mkdir(parents=True)
    (root / "add.test.js").write_text("test('adds', () => expect(add(1, 2)).toBe(3));\n")
    (root / "src" / "lib" / "util.ts").write_text("export const Add = 1;\n")
    (root / "out.json").write_text("{}")
    (root / ".hidden.tmp").write_text("x")
    (root / "Program.cs").write_text("static int Add(int a, int b)\n{\n  return null!;\n}\n")
    (tmp_path / "secret.txt").write_text("TOKEN=1")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    return root


@pytest.mark.parametrize("config, passed", [
    ({"mode": "exists", "path": "add.test.js"}, True),
    ({"mode": "exists", "path": "*.test.js"}, True),
    ({"mode": "exists", "path": "src/**/*.ts"}, True),
    ({"mode": "exists", "path": "**/*.ts"}, True),
    ({"mode": "exists", "path": "*.{json,txt}"}, True),
    ({"mode": "exists", "path": "missing.js"}, False),
    ({"mode": "exists", "path": "*.tmp"}, False),                       # wildcards skip dotfiles (Node glob)
    ({"mode": "exists", "path": "*.tmp", "negate": True}, True),
    ({"mode": "exists", "path": "src"}, True),                          # directories match too
    ({"mode": "exists", "path": "link.txt"}, False),                    # symlink out of the workspace
    ({"mode": "contains", "path": "add.test.js", "value": "expect"}, True),
    ({"mode": "contains", "path": "add.test.js", "value": "EXPECT"}, False),   # case-sensitive
    ({"mode": "contains", "path": "*.js", "value": "packages.config", "negate": True}, True),
    ({"mode": "contains", "path": "nothing.*", "value": "x"}, False),
    ({"mode": "contains", "path": "nothing.*", "value": "x", "negate": True}, True),
    ({"mode": "contains", "path": "link.txt", "value": "TOKEN"}, False),
    ({"mode": "matches", "path": "**/Program.cs", "pattern": r"static\s+\w+\s+Add\("}, True),
    ({"mode": "matches", "path": "**/*.cs", "pattern": "null!", "negate": True}, False),
    ({"mode": "matches", "path": "**/*", "pattern": "(?i)EXPORT CONST"}, True),
    ({"mode": "matches", "path": "Program.cs", "pattern": "(?s)Add.*null"}, True),
    ({"mode": "matches", "path": "Program.cs", "pattern": "Add.*null"}, False),
    ({"mode": "matches", "path": "Program.cs", "pattern": "(?m)^}$"}, True),
])
def test_file(grade, ws, config, passed):
    r = grade({"type": "vally_file", "config": config}, output="", workspace=str(ws))
    assert r.status.value in ("passed", "failed") and r.passed is passed, r.reason


def test_no_workspace_is_an_error(grade):
    r = grade({"type": "vally_file", "config": {"mode": "exists", "path": "a"}}, output="")
    assert r.status.value == "error" and r.error == "unavailable"


@pytest.mark.parametrize("config, message", [
    ({"mode": "exists", "path": "../secret.txt"}, r"'\.\.' segment"),
    ({"mode": "exists", "path": "src/../../x"}, r"'\.\.' segment"),
    ({"mode": "exists", "path": "/etc/passwd"}, "absolute"),
    ({"mode": "exists", "path": ""}, "path"),
    ({"mode": "contains", "path": "a"}, "value is required"),
    ({"mode": "exists", "path": "a", "value": "x"}, "value is not used"),
    ({"mode": "matches", "path": "a", "pattern": "(x"}, "pattern"),
    ({"mode": "matches", "path": "a"}, "pattern is required"),
])
def test_bad_configs(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "vally_file", "config": config})
