"""`stree export` as one self-contained HTML file: no network (no URL at all), stree's own
CSS and JS inline and allowed by their hashes in a strict Content-Security-Policy, every
piece of transcript text escaped (never inside the script or style), images as data: URIs.

The tree is an outline: a nav of links, one per entry, and the entries themselves, each
branch a <details> (the active path's open and marked), tool calls and results folded."""

import base64
import hashlib
from html import escape
from urllib.parse import quote

from ..core.outline import folds
from ..output.dates import show as show_date

STYLE = """
:root{--fg:#1f2328;--muted:#656d76;--bg:#fff;--line:#d0d7de;--accent:#0969da;--active:#fff8c5;--user:#ddf4ff;
--tool:#f6f8fa;--err:#cf222e;--sum:#fbefff}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:12px 20px;border-bottom:1px solid var(--line)}
h1{font-size:20px;margin:0 0 6px}
.meta{color:var(--muted);font-size:12px;margin:0}
.meta span{margin-right:14px}
.layout{display:flex;align-items:flex-start}
nav{position:sticky;top:0;width:34%;max-width:460px;height:100vh;overflow:auto;border-right:1px solid var(--line);
padding:8px;font-size:12px}
nav ol{list-style:none;margin:0;padding-left:12px}
nav>ol{padding-left:0}
nav a{display:block;color:var(--fg);text-decoration:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;
padding:1px 4px;border-radius:3px}
nav a:hover{background:var(--tool)}
nav a.active{background:var(--active)}
nav a.leaf{font-weight:bold;outline:1px solid var(--accent)}
main{flex:1;min-width:0;padding:8px 20px 40px}
details.branch{border-left:3px solid var(--line);margin:6px 0 6px 4px;padding-left:10px}
details.branch.active{border-left-color:var(--accent)}
details.branch>summary{cursor:pointer;color:var(--muted);font-size:12px;padding:2px 0}
details.branch.active>summary{color:var(--accent);font-weight:600}
article.entry{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:6px 10px}
article.entry.active{background:linear-gradient(90deg,var(--active) 0,var(--bg) 6px)}
article.entry.r-user{border-color:#54aeff}
article.entry.leaf{box-shadow:0 0 0 2px var(--accent)}
.head{font-size:12px;color:var(--muted)}
.head .kind{font-weight:600;color:var(--fg)}
.head .label{background:#fff1e5;color:#953800;border-radius:10px;padding:0 6px;margin-left:6px}
.head .at{color:var(--accent);font-weight:600;margin-left:6px}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--tool);padding:6px;border-radius:4px;margin:4px 0;
font-size:12px}
details.tool,details.thinking{margin:4px 0}
details.tool>summary,details.thinking>summary{cursor:pointer;color:var(--muted);font-size:12px}
details.tool.error>summary{color:var(--err)}
.summary{background:var(--sum);border-radius:4px;padding:4px 8px;margin:4px 0}
.summary h3{font-size:13px;margin:0}
.error{color:var(--err)}
.note{color:var(--muted);font-style:italic}
img{max-width:100%;height:auto;border:1px solid var(--line)}
button{font:inherit;font-size:12px;margin-right:6px}
"""

SCRIPT = """(function(){
var d=document;
function openTo(el){for(var p=el;p;p=p.parentElement){if(p.tagName==='DETAILS'){p.open=true;}}}
function go(){var h=location.hash.slice(1);if(!h){return;}var id;try{id=decodeURIComponent(h);}catch(e){return;}
var el=d.getElementById(id);if(el){openTo(el);el.scrollIntoView();}}
window.addEventListener('hashchange',go);
d.querySelectorAll('nav a').forEach(function(a){a.addEventListener('click',function(){
var el=d.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)));if(el){openTo(el);}});});
function all(open){d.querySelectorAll('details.branch').forEach(function(x){
x.open=open||x.classList.contains('active');});}
d.getElementById('expand-all').addEventListener('click',function(){all(true);});
d.getElementById('collapse-all').addEventListener('click',function(){all(false);});
go();
d.documentElement.setAttribute('data-stree','ready');
})();"""


def _hash(text):
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


CSP = (f"default-src 'none'; img-src data:; style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; "
       "base-uri 'none'; form-action 'none'")


def esc(value):
    """Text as inert HTML: markup escaped, NUL and lone surrogates replaced."""
    text = value if isinstance(value, str) else str(value)
    return escape(text.replace("\0", "\ufffd"), quote=True).encode("utf-8", "replace").decode("utf-8")


def anchor(entry_id):
    return "e-" + str(entry_id)


def render(doc, date_style="local"):
    """The page, in chunks of about 256 KiB (a big session is never held whole as text)."""
    out = []
    size = 0
    for piece in _pieces(doc, date_style):
        out.append(piece)
        size += len(piece)
        if size > 1 << 18:
            yield "".join(out)
            out = []
            size = 0
    yield "".join(out)


