"""Message text as HTML, rendered once at export time (no script in the page turns text into
HTML): markdown-it-py, CommonMark with tables and strikethrough, raw HTML off (shown as text).
Links and images keep their text and show their address as text: the page holds no live URL
and fetches nothing. Fenced code with a language is highlighted by Pygments (CSS classes, the
colours in the page's style); both come with rich, which stree already needs.

A text the parser could take long over is shown as preformatted text instead: over LIMIT
characters, or with more than BRACKETS `[` (markdown-it's link and emphasis scans grow
faster than the text: 200,000 characters of `![` took 12 s)."""

from html import escape

LIMIT = 100_000  # characters: above, a text is shown as <pre>, escaped a slice at a time
BRACKETS = 5_000
SLICE = 1 << 20
HIGHLIGHT_LIMIT = 50_000  # characters of one code block Pygments colours; longer ones stay plain
_md = None
_lexers = {}


def _renderer():
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable(["table", "strikethrough"])
        md.options["highlight"] = highlight
        rules = md.add_render_rule
        rules("link_open", _link_open)
        rules("link_close", _link_close)
        rules("image", _image)
        _md = md
    return _md


def _link_open(self, tokens, idx, options, env):
    return '<span class="link">'


def _link_close(self, tokens, idx, options, env):
    # the matching link_open: the nearest unclosed one before idx
    depth = 0
    for tok in reversed(tokens[:idx]):
        if tok.type == "link_close":
            depth += 1
        elif tok.type == "link_open":
            if depth == 0:
                href = tok.attrGet("href") or ""
                return f'</span><span class="url"> ⟨{escape(str(href))}⟩</span>'
            depth -= 1
    return "</span>"


def _image(self, tokens, idx, options, env):
    tok = tokens[idx]
    alt = self.renderInlineAsText(tok.children or [], options, env)
    return (f'<span class="link">[image: {escape(alt)}]</span>'
            f'<span class="url"> ⟨{escape(str(tok.attrGet("src") or ""))}⟩</span>')


def highlight(code, lang, attrs):
    """Pygments' HTML for a fenced block in a known language, or '' (markdown-it escapes it)."""
    lang = (lang or "").strip().lower()
    if not lang or len(code) > HIGHLIGHT_LIMIT:
        return ""
    lexer = _lexers.get(lang, False)
    if lexer is False:
        try:
            from pygments.lexers import get_lexer_by_name
            from pygments.util import ClassNotFound

            try:
                lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
            except ClassNotFound:
                lexer = None
        except ImportError:
            lexer = None
        _lexers[lang] = lexer
    if lexer is None:
        return ""
    from pygments import highlight as colour
    from pygments.formatters import HtmlFormatter

    html = colour(code, lexer, HtmlFormatter(nowrap=True, classprefix="hl-"))
    return f'<pre class="hl"><code class="language-{escape(lang)}">{html}</code></pre>\n'


def render(text):
    """HTML pieces of one message text."""
    if len(text) > LIMIT or text.count("[") > BRACKETS:
        yield '<pre class="text">'
        for start in range(0, len(text), SLICE):
            yield escape(text[start:start + SLICE].replace("\0", "\ufffd"), quote=False)
        yield "</pre>"
        return
    yield _renderer().render(text.replace("\0", "\ufffd"))
