"""The web page in Debian's headless Chromium, driven by Selenium through Debian's chromedriver:
load the page, chunk a Chinese and an English sample, check the coloured spans (exactly the text,
ids on hover), the tree and the plot, save to the project, search, and keep screenshots.

Skips only when Chromium, chromedriver or a CJK font is not installed (CI installs them with apt, and
fails on such a skip: tests/ci_skips.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

import pytest

pytest.importorskip("uvicorn", reason="the service tests need the [service] extra")
webdriver = pytest.importorskip("selenium.webdriver", reason="the browser test needs selenium (the [dev] extra)")

from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from service_helpers import EN, KEY, ZH, serve  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not CHROMIUM or not DRIVER:
        pytest.skip("chromium/chromedriver not installed (apt-get install chromium chromium-driver)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    o = Options()
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,1700"):
        o.add_argument(a)
    o.binary_location = CHROMIUM
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=o)
    drv.set_page_load_timeout(30)
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory):
    db = str(tmp_path_factory.mktemp("browser") / "page.db")
    with serve(db, "--debounce-ms", "300") as (url, _proc, _lines):
        browser.get(url + "/#key=" + KEY)
        wait(browser).until(lambda d: d.find_element(By.ID, "conn").text != "")
        yield browser


def wait(drv, seconds: float = 20) -> WebDriverWait:
    return WebDriverWait(drv, seconds)


def chunk_sample(drv, which: str, expected: str) -> list:
    drv.find_element(By.ID, f"sample-{which}").click()
    wait(drv).until(lambda d: d.find_element(By.ID, "text").get_attribute("value") == expected)
    view = drv.find_element(By.ID, "text-view")
    before = int(view.get_attribute("data-renders") or 0)
    drv.find_element(By.ID, "chunk-btn").click()
    wait(drv).until(lambda d: int(view.get_attribute("data-renders") or 0) > before)  # a new view is drawn
    assert view.get_attribute("data-source") == "playground"
    return drv.find_elements(By.CSS_SELECTOR, "#text-view .chunk")


def text_view(drv) -> str:
    # textContent, not .text: the DOM's text, exactly, with its whitespace
    return drv.execute_script("return document.getElementById('text-view').textContent")


@pytest.mark.parametrize("which,expected", [("zh", ZH), ("en", EN)], ids=["zh", "en"])
def test_chunk_a_sample(page, which, expected, tmp_path):
    spans = chunk_sample(page, which, expected)
    assert len(spans) >= 3
    assert text_view(page) == expected  # the coloured spans are the text, nothing added or lost
    colours = {c for s in spans for c in s.get_attribute("class").split() if c.startswith("c") and c[1:].isdigit()}
    assert len(colours) >= 3
    ids = [s.get_attribute("data-id") for s in spans]
    assert all(ids) and len(set(ids)) == len(ids)
    # hovering a chunk shows its id
    ActionChains(page).move_to_element(spans[1]).perform()
    tip = page.find_element(By.ID, "tooltip")
    wait(page, 5).until(lambda d: tip.is_displayed())
    assert ids[1] in tip.text
    # the tree has a node for every chunk, and the top level is open
    tree_ids = {e.get_attribute("data-id") for e in page.find_elements(By.CSS_SELECTOR, "#tree [data-id]")}
    assert set(ids) <= tree_ids
    assert page.find_elements(By.CSS_SELECTOR, "#tree details[open]")
    # the plot: a curve, one line per cut, a threshold line
    svg = page.find_element(By.CSS_SELECTOR, "#plot svg")
    assert svg.find_elements(By.CSS_SELECTOR, "polyline.curve")
    cuts = svg.find_elements(By.CSS_SELECTOR, "line.cut1, line.cut2, line.cut3")
    assert len(cuts) >= len(spans) - 1
    # clicking a tree node selects its chunk in the text
    node = page.find_element(By.CSS_SELECTOR, f'#tree [data-id="{ids[2]}"] .node-id')
    node.click()
    wait(page, 5).until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#text-view .chunk.selected[data-id="{ids[2]}"]'))
    page.save_screenshot(str(tmp_path / f"chunked-{which}.png"))
    assert (tmp_path / f"chunked-{which}.png").stat().st_size > 10_000


def test_upload_a_pdf_and_a_utf16_file(page, tmp_path):
    """A PDF picked in the file box is read by the server (its pages joined by form feeds) and chunked;
    so is a UTF-16 file, which the page cannot decode itself; a broken PDF says why in the status."""
    from pdf_helpers import make_pdf

    pages = [(["Acme Valve Manual"] if k else []) + [f"The valve on page {k + 1} is checked by hand.", str(k + 1)]
             for k in range(4)]
    (tmp_path / "manual.pdf").write_bytes(make_pdf(pages))
    box = page.find_element(By.ID, "text")
    page.find_element(By.ID, "file").send_keys(str(tmp_path / "manual.pdf"))
    wait(page).until(lambda d: "page 4 is checked" in box.get_attribute("value"))
    text = box.get_attribute("value")
    assert text.count("\f") == 3 and page.find_element(By.ID, "chunk-status").text == "manual.pdf"
    page.find_element(By.ID, "chunk-btn").click()
    wait(page).until(lambda d: text_view(d) == text)  # the chunks are the PDF's text, nothing added or lost
    (tmp_path / "notes.txt").write_bytes("第一行。\n第二行。\n".encode("utf-16"))
    page.find_element(By.ID, "file").send_keys(str(tmp_path / "notes.txt"))
    wait(page).until(lambda d: box.get_attribute("value") == "第一行。\n第二行。\n")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n" + bytes(range(256)))
    page.find_element(By.ID, "file").send_keys(str(tmp_path / "broken.pdf"))
    status = page.find_element(By.ID, "chunk-status")
    wait(page).until(lambda d: "not a readable PDF" in status.text)
    # the browser logs that refusal (a 400) and nothing else
    errors = [e["message"] for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert len(errors) == 1 and "/api/read?name=broken.pdf" in errors[0] and "400" in errors[0], errors


def test_save_search_and_switch_language(page, tmp_path):
    chunk_sample(page, "zh", ZH)
    page.find_element(By.ID, "save-btn").click()
    wait(page, 40).until(lambda d: d.find_element(By.ID, "text-view").get_attribute("data-source") == "document")
    wait(page, 40).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#block-list li"))
    wait(page, 40).until(lambda d: all(b.get_attribute("data-state") == "clean"
                                       for b in d.find_elements(By.CSS_SELECTOR, "#block-list .badge")))
    assert text_view(page) == ZH  # the stored document, drawn from the server's tree
    assert page.find_elements(By.CSS_SELECTOR, "#doc-list li.active")
    q = page.find_element(By.ID, "query")
    q.clear()
    q.send_keys("渔人看到了什么样的桃花林")
    page.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results li"))
    hits = page.find_elements(By.CSS_SELECTOR, "#results li")
    marks = page.find_elements(By.CSS_SELECTOR, "#results li mark")
    assert marks and all(m.text.strip() for m in marks)
    body = hits[0].find_element(By.CSS_SELECTOR, ".hit-text").text
    assert marks[0].text.strip() in body  # the child is shown inside its parent
    hits[0].click()  # opens the chunk in the text view
    wait(page, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#text-view .chunk.selected"))
    page.find_element(By.ID, "lang").click()
    wait(page, 5).until(lambda d: d.find_element(By.CSS_SELECTOR, "#search-card h2").text == "检索")
    assert page.find_element(By.ID, "chunk-btn").text == "切分"
    time.sleep(0.3)
    page.save_screenshot(str(tmp_path / "search-zh.png"))
    page.find_element(By.ID, "lang").click()
    errors = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_edit_a_block_shows_status_until_rechunked(page):
    if not page.find_elements(By.CSS_SELECTOR, "#block-list li"):
        pytest.skip("needs the saved document of the previous test")
    page.find_elements(By.CSS_SELECTOR, "#block-list li button")[1].click()
    dlg = page.find_element(By.ID, "edit-dialog")
    wait(page, 10).until(lambda d: dlg.is_displayed() and d.find_element(By.ID, "edit-text").get_attribute("value"))
    box = page.find_element(By.ID, "edit-text")
    box.send_keys(" 渔人又来了。")
    wait(page, 10).until(lambda d: d.find_element(By.ID, "edit-status").get_attribute("data-state")
                         in ("queued", "running", "clean"))
    wait(page, 20).until(lambda d: d.find_element(By.ID, "edit-status").get_attribute("data-state") == "clean")
    page.find_element(By.ID, "edit-close").click()
    wait(page, 20).until(lambda d: "渔人又来了" in text_view(d))


def test_an_edit_conflict_refreshes_the_document_view(page):
    """Another client changes the block being edited: the editor reloads their text (keeping ours
    to copy) and the document view shows the stored text, not the old one."""
    if not page.find_elements(By.CSS_SELECTOR, "#block-list li"):
        pytest.skip("needs the saved document of the earlier tests")
    page.find_elements(By.CSS_SELECTOR, "#block-list li button")[0].click()
    dlg = page.find_element(By.ID, "edit-dialog")
    wait(page, 10).until(lambda d: dlg.is_displayed() and d.find_element(By.ID, "edit-text").get_attribute("value"))
    block = page.find_element(By.ID, "edit-id").text
    theirs = "另一位用户改写了这一段。\n\n"
    status = page.execute_async_script("""
        const [block, key, text, done] = arguments;
        const base = "/api/projects/default/blocks/" + block, h = {"X-API-Key": key, "Content-Type": "application/json"};
        fetch(base, {headers: h}).then(r => r.json()).then(b => fetch(base, {method: "PUT", headers: h,
            body: JSON.stringify({content: text, expected_revision: b.revision})})).then(r => done(r.status));
    """, block, KEY, theirs)
    assert status == 202
    page.find_element(By.ID, "edit-text").send_keys(" 我的修改。")
    wait(page, 15).until(lambda d: d.find_element(By.ID, "edit-status").get_attribute("data-state") in ("conflict", "clean", "queued", "running")
                         and "我的修改" not in d.find_element(By.ID, "edit-text").get_attribute("value"))
    assert "我的修改" in page.find_element(By.ID, "edit-msg").text or page.find_elements(By.CSS_SELECTOR, "#edit-msg details")
    page.find_element(By.ID, "edit-close").click()
    wait(page, 20).until(lambda d: "另一位用户改写了这一段" in text_view(d))


def cjk_font_installed() -> bool:
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(out.strip())


# Drawn one by one in the text view's own font: with no font for them, every one is the same empty box.
GLYPHS_JS = """
const family = getComputedStyle(document.getElementById('text-view')).fontFamily;
const c = document.createElement('canvas'); c.width = 64; c.height = 64;
const g = c.getContext('2d');
return arguments[0].map(ch => { g.clearRect(0, 0, 64, 64); g.fillStyle = '#000'; g.font = '40px ' + family;
                               g.fillText(ch, 8, 48); return c.toDataURL(); });
