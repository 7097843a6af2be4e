import csv
import os
import re

import pytest

from assay.core.errors import SpecError
from assay.core.untrusted import clean_json
from assay.runner.dataset import _text, load_dataset, samples_from_rows

BIG = 123456789012345678901234567890
META_CSV = f'id,output,metadata\n1,a,"{{""n"": {BIG}, ""s"": ""\\ud800""}}"\n'


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
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


# (file name, content, (id, output) of each sample)
ACCEPTED = [
    # integers beyond 64 bits stay exact (orjson alone makes them floats); fractions are untouched
    ("big.jsonl", f'{{"id": 1, "output": {BIG}}}\n{{"id": 2, "output": -9223372036854775809}}\n'
                  '{"id": 3, "output": 0.0000000000000000000001}\n',
     [("1", BIG), ("2", -9223372036854775809), ("3", 1e-22)]),
    ("big.json", f'[\n  {{"id": 1, "output": {BIG}}}\n]', [("1", BIG)]),
    ("digits.jsonl", '{"id": "12345678901234567890123", "output": "x"}\n', [("12345678901234567890123", "x")]),
    # a lone surrogate escape is allowed by JSON: it becomes U+FFFD; a pair is one character; an
    # escaped backslash followed by "ud800" is text
    ("sur.jsonl", '{"id": 1, "output": "a\\ud800b"}\n{"id": 2, "output": "\\ud83d\\ude00"}\n'
                  '{"id": 3, "output": "\\\\ud800"}\n{"id": 4, "output": "\\udc00\\ud800"}\n',
     [("1", "a\ufffdb"), ("2", "😀"), ("3", "\\ud800"), ("4", "\ufffd\ufffd")]),
    ("sur.json", '[{"id": 1, "output": "\\uDBFF!"}]', [("1", "\ufffd!")]),
    # Windows line endings, blank lines, a UTF-8 BOM
    ("crlf.jsonl", b'{"id": 1, "output": "a"}\r\n\r\n{"id": 2, "output": "b"}\r\n', [("1", "a"), ("2", "b")]),
    ("bom.jsonl", b'\xef\xbb\xbf{"id": 1, "output": "a"}', [("1", "a")]),
    ("bom.csv", b'\xef\xbb\xbfid,output\r\n1,a\r\n', [("1", "a")]),
    ("crlf.json", b'[\r\n{"id": 1, "output": "a"}\r\n]\r\n', [("1", "a")]),
    # CSV: a field far over csv's default 128 KB limit, a quoted line break, a tab-separated .tsv
    ("wide.csv", "id,output\n1," + "x" * 300_000 + "\n", [("1", "x" * 300_000)]),
    ("multi.csv", 'id,output\n1,"two\nlines"\n2,b\n', [("1", "two\nlines"), ("2", "b")]),
    ("d.tsv", 'id\toutput\n1\ta, b; c\n', [("1", "a, b; c")]),
    ("meta.csv", META_CSV, [("1", "a")]),
    # no rows: an empty list, and the suite decides
    ("empty.jsonl", "\n\n", []),
    ("empty.json", "", []),
    ("list.json", "[ ]", []),
    ("header.csv", "id,output\n", []),
    ("nothing.csv", "", []),
]


