"""The Markdown export is inert in CommonMark renderers with raw HTML on (issue 24.14, 24.15):
hostile sessions exported by a real `stree export` subprocess, rendered by markdown-it-py with
html=True, the HTML checked tag by tag, then opened in headless Chromium with a beacon server
on 127.0.0.1 that counts every request."""

import http.server
import random
import re
import threading
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

import browser
from builders import SessionBuilder

PAYLOAD = '<img src="http://127.0.0.1:PORT/r.png" onerror="window.pwned=1">'
RESULT = '<img data-result src="http://127.0.0.1:PORT/r.png" onerror="window.pwned=13">'
# prose that tries to open or close a fence, start raw HTML, a link, an image or an autolink
FRAGMENTS = [
    "```", "````", "`````python", "~~~", "~~~~ x", "   ```", "> ```", "- ```", "1. ~~~", "    ```",
    "``` <img src=x onerror=window.pwned=2>", "`", "``", "`unclosed <b>", "``a`` <i>", "`<img src=x onerror=window.pwned=3>`",
    PAYLOAD, "<script>window.pwned=4</script>", "<details open>", "</details>", "</summary>", "<!--", "-->",
    "<![CDATA[", "<?php", "<!DOCTYPE x>", "<style>*{background:url(http://127.0.0.1:PORT/css)}</style>",
    "[link](http://127.0.0.1:PORT/link)", "![pixel](http://127.0.0.1:PORT/pixel.png)",
    "[ref]: http://127.0.0.1:PORT/ref.png", "![a][ref]", "[ref]", "<http://127.0.0.1:PORT/auto>",
    "[x](javascript:window.pwned=5)", "[x](javascript\\:window.pwned=6)", "[x](<javascript:window.pwned=7>)",
    "&lt;img src=x onerror=window.pwned=8&gt;", "&#60;img src=x onerror=window.pwned=9&#62;", "\\<img src=x>",
    "\\\\<img src=x onerror=window.pwned=10>", "\\`", "\\```", "\\\\```", "\0", "\u2028", "| a | b |\n|---|---|",
    "<a href='`'>`", "`a\n\n<img src=x onerror=window.pwned=11>`", "[![i](http://127.0.0.1:PORT/n.png)](http://x)",
    "<svg onload=window.pwned=12>", "<iframe src=http://127.0.0.1:PORT/frame>", "***", "# h", "===",
]
SEPARATORS = ["\n", "\n\n", " ", "\r", "\r\n", "\r\r", "\n    ", "\n> ", ""]
ALLOWED = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "code", "pre", "blockquote", "em",
           "strong", "details", "summary", "hr", "br", "img", "table", "thead", "tbody", "tr", "th", "td", "s"}


def hostile_text(rng, port):
    parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8))]
    out = ""
    for p in parts:
        out += p.replace("PORT", str(port)) + rng.choice(SEPARATORS)
    return out


def hostile_session(rng, port, path):
    """A session whose every text is hostile prose; tool results carry live-looking HTML."""
    b = SessionBuilder()
    for _ in range(rng.randint(3, 8)):
        b.user(hostile_text(rng, port))
        a = b.assistant(hostile_text(rng, port), thinking=hostile_text(rng, port),
                        tools=[("bash", {"command": hostile_text(rng, port)})])
        call = b.entries[-1]["message"]["content"][-1]["id"]
        ticks = "`" * rng.randint(0, 12)
        b.tool_result(call, "bash", ticks + "\n" + RESULT.replace("PORT", str(port)) + "\n" + hostile_text(rng, port),
                      error=rng.random() < 0.3)
        if rng.random() < 0.4:
            b.label(a, hostile_text(rng, port))
        if rng.random() < 0.3:
            b.branch_summary(hostile_text(rng, port))
    b.name(hostile_text(rng, port))
    return b.write(path)


