"""Files as Chinese teams save them, in the dataset page of a real browser: a GBK CSV from
Chinese Excel headed 问题/回答/参考答案 goes through the column-mapping step (the encoding found
shown, the columns guessed) and its rows read right; a UTF-16 "Unicode text" TSV with the usual
header uploads at once; a file in no encoding told apart is refused in Chinese with the fix."""

from __future__ import annotations

import re
import uuid

import pytest
from pages_support import serious_violations

pytestmark = pytest.mark.browser

QUESTIONS = [("北京是哪个国家的首都？", "中国", "中国"), ("长江流经哪些省份？", "青海、西藏、四川", "青海、西藏、四川等")]


def excel(encoding: str, header: list[str], sep: str = ",") -> bytes:
    lines = [sep.join(header)] + [sep.join((f"q{i}", *row)) for i, row in enumerate(QUESTIONS)]
    return "".join(line + "\r\n" for line in lines).encode(encoding)


def new_dataset(page, live) -> None:
    page.goto(live.url + "/datasets")
    page.click("#new-dataset-open")
    page.fill("#new-name", f"中文文件 {uuid.uuid4().hex[:6]}")
    page.click("#create-dataset")
    page.wait_for_url(re.compile(r"/datasets/[0-9a-f-]{36}$"))


def test_a_gbk_csv_with_chinese_headers_is_mapped_then_read_right(page, live, shots):
    new_dataset(page, live)
    data = excel("gbk", ["编号", "问题", "回答", "参考答案"])
    page.set_input_files("#file-input", files=[{"name": "客服问答.csv", "mimeType": "text/csv", "buffer": data}])
    page.locator("#column-mapping").wait_for()
    assert page.locator("#detected-encoding").inner_text() == "识别到的编码：GB18030"
    chosen = {f: page.locator(f"#map-{f}").input_value() for f in ("id", "input", "output", "expected")}
    assert chosen == {"id": "编号", "input": "问题", "output": "回答", "expected": "参考答案"}
    assert serious_violations(page) == []
    page.screenshot(path=shots / "dataset-mapping.png", full_page=True)
    page.select_option("#map-input", "")
    page.click("#map-upload")
    assert page.locator("#map-problem").inner_text() == "请选择存放输入（input）的列。"
    page.select_option("#map-input", "问题")
    page.click("#map-upload")
    page.locator(".toast:has-text('按 GB18030 编码读取')").wait_for()
    page.locator("#preview tbody tr").nth(1).wait_for()
    assert page.locator("#preview thead th").all_inner_texts() == ["#", "id", "input", "output", "expected"]
    assert page.locator("#preview tbody tr").first.locator("td").all_inner_texts()[1:] == ["q0", *QUESTIONS[0]]
    assert "csv · GB18030" in page.locator("body").inner_text()


def test_a_utf16_tsv_with_the_usual_header_uploads_at_once(page, live):
    new_dataset(page, live)
    data = excel("utf-16", ["id", "input", "output", "expected"], sep="\t")
    page.set_input_files("#file-input", files=[{"name": "unicode.tsv", "mimeType": "text/plain", "buffer": data}])
    page.locator(".toast:has-text('按 UTF-16 编码读取')").wait_for()
    assert page.locator("#column-mapping").count() == 0
    page.locator("#preview tbody tr").nth(1).wait_for()
    assert page.locator("#preview tbody tr").nth(1).locator("td").all_inner_texts()[2] == QUESTIONS[1][0]


def test_an_unreadable_file_is_refused_in_chinese_with_the_fix(page, live):
    new_dataset(page, live)
    noise = b"id,input\r\n" + bytes(range(0x80, 0x100)) * 4 + b"\r\n"
    page.set_input_files("#file-input", files=[{"name": "乱码.csv", "mimeType": "text/csv", "buffer": noise}])
    error = page.locator("#upload-error")
    error.wait_for()
    text = error.inner_text()
    assert "另存为" in text and "CSV UTF-8" in text and "第 2 行" in text and "column" not in text
    assert "列" not in text.split("另存为")[0]  # no byte offset called a column