@pytest.mark.parametrize("name, text, expected", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted(tmp_path, name, text, expected):
    samples = load_dataset(write(tmp_path, name, text))
    assert [(s.id, s.output) for s in samples] == expected
    for s in samples:
        if isinstance(s.output, int):
            assert type(s.output) is int
        clean_json(s.model_dump(mode="python"))  # and a writer can take every value


def test_csv_metadata_values_exact(tmp_path):
    (s,) = load_dataset(write(tmp_path, "meta.csv", META_CSV))
    assert s.metadata == {"n": BIG, "s": "\ufffd"}


# (file name, content, the error expected as a regular expression; `F` stands for the file)
ERRORS = [
    ("d.jsonl", '{"id": 1}\n{"id": 2, \n', r"F:2: invalid JSON at column 11: .*the line ends inside the row: a JSONL row is one object on one line"),
    ("d.jsonl", '{"id": 1}\n{"id": 1}\n', r"F:2: duplicate sample id '1' \(first on line 1\)"),
    ("d.jsonl", '{"id": 1, "transcript": [{"type": "tool_call", "arguments": 5}]}\n', r"F:1: transcript\[0\]\.arguments"),
    ("d.jsonl", '{"id": 1, "transcript": [5]}\n', r"F:1: transcript: transcript\[0\]: an event must be a mapping"),
    ("d.jsonl", '{"id": 1, }\n', r"F:1: invalid JSON at column 11: Expecting property name"),
    # a row must be an object
    ("d.jsonl", '[1, 2]\n', r"F:1: a row must be an object .*got a list"),
    ("d.jsonl", '{"id": 1}\n"text"\n', r"F:2: a row must be an object .*got a string"),
    ("d.jsonl", '{"id": 1}\n7\n', r"F:2: a row must be an object .*got a number"),
    ("d.json", '[\n{"id": 1},\n null]', r"F:3: a row must be an object .*got true/false/null"),
    # not JSON: NaN, the infinities, a number no float holds
    ("d.jsonl", '{"id": 1}\n{"id": 2, "output": NaN}\n', r'F:2: NaN is not JSON; write null or a string such as "NaN"'),
    ("d.jsonl", '{"id": 1, "output": [Infinity]}\n', r"F:1: Infinity is not JSON"),
    ("d.jsonl", f'{{"id": 1, "output": -Infinity, "n": {BIG}}}\n', r"F:1: -Infinity is not JSON"),
    ("d.jsonl", '{"id": 1, "output": 1e400}\n', r"F:1: the number 1e400 is too large for a float"),
    ("d.json", '[{"id": 1},\n {"id": 2, "output": NaN}]', r"F:2: NaN is not JSON"),
    # nesting: an error, never RecursionError
    ("d.jsonl", '{"id": 1}\n' + "[" * 100_000 + "\n", r"F:2: nested too deeply"),
    ("d.jsonl", '{"id": 1, "o": ' + "[" * 1500 + "]" * 1500 + f', "n": {BIG}}}\n', r"F:1: nested too deeply"),
    ("d.json", '[{"id": 1},\n' + "[" * 100_000, r"F:2: nested too deeply"),
    # .json structure
    ("d.json", '{"id": 1}', r"F:1: a \.json dataset must be a list of rows.*name the file \.jsonl"),
    ("d.json", '[{"id": 1},\n]', r"F:2: a `,` before the closing `\]` is not JSON"),
    ("d.json", '[{"id": 1}\n{"id": 2}]', r"F:2: expected `,` or `\]` after a row"),
    ("d.json", '[{"id": 1}]\n[]', r"F:2: text after the `\]` that closes the list of rows"),
    ("d.json", '[{"id": 1},\n{"id": 2, "a": [1, }]', r"F:2: invalid JSON at column 20: Expecting value"),
    ("d.json", '[\n{"id": 1},\n{"id": 2', r"F:3: invalid JSON at column 9"),
    # encodings
    ("d.jsonl", b'{"id": 1}\n{"id": 2, "output": "caf\xe9"}\n',
     r"F:2: not UTF-8 text \(byte 0xe9 at column 25\); save the file as UTF-8"),
    ("d.jsonl", b'{"id": 1, "output": "\xe4\xb8\xad\xff"}\n', r"F:1: not UTF-8 text \(byte 0xff at column 23\)"),
    ("d.jsonl", b'{"id": 1, "output": "\xed\xa0\x80"}\n', r"F:1: not UTF-8 text \(byte 0xed"),
    # (a CSV that is not UTF-8 is read in the encoding told from its start: Latin-1 is none of those)
    ("d.csv", b"id,output\n1,ok\n2,caf\xe9\n", r"F: not UTF-8 text, nor GBK/GB18030, Big5 or UTF-16 \(byte 0xe9 on line 3\); "
                                              r'in Excel, save it as "CSV UTF-8'),
    ("d.json", b'[\n{"id": 1},\n{"id": "caf\xe9"}]', r"F:3: not UTF-8 text \(byte 0xe9 at column 12\)"),
    ("d.jsonl", '{"id": 1}\n'.encode("utf-16"), r"F:1: the file is UTF-16 text .*save it as UTF-8"),
    ("d.jsonl", '{"id": 1}\n'.encode("utf-16-be"), r"F:1: .*UTF-16.*save it as UTF-8"),
    ("d.csv", "id,output\n1,a\n".encode("utf-16-le"), r"F:1: .*UTF-16.*save it as UTF-8"),
    ("d.jsonl", '{"id": 1}\n'.encode("utf-32"), r"F:1: the file is UTF-32 text"),  # (a CSV in UTF-32 is read)
    ("d.json", '[{"id": 1}]'.encode("utf-16"), r"F:1: the file is UTF-16 text"),
    ("d.jsonl", b'{"id": 1}\n{"id": 2}\n{"id": 3, "output": "a\x00b"}\n',
     r"F:3: a NUL byte \(0x00\) at column 23: text holds none"),
    ("d.csv", b"id,output\n1,a\x00\n", r"F:2: a NUL byte \(0x00\) at column 4"),
    # CSV shape
    ("d.csv", "id,output\n1,a,extra\n", r"F:2: row has 3 cells but the header has 2; quote cells that contain `,`"),
    ("d.csv", "id,output,expected\n1,a,b\n2,a\n", r"F:3: row has 2 cells but the header has 3; give every column a cell"),
    ("d.csv", 'id,output\n1,"a\n2",b\n', r"F:2: row has 3 cells .*this row runs from line 2 to 3: check for a quote left open"),
    ("d.csv", 'id,output\n1,a\n2,"b\n3,c\n4,d\n', r"F:3: unterminated quote: a quoted cell in the row starting on line 3 is never closed"),
    ("d.csv", 'id,output\n1,"b\n3,c\n4,"d"x\n', r'F:4: text after the closing quote of a cell.*\(""\) \(this row starts on line 2'),
    ("d.csv", 'id,output\n1,"a"b\n', r"F:2: text after the closing quote of a cell"),
    ("d.csv", "id,output,id\n1,a,b\n", r"F:1: column 3 of the header repeats 'id' \(column 1\)"),
    ("d.csv", "id,,output\n1,a,b\n", r"F:1: column 2 of the header has no name"),
    ("d.csv", "id,output,\n1,a,\n", r"F:1: column 3 of the header has no name; .*a `,` at the end"),
    ("d.csv", "id,output\r1,a\r", r"F:1: a carriage return \(\\r\) inside an unquoted cell"),
    ("d.csv", "id,output,metadata\n1,a,{oops\n", r"F:2: metadata: not a JSON object"),
    ("d.csv", "id,output,metadata\n1,a,{\"n\": NaN}\n", r"F:2: metadata: not a JSON object: NaN is not JSON"),
    # the wrong delimiter
    ("d.csv", "id;output\n1;a\n", r"F:1: the header has a single column but the file looks separated by `;`; set `delimiter: ';'`"),
    ("d.csv", "id\toutput\n1\ta\n", r"F:1: .*looks separated by `\\t`; set `delimiter: tab`"),
    ("d.csv", "id|output\n1|a\n", r"F:1: .*looks separated by `\|`; set `delimiter: '\|'`"),
    ("d.tsv", "id,output\n1,a\n", r"F:1: .*looks separated by `,`; set `delimiter: ','`"),
    # not a dataset format
    ("d.txt", "x", r"F: cannot tell the format of dataset 'd\.txt' from its name: use \.jsonl"),
]


@pytest.mark.parametrize("name, text, message", ERRORS)
def test_errors_name_file_and_line(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    with pytest.raises(SpecError, match="^" + message.replace("F", re.escape(str(path)), 1)):
        load_dataset(path)


@pytest.mark.timeout(10)  # opening a FIFO for reading blocks until a writer comes: it must not
def test_fifo_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "d.jsonl")
    with pytest.raises(SpecError, match=r"is a FIFO \(named pipe\), not a regular file"):
        load_dataset(tmp_path / "d.jsonl")


@pytest.mark.timeout(10)
@pytest.mark.parametrize("make, message", [
    (lambda p: os.symlink("/dev/zero", p), r"is a device, not a regular file"),
    (lambda p: p.mkdir(), r"is a directory"),
    (lambda p: None, r"dataset file not found: "),
])
def test_only_regular_files(tmp_path, make, message):
    path = tmp_path / "d.jsonl"
    make(path)
    with pytest.raises(SpecError, match=message):
        load_dataset(path)


@pytest.mark.timeout(10)
def test_dev_zero_refused():
    with pytest.raises(SpecError, match=r"/dev/zero is a device"):
        load_dataset("/dev/zero")


@pytest.fixture
def small_lines(monkeypatch):
    """Lines of at most 64 bytes, read in 64-byte blocks: lines cross block ends everywhere."""
    monkeypatch.setattr(_text, "MAX_LINE_BYTES", 64)
    return 64


def test_lines_read_across_blocks(tmp_path, small_lines):
    rows = [f'{{"id": {i}, "output": "{"x" * (i * 7 % 40)}"}}' for i in range(60)]
    text = "\n\r\n".join(rows)  # blank CRLF lines between rows; no newline at the end
    samples = load_dataset(write(tmp_path, "d.jsonl", text))
    assert [(s.id, s.output) for s in samples] == [(str(i), "x" * (i * 7 % 40)) for i in range(60)]
    bad = text + '\n{"id": "last",}'
    with pytest.raises(SpecError, match=r"d\.jsonl:120: invalid JSON"):
        load_dataset(write(tmp_path, "d.jsonl", bad))


@pytest.mark.parametrize("name, text, message", [
    ("d.jsonl", '{"id": 1}\n{"id": 2, "output": "' + "x" * 100 + '"}\n{"id": 3}\n',
     r"d\.jsonl:2: line is longer than 64 bytes"),
    ("d.jsonl", '{"id": 1}\n{"id": 2, "output": "' + "x" * 100 + '"}', r"d\.jsonl:2: line is longer than 64 bytes"),
    ("d.jsonl", "x" * 200, r"d\.jsonl:1: line is longer than 64 bytes"),
    ("d.csv", "id,output\n1," + "x" * 100 + "\n", r"d\.csv:2: line is longer than 64 bytes"),
    # each line short, the row long: a quote left open
    ("d.csv", 'id,output\n1,"a\n' + "b" * 40 + "\n" + "c" * 40 + "\n",
     r"d\.csv:2: the row is longer than 64 bytes \(by line 4\); a quote left open"),
])
def test_long_line_or_row_is_an_error(tmp_path, small_lines, name, text, message):
    with pytest.raises(SpecError, match=message):
        load_dataset(write(tmp_path, name, text))


def test_line_of_exactly_the_limit_is_read(tmp_path, small_lines):
    row = '{"id": 1, "output": "' + "x" * 40 + '"}\n'
    row = row.replace("x" * 40, "x" * (40 + small_lines - len(row)))
    assert len(row) == small_lines
    (s,) = load_dataset(write(tmp_path, "d.jsonl", row))
    assert s.output == "x" * (small_lines - 24)


def test_field_size_limit_only_raised(tmp_path):
    before = csv.field_size_limit()
    load_dataset(write(tmp_path, "d.csv", "id,output\n1," + "x" * 200_000 + "\n"))
    assert csv.field_size_limit() >= max(before, _text.MAX_LINE_BYTES)


@pytest.mark.parametrize("delimiter, text", [
    (";", "id;output\n1;a, b\n"),
    ("tab", "id\toutput\n1\ta, b\n"),
    ("\t", "id\toutput\n1\ta, b\n"),
    ("|", "id|output\n1|a, b\n"),
    (",", 'id,output\n1,"a, b"\n'),
])
def test_delimiter(tmp_path, delimiter, text):
    (s,) = load_dataset(write(tmp_path, "d.csv", text), delimiter=delimiter)
    assert (s.id, s.output) == ("1", "a, b")


def test_delimiter_checked_and_ignored_for_json(tmp_path):
    with pytest.raises(SpecError, match=r"delimiter ':' is not supported: use ',', ';', tab or '\|'"):
        load_dataset(write(tmp_path, "d.csv", "id\n1\n"), delimiter=":")
    (s,) = load_dataset(write(tmp_path, "d.jsonl", '{"id": 1}\n'), delimiter=";")
    assert s.id == "1"


def test_inline_rows_cleaned():
    rows = [(3, {"id": "a\ud800", "output": ["x\udfff"], "metadata": {"k\ud800": {"v": "\ud83d\ude00"}}})]
    (s,) = samples_from_rows(iter(rows), source="eval.yaml")
    assert (s.id, s.output, s.metadata) == ("a\ufffd", ["x\ufffd"], {"k\ufffd": {"v": "😀"}})


def test_inline_rows_too_deep():
    deep: list = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(SpecError, match=r"^eval\.yaml:7: nested more than 100 levels deep"):
        samples_from_rows(iter([(7, {"id": "a", "output": deep})]), source="eval.yaml")


def test_inline_row_not_an_object():
    with pytest.raises(SpecError, match=r"^eval\.yaml:2: a row must be an object"):
        samples_from_rows(iter([(2, "text")]), source="eval.yaml")


def test_empty_or_null_ids_mean_no_id(tmp_path):
    samples = load_dataset(write(tmp_path, "d.csv", "id,output\n,a\nx,b\n,c\n"))
    assert [s.id for s in samples] == ["row-2", "x", "row-4"]
    samples = load_dataset(write(tmp_path, "d.jsonl", '{"id": null, "output": "a"}\n{"id": "", "output": "b"}\n'))
    assert [s.id for s in samples] == ["row-1", "row-2"]


@pytest.mark.parametrize("row, message", [
    ('{"output": "a", "duration_ms": 1e400}', "too large"),
    ('{"output": "a", "duration_ms": -5}', "duration_ms: Input should be greater than or equal to 0"),
    ('{"output": "a", "transcript": "text"}', "transcript"),
])
def test_bad_sample_fields_name_the_line(tmp_path, row, message):
    with pytest.raises(SpecError, match=message):
        load_dataset(write(tmp_path, "d.jsonl", '{"output": "ok"}\n' + row + "\n"))


@pytest.mark.parametrize("name", ["d.jsonl", "d.json"])
def test_integers_past_pythons_conversion_limit_are_kept_as_their_exact_text(tmp_path, name):
    huge = "9" * 5000
    row = '{"id": "a", "output": %s, "expected": -%s}' % (huge, huge)
    (tmp_path / name).write_text(row + "\n" if name.endswith("l") else f"[{row}]")
    [sample] = load_dataset(tmp_path / name)
    assert (sample.output, sample.expected) == (huge, "-" + huge)


@pytest.mark.parametrize("encoding", ["utf-32", "utf-16", "gbk", "gb18030", "utf-8-sig"])
def test_a_csv_in_the_encodings_excel_saves_is_read(tmp_path, encoding):
    path = tmp_path / "d.csv"
    path.write_bytes("id,input,output\r\n1,北京是哪个国家的首都？,中国\r\n".encode(encoding))
    assert [(s.id, s.input, s.output) for s in load_dataset(path)] == [("1", "北京是哪个国家的首都？", "中国")]
