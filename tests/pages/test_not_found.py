"""Not-found, in a real browser (issue 22): an unknown path is a 404 page in the visitor's
language with ways back (the API keeps its JSON error), an unknown id shows what is missing and
a way back instead of an error with a useless retry, and there is a favicon."""

from __future__ import annotations

import httpx2 as httpx
import pytest

pytestmark = pytest.mark.browser

UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"


def test_an_unknown_path_is_a_404_page_with_a_way_back(page, live, shots):
    response = page.goto(live.url + "/no/such/page")
    assert response is not None and response.status == 404
    assert page.locator("h1").inner_text() == "页面不存在"
    page.screenshot(path=shots / "not-found-path.png")
    page.click("a:has-text('返回任务列表')")
    page.wait_for_url("**/tasks")


def test_the_api_keeps_its_json_404(live):
    response = httpx.get(live.url + "/api/v1/no-such-thing", headers={"Accept": "text/html,*/*",
                                                                       "Authorization": f"Bearer {live.token}"})
    assert response.status_code == 404 and response.json()["code"] == 404


@pytest.mark.parametrize(("path", "back"), [(f"/evaluators/{UNKNOWN_ID}", "/evaluators"),
                                            (f"/tasks/{UNKNOWN_ID}", "/tasks"),
                                            (f"/runs/{UNKNOWN_ID}", "/tasks")])
def test_an_unknown_id_says_not_found_with_a_way_back(page, live, shots, path, back):
    page.goto(live.url + path)
    page.locator(".not-found").wait_for()
    assert page.locator(".not-found h1").inner_text() == "找不到它"
    assert page.locator("button:has-text('重试')").count() == 0
    assert page.locator("#back-to-list").get_attribute("href") == back
    page.screenshot(path=shots / f"not-found-{back.strip('/')}-id.png")


def test_there_is_a_favicon(page, live):
    page.goto(live.url + "/evaluators")
    href = page.locator("link[rel=icon]").get_attribute("href")
    for path in (href, "/favicon.ico"):
        response = httpx.get(live.url + path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("image/svg+xml")
        assert response.text.startswith("<svg")
