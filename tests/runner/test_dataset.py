import pytest

from assay.core.errors import SpecError
from assay.runner.dataset import load_dataset


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_jsonl_with_extra_fields_folded_into_metadata(tmp_path):
    p = write(tmp_path, "d.jsonl", '{"id": 1, "output": "中国", "expected": "中国", "minLength": 5}\n\n'
                                   '{"id": "b", "output": "x", "metadata": {"k": 1}}\n')
    a, b = load_dataset(p)
    assert a.id == "1" and a.metadata == {"minLength": 5}
    assert b.metadata == {"k": 1} and b.expected is None


def test_csv(tmp_path):
    p = write(tmp_path, "d.csv", 'id,input,output,expected,metadata,lang\n'
                                 '1,问,北京,北京,"{""k"": 2}",zh\n2,q,a,,,en\n')
    a, b = load_dataset(p)
    assert (a.output, a.metadata) == ("北京", {"k": 2, "lang": "zh"})
    assert b.expected == "" and b.metadata == {"lang": "en"}


@pytest.mark.parametrize("name, text, message", [
    ("d.jsonl", '{"id": 1}\n{"id": 2, \n', r"d\.jsonl:2: invalid JSON"),
    ("d.jsonl", '{"id": 1}\n{"id": 1}\n', r"d\.jsonl:2: duplicate sample id '1' \(first on line 1\)"),
    ("d.jsonl", '{"id": 1, "transcript": [{"type": "tool_call", "arguments": 5}]}\n',
     r"d\.jsonl:1: transcript\[0\]\.arguments"),
    ("d.jsonl", '{"id": 1, "transcript": [5]}\n', r"d\.jsonl:1: transcript: transcript\[0\]: an event must be a mapping"),
    ("d.jsonl", '[1, 2]\n', r"d\.jsonl:1: a row must be an object"),
    ("d.csv", 'id,output\n1,a,extra\n', r"d\.csv:2: row has 3 cells but the header has 2"),
    ("d.csv", 'id,output,metadata\n1,a,{oops\n', r"d\.csv:2: metadata: not a JSON object"),
    ("d.txt", "x", r"unsupported dataset format"),
])
def test_errors_name_file_and_line(tmp_path, name, text, message):
    with pytest.raises(SpecError, match=message):
        load_dataset(write(tmp_path, name, text))