class Tags(HTMLParser):
    """Every start tag and its attributes."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def live_parts(html, links=False):
    """What in the rendered HTML could run or fetch: a tag outside the allowed set, an event
    handler, a link (with `links`: one to anything but http(s)), an image that is not a data:
    URI, a style."""
    parser = Tags()
    parser.feed(html)
    parser.close()
    bad = []
    for tag, attrs in parser.tags:
        if links and tag == "a" and list(attrs) == ["href"] and re.match(r"https?://", attrs["href"]):
            continue
        if tag not in ALLOWED:
            bad.append(tag)
        for name, value in attrs.items():
            if tag == "img" and name == "src" and (value or "").startswith("data:image/"):
                continue
            if tag == "img" and name == "alt" or tag == "code" and name == "class" or tag == "ol" and name == "start":
                continue
            if tag in ("th", "td") and name == "style" and value.startswith("text-align:"):
                continue
            bad.append(f"{tag} {name}={value!r}")
    return bad


def renderer():
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class Beacon(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):
        Beacon.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def beacon():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Beacon)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Beacon.hits.clear()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


SESSIONS = 24  # hostile exports rendered (each 3-8 rounds of up to 8 hostile fragments per text), a third --links


def test_hostile_markdown_exports_render_inert(stree, tmp_path, beacon):
    md = renderer()
    rng = random.Random(20261126)
    pages = []
    for n in range(SESSIONS):
        path = hostile_session(rng, beacon, tmp_path / f"h{n}.jsonl")
        links = n % 3 == 2
        r = stree("-s", path, "export", "-o", "-", "--format", "md", *(["--links"] if links else []))
        assert r.code == 0, r
        html = md.render(r.out)
        assert live_parts(html, links) == [], (n, r.out)
        if links:
            assert 'href="http://127.0.0.1' in html
        # every tool result is still whole inside a code block: no fence was closed early
        results = [i for i in range(len(html)) if html.startswith("&lt;img data-result", i)
                   and html.rfind("<summary>", 0, i) <= html.rfind("</summary>", 0, i)]  # not a summary line
        assert len(results) == r.out.count("<details><summary>result of")
        for i in results:
            assert html.rfind("<pre><code", 0, i) > html.rfind("</code></pre>", 0, i), (n, r.out)
        pages.append(html)
    if browser.executable() is None:
        pytest.skip("chromium is not installed (make shell-tools installs it as root)")
    page_file = tmp_path / "rendered.html"
    page_file.write_text("<!DOCTYPE html><html><head><meta charset=utf-8></head><body>" + "<hr>".join(pages)
                         + "</body></html>")
    page = browser.Page(tmp_path / "profile")
    try:
        page.open(page_file.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.evaluate("document.querySelectorAll('script, iframe, svg, style, [onerror]').length") == 0
        assert page.evaluate("[...document.links].every(a => /^https?:/.test(a.getAttribute('href')))")
        assert page.evaluate("document.links.length") >= SESSIONS // 3  # only the --links exports have any
        assert all(u.startswith(("file://", "data:")) for u in page.requests()), page.requests()
    finally:
        page.close()
    assert Beacon.hits == []


def test_an_unbalanced_fence_cannot_free_a_later_tool_result(stree, tmp_path):
    """24.14 as it was found: a message opens a fence that stree's own fence for a later tool
    result used to close, leaving the result's HTML live."""
    for opener, result in (("```", ""), ("````", "```"), ("~~~", ""), ("> ````", "```"), ("- ```", "")):
        b = SessionBuilder()
        b.user(f"look:\n{opener}\nnever closed")
        b.tool_round("bash", {"command": "cat page.html"}, f"{result} <img src=x onerror=alert(1)>")
        path = b.write(tmp_path / "fence.jsonl")
        out = stree("-s", path, "export", "-o", "-", "--format", "md").out
        html = renderer().render(out)
        assert live_parts(html) == [], (opener, out)
        assert "&lt;img src=x onerror=alert(1)&gt;" in html  # shown as text
        assert "never closed" in html


def test_links_and_images_are_text_not_fetched(stree, tmp_path):
    b = SessionBuilder()
    b.user("see [the docs](https://example.invalid/docs) and ![pixel](https://example.invalid/p.png) "
           "and <https://example.invalid/auto> and [x](javascript:alert(1))")
    path = b.write(tmp_path / "links.jsonl")
    out = stree("-s", path, "export", "-o", "-", "--format", "md").out
    html = renderer().render(out)
    assert "<a " not in html and "<img" not in html
    text = html.replace("&lt;", "<").replace("&gt;", ">")
    for shown in ("[the docs](https://example.invalid/docs)", "![pixel](https://example.invalid/p.png)",
                  "<https://example.invalid/auto>", "[x](javascript:alert(1))"):
        assert shown in text  # the reader still sees where it pointed


