"""Long names in a real browser, at a laptop's 1366×768 and a phone's 375×812: a 200-character
name (one unbroken word, or Chinese) clips or wraps inside its column in every list, no page
scrolls sideways, and every row's actions stay on the screen."""

from __future__ import annotations

import uuid

import pytest
from pages_support import serious_violations, signed_in_tab, task_on_dataset

pytestmark = pytest.mark.browser

SIZES = {"laptop": {"width": 1366, "height": 768}, "phone": {"width": 375, "height": 812}}
PY = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"


@pytest.fixture(scope="module")
def long_names(live):
    tag = uuid.uuid4().hex[:6]
    names = {"word": ("W" + tag + "x" * 200)[:200], "chinese": ("长名称" + tag + "评估器" * 70)[:200]}
    pages = []
    with live.api() as api:
        for name in names.values():
            made = api.post("/evaluators", json={"name": name, "type": "code",
                                                 "config": {"language": "python", "code": PY}})
            assert made.status_code == 200, made.text
            task = task_on_dataset(api, name, [{"evaluatorId": made.json()["data"]["id"]}],
                                   [{"id": "a", "input": "q", "output": "a"}], name)
            pages += [f"/evaluators/{made.json()['data']['id']}", f"/tasks/{task['id']}",
                      f"/datasets/{task['datasetId']}"]
    return tag, names, pages


def overflow(page) -> dict:
    """How far the page scrolls sideways, and the actions whose right edge is off the screen."""
    return page.evaluate("""() => ({
      sideways: document.documentElement.scrollWidth - window.innerWidth,
      offScreen: [...document.querySelectorAll('td.actions a, td.actions button, td a.action')]
        .filter((el) => { const r = el.getBoundingClientRect(); return r.right > window.innerWidth + 0.5 || r.left < 0; })
        .map((el) => el.textContent),
      wideCells: [...document.querySelectorAll('table td')]
        .filter((td) => td.scrollWidth > td.clientWidth + 1 && getComputedStyle(td).overflow !== 'hidden')
        .map((td) => td.dataset.label || td.className).slice(0, 5),
    })""")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("path", ["/evaluators?tab=custom&q={tag}", "/tasks?q={tag}", "/datasets?q={tag}"])
def test_a_long_name_stays_inside_its_column(browser, live, long_names, size, path, shots):
    tag, names, _ = long_names
    with signed_in_tab(browser, live, viewport=SIZES[size]) as page:
        page.goto(live.url + path.format(tag=tag))
        page.locator("table tbody tr").nth(1).wait_for()
        found = overflow(page)
        assert found == {"sideways": 0, "offScreen": [], "wideCells": []}, found
        text = page.locator("table tbody").inner_text()
        assert names["chinese"][:20] in text
        page.screenshot(path=shots / f"long-names-{path.split('?')[0].strip('/')}-{size}.png", full_page=True)
        assert serious_violations(page) == []


@pytest.mark.parametrize("size", SIZES)
def test_a_long_name_heads_its_own_page_without_sideways_scroll(browser, live, long_names, size, shots):
    _, names, pages = long_names
    with signed_in_tab(browser, live, viewport=SIZES[size]) as page:
        for path in pages:
            page.goto(live.url + path)
            page.wait_for_load_state("networkidle")
            page.wait_for_function("!document.querySelector('.state.loading')")
            page.screenshot(path=shots / f"long-{size}-{path.split('/')[1]}.png", full_page=True)
            assert overflow(page)["sideways"] == 0, path


COVERED = """() => {
  const shown = [...document.querySelectorAll('.toast')];
  const controls = [...document.querySelectorAll('a, button, input, select, textarea, summary')].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < window.innerHeight && r.right > 0
      && r.left < window.innerWidth;
  });
  return {
    toasts: shown.length,
    covered: controls.filter((el) => {
      const r = el.getBoundingClientRect();
      const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return top && !el.contains(top) && !top.contains(el) && shown.some((t) => t.contains(top));
    }).map((el) => el.id || el.textContent.trim().slice(0, 20)),
  };
}"""


@pytest.mark.parametrize("size", SIZES)
def test_a_toast_covers_no_control(browser, live, long_names, size):
    """A save's toast (a long name's, which wraps) shows above the page, moving it down: every
    control on the screen is still the element at its own centre."""
    _, names, pages = long_names
    with signed_in_tab(browser, live, viewport=SIZES[size]) as page:
        page.goto(live.url + pages[2])  # a dataset's page: its save toasts the name
        page.click("#edit-details")
        page.click("#save-details")
        page.locator(".toast").first.wait_for()
        assert page.evaluate(COVERED) == {"toasts": 1, "covered": []}
        page.locator(".toast").first.wait_for(state="detached")
