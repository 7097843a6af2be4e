"""Suite YAML is read with bounded work: no alias bombs, no deep nesting, no duplicate keys,
and only regular files of bounded size."""

from __future__ import annotations

import os
import textwrap

import pytest

from assay.core.errors import SpecError
from assay.runner import yamlsrc
from assay.runner.yamlsrc import YamlDoc

BOMB = "".join(
    f"{name}: &{name} [{', '.join([prev] * 9)}]\n"
    for name, prev in zip("bcdefgh", ["*a"] + [f"*{c}" for c in "bcdefg"])
)


def doc(tmp_path, text, name="eval.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return YamlDoc(path)


@pytest.mark.parametrize("text, message", [
    ('a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB,
     "expands to more than 1,000,000 values"),
    ("x: " + "[" * 500 + "]" * 500 + "\n", "nested more than 100 levels deep"),
    ("x: " + "[" * 50000 + "]" * 50000 + "\n", "nested more than 100 levels deep"),
    ("a: &a [1, *a]\n", "recursive alias"),
    ("name: x\nname: y\n", "eval.yaml:2: duplicate key 'name' \\(first on line 1\\)"),
    ("graders:\n  - type: regex\n    config: {pattern: a, pattern: b}\n", "eval.yaml:3: duplicate key 'pattern'"),
    ("samples:\n  - {id: 1, output: a}\n  - id: 2\n    output: b\n    output: c\n", "eval.yaml:5: duplicate key 'output'"),
])
def test_hostile_yaml_is_refused_with_its_line(tmp_path, text, message):
    with pytest.raises(SpecError, match=message):
        doc(tmp_path, text)


def test_aliases_within_bounds_still_work_and_merge_keys_are_not_duplicates(tmp_path):
    d = doc(tmp_path, """\
        base: &base {type: contains, weight: 2}
        graders:
          - <<: *base
            name: one
          - <<: *base
            name: two
        """)
    assert [g["name"] for g in d.data["graders"]] == ["one", "two"]
    assert d.data["graders"][0]["weight"] == 2


@pytest.mark.timeout(10)
def test_fifo_device_and_directory_are_not_read(tmp_path):
    fifo = tmp_path / "eval.yaml"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="FIFO"):
        YamlDoc(fifo)
    with pytest.raises(SpecError, match="a device"):
        YamlDoc(yamlsrc.Path("/dev/zero"))
    with pytest.raises(SpecError, match="is a directory"):
        YamlDoc(tmp_path)
    with pytest.raises(SpecError, match="not found"):
        YamlDoc(tmp_path / "missing.yaml")


def test_size_limit_and_encoding(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlsrc, "MAX_SUITE_BYTES", 1024)
    with pytest.raises(SpecError, match="larger than"):
        doc(tmp_path, "name: " + "x" * 2000 + "\n")
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"name: ok\ndescription: caf\xe9\n")
    with pytest.raises(SpecError, match=r"latin.yaml:2: not UTF-8 text \(byte 0xe9\)"):
        YamlDoc(path)
    path.write_bytes(b"\xef\xbb\xbfname: bom\n")
    assert YamlDoc(path).data == {"name": "bom"}