def _pieces(doc, date_style):
    header = doc.header
    yield '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
    yield f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
    yield '<meta name="referrer" content="no-referrer">\n<meta name="generator" content="stree export">\n'
    yield f"<title>{esc(doc.title)}</title>\n<style>{STYLE}</style></head>\n<body>\n<header>"
    yield f"<h1>{esc(doc.title)}</h1><p class=\"meta\">"
    created = header.get("timestamp")
    for name, value in (("session", header.get("id")), ("cwd", header.get("cwd")),
                        ("created", show_date(created, date_style) if created else None),
                        ("entries", doc.count()), ("@", doc.at), ("forked from", header.get("parentSession")),
                        ("tokens", f"{doc.usage.tokens:,}" if doc.usage.count else None),
                        ("cost", f"${doc.usage.cost:,.4f}" if doc.usage.count else None)):
        if value is not None:
            yield f"<span>{esc(name)}: <code>{esc(value)}</code></span>"
    yield ('</p><p class="meta"><button type="button" id="expand-all">Expand all</button>'
           '<button type="button" id="collapse-all">Collapse to the active path</button></p></header>\n')
    yield '<div class="layout">\n<nav id="outline" aria-label="Outline"><ol>'
    yield from _nav(doc)
    yield "</ol></nav>\n<main>\n"
    if not doc.items:
        yield '<p class="note">The session has no entries yet.</p>'
    yield from _main(doc, date_style)
    yield f"</main>\n</div>\n<script>{SCRIPT}</script>\n</body></html>\n"


def _count(n):
    return f"{n} {'entry' if n == 1 else 'entries'}"


def _nav(doc):
    for event, branch in folds(doc.branches):
        if event == "close":
            yield "</ol></details></li>"
            continue
        items = [doc.items[r] for r in branch.rows]
        cls = "branch active" if branch.active else "branch"
        yield (f'<li class="{cls}"><details{" open" if branch.active else ""}>'
               f"<summary>{_count(len(items))}{' (active path)' if branch.active else ' (abandoned)'}</summary><ol>")
        for item in items:
            cls = " ".join(c for c in ("active" if item.active else "", "leaf" if item.leaf else "") if c)
            label = f"[{item.label}] " if item.label else ""
            cls_attr = f' class="{cls}"' if cls else ""
            yield (f'<li><a href="#{esc(quote(anchor(item.id), safe=""))}"{cls_attr}>'
                   f"{esc(label + item.preview)}</a></li>")
        yield "</ol><ol>"  # its side branches


def _main(doc, date_style):
    for event, branch in folds(doc.branches):
        if event == "close":
            yield "</details>\n"
            continue
        items = [doc.items[r] for r in branch.rows]
        first = items[0]
        cls = "branch active" if branch.active else "branch"
        where = "the active path" if branch.active else "an abandoned branch"
        yield (f'<details class="{cls}"{" open" if branch.active else ""}><summary>'
               f"{esc(where)}: {_count(len(items))} from "
               f"<code>{esc(first.id)}</code> ({esc(first.preview[:80])})</summary>\n")
        for item in items:
            w = []
            _entry(w.append, item, *doc.content(item), date_style)
            yield "".join(w)


def _entry(w, item, kind, parts, date_style):
    classes = ["entry", "t-" + _cls(item.type), "r-" + _cls(item.role or "none")]
    if item.active:
        classes.append("active")
    if item.leaf:
        classes.append("leaf")
    w(f'<article class="{" ".join(classes)}" id="{esc(anchor(item.id))}"><div class="head">'
      f'<span class="kind">{esc(kind)}</span> <code class="id">{esc(item.id)}</code> '
      f"<time>{esc(show_date(item.ts, date_style) if item.ts else '')}</time>")
    if item.label:
        w(f'<span class="label">{esc(item.label)}</span>')
    if item.leaf:
        w('<span class="at">← @ (active)</span>')
    w('</div><div class="body">')
    for part in parts:
        _part(w, part)
    w("</div></article>\n")


def _cls(text):
    return "".join(c if c.isascii() and (c.isalnum() or c == "-") else "_" for c in str(text))[:40]


def _part(w, part):
    kind = part[0]
    if kind == "text":
        w(f'<div class="text">{esc(part[1])}</div>')
    elif kind == "thinking":
        w(f'<details class="thinking"><summary>thinking</summary><div class="text">{esc(part[1])}</div></details>')
    elif kind == "call":
        w(f'<details class="tool call"><summary>→ {esc(part[1])} <code>{esc(part[3])}</code></summary>'
          f"<pre>{esc(part[2])}</pre></details>")
    elif kind == "result":
        lines = part[2].count("\n") + 1 if part[2] else 0
        cls = "tool result error" if part[3] else "tool result"
        w(f'<details class="{cls}"><summary>result of {esc(part[1])}{" (error)" if part[3] else ""}, '
          f"{lines} line{'' if lines == 1 else 's'}</summary><pre>{esc(part[2])}</pre></details>")
    elif kind == "image":
        if part[2] is None:
            w(f'<p class="note">[image: {esc(part[1])}, not available]</p>')
        else:
            w(f'<img alt="image ({esc(part[1])})" src="data:{esc(part[1])};base64,{esc(part[2])}">')
    elif kind == "summary":
        cls = "summary compaction" if part[1] == "compaction" else "summary branch-summary"
        w(f'<section class="{cls}"><h3>{esc(part[1].capitalize())}</h3><p class="note">{esc(part[3])}</p>'
          f'<div class="text">{esc(part[2])}</div></section>')
    elif kind == "bash":
        w(f'<details class="tool bash"><summary>$ {esc(part[1])} (exit code {esc(part[3])})</summary>'
          f"<pre>{esc(part[2])}</pre></details>")
    elif kind == "error":
        w(f'<div class="text error">{esc(part[1])}</div>')
    elif kind == "meta":
        w(f'<p class="note">{esc(part[1])}</p>')
    elif kind == "data":
        w(f'<details class="tool data"><summary>data</summary><pre>{esc(part[1])}</pre></details>')
