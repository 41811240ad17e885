"""The HTML export page in headless Chromium, as a pi user uses it (issue 27.2): pi's five
/tree filters (checked against the real pi 1.6.0's /tree on the same file), search, deep
links that open the outline, the branch points' links to abandoned branches, cost per branch,
rendered Markdown with highlighted code, tool calls named by their main argument, dark and
light themes, 420 px and desktop widths without sideways overflow, and the print view.
Screenshots are written next to the test's files (look at them with an image viewer)."""

import json

import pytest

import browser
from builders import SessionBuilder, branchy
from pi_harness import HARNESS, NODE22

needs_chromium = pytest.mark.skipif(browser.executable() is None,
                                    reason="chromium is not installed (make shell-tools installs it as root)")
FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"]


def rich_session(path):
    """branchy() plus Markdown, a code block, a wide table and a long unbroken line."""
    b = branchy()
    b.user("Show me **the** plan:\n\n1. parse\n2. test\n\n| col | another col |\n|---|---|\n| "
           + "x" * 300 + " | y |\n\n```python\ndef f(x):\n    return x  # done\n```\n\n" + "z" * 500)
    b.tool_round("read", {"path": "/home/dev/proj/src/very/long/path/" + "d/" * 60 + "file.py"}, "print(1)\n" * 40)
    b.assistant("Done: see [the docs](https://example.invalid/docs).")
    return b.write(path)


@pytest.fixture
def page_of(stree, tmp_path):
    pages = []

    def open_page(session, width=1280, height=900, fragment="", name="page"):
        html = tmp_path / f"{name}.html"
        if not html.exists():
            r = stree("-s", session, "export", "-o", html)
            assert r.code == 0, r
        page = browser.Page(tmp_path / f"profile-{len(pages)}")
        pages.append(page)
        page.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": width < 600})
        page.open(html.as_uri() + fragment)
        assert page.evaluate("document.documentElement.getAttribute('data-stree')") == "ready"
        return page

    yield open_page
    for page in pages:
        page.close()


