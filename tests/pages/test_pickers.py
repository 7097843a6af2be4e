"""The pickers of the task form in a real browser: names in pinyin order (阿 before 北 before 中,
which code points put last to first), what this browser picked lately first, and a line saying
how many more a search would find."""

from __future__ import annotations

import uuid

import pytest
from pages_support import wait_until

pytestmark = pytest.mark.browser

PY = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"
NAMES = ["中国", "北京", "阿里", "上海", "广州", "杭州", "成都", "武汉", "西安", "南京", "重庆", "天津"]


@pytest.fixture(scope="module")
def tagged(live):
    tag = f"拼{uuid.uuid4().hex[:5]}"
    with live.api() as api:
        for name in NAMES:
            made = api.post("/evaluators", json={"name": f"{tag} {name}", "type": "code",
                                                 "config": {"language": "python", "code": PY}})
            assert made.status_code == 200, made.text
    return tag


def searched(page, words: str, shown: int) -> None:
    """Type ``words`` and wait for the answer: ``shown`` buttons, each holding the words."""
    page.fill("#evaluator-picker-search", words)
    wait_until(page, f"(() => {{ const b = [...document.querySelectorAll('#evaluator-picker-results button.pick')];"
                     f" return b.length === {shown} && b.every((x) => x.textContent.includes({words!r})); }})()")


def listed(page) -> list[str]:
    return [n.rsplit(" ", 1)[1] for n in
            page.locator("#evaluator-picker-results button.pick").all_inner_texts()]


def test_pinyin_order_recent_picks_first_and_how_many_more(page, live, tagged):
    page.goto(live.url + "/tasks/new")
    searched(page, tagged, 8)
    assert listed(page) == ["阿里", "北京", "成都", "重庆", "广州", "杭州", "南京", "上海"]  # 12 found, 8 shown
    assert page.locator("#evaluator-picker-more").inner_text() == "还有 4 个未列出：输入名称中的字词即可搜索到"
    page.click("#evaluator-picker-results button.pick:has-text('上海')")
    # picked: not offered twice (the list is searched again, the next name in pinyin order fills in)
    wait_until(page, "![...document.querySelectorAll('#evaluator-picker-results button.pick')]"
                     ".some((b) => b.textContent.endsWith(' 上海'))")
    assert len(listed(page)) == 8 and "天津" in listed(page)
    page.goto(live.url + "/tasks/new")  # a new form: the evaluator picked lately comes first
    searched(page, tagged, 8)
    assert listed(page)[:3] == ["上海", "阿里", "北京"]
    searched(page, f"{tagged} 北", 1)
    assert page.locator("#evaluator-picker-more").count() == 0