"""


def test_the_page_in_both_languages_draws_chinese(page, tmp_path):
    """Screenshots of the Chinese sample chunked under each interface language: the labels follow the
    language, and Chinese text is drawn in a real font (distinct glyphs), not as boxes."""
    if not cjk_font_installed():
        pytest.skip("no CJK font installed (apt-get install fonts-wqy-microhei): Chinese would be drawn as boxes")
    shots = {}
    for lang, chunk_label, html_lang in (("en", "Chunk", "en"), ("zh", "切分", "zh-CN")):
        if page.find_element(By.TAG_NAME, "html").get_attribute("lang") != html_lang:
            page.find_element(By.ID, "lang").click()
        wait(page, 5).until(lambda d, h=html_lang: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == h)
        assert page.find_element(By.ID, "chunk-btn").text == chunk_label
        chunk_sample(page, "zh", ZH)
        assert text_view(page) == ZH
        blank, *glyphs = page.execute_script(GLYPHS_JS, [" ", "桃", "花", "源", "记", "渔", "人"])
        assert blank not in glyphs and len(set(glyphs)) == len(glyphs), "Chinese drawn as identical boxes"
        path = tmp_path / f"page-{lang}-zh-sample.png"
        page.save_screenshot(str(path))
        shots[lang] = path.read_bytes()
        assert len(shots[lang]) > 10_000
    assert shots["en"] != shots["zh"]  # the interface's words changed with the language
    page.find_element(By.ID, "lang").click()  # back to English for the tests after this one
    wait(page, 5).until(lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en")


def test_a_saved_pdfs_search_hit_names_its_page(page, tmp_path):
    """A PDF saved to the project and searched: the hit says which page its text is on."""
    from pdf_helpers import make_pdf

    words = ["granite", "marble", "basalt", "quartz"]
    pages = [(["Stone Survey Notes"] if k else []) + [f"The {w} quarry on page {k + 1} was surveyed by hand.", str(k + 1)]
             for k, w in enumerate(words)]
    (tmp_path / "survey.pdf").write_bytes(make_pdf(pages))
    page.find_element(By.ID, "file").send_keys(str(tmp_path / "survey.pdf"))
    box = page.find_element(By.ID, "text")
    wait(page).until(lambda d: "basalt quarry" in box.get_attribute("value"))
    page.find_element(By.ID, "save-btn").click()
    wait(page, 40).until(lambda d: d.find_element(By.ID, "text-view").get_attribute("data-source") == "document"
                         and "basalt quarry" in text_view(d))
    q = page.find_element(By.ID, "query")
    q.clear()
    q.send_keys("basalt quarry surveyed")
    page.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results li .hit-pages"))
    first = page.find_elements(By.CSS_SELECTOR, "#results li")[0]
    assert "basalt" in first.find_element(By.CSS_SELECTOR, ".hit-text").text
    label = first.find_element(By.CSS_SELECTOR, ".hit-pages").text  # "p. 3", or a parent's "p. 1–4"
    m = re.fullmatch(r"p\. (\d+)(?:–(\d+))?", label)
    assert m and int(m.group(1)) <= 3 <= int(m.group(2) or m.group(1)), label


def test_the_api_explorer_draws_the_api(browser, tmp_path):
    """/docs: the bundled Swagger UI (4.x, OpenAPI 3.0 only) reads the 3.0 view of the schema and
    lists the routes, offline; it drew an error about the 3.1 version field before."""
    with serve(str(tmp_path / "docs.db")) as (url, _proc, _lines):
        browser.get(url + "/docs")
        wait(browser).until(lambda d: "/api/projects/{project}/search" in d.find_element(By.TAG_NAME, "body").text)
        body = browser.find_element(By.TAG_NAME, "body").text
        assert "Unable to render" not in body and "/api/health" in body
        sent = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert sent and all(u.startswith(url) for u in sent)  # nothing from elsewhere
        # the success answers are drawn from their models: the tree's example shows a node's fields
        # (a oneOf by `kind`), the search's a hit's nullable view (allOf + nullable in 3.0)
        for op, fields in (("get_tree_api_projects__project__documents__doc_id__tree_get", ('"stale"', '"kind"')),
                           ("search_post_api_projects__project__search_post", ('"hits"', '"highlight"'))):
            browser.find_element(By.CSS_SELECTOR, f"[id$='{op}'] .opblock-summary").click()
            wait(browser).until(lambda d, op=op: d.find_elements(By.CSS_SELECTOR, f"[id$='{op}'] .responses-table"))
            text = browser.find_element(By.CSS_SELECTOR, f"[id$='{op}']").text
            assert all(f in text for f in fields), (op, text[:2000])
        body = browser.find_element(By.TAG_NAME, "body").text
        assert "SearchAnswer" in body and "DocumentTree" in body  # the Schemas section lists the models
        assert "Resolver error" not in body and "Could not resolve" not in body