def pi_tree(path, mode):
    """pi 1.6.0's /tree on the file, through the harness: the ids it shows with filter `mode`."""
    import subprocess

    proc = subprocess.run([str(NODE22), str(HARNESS), "--pi", "1.6.0", "graph", str(path), "--filter", mode],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def shown_ids(page):
    return page.evaluate("[...document.querySelectorAll('nav li.e')].filter(li => !li.hidden)"
                         ".map(li => decodeURIComponent(li.firstChild.getAttribute('href').slice(3)))")


@needs_chromium
def test_the_five_filters_show_what_pis_tree_shows(page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    expected = [pi_tree(path, f) for f in FILTERS]
    page = page_of(path)
    for mode, pi_view in zip(FILTERS, expected):
        page.evaluate(f"document.querySelector('button[data-filter=\"{mode}\"]').click()")
        assert sorted(shown_ids(page)) == sorted(pi_view["ids"]), mode
        total = page.evaluate("document.querySelectorAll('nav li.e').length")
        assert page.evaluate("document.getElementById('status').textContent") == f"{len(pi_view['ids'])} / {total} entries"


@needs_chromium
def test_search_finds_words_anywhere_in_an_entry_and_opens_their_branch(page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    page = page_of(path)
    page.evaluate("document.querySelector('button[data-filter=\"all\"]').click()")
    search = page.evaluate("""(() => { const s = document.getElementById('search'); s.focus(); return true; })()""")
    assert search
    page.call("Input.insertText", {"text": "csv MODULE"})  # typed, as a user types
    # the search runs after a short pause in typing: wait for its sign (the status changes)
    page.call("Runtime.evaluate", {"awaitPromise": True, "expression": """new Promise(done => {
        const status = document.getElementById('status'), before = status.textContent;
        new MutationObserver(() => done()).observe(status, {childList: true, characterData: true, subtree: true});
        setTimeout(done, 30000); })"""})
    ids = shown_ids(page)
    entries = [json.loads(line) for line in open(path)][1:]
    for e in entries:
        if e["id"] in ids:
            assert all(w in json.dumps(e).lower() for w in ("csv", "module")), e
    hits = [e["id"] for e in entries if e["type"] == "message"
            and "csv module" in json.dumps(e["message"].get("content")).lower()]
    assert hits and set(hits) <= set(ids)
    # a hit in the abandoned branch: its fold in the outline is opened
    abandoned = "00000009"  # "Switched to the csv module." (branchy's abandoned branch)
    assert abandoned in ids
    assert page.evaluate(f"document.querySelector('nav a[href=\"#e-{abandoned}\"]').checkVisibility()")


@needs_chromium
def test_a_deep_link_opens_the_entry_and_the_outline(page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    target = "00000009"  # in the abandoned branch, folded by default
    page = page_of(path, fragment=f"#e-{target}")
    assert page.evaluate(f"document.getElementById('e-{target}').checkVisibility()")
    nav_link = f"document.querySelector('nav a[href=\"#e-{target}\"]')"
    assert page.evaluate(f"{nav_link}.checkVisibility()")
    assert page.evaluate(f"{nav_link}.classList.contains('current')")
    # from the branch point, one click reaches the abandoned branch
    page.evaluate("document.getElementById('collapse-all').click(); location.hash = ''")
    fork = page.evaluate("[...document.querySelectorAll('main p.fork a')].map(a => a.getAttribute('href'))")
    assert fork == ["#e-00000004"]  # branchy's abandoned branch leaves the read's result with this answer
    page.evaluate("document.querySelector('main p.fork a').click()")
    assert page.evaluate("document.getElementById('e-00000004').checkVisibility()")
    assert page.evaluate(f"document.getElementById('e-{target}').checkVisibility()")


@needs_chromium
def test_costs_per_branch_add_up_to_the_sessions(stree, page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    entries = [json.loads(line) for line in open(path)][1:]
    for e in entries:  # give every assistant message a cost
        if e.get("message", {}).get("role") == "assistant":
            e["message"]["usage"]["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.0125}
    header = open(path).readline()
    path.write_text(header + "".join(json.dumps(e) + "\n" for e in entries))
    page = page_of(path)
    costs = page.evaluate("[...document.querySelectorAll('main details.branch > summary')].map(s => s.textContent)")
    import re

    total = sum(float(re.search(r"\$([0-9.]+)", c).group(1)) for c in costs if "$" in c)
    n = sum(1 for e in entries if e.get("message", {}).get("role") == "assistant")
    assert round(total, 4) == round(0.0125 * n, 4)
    assert f"cost: ${0.0125 * n:,.4f}" in page.evaluate("document.querySelector('header').textContent")


@needs_chromium
def test_markdown_code_and_tool_calls_as_a_reader_sees_them(page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    page = page_of(path)
    assert page.evaluate("[...document.querySelectorAll('.md strong')].some(s => s.textContent == 'the')")
    assert page.evaluate("document.querySelectorAll('.md ol > li').length") >= 2
    assert page.evaluate("document.querySelectorAll('.md table td').length") >= 2
    # highlighted at export time: the keyword and the comment have their own colours
    colours = page.evaluate("""(() => { const c = document.querySelector('code.language-python');
        return [...c.querySelectorAll('span')].map(s => [s.textContent, getComputedStyle(s).color]); })()""")
    by_text = dict((t, c) for t, c in colours)
    assert by_text["def"] != by_text["# done"] and by_text["def"] != page.evaluate(
        "getComputedStyle(document.querySelector('code.language-python')).color")
    calls = page.evaluate("[...document.querySelectorAll('details.tool > summary .call')].map(s => s.textContent)")
    assert "[read: src/parser.py]" in calls and "[bash: pytest -q tests/test_parser.py]" in calls
    assert not any("call_" in c for c in calls)  # never the call id
    assert page.evaluate("[...document.querySelectorAll('details.tool')].every(d => !d.open)")
    # links are text, with their address shown, never a live link
    assert page.evaluate("document.querySelectorAll('main a[href^=\"http\"]').length") == 0
    assert "⟨https://example.invalid/docs⟩" in page.evaluate("document.querySelector('main').textContent")


@needs_chromium
@pytest.mark.parametrize("width", [420, 1280])
def test_no_sideways_overflow_at_phone_and_desktop_width(page_of, tmp_path, width):
    path = rich_session(tmp_path / "s.jsonl")
    page = page_of(path, width=width, name=f"w{width}")
    page.evaluate("document.getElementById('expand-all').click()")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    png = page.screenshot()
    (tmp_path / f"page-{width}.png").write_bytes(png)
    w, h, distinct = browser.png_info(png)
    assert w == width and distinct > 20


@needs_chromium
def test_dark_and_light_themes(page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    page = page_of(path)
    background = "getComputedStyle(document.body).backgroundColor"
    light = page.evaluate(background)
    page.evaluate("document.getElementById('theme').click()")
    dark = page.evaluate(background)
    assert light == "rgb(255, 255, 255)" and dark != light
    lum = [int(x) for x in dark[4:-1].split(",")]
    assert sum(lum) < 120  # a dark page
    (tmp_path / "dark.png").write_bytes(page.screenshot())
    page.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    page.evaluate("document.documentElement.removeAttribute('data-theme')")
    assert page.evaluate(background) == dark  # the reader's own preference, without a click


@needs_chromium
def test_the_printable_view(page_of, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    page = page_of(path)
    page.call("Emulation.setEmulatedMedia", {"media": "print"})
    assert page.evaluate("getComputedStyle(document.getElementById('outline')).display") == "none"
    assert page.evaluate("getComputedStyle(document.querySelector('.controls')).display") == "none"
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.evaluate("[...document.querySelectorAll('main details')].every(d => d.open)")  # all of it on paper
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert page.evaluate("[...document.querySelectorAll('main details.tool')].every(d => !d.open)")
    pdf = page.call("Page.printToPDF", {})["data"]
    assert len(pdf) > 1000


def test_tool_calls_are_named_by_their_main_argument_without_a_browser(stree, tmp_path):
    b = SessionBuilder()
    b.user("go")
    b.tool_round("bash", {"command": "git status"}, "clean")
    b.tool_round("read", {"path": "/etc/hosts", "offset": 10, "limit": 5}, "x")
    path = b.write(tmp_path / "t.jsonl")
    html = stree("-s", path, "export", "-o", "-", "--format", "html").out
    assert '<span class="call">[bash: git status]</span>' in html
    assert '<span class="call">[read: /etc/hosts:10-14]</span>' in html


def test_text_the_markdown_parser_would_crawl_over_is_shown_preformatted(stree, tmp_path):
    """markdown-it's bracket and emphasis scans grow faster than the text (200,000 characters of
    `![` took 12 s): past 100,000 characters or 5,000 `[` a message is shown as escaped <pre>."""
    b = SessionBuilder()
    b.user("![" * 6000)
    b.user("**bold** " + "word " * 25000)
    b.user("**bold** and a [link](https://example.invalid)")
    path = b.write(tmp_path / "slow.jsonl")
    html = stree("-s", path, "export", "-o", "-", "--format", "html").out
    assert html.count('<pre class="text">') == 2
    assert '<pre class="text">' + "![" * 6000 + "</pre>" in html and '<pre class="text">**bold** word' in html
    assert "<strong>bold</strong> and a" in html
