"""Files as Chinese teams save them, uploaded over the API: CSV from Chinese Excel (GBK, CRLF),
GB18030 with characters GBK lacks, UTF-16 with a BOM ("Unicode text", tab-separated), each read
right and its encoding stored and shown; a file in no encoding told apart is refused with the
fix, in the page's language; a header of 问题/回答/参考答案 is mapped to the fields by the upload's
``column`` parameters; the pages' header read tells the encoding and columns from a file's start."""

from __future__ import annotations

import pytest
from test_datasets_api import new_dataset

from assay.server.pages.i18n import catalogue, say

QUESTIONS = [("北京是哪个国家的首都？", "中国", "中国"), ("长江流经哪些省份？", "青海、西藏、四川", "青海、西藏、四川等"),
             ("“龘”字有几画？", "四十八画", "四十八画")]


def excel_csv(encoding: str, header: str = "id,input,output,expected", sep: str = ",",
              extra: str = "") -> bytes:
    """What Excel writes: CRLF line ends, the text in ``encoding`` (a BOM for UTF-16)."""
    lines = [header] + [sep.join((f"q{i}", q + extra, a, e)) for i, (q, a, e) in enumerate(QUESTIONS)]
    return "".join(line + "\r\n" for line in lines).encode(encoding)


def upload(api, dataset_id, filename, data, **params):
    return api.call("POST", f"/datasets/{dataset_id}/versions", params={"filename": filename, **params}, content=data)


def rows_of(api, dataset_id):
    return [item["row"] for item in api.call("GET", f"/datasets/{dataset_id}/rows").json()["data"]["items"]]


@pytest.mark.parametrize(("encoding", "filename", "sep", "extra", "shown"), [
    ("gbk", "问答.csv", ",", "", "GB18030"),
    ("gb18030", "问答.csv", ",", "𠀾€", "GB18030"),  # beyond GBK: an Extension B character, the euro sign
    ("utf-16", "问答.tsv", "\t", "", "UTF-16"),  # BOM first, as Excel's "Unicode text"
    ("utf-8-sig", "问答.csv", ",", "", "UTF-8"),
])
def test_a_file_in_each_encoding_is_read_right_and_its_encoding_kept(api, encoding, filename, sep, extra, shown):
    dataset = new_dataset(api)
    data = excel_csv(encoding, header=sep.join(("id", "input", "output", "expected")), sep=sep, extra=extra)
    assert data.decode(encoding)  # the bytes really are that encoding
    answer = upload(api, dataset["id"], filename, data)
    assert answer.status_code == 200, answer.text
    version = answer.json()["data"]
    assert (version["rowCount"], version["encoding"], version["format"]) == (3, shown, "csv")
    got = [(r["input"], r["output"], r["expected"]) for r in rows_of(api, dataset["id"])]
    assert got == [(q + extra, a, e) for q, a, e in QUESTIONS]
    detail = api.call("GET", f"/datasets/{dataset['id']}").json()["data"]
    assert detail["versions"][-1]["encoding"] == shown
    assert upload(api, dataset["id"], "a.jsonl", b'{"id": "x", "input": "y"}\n').json()["data"]["encoding"] is None


def test_a_file_in_no_encoding_told_apart_is_refused_with_the_fix_in_chinese(api):
    dataset = new_dataset(api)
    noise = b"id,input\r\n" + bytes(range(0x80, 0x100)) * 4 + b"\r\n"
    refused = upload(api, dataset["id"], "乱码.csv", noise)
    assert refused.status_code == 422
    body = refused.json()
    assert body["messageCode"] == "dataset.unknown_encoding" and "column" not in body["message"]
    chinese = say("zh", body["messageCode"], body["messageArgs"], body["message"])
    assert "另存为" in chinese and "CSV UTF-8" in chinese and "第 2 行" in chinese and "乱码.csv" in chinese
    assert api.call("GET", f"/datasets/{dataset['id']}").json()["data"]["versions"] == []


def test_a_gbk_file_whose_later_line_is_another_encoding_is_refused_naming_the_line(api):
    """Past the first 64 KiB (what the encoding is told from), a byte GB18030 does not have."""
    dataset = new_dataset(api)
    good = "id,input,output\r\n" + "".join(f"r{i},北京是哪个国家的首都？,中国\r\n" for i in range(3000))
    broken = good.encode("gbk") + b"bad,\xff\xff,x\r\n"
    assert len(good.encode("gbk")) > 64 * 1024
    refused = upload(api, dataset["id"], "坏行.csv", broken).json()
    assert refused["messageCode"] == "dataset.bad_byte", refused
    assert refused["messageArgs"]["line"] == 3002 and refused["messageArgs"]["encoding"] == "GB18030"
    assert "第 3002 行" in say("zh", refused["messageCode"], refused["messageArgs"], refused["message"])


def test_columns_named_in_chinese_are_mapped_to_the_fields(api):
    dataset = new_dataset(api)
    data = excel_csv("gbk", header="编号,问题,回答,参考答案")
    answer = upload(api, dataset["id"], "中文列.csv", data, column=["id:编号", "input:问题", "output:回答",
                                                                      "expected:参考答案"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["columns"] == ["id", "input", "output", "expected"]
    first = rows_of(api, dataset["id"])[0]
    assert (first["id"], first["input"], first["output"]) == ("q0", QUESTIONS[0][0], "中国")

    partial = upload(api, dataset["id"], "中文列.csv", data, column=["input:问题"]).json()["data"]
    assert partial["columns"] == ["编号", "input", "回答", "参考答案"]  # the others go to metadata
    for bad, code in ((["input:没有这列"], "dataset.no_such_column"),
                      (["input:问题", "input:回答"], "api.dataset.field_twice"),
                      (["answer:回答"], "api.dataset.bad_mapping"),
                      (["input:问题", "output:问题"], "api.dataset.column_twice")):
        refused = upload(api, dataset["id"], "中文列.csv", data, column=bad)
        assert refused.status_code == 422 and refused.json()["messageCode"] in (code, "problem.at"), refused.text
        said = refused.json()
        assert say("zh", said["messageCode"], said["messageArgs"], said["message"]) != said["message"]


def test_the_pages_read_a_files_encoding_and_header_from_its_start(api):
    head = excel_csv("gbk", header="问题,回答,参考答案,备注", extra="")[:200]
    answer = api.client.post("/pages/api/datasets/header", params={"filename": "问答.csv"}, content=head,
                             headers=api.as_("alice"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"encoding": "GB18030", "columns": ["问题", "回答", "参考答案", "备注"]}
    too_long = api.client.post("/pages/api/datasets/header", params={"filename": "a.csv"},
                               content=b"a" * (64 * 1024 + 1), headers=api.as_("alice"))
    assert too_long.status_code == 413
    assert "另存为" in catalogue("zh")["phrase.dataset.unknown_encoding"]
