"""stree export: Markdown and self-contained HTML, as a user writes them (subprocess, real
files); the HTML opened in a real headless Chromium (screenshot, DOM after the scripts ran,
clicks over the DevTools protocol), a hostile transcript included."""

import base64
import hashlib
import http.server
import json
import re
import struct
import threading
import zlib

import pytest

import browser
from builders import SessionBuilder, branchy
from readback import ids


def raw_entries(path):
    out = []
    for line in open(path, encoding="utf-8"):
        obj = json.loads(line)
        if obj.get("type") != "session":
            out.append(obj)
    return out


def tiny_png(width=3, height=2, rgb=(200, 30, 60)):
    """A real PNG (RGB, no filter)."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


# -- Markdown ---------------------------------------------------------------

def test_markdown_holds_every_entry_labels_summaries_and_compactions(stree, branchy_file, tmp_path):
    target = tmp_path / "out.md"
    r = stree("-s", branchy_file, "export", "-o", target)
    assert r.code == 0, r
    assert r.out == ""  # the file is the result; the note goes to stderr
    md = target.read_text()
    entries = raw_entries(branchy_file)
    for e in entries:
        assert f"`{e['id']}`" in md, e["id"]
    assert md.startswith("# fix quoting\n")
    assert "label **start**" in md and "label **csv-attempt**" in md
    assert "**Branch summary**" in md and "Use the csv module." in md
    assert "**Compaction**" in md and "tokens before: 48213" in md
    assert "Abandoned branch" in md and "Active path" in md
    assert "<details><summary>tool call: [read: src/parser.py]</summary>" in md  # named by its path, as pi's /tree
    assert md.count("**← @ (active)**") == 1
    # the same through stdout, and with --format
    again = stree("-s", branchy_file, "export", "-o", "-", "--format", "md")
    assert again.code == 0 and again.out.split("\n", 1)[1] == md.split("\n", 1)[1]


def test_markdown_keeps_hostile_text_as_text(stree, tmp_path):
    b = SessionBuilder()
    b.user("<script>alert(1)</script> and ``` a fence ```` and </details>")
    b.tool_round("bash", {"command": "echo ````"}, "out ```` `````` end")
    path = b.write(tmp_path / "h.jsonl")
    md = stree("-s", path, "export", "-o", "-", "--format", "md").out
    assert "<script>" not in md and "&lt;script>alert(1)&lt;/script>" in md
    assert "&lt;/details>" in md
    assert "```````\nout ```` `````` end\n```````" in md  # a fence longer than any run inside


def test_export_of_a_revision_holds_only_its_path(stree, branchy_file):
    path_ids = [json.loads(line)["id"] for line in stree("-s", branchy_file, "log", "--json", "start").out.splitlines()]
    md = stree("-s", branchy_file, "export", "start", "-o", "-", "--format", "md").out
    shown = re.findall(r"^### .*? · `([0-9a-f]+)`", md, re.M)
    assert shown == path_ids


@pytest.mark.parametrize("args, code, says", [
    (("export", "-o", "x.txt"), 2, "cannot tell the format"),
    (("export", "-o", "-"), 2, "cannot tell the format"),
    (("export", "nosuchrev", "-o", "x.md"), 3, "nosuchrev"),
    (("export",), 2, "-o"),
    (("export", "-o", "x.html", "--format", "pdf"), 2, "pdf"),
])
def test_export_errors(stree, demo, tmp_path, args, code, says):
    r = stree("-s", demo, *args, cwd=tmp_path)
    assert r.code == code, r
    assert says in r.err and "Traceback" not in r.err
    assert not (tmp_path / "x.md").exists()


def test_export_refuses_to_overwrite_without_force(stree, demo, tmp_path):
    target = tmp_path / "page.html"
    target.write_text("mine")
    r = stree("-s", demo, "export", "-o", target)
    assert r.code == 6 and "--force" in r.err
    assert target.read_text() == "mine"
    r = stree("-s", demo, "export", "-o", target, "--force")
    assert r.code == 0
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.jsonl", "home", "page.html"]  # no temp file left
    assert stree("-s", tmp_path / "none.jsonl", "export", "-o", tmp_path / "n.md").code == 3


# -- HTML without a browser ------------------------------------------------------

def test_html_is_self_contained_with_a_strict_policy(stree, demo):
    html = stree("-s", demo, "export", "-o", "-", "--format", "html").out
    assert "http://" not in html and "https://" not in html and "//" not in re.sub(r"<script>.*?</script>", "",
                                                                                 html, flags=re.S).replace("<!--", "")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
    assert "default-src &#x27;none&#x27;" in csp and "img-src data:" in csp
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src &#x27;sha256-{digest}&#x27;" in csp
    assert "unsafe-inline" not in csp
    assert html.index("Content-Security-Policy") < html.index("<style>")


# -- HTML in Chromium -------------------------------------------------------------

needs_chromium = pytest.mark.skipif(browser.executable() is None,
                                    reason="chromium is not installed (make shell-tools installs it as root)")


@needs_chromium
def test_html_in_chromium_outline_active_path_and_folding(stree, tmp_path):
    b = branchy()
    path = b.write(tmp_path / "branchy.jsonl")
    page_file = tmp_path / "page.html"
    assert stree("-s", path, "export", "-o", page_file).code == 0
    entries = raw_entries(path)
    on_path = [json.loads(line)["id"] for line in stree("-s", path, "log", "--json", "--reverse").out.splitlines()]

    png = browser.screenshot(page_file, tmp_path / "shot.png", tmp_path / "profile1", 1280, 1024)
    width, height, distinct = browser.png_info(png)
    assert (width, height) == (1280, 1024)
    assert distinct > 20  # text and colours, not a blank page

    dom = browser.dump_dom(page_file, tmp_path / "profile2")
    assert 'data-stree="ready"' in dom  # stree's own script ran under the policy
    assert len(re.findall(r'<nav id="outline".*</nav>', dom, re.S)) == 1
    nav = re.search(r'<nav id="outline".*</nav>', dom, re.S).group(0)
    assert len(re.findall(r"<a href=", nav)) == len(entries)

    page = browser.Page(tmp_path / "profile3")
    try:
        page.open(page_file.as_uri())
        assert page.evaluate("document.querySelectorAll('nav a').length") == len(entries)
        assert page.evaluate("document.querySelectorAll('main article.entry').length") == len(entries)
        active = page.evaluate("[...document.querySelectorAll('main article.entry.active')].map(a => a.id)")
        assert active == ["e-" + id for id in on_path]
        assert page.evaluate("[...document.querySelectorAll('nav a.active')].length") == len(on_path)
        assert page.evaluate("[...document.querySelectorAll('article.leaf')].map(a => a.id)") == ["e-" + on_path[-1]]
        # the abandoned branch is folded: its entries are not shown until it is opened
        abandoned = [e["id"] for e in entries if e["id"] not in on_path and e["type"] == "message"]
        assert abandoned
        target = "e-" + abandoned[-1]
        visible = f"document.getElementById('{target}').checkVisibility()"
        assert page.evaluate(visible) is False
        box = page.evaluate(f"""(() => {{ const s = document.getElementById('{target}').closest('details.branch')
            .querySelector(':scope > summary'); s.scrollIntoView(); const r = s.getBoundingClientRect();
            return [r.x + 5, r.y + r.height / 2]; }})()""")
        for kind in ("mousePressed", "mouseReleased"):  # a real click on the branch's summary
            page.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1})
        assert page.evaluate(visible) is True
        # collapse all but the active path, then follow an outline link into the folded branch
        page.evaluate("document.getElementById('collapse-all').click()")
        assert page.evaluate(visible) is False
        page.evaluate(f"document.querySelector('nav a[href=\"#{target}\"]').click()")
        assert page.evaluate(visible) is True
        # tool calls and results are folded; labels, summaries, compactions are shown
        assert page.evaluate("[...document.querySelectorAll('details.tool')].every(d => !d.open)")
        assert page.evaluate("document.querySelectorAll('details.tool.result').length") == \
            sum(1 for e in entries if e.get("message", {}).get("role") == "toolResult")
        text = page.evaluate("document.body.textContent")  # (innerText skips content-visibility:auto's unpainted)
        for word in ("start", "csv-attempt", "Branch summary", "Compaction", "Use the csv module."):
            assert word in text
        assert page.evaluate("[...document.querySelectorAll('section.summary')].map(s => s.checkVisibility())") == \
            [True, True]
        assert all(u.startswith(("file://", "data:")) for u in page.requests()), page.requests()
    finally:
        page.close()


class Beacon(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):
        Beacon.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


HOSTILE = [
    "<script>window.pwned = 1; document.title = 'pwned'</script>",
    "<img src=x onerror=\"window.pwned = 2; document.title = 'pwned'\">",
    "[click](javascript:window.pwned=3) <a href=\"javascript:window.pwned=3\">link</a>",
    "</div></article></details></main><script>window.pwned = 4</script><details open>",
    "<style>body { display: none } * { background: url(http://127.0.0.1:PORT/css) }</style>",
    "\"><svg onload=\"window.pwned = 5\"></svg><iframe src=\"http://127.0.0.1:PORT/frame\"></iframe>",
    "<link rel=stylesheet href=\"http://127.0.0.1:PORT/link.css\"><img src=\"http://127.0.0.1:PORT/img.png\">",
    "</script><script>window.pwned = 6</script> <!-- --> ]]> {{ }} ${window.pwned = 7}",
]


@needs_chromium
def test_hostile_transcript_runs_nothing_and_fetches_nothing(stree, tmp_path, isolated_home):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Beacon)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Beacon.hits.clear()
    try:
        hostile = [h.replace("PORT", str(port)) for h in HOSTILE]
        b = SessionBuilder()
        first = b.user("an entry whose id is hostile", id='x" onmouseover="window.pwned=11" data-x="')
        b.user("and its child, whose parent it names", id="javascript:window.pwned=12")
        b.at(first)
        b.user("a branch from it, so that a branch point links to its hostile id", id="'><img src=x onerror=pwned=14>")
        b.at("javascript:window.pwned=12")
        u = b.user("\n".join(hostile))
        b.tool_round("bash", {"command": hostile[0]}, "\n".join(hostile))
        b.assistant(hostile[1], thinking=hostile[3])
        b.label(u, hostile[2])
        b.name("<script>window.pwned = 8</script> name")
        b.branch_summary(hostile[4])
        b.compaction(hostile[5], first_kept=u)
        b.append("message", message={"role": "user", "timestamp": 1, "content": [
            {"type": "image", "mimeType": "text/html", "data": base64.b64encode(b"<script>x</script>").decode()},
            {"type": "image", "mimeType": "image/png\" onerror=\"window.pwned=9", "data": "AAAA"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA\" onerror=\"window.pwned=10"}]})
        path = b.write(tmp_path / "hostile.jsonl")
        page_file = tmp_path / "hostile.html"
        r = stree("-s", path, "export", "-o", page_file)
        assert r.code == 0, r
        html = page_file.read_text()
        assert f"127.0.0.1:{port}" in html  # the text is there, escaped

        page = browser.Page(tmp_path / "profile")
        try:
            page.open(page_file.as_uri(), before="""window.__violations = [];
                document.addEventListener('securitypolicyviolation',
                                          e => window.__violations.push(e.violatedDirective));""")
            assert page.evaluate("document.documentElement.getAttribute('data-stree')") == "ready"
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert page.evaluate("document.title") == "<script>window.pwned = 8</script> name"
            assert page.evaluate("document.querySelectorAll('main script, main style, main iframe, main svg, "
                                 "main link, main [onerror], main [onload]').length") == 0
            # the only links in the transcript: a branch point's, to the branch that leaves it
            assert page.evaluate("[...document.querySelectorAll('main a')].map(a => a.getAttribute('href'))") == \
                ["#e-%27%3E%3Cimg%20src%3Dx%20onerror%3Dpwned%3D14%3E"]
            page.evaluate("document.querySelector('main a').click()")
            assert page.evaluate("document.getElementById(\"e-'><img src=x onerror=pwned=14>\").checkVisibility()")
            assert page.evaluate("document.querySelectorAll('script').length") == 1
            assert page.evaluate("document.querySelectorAll('img').length") == 0  # none of those is an image
            assert page.evaluate("getComputedStyle(document.body).display") != "none"
            # every entry is still in the outline: nothing closed an element early
            assert page.evaluate("document.querySelectorAll('main article.entry').length") == len(raw_entries(path))
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            assert "window.pwned = 1" in page.evaluate("document.body.innerText")
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert page.evaluate("window.__violations") == []
            # the hostile ids are still links that work: the outline opens their entries
            link = page.evaluate("document.querySelectorAll('nav a')[1].getAttribute('href')")
            page.evaluate("document.querySelectorAll('nav a')[1].click()")
            assert page.evaluate("location.hash") == link
            assert page.evaluate("document.getElementById('e-javascript:window.pwned=12').checkVisibility()")
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert all(u.startswith(("file://", "data:")) for u in page.requests()), page.requests()
        finally:
            page.close()
        assert Beacon.hits == []
    finally:
        server.shutdown()
        server.server_close()


@needs_chromium
def test_images_embedded_and_oh_my_pi_blobs_resolved(stree, tmp_path, isolated_home):
    png = tiny_png(3, 2)
    blob = tiny_png(5, 4, (10, 200, 10))
    digest = hashlib.sha256(blob).hexdigest()
    agent = isolated_home / ".omp" / "agent"
    (agent / "blobs").mkdir(parents=True)
    (agent / "blobs" / digest).write_bytes(blob)
    sessions = agent / "sessions" / "--home-dev-proj--"
    sessions.mkdir(parents=True)
    b = SessionBuilder()
    b.append("message", message={"role": "user", "timestamp": 1, "content": [
        {"type": "text", "text": "two pictures"},
        {"type": "image", "mimeType": "image/png", "data": base64.b64encode(png).decode()},
        {"type": "image", "mimeType": "image/png", "data": f"blob:sha256:{digest}"},
        {"type": "image", "mimeType": "image/png", "data": "blob:sha256:" + "0" * 64},  # missing
        {"type": "image", "mimeType": "image/png", "data": "blob:sha256:../../etc/passwd"}]})
    path = b.write(sessions / "s.jsonl")
    slot = json.dumps({"type": "title", "v": 1, "title": "an omp <b>title</b>", "source": "auto",
                       "updatedAt": "2026-11-01T00:00:00.000Z", "pad": ""})
    path.write_text(slot.ljust(255) + "\n" + path.read_text())  # oh-my-pi's 256-byte title slot first
    before = path.read_bytes()
    page_file = tmp_path / "img.html"
    assert stree("-s", path, "export", "-o", page_file).code == 0
    assert path.read_bytes() == before  # the references stay in the session
    html = page_file.read_text()
    assert base64.b64encode(blob).decode() in html and html.count("not available") == 2
    assert "<title>an omp &lt;b&gt;title&lt;/b&gt;</title>" in html
    md = stree("-s", path, "export", "-o", "-", "--format", "md").out
    assert f"![image](data:image/png;base64,{base64.b64encode(blob).decode()})" in md
    page = browser.Page(tmp_path / "profile")
    try:
        page.open(page_file.as_uri())
        sizes = page.evaluate("[...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
        assert sizes == [[True, 3, 2], [True, 5, 4]]
    finally:
        page.close()


def test_an_empty_session_exports(stree, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps({"type": "session", "version": 3, "id": "0199a1b2-0000-7000-8000-00000000e0e0",
                                "timestamp": "2026-11-01T00:00:00.000Z", "cwd": "/tmp"}) + "\n")
    r = stree("-s", path, "export", "-o", "-", "--format", "html")
    assert r.code == 0 and "no entries yet" in r.out
    r = stree("-s", path, "export", "-o", "-", "--format", "md")
    assert r.code == 0 and "no entries yet" in r.out


def test_completion_of_export(stree, demo, tmp_path):
    r = stree("__complete", "bash", "ex", "--", "ex")
    assert "command\texport\t" in r.out
    r = stree("__complete", "bash", "", "--", "export", "--format", "")
    assert r.out.splitlines()[1:] == ["choice\tmd\t", "choice\thtml\t"]
    assert stree("__complete", "bash", "", "--", "export", "-o", "").out.splitlines()[0] == "files"
    r = stree("__complete", "bash", "bug", "--", "-s", demo, "export", "bug")
    assert "label\tbug-found\t" in r.out


def test_many_branch_points_stay_flat(stree, tmp_path):
    """600 retries along the active path: no recursion, and the folds nest only at side branches
    (an HTML parser flattens elements nested deeper than 512)."""
    from html.parser import HTMLParser

    b = SessionBuilder()
    for i in range(600):
        u = b.user(f"question {i}")
        b.assistant(f"abandoned answer {i}")
        b.at(u)
        b.assistant(f"kept answer {i}")
    path = b.write(tmp_path / "retries.jsonl")

    class Depth(HTMLParser):
        depth = deepest = 0

        def handle_starttag(self, tag, attrs):
            if tag == "details":
                self.depth += 1
                self.deepest = max(self.deepest, self.depth)

        def handle_endtag(self, tag):
            if tag == "details":
                self.depth -= 1

    r = stree("-s", path, "export", "-o", "-", "--format", "html")
    assert r.code == 0, r
    parser = Depth()
    parser.feed(r.out)
    assert parser.depth == 0 and parser.deepest <= 4  # a branch, a side branch in it, a tool/thinking fold
    assert r.out.count("<article ") == len(b.entries) and r.out.count("abandoned answer") >= 600
    md = stree("-s", path, "export", "-o", "-", "--format", "md")
    assert md.code == 0 and md.out.count("Abandoned branch") == 600


def test_to_a_terminal_the_sessions_control_characters_are_inert(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    from conftest import read_pty

    b = SessionBuilder()
    b.user("bell \x07 and \x1b]0;pwned\x07 a title, \x1b[2J a clear")
    path = b.write(tmp_path / "esc.jsonl")
    for fmt in ("md", "html"):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "export", "-o", "-", "--format", fmt],
                                stdout=slave, stderr=subprocess.PIPE, env=dict(os.environ, TERM="xterm"))
        os.close(slave)
        out = read_pty(master, proc)
        proc.wait()
        assert proc.returncode == 0
        assert b"\x1b" not in out and b"\x07" not in out and b"pwned" in out
    piped = subprocess.run([sys.executable, "-m", "stree", "-s", str(path), "export", "-o", "-", "--format", "md"],
                           capture_output=True)
    assert b"\x1b]0;pwned\x07" in piped.stdout  # into a pipe or file: the text exactly


def test_the_header_carries_what_stats_sums(stree, demo):
    for rev in (None, "bug-found"):
        args = [rev] if rev else []
        total = [json.loads(line) for line in stree("-s", demo, "stats", *args, "--json").out.splitlines()
                 if json.loads(line)["group"] == "total"][0]
        md = stree("-s", demo, "export", *args, "-o", "-", "--format", "md").out
        assert f"- Tokens: `{total['tokens']:,} (input {total['input']:,}," in md
        assert f"- Cost: `${total['cost']:,.4f}`" in md
        html = stree("-s", demo, "export", *args, "-o", "-", "--format", "html").out
        assert f"cost: <code>${total['cost']:,.4f}</code>" in html


def test_demo_markdown_as_people_read_it(stree, snapshot):
    """The bundled demo as Markdown, pinned (pytest --snapshot-update to refresh)."""
    r = stree("-s", "demo", "export", "-o", "-", "--format", "md")
    assert r.code == 0 and r.err == ""
    snapshot.assert_match(r.out, "demo.md")


def test_export_a_range_exports_its_entries(stree, tmp_path):
    listed = ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found..@"))
    everything = ids(stree("-s", "demo", "log", "--format", "{id}", "--filter", "all"))
    out = tmp_path / "since.md"
    r = stree("-s", "demo", "export", "bug-found..@", "-o", out)
    assert r.code == 0 and f"({len(listed)} entries, md)" in r.err, r
    text = out.read_text()
    for i in everything:
        assert (f"`{i}`" in text) == (i in listed or f"(after `{i}`)" in text), i