def test_links_flag_makes_http_addresses_links_and_nothing_else(stree, tmp_path):
    b = SessionBuilder()
    b.user("see [the docs](https://example.invalid/docs), https://example.invalid/plain. and "
           "![pixel](https://example.invalid/p.png) [x](javascript:alert(1)) [d](data:text/html,<b>x)")
    path = b.write(tmp_path / "links.jsonl")
    out = stree("-s", path, "export", "-o", "-", "--format", "md", "--links").out
    html = renderer().render(out)
    assert live_parts(html, links=True) == []
    hrefs = re.findall(r'<a href="([^"]*)"', html)
    assert hrefs == ["https://example.invalid/docs", "https://example.invalid/plain", "https://example.invalid/p.png"]
    assert "<img" not in html  # an image's address is a link to follow, not a picture to fetch


def test_prose_keeps_its_markdown(stree, tmp_path):
    """Inert, but still Markdown: emphasis, lists and code spans render (with < and & inside code)."""
    b = SessionBuilder()
    b.user("Use **bold**, a list:\n\n- one\n- two\n\nand `a < b && c` or ``x ` y``.")
    b.assistant("Here:\n```python\nx = '<img src=x onerror=alert(1)>'  # ````\n```\nafter\n~~~\nunclosed <b>")
    path = b.write(tmp_path / "md.jsonl")
    html = renderer().render(stree("-s", path, "export", "-o", "-", "--format", "md").out)
    assert live_parts(html) == []
    assert ('<pre><code class="language-python">x = \'&lt;img src=x onerror=alert(1)&gt;\'  # ````\n</code></pre>\n'
            '<p>after</p>') in html  # the message's own code block, in stree's fence
    assert "<pre><code>unclosed &lt;b&gt;\n</code></pre>" in html  # unclosed: to the end of its message
    assert "<strong>bold</strong>" in html and "<li>one</li>" in html
    assert "<code>a &lt; b &amp;&amp; c</code>" in html and "<code>x ` y</code>" in html


@pytest.mark.parametrize("title, expect", [
    ("Fix the parser so that `parse_line(line, delimiter)` handles quoted fields with embedded commas please",
     "Fix the parser so that `parse_line(line, delimiter)` handles quoted fields with…"),
    ("Explain why `a_very_long_function_name_that_goes_on_and_on(with, many, arguments, here)` fails today",
     "Explain why…"),
    ("short title", "short title"),
    ("`" + "a" * 100 + "`", "a" * 78 + "…"),  # all one code span: cut, no backtick left open
])
def test_titles_cut_at_a_word_never_inside_a_code_span(stree, tmp_path, title, expect):
    b = SessionBuilder()
    b.user(title + "\nsecond line")
    path = b.write(tmp_path / "t.jsonl")
    out = stree("-s", path, "export", "-o", "-", "--format", "md").out
    assert out.split("\n", 1)[0] == "# " + expect
    html = stree("-s", path, "export", "-o", "-", "--format", "html").out
    assert f"<title>{expect}</title>" in html.replace("&#x27;", "'")


PROSE_CASES = 3000  # random hostile texts rendered at each slice size


@pytest.mark.slow  # a fuzz run: PROSE_CASES texts rendered twice (make test, not make check)
@pytest.mark.parametrize("slice_size", [7, 1 << 20])
def test_prose_is_inert_wherever_its_slices_fall(monkeypatch, slice_size):
    """A 100 MB text is made inert a slice at a time; with slices of 7 characters the result
    must be as inert as with whole texts (a backslash never parted from what it escapes)."""
    from stree.output import export_md

    monkeypatch.setattr(export_md, "SLICE", slice_size)
    md = renderer()
    rng = random.Random(slice_size)
    alphabet = ["\\", "[", "]", "(", ")", "!", "`", "``", "```", "~~~", "<", ">", "&", " ", "\n", "\r", "a", "x](y)",
                "<img src=x onerror=alert(1)>", "[r]: http://127.0.0.1/p.png", "    ", "> ", "- ", "&#60;"]
    for _ in range(PROSE_CASES):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        out = "".join(export_md.prose(text)) + "\n\n" + "".join(export_md.quoted(text))
        out += "\n\n<details><summary>x</summary>\n\n" + "".join(export_md.fence("<b>" + text)) + "\n\n</details>"
        html = md.render(out)
        assert live_parts(html) == [], (text, out)
