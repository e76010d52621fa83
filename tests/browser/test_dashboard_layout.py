"""The dashboard's layout holds on a laptop and a phone (headless Chromium, measured).

At 1280 and 1440 px no table is wider than its container and no cell cuts its content;
at 390 px nothing scrolls sideways, every money figure is on screen, and the charts are
drawn for the width: their text is at least 11 px as rendered (SVG text scaled down by a
viewBox counts at its rendered size, not its declared one) and inside the chart. Every
view at 390 and 1440 px is written to $COSTTRACKER_SCREENSHOTS (``make screenshots``:
docs/dashboard/).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.support import View

VIEWS = {
    "now": "#/now",
    "jobs": "#/jobs?days=30",
    "job": "#/job/llama-pretrain",
    "job-spot": "#/job/vit-spot",
    "compare": "#/compare?jobs=llama-sft,llama-sft-gpu",
    "spend": "#/spend?group_by=team&from=2026-11-02&to=2026-11-15",
    "budgets": "#/budgets",
    "change": "#/change?from0=2026-11-02&to0=2026-11-08&from1=2026-11-09&to1=2026-11-15",
}
LAPTOPS = (1280, 1440)
PHONE = 390
MIN_TEXT_PX = 11.0

# What overflows, measured in the page: tables against main's content box, cells against
# their own box, the wrapper's scroll width, and the document's.
TABLES = """() => {
  const main = document.querySelector('main');
  const box = main.getBoundingClientRect();
  const style = getComputedStyle(main);
  const left = box.left + parseFloat(style.paddingLeft) - 1;
  const right = box.right - parseFloat(style.paddingRight) + 1;
  const out = [];
  for (const t of main.querySelectorAll('table')) {
    const r = t.getBoundingClientRect();
    const wrap = t.parentElement;
    if (r.left < left || r.right > right || wrap.scrollWidth > wrap.clientWidth + 1) {
      out.push(`table ${t.dataset.table}: ${Math.round(r.left)}..${Math.round(r.right)} in ` +
        `${Math.round(left)}..${Math.round(right)}, ` +
        `scrolls ${wrap.scrollWidth}/${wrap.clientWidth}`);
    }
    for (const cell of t.querySelectorAll('td, th')) {
      if (cell.scrollWidth > cell.clientWidth + 1) {
        out.push(`table ${t.dataset.table}: a cell cuts "${cell.innerText.slice(0, 30)}"`);
      }
    }
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) out.push(`page ${page.scrollWidth}px wide`);
  return out;
}"""

# Money on a phone: each figure cell inside the viewport, with its text not cut.
MONEY_ON_SCREEN = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const cell of document.querySelectorAll('main td.num')) {
    const r = cell.getBoundingClientRect();
    if (!cell.innerText.trim()) continue;
    if (r.width === 0 || r.left < -1 || r.right > width + 1) {
      out.push(`"${cell.innerText}" at ${Math.round(r.left)}..${Math.round(r.right)} of ${width}`);
    }
  }
  return out;
}"""

# Every chart's text at its rendered size (declared size times the viewBox's scale), and
# inside its chart.
CHART_TEXT = """(minimum) => {
  const out = [];
  for (const chart of document.querySelectorAll('main svg.chart')) {
    const box = chart.getBoundingClientRect();
    const scale = box.width / chart.viewBox.baseVal.width;
    for (const text of chart.querySelectorAll('text')) {
      const size = parseFloat(getComputedStyle(text).fontSize) * scale;
      const r = text.getBoundingClientRect();
      if (size < minimum) out.push(`"${text.textContent}" ${size.toFixed(1)}px`);
      if (r.left < box.left - 1 || r.right > box.right + 1) {
        out.push(`"${text.textContent}" outside its chart (${Math.round(r.left)}..` +
          `${Math.round(r.right)} in ${Math.round(box.left)}..${Math.round(box.right)})`);
      }
    }
  }
  return out;
}"""

# Every element that shows text of its own, at its computed size.
PAGE_TEXT = """(minimum) => {
  const out = [];
  for (const node of document.querySelectorAll('main *')) {
    if (node.closest('svg')) continue;
    const own = [...node.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !node.getClientRects().length) continue;
    const size = parseFloat(getComputedStyle(node).fontSize);
    const what = `${node.tagName}.${node.className} "${node.textContent.slice(0, 20)}"`;
    if (size < minimum) out.push(`${what} ${size}px`);
  }
  return out;
}"""


@pytest.mark.parametrize("width", LAPTOPS)
@pytest.mark.parametrize("name", VIEWS)
def test_on_a_laptop_no_table_is_wider_than_its_container(
    browser: Any, demo: str, name: str, width: int
) -> None:
    view = View(browser, demo, width=width, height=900).open(VIEWS[name])
    assert view.page.locator("main table").count() > 0
    assert view.page.evaluate(TABLES) == []
    assert view.page.evaluate(CHART_TEXT, MIN_TEXT_PX) == []
    if width == 1440:
        view.shot(f"{name}-1440")
    view.close()


@pytest.mark.parametrize("name", VIEWS)
def test_on_a_phone_the_money_is_on_screen_and_the_text_readable(
    browser: Any, demo: str, name: str
) -> None:
    view = View(browser, demo, width=PHONE, height=844).open(VIEWS[name])
    assert view.page.evaluate(TABLES) == []
    assert view.page.evaluate(MONEY_ON_SCREEN) == []
    assert view.page.evaluate(CHART_TEXT, MIN_TEXT_PX) == []
    assert view.page.evaluate(PAGE_TEXT, MIN_TEXT_PX) == []
    view.shot(f"{name}-390")
    view.close()


def test_charts_are_redrawn_when_the_window_narrows(browser: Any, demo: str) -> None:
    view = View(browser, demo, width=1440, height=900).open(VIEWS["job"])
    wide = view.page.evaluate("document.querySelector('svg.chart').viewBox.baseVal.width")
    view.page.set_viewport_size({"width": PHONE, "height": 844})
    view.page.wait_for_function(
        "(w) => document.querySelector('main[aria-busy=false] svg.chart')"
        " && document.querySelector('svg.chart').viewBox.baseVal.width < w",
        arg=wide,
        timeout=10_000,
    )
    assert view.page.evaluate(CHART_TEXT, MIN_TEXT_PX) == []
    view.close()
